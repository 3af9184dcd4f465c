"""navdtw: exact, fast DTW / nDTW / SDTW and the navigation metrics of vision-and-language navigation.

The compiled engine (``navdtw._core``) computes exact, banded (Sakoe-Chiba) and FastDTW alignments
over ragged batches of paths, for coordinates (Euclidean) or graph node indices over precomputed
distance matrices, multithreaded with the GIL released. On top of it: every navigation metric
(:func:`evaluate`), Matterport3D graphs (:func:`load_connectivity`), dataset readers, random
baselines (:func:`random_baseline`), an RL reward, the paper's synthetic world, and the ``navdtw``
command. See the README for a tour.

Benchmark suites (:mod:`navdtw.suite`), statistics (:mod:`navdtw.stats`), the HTML report, figures,
Dask scoring and the command line are submodules that load on first use: ``import navdtw`` then
``navdtw.suite.run(...)`` works without importing them up front.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import datasets, humanaware, instruction_errors, registry
from ._config import show_config
from .datasets.matterport import load_connectivity
from .datasets.r2r import random_baseline
from .engine import (
    dtw,
    dtw_batch,
    dtw_matrix,
    dtw_prefix,
    ndtw,
    ndtw_batch,
    sdtw,
    sdtw_batch,
    warping_path,
)
from .graphs import DistanceField, GraphSet, NavGraph
from .metrics import CONVENTIONS, METRICS, Convention, Scores, Summary, evaluate
from .paths import Paths
from .reward import NDTWReward
from .synthetic import SyntheticWorld

__version__ = "0.2.0.dev0"

if TYPE_CHECKING:  # type checkers see the lazy submodules as attributes
    from . import cli as cli
    from . import distributed as distributed
    from . import plot as plot
    from . import report as report
    from . import stats as stats
    from . import suite as suite

#: Submodules that ``import navdtw`` does not import: their dependencies (Dask, matplotlib, the
#: statistics, the suite) load when a name is first touched, e.g. ``navdtw.suite.run(...)`` (PEP 562).
_LAZY_SUBMODULES = ("cli", "distributed", "plot", "report", "stats", "suite")


def __getattr__(name: str):
    if name in _LAZY_SUBMODULES:
        from importlib import import_module

        return import_module(f"{__name__}.{name}")  # binds it here too: later look-ups are plain
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY_SUBMODULES))


__all__ = [
    "CONVENTIONS",
    "METRICS",
    "Convention",
    "DistanceField",
    "GraphSet",
    "NDTWReward",
    "NavGraph",
    "Paths",
    "Scores",
    "Summary",
    "SyntheticWorld",
    "__version__",
    "datasets",
    "dtw",
    "dtw_batch",
    "dtw_matrix",
    "dtw_prefix",
    "evaluate",
    "humanaware",
    "instruction_errors",
    "load_connectivity",
    "ndtw",
    "ndtw_batch",
    "random_baseline",
    "registry",
    "sdtw",
    "sdtw_batch",
    "show_config",
    "warping_path",
]
