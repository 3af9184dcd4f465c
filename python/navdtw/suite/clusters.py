"""Which episodes share a path: the clusters of the path bootstrap (``cluster = "path"``).

Instructions written for the same path are not independent samples: the suite's intervals and
tests resample paths, not episodes, wherever a data set's ids say which path an episode follows.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["CLUSTER_RULES", "cluster_labels"]


def _prefix_before_last(ids: Sequence[str]) -> list[str]:
    return [str(i).rsplit("_", 1)[0] for i in ids]


def _first_part(ids: Sequence[str]) -> list[str]:
    return [str(i).split("_", 1)[0] for i in ids]


def _vlnce_trajectories(bench, ids: Sequence[str]) -> list[str] | None:
    traj = {str(e.get("episode_id")): e.get("trajectory_id") for e in getattr(bench, "episodes", ())}
    labels = [traj.get(str(i)) for i in ids]
    return None if any(x is None for x in labels) else [str(x) for x in labels]


#: For each data set kind, episode ids -> path ids (the cluster of each episode), or None (episodes are
#: independent). R2R / R4R instr_id "<path_id>_<k>"; RxR (VLN-HAMT ids) "<path_id>_<instruction_id>";
#: REVERIE "<path_id>_<objId>_<k>"; R2R-CE episodes share a path when they share trajectory_id.
#: Kinds not listed (NDH: one dialog per episode) resample episodes. A Benchmark may define
#: ``cluster_of(ids)`` instead.
CLUSTER_RULES: dict[str, Callable[[Any, Sequence[str]], list[str] | None]] = {
    "r2r": lambda bench, ids: _prefix_before_last(ids),
    "r4r": lambda bench, ids: _prefix_before_last(ids),
    "rxr": lambda bench, ids: _prefix_before_last(ids),
    "reverie": lambda bench, ids: _first_part(ids),
    "r2r-ce": _vlnce_trajectories,
}


def cluster_labels(bench, ids: Sequence[str]) -> list[str] | None:
    """The path id of every episode of ``bench`` (for the cluster bootstrap), or None.

    Parameters
    ----------
    bench:
        an open :class:`navdtw.datasets.Benchmark`; its own ``cluster_of(ids)`` wins over
        :data:`~navdtw.suite.clusters.CLUSTER_RULES`.
    ids:
        the episode ids, in the order of the values to resample.

    Returns
    -------
    One label per id (episodes with equal labels are resampled together), or None when the data
    set's episodes are independent (then episodes are resampled).
    """
    own = getattr(bench, "cluster_of", None)
    if callable(own):
        return own(ids)
    rule = CLUSTER_RULES.get(bench.kind.name)
    return None if rule is None else rule(bench, ids)
