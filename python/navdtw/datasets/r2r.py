"""R2R and R4R: splits, R2R results files (predictions), and matching the two for scoring.

Evaluators reproduced (``navdtw.CONVENTIONS``): ``r2r`` (Matterport3DSimulator
``tasks/R2R/eval.py``, the default), ``r4r`` (google-research ``r4r``), ``duet`` (VLN-DUET / HAMT)
and navdtw's ``paper`` (Ilharco et al. 2019). All of them score node paths over the Matterport3D
connectivity graphs (:mod:`navdtw.datasets.matterport`).

* Split: ``[{"path_id", "scan", "path": [viewpoint, ...], "heading", "distance", "instructions":
  [...]}]`` (R2R) or ``"num_instructions"`` instead of the texts (the regenerated R4R
  ``*.paths.json`` files). Instruction ``k`` of a path has ``instr_id = f"{path_id}_{k}"``.
* Predictions: ``[{"instr_id", "trajectory": [[viewpoint, heading, elevation], ...]}]``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from .. import paths
from .._messages import few, named
from .._typing import PathLike
from ..baseline import score_random_walks
from ..graphs import GraphSet
from ..paths import Paths, first_start_mismatch
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
from ._r2r_predictions import load_predictions, read_predictions, write_predictions
from .base import Benchmark, DatasetKind, IdShape, Option, SplitReader
from .matterport import load_scan_graphs
from .shapes import other_split, routed

__all__ = [
    "CONVENTIONS",
    "DEFAULT_CONVENTION",
    "MAX_INSTRUCTIONS",
    "R2R",
    "R4R",
    "R2RBenchmark",
    "instructions",
    "load_matched",
    "load_predictions",
    "load_r2r",
    "load_split_graphs",
    "match_predictions",
    "random_baseline",
    "write_predictions",
]

#: The conventions (``navdtw.CONVENTIONS``) whose evaluators read these files.
CONVENTIONS: tuple[str, ...] = ("r2r", "r4r", "duet", "paper")
#: The convention the command line uses for R2R / R4R unless told otherwise.
DEFAULT_CONVENTION = "r2r"
#: The R2R evaluator scores instructions 0..2 of every path only (Matterport3DSimulator
#: ``tasks/R2R/eval.py``, ``Evaluation.__init__``: ``'%d_%d' % (path_id, i) for i in range(3)``).
R2R_EVALUATOR_INSTRUCTIONS = 3
#: The most instructions one path entry may have (``num_instructions``): far above any data set's
#: (R2R has 3 or 4, R4R's joined paths a few more), low enough that a corrupt count cannot make
#: :func:`instructions` build billions of records.
MAX_INSTRUCTIONS = 1000
#: Which instructions a matcher scores: ``"all"`` (navdtw: every instruction, exactly one
#: prediction each) or ``"r2r"`` (the R2R evaluator's id set, first of duplicates, extra ignored).
ID_SETS = ("all", "r2r")


# --------------------------------------------------------------------------------------------
# R2R / R4R splits
# --------------------------------------------------------------------------------------------


def load_r2r(path_or_list, *, graphs: GraphSet | None = None) -> list[dict[str, Any]]:
    """Reads an R2R (or R4R, RxR-like) split: a list of path entries.

    Each entry needs ``path_id`` (int or str, unique), ``scan`` (str), ``path`` (non-empty list of
    viewpoint ids) and either ``instructions`` (list of strings, R2R) or ``num_instructions``
    (int >= 0, the regenerated R4R files). ``distance`` (metres) and ``heading`` (radians) are
    checked to be finite numbers when present. Other keys are kept as they are.

    Parameters
    ----------
    path_or_list : str, os.PathLike or list
        The split file (gzipped or not), or its parsed list.
    graphs : GraphSet, optional
        If given, every scan and viewpoint must exist in it.

    Returns
    -------
    list of dict
        New dicts (shallow copies, ``path`` as a new list), in file order.

    Raises
    ------
    ValueError
        A malformed file or entry (naming the file and the entry: a missing or duplicate
        ``path_id``, an empty ``path``, a non-finite ``distance``), or, with ``graphs``, an
        unknown scan or viewpoint.
    FileNotFoundError
        A file name that does not exist.
    """
    data, name = source(path_or_list)
    return _read_split(data, name, graphs)


def _read_split(data, name: str, graphs: GraphSet | None) -> list[dict[str, Any]]:
    data = list_of(data, name, "paths")
    out: list[dict[str, Any]] = []
    seen: dict[Any, int] = {}
    for k, e in enumerate(data):
        if not isinstance(e, dict):
            raise ValueError(f"{name}: entry {k}: expected an object, got {type(e).__name__}")
        pid = e.get("path_id")
        where = f"{name}: entry {k} (path_id {named(pid)})" if "path_id" in e else f"{name}: entry {k}"
        if "path_id" not in e:
            raise ValueError(f"{where}: missing 'path_id'")
        if not (is_int(pid) or isinstance(pid, str)):
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
            if not is_int(m) or not 0 <= m <= MAX_INSTRUCTIONS:
                raise ValueError(
                    f"{where}: 'num_instructions' must be an integer in [0, {MAX_INSTRUCTIONS}], got {named(m)}"
                )
        else:
            raise ValueError(f"{where}: needs 'instructions' (list of strings) or 'num_instructions'")
        for key in ("distance", "heading"):
            if key in e and not finite_real(e[key]):
                raise ValueError(f"{where}: {key!r} must be a finite number, got {e[key]!r}")
        if "distance" in e and e["distance"] < 0:
            raise ValueError(f"{where}: 'distance' must be >= 0, got {e['distance']}")
        if graphs is not None:
            check_viewpoints(graphs, scan, {"path": path}, where)
        rec = dict(e)
        rec["path"] = list(path)
        out.append(rec)
    return out


def instructions(split) -> list[dict[str, Any]]:
    """Expands a split (the output of :func:`~navdtw.datasets.load_r2r`, or a file name for it) into instruction
    records: one per instruction, ``instr_id = f"{path_id}_{k}"`` for ``k`` over ``instructions``
    (or ``range(num_instructions)``).

    Each record holds the path entry's fields except ``instructions`` / ``num_instructions``, plus
    ``instr_id``, ``instruction_index`` (k) and, when the texts are present, ``instruction``.

    Parameters
    ----------
    split : str, os.PathLike or list of dict
        A split file name, or path entries as :func:`~navdtw.datasets.load_r2r` returns them.

    Returns
    -------
    list of dict
        One record per instruction, in split order.

    Raises
    ------
    ValueError
        A malformed split file, or an entry without ``path_id`` or without ``instructions`` /
        ``num_instructions``; JSON that cannot be decoded.
    FileNotFoundError
        A file name that does not exist.
    """
    if is_path(split):
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
            where = f"split entry {k} (path_id {named(e['path_id'])})"
            raise ValueError(f"{where}: needs 'instructions' or 'num_instructions'")
        base = {key: val for key, val in e.items() if key not in ("instructions", "num_instructions")}
        for j in range(count):
            rec = dict(base)
            rec["instr_id"] = f"{e['path_id']}_{j}"
            rec["instruction_index"] = j
            if texts is not None:
                rec["instruction"] = texts[j]
            out.append(rec)
    return out


def split_index(document: Document, kind: str = "r2r") -> SplitIndex | None:
    """The index of an R2R-format split (R2R, R4R): one unit per path entry, its instructions'
    ids ``<path_id>_<k>`` (the evaluator runs a path's instructions one after the other).

    Reads what the index needs: each entry's ``path_id`` and ``instructions`` (or
    ``num_instructions``), and its ``scan`` when present; the paths themselves may be withheld
    (a test split).

    Parameters
    ----------
    document : Document
        The file, read (:func:`~navdtw.datasets._common.read_document`).
    kind : str, optional
        The kind reading it, recorded in the index.

    Returns
    -------
    SplitIndex or None
        The index; None when the file is not a list of path entries (another kind's form:
        REVERIE's entries, with their target object, are REVERIE's).

    Raises
    ------
    ValueError
        An entry without ``path_id`` and ``instructions`` (naming the file and the entry), or an
        id twice.
    """
    data, name = document.data, document.name
    first = data[0] if isinstance(data, list) and data else None
    if not (isinstance(first, dict) and "path_id" in first and "objId" not in first):
        return None
    if "instructions" not in first and "num_instructions" not in first:
        return None
    units, scans, paths = [], [], []
    for k, e in enumerate(data):
        count = _instruction_count(e) if isinstance(e, dict) and "path_id" in e else None
        if count is None:
            raise ValueError(f"{name}: entry {k} has no 'path_id' with 'instructions' (or 'num_instructions')")
        unit = tuple(f"{e['path_id']}_{j}" for j in range(count))
        units.append(unit)
        scans += [str(e.get("scan", ""))] * count
        paths += [str(e["path_id"])] * count
    return make_split_index(document, kind, units, entries=data, scans=scans, paths=paths)


def _instruction_count(entry: Mapping[str, Any]) -> int | None:
    """How many instructions a path entry has, or None when it does not say."""
    if isinstance(entry.get("instructions"), list):
        return len(entry["instructions"])
    m = entry.get("num_instructions")
    return m if is_int(m) and 0 <= m <= MAX_INSTRUCTIONS else None


# --------------------------------------------------------------------------------------------
# matching a split with predictions
# --------------------------------------------------------------------------------------------


def load_split_graphs(split, connectivity: PathLike) -> tuple[list[dict[str, Any]], GraphSet]:
    """Reads a split and the connectivity graphs of its scans: ``(entries, graphs)``.

    ``split``: a split file (or parsed list) as :func:`~navdtw.datasets.load_r2r` reads it; ``connectivity``: the
    folder of ``<scan>_connectivity.json``. Only the split's scans are loaded, in order of first
    appearance (environment ``k`` is the ``k``-th scan met). An empty split, a scan without a
    connectivity file or a viewpoint that is not in its scan raise ``ValueError`` naming the split
    file and entry.

    Parameters
    ----------
    split : str, os.PathLike or list
        The split file, or its parsed list.
    connectivity : str or os.PathLike
        The folder of ``<scan>_connectivity.json``.

    Returns
    -------
    entries : list of dict
        The split's path entries (:func:`~navdtw.datasets.load_r2r`).
    graphs : GraphSet
        The graphs of its scans.

    Raises
    ------
    ValueError
        A malformed or empty split, a scan without a connectivity file, a viewpoint not in its
        scan (naming the split file and the entry), a malformed connectivity file.
    FileNotFoundError
        A missing split file or connectivity folder.
    """
    data, name = source(split)
    entries = _read_split(data, name, None)
    if not entries:
        raise ValueError(f"{name}: the split is empty")
    graphs = load_scan_graphs(
        connectivity, entries, lambda k: f"{name}: entry {k} (path_id {named(entries[k]['path_id'])})"
    )
    return _read_split(data, name, graphs), graphs  # names viewpoints that are not in their scan


def _split_ids(records: list) -> list[str]:
    """The instruction ids of split records, in order, checked: each record has what matching
    needs, and no id is there twice."""
    ids: list[str] = []
    seen = set()
    for k, r in enumerate(records):
        if not isinstance(r, dict) or "instr_id" not in r or "scan" not in r or "path" not in r:
            raise ValueError(f"split record {k}: needs 'instr_id', 'scan' and 'path'")
        iid = str(r["instr_id"])
        if iid in seen:
            raise ValueError(f"split record {k}: duplicate instr_id {named(iid)}")
        seen.add(iid)
        ids.append(iid)
    return ids


def _r2r_id_set(records: list, ids: list[str], predictions, dropped: list[str]):
    """``(records, ids, left_out, notes)`` under ``id_set="r2r"``: the instructions the R2R
    evaluator scores (0..2 of each path), the others left out, and the notes saying what was left
    out, which predictions were ignored and which duplicates were dropped (``dropped``)."""
    keep = [_instruction_index(r, k) < R2R_EVALUATOR_INSTRUCTIONS for k, r in enumerate(records)]
    left_out = [i for i, kept in zip(ids, keep) if not kept]
    records = [r for r, kept in zip(records, keep) if kept]
    ids = [i for i, kept in zip(ids, keep) if kept]
    scored = set(ids)
    ignored = [i for i in predictions if i not in scored]
    notes = []
    if left_out:
        notes.append(
            f"r2r: the R2R evaluator scores instructions 0..{R2R_EVALUATOR_INSTRUCTIONS - 1} of each path "
            f"only; left out {few(left_out)}"
        )
    if ignored:
        notes.append(f"r2r: ignored the predictions of ids the R2R evaluator does not score: {few(ignored)}")
    if dropped:
        notes.append(f"r2r: kept the first entry of duplicated ids (as the R2R evaluator), ignored {few(dropped)}")
    return records, ids, left_out, notes


def match_predictions(
    split_instructions,
    predictions,
    graphs: GraphSet,
    *,
    strict: bool = False,
    collapse_repeats: bool = True,
    id_set: str = "all",
    name: str | None = None,
    partial: bool = False,
) -> MatchedEpisodes:
    """Pairs every instruction of a split with its predicted trajectory and encodes both.

    ``split_instructions``: instruction records (from :func:`instructions`); a split of path
    entries (from :func:`~navdtw.datasets.load_r2r`) or a split file name is expanded first. ``predictions``: a
    dict from :func:`load_predictions`, or a results file name / parsed list.

    Every instruction must have a prediction and every prediction an instruction: otherwise a
    ``ValueError`` names the first extra entry of the predictions and lists up to 5 missing /
    extra ids (nothing is dropped silently). Errors about a prediction start with the predictions
    file's name (``name`` if given, ``predictions`` for a dict) and name its entry: ``"results.json: entry 2
    (instr_id 2_0): unknown viewpoint 'abc' (trajectory[1]) in scan 'zsNo4HB9uLZ'"``.

    ``strict=True`` additionally requires each trajectory to start at its reference's start
    viewpoint (the R2R evaluator asserts this). ``collapse_repeats`` (default True) merges
    consecutive repeats of a viewpoint in the trajectory (an agent turning in place writes one
    step per turn); they would otherwise add DTW cost and change the trajectory's point count,
    although they do not move the agent. Path lengths are unaffected either way.

    ``id_set="r2r"`` pairs them as the R2R evaluator does (``Evaluation.__init__`` / ``score`` of
    Matterport3DSimulator ``tasks/R2R/eval.py``): only instructions 0..2 of each path are scored
    (the others are listed in ``left_out``), predictions for any other id are ignored, the first
    entry of a duplicated id is kept; a missing id is still an error. ``notes`` says what was
    left out or ignored.

    Parameters
    ----------
    split_instructions : str, os.PathLike or list of dict
        Instruction records (:func:`instructions`), path entries (:func:`~navdtw.datasets.load_r2r`)
        or a split file name.
    predictions : dict, str, os.PathLike or list
        ``{instr_id: viewpoints}`` (:func:`load_predictions`), or a results file name or parsed list.
    graphs : GraphSet
        The graphs of the split's scans.
    strict : bool, optional
        Require every trajectory to start at its reference's start (default False).
    collapse_repeats : bool, optional
        Merge consecutive repeats of a viewpoint in the trajectories (default True).
    id_set : str, optional
        ``"all"`` (default) or ``"r2r"``.
    name : str, optional
        The predictions' name in messages (default the file name, or ``predictions``).
    partial : bool, optional
        Match the instructions that have a prediction and leave the others (an evaluation still
        running; default False: a missing prediction is an error).

    Returns
    -------
    MatchedEpisodes
        With ``id_name="instr_id"``, node paths over ``graphs`` and ``shortest_distance`` the
        start-to-goal distance of each reference (the R2R evaluator's l).

    Raises
    ------
    ValueError
        An unknown ``id_set``, an empty split, a malformed or duplicated record, a prediction
        without an instruction or an instruction without a prediction, an empty trajectory, an
        unknown viewpoint, or (``strict``) a trajectory that starts elsewhere; each naming the file
        and the entry.
    FileNotFoundError
        A file name that does not exist.
    """
    if id_set not in ID_SETS:
        raise ValueError(f"id_set must be one of {', '.join(ID_SETS)}, got {id_set!r}")
    if is_path(split_instructions):
        split_instructions = load_r2r(split_instructions)
    records = list(split_instructions)
    if records and "instr_id" not in records[0]:
        records = instructions(records)
    if not records:
        raise ValueError("match_predictions: the split is empty")
    # Name the predictions file in every message about a prediction (the user's file to fix).
    src = name or (Path(predictions).name if is_path(predictions) else "predictions")
    dropped: list[str] = []
    if not isinstance(predictions, Mapping):
        data, file_name = source(predictions)
        predictions, entry, dropped = read_predictions(data, file_name, "first" if id_set == "r2r" else "error")
    else:
        keyed: dict[str, Any] = {}
        for key, traj in predictions.items():
            if str(key) in keyed:
                raise ValueError(f"{src}: instr_id {named(key)} appears twice (as {key!r} and a string)")
            keyed[str(key)] = traj
        predictions = keyed
        entry = {iid: k for k, iid in enumerate(predictions)}

    def where(iid: str) -> str:
        return f"{src}: entry {entry[iid]} (instr_id {named(iid)})"

    ids = _split_ids(records)
    wrong = other_split(src, list(predictions), "the split", ids, "instr_id")
    if wrong:
        raise ValueError(wrong)
    notes: list[str] = []
    left_out: list[str] = []
    if id_set == "r2r":
        records, ids, left_out, notes = _r2r_id_set(records, ids, predictions, dropped)
    else:
        seen = set(ids)
        extra = [i for i in predictions if i not in seen]
        if extra:
            more = f"; {len(extra)} predictions have no instruction: {few(extra)}" if len(extra) > 1 else ""
            raise ValueError(f"{where(extra[0])}: no such instruction in the split{more}")
    missing = [i for i in ids if i not in predictions]
    if missing and partial:
        records = [r for r, i in zip(records, ids) if i in predictions]
        ids = [i for i in ids if i in predictions]
    elif missing:
        raise ValueError(f"{src}: no prediction for instr_id {few(missing)}; the split has {len(ids)} instructions")

    scans = [r["scan"] for r in records]
    queries_vp = []
    for iid in ids:
        q = predictions[iid]
        if isinstance(q, str) or not isinstance(q, (list, tuple)):
            raise ValueError(f"{where(iid)}: trajectory must be a list of viewpoint ids")
        if not q:
            raise ValueError(f"{where(iid)}: trajectory is empty")
        queries_vp.append(list(q))
    env, refs = graphs.encode(scans, [r["path"] for r in records], names=[f"instr_id {i}, reference" for i in ids])
    try:
        _env_q, qrys = graphs.encode(scans, queries_vp, names=[f"instr_id {i}, {src}" for i in ids])
    except ValueError:
        for iid, scan, q in zip(ids, scans, queries_vp):
            index = graphs[scan].index
            for j, v in enumerate(q):
                if not isinstance(v, str) or v not in index:
                    raise ValueError(
                        f"{where(iid)}: unknown viewpoint {v!r} (trajectory[{j}]) in scan {scan!r}"
                    ) from None
        raise
    if collapse_repeats:
        qrys = paths.collapse_repeats(qrys)
    if strict:
        k = first_start_mismatch(refs, qrys)
        if k >= 0:
            raise ValueError(
                f"{where(ids[k])}: trajectory starts at {queries_vp[k][0]!r}, "
                f"but the reference starts at {records[k]['path'][0]!r} (strict)"
            )

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
        left_out=tuple(left_out),
        notes=tuple(notes),
    )


def _instruction_index(record, k: int) -> int:
    """Instruction ``k`` of its path: ``instruction_index`` (from :func:`instructions`), else the
    number after the last ``_`` of ``instr_id``."""
    if "instruction_index" in record:
        return int(record["instruction_index"])
    try:
        return int(str(record["instr_id"]).rsplit("_", 1)[1])
    except (IndexError, ValueError):
        raise ValueError(
            f"split record {k}: instr_id {named(record['instr_id'])} is not '<path_id>_<k>' (the r2r id set needs k)"
        ) from None


def load_matched(
    split,
    connectivity: PathLike,
    predictions,
    *,
    strict: bool = False,
    collapse_repeats: bool = True,
    id_set: str = "all",
) -> MatchedEpisodes:
    """Everything the scorer needs from R2R / R4R files: reads the split, the graphs of its scans
    (:func:`load_split_graphs`) and the predictions, and matches them (:func:`match_predictions`).

    Parameters
    ----------
    split : str, os.PathLike or list
        The split file, or its parsed list.
    connectivity : str or os.PathLike
        The folder of ``<scan>_connectivity.json``.
    predictions : dict, str, os.PathLike or list
        As :func:`match_predictions`.
    strict, collapse_repeats : bool, optional
        As :func:`match_predictions` (defaults False, True).
    id_set : str, optional
        ``"all"`` (default) or ``"r2r"``.

    Returns
    -------
    MatchedEpisodes
        The episodes to score.

    Raises
    ------
    ValueError
        The errors of :func:`load_split_graphs` and :func:`match_predictions`, naming the file and
        the entry.
    FileNotFoundError
        A missing file or folder.
    """
    entries, graphs = load_split_graphs(split, connectivity)
    return match_predictions(
        instructions(entries), predictions, graphs, strict=strict, collapse_repeats=collapse_repeats, id_set=id_set
    )


def random_baseline(
    split,
    graphs: GraphSet,
    n: int = 1_000_000,
    *,
    seed: int = 0,
    threshold: float = 3.0,
    convention="paper",
    chunk: int = 250_000,
    progress: bool = True,
    workers: int = -1,
    metrics: Iterable[str] | None = None,
    inputs: Callable[[Paths, np.ndarray], dict[str, np.ndarray]] | None = None,
) -> dict[str, float]:
    """Scores ``n`` random walks against an R2R-format split's references with every metric
    (``navdtw.random_baseline``): the nDTW paper's random agent (:mod:`navdtw.baseline`).

    Parameters
    ----------
    split:
        path to an R2R / R4R JSON split, or its loaded list of entries (:func:`~navdtw.datasets.load_r2r`).
    graphs:
        a :class:`navdtw.graphs.GraphSet` holding the split's scans (``navdtw.load_connectivity``).
    n:
        number of random trajectories (default one million, as the paper).
    seed:
        walks depend only on (seed, walk index): same seed -> identical numbers.
    threshold, convention:
        as :func:`navdtw.evaluate` (default 3.0 m, ``"paper"``).
    chunk:
        walks scored per step; bounds memory (about 1 KB per walk).
    progress:
        show a tqdm bar when there is more than one chunk and tqdm is installed.
    workers:
        threads (-1 = all cores); the numbers do not depend on it.
    metrics:
        names to compute (default: every metric that applies to node paths and the ``inputs``).
    inputs:
        optional ``f(walks, ref_of) -> {name: array}``: the per-walk extra inputs of
        :func:`navdtw.evaluate` for a chunk of walks (node :class:`navdtw.Paths`, before any
        collapsing) and the split entry each walk serves, e.g. REVERIE's ``success`` /
        ``oracle_success``.

    Returns
    -------
    dict mapping metric names (``pl, ne, one, sr, osr, spl, sed, cls, ad, md, dtw, ndtw, sdtw``) to
    means over the walks, rates as fractions (not percent).

    Raises
    ------
    ValueError
        for a malformed split (naming the file and entry), an unknown scan or viewpoint, and the
        bad options of :func:`navdtw.baseline.score_random_walks`.
    TypeError
        when ``graphs`` is not a :class:`navdtw.graphs.GraphSet`.
    """
    # A graphs argument of the wrong type is reported by score_random_walks, after the options.
    entries = load_r2r(split, graphs=graphs if isinstance(graphs, GraphSet) else None)
    return score_random_walks(
        graphs,
        [e["scan"] for e in entries],
        [e["path"] for e in entries],
        n,
        seed=seed,
        threshold=threshold,
        convention=convention,
        chunk=chunk,
        progress=progress,
        workers=workers,
        metrics=metrics,
        inputs=inputs,
    )


class R2RBenchmark(Benchmark):
    """An R2R-format split (R2R, R4R) with the graphs of its scans, ready to score agents.

    Parameters
    ----------
    split : str, os.PathLike or list
        The split file, or its parsed list.
    connectivity : str or os.PathLike
        The folder of ``<scan>_connectivity.json``.

    Raises
    ------
    ValueError, FileNotFoundError
        As :func:`load_split_graphs`.
    """

    def __init__(self, split, connectivity) -> None:
        self.entries, self.graphs = load_split_graphs(split, connectivity)
        self.records = instructions(self.entries)
        if not self.records:
            name = Path(split).name if is_path(split) else "<input>"
            raise ValueError(f"{name}: no instructions (every path has 'num_instructions' 0 or no 'instructions')")

    @property
    def n(self) -> int:
        return len(self.records)

    matches_partial = True

    def match(
        self, predictions, *, convention: str | None = None, strict: bool = False, partial: bool = False
    ) -> MatchedEpisodes:
        """Reads ``predictions`` and pairs them with the split's instructions as ``convention``'s
        evaluator does (:meth:`Benchmark.match`).

        Parameters
        ----------
        predictions : str, os.PathLike or list
            A predictions file, or its parsed content.
        convention : str, optional
            One of the kind's conventions (default: its default convention).
        strict : bool, optional
            Refuse a trajectory that does not start at its reference's start.
        partial : bool, optional
            Match the instructions that have a prediction and leave the others (an evaluation still
            running: ``navdtw watch``; default False: a missing prediction is an error).

        Returns
        -------
        MatchedEpisodes
            The instructions to score.

        Raises
        ------
        ValueError
            Bad input, naming the file and the entry; a convention the kind does not name.
        """
        from ..metrics import CONVENTIONS as ALL

        conv = ALL[self.kind.check_convention(convention)]
        with routed(predictions, self.kind):
            return match_predictions(
                self.records,
                predictions,
                self.graphs,
                strict=strict,
                collapse_repeats=conv.collapse_repeats,
                id_set="r2r" if conv.name == "r2r" else "all",
                partial=partial,
            )

    def baseline(self, n: int, *, seed: int = 0, convention: str | None = None, **kwargs) -> dict[str, float]:
        conv = self.kind.check_convention(convention)
        scans, refs = [e["scan"] for e in self.entries], [e["path"] for e in self.entries]
        return score_random_walks(self.graphs, scans, refs, n, seed=seed, convention=conv, **kwargs)


_SPLIT_OPTIONS = (
    Option(
        "split", "the split: a JSON list of {path_id, scan, path, instructions, ...}", shapes=("r2r-split", "rxr-guide")
    ),
    Option("connectivity", "folder of <scan>_connectivity.json (Matterport3D navigation graphs)", kind="dir"),
)

#: The shapes of the agents' files R2R and R4R read (REVERIE's object id is ignored).
_PREDICTIONS = ("r2r-trajectories", "duet-trajectories", "reverie-trajectories")
#: Instruction ``k`` of path ``path_id`` is ``<path_id>_<k>``.
ID_SHAPE = IdShape("<path_id>_<k>", r"\d+_\d+", lambda i: i.rsplit("_", 1)[0])

R2R = DatasetKind(
    "r2r",
    "R2R",
    _SPLIT_OPTIONS,
    ("r2r", "paper", "duet", "r4r"),
    "r2r",
    R2RBenchmark,
    description="Room-to-Room (Anderson et al. 2018): instructions on Matterport3D graph paths",
    split_reader=SplitReader("split", split_index),
    predictions=_PREDICTIONS,
    id_shape=ID_SHAPE,
)
R4R = DatasetKind(
    "r4r",
    "R4R",
    _SPLIT_OPTIONS,
    ("r4r", "paper", "r2r", "duet"),
    "r4r",
    R2RBenchmark,
    description="Room-for-Room (Jain et al. 2019): joined R2R paths, in R2R's file format",
    split_reader=SplitReader("split", split_index),
    predictions=_PREDICTIONS,
    id_shape=ID_SHAPE,
)
