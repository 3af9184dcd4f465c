"""What a file given to the wrong data set kind looks like, and which command scores it.

A reader that fails on a file of another kind says what it met (``"malformed JSON at line 2"``,
``"'instr_id' must be a string, got None"``), not what the file is. The readers call
:func:`routed` around their reading: when it fails, the file is recognised by the shape of its
first records (a results table, the trajectories of each kind, a split, a log) and the error
becomes one line that says what the file looks like and the command that reads it. The readers
call :func:`other_split` when none of a file's ids is in the split. This module is the one place
that knows the shapes; it reads, never scores.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._messages import few, named
from ._common import ID_COLUMNS, is_path, is_real, read_text

__all__ = [
    "COMMANDS",
    "SHAPES",
    "Shape",
    "explain",
    "kind_of_files",
    "other_split",
    "recognise",
    "refuse_other_shape",
    "routed",
    "sniff",
]

#: How each data set kind is run on a file (``FILE``), with the files it needs; the flags are the
#: kinds' own options (``tests/test_datasets_shapes.py`` checks them against ``DATASETS``).
COMMANDS: dict[str, str] = {
    "r2r": "navdtw score --dataset r2r --predictions FILE --split R2R_<split>.json --connectivity <connectivity dir>",
    "r4r": "navdtw score --dataset r4r --predictions FILE --split R4R_<split>.json --connectivity <connectivity dir>",
    "reverie": (
        "navdtw score --dataset reverie --predictions FILE --split REVERIE_<split>.json "
        "--connectivity <connectivity dir> --objects <BBoxes.json or folder>"
    ),
    "ndh": "navdtw score --dataset ndh --predictions FILE --split NDH_<split>.json --connectivity <connectivity dir>",
    "rxr": (
        "navdtw score --dataset rxr --predictions FILE --split rxr_<split>_guide.jsonl.gz "
        "--connectivity <connectivity dir>"
    ),
    "r2r-ce": (
        "navdtw score --dataset r2r-ce --predictions FILE --vlnce-episodes <split>.json.gz "
        "--vlnce-gt <split>_gt.json.gz"
    ),
    "rxr-ce": (
        "navdtw score --dataset rxr-ce --predictions FILE --rxrce-episodes <split>_guide.json.gz "
        "--rxrce-gt <split>_guide_gt.json.gz"
    ),
    "positions": "navdtw score --dataset positions --predictions FILE --references <reference paths file>",
    "ivln-ce": "navdtw score --dataset ivln-ce --predictions FILE --tours <gt_ndtw.json> --split-name <split>",
    "results": "navdtw compare FILE --dataset results",
}


@dataclass(frozen=True)
class Shape:
    """One shape of file the readers know.

    Attributes
    ----------
    name:
        a short key (``"r2r-trajectories"``).
    what:
        what the file is, for messages (``"R2R trajectories ([{instr_id, trajectory}])"``).
    kinds:
        the data set kinds that read it as predictions (results tables: ``("results",)``), the
        first suggested; empty when no kind does.
    advice:
        for a file no kind reads as predictions: what to do with it instead.
    leave_to:
        kinds whose own message about such a file stands (``results`` says what it does with means).
    """

    name: str
    what: str
    kinds: tuple[str, ...] = ()
    advice: str = ""
    leave_to: tuple[str, ...] = ()


#: Every shape :func:`recognise` tells apart, by name.
SHAPES: dict[str, Shape] = {
    s.name: s
    for s in (
        Shape("results", "a results table (one row of metrics per episode)", ("results",)),
        Shape(
            "r2r-trajectories",
            "R2R trajectories ([{instr_id, trajectory: [[viewpoint, heading, elevation], ...]}])",
            ("r2r", "r4r", "rxr", "reverie"),  # REVERIE's object id is optional
        ),
        Shape(
            "duet-trajectories",
            "VLN-DUET trajectories (submit_/detail_*.json: one list of viewpoints per step"
            ", with per-viewpoint stop_prob in detail_)",
            ("r2r", "r4r", "reverie", "rxr"),
        ),
        Shape(
            "reverie-trajectories",
            "REVERIE trajectories ([{instr_id, trajectory, predObjId or pred_objid}])",
            ("reverie", "r2r", "r4r", "rxr"),  # the R2R readers ignore the object id
        ),
        Shape("ndh-trajectories", "CVDN/NDH trajectories ([{inst_idx, trajectory}])", ("ndh",)),
        Shape(
            "rxr-follower",
            "RxR paths of viewpoints ({instruction_id, path: [viewpoint, ...]} per line)",
            ("rxr",),
        ),
        Shape(
            "vlnce-predictions",
            "VLN-CE predictions ({episode_id: [{position, heading, stop}, ...]}, predictions.json)",
            ("r2r-ce", "rxr-ce", "positions"),
        ),
        Shape(
            "rxrce-predictions",
            "RxR-CE predictions ({instruction_id, path: [[x, y, z], ...]} per line)",
            ("rxr-ce", "r2r-ce"),
        ),
        Shape(
            "positions",
            "paths of positions ({episode_id, path: [[x, y, z], ...]} records)",
            ("positions", "r2r-ce", "rxr-ce"),
        ),
        Shape(
            "ivlnce-tours",
            "IVLN-CE tours ({tour_id: [{episode_id, phase, position}, ...]}, agent_path.json)",
            ("ivln-ce",),
        ),
        Shape(
            "ivlnce-gt",
            "IVLN-CE ground-truth tours ({split: {tour_id: [{episode_id, phase, position}, ...]}}, gt_ndtw.json)",
            advice="give it as --tours of --dataset ivln-ce, and the agent's agent_path.json as the predictions",
        ),
        Shape(
            "citynav-log",
            "a CityNav goal-predictor log ({metrics, trajectory_logs, pred_goal_logs, pred_progress_logs})",
            advice=(
                "navdtw has no CityNav kind: its trajectory_logs ([x, y, z, yaw] poses by episode) can be "
                "scored with --dataset positions once written as {episode_id, path} records with references"
            ),
        ),
        Shape(
            "r2r-split",
            "an R2R-format split ([{path_id, scan, path, instructions}])",
            advice="give it as --split, and the agent's trajectories as the predictions",
        ),
        Shape(
            "rxr-guide",
            "RxR guide annotations ({instruction_id, path_id, scan, path, instruction} per line)",
            advice="give it as --split of --dataset rxr, and the agent's paths as the predictions",
        ),
        Shape(
            "vlnce-episodes",
            "VLN-CE episodes ({episodes: [...]})",
            advice="give it as --vlnce-episodes (or --rxrce-episodes), and the agent's predictions as the predictions",
        ),
        Shape(
            "vlnce-gt",
            "VLN-CE ground truth ({episode_id: {locations, actions, forward_steps}})",
            advice="give it as --vlnce-gt (or --rxrce-gt), and the agent's predictions as the predictions",
        ),
        Shape(
            "means",
            "means over episodes (one object of numbers, no per-episode values)",
            advice="navdtw scores and compares per episode: give the run's per-episode results or trajectories",
            leave_to=("results",),
        ),
    )
}

#: Lines of a JSON Lines file (records of a list) looked at to recognise it.
_LINES = 20


def _points(value) -> bool:
    """A non-empty list of [x, y(, z)] number lists."""
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(p, list) and 2 <= len(p) <= 4 and all(is_real(x) for x in p) for p in value[:5])
    )


def _record_shape(rec: Mapping) -> str | None:
    """The shape of one record (a row of a list or of JSON Lines)."""
    traj = rec.get("trajectory")
    if isinstance(traj, list) and ("instr_id" in rec or "inst_idx" in rec):
        if "instr_id" not in rec:
            return "ndh-trajectories"
        if "predObjId" in rec or "pred_objid" in rec:
            return "reverie-trajectories"
        lists = [s for s in traj if isinstance(s, list) and s]
        if "details" in rec or (lists and all(all(isinstance(v, str) for v in s) for s in lists)):
            return "duet-trajectories"
        return "r2r-trajectories"
    path = rec.get("path")
    if "path_id" in rec and "scan" in rec and ("instructions" in rec or "num_instructions" in rec):
        return "r2r-split"
    if "path_id" in rec and "scan" in rec and isinstance(rec.get("instruction"), str):
        return "rxr-guide"  # a guide annotation: a reference path with its instruction, not an agent's path
    if isinstance(path, list) and path and any(k in rec for k in ("episode_id", "instruction_id", "instr_id")):
        if all(isinstance(v, str) for v in path[:5]):
            return "rxr-follower"
        if _points(path):
            return "rxrce-predictions" if "instruction_id" in rec and "episode_id" not in rec else "positions"
    if any(k in rec for k in ID_COLUMNS) and any(is_real(v) for k, v in rec.items() if k not in ID_COLUMNS):
        return "results"  # an episode's id and numbers: its metrics
    return None


def _steps_of_positions(value) -> bool:
    """VLN-CE's ``[{"position": [x, y, z], ...}, ...]``."""
    return isinstance(value, list) and bool(value) and all(isinstance(s, dict) and "position" in s for s in value[:5])


