"""Readers and writers for VLN data files: R2R / R4R splits, R2R results (predictions), R2R-CE
episodes and ground truth, HA-VLN collision counts; and the split/prediction matcher that turns
them into node-index batches ready for scoring.

Every reader validates what it reads and names the bad entry: ``"R2R_val_unseen.json: entry 12
(path_id 4332): 'path' is empty"``. Malformed or truncated JSON raises ``ValueError`` with the
file name and json's line and column. Files ending in ``.gz`` (or starting with the gzip magic
bytes) are decompressed transparently. Readers that take ``path_or_list`` also accept the already
parsed JSON object (then messages say ``<input>``).
"""

from __future__ import annotations

import gzip
import json
import math
import numbers
import os
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Union

import numpy as np

from ._io import atomic_write_bytes
from .graphs import GraphSet
from .paths import Paths

__all__ = [
    "MatchedEpisodes",
    "instructions",
    "load_havln_collisions",
    "load_predictions",
    "load_r2r",
    "load_vlnce_episodes",
    "load_vlnce_gt",
    "match_predictions",
    "read_json",
    "write_predictions",
]

PathLike = Union[str, os.PathLike]
_INPUT = "<input>"


# --------------------------------------------------------------------------------------------
# JSON input
# --------------------------------------------------------------------------------------------


def _is_path(obj) -> bool:
    return isinstance(obj, (str, os.PathLike))


def read_text(path: PathLike) -> str:
    """The text of a (possibly gzipped) UTF-8 file; any decoding failure -> ``ValueError`` naming it."""
    path = Path(path)
    name = path.name
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except IsADirectoryError:
        raise ValueError(f"{path}: is a folder, not a JSON file") from None
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as exc:
            raise ValueError(f"{name}: corrupt or truncated gzip data ({exc})") from None
    try:
        return raw.decode("utf-8-sig")  # tolerate a byte-order mark
    except UnicodeDecodeError as exc:
        raise ValueError(f"{name}: not UTF-8 text (byte {exc.start})") from None


