"""Internal to :mod:`navdtw.datasets.reverie`: REVERIE's target objects, which viewpoints see
them (``BBoxes.json``'s ``visible_pos``), and success judged by them (the goal table)."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np

from .._messages import named
from ..graphs import GraphSet
from ..paths import Paths
from ._common import INPUT, is_int, is_path, object_of, read_json, read_text


def object_id(value, where: str, key: str) -> str:
    """Internal: an object id as the evaluators compare it (a string); integral floats as integers."""
    if is_int(value):
        return str(int(value))
    if isinstance(value, str):
        return value
    if isinstance(value, float) and math.isfinite(value) and value == int(value):
        return str(int(value))
    raise ValueError(f"{where}: {key!r} must be an object id (an integer or a string), got {value!r}")


# --------------------------------------------------------------------------------------------
# object boxes
# --------------------------------------------------------------------------------------------


class VisibleObjects:
    """Per scan and viewpoint, the ids (strings) of the objects visible there (``visible_pos``
    non-empty), as read by :func:`~navdtw.datasets.load_objects`.

    Parameters
    ----------
    scans : dict[str, dict[str, frozenset]]
        scan -> viewpoint -> the ids of the objects visible there.
    source : str, optional
        Names the box file or folder in messages (default ``<input>``).
    """

    def __init__(self, scans: dict[str, dict[str, frozenset]], source: str = "<input>") -> None:
        self._scans = scans
        self.source = source

    @property
    def scans(self) -> list[str]:
        return list(self._scans)

    def __contains__(self, scan) -> bool:
        return scan in self._scans

    def __repr__(self) -> str:
        n = sum(len(v) for v in self._scans.values())
        return f"VisibleObjects({len(self._scans)} scans, {n} viewpoints, from {self.source})"

    def viewpoints(self, scan: str) -> dict[str, frozenset]:
        """The viewpoints the boxes list in ``scan``.

        Parameters
        ----------
        scan : str
            A scan id.

        Returns
        -------
        dict[str, frozenset]
            viewpoint -> the ids of the objects visible from it.

        Raises
        ------
        KeyError
            A scan the boxes do not list (naming the box file).
        """
        try:
            return self._scans[scan]
        except KeyError:
            raise KeyError(f"{self.source}: no viewpoint of scan {scan!r}") from None

    def visible(self, scan: str, viewpoint: str) -> frozenset:
        """The objects visible from a viewpoint.

        Parameters
        ----------
        scan : str
            A scan id.
        viewpoint : str
            A viewpoint id of that scan.

        Returns
        -------
        frozenset
            The object ids (empty when the boxes do not list the viewpoint).

        Raises
        ------
        KeyError
            A scan the boxes do not list.
        """
        return self.viewpoints(scan).get(viewpoint, frozenset())

    def goals(self, scan: str, object_id) -> list[str]:
        """The viewpoints from which an object is visible.

        Parameters
        ----------
        scan : str
            A scan id.
        object_id : int or str
            The object (compared as a string).

        Returns
        -------
        list of str
            The viewpoints, sorted.

        Raises
        ------
        KeyError
            A scan the boxes do not list.
        """
        obj = str(object_id)
        return sorted(vp for vp, objs in self.viewpoints(scan).items() if obj in objs)


def _visible_in(content, where: str, vp: str) -> frozenset:
    """The visible object ids of one viewpoint's box entry ``{vp: {objId: {visible_pos, ...}}}``."""
    if not isinstance(content, dict) or list(content) != [vp]:
        raise ValueError(f"{where}: expected {{{vp!r}: {{objId: {{visible_pos, ...}}}}}}")
    objs = content[vp]
    if not isinstance(objs, dict):
        raise ValueError(f"{where}: expected the objects of viewpoint {vp!r} keyed by objId")
    out = []
    for obj, box in objs.items():
        vis = box.get("visible_pos") if isinstance(box, dict) else None
        if not isinstance(vis, list):
            raise ValueError(f"{where}: object {named(obj)}: 'visible_pos' must be a list of view indices")
        if vis:
            out.append(obj)
    return frozenset(out)


# The 2-D boxes are not needed and are most of the text: dropped before parsing (3x faster).
_BBOX2D = re.compile(r'"bbox2d":\s*\[[\[\]\d,.\s+eE-]*\]\s*,?')


def _read_boxes(path: Path):
    text = read_text(path)
    try:
        return json.loads(_BBOX2D.sub("", text))
    except (ValueError, RecursionError):
        return read_json(path)  # not the usual layout: parse it whole (errors name the file)