def _tour_steps(value) -> bool:
    """IVLN-CE's ``[{"episode_id", "phase", "position"}, ...]``: a tour's steps."""
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(s, dict) for s in value[:5])
        and any("phase" in s or "episode_id" in s for s in value[:5])
    )


def recognise(data: Any) -> Shape | None:
    """The shape of parsed JSON (a list of records, an object, or the records of JSON Lines).

    Parameters
    ----------
    data : object
        A parsed file: a JSON list or object; JSON Lines as the list of their first records.

    Returns
    -------
    Shape or None
        The shape of :data:`SHAPES` it has, or None when it has none of them.
    """
    if isinstance(data, list):
        rows = [r for r in data[:_LINES] if isinstance(r, dict)]
        if not rows:
            return None
        names = {_record_shape(r) for r in rows}
        if len(names) == 1 and None not in names:
            return SHAPES[names.pop()]
        names.discard(None)  # DUET's lists are known by a step of two viewpoints, not every row has one
        if names and names <= {"r2r-trajectories", "duet-trajectories"}:
            return SHAPES["duet-trajectories" if "duet-trajectories" in names else "r2r-trajectories"]
        return None
    if not isinstance(data, dict) or not data:
        return None
    if {"trajectory_logs", "pred_goal_logs"} <= set(data):
        return SHAPES["citynav-log"]
    if isinstance(data.get("episodes"), list):
        return SHAPES["vlnce-episodes"]
    values = list(data.values())[:_LINES]
    if all(_tour_steps(v) for v in values):
        return SHAPES["ivlnce-tours"]
    if all(isinstance(v, dict) and v and all(_tour_steps(t) for t in list(v.values())[:_LINES]) for v in values):
        return SHAPES["ivlnce-gt"]
    if all(_steps_of_positions(v) for v in values):
        return SHAPES["vlnce-predictions"]
    if all(isinstance(v, dict) and "locations" in v for v in values):
        return SHAPES["vlnce-gt"]
    if all(_points(v) or (isinstance(v, dict) and _points(v.get("path"))) for v in values):
        return SHAPES["positions"]
    if all(isinstance(v, dict) for v in values):  # keyed by episode id
        shape = recognise([{"episode_id": k, **v} for k, v in list(data.items())[:_LINES]])
        return shape if shape is not None and shape.name in ("results", "positions") else None
    shape = _record_shape(data)  # a JSON Lines file of one record
    if shape is None and not any(k in data for k in ID_COLUMNS) and any(is_real(v) for v in values):
        return SHAPES["means"]  # numbers and no episode id: an evaluator's summary
    return SHAPES.get(shape or "")


