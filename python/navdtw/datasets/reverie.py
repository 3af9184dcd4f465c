"""REVERIE (Qi et al. 2020, remote object grounding): splits, object boxes, predictions, matching.

Evaluators reproduced (``navdtw.CONVENTIONS``): ``reverie`` (``YuankaiQi/REVERIE``
``tasks/REVERIE/eval_release.py``, the default), ``duet`` (VLN-DUET ``map_nav_src/reverie/env.py``)
and navdtw's ``paper``. Node paths over the Matterport3D connectivity graphs.

* Split: ``[{"id": "<path_id>_<objId>", "path_id", "scan", "path": [viewpoint, ...], "heading",
  "distance", "objId", "instructions": [1-3 strings], ...}]``. ``path_id`` is shared by the entries
  of the objects on one path, so entries are keyed by ``id``; instruction ``k`` of an entry has
  ``instr_id = f"{id}_{k}"``.
* Boxes: ``{"<scan>_<viewpoint>": {viewpoint: {objId: {"name", "visible_pos": [views],
  "bbox2d": [...]}}}}`` (the upstream ``BBox/<scan>_<viewpoint>.json`` files merged, or a folder of
  them). An object is *visible* from a viewpoint when its ``visible_pos`` there is non-empty.
* Predictions: R2R results entries ``{"instr_id", "trajectory"}`` plus the predicted object id,
  ``predObjId`` (official) or ``pred_objid`` (VLN-DUET, may be ``null``); a trajectory is a list of
  ``[viewpoint, heading, elevation]`` steps or VLN-DUET's list of viewpoint lists (concatenated).

Success is not a distance test: the target object must be visible from the final viewpoint (sr)
or from any viewpoint of the trajectory (osr). The matcher computes both per episode (vectorized
over a table of goal nodes) with whether the predicted object is the target (``object_found``)
and hands them to ``navdtw.evaluate`` as the inputs ``success``, ``oracle_success`` and
``object_found`` (``rgs``, ``rgspl``); see ``docs/metrics.md``, REVERIE.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from .._messages import few, named
from .._typing import PathLike
from ..baseline import score_random_walks
from ..graphs import GraphSet
from ..paths import Paths, collapse_repeats, first_start_mismatch
from ._common import (
    Document,
    MatchedEpisodes,
    SplitIndex,
    check_viewpoints,
    finite_real,
    is_int,
    is_path,
    list_of,
    make_split_index,
    source,
)
from ._reverie_objects import VisibleObjects, goal_table, load_objects, object_id, visibility
from .base import Benchmark, DatasetKind, IdShape, Option, SplitReader
from .matterport import load_scan_graphs
from .shapes import other_split, routed

__all__ = [
    "CONVENTIONS",
    "DEFAULT_CONVENTION",
    "REVERIE",
    "Prediction",
    "REVERIEBenchmark",
    "VisibleObjects",
    "instructions",
    "load_objects",
    "load_predictions",
    "load_reverie",
    "match_predictions",
]

#: The conventions (``navdtw.CONVENTIONS``) whose evaluators read these files.
CONVENTIONS: tuple[str, ...] = ("reverie", "duet", "paper")
#: The convention the command line uses for REVERIE unless told otherwise.
DEFAULT_CONVENTION = "reverie"
#: Conventions whose evaluator walks the results in file order and scores an id only while it is
#: still expected: extra ids and later duplicates are ignored (missing ids still fail).
_FIRST_WINS = ("reverie",)
#: The keys of the predicted object id, official first.
OBJECT_KEYS = ("predObjId", "pred_objid")


# --------------------------------------------------------------------------------------------
# split
# --------------------------------------------------------------------------------------------


def load_reverie(path_or_list, *, graphs: GraphSet | None = None) -> list[dict[str, Any]]:
    """Reads a REVERIE split: a list of entries, one per (path, target object).

    Each entry needs ``id`` (str, unique), ``scan`` (str), ``path`` (non-empty list of viewpoint
    ids), ``objId`` (the target object, int or str) and ``instructions`` (non-empty list of
    strings); ``path_id`` (may repeat), ``distance`` and ``heading`` are checked when present.
    Other keys are kept.

    Parameters
    ----------
    path_or_list : str, os.PathLike or list
        The split file (gzipped or not), or its parsed list.
    graphs : GraphSet, optional
        If given, every scan and viewpoint must exist in it.

    Returns
    -------
    list of dict
        New dicts in file order (``path`` as a new list, ``objId`` kept as given).

    Raises
    ------
    ValueError
        A malformed file or entry (naming the file and the entry); with ``graphs``, an unknown
        scan or viewpoint.
    FileNotFoundError
        A file name that does not exist.
    """
    data, name = source(path_or_list)
    return _read_split(data, name, graphs)


def _read_split(data, name: str, graphs: GraphSet | None) -> list[dict[str, Any]]:
    data = list_of(data, name, "REVERIE entries")
    out: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for k, e in enumerate(data):
        if not isinstance(e, dict):
            raise ValueError(f"{name}: entry {k}: expected an object, got {type(e).__name__}")
        eid = e.get("id")
        if not isinstance(eid, str) or not eid:
            raise ValueError(f"{name}: entry {k}: 'id' must be a non-empty string like '4634_215', got {eid!r}")
        where = f"{name}: entry {k} (id {named(eid)})"
        if eid in seen:
            raise ValueError(f"{where}: duplicate id (also entry {seen[eid]})")
        seen[eid] = k
        if "path_id" in e and not (is_int(e["path_id"]) or isinstance(e["path_id"], str)):
            raise ValueError(f"{where}: 'path_id' must be an integer or a string")
        scan = e.get("scan")
        if not isinstance(scan, str) or not scan:
            raise ValueError(f"{where}: 'scan' must be a non-empty string")
        path = e.get("path")
        if not isinstance(path, list) or not path:
            raise ValueError(f"{where}: 'path' must be a non-empty list of viewpoint ids")
        for j, v in enumerate(path):
            if not isinstance(v, str):
                raise ValueError(f"{where}: path[{j}] must be a viewpoint id string, got {v!r}")
        if "objId" not in e:
            raise ValueError(f"{where}: missing 'objId' (the target object)")
        object_id(e["objId"], where, "objId")
        ins = e.get("instructions")
        if not isinstance(ins, list) or not ins or not all(isinstance(s, str) for s in ins):
            raise ValueError(f"{where}: 'instructions' must be a non-empty list of strings")
        for key in ("distance", "heading"):
            if key in e and not finite_real(e[key]):
                raise ValueError(f"{where}: {key!r} must be a finite number, got {e[key]!r}")
        if graphs is not None:
            check_viewpoints(graphs, scan, {"path": path}, where)
        rec = dict(e)
        rec["path"] = list(path)
        out.append(rec)
    return out


def instructions(split) -> list[dict[str, Any]]:
    """One record per instruction of a split (from :func:`load_reverie`, or a file name):
    the entry's fields except ``instructions``, plus ``instr_id = f"{id}_{k}"``,
    ``instruction_index`` (k) and ``instruction`` (the text).

    Parameters
    ----------
    split : str, os.PathLike or list of dict
        A split file name, or entries as :func:`load_reverie` returns them.

    Returns
    -------
    list of dict
        One record per instruction, in split order.

    Raises
    ------
    ValueError
        An entry without ``id`` or ``instructions``, or a malformed split file.
    FileNotFoundError
        A file name that does not exist.
    """
    if is_path(split):
        split = load_reverie(split)
    out: list[dict[str, Any]] = []
    for k, e in enumerate(split):
        if not isinstance(e, dict) or "id" not in e or "instructions" not in e:
            raise ValueError(f"split entry {k}: not a REVERIE entry (use load_reverie to read the split)")
        base = {key: val for key, val in e.items() if key != "instructions"}
        for j, text in enumerate(e["instructions"]):
            rec = dict(base)
            rec["instr_id"] = f"{e['id']}_{j}"
            rec["instruction_index"] = j
            rec["instruction"] = text
            out.append(rec)
    return out


def split_index(document: Document, kind: str = "reverie") -> SplitIndex | None:
    """The index of a REVERIE split: one unit per entry (a path and its target object), its
    instructions' ids ``<id>_<k>``; the path of each is the entry's ``path_id`` (else the first
    part of its ``id``).

    Reads what the index needs: each entry's ``id``, ``objId`` and ``instructions``, and its
    ``scan`` and ``path_id`` when present.

    Parameters
    ----------
    document : Document
        The file, read (:func:`~navdtw.datasets._common.read_document`).
    kind : str, optional
        The kind reading it, recorded in the index.

    Returns
    -------
    SplitIndex or None
        The index; None when the file is not a list of REVERIE entries (with a target object).

    Raises
    ------
    ValueError
        An entry without ``id`` and ``instructions`` (naming the file and the entry), or an id twice.
    """
    data, name = document.data, document.name
    first = data[0] if isinstance(data, list) and data else None
    if not (isinstance(first, dict) and "objId" in first and "id" in first):
        return None
    units, scans, paths = [], [], []
    for k, e in enumerate(data):
        if not (isinstance(e, dict) and isinstance(e.get("id"), str) and isinstance(e.get("instructions"), list)):
            raise ValueError(f"{name}: entry {k} has no 'id' with 'instructions'")
        count = len(e["instructions"])
        units.append(tuple(f"{e['id']}_{j}" for j in range(count)))
        scans += [str(e.get("scan", ""))] * count
        paths += [str(e.get("path_id", e["id"].split("_", 1)[0]))] * count
    return make_split_index(document, kind, units, entries=data, scans=scans, paths=paths)


# --------------------------------------------------------------------------------------------
# predictions
# --------------------------------------------------------------------------------------------


class Prediction(NamedTuple):
    """One result entry: ``trajectory`` (viewpoint ids as given, repeats kept), ``object_id`` (the
    predicted object as a string; ``None`` when the entry gives ``null`` or no object key),
    ``object_key`` (``"predObjId"``, ``"pred_objid"`` or ``""`` when absent), ``entry`` (index in
    the file)."""

    trajectory: list[str]
    object_id: str | None
    object_key: str
    entry: int


def _viewpoints(traj, where: str) -> list[str]:
    if not isinstance(traj, list):
        raise ValueError(f"{where}: 'trajectory' must be a list of [viewpoint, heading, elevation] steps")
    vps: list[str] = []
    for j, step in enumerate(traj):
        if isinstance(step, str):
            vps.append(step)
        elif isinstance(step, (list, tuple)) and step and all(isinstance(v, str) for v in step):
            vps.extend(step)  # VLN-DUET: one list of viewpoints per decision step
        elif isinstance(step, (list, tuple)) and step and isinstance(step[0], str):
            if not all(finite_real(x) for x in step[1:]):
                raise ValueError(f"{where}: trajectory[{j}] must be [viewpoint, heading, elevation], got {step!r}")
            vps.append(step[0])
        else:
            raise ValueError(
                f"{where}: trajectory[{j}] must be [viewpoint, heading, elevation] or a list of viewpoints, "
                f"got {step!r}"
            )
    if not vps:
        raise ValueError(f"{where}: trajectory is empty")
    return vps


def load_predictions(path_or_list) -> list[tuple[str, Prediction]]:
    """Reads REVERIE results: ``[{"instr_id", "trajectory", "predObjId" or "pred_objid"}, ...]``
    -> ``[(instr_id, Prediction), ...]`` in file order, duplicates included (the matcher decides).

    A trajectory is a list of ``[viewpoint, heading, elevation]`` steps (or bare viewpoint ids) or
    VLN-DUET's list of viewpoint lists, which is concatenated. The object id may be an integer, a
    string, an integral float or ``null``; lists, objects, booleans and fractional numbers are
    malformed. Both keys with different values are an error.

    Parameters
    ----------
    path_or_list : str, os.PathLike or list
        The results file (gzipped or not), or its parsed list.

    Returns
    -------
    list of (str, Prediction)
        ``(instr_id, prediction)`` in file order, duplicates included.

    Raises
    ------
    ValueError
        A malformed entry, naming the file and the entry: an ``instr_id`` that is not a string or
        integer, an empty or malformed trajectory, a malformed object id, two object keys that
        differ.
    FileNotFoundError
        A file name that does not exist.
    """
    data, name = source(path_or_list)
    data = list_of(data, name, "predictions")
    out: list[tuple[str, Prediction]] = []
    for k, e in enumerate(data):
        if not isinstance(e, dict):
            raise ValueError(f"{name}: entry {k}: expected an object, got {type(e).__name__}")
        iid = e.get("instr_id")
        if not (isinstance(iid, str) or is_int(iid)):
            raise ValueError(f"{name}: entry {k}: 'instr_id' must be a string, got {iid!r}")
        iid = str(iid)
        where = f"{name}: entry {k} (instr_id {named(iid)})"
        vps = _viewpoints(e.get("trajectory"), where)
        found = [(key, e[key]) for key in OBJECT_KEYS if key in e]
        objs = [None if v is None else object_id(v, where, key) for key, v in found]
        if len(objs) == 2 and objs[0] != objs[1]:
            raise ValueError(f"{where}: 'predObjId' ({named(objs[0])}) and 'pred_objid' ({named(objs[1])}) differ")
        out.append((iid, Prediction(vps, objs[0] if objs else None, found[0][0] if found else "", k)))
    return out


# --------------------------------------------------------------------------------------------
# matching
# --------------------------------------------------------------------------------------------


def _chosen(predictions, expected: set[str], src: str, *, first_wins: bool) -> tuple[dict[str, Prediction], list[str]]:
    """``({instr_id: prediction}, ignored ids)``: the prediction of each instruction of the split
    (``expected``). An id not in the split or repeated is ignored under the conventions whose
    evaluator keeps the first (``first_wins``), else a ``ValueError`` naming the entry."""
    chosen: dict[str, Prediction] = {}
    ignored: list[str] = []
    for iid, p in predictions:
        where = f"{src}: entry {p.entry} (instr_id {named(iid)})"
        if iid not in expected:
            if first_wins:
                ignored.append(iid)
                continue
            raise ValueError(f"{where}: no such instruction in the split")
        if iid in chosen:
            if first_wins:
                ignored.append(iid)
                continue
            raise ValueError(f"{where}: duplicate instr_id (also entry {chosen[iid].entry})")
        chosen[iid] = p
    return chosen, ignored


def match_predictions(
    split_instructions,
    predictions,
    graphs: GraphSet,
    objects: VisibleObjects,
    *,
    convention: str = DEFAULT_CONVENTION,
    strict: bool = False,
) -> MatchedEpisodes:
    """Pairs every instruction of a REVERIE split with its prediction as ``convention``'s
    evaluator does, and computes the per-episode inputs of success and grounding.

    ``split_instructions``: records from :func:`instructions` (a split from
    :func:`load_reverie` is expanded first). ``predictions``: a results file name, parsed list, or
    the output of :func:`load_predictions`. ``objects``: :func:`load_objects`.

    Ids: under ``reverie`` the results are walked in file order and an id is scored only while it
    is still expected, so extra ids and later duplicates are ignored (a ``UserWarning`` names
    them); under ``duet`` and ``paper`` an extra or duplicated id is an error. A missing id is an
    error under every convention.

    Object ids: ``object_found`` = the predicted id equals the target as strings. Under ``duet``
    a missing key or ``null`` scores 0 (``item.get('pred_objid')``). Under ``reverie`` and
    ``paper`` a ``null`` scores 0 and a missing key is an error (the official evaluator's
    ``KeyError``), unless no entry has an object key at all: then the results are navigation
    only (the evaluator's ``evalType='nav'``) and ``rgs`` / ``rgspl`` are not computed.

    ``strict=True`` requires each trajectory to start at its reference's start (both evaluators
    assert it). Repeated viewpoints are merged when the convention says so (they add 0 m and
    change nothing but DTW-based metrics; neither evaluator computes DTW).

    Parameters
    ----------
    split_instructions : list of dict
        Records from :func:`instructions` (a split from :func:`load_reverie` is expanded first).
    predictions : str, os.PathLike or list
        A results file name, its parsed list, or the output of :func:`load_predictions`.
    graphs : GraphSet
        The graphs of the split's scans.
    objects : VisibleObjects
        The visible objects (:func:`load_objects`).
    convention : str, optional
        ``"reverie"`` (default), ``"duet"`` or ``"paper"``.
    strict : bool, optional
        Require every trajectory to start at its reference's start (default False).

    Returns
    -------
    MatchedEpisodes
        Whose ``extra`` holds ``success``, ``oracle_success`` and (unless navigation only)
        ``object_found``, all bool ``[B]``.

    Raises
    ------
    ValueError
        A convention that does not apply, a missing id, an extra or duplicated id (``duet``,
        ``paper``), a missing object key (``reverie``, ``paper``), an unknown viewpoint, or
        (``strict``) a trajectory that starts elsewhere; each naming the file and the entry.
    FileNotFoundError
        A file name that does not exist.
    """
    from ..metrics import CONVENTIONS as ALL

    conv = ALL[convention] if isinstance(convention, str) else convention
    if is_path(split_instructions):
        split_instructions = load_reverie(split_instructions)
    records = list(split_instructions)
    if records and "instr_id" not in records[0]:
        records = instructions(records)
    if not records:
        raise ValueError("match_predictions: the split is empty")
    src = Path(predictions).name if is_path(predictions) else "<input>"
    if not (isinstance(predictions, list) and predictions and isinstance(predictions[0], tuple)):
        predictions = load_predictions(predictions)

    ids = [str(r["instr_id"]) for r in records]
    expected = set(ids)
    if len(expected) != len(ids):
        raise ValueError("match_predictions: the split has duplicate instruction ids")
    wrong = other_split(src, [iid for iid, _ in predictions], "the split", ids, "instr_id")
    if wrong:
        raise ValueError(wrong)
    chosen, ignored = _chosen(predictions, expected, src, first_wins=conv.name in _FIRST_WINS)
    missing = [i for i in ids if i not in chosen]
    if missing:
        raise ValueError(f"{src}: no prediction for instr_id {few(missing)}; the split has {len(ids)} instructions")
    if ignored:
        warnings.warn(
            f"{src}: {len(ignored)} entries not scored (extra or repeated ids, as {conv.name}'s evaluator): "
            f"{few(ignored)}",
            UserWarning,
            stacklevel=2,
        )

    preds = [chosen[i] for i in ids]
    navigation_only = conv.name != "duet" and not any(p.object_key for p in preds)
    if conv.name != "duet" and not navigation_only:
        for iid, p in zip(ids, preds):
            if not p.object_key:
                raise ValueError(
                    f"{src}: entry {p.entry} (instr_id {named(iid)}): no 'predObjId' (or 'pred_objid'), which "
                    f"the {conv.name} convention needs (the REVERIE evaluator raises KeyError)"
                )

    scans = [r["scan"] for r in records]
    env, refs = graphs.encode(scans, [r["path"] for r in records], names=[f"instr_id {i}, reference" for i in ids])
    try:
        _, qrys = graphs.encode(scans, [p.trajectory for p in preds])
    except ValueError:
        for iid, scan, p in zip(ids, scans, preds):
            index = graphs[scan].index
            for j, v in enumerate(p.trajectory):
                if v not in index:
                    raise ValueError(
                        f"{src}: entry {p.entry} (instr_id {named(iid)}): viewpoint {v!r} (trajectory, step {j}) "
                        f"is not in scan {scan!r}"
                    ) from None
        raise
    if strict:
        k = first_start_mismatch(refs, qrys)
        if k >= 0:
            raise ValueError(
                f"{src}: entry {preds[k].entry} (instr_id {named(ids[k])}): trajectory starts at "
                f"{preds[k].trajectory[0]!r}, but the reference starts at {records[k]['path'][0]!r} (strict)"
            )
    if conv.collapse_repeats:
        qrys = collapse_repeats(qrys)

    flat, base = goal_table(records, graphs, objects, "split")
    success, oracle = visibility(flat, base, qrys)
    extra: dict[str, Any] = {"success": success, "oracle_success": oracle}
    if not navigation_only:
        targets = [object_id(r["objId"], "", "objId") for r in records]
        extra["object_found"] = np.array([p.object_id == t for p, t in zip(preds, targets)], dtype=bool)

    start, goal = refs.first(), refs.last()
    shortest = graphs.pair_distances(env, start, goal)
    return MatchedEpisodes(
        ids=ids,
        scans=scans,
        env=env,
        references=refs,
        queries=qrys,
        shortest_distance=shortest,
        graphs=graphs,
        id_name="instr_id",
        extra=extra,
        notes=(
            (f"{src}: no entry has a 'predObjId' (or 'pred_objid'): scored navigation-only, without RGS and RGSPL",)
            if navigation_only
            else ()
        ),
    )


# --------------------------------------------------------------------------------------------
# the data set kind
# --------------------------------------------------------------------------------------------


def load_split_graphs(split, connectivity: PathLike) -> tuple[list[dict[str, Any]], GraphSet]:
    """A REVERIE split and the connectivity graphs of its scans.

    Parameters
    ----------
    split : str, os.PathLike or list
        The split file, or its parsed list.
    connectivity : str or os.PathLike
        The folder of ``<scan>_connectivity.json``.

    Returns
    -------
    entries : list of dict
        The split's entries (:func:`load_reverie`).
    graphs : GraphSet
        The graphs of its scans.

    Raises
    ------
    ValueError
        A malformed or empty split, an unknown scan, a viewpoint not in its scan (naming the split
        file and the entry), a malformed connectivity file.
    FileNotFoundError
        A missing split file or connectivity folder.
    """
    data, name = source(split)
    entries = _read_split(data, name, None)
    if not entries:
        raise ValueError(f"{name}: the split is empty")
    graphs = load_scan_graphs(connectivity, entries, lambda k: f"{name}: entry {k} (id {named(entries[k]['id'])})")
    return _read_split(data, name, graphs), graphs


class REVERIEBenchmark(Benchmark):
    """A REVERIE split with the graphs of its scans and the visible objects, ready to score agents.

    Parameters
    ----------
    split : str, os.PathLike or list
        The split file, or its parsed list.
    connectivity : str or os.PathLike
        The folder of ``<scan>_connectivity.json``.
    objects : VisibleObjects, str or os.PathLike
        The visible objects, or what :func:`load_objects` reads (only the split's scans are kept).

    Raises
    ------
    ValueError
        The errors of :func:`load_split_graphs` and :func:`load_objects`, a scan the boxes do not
        list, or a target object that no viewpoint of its scan sees (naming the split entry).
    FileNotFoundError
        A missing file or folder.
    """

    def __init__(self, split, connectivity, objects) -> None:
        self.entries, self.graphs = load_split_graphs(split, connectivity)
        self.records = instructions(self.entries)
        scans = {e["scan"] for e in self.entries}
        self.objects = objects if isinstance(objects, VisibleObjects) else load_objects(objects, scans=scans)
        name = Path(split).name if is_path(split) else "<input>"
        # checks every target against the boxes once (errors name the split entry)
        self._goals = goal_table(self.entries, self.graphs, self.objects, name)

    @property
    def n(self) -> int:
        return len(self.records)

    def match(self, predictions, *, convention: str | None = None, strict: bool = False) -> MatchedEpisodes:
        conv = self.kind.check_convention(convention)
        with routed(predictions, self.kind):
            return match_predictions(
                self.records, predictions, self.graphs, self.objects, convention=conv, strict=strict
            )

    def evaluate(self, matched: MatchedEpisodes, *, convention: str | None = None, **kwargs):
        conv = self.kind.check_convention(convention)
        return matched.evaluate(convention=conv, **kwargs)

    def baseline(self, n: int, *, seed: int = 0, convention: str | None = None, **kwargs) -> dict[str, float]:
        """The random walker (steps drawn from the split's reference step counts) with success and
        oracle success by visibility of the target from the walks' nodes. ``rgs`` / ``rgspl`` are
        not reported: a random walker predicts no object.

        Parameters
        ----------
        n : int
            Number of random walks, >= 1.
        seed : int, optional
            The walks depend only on the seed (default 0).
        convention : str, optional
            One of REVERIE's conventions (default ``"reverie"``).
        **kwargs
            Passed to :func:`navdtw.baseline.score_random_walks` (``threshold``, ``chunk``,
            ``workers``, ``progress``, ``metrics``).

        Returns
        -------
        dict[str, float]
            Metric name -> mean over the walks, rates as fractions.

        Raises
        ------
        ValueError, TypeError
            A convention that does not apply, or the bad options of
            :func:`navdtw.baseline.score_random_walks`.
        """
        conv = self.kind.check_convention(convention)
        flat, base = self._goals

        def inputs(walks: Paths, ref_of: np.ndarray) -> dict[str, np.ndarray]:
            success, oracle = visibility(flat, base[ref_of], walks)
            return {"success": success, "oracle_success": oracle}

        scans, refs = [e["scan"] for e in self.entries], [e["path"] for e in self.entries]
        return score_random_walks(self.graphs, scans, refs, n, seed=seed, convention=conv, inputs=inputs, **kwargs)


REVERIE = DatasetKind(
    "reverie",
    "REVERIE",
    (
        Option(
            "split",
            "the split: a JSON list of {id, path_id, scan, path, objId, instructions, ...}",
            shapes=("r2r-split", "rxr-guide"),
        ),
        Option("connectivity", "folder of <scan>_connectivity.json (Matterport3D navigation graphs)", kind="dir"),
        Option(
            "objects",
            "the object boxes: BBox_val_scans.json(.gz) ({'<scan>_<vp>': ...}) or the folder of BBox/<scan>_<vp>.json",
            kind="path",
        ),
    ),
    ("reverie", "duet", "paper"),
    "reverie",
    REVERIEBenchmark,
    id_name="instr_id",
    description="REVERIE (Qi et al. 2020): remote object grounding on Matterport3D graph paths",
    split_reader=SplitReader("split", split_index),
    predictions=("r2r-trajectories", "duet-trajectories", "reverie-trajectories"),
    id_shape=IdShape("<path_id>_<objId>_<k>", r"\d+_\d+_\d+", lambda i: i.split("_", 1)[0]),
)