def read_json(path: PathLike) -> Any:
    """Parses a JSON (or gzipped JSON) file; any decoding failure -> ``ValueError`` naming it."""
    name = Path(path).name
    text = read_text(path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{name}: malformed JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None


def _source(path_or_obj) -> tuple:
    """(parsed data, name for messages)."""
    if _is_path(path_or_obj):
        return read_json(path_or_obj), Path(path_or_obj).name
    return path_or_obj, _INPUT


def _is_int(x) -> bool:
    return isinstance(x, numbers.Integral) and not isinstance(x, bool)


def _is_real(x) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


def _finite_real(x) -> bool:
    return _is_real(x) and math.isfinite(x)


def _list_of(data, source: str, what: str) -> list:
    if not isinstance(data, list):
        raise ValueError(f"{source}: expected a JSON list of {what}, got {type(data).__name__}")
    return data


# --------------------------------------------------------------------------------------------
# R2R / R4R splits
# --------------------------------------------------------------------------------------------


def load_r2r(path_or_list, *, graphs: GraphSet | None = None) -> list[dict[str, Any]]:
    """Reads an R2R (or R4R, RxR-like) split: a list of path entries.

    Each entry needs ``path_id`` (int or str, unique), ``scan`` (str), ``path`` (non-empty list of
    viewpoint ids) and either ``instructions`` (list of strings, R2R) or ``num_instructions``
    (int >= 0, the regenerated R4R files). ``distance`` (metres) and ``heading`` (radians) are
    checked to be finite numbers when present. Other keys are kept as they are.

    ``graphs``: a :class:`navdtw.graphs.GraphSet`; if given, every scan and viewpoint must exist.

    Returns a list of new dicts (shallow copies, ``path`` as a new list) in file order.
    """
    data, source = _source(path_or_list)
    data = _list_of(data, source, "paths")
    out: list[dict[str, Any]] = []
    seen: dict[Any, int] = {}
    for k, e in enumerate(data):
        if not isinstance(e, dict):
            raise ValueError(f"{source}: entry {k}: expected an object, got {type(e).__name__}")
        pid = e.get("path_id")
        where = f"{source}: entry {k} (path_id {pid})" if "path_id" in e else f"{source}: entry {k}"
        if "path_id" not in e:
            raise ValueError(f"{where}: missing 'path_id'")
        if not (_is_int(pid) or isinstance(pid, str)):
            raise ValueError(f"{where}: 'path_id' must be an integer or a string")
        if pid in seen:
            raise ValueError(f"{where}: duplicate path_id (also entry {seen[pid]})")
        seen[pid] = k
        scan = e.get("scan")
        if not isinstance(scan, str) or not scan:
            raise ValueError(f"{where}: 'scan' must be a non-empty string")
        path = e.get("path")
        if not isinstance(path, list):
            raise ValueError(f"{where}: 'path' must be a list of viewpoint ids")
        if not path:
            raise ValueError(f"{where}: 'path' is empty")
        for j, v in enumerate(path):
            if not isinstance(v, str):
                raise ValueError(f"{where}: path[{j}] must be a viewpoint id string, got {v!r}")
        if "instructions" in e:
            ins = e["instructions"]
            if not isinstance(ins, list) or not all(isinstance(s, str) for s in ins):
                raise ValueError(f"{where}: 'instructions' must be a list of strings")
        elif "num_instructions" in e:
            m = e["num_instructions"]
            if not _is_int(m) or m < 0:
                raise ValueError(f"{where}: 'num_instructions' must be an integer >= 0")
        else:
            raise ValueError(f"{where}: needs 'instructions' (list of strings) or 'num_instructions'")
        for key in ("distance", "heading"):
            if key in e and not _finite_real(e[key]):
                raise ValueError(f"{where}: {key!r} must be a finite number, got {e[key]!r}")
        if "distance" in e and e["distance"] < 0:
            raise ValueError(f"{where}: 'distance' must be >= 0, got {e['distance']}")
        if graphs is not None:
            if scan not in graphs:
                raise ValueError(f"{where}: unknown scan {scan!r}")
            index = graphs[scan].index
            for j, v in enumerate(path):
                if v not in index:
                    raise ValueError(f"{where}: path[{j}] = {v!r} is not a viewpoint of scan {scan!r}")
        rec = dict(e)
        rec["path"] = list(path)
        out.append(rec)
    return out


def instructions(split) -> list[dict[str, Any]]:
    """Expands a split (the output of :func:`load_r2r`, or a file name for it) into instruction
    records: one per instruction, ``instr_id = f"{path_id}_{k}"`` for ``k`` over ``instructions``
    (or ``range(num_instructions)``).

    Each record holds the path entry's fields except ``instructions`` / ``num_instructions``, plus
    ``instr_id``, ``instruction_index`` (k) and, when the texts are present, ``instruction``.
    """
    if _is_path(split):
        split = load_r2r(split)
    out: list[dict[str, Any]] = []
    for k, e in enumerate(split):
        if not isinstance(e, dict) or "path_id" not in e:
            raise ValueError(f"split entry {k}: not a path entry (use load_r2r to read the split)")
        texts = e.get("instructions")
        if texts is not None:
            count = len(texts)
        elif "num_instructions" in e:
            count = int(e["num_instructions"])
        else:
            raise ValueError(f"split entry {k} (path_id {e['path_id']}): needs 'instructions' or 'num_instructions'")
        base = {key: val for key, val in e.items() if key not in ("instructions", "num_instructions")}
        for j in range(count):
            rec = dict(base)
            rec["instr_id"] = f"{e['path_id']}_{j}"
            rec["instruction_index"] = j
            if texts is not None:
                rec["instruction"] = texts[j]
            out.append(rec)
    return out


# --------------------------------------------------------------------------------------------
# predictions (R2R results format)
# --------------------------------------------------------------------------------------------


def load_predictions(path_or_list) -> dict[str, list[str]]:
    """Reads R2R results: ``[{"instr_id": "<path_id>_<k>", "trajectory": [[viewpoint, heading,
    elevation], ...]}, ...]`` -> ``{instr_id: [viewpoint, ...]}`` in file order.

    Viewpoints are kept exactly as listed, including the repeats an agent writes while turning in
    place (:func:`match_predictions` can collapse them). A step may also be a bare viewpoint
    string. Integer ``instr_id`` values are turned into strings. Duplicated ``instr_id``, empty
    or malformed trajectories raise ``ValueError`` naming the entry.
    """
    data, source = _source(path_or_list)
    data = _list_of(data, source, "predictions")
    out: dict[str, list[str]] = {}
    first: dict[str, int] = {}
    for k, e in enumerate(data):
        if not isinstance(e, dict):
            raise ValueError(f"{source}: entry {k}: expected an object, got {type(e).__name__}")
        iid = e.get("instr_id")
        if not (isinstance(iid, str) or _is_int(iid)):
            raise ValueError(f"{source}: entry {k}: 'instr_id' must be a string, got {iid!r}")
        iid = str(iid)
        where = f"{source}: entry {k} (instr_id {iid})"
        if iid in first:
            raise ValueError(f"{where}: duplicate instr_id (also entry {first[iid]})")
        first[iid] = k
        traj = e.get("trajectory")
        if not isinstance(traj, list):
            raise ValueError(f"{where}: 'trajectory' must be a list of [viewpoint, heading, elevation]")
        if not traj:
            raise ValueError(f"{where}: trajectory is empty")
        vps = []
        for j, step in enumerate(traj):
            if isinstance(step, str):
                vps.append(step)
            elif isinstance(step, (list, tuple)) and step and isinstance(step[0], str):
                vps.append(step[0])
            else:
                raise ValueError(f"{where}: trajectory[{j}] must be [viewpoint, heading, elevation], got {step!r}")
        out[iid] = vps
    return out


def _steps_for_writing(traj, where: str) -> list:
    if isinstance(traj, str) or not isinstance(traj, (list, tuple)):
        raise ValueError(f"{where}: trajectory must be a list of viewpoints")
    if not traj:
        raise ValueError(f"{where}: trajectory is empty")
    steps = []
    for j, step in enumerate(traj):
        if isinstance(step, str):
            # heading / elevation unknown: written as 0.0 (the R2R evaluators read only step[0])
            steps.append([step, 0.0, 0.0])
        elif isinstance(step, (list, tuple)) and step and isinstance(step[0], str):
            rest = list(step[1:])
            if not all(_finite_real(x) for x in rest):
                raise ValueError(f"{where}: trajectory[{j}] has a non-numeric or non-finite heading/elevation")
            steps.append([step[0]] + [float(x) for x in rest])
        else:
            raise ValueError(f"{where}: trajectory[{j}] must be a viewpoint id or [viewpoint, heading, elevation]")
    return steps


def write_predictions(path: PathLike, predictions) -> None:
    """Writes predictions in the R2R results format, atomically.

    ``predictions``: a mapping ``instr_id -> trajectory`` where a trajectory is a list of viewpoint
    ids (written as ``[viewpoint, 0.0, 0.0]``) or of ``[viewpoint, heading, elevation]`` steps; or
    a list of ``{"instr_id", "trajectory"}`` records. The JSON goes to a temporary file in the
    target's folder that then replaces the target (``os.replace``), so readers never see a
    half-written file. A name ending in ``.gz`` is gzip-compressed.
    """
    path = Path(path)
    if isinstance(predictions, Mapping):
        items = list(predictions.items())
    else:
        items = []
        for k, e in enumerate(predictions):
            if not isinstance(e, Mapping) or "instr_id" not in e or "trajectory" not in e:
                raise ValueError(f"predictions[{k}]: expected {{'instr_id', 'trajectory'}}")
            items.append((e["instr_id"], e["trajectory"]))
    records = []
    seen = set()
    for k, (iid, traj) in enumerate(items):
        if not (isinstance(iid, str) or _is_int(iid)):
            raise ValueError(f"predictions[{k}]: instr_id must be a string, got {iid!r}")
        iid = str(iid)
        if iid in seen:
            raise ValueError(f"predictions[{k}]: duplicate instr_id {iid}")
        seen.add(iid)
        records.append({"instr_id": iid, "trajectory": _steps_for_writing(traj, f"predictions[{k}] ({iid})")})
    payload = json.dumps(records, allow_nan=False).encode("utf-8")
    if path.name.endswith(".gz"):
        payload = gzip.compress(payload, mtime=0)
    atomic_write_bytes(path, payload)


# --------------------------------------------------------------------------------------------
# R2R-CE (VLN-CE) and HA-VLN
# --------------------------------------------------------------------------------------------


def points_array(value, where: str, key: str) -> np.ndarray:
    """A non-empty, finite float64 [n, 3] array of positions, or a ValueError naming where/key."""
    try:
        arr = np.array(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{where}: {key!r} must be a list of [x, y, z] points") from None
    if arr.ndim != 2 or arr.shape[1] != 3 or arr.shape[0] == 0:
        raise ValueError(f"{where}: {key!r} must be a non-empty list of [x, y, z] points, got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{where}: {key!r} point {int(np.argmin(np.isfinite(arr).all(axis=1)))} is not finite")
    return arr


def load_vlnce_episodes(path) -> list[dict[str, Any]]:
    """Reads R2R-CE episodes (gzipped or plain JSON ``{"episodes": [...]}``).

    Returns the episodes in file order as new dicts, with ``reference_path`` a float64 ``[n, 3]``
    array (habitat coordinates, y up, metres) and an added ``scan`` taken from ``scene_id``
    (``"mp3d/<scan>/<scan>.glb"`` -> ``"<scan>"``) when present. ``episode_id`` must be unique.
    """
    data, source = _source(path)
    if not isinstance(data, dict) or not isinstance(data.get("episodes"), list):
        raise ValueError(f"{source}: expected an object with an 'episodes' list")
    out = []
    seen: dict[str, int] = {}
    for k, e in enumerate(data["episodes"]):
        if not isinstance(e, dict):
            raise ValueError(f"{source}: episode {k}: expected an object, got {type(e).__name__}")
        eid = e.get("episode_id")
        if not (_is_int(eid) or isinstance(eid, str)):
            raise ValueError(f"{source}: episode {k}: 'episode_id' must be an integer or a string")
        where = f"{source}: episode {k} (episode_id {eid})"
        if str(eid) in seen:
            raise ValueError(f"{where}: duplicate episode_id (also episode {seen[str(eid)]})")
        seen[str(eid)] = k
        if "reference_path" not in e:
            raise ValueError(f"{where}: missing 'reference_path'")
        rec = dict(e)
        rec["reference_path"] = points_array(e["reference_path"], where, "reference_path")
        scene = e.get("scene_id")
        if isinstance(scene, str) and scene:
            rec.setdefault("scan", Path(scene).stem)
        out.append(rec)
    return out


def load_vlnce_gt(path) -> dict[str, dict[str, Any]]:
    """Reads an R2R-CE ``*_gt.json(.gz)``: ``{str(episode_id): {"locations", "actions",
    "forward_steps"}}`` -> the same keys with ``locations`` a float64 ``[n, 3]`` array (dense
    ground-truth positions, about 0.25 m apart), ``actions`` an int64 array (habitat action ids:
    0 stop, 1 forward, 2 left, 3 right) and ``forward_steps`` an int.
    """
    data, source = _source(path)
    if not isinstance(data, dict):
        raise ValueError(f"{source}: expected an object keyed by episode id, got {type(data).__name__}")
    out: dict[str, dict[str, Any]] = {}
    for k, (eid, e) in enumerate(data.items()):
        where = f"{source}: entry {k} (episode_id {eid})"
        if not isinstance(e, dict):
            raise ValueError(f"{where}: expected an object, got {type(e).__name__}")
        if "locations" not in e:
            raise ValueError(f"{where}: missing 'locations'")
        rec = dict(e)
        rec["locations"] = points_array(e["locations"], where, "locations")
        if "actions" in e:
            acts = e["actions"]
            if not isinstance(acts, list) or not all(_is_int(a) and a >= 0 for a in acts):
                raise ValueError(f"{where}: 'actions' must be a list of non-negative integers")
            rec["actions"] = np.array(acts, dtype=np.int64)
        if "forward_steps" in e:
            fs = e["forward_steps"]
            if not _is_int(fs) or fs < 0:
                raise ValueError(f"{where}: 'forward_steps' must be an integer >= 0")
            rec["forward_steps"] = int(fs)
        out[str(eid)] = rec
    return out


def load_havln_collisions(path) -> dict[str, int]:
    """Reads HA-VLN per-episode baseline collision counts ``{episode_id: count}`` -> ``{str: int}``.

    Counts must be non-negative integers (booleans and floats are refused).
    """
    data, source = _source(path)
    if not isinstance(data, dict):
        raise ValueError(f"{source}: expected an object keyed by episode id, got {type(data).__name__}")
    out: dict[str, int] = {}
    for k, (eid, n) in enumerate(data.items()):
        if not _is_int(n) or n < 0:
            raise ValueError(
                f"{source}: entry {k} (episode_id {eid}): collision count must be an integer >= 0, got {n!r}"
            )
        out[str(eid)] = int(n)
    return out


# --------------------------------------------------------------------------------------------
# matching a split with predictions
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MatchedEpisodes:
    """A split matched with its predictions, encoded for scoring (one row per instruction).

    Attributes
    ----------
    ids: instruction ids, in split order.
    scans: scan id of every episode.
    env: int64 ``[B]`` environment index into ``graphs.scans`` / ``graphs.distances``.
    references: node-index :class:`navdtw.Paths` of the reference paths.
    queries: node-index :class:`navdtw.Paths` of the predicted trajectories.
    shortest_distance: float64 ``[B]`` shortest-path distance (metres) from the reference start to
        the reference goal (the SPL denominator of the R2R evaluator); ``inf`` if unreachable.
    graphs: the :class:`GraphSet` the indices refer to.
    """

    ids: list[str]
    scans: list[str]
    env: np.ndarray
    references: Paths
    queries: Paths
    shortest_distance: np.ndarray
    graphs: GraphSet

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def distances(self) -> list[np.ndarray]:
        """The distance matrices to pass with ``env`` to the batch scorers."""
        return self.graphs.distances


def _few(items: Sequence[str]) -> str:
    shown = ", ".join(items[:5])
    return shown + (f", ... ({len(items)} in all)" if len(items) > 5 else f" ({len(items)} in all)")


def _collapse(path: list[str]) -> list[str]:
    return [v for j, v in enumerate(path) if j == 0 or v != path[j - 1]]


def match_predictions(
    split_instructions, predictions, graphs: GraphSet, *, strict: bool = False, collapse_repeats: bool = True
) -> MatchedEpisodes:
    """Pairs every instruction of a split with its predicted trajectory and encodes both.

    ``split_instructions``: instruction records (from :func:`instructions`); a split of path
    entries (from :func:`load_r2r`) or a split file name is expanded first. ``predictions``: a
    dict from :func:`load_predictions`, or a results file name / parsed list.

    Every instruction must have a prediction and every prediction an instruction: otherwise a
    ``ValueError`` lists up to 5 missing / extra ids (nothing is dropped silently). Unknown scans or
    viewpoints raise ``ValueError`` naming the instr_id.

    ``strict=True`` additionally requires each trajectory to start at its reference's start
    viewpoint (the R2R evaluator asserts this). ``collapse_repeats`` (default True) merges
    consecutive repeats of a viewpoint in the trajectory (an agent turning in place writes one
    step per turn); they would otherwise add DTW cost and change the trajectory's point count,
    although they do not move the agent. Path lengths are unaffected either way.
    """
    if _is_path(split_instructions):
        split_instructions = load_r2r(split_instructions)
    records = list(split_instructions)
    if records and "instr_id" not in records[0]:
        records = instructions(records)
    if not records:
        raise ValueError("match_predictions: the split is empty")
    # Name the predictions file in every message about a prediction (the user's file to fix).
    src = Path(predictions).name if _is_path(predictions) else "prediction"
    if not isinstance(predictions, Mapping):
        predictions = load_predictions(predictions)
    else:
        keyed: dict[str, Any] = {}
        for key, traj in predictions.items():
            if str(key) in keyed:
                raise ValueError(f"match_predictions: instr_id {key} appears twice (as {key!r} and a string)")
            keyed[str(key)] = traj
        predictions = keyed

    ids: list[str] = []
    seen = set()
    for k, r in enumerate(records):
        if not isinstance(r, dict) or "instr_id" not in r or "scan" not in r or "path" not in r:
            raise ValueError(f"split record {k}: needs 'instr_id', 'scan' and 'path'")
        iid = str(r["instr_id"])
        if iid in seen:
            raise ValueError(f"split record {k}: duplicate instr_id {iid}")
        seen.add(iid)
        ids.append(iid)
    missing = [i for i in ids if i not in predictions]
    extra = [str(i) for i in predictions if str(i) not in seen]
    if missing or extra:
        parts = []
        if missing:
            parts.append(f"no prediction for instr_id {_few(missing)}")
        if extra:
            parts.append(f"predictions for instr_id not in the split: {_few(extra)}")
        raise ValueError("match_predictions: " + "; ".join(parts))

    scans = [r["scan"] for r in records]
    queries_vp = []
    for iid in ids:
        q = predictions[iid]
        if isinstance(q, str) or not isinstance(q, (list, tuple)):
            raise ValueError(f"{src} {iid}: trajectory must be a list of viewpoint ids")
        if not q:
            raise ValueError(f"{src} {iid}: trajectory is empty")
        q = list(q)
        queries_vp.append(_collapse(q) if collapse_repeats else q)
    env, refs = graphs.encode(scans, [r["path"] for r in records], names=[f"instr_id {i}, reference" for i in ids])
    _env_q, qrys = graphs.encode(scans, queries_vp, names=[f"instr_id {i}, {src}" for i in ids])

    if strict:
        bad = refs.first() != qrys.first()
        if bad.any():
            k = int(np.argmax(bad))
            raise ValueError(
                f"{src} {ids[k]}: trajectory starts at {queries_vp[k][0]!r}, "
                f"but the reference starts at {records[k]['path'][0]!r}"
            )

    start, goal = refs.first(), refs.last()
    shortest = np.empty(len(ids), dtype=np.float64)
    for k in np.unique(env):
        sel = env == k
        shortest[sel] = graphs.graphs[int(k)].distances[start[sel], goal[sel]]
    return MatchedEpisodes(
        ids=ids, scans=scans, env=env, references=refs, queries=qrys, shortest_distance=shortest, graphs=graphs
    )