def sniff(path) -> Shape | None:
    """The shape of a file (JSON, or the first lines of JSON Lines; gzipped or not), or None when
    it cannot be read or has none of :data:`SHAPES`.

    Parameters
    ----------
    path : str or os.PathLike
        The file.

    Returns
    -------
    Shape or None
        Its shape.
    """
    try:
        text = read_text(path)
    except (OSError, ValueError):
        return None
    try:
        return recognise(json.loads(text))
    except json.JSONDecodeError as exc:
        if exc.msg != "Extra data":
            return None
    except (RecursionError, ValueError):
        return None
    rows = []
    for line in text.splitlines():
        if line.strip():
            try:
                rows.append(json.loads(line))
            except (json.JSONDecodeError, RecursionError, ValueError):
                break  # StreamVLN's summary after the rows, a truncated line: the rows before it decide
            if len(rows) == _LINES:
                break
    return recognise(rows) if rows else None


def _reads(kind: Any, shape: Shape) -> bool:
    """Whether ``kind`` (a kind's name, or the kind: its own ``predictions``) reads files of
    ``shape``, or leaves the message about them to itself."""
    if isinstance(kind, str):
        return kind in shape.kinds or kind in shape.leave_to
    return shape.name in kind.predictions or kind.name in shape.leave_to


