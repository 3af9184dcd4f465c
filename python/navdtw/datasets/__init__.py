"""Readers and matchers of VLN data sets, one module per format family.

* :mod:`~navdtw.datasets.matterport`: Matterport3D connectivity graphs (:func:`load_connectivity`).
* :mod:`~navdtw.datasets.r2r`: R2R / R4R splits, R2R results files, matching them.
* :mod:`~navdtw.datasets.rxr`: RxR guide annotations, HAMT / follower predictions, per-language scores.
* :mod:`~navdtw.datasets.vlnce`: R2R-CE episodes, ground truth, continuous predictions, matching.
* :mod:`~navdtw.datasets.rxrce`: RxR-CE (VLN-CE's RxR_VLNCE_v0) episodes by language, as R2R-CE.
* :mod:`~navdtw.datasets.positions`: any continuous benchmark, paths as records of positions.
* :mod:`~navdtw.datasets.ivlnce`: IVLN-CE tours (agent paths over whole tours), tour nDTW.
* :mod:`~navdtw.datasets.reverie`: REVERIE splits, object boxes, predictions with object ids.
* :mod:`~navdtw.datasets.havln`: HA-VLN baseline collision counts.
* :mod:`~navdtw.datasets.ndh`: CVDN/NDH splits and results, the chosen goal, goal progress.
* :mod:`~navdtw.datasets.results`: results tables, per-episode metrics computed by other evaluators
  (a package: its projects' layouts, :mod:`~navdtw.datasets.results.layouts`, and one run's files,
  :mod:`~navdtw.datasets.results.shards`).

Every data-set module reads its split and its predictions, matches them into a
:class:`MatchedEpisodes` (references, queries, environment, ids, SPL's shortest distances, extra
per-episode inputs) ready for ``navdtw.evaluate``, and names the evaluator conventions it
reproduces (``CONVENTIONS``, ``DEFAULT_CONVENTION``). Public readers are named ``load_*``.

Every reader validates what it reads and names the bad entry: ``"R2R_val_unseen.json: entry 12
(path_id 4332): 'path' is empty"``. Malformed or truncated JSON raises ``ValueError`` with the
file name and json's line and column. Files ending in ``.gz`` (or starting with the gzip magic
bytes) are decompressed transparently. Readers that take ``path_or_list`` also accept the already
parsed JSON object (then messages say ``<input>``).
"""

from __future__ import annotations

import os
from pathlib import Path

from . import base, havln, ivlnce, matterport, ndh, positions, r2r, results, reverie, rxr, rxrce, vlnce
from . import layouts as layouts  # results.layouts under its former name
from . import shards as shards  # results.shards under its former name
from ._common import MatchedEpisodes, SplitIndex
from .base import Benchmark, DatasetKind, Option, SplitReader, split_index
from .havln import load_havln_collisions
from .ivlnce import load_tour_paths, load_tours
from .matterport import load_connectivity
from .ndh import load_ndh, load_ndh_predictions
from .positions import load_positions
from .r2r import instructions, load_predictions, load_r2r, match_predictions, write_predictions
from .results import load_results
from .reverie import load_objects, load_reverie
from .reverie import load_predictions as load_reverie_predictions
from .rxr import load_rxr_guide, load_rxr_predictions
from .rxrce import load_rxrce_episodes
from .vlnce import load_predictions as load_vlnce_predictions
from .vlnce import load_vlnce_episodes, load_vlnce_gt


def data_path(*parts: str) -> Path:
    """A file or folder of your VLN data: ``$NAVDTW_DATA/<parts>``.

    ``NAVDTW_DATA`` names the folder that holds the data sets, laid out as the documentation's "Data sets" page
    (``docs/datasets/index.md``) shows (``matterport3dsimulator/connectivity``, ``r2r/R2R_val_unseen.json``, ...).

    Parameters
    ----------
    *parts : str
        The path inside that folder, one part per argument (``"r2r", "R2R_val_unseen.json"``).

    Returns
    -------
    pathlib.Path
        ``$NAVDTW_DATA/<parts>``, which exists.

    Raises
    ------
    FileNotFoundError
        ``NAVDTW_DATA`` is unset or empty, or the file or folder is missing (the message says what
        to do).
    """
    root = os.environ.get("NAVDTW_DATA")
    if not root:
        raise FileNotFoundError(
            "set NAVDTW_DATA to the folder that holds your VLN data (the documentation's 'Data sets' page, "
            "docs/datasets/index.md, says where each data set comes from and how to lay it out)"
        )
    path = Path(root, *parts)
    if not path.exists():
        raise FileNotFoundError(
            f"{path} not found (NAVDTW_DATA={root}); see the 'Data sets' page (docs/datasets/index.md)"
        )
    return path


#: Every data set kind navdtw reads, by name (``navdtw score --dataset NAME``, suite files): one
#: line per kind registers it (the dict is :data:`navdtw.datasets.base.DATASETS`, which the
#: readers consult).
DATASETS: dict[str, DatasetKind] = base.DATASETS
DATASETS.update(
    (k.name, k)
    for k in (
        r2r.R2R,
        r2r.R4R,
        vlnce.R2R_CE,
        reverie.REVERIE,
        ndh.NDH,
        rxr.RXR,
        rxrce.RXR_CE,
        positions.POSITIONS,
        ivlnce.IVLN_CE,
        results.RESULTS,
    )
)


def open(name: str, **inputs) -> Benchmark:
    """Reads a data set's files once: ``open("r2r", split=..., connectivity=...)`` gives a
    :class:`Benchmark` that matches and scores any number of agents' predictions.

    Parameters
    ----------
    name : str
        A data set kind, a key of :data:`DATASETS` (``"r2r"``, ``"r2r-ce"``, ``"results"``, ...).
    **inputs
        The kind's options (:attr:`DatasetKind.options`), e.g. ``split=``, ``connectivity=``.

    Returns
    -------
    Benchmark
        The data set, read and checked.

    Raises
    ------
    ValueError
        An unknown kind, an unknown or missing option, a bad choice or value, or a malformed
        file (naming the file and the entry).
    FileNotFoundError
        A file or folder option that does not exist.
    """
    try:
        kind = DATASETS[name]
    except KeyError:
        raise ValueError(f"unknown data set {name!r}; choose one of {', '.join(DATASETS)}") from None
    return kind.open(**inputs)


__all__ = [
    "DATASETS",
    "Benchmark",
    "DatasetKind",
    "MatchedEpisodes",
    "Option",
    "SplitIndex",
    "SplitReader",
    "data_path",
    "havln",
    "instructions",
    "ivlnce",
    "load_connectivity",
    "load_havln_collisions",
    "load_ndh",
    "load_ndh_predictions",
    "load_objects",
    "load_positions",
    "load_predictions",
    "load_r2r",
    "load_results",
    "load_reverie",
    "load_reverie_predictions",
    "load_rxr_guide",
    "load_rxr_predictions",
    "load_rxrce_episodes",
    "load_tour_paths",
    "load_tours",
    "load_vlnce_episodes",
    "load_vlnce_gt",
    "load_vlnce_predictions",
    "match_predictions",
    "matterport",
    "ndh",
    "open",
    "positions",
    "r2r",
    "results",
    "reverie",
    "rxr",
    "rxrce",
    "split_index",
    "vlnce",
    "write_predictions",
]
