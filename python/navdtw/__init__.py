"""navdtw: exact, fast DTW / nDTW / SDTW and the navigation metrics of vision-and-language navigation.

The compiled engine (``navdtw._core``) computes exact, banded (Sakoe-Chiba) and FastDTW alignments
over ragged batches of paths, for coordinates (Euclidean) or graph node indices over precomputed
distance matrices, multithreaded with the GIL released. On top of it: every navigation metric
(:func:`evaluate`), Matterport3D graphs (:func:`load_connectivity`), dataset readers, random
baselines (:func:`random_baseline`), an RL reward, the paper's synthetic world, and the ``navdtw``
command. See the README for a tour.

Every name loads on first use (PEP 562): ``import navdtw`` imports neither numpy nor the compiled
engine, and ``navdtw.evaluate(...)`` or ``navdtw.suite.run(...)`` imports what it needs when first
touched. ``navdtw.__all__`` and ``dir(navdtw)`` list every public name as before.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._lazy import lazy_names

__version__ = "0.2.0.dev0"

if TYPE_CHECKING:  # type checkers and IDEs see every lazy name as a plain import
    from . import cli as cli
    from . import datasets as datasets
    from . import distributed as distributed
    from . import humanaware as humanaware
    from . import instruction_errors as instruction_errors
    from . import plot as plot
    from . import registry as registry
    from . import report as report
    from . import stats as stats
    from . import subtasks as subtasks
    from . import suite as suite
    from . import tours as tours
    from ._config import show_config as show_config
    from .anchored import dtw_anchored as dtw_anchored
    from .anchored import dtw_anchored_batch as dtw_anchored_batch
    from .datasets.matterport import load_connectivity as load_connectivity
    from .datasets.r2r import random_baseline as random_baseline
    from .datasets.results.episode_log import EpisodeLog as EpisodeLog
    from .engine import dtw as dtw
    from .engine import dtw_batch as dtw_batch
    from .engine import dtw_matrix as dtw_matrix
    from .engine import dtw_prefix as dtw_prefix
    from .engine import ndtw as ndtw
    from .engine import ndtw_batch as ndtw_batch
    from .engine import sdtw as sdtw
    from .engine import sdtw_batch as sdtw_batch
    from .engine import warping_path as warping_path
    from .graphs import DistanceField as DistanceField
    from .graphs import GraphSet as GraphSet
    from .graphs import NavGraph as NavGraph
    from .metrics import CONVENTIONS as CONVENTIONS
    from .metrics import METRICS as METRICS
    from .metrics import Convention as Convention
    from .metrics import Scores as Scores
    from .metrics import Summary as Summary
    from .metrics import evaluate as evaluate
    from .paths import Paths as Paths
    from .reward import NDTWReward as NDTWReward
    from .synthetic import SyntheticWorld as SyntheticWorld
    from .tours import tour_ndtw as tour_ndtw

#: The public submodules (``dir(navdtw)``); each is imported when first touched.
_SUBMODULES = (
    "cli",
    "datasets",
    "distributed",
    "humanaware",
    "instruction_errors",
    "plot",
    "registry",
    "report",
    "stats",
    "subtasks",
    "suite",
    "tours",
)

#: Each public name and the submodule it lives in, imported when the name is first touched (PEP 562):
#: ``import navdtw`` then costs no numpy, scipy or compiled engine, so ``navdtw --help`` answers at once.
_NAMES = {
    "show_config": "._config",
    "load_connectivity": ".datasets.matterport",
    "random_baseline": ".datasets.r2r",
    "EpisodeLog": ".datasets.results.episode_log",
    **dict.fromkeys(
        (
            "dtw",
            "dtw_batch",
            "dtw_matrix",
            "dtw_prefix",
            "ndtw",
            "ndtw_batch",
            "sdtw",
            "sdtw_batch",
            "warping_path",
        ),
        ".engine",
    ),
    **dict.fromkeys(("dtw_anchored", "dtw_anchored_batch"), ".anchored"),
    **dict.fromkeys(("DistanceField", "GraphSet", "NavGraph"), ".graphs"),
    **dict.fromkeys(("CONVENTIONS", "METRICS", "Convention", "Scores", "Summary", "evaluate"), ".metrics"),
    "Paths": ".paths",
    "NDTWReward": ".reward",
    "SyntheticWorld": ".synthetic",
    "tour_ndtw": ".tours",
}


__getattr__, __dir__ = lazy_names(globals(), _NAMES, _SUBMODULES)
del lazy_names  # not a name of the package


__all__ = [
    "CONVENTIONS",
    "METRICS",
    "Convention",
    "DistanceField",
    "EpisodeLog",
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
    "dtw_anchored",
    "dtw_anchored_batch",
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
    "subtasks",
    "tour_ndtw",
    "tours",
    "warping_path",
]