def _message(name: str, shape: Shape, kind: str) -> str:
    head = f"{name} holds {shape.what}, not what --dataset {kind} reads"
    if not shape.kinds:
        return f"{head}; {shape.advice}"
    first, *others = shape.kinds
    also = f" (or --dataset {', '.join(others)} with their files)" if others else ""
    verb = "compare it" if first == "results" else "score it"
    return f"{head}; {verb} with: {COMMANDS[first].replace('FILE', name)}{also}"


def explain(path, kind) -> str | None:
    """The one-line message for a file that data set ``kind`` cannot read, when the file has a shape
    ``kind`` does not read as predictions; None otherwise (the reader's own message stands).

    Parameters
    ----------
    path : str or os.PathLike
        The file given to ``kind``.
    kind : str or DatasetKind
        The data set kind it was given to: its name (``"r2r"``, ``"results"``, ...), whose
        shapes are those of :attr:`Shape.kinds`, or the kind itself, whose shapes are its own
        ``predictions`` (a kind registered under a new name reads what its record says).

    Returns
    -------
    str or None
        ``"<file> holds <what it is>, not what --dataset <kind> reads; score it with: <command>"``.
    """
    if not is_path(path):
        return None
    shape = sniff(path)
    if shape is None or _reads(kind, shape):
        return None
    return _message(Path(path).name, shape, kind if isinstance(kind, str) else kind.name)


def refuse_other_shape(path, kind) -> None:
    """Raises :func:`explain`'s message when ``path`` has the shape of another kind's file, for a
    read that succeeded on a file it should not have (VLN-DUET's ``detail_`` read as a table whose
    columns are per-viewpoint ``stop_prob``).

    Parameters
    ----------
    path : str, os.PathLike or object
        The file read (anything else: nothing is checked).
    kind : str or DatasetKind
        The data set kind that read it (as :func:`explain` takes it).

    Raises
    ------
    ValueError
        The file is of another kind's shape.
    """
    message = explain(path, kind)
    if message is not None:
        raise ValueError(message)


@contextmanager
def routed(path, kind) -> Iterator[None]:
    """Reads ``path`` for data set ``kind`` inside the block; a ``ValueError`` raised there becomes
    :func:`explain`'s message when the file is of another kind's shape (else it is raised as it is).

    Parameters
    ----------
    path : str, os.PathLike or object
        The predictions (a file name, or parsed data: then nothing is recognised).
    kind : str or DatasetKind
        The data set kind reading it (as :func:`explain` takes it).

    Raises
    ------
    ValueError
        What the block raised, or the message that names the file's shape and its command.
    """
    try:
        yield
    except ValueError as exc:
        message = explain(path, kind)
        if message is None:
            raise
        raise ValueError(message) from exc


