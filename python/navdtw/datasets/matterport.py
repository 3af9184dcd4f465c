"""Matterport3D simulator connectivity graphs (``<scan>_connectivity.json``), the navigation graphs
of R2R, R4R, RxR, REVERIE and CVDN.

A connectivity file is a JSON list with one entry per viewpoint: ``image_id``, ``pose`` (a 4 x 4
row-major camera matrix; the position is ``pose[3], pose[7], pose[11]``, z up, metres),
``included`` and ``unobstructed`` (one boolean per viewpoint of the file). The simulator's
evaluators build an undirected graph from it weighted by the 3-D Euclidean distance between
viewpoints; :func:`load_navgraph` builds the same graph as a :class:`navdtw.NavGraph`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import numpy as np

from .._messages import named
from .._typing import PathLike
from ..engine import MAX_COORDINATE
from ..graphs import GraphSet, NavGraph
from ._common import read_json

__all__ = ["SUFFIX", "load_connectivity", "load_navgraph"]

#: The connectivity files' name ending: ``<scan>_connectivity.json``.
SUFFIX = "_connectivity.json"


def load_navgraph(path: PathLike) -> NavGraph:
    """Reads one Matterport3D ``<scan>_connectivity.json`` into a :class:`navdtw.NavGraph`.

    Nodes are the viewpoints with ``included`` true, in file order; edge ``(i, j)`` exists when
    either viewpoint lists the other as ``unobstructed`` and both are included; positions are
    ``pose[3], pose[7], pose[11]`` (z-up, metres), weights the 3-D Euclidean distances. The
    name is the scan id taken from the file name.

    Parameters
    ----------
    path : str or os.PathLike
        A ``<scan>_connectivity.json`` file (gzipped or not).

    Returns
    -------
    navdtw.NavGraph
        The scan's graph, named by its scan id.

    Raises
    ------
    ValueError
        A malformed file (naming the file and, where it applies, the entry index): not a
        non-empty list, a missing or mistyped field, a non-finite position, no included
        viewpoint, a viewpoint id twice.
    FileNotFoundError
        ``path`` does not exist.
    """
    path = Path(path)
    name = path.name[: -len(SUFFIX)] if path.name.endswith(SUFFIX) else path.stem
    return navgraph_from_entries(read_json(path), name, path.name)


def navgraph_from_entries(data, name: str, source: str) -> NavGraph:
    """The graph of an already parsed connectivity list; ``source`` names it in messages."""
    if not isinstance(data, list) or not data:
        raise ValueError(f"{source}: expected a non-empty JSON list of viewpoints, got {type(data).__name__}")
    n = len(data)
    # fast path: vectorise everything; on any failure fall back to a per-entry scan that names
    # the first bad entry (the slow scan runs only for broken files)
    try:
        ids = [d["image_id"] for d in data]
        included = np.array([d["included"] for d in data])
        poses = np.array([d["pose"] for d in data], dtype=np.float64)
        unob = np.array([d["unobstructed"] for d in data])
        ok = (
            all(type(v) is str for v in ids)
            and included.dtype == np.bool_
            and included.shape == (n,)
            and poses.shape == (n, 16)
            and unob.shape == (n, n)
            and unob.dtype == np.bool_
        )
    except (KeyError, TypeError, ValueError, OverflowError):  # OverflowError: an int beyond float's range
        ok = False
    if not ok:
        _locate_bad_entry(data, source)
        raise ValueError(f"{source}: malformed connectivity data")  # pragma: no cover - located above
    # NaN compares False; beyond MAX_COORDINATE the squares of the engine's coordinates overflow
    ok_pos = (np.abs(poses[:, [3, 7, 11]]) <= MAX_COORDINATE).all(axis=1)
    if not ok_pos.all():
        k = int(np.argmin(ok_pos))
        what = "is not finite" if not np.isfinite(poses[k, [3, 7, 11]]).all() else f"is beyond +-{MAX_COORDINATE:g} m"
        raise ValueError(f"{source}: entry {k}: pose position {what}")
    keep = np.flatnonzero(included)
    if keep.size == 0:
        raise ValueError(f"{source}: no viewpoint is 'included'")
    first: dict[str, int] = {}
    for k in keep.tolist():
        if ids[k] in first:
            raise ValueError(f"{source}: entry {k}: image_id {ids[k]!r} appears twice (also entry {first[ids[k]]})")
        first[ids[k]] = k
    sub = unob[np.ix_(keep, keep)]
    sub = sub | sub.T  # undirected: either direction listed makes an edge
    i, j = np.nonzero(np.triu(sub, 1))  # upper triangle without the diagonal: no self loops
    positions = poses[keep][:, [3, 7, 11]]
    edges = np.stack([i, j], axis=1)
    return NavGraph(positions, edges, ids=[ids[k] for k in keep], name=name)


def _locate_bad_entry(data: list, source: str) -> None:
    """Raises a ValueError naming the first malformed entry of a connectivity list."""
    n = len(data)
    for k, d in enumerate(data):
        where = f"{source}: entry {k}"
        if not isinstance(d, dict):
            raise ValueError(f"{where}: expected an object, got {type(d).__name__}")
        for key in ("image_id", "pose", "included", "unobstructed"):
            if key not in d:
                raise ValueError(f"{where}: missing field {key!r}")
        if not isinstance(d["image_id"], str):
            raise ValueError(f"{where}: 'image_id' must be a string")
        if not isinstance(d["included"], bool):
            raise ValueError(f"{where}: 'included' must be true or false")
        pose = d["pose"]
        if (
            not isinstance(pose, list)
            or len(pose) != 16
            or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in pose)
        ):
            raise ValueError(f"{where}: 'pose' must be a list of 16 numbers")
        for j, x in enumerate(pose):
            if isinstance(x, int) and abs(x) >= 2**1024:
                raise ValueError(f"{where}: pose[{j}] is beyond the range of a float")
        un = d["unobstructed"]
        if not isinstance(un, list) or len(un) != n or not all(isinstance(x, bool) for x in un):
            raise ValueError(f"{where}: 'unobstructed' must be a list of {n} booleans (one per viewpoint)")


def load_connectivity(directory: PathLike, scans: Iterable[str] | None = None) -> GraphSet:
    """Loads Matterport3D connectivity graphs from a folder of ``<scan>_connectivity.json``.

    ``scans``: the scans to load, in that order (environment ``k`` = ``scans[k]``). Default: every
    ``*_connectivity.json`` in the folder, sorted by scan id (Python string order; ``scans.txt``
    is not consulted, so the order does not depend on it). A scan without a file raises
    ``FileNotFoundError`` naming it. Distance matrices are computed lazily (all 90 scans: about
    0.3 s to parse, plus a fraction of a second for the matrices).

    Parameters
    ----------
    directory : str or os.PathLike
        The folder of ``<scan>_connectivity.json`` files.
    scans : iterable of str, optional
        The scans to load, in that order (one string is one scan). Default: every file's scan,
        sorted.

    Returns
    -------
    navdtw.GraphSet
        The graphs, environment ``k`` = the ``k``-th scan.

    Raises
    ------
    FileNotFoundError
        No such folder, no connectivity file in it, or none for a listed scan.
    TypeError
        A scan id that is not a string.
    ValueError
        A scan listed twice, or a malformed file (:func:`~navdtw.datasets.matterport.load_navgraph`).
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise FileNotFoundError(f"connectivity folder not found: {directory}")
    if scans is None:
        scan_list = sorted(p.name[: -len(SUFFIX)] for p in directory.glob("*" + SUFFIX))
        if not scan_list:
            raise FileNotFoundError(f"no *{SUFFIX} files in {directory}")
    else:
        if isinstance(scans, str):
            scans = [scans]
        scan_list = list(scans)
        seen = set()
        for s in scan_list:
            if not isinstance(s, str):
                raise TypeError(f"scan ids must be strings, got {s!r}")
            if s in seen:
                raise ValueError(f"scan {s!r} is listed twice")
            seen.add(s)
        missing = [s for s in scan_list if not (directory / (s + SUFFIX)).is_file()]
        if missing:
            shown = ", ".join(repr(s) for s in missing[:5])
            more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
            raise FileNotFoundError(f"no connectivity file for scan {shown}{more} in {directory}")
    return GraphSet([load_navgraph(directory / (s + SUFFIX)) for s in scan_list])


def _plain_name(scan: str) -> bool:
    return bool(scan) and scan not in (".", "..") and not any(c in scan for c in "/\\\0")


def load_scan_graphs(connectivity: PathLike, entries: Sequence[dict], where: Callable[[int], str]) -> GraphSet:
    """The graphs of the scans a split's ``entries`` use, in order of first use (environment ``k``
    is the ``k``-th scan met), from the ``connectivity`` folder. A scan without a connectivity file
    raises ``ValueError`` naming the entry as ``where(k)`` says."""
    conn = Path(connectivity)
    if not conn.is_dir():
        raise FileNotFoundError(f"connectivity folder not found: {conn}")
    scans: list[str] = []
    for k, e in enumerate(entries):
        scan = e["scan"]
        if scan not in scans:
            if not _plain_name(scan):  # "../x" would read a file outside the folder
                raise ValueError(f"{where(k)}: scan {scan!r} is not a scan id (a file name without a folder)")
            if not (conn / f"{scan}{SUFFIX}").is_file():
                raise ValueError(f"{where(k)}: unknown scan {scan!r} (no {named(scan + SUFFIX)} in {named(conn)})")
            scans.append(scan)
    return load_connectivity(conn, scans=scans)