def load_objects(path_or_dict, *, scans=None) -> VisibleObjects:
    """Reads REVERIE object boxes: which objects are visible from which viewpoint.

    ``path_or_dict``: the merged box file (``BBox_val_scans.json.gz``: ``{"<scan>_<vp>": {vp:
    {objId: {name, visible_pos, bbox2d}}}}``, gzipped or not), a folder of the upstream
    ``<scan>_<vp>.json`` files (``BBox/``), or the parsed merged object. An object counts as
    visible from a viewpoint when its ``visible_pos`` there is non-empty (the evaluator's
    per-viewpoint object lists hold exactly these ids).

    Parameters
    ----------
    path_or_dict : str, os.PathLike or dict
        The merged box file, a folder of box files, or the parsed merged object.
    scans : iterable of str, optional
        Keep only these scans (default all).

    Returns
    -------
    VisibleObjects
        The visible objects per scan and viewpoint.

    Raises
    ------
    ValueError
        A malformed file, key or entry (naming the file and the key), or a folder without box
        files.
    FileNotFoundError
        A file name that does not exist.
    """
    keep = None if scans is None else set(scans)
    out: dict[str, dict[str, frozenset]] = {}

    def add(key: str, content, where: str) -> None:
        scan, sep, vp = key.partition("_")
        if not sep or not scan or not vp:
            raise ValueError(f"{where}: key must be '<scan>_<viewpoint>', got {key!r}")
        if keep is not None and scan not in keep:
            return
        out.setdefault(scan, {})[vp] = _visible_in(content, where, vp)

    if is_path(path_or_dict) and Path(path_or_dict).is_dir():
        folder = Path(path_or_dict)
        files = sorted(folder.glob("*_*.json"))
        if not files:
            raise ValueError(f"{folder}: no <scan>_<viewpoint>.json box files")
        for f in files:
            if keep is None or f.stem.partition("_")[0] in keep:  # read only the scans kept
                add(f.stem, read_json(f), f"{folder.name}/{f.name}")
        name = str(folder)
    else:
        if is_path(path_or_dict):
            data, name = _read_boxes(Path(path_or_dict)), Path(path_or_dict).name
        else:
            data, name = path_or_dict, INPUT
        data = object_of(data, name, "'<scan>_<viewpoint>'")
        for key, content in data.items():
            add(key, content, f"{name}: {named(key)}")
    return VisibleObjects(out, name)


def goal_table(entries, graphs: GraphSet, objects: VisibleObjects, name: str):
    """Internal: for every split entry, its goal nodes as one flat boolean table: ``(flat, base)`` with
    ``flat[base[e] + node]`` True where entry ``e``'s target is visible from ``node`` of its scan.
    Entries with the same (scan, target) share a row. Errors name the split file and entry."""
    rows: dict[tuple[str, str], int] = {}
    chunks: list[np.ndarray] = []
    base = np.empty(len(entries), dtype=np.int64)
    size = 0
    by_object: dict[str, dict[str, list[str]]] = {}
    for k, e in enumerate(entries):
        scan, obj = e["scan"], object_id(e["objId"], "", "objId")
        key = (scan, obj)
        if key not in rows:
            where = f"{name}: entry {k} (id {named(e['id'])})"
            if scan not in objects:
                raise ValueError(f"{objects.source}: no viewpoint of scan {scan!r}, which {where} needs")
            if scan not in by_object:
                inverse: dict[str, list[str]] = {}
                for vp, objs in objects.viewpoints(scan).items():
                    for o in objs:
                        inverse.setdefault(o, []).append(vp)
                by_object[scan] = inverse
            vps = by_object[scan].get(obj)
            if not vps:
                raise ValueError(
                    f"{where}: target object {named(obj)} is visible from no viewpoint of scan {scan!r} "
                    f"in {objects.source}"
                )
            index = graphs[scan].index
            row = np.zeros(graphs[scan].num_nodes, dtype=bool)
            row[[index[v] for v in vps if v in index]] = True
            rows[key] = size
            chunks.append(row)
            size += len(row)
        base[k] = rows[key]
    flat = np.concatenate(chunks) if chunks else np.zeros(0, dtype=bool)
    return flat, base


def visibility(flat: np.ndarray, base: np.ndarray, paths: Paths) -> tuple[np.ndarray, np.ndarray]:
    """Internal: (success, oracle success) of every path: its goal row (``base`` per path) at the last node,
    and at any node (every path is non-empty)."""
    lengths = paths.lengths
    hits = flat[np.repeat(base, lengths) + paths.values]
    oracle = np.logical_or.reduceat(hits, paths.offsets[:-1]) if len(hits) else np.zeros(0, dtype=bool)
    return flat[base + paths.last()], oracle