#: Files only results tables come in (no other kind reads them): by suffix.
_TABLE_SUFFIXES = (".csv", ".tsv", ".parquet", ".lmdb")


def _shape_of_input(path: Path) -> tuple[str | None, str]:
    """The shape name of one agent's input (None: none known) and what it is, for messages."""
    if path.is_dir():  # a folder of one run's files (a log, shards, per-episode files): results only
        files = sorted(p for p in path.iterdir() if p.is_file() and not p.name.startswith("."))[:_LINES]
        for shape in filter(None, map(sniff, files)):
            if not _reads("results", shape):  # trajectories in a folder: not what results reads
                return shape.name, f"files of {shape.what}"
        return "results", "a folder of one run's results"
    if path.suffix.lower() in _TABLE_SUFFIXES or "".join(path.suffixes[-2:]).lower() in (".csv.gz", ".tsv.gz"):
        return "results", SHAPES["results"].what
    shape = sniff(path)
    if shape is None:
        return None, "nothing navdtw recognises"
    return shape.name, shape.what


def kind_of_files(paths: Sequence[Any]) -> tuple[str | None, str]:
    """The data set kind the agents' files name when ``--dataset`` is not given: the kind of their
    one shape when that shape is read by that kind alone (a results table, NDH trajectories, RxR
    paths of viewpoints, IVLN-CE tours); never a guess.

    Parameters
    ----------
    paths : sequence of str or os.PathLike
        Every agent's files (a folder is one run's results, which only ``results`` reads).

    Returns
    -------
    tuple of (str or None, str)
        ``(kind, why)``: the kind and ``"every file is a results table"``; or ``(None, why)`` when
        the files name no one kind, ``why`` saying what they hold (``"a.json holds R2R
        trajectories (...), read by --dataset r2r, r4r, rxr or reverie"``).
    """
    seen: dict[str | None, tuple[str, str]] = {}  # shape -> (first file's name, what)
    whats: list[str] = []
    for p in paths:
        path = Path(p)
        name, what = _shape_of_input(path)
        seen.setdefault(name, (path.name, what))
        if what.split(" (")[0] not in whats:
            whats.append(what.split(" (")[0])
    if len(seen) == 1:
        ((name, (file, what)),) = seen.items()
        kinds = SHAPES[name].kinds if name is not None else ()
        if len(kinds) == 1:
            every = "every file is" if len(paths) > 1 else f"{file} is"
            return kinds[0], f"{every} {' or '.join(whats)}"
        if kinds:
            return None, f"{file} holds {what}, which --dataset {', '.join(kinds[:-1])} or {kinds[-1]} reads"
        if name is None:
            return None, f"{file} has no shape navdtw recognises"
        return None, f"{file} holds {what}, which no data set kind reads as an agent's files"
    held = "; ".join(f"{file} holds {what}" for file, what in seen.values())
    return None, f"the agents' files are of different shapes ({held})"


def other_split(name: str, ids: Sequence[Any], split_name: str, split_ids: Sequence[Any], id_name: str) -> str | None:
    """The message for predictions none of whose ids is in the split (predictions of another
    split, such as val_seen given with val_unseen), or None when some are.

    Parameters
    ----------
    name : str
        The predictions' name in messages.
    ids : sequence
        The predictions' ids.
    split_name : str
        The split's name in messages.
    split_ids : sequence
        The split's ids.
    id_name : str
        What an id is called (``"instr_id"``).

    Returns
    -------
    str or None
        ``"<name>: none of its 2 instr_ids is in <split> (...): predictions of another split? ..."``.
    """
    mine = [str(i) for i in ids]
    theirs = {str(i) for i in split_ids}
    if not mine or theirs.intersection(mine):
        return None
    return (
        f"{name}: none of its {len(mine)} {named(id_name)}{'' if len(mine) == 1 else 's'} is in {split_name}: "
        "predictions of another split? "
        f"(its ids: {few(mine)}; the split's: {few([str(i) for i in split_ids])})"
    )
