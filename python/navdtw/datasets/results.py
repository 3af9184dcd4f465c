"""Results tables: per-episode metrics that another evaluator computed (VLN-CE and the habitat loops
built on it, HA-VLN, VLN-DUET / HAMT, CVDN, aerial VLN, ...), and navdtw's own ``episodes.csv`` /
``episodes.parquet``, read for comparison (``navdtw compare ... --dataset results``, suite files
with ``dataset = "results"``).

Formats (found from the content, gzipped or not): JSON Lines (one object per episode), a JSON list
of objects, a JSON object keyed by episode id (habitat's ``{episode_id: {metric: value}}``), CSV
(TSV for ``.tsv`` names or tab-separated headers) and Parquet (needs pyarrow). JSON's non-standard
``NaN``, ``Infinity`` and ``-Infinity`` tokens (what Python's json writes) are read; nested objects
are flattened (VLN-CE's ``{"collisions": {"count": 2}}`` is the column ``collisions.count``).

Projects' files are read as their code writes them: :mod:`navdtw.datasets.layouts` describes each
layout (ETPNav's per-rank files, StreamVLN's summary line, InternNav's progress and means, NaVid's
file per episode, AerialVLN's per-row threshold, the means-only files of VLN-CE and HA-VLN), and
:mod:`navdtw.datasets.shards` gathers one run's files (ranks, a folder, a glob, a list). An
evaluator's summary record is left out of the episodes and cross-checked (``ResultsTable.checks``);
a means file is read by :func:`load_means` as the evaluator's reported figures.

Columns:

* the id column: ``id_column``, else the first of :data:`ID_COLUMNS`; ids are strings (``12`` and
  ``"12"`` are the same episode, as the evaluators compare them);
* metric columns: a column named as a registry metric (any case: ``nDTW``) or one of its
  :data:`ALIASES` (the evaluators' own names: ``distance_to_goal``, ``nav_error``, ``oracle_success``,
  ...), or mapped by ``columns`` (``{"Oracle SR": "osr"}``); known columns that are not registry
  metrics (:data:`EXTRA_COLUMNS`: ``steps``, HA-VLN's ``TCR`` and ``CR``, ...);
* other numeric columns are kept under their own names and compared, with no better/worse direction
  unless ``columns`` gives one (``{"collisions.count": "-"}``); text columns (instructions, scene
  ids) are ignored; ``columns`` maps a column to ``"ignore"`` to leave it out;
* ``scan`` / ``scene_id`` gives the scans, ``language`` the groups, ``path_id`` / ``trajectory_id``
  (or ``path_column``) the path of each episode for the path bootstrap.

Checks (a ``ValueError`` naming the file, the entry and the column): rates (SR, SPL, nDTW, ...)
must be fractions in [0, 1] (values in (1, 100] are percentages: ``percent``); distances must not be
negative; an id must appear once; NaN (or a missing value) and infinities follow navdtw's one
non-finite policy (:func:`navdtw.registry.nonfinite_policy`): 0 where the metric's formula says so
(SPL, SDTW and SED where success is 0, RGSPL where RGS is 0), an error anywhere else; ``+inf``
distances (an unreachable goal) are kept as read for the statistics to leave out.
"""

from __future__ import annotations

import contextlib
import csv
import gc
import itertools
import json
import math
import re
import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from .. import registry
from .._messages import listed
from .._typing import PathLike
from ..metrics import Convention, Scores
from ..registry import Metric
from . import layouts
from ._common import INPUT, few, is_path, loads, malformed, read_text, show
from .base import Benchmark, DatasetKind, Option
from .shapes import other_split, refuse_other_shape, routed

__all__ = [
    "ALIASES",
    "EXTERNAL",
    "EXTRA_COLUMNS",
    "ID_COLUMNS",
    "RESULTS",
    "EvaluatorMeans",
    "ResultsBenchmark",
    "ResultsTable",
    "align",
    "load_means",
    "load_results",
    "parse_columns",
    "parse_percent",
    "parse_select",
]

#: Column names that hold the episode id, in the order they are looked for.
ID_COLUMNS: tuple[str, ...] = ("episode_id", "instr_id", "instruction_id", "inst_idx", "id")
#: Column names that hold the path an episode follows (episodes on one path are resampled together).
PATH_COLUMNS: tuple[str, ...] = ("path_id", "trajectory_id")
#: Column names that hold the scan (``scene_id`` paths such as ``mp3d/X/X.glb`` give ``X``).
SCAN_COLUMNS: tuple[str, ...] = ("scan", "scene_id", "scan_id", "scene")
#: Column names whose labels become ``groups`` (``summary(by="language")``).
GROUP_COLUMNS: tuple[str, ...] = ("language",)

#: The evaluators' column names (lowercase, spaces and dashes as ``_``) -> the registry metric they hold.
#: A column named as the metric itself (``sr``, ``NE``, ``nDTW``) is that metric too. docs/datasets/results.md
#: lists where each name comes from.
ALIASES: dict[str, str] = {
    # success: VLN-CE / habitat, VLN-DUET / HAMT, HA-VLN (its strict SR is the column SR)
    "success": "sr",
    "success_rate": "sr",
    # oracle success: VLN-CE / habitat, VLN-DUET, RxR-CE logs (os)
    "os": "osr",
    "oracle_success": "osr",
    "oracle_sr": "osr",
    "oracle_success_rate": "osr",
    # navigation error: habitat distance_to_goal, VLN-DUET nav_error, R2R / CVDN evaluators nav_errors
    "distance_to_goal": "ne",
    "nav_error": "ne",
    "nav_errors": "ne",
    "navigation_error": "ne",
    # oracle navigation error: VLN-DUET oracle_error, R2R / CVDN oracle_errors, VLN-CE, aerial VLN oracle_ne
    "oracle_error": "one",
    "oracle_errors": "one",
    "oracle_navigation_error": "one",
    "oracle_ne": "one",
    # path length: VLN-CE path_length, VLN-DUET / R2R trajectory_lengths, DUET's summary lengths, TL in papers
    "path_length": "pl",
    "trajectory_length": "pl",
    "trajectory_lengths": "pl",
    "lengths": "pl",
    "tl": "pl",
    # goal progress: CVDN dist_to_end_reduction(s), VLN-DUET gp / goal_progress
    "goal_progress": "gp",
    "dist_to_end_reduction": "gp",
    "dist_to_end_reductions": "gp",
    # steps: VLN-CE steps_taken (not a registry metric: kept as "steps", no direction)
    "steps_taken": "steps",
}

#: Known columns that are not registry metrics, each with (higher is better, is a rate).
EXTRA_COLUMNS: dict[str, tuple[bool | None, bool]] = {
    "steps": (None, False),  # actions taken (VLN-CE steps_taken)
    "oracle_spl": (True, True),  # VLN-CE OracleSPL
    "tcr": (False, False),  # HA-VLN: collisions beyond the unavoidable ones
    "cr": (False, True),  # HA-VLN: any such collision (0/1)
}

#: The convention of every results table, ``"external"``. The values are the table's evaluator's and
#: navdtw computes none, so nothing of it applies but the name.
EXTERNAL = Convention("external", False, "shortest", source="the evaluator that wrote the table")

_DIRECTIONS = {"+": True, "-": False}
_IGNORE = "ignore"


# --------------------------------------------------------------------------------------------
# options: columns, percent, select
# --------------------------------------------------------------------------------------------


def _pairs(value, what: str) -> dict[str, str]:
    """``{name: text}`` from a table or from ``"NAME=TEXT"`` strings (a list, or one string)."""
    if value is None:
        return {}
    if isinstance(value, Mapping):
        items = list(value.items())
    else:
        texts = [value] if isinstance(value, str) else value
        if not isinstance(texts, (list, tuple)):
            raise ValueError(f"expected a table of {what}, got {type(value).__name__}")
        items = []
        for t in texts:
            if not isinstance(t, str) or "=" not in t:
                raise ValueError(f"expected {what} as NAME=VALUE, got {t!r}")
            items.append(tuple(t.rsplit("=", 1)) if what == "column mappings" else tuple(t.split("=", 1)))
    out: dict[str, str] = {}
    for k, v in items:
        if not isinstance(k, str) or not k.strip():
            raise ValueError(f"{what}: a column name is empty")
        if not isinstance(v, str):
            raise ValueError(f"{what}: {k!r} must be given a string, got {v!r}")
        out[k.strip()] = v.strip()
    return out


def parse_columns(value) -> dict[str, str]:
    """The ``columns`` option: ``{column: target}``, from a table (suite file, Python) or
    ``"NAME=TARGET"`` strings (``--column NAME=TARGET``, repeatable).

    A target is a metric of :mod:`navdtw.registry` (``"osr"``) or of :data:`EXTRA_COLUMNS`, ``"+"`` /
    ``"-"`` (keep the column under its own name, higher / lower is better) or ``"ignore"``.

    Parameters
    ----------
    value : mapping, str, list of str or None
        ``{column: target}``, or ``"NAME=TARGET"`` strings; None: no mapping.

    Returns
    -------
    dict[str, str]
        column -> target.

    Raises
    ------
    ValueError
        A value of another type, a string without ``=``, an empty column name, a target that is
        not a string or is unknown.
    """
    out = _pairs(value, "column mappings")
    known = set(registry.names()) | set(EXTRA_COLUMNS)
    for col, target in out.items():
        if target not in known and target not in _DIRECTIONS and target != _IGNORE:
            raise ValueError(
                f"column {col!r}: unknown target {target!r}; give a metric ({', '.join(registry.names())}), "
                "'+' or '-' (higher / lower is better) or 'ignore'"
            )
    return out


def parse_percent(value) -> bool | tuple[str, ...]:
    """The ``percent`` option: ``True`` (every rate column is in percent), ``False``, or the
    columns that are (names or metrics: ``("spl", "ndtw")``, or ``"spl,ndtw"``).

    Parameters
    ----------
    value : bool, str, list of str or None
        True, False (or None), or the column names.

    Returns
    -------
    bool or tuple of str
        True, False, or the column names.

    Raises
    ------
    ValueError
        A value that is neither a bool nor column names, or no name at all.
    """
    if value is None or value is False:
        return False
    if value is True:
        return True
    names = value.split(",") if isinstance(value, str) else value
    if not isinstance(names, (list, tuple)) or not all(isinstance(n, str) for n in names):
        raise ValueError(f"expected true or a list of column names, got {value!r}")
    names = tuple(n.strip() for n in names if n.strip())
    if not names:
        raise ValueError("no column names given")
    return names


def parse_select(value) -> dict[str, str]:
    """The ``select`` option: keep the rows whose columns hold these values, compared as text
    (``{"agent": "mine", "dataset": "r2r_unseen"}``, or ``"COLUMN=VALUE"`` strings).

    Parameters
    ----------
    value : mapping, str, list of str or None
        ``{column: value}``, or ``"COLUMN=VALUE"`` strings; None: every row.

    Returns
    -------
    dict[str, str]
        column -> the value its rows must hold.

    Raises
    ------
    ValueError
        A value of another type, a string without ``=``, an empty column name, a value that is
        not a string.
    """
    return _pairs(value, "row selections")


# --------------------------------------------------------------------------------------------
# reading the raw columns
# --------------------------------------------------------------------------------------------


@dataclass
class _Raw:
    """A table as read: columns of raw values (Python lists, or float64 arrays from Parquet)."""

    name: str
    columns: dict[str, Any]
    n: int
    entry: Callable[[int], str]  # "line 12", "entry 3", "row 5"
    keys: list[str] | None = None  # ids that are the keys of a keyed JSON object
    text_parsed: bool = False  # CSV: every value is a string to parse
    means: dict | None = None  # one object of the evaluator's means (no episode in the file)
    summaries: list[tuple[str, dict]] = field(default_factory=list)  # (where, record): the evaluator's summaries
    layout: layouts.Layout | None = None
    sources: tuple[str, ...] = ()  # the files read (several: one run's shards)
    how: str = ""  # "4 shards of one run (ranks 0-3 of 4)"


def _read_raw(path: PathLike) -> _Raw:
    name = Path(path).name
    path = Path(path)
    try:
        with open(path, "rb") as f:
            head = f.read(4)
    except IsADirectoryError:
        raise ValueError(f"{path}: is a folder, not a results table") from None
    if head == b"PAR1":
        return _read_parquet(path, name)
    text = read_text(path)
    if not text.strip():
        raise ValueError(f"{name}: empty file (no rows)")
    if text.lstrip()[0] in "[{":
        return _read_json(text, name)
    return _read_csv(text, name, tab=name.lower().removesuffix(".gz").endswith(".tsv"))


class _Overflow(str):
    """A JSON number beyond float's range (``1e400``) as written: a corrupt value, refused by name
    (only the evaluators' ``Infinity`` token means an unreachable goal)."""


def _float(text: str) -> float | _Overflow:
    x = float(text)
    return _Overflow(text) if math.isinf(x) else x


def _json(text: str, where: str):
    return loads(text, where, parse_float=_float)


def _read_json(text: str, name: str) -> _Raw:
    """A text that starts with ``[`` or ``{``: a JSON list, an object, or JSON Lines."""
    try:
        data = _json(text, name)
    except json.JSONDecodeError as exc:
        if exc.msg != "Extra data":
            raise malformed(name, exc) from None
        return _json_lines(text, name)
    if isinstance(data, list):
        for k, row in enumerate(data):
            if not isinstance(row, dict):
                raise ValueError(f"{name}: entry {k}: expected an object (one episode), got {type(row).__name__}")
        return _Raw(name, _columns_of(data), len(data), lambda k: f"entry {k}")
    if data and all(isinstance(v, dict) for v in data.values()):  # {episode_id: {metric: value}}
        keys = [str(k) for k in data]
        return _Raw(name, _columns_of(list(data.values())), len(keys), lambda k: f"entry {k}", keys=keys)
    raw = _Raw(name, _columns_of([data]), 1, lambda k: "line 1")  # one object: one JSON line
    if _first(data, ID_COLUMNS) is None and data and all(type(v) in _NUMBER_TYPES for v in data.values()):
        raw.means = data  # numbers and no id: an evaluator's means (VLN-CE's stats_ckpt_*.json)
    return raw


def _json_lines(text: str, name: str) -> _Raw:
    """JSON Lines, read in blocks of lines: only one block's objects exist at a time, the columns
    grow block by block (a million rows as dicts would take several times their columns' memory)."""
    columns: dict[str, list] = {}
    numbers: list[int] = []
    lines = text.split("\n")  # at "\n" only, as JSON Lines is split (not str.splitlines)
    first = 1
    while lines:
        block = [(first + j, line) for j, line in enumerate(lines[:_BLOCK]) if line.strip()]
        first += min(_BLOCK, len(lines))
        del lines[:_BLOCK]  # the block's lines are freed as the columns grow
        if block:
            at, rows = _parse_lines(block, name)
            _extend(columns, _columns_of(rows), len(numbers), len(rows))
            numbers.extend(at)
    return _Raw(name, columns, len(numbers), lambda k: f"line {numbers[k]}")


#: lines of JSON Lines parsed at once
_BLOCK = 50_000


def _parse_lines(block: list[tuple[int, str]], name: str) -> tuple[list[int], list[dict]]:
    """The objects of a block of lines and the line of each. A line may hold two objects: an
    evaluator that appends its summary without a newline (StreamVLN) and is resumed later appends
    the next episode on the summary's line."""
    rows = None
    with contextlib.suppress(ValueError, RecursionError):  # one parse; line by line only to name a bad line
        rows = json.loads("[" + ",".join(line for _, line in block) + "]", parse_float=_float)
    if rows is not None and len(rows) == len(block) and all(type(r) is dict for r in rows):
        return [k for k, _ in block], rows
    at, rows = [], []
    for k, line in block:
        try:
            objects = [_json(line, f"{name}: line {k}")]
        except json.JSONDecodeError as exc:
            if exc.msg != "Extra data":
                raise ValueError(f"{name}: line {k}: malformed JSON at column {exc.colno}: {exc.msg}") from None
            objects = _objects(line, name, k)
        for row in objects:
            if not isinstance(row, dict):
                raise ValueError(f"{name}: line {k}: expected an object (one episode), got {type(row).__name__}")
            at.append(k)
            rows.append(row)
    return at, rows


def _objects(line: str, name: str, k: int) -> list:
    """The JSON values of a line that holds several, one after another (``{...}{...}``)."""
    decoder = json.JSONDecoder(parse_float=_float)
    out, pos = [], 0
    while pos < len(line):
        try:
            value, pos = decoder.raw_decode(line, pos)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{name}: line {k}: malformed JSON at column {exc.colno}: {exc.msg}") from None
        except RecursionError:
            raise ValueError(f"{name}: line {k}: JSON nested too deeply to read") from None
        out.append(value)
        while pos < len(line) and line[pos].isspace():
            pos += 1
    return out


def _extend(columns: dict[str, list], part: dict[str, list], before: int, added: int) -> None:
    """Appends a block's columns (``added`` rows) to ``columns`` (``before`` rows); a column one of
    them lacks is None there."""
    for key, values in part.items():
        if key not in columns:
            columns[key] = [None] * before
        columns[key].extend(values)
    for key, values in columns.items():
        if key not in part:
            values.extend([None] * added)


def _columns_of(rows: list[dict]) -> dict[str, list]:
    """Column lists of a list of JSON objects (keys in order of first appearance; a key missing from
    a row is None there), nested objects flattened to ``parent.child`` columns."""
    keys = dict.fromkeys(itertools.chain.from_iterable(rows))
    out: dict[str, list] = {}
    for key in keys:
        _add_column(out, str(key), [r.get(key) for r in rows])
    return out


def _add_column(out: dict[str, list], key: str, values: list) -> None:
    if not any(type(v) is dict for v in values):
        out[key] = values
        return
    subkeys = dict.fromkeys(itertools.chain.from_iterable(v for v in values if type(v) is dict))
    if any(v is not None and type(v) is not dict for v in values):
        out[key] = [None if type(v) is dict else v for v in values]  # mixed: the scalars stay
    for sub in subkeys:
        _add_column(out, f"{key}.{sub}", [v.get(sub) if type(v) is dict else None for v in values])


def _read_csv(text: str, name: str, tab: bool) -> _Raw:
    """CSV (or TSV), read in blocks of rows: the columns grow block by block, each line's text is
    freed once parsed (a list of rows, or a StringIO's copy of the text, would take several times
    the columns' memory)."""
    first = text.lstrip("\r\n").split("\n", 1)[0]
    delimiter = "\t" if tab or ("\t" in first and "," not in first) else ","

    def reader(consume: bool = False):
        lines = text.split("\n")

        def each():
            for i in range(len(lines)):
                line = lines[i]
                if consume:
                    lines[i] = ""  # freed once parsed
                yield line + "\n"  # put back: a quoted field may span lines

        return csv.reader(each(), delimiter=delimiter)

    lines: list[int] = []

    def line(k: int) -> str:  # row k's line, found only when a message needs it
        if not lines:
            lines.extend(r.line_num for r in [reader()] for row in r if _filled(row))
        return f"line {lines[k]}"

    rows = reader(consume=True)
    header: list[str] | None = None
    columns: list[list[str]] = []
    n = 0
    try:
        while block := [r for r in itertools.islice(rows, _BLOCK) if _filled(r)]:
            if header is None:
                header = [h.strip() for h in block[0]]
                twice = [h for h, c in Counter(header).items() if c > 1]
                if twice:
                    raise ValueError(f"{name}: {line(0)}: the column {twice[0]!r} appears twice")
                columns = [[] for _ in header]
                block = block[1:]
            if any(len(r) != len(header) for r in block):
                k = next(k for k, r in enumerate(block) if len(r) != len(header))
                where = line(n + k + 1)
                raise ValueError(f"{name}: {where}: {len(block[k])} fields where the header has {len(header)}")
            for col, values in zip(columns, zip(*block)):
                col.extend(values)
            n += len(block)
    except csv.Error as exc:
        bad = reader()
        with contextlib.suppress(csv.Error):
            for _ in bad:
                pass
        raise ValueError(f"{name}: line {bad.line_num}: malformed CSV ({exc})") from None
    if header is None:
        raise ValueError(f"{name}: empty file (no rows)")
    if n == 0:
        raise ValueError(f"{name}: a header and no rows")
    cols = dict(zip(header, columns))
    if header[: len(_EPISODES_TEXT)] == list(_EPISODES_TEXT):
        for key in _EPISODES_TEXT:  # navdtw's episodes.csv: undo its escaping of formula-like text
            cols[key] = [_unescape_cell(v) for v in cols[key]]
    return _Raw(name, cols, n, lambda k: line(k + 1), text_parsed=True)


#: The text columns a suite's ``episodes.csv`` starts with; navdtw writes a cell of them that starts
#: with ``= + - @``, a tab or a carriage return with a leading ``'`` (formula injection,
#: ``navdtw.suite.tables.csv_cell``), which this reader removes again.
_EPISODES_TEXT = ("dataset", "agent", "id", "scan")


def _all_missing(values) -> bool:
    """Every value missing: NaN (Parquet), None (JSON) or an empty cell (CSV)."""
    if isinstance(values, np.ndarray):
        return values.dtype.kind == "f" and bool(np.isnan(values).all())
    return all(
        v is None or (isinstance(v, float) and math.isnan(v)) or (isinstance(v, str) and not v.strip()) for v in values
    )


def _unescape_cell(text: str) -> str:
    return text[1:] if text[:1] == "'" and text[1:2] in ("=", "+", "-", "@", "\t", "\r") else text


def _filled(row: list[str]) -> bool:
    """Not a blank line."""
    return bool(row) and (len(row) > 1 or bool(row[0].strip()))


def _read_parquet(path: Path, name: str) -> _Raw:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise ImportError(
            f"{name}: reading Parquet needs pyarrow: pip install 'navdtw[dask]' (or pip install pyarrow)"
        ) from None
    try:
        table = pq.read_table(path)
    except (pa.ArrowException, OSError) as exc:
        raise ValueError(f"{name}: not a readable Parquet file ({' '.join(str(exc).split())})") from None
    if table.num_rows == 0:
        raise ValueError(f"{name}: no rows")
    columns: dict[str, Any] = {}
    for col_name, col in zip(table.column_names, table.columns):
        t = col.type
        if pa.types.is_floating(t) or pa.types.is_integer(t) or pa.types.is_boolean(t):
            if pa.types.is_integer(t) and col.null_count == 0:
                columns[col_name] = col.to_numpy()  # ids stay exact
            else:
                columns[col_name] = col.cast(pa.float64()).to_numpy(zero_copy_only=False)
        elif pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_dictionary(t):
            columns[col_name] = col.to_pylist()
        else:
            columns[col_name] = [None] * table.num_rows  # nested or temporal: not a metric
    return _Raw(name, columns, table.num_rows, lambda k: f"row {k}")


# --------------------------------------------------------------------------------------------
# values: numbers, text, ids
# --------------------------------------------------------------------------------------------

_NUMBER_TYPES = frozenset({int, float, bool, type(None)})


@dataclass
class _Column:
    """One raw column, classified: ``values`` float64 (NaN where missing) when every value is a
    number; else ``bad`` is the first entry that is not."""

    values: np.ndarray | None
    bad: int | None = None
    text: bool = False  # no number at all (a text column)
    overflow: bool = False  # ``bad`` is a number beyond float's range (1e400): refused in any column


def _classify(raw, text_parsed: bool, stop_at_text: bool) -> _Column:
    """``raw``'s values as numbers. ``stop_at_text``: a column whose first value is text is text
    (the whole column is not scanned)."""
    if isinstance(raw, np.ndarray):
        return _Column(np.array(raw, dtype=np.float64))  # a writable copy
    if not text_parsed:
        kinds = set(map(type, raw))
        if kinds <= _NUMBER_TYPES:
            try:
                return _Column(np.array(raw, dtype=np.float64))
            except OverflowError:  # an int beyond float's range (a 400-digit integer): corrupt
                return _Column(None, bad=next(k for k, v in enumerate(raw) if not _fits(v)), overflow=True)
        for k, v in enumerate(raw):
            if type(v) is _Overflow:
                return _Column(None, bad=k, overflow=True)
            if type(v) not in _NUMBER_TYPES:
                numbers = any(type(x) in _NUMBER_TYPES and x is not None for x in raw)
                return _Column(None, bad=k, text=not numbers)
        raise AssertionError("unreachable")  # pragma: no cover
    try:
        out = np.array(raw, dtype=np.float64)
    except ValueError:
        pass
    else:
        return _overflow_cells(out, raw) or _Column(out)
    out = np.empty(len(raw))
    seen_number = False
    for k, v in enumerate(raw):
        s = v.strip()
        low = s.lower()
        if not s or low in ("null", "none", "na", "n/a"):
            out[k] = np.nan
            continue
        if low in ("true", "false"):
            out[k] = float(low == "true")
        else:
            try:
                out[k] = float(s)
            except ValueError:
                return _Column(None, bad=k, text=not seen_number and (stop_at_text or _no_numbers(raw[k:])))
        seen_number = True
    return _overflow_cells(out, raw) or _Column(out)


#: CSV cells that mean an infinity (``inf``); any other text that float() takes to one is beyond
#: float's range (``1e400``, a 400-digit integer)
_INF_TEXT = frozenset({"inf", "+inf", "-inf", "infinity", "+infinity", "-infinity"})


def _overflow_cells(values: np.ndarray, raw: Sequence[str]) -> _Column | None:
    for k in np.flatnonzero(np.isinf(values)).tolist():
        if raw[k].strip().lower() not in _INF_TEXT:
            return _Column(None, bad=k, overflow=True)
    return None


def _fits(v) -> bool:
    try:
        float(v) if v is not None else None
    except OverflowError:
        return False
    return True


def _no_numbers(values: Sequence[str]) -> bool:
    for v in values:
        try:
            float(v)
            return False
        except ValueError:
            pass
    return True


def _shown(v) -> str:
    text = repr(v)
    return text if len(text) <= 40 else text[:37] + "..."


def _option(col: str, value: str) -> str:
    """A command-line option's value naming a column (``'NAME=VALUE'``), quoted for the shell; a
    name with a line break or a quote is shown as a Python string, so a message stays one line."""
    text = f"{col}={value}"
    return f"'{text}'" if text.isprintable() and "'" not in text else repr(text)


def _ids_of(raw, raw_table: _Raw, column: str) -> list[str]:
    """The ids as strings; ``12``, ``12.0`` and ``"12"`` are the same id."""
    name = raw_table.name
    if isinstance(raw, np.ndarray):
        if raw.dtype.kind in "iu":
            return [str(x) for x in raw.tolist()]
        vals = raw.tolist()
    else:
        vals = raw
    out = []
    for k, v in enumerate(vals):
        if type(v) is str:
            s = v.strip() if raw_table.text_parsed else v
            if s:
                out.append(s)
                continue
        elif type(v) is int:
            out.append(str(v))
            continue
        elif type(v) is float and math.isfinite(v) and v.is_integer():
            out.append(str(int(v)))
            continue
        where = f"{name}: {raw_table.entry(k)}"
        raise ValueError(f"{where}: {column!r} must be a string or an integer id, got {_shown(v)}")
    return out


def _text_of(raw, n: int) -> list[str]:
    if isinstance(raw, np.ndarray):
        return ["" if not math.isfinite(x) else str(x) for x in raw.tolist()]
    return ["" if v is None else str(v) for v in raw]


# --------------------------------------------------------------------------------------------
# the table
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, repr=False)
class ResultsTable:
    """A results table read and checked: one row per episode, the metrics as float64 arrays.

    It is also what :meth:`ResultsBenchmark.match` returns (the suite reads ``ids`` and ``scans``
    as from :class:`~navdtw.datasets.MatchedEpisodes`), and :meth:`evaluate` gives the
    :class:`navdtw.Scores` of its columns.

    Attributes
    ----------
    source:
        the file name (``<input>`` for rows given in Python), as messages name it.
    ids:
        the episode ids as strings, one per row.
    values:
        kept column name (a metric name such as ``"ne"``, or an unknown column's own name) ->
        float64 values, one per row; ``+inf`` distances kept, no NaN.
    columns:
        the file's column name -> its kept name, for the columns compared.
    ignored:
        the file's columns not compared (text, ids, columns mapped to ``"ignore"``).
    directions:
        kept name -> True (higher is better), False (lower is better) or None (no direction).
    rates:
        the kept names that are rates (fractions in [0, 1]).
    scans:
        the scan of each row (``""`` when the table has none).
    paths:
        the path id of each row (episodes on one path are resampled together), or None.
    id_name:
        the id column's name in the file (``"episode_id"``; keyed JSON: ``"episode_id"``).
    groups:
        per-row labels to summarise by (``{"language": [...]}``), empty when the table has none.
    left_out:
        ids of the split's episodes that have no row (when a split is given).
    notes:
        one line per thing the reader did that the user should know (the layout recognised, a
        column left out, an alias that lost to a column named as the metric, split episodes
        without a row, the evaluator's summary checked).
    layout:
        the project layout read (:data:`navdtw.datasets.layouts.LAYOUTS`), or None (a generic table).
    sources:
        the files read (several for one run's shards), absolute.
    settings:
        settings the file gives per row (``{"threshold": 20.0}``: AerialVLN's SUCCESS_DISTANCE).
    constants:
        columns outside the registry with one value in every row: reported once, not compared.
    checks:
        the evaluator's summary against the table, per metric: ``{"metric", "key", "evaluator",
        "recomputed" (the evaluator's mean recomputed from the rows, with its NaN / inf policy),
        "navdtw" (navdtw's mean), "policy", "agrees"}``.
    expected:
        the number of episodes the evaluator says it evaluated (its summary's ``length``), or None.
    summary:
        the evaluator's summary record checked: ``{"where"`` (its file and line), ``"layout"``,
        ``"project"``, ``"length"}``, or None when the file has none.
    """

    source: str
    ids: list[str]
    values: dict[str, np.ndarray]
    columns: dict[str, str]
    ignored: tuple[str, ...]
    directions: dict[str, bool | None]
    rates: frozenset[str]
    scans: list[str]
    paths: list[str] | None = None
    id_name: str = "episode_id"
    groups: dict[str, list] = field(default_factory=dict)
    left_out: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    layout: str | None = None
    sources: tuple[str, ...] = ()
    settings: dict[str, float] = field(default_factory=dict)
    constants: dict[str, float] = field(default_factory=dict)
    checks: tuple[dict[str, Any], ...] = ()
    expected: int | None = None
    summary: dict[str, Any] | None = None

    #: no graphs and no paths: a results table holds scores, not trajectories
    graphs = None
    env = None

    def __len__(self) -> int:
        return len(self.ids)

    def __repr__(self) -> str:
        return f"ResultsTable({self.source}: {len(self)} episodes; {listed(self.values)})"

    def start_note(self, source: str) -> None:
        """None: a results table holds no trajectories whose starts could be checked (the same
        method as :class:`~navdtw.datasets.MatchedEpisodes`, for the suite).

        Parameters
        ----------
        source : str
            Not used.

        Returns
        -------
        None
        """
        return None

    def records(self) -> dict[str, Metric]:
        """The :class:`navdtw.registry.Metric` record of every kept column: the registry's for a
        metric, else one with the column's name as label, its direction and whether it is a rate.

        Returns
        -------
        dict[str, navdtw.registry.Metric]
            Kept name -> its record.
        """
        out = {}
        for name in self.values:
            if name in registry.names():
                out[name] = registry.get(name)
            else:
                out[name] = Metric(
                    _identifier(name),
                    name,
                    _read_from_table,
                    rate=name in self.rates,
                    higher_is_better=self.directions.get(name),
                    description="read from a results table",
                )
        return out

    def evaluate(
        self,
        *,
        convention: str | None = None,
        threshold: float | None = None,
        metrics: Iterable[str] | None = None,
        **_: Any,
    ) -> Scores:
        """The table's values as :class:`navdtw.Scores` (``summary()``, ``to_csv()``, ...), ids and
        groups included; ``metrics``: the kept names to keep (default all). Nothing is computed:
        ``threshold`` and ``convention`` are recorded only (the table's evaluator applied its own).

        Parameters
        ----------
        convention : str, optional
            Not used: the scores' convention is ``external``.
        threshold : float, optional
            Recorded in the scores (default 3.0; the file's own where it gives one per row).
        metrics : iterable of str, optional
            The kept names to keep (default all).

        Returns
        -------
        navdtw.Scores
            The columns, with the table's ids and groups.

        Raises
        ------
        ValueError
            A name in ``metrics`` that the table does not have.
        """
        names = list(self.values) if metrics is None else list(metrics)
        missing = [m for m in names if m not in self.values]
        if missing:
            raise ValueError(f"{self.source}: no column {missing[0]!r}; the table has {listed(self.values)}")
        records = self.records()
        if "threshold" in self.settings:  # the file's own (AerialVLN's SUCCESS_DISTANCE), recorded
            threshold = self.settings["threshold"]
        scores = Scores(
            {m: self.values[m] for m in names},
            threshold=3.0 if threshold is None else float(threshold),
            convention=EXTERNAL,
            ids=self.ids,
            records={m: records[m] for m in names},
        )
        scores.groups = {k: list(v) for k, v in self.groups.items()}
        return scores

    def take(self, ids: Sequence[str]) -> ResultsTable:
        """The rows of some episodes.

        Parameters
        ----------
        ids : sequence of str
            Episode ids, each in the table.

        Returns
        -------
        ResultsTable
            Those rows, in that order.

        Raises
        ------
        ValueError
            An id without a row (naming the file, the first few and the count).
        """
        pos = {i: k for k, i in enumerate(self.ids)}
        missing = [i for i in ids if i not in pos]
        if missing:
            raise ValueError(f"{self.source}: no row for {show(self.id_name)} {few(missing)}")
        idx = np.fromiter((pos[i] for i in ids), dtype=np.intp, count=len(ids))
        return replace(
            self,
            ids=list(ids),
            values={k: v[idx] for k, v in self.values.items()},
            scans=[self.scans[k] for k in idx.tolist()],
            paths=None if self.paths is None else [self.paths[k] for k in idx.tolist()],
            groups={g: [v[k] for k in idx.tolist()] for g, v in self.groups.items()},
        )


def _flag(value, name: str) -> bool:
    if isinstance(value, str) and value.lower() in ("true", "false"):  # from the command line
        return value.lower() == "true"
    if not isinstance(value, bool):
        raise ValueError(f"{name}: expected true or false, got {value!r}")
    return value


def _read_from_table(ctx):  # pragma: no cover - never called: the values are read, not computed
    raise ValueError("a results-table column is read from its file, not computed")


def _identifier(name: str) -> str:
    """A registry-style name (lowercase identifier) for a column's record."""
    out = re.sub(r"\W", "_", name.lower())
    return out if out.isidentifier() else f"c_{out}"


def _norm(column: str) -> str:
    return re.sub(r"[\s\-]+", "_", column.strip().lower())


def _first(names: Iterable[str], wanted: Sequence[str]) -> str | None:
    by_norm: dict[str, str] = {}
    for n in names:
        by_norm.setdefault(_norm(n), n)
    return next((by_norm[w] for w in wanted if w in by_norm), None)


def load_results(
    path: PathLike | Sequence[Mapping[str, Any]],
    *,
    columns: Mapping[str, str] | Sequence[str] | None = None,
    percent: bool | str | Sequence[str] = False,
    id_column: str | None = None,
    path_column: str | None = None,
    select: Mapping[str, str] | Sequence[str] | None = None,
    layout: str | None = None,
    recursive: bool = False,
    errors: dict[str, str] | None = None,
) -> ResultsTable:
    """Reads a results table: per-episode metrics computed elsewhere (the module's formats).

    Parameters
    ----------
    path:
        a JSON Lines, JSON, CSV / TSV or Parquet file (gzipped or not), or the rows as a list of
        dicts; or one run's results in several files (:mod:`navdtw.datasets.shards`): a folder, a
        glob pattern, a list of file names, or one rank's file of a run written per rank
        (``*_r{rank}_w{world}.json``: every rank is read).
    columns:
        explicit column mappings (:func:`~navdtw.datasets.results.parse_columns`): ``{"Oracle SR": "osr", "TCR": "-",
        "instruction": "ignore"}``.
    percent:
        ``True`` when every rate column is in percent, or the columns that are (``["spl"]``).
    id_column:
        the id column (default: the first of :data:`~navdtw.datasets.results.ID_COLUMNS`; a keyed JSON object's keys).
    path_column:
        the column of path ids (default: the first of ``path_id``, ``trajectory_id``).
    select:
        keep the rows whose columns hold these values (text): ``{"agent": "mine"}`` for a suite's
        ``episodes.csv``, which holds every agent and data set.
    layout:
        the project layout (a name of :data:`navdtw.datasets.layouts.LAYOUTS`); default: recognised
        from the file's name and content, or none (a generic table).
    recursive:
        a folder's subfolders are read too.
    errors:
        if given, a column whose values break the non-finite policy (a NaN no formula defines) is
        left out of the table and its message stored here (``{metric: message}``) instead of
        raised, as :func:`navdtw.registry.nonfinite_policy` does (a suite fails that column only).

    Returns
    -------
    :class:`~navdtw.datasets.results.ResultsTable`

    Raises
    ------
    ValueError
        for a malformed file or entry, no id column, a duplicated id, a value that is not a number
        in a metric column, a rate outside [0, 1] (a percentage: the message suggests ``percent``),
        a negative distance, a NaN that no formula defines, a number beyond float's range, a file
        that holds the evaluator's means (read those with
        :func:`~navdtw.datasets.results.load_means`), a missing rank of a sharded run, ids shared by
        two shards. The message names the file, the entry and the column.
    ImportError
        for a Parquet file without pyarrow.
    """
    columns = parse_columns(columns)
    percent = parse_percent(percent)
    select = parse_select(select)
    if layout is not None:
        layouts.layout(layout)  # known, or a ValueError naming the layouts
    with _gc_paused():
        return _load(path, columns, percent, id_column, path_column, select, errors, layout, recursive)


@contextlib.contextmanager
def _gc_paused():
    """Millions of new lists and strings, none in a reference cycle: the cyclic garbage collector's
    passes over them cost a third of a large CSV's reading time, and find nothing."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _load(path, columns, percent, id_column, path_column, select, errors=None, layout=None, recursive=False):
    with routed(path, "results"):  # not a results table (trajectories, a split, a log): say what it is
        table = _load_table(path, columns, percent, id_column, path_column, select, errors, layout, recursive)
    if not set(table.values) & set(registry.names()):  # no metric of its own: trajectories read as columns?
        refuse_other_shape(path, "results")
    return table


def _load_table(path, columns, percent, id_column, path_column, select, errors=None, layout=None, recursive=False):
    if is_path(path) or _is_path_list(path):
        raw = _gather(path, layout, recursive, id_column)
        if raw.means is not None:
            raise ValueError(_means_message(raw))
    else:
        rows = list(path)  # type: ignore[arg-type]
        for k, row in enumerate(rows):
            if not isinstance(row, Mapping):
                raise ValueError(f"{INPUT}: entry {k}: expected a dict (one episode), got {type(row).__name__}")
        if not rows:
            raise ValueError(f"{INPUT}: no rows")
        raw = _Raw(INPUT, _columns_of([dict(r) for r in rows]), len(rows), lambda k: f"entry {k}")
    return _build(raw, columns, percent, id_column, path_column, select, errors)


@dataclass(frozen=True)
class EvaluatorMeans:
    """An evaluator's means file read as its reported figures (:func:`load_means`).

    Attributes
    ----------
    source:
        the file's name.
    layout:
        the project layout recognised (or given), or None.
    figures:
        metric (the registry's name where the key is one of its names or aliases, else the key)
        -> the evaluator's mean; rates as fractions. Non-finite means are left out (``notes``).
    length:
        the episode count the file states, or None.
    notes:
        what was left out and why (a NaN or Infinity mean, a setting).
    path:
        the file, absolute.
    """

    source: str
    layout: str | None
    figures: dict[str, float]
    length: int | None = None
    notes: tuple[str, ...] = ()
    path: str = ""


def load_means(path: PathLike, *, layout: str | None = None) -> EvaluatorMeans:
    """Reads an evaluator's means file (VLN-CE, ETPNav, AerialVLN and HA-VLN's ``stats_ckpt_*.json``,
    InternNav's ``result.json``, StreamVLN's summary) as the figures it reports: what
    ``--reported-from`` (``reported_from`` in a suite file) checks the agent's measured means
    against. A per-episode file with a summary record gives that record.

    Parameters
    ----------
    path : str or os.PathLike
        The means file.
    layout : str, optional
        The project layout (default: recognised).

    Returns
    -------
    EvaluatorMeans

    Raises
    ------
    ValueError
        A malformed file, or one without means (per-episode results without a summary).
    """
    path = Path(path)
    raw = _read_one(path, layout, None)
    record = raw.means if raw.means is not None else (raw.summaries[-1][1] if raw.summaries else None)
    if record is None:
        raise ValueError(
            f"{path.name}: holds per-episode results, not an evaluator's means: give it as the agent's results"
        )
    lay = raw.layout if raw.layout is not None and raw.layout.holds == "means" else layouts.summary_layout(record)
    keys = dict(lay.summary.keys) if lay is not None and lay.summary is not None else {}
    skip = {lay.summary.length} if lay is not None and lay.summary is not None else set()
    skip |= set(lay.settings) if lay is not None else set()
    skip |= {"SUCCESS_DISTANCE", "length"}
    figures: dict[str, float] = {}
    notes: list[str] = []
    for key, value in record.items():
        if type(value) is _Overflow:
            raise ValueError(f"{path.name}: {key!r} is {_shown(str(value))}, beyond float's range: a corrupt value")
        if key in skip or type(value) not in _NUMBER_TYPES or value is None:
            continue
        n = _norm(key)
        metric = keys.get(key) or (n if n in registry.names() or n in EXTRA_COLUMNS else ALIASES.get(n, key))
        x = float(value)
        if not math.isfinite(x):
            notes.append(f"{key} is {'NaN' if math.isnan(x) else 'Infinity'}: not a figure to check against")
            continue
        figures[metric] = x
    length = record.get("length")
    return EvaluatorMeans(
        path.name,
        None if lay is None else lay.name,
        figures,
        length if type(length) is int else None,
        tuple(notes),
        str(path.resolve()),
    )


def _is_path_list(obj) -> bool:
    return isinstance(obj, (list, tuple)) and bool(obj) and all(is_path(p) for p in obj)


def _gather(path, layout: str | None, recursive: bool, id_column: str | None) -> _Raw:
    """One run's files (:func:`navdtw.datasets.shards.files_of`) read as one table, each file's
    summary records taken out and its layout recognised."""
    from .shards import files_of

    files = files_of(path, recursive=recursive)
    parts = [_read_one(p, layout, id_column) for p in files.paths]
    raw = parts[0] if len(parts) == 1 else _concat(parts, files.label)
    raw.sources = tuple(str(p.resolve()) for p in files.paths)
    raw.how = files.how
    return raw


def _read_one(path: Path, layout: str | None, id_column: str | None) -> _Raw:
    raw = _read_raw(path)
    _take_summaries(raw, id_column)
    if layout is not None:
        raw.layout = layouts.layout(layout)
        return raw
    record = raw.means if raw.means is not None else dict.fromkeys(c.split(".", 1)[0] for c in raw.columns)
    raw.layout = layouts.recognise(path.name, record, "means" if raw.means is not None else "episodes")
    return raw


def _is_summary(record: Mapping) -> bool:
    """An evaluator's summary record (no episode id): a known summary shape, or numbers with a
    ``length`` (an episode count)."""
    if layouts.summary_layout(record) is not None:
        return True
    return "length" in record and all(type(v) in _NUMBER_TYPES for v in record.values())


def _take_summaries(raw: _Raw, id_column: str | None) -> None:
    """Moves the summary records of a JSON file (records without an id, of a summary's shape) from
    its rows to ``raw.summaries``; a file of summaries only holds means (``raw.means``: the last)."""
    if raw.text_parsed or raw.keys is not None or raw.means is not None:
        return
    if any(isinstance(c, np.ndarray) for c in raw.columns.values()):
        return
    id_col = id_column if id_column in raw.columns else _first(raw.columns, ID_COLUMNS)
    drop = []
    for k in range(raw.n) if id_col is None else [k for k, v in enumerate(raw.columns[id_col]) if v is None]:
        record = {c: col[k] for c, col in raw.columns.items() if col[k] is not None}
        if _is_summary(record):
            drop.append(k)
            raw.summaries.append((raw.entry(k), record))
    if not drop:
        return
    if len(drop) == raw.n:
        raw.means = raw.summaries[-1][1]
        return
    gone = set(drop)
    keep = [k for k in range(raw.n) if k not in gone]
    columns = {c: [col[k] for k in keep] for c, col in raw.columns.items()}
    raw.columns = {c: col for c, col in columns.items() if any(v is not None for v in col)}
    entry = raw.entry
    raw.entry = lambda j: entry(keep[j])
    raw.n = len(keep)


def _concat(parts: list[_Raw], label: str) -> _Raw:
    """The files of one run as one table; entries name their file."""
    for part in parts:
        if part.means is not None:
            raise ValueError(
                f"{part.name}: holds the evaluator's means, not episodes: leave it out of the run's files "
                "(it is the agent's reported figures: --reported-from)"
            )
    if len({p.text_parsed for p in parts}) > 1 or len({p.keys is None for p in parts}) > 1:
        raise ValueError(f"{label}: the files of one run are in different formats ({parts[0].name}, {parts[-1].name})")
    columns: dict[str, list] = {}
    where: list[tuple[int, int]] = []
    for j, part in enumerate(parts):
        cols = {c: (v.tolist() if isinstance(v, np.ndarray) else v) for c, v in part.columns.items()}
        _extend(columns, cols, len(where), part.n)
        where.extend((j, k) for k in range(part.n))
    keys = None if parts[0].keys is None else [k for p in parts for k in p.keys or ()]
    lays = {None if p.layout is None else p.layout.name for p in parts}
    return _Raw(
        label,
        columns,
        len(where),
        lambda k: f"{parts[where[k][0]].name} {parts[where[k][0]].entry(where[k][1])}",
        keys=keys,
        text_parsed=parts[0].text_parsed,
        summaries=[s for p in parts for s in ((f"{p.name} {w}", r) for w, r in p.summaries)],
        layout=parts[0].layout if len(lays) == 1 else None,
    )


def _means_message(raw: _Raw) -> str:
    lay = raw.layout or layouts.summary_layout(raw.means or {})
    who = f" ({lay.project}'s {lay.pattern})" if lay is not None else ""
    length = (raw.means or {}).get("length")
    over = f" over {length} episodes" if isinstance(length, int) else ""
    return (
        f"{raw.name}: holds the evaluator's means{over}{who}, not per-episode results: give it as the agent's "
        f'reported figures (--reported-from {raw.name}; reported_from = "..." in a suite file), beside the '
        "per-episode results or trajectories of the same run"
    )


def _select_rows(raw: _Raw, select: Mapping[str, str]) -> _Raw:
    keep = np.ones(raw.n, dtype=bool)
    for col, want in select.items():
        if col not in raw.columns:
            raise ValueError(f"{raw.name}: select: no column {col!r} (columns: {listed(raw.columns)})")
        text = np.array(_text_of(raw.columns[col], raw.n), dtype=object)
        hit = text == want
        if not hit.any():
            values = listed(sorted(set(text.tolist())), 8)
            raise ValueError(f"{raw.name}: no row has {show(col)} = {want!r} ({show(col)} values: {values})")
        keep &= hit
    if not keep.any():
        raise ValueError(f"{raw.name}: no row matches every selection ({select})")
    idx = np.flatnonzero(keep)
    rows = idx.tolist()
    cols = {k: (v[idx] if isinstance(v, np.ndarray) else [v[i] for i in rows]) for k, v in raw.columns.items()}
    # a column that none of the chosen rows fills belongs to the other rows (a suite's episodes
    # file holds the metrics of every data set, each missing on the others' rows): not this table's
    cols = {k: v for k, v in cols.items() if k in select or not _all_missing(v)}
    keys = None if raw.keys is None else [raw.keys[i] for i in rows]
    entry = raw.entry
    return replace(raw, columns=cols, n=len(rows), entry=lambda k: entry(rows[k]), keys=keys)


def _build(
    raw: _Raw,
    mapping: Mapping[str, str],
    percent: bool | tuple[str, ...],
    id_column: str | None,
    path_column: str | None,
    select: Mapping[str, str],
    errors: dict[str, str] | None = None,
) -> ResultsTable:
    name = raw.name
    notes: list[str] = []
    if select:
        chosen = _select_rows(raw, select)
        empty = [c for c in raw.columns if c not in chosen.columns]
        if empty:
            notes.append(f"column(s) {', '.join(map(repr, empty))}: empty on the rows selected: left out")
        raw = chosen
    if raw.n == 0:
        raise ValueError(f"{name}: no rows")
    cols = raw.columns

    # ids
    if id_column is not None:
        if id_column not in cols:
            raise ValueError(f"{name}: no id column {id_column!r} (columns: {listed(cols)})")
        id_name, ids = id_column, _ids_of(cols[id_column], raw, id_column)
    elif raw.keys is not None:
        id_name, ids = "episode_id", raw.keys
    else:
        found = _first(cols, ID_COLUMNS)
        if found is None:
            what = " (one object: means over episodes are not per-episode results)" if raw.n == 1 else ""
            raise ValueError(
                f"{name}: no id column{what}; name it with --id-column (id_column in a suite file); "
                f"looked for {', '.join(ID_COLUMNS)}; columns: {listed(cols, 12)}"
            )
        id_name, ids = found, _ids_of(cols[found], raw, found)
    _check_unique(ids, raw, id_name)

    def entry(k: int) -> str:
        return f"{raw.entry(k)} ({show(id_name)} {show(ids[k])})"

    # the columns that are not metrics
    reserved = {c for c in cols if _norm(c) in ID_COLUMNS} | {id_name} | set(select)
    if path_column is not None and path_column not in cols:
        raise ValueError(f"{name}: no path column {path_column!r} (columns: {listed(cols)})")
    path_col = path_column or _first(cols, PATH_COLUMNS)
    scan_col = _first(cols, SCAN_COLUMNS)
    group_cols = [c for c in cols if _norm(c) in GROUP_COLUMNS]
    for c in (path_col, scan_col, *group_cols):
        if c is not None:
            reserved.add(c)
    paths = None if path_col is None else _ids_of(cols[path_col], raw, path_col)
    scans = [""] * raw.n if scan_col is None else _scans(_text_of(cols[scan_col], raw.n))
    groups = {_norm(c): _text_of(cols[c], raw.n) for c in group_cols}

    # which column is which metric
    unknown_maps = [c for c in mapping if c not in cols]
    if unknown_maps:
        raise ValueError(f"{name}: columns: no column {unknown_maps[0]!r} in this table (columns: {listed(cols)})")
    lay, given = raw.layout, mapping
    settings: dict[str, float] = {}
    if lay is not None:
        notes.append(f"read as {lay.project}'s {lay.pattern} (layout {lay.name})" + (f": {raw.how}" if raw.how else ""))
        if lay.summary_last and not raw.summaries:
            notes.append(
                f"no summary record: {lay.project} appends one after the episodes when every rank has finished, so "
                "this is an unfinished evaluation's file and may cover part of the split (give the split to check)"
            )
        mapping = {**{c: t for c, t in lay.columns.items() if c in cols}, **mapping}
        for col, setting in lay.settings.items():
            if col in cols and col not in given:
                settings[setting] = _setting(cols[col], col, setting, raw, entry)
                reserved.add(col)
                notes.append(f"{setting} {settings[setting]:g} from the file's {show(col)} ({lay.project}), recorded")
    elif raw.how:
        notes.append(raw.how)
    unnamed = [c for c in cols if not c.strip()]
    if unnamed:
        notes.append("a column without a name (a written index?) is ignored")
    candidates = [c for c in cols if c.strip() and (c not in reserved or c in mapping)]
    targets = _targets(candidates, mapping, name, notes)

    values: dict[str, np.ndarray] = {}
    kept: dict[str, str] = {}
    directions: dict[str, bool | None] = {}
    rates: set[str] = set()
    ignored = [c for c in cols if c not in targets]
    percent_names = set(percent) if isinstance(percent, tuple) else set()
    for col, (target, direction, rate, strict) in targets.items():
        parsed = _classify(cols[col], raw.text_parsed, stop_at_text=not strict)
        if parsed.overflow:
            bad = parsed.bad or 0
            raise ValueError(
                f"{name}: {entry(bad)}: {col!r} is {_shown(str(cols[col][bad]))}, beyond float's range: a corrupt "
                "value (only the evaluators' Infinity token, inf in CSV, means an unreachable goal)"
            )
        if parsed.values is None:
            if strict:
                bad = parsed.bad or 0
                value = cols[col][bad]
                raise ValueError(f"{name}: {entry(bad)}: {col!r} must be a number, got {_shown(value)}")
            ignored.append(col)
            if not parsed.text:
                notes.append(
                    f"column {col!r} mixes numbers and text ({entry(parsed.bad or 0)}: "
                    f"{_shown(cols[col][parsed.bad or 0])}): ignored (map it with --column {_option(col, 'METRIC')})"
                )
            continue
        v = parsed.values
        if not strict and np.isnan(v).all():
            ignored.append(col)
            notes.append(f"column {col!r} holds no numbers: ignored")
            continue
        if rate:
            in_percent = percent is True or col in percent_names or target in percent_names
            v = _fraction(v, col, in_percent, name, entry, percent is not False)
        elif target in registry.names() and registry.get(target).unit == "m" and target != "gp":
            low = np.flatnonzero(v < 0)
            if low.size:
                k = int(low[0])
                raise ValueError(f"{name}: {entry(k)}: {col!r} is a distance and must be >= 0, got {float(v[k])!r}")
        values[target], kept[col] = v, target
        directions[target] = direction
        if rate:
            rates.add(target)
    if isinstance(percent, tuple):
        known = set(kept) | set(kept.values())
        unknown = [p for p in percent if p not in known]
        if unknown:
            raise ValueError(f"{name}: percent: no rate column {unknown[0]!r} (rate columns: {listed(sorted(rates))})")
    constants = {} if lay is None else _constants(values, kept, directions, rates, mapping, raw.n, notes)
    as_read = {k: v.copy() for k, v in values.items()}
    failed: dict[str, str] = {}
    _formula_nans(values, kept, name, entry, ids, None if errors is None else failed)
    if failed:  # left out: the caller records each column's failure
        kept = {c: k for c, k in kept.items() if k not in failed}
        if not values:
            raise ValueError(next(iter(failed.values())))
        errors.update(failed)  # type: ignore[union-attr]
    if not values:
        raise ValueError(f"{name}: no metric column (columns: {listed(cols)}); map one with --column NAME=METRIC")
    checks, expected, summary = _cross_check(raw, as_read, values, notes)
    return ResultsTable(
        source=name,
        ids=ids,
        values=values,
        columns=kept,
        ignored=tuple(ignored),
        directions=directions,
        rates=frozenset(rates),
        scans=scans,
        paths=paths,
        id_name=id_name,
        groups=groups,
        notes=tuple(notes),
        layout=None if lay is None else lay.name,
        sources=raw.sources,
        settings=settings,
        constants=constants,
        checks=tuple(checks),
        expected=expected,
        summary=summary,
    )


def _setting(raw_values, col: str, setting: str, raw: _Raw, entry: Callable[[int], str]) -> float:
    """A per-row setting (AerialVLN's SUCCESS_DISTANCE): one positive number in every row."""
    parsed = _classify(raw_values, raw.text_parsed, stop_at_text=False)
    v = parsed.values
    if v is None or not np.isfinite(v).all() or (v <= 0).any():
        k = parsed.bad if v is None else int(np.flatnonzero(~np.isfinite(v) | (v <= 0))[0])
        raise ValueError(f"{raw.name}: {entry(k or 0)}: {col!r} is the {setting} and must be a positive number")
    if (v != v[0]).any():
        k = int(np.flatnonzero(v != v[0])[0])
        raise ValueError(
            f"{raw.name}: {entry(k)}: {col!r} is the {setting} and differs between rows ({v[0]:g} and {v[k]:g}): "
            "one table has one"
        )
    return float(v[0])


def _constants(
    values: dict[str, np.ndarray],
    kept: dict[str, str],
    directions: dict,
    rates: set,
    given: Mapping[str, str],
    n: int,
    notes: list[str],
) -> dict[str, float]:
    """Columns of a project's layout, outside the registry and not mapped (by the user or the
    layout), that hold one value in every row (a setting or a flag the evaluator writes per row: AerialVLN's ``done``):
    reported once, not compared as metrics."""
    out: dict[str, float] = {}
    if n < 2:
        return out
    for col, k in list(kept.items()):
        if k in registry.names() or k in EXTRA_COLUMNS or col in given:
            continue
        v = values[k]
        if np.isfinite(v).all() and (v == v[0]).all():
            out[col] = float(v[0])
            del values[k], kept[col], directions[k]
            rates.discard(k)
    if out:
        shown = ", ".join(f"{c} = {x:g}" for c, x in out.items())
        notes.append(f"the same in every row, reported once and not compared: {shown}")
    return out


def _cross_check(
    raw: _Raw, as_read: Mapping[str, np.ndarray], values: Mapping[str, np.ndarray], notes: list[str]
) -> tuple[list[dict[str, Any]], int | None, dict[str, Any] | None]:
    """The evaluator's summary record (the last one) against navdtw's means, per metric: the
    evaluator's figure, the same mean recomputed from the file's episodes with the evaluator's NaN
    and infinity handling, and navdtw's mean (its non-finite policy). Returns the checks, the
    summary's episode count and where the summary is (``ResultsTable.summary``)."""
    if not raw.summaries:
        return [], None, None
    where, record = raw.summaries[-1]
    lay = layouts.summary_layout(record)
    length = record.get("length")
    expected = int(length) if type(length) is int and length >= 0 else None
    words: list[str] = []
    checks: list[dict[str, Any]] = []
    for key, metric in lay.summary.keys.items() if lay is not None and lay.summary is not None else ():
        if key not in record or metric not in values or type(record[key]) not in _NUMBER_TYPES - {type(None)}:
            continue
        assert lay is not None and lay.summary is not None
        policy = lay.summary.policy_of(metric)
        theirs = float(record[key])
        again = layouts.evaluator_mean(as_read[metric], policy)
        ours = values[metric][np.isfinite(values[metric])]
        mine = float(ours.mean()) if ours.size else math.nan
        agrees = (
            (math.isnan(theirs) and math.isnan(again))
            or theirs == again
            or (math.isfinite(theirs) and math.isfinite(again) and abs(theirs - again) <= 1e-6 + 1e-4 * abs(again))
        )
        checks.append(
            {"metric": metric, "key": key, "evaluator": theirs, "recomputed": again, "navdtw": mine,
             "policy": policy, "agrees": bool(agrees)}
        )  # fmt: skip
        odd = int((~np.isfinite(as_read[metric])).sum())
        if not agrees:
            words.append(
                f"{key} {theirs:.6g} DIFFERS from {again:.6g}, its mean over this file's {len(values[metric])} "
                f"episodes (the evaluator {layouts.policy_words(policy)}): the summary averaged other episodes"
            )
        elif math.isfinite(theirs) and abs(theirs - mine) <= 1e-6 + 1e-4 * abs(mine):
            words.append(f"{key} {theirs:.4f} = navdtw's {metric} {mine:.4f}")
        else:
            what = "NaN" if math.isnan(theirs) else f"{theirs:.4f}" if math.isfinite(theirs) else "Infinity"
            words.append(
                f"{key} {what} (the evaluator {layouts.policy_words(policy)}; {odd} episode(s) NaN or infinite in "
                f"the file); navdtw's {metric} {mine:.4f} (its non-finite policy)"
            )
    head = f"the evaluator's summary ({where}"
    head += f", {lay.project}" if lay is not None else ""
    rows = len(next(iter(values.values())))
    head += f", {expected} episodes" if expected is not None else ""
    # a summary over more episodes than the file holds: said here too, where no split checks it
    head += f"; the file has {rows}: PARTIAL)" if expected is not None and rows < expected else ")"
    notes.append(head + (": " + "; ".join(words) if words else ": left out of the episodes"))
    summary = {
        "where": where,
        "layout": None if lay is None else lay.name,
        "project": None if lay is None else lay.project,
        "length": expected,
    }
    return checks, expected, summary


def _scans(texts: list[str]) -> list[str]:
    """``mp3d/X/X.glb`` -> ``X``; a plain scan id as it is (each distinct text converted once)."""
    stem = {t: Path(t).stem if "/" in t or t.endswith(".glb") else t for t in set(texts)}
    return [stem[t] for t in texts]


def _check_unique(ids: list[str], raw: _Raw, id_name: str) -> None:
    counts = Counter(ids)
    if len(counts) == len(ids):
        return
    dups = [i for i, c in counts.items() if c > 1]
    first = ids.index(dups[0])
    second = ids.index(dups[0], first + 1)
    hint = ""
    multi = [c for c in ("agent", "dataset") if c in raw.columns and len(set(_text_of(raw.columns[c], raw.n))) > 1]
    if multi:
        several = " and ".join(m + "s" for m in multi)
        hint = f"; the table holds several {several}: choose rows with " + " ".join(f"--select {m}=NAME" for m in multi)
    raise ValueError(
        f"{raw.name}: duplicate {show(id_name)} {few(dups)}: {show(dups[0])} is at {raw.entry(first)} and "
        f"{raw.entry(second)}; each episode needs one row{hint}"
    )


def _targets(
    candidates: list[str], mapping: Mapping[str, str], name: str, notes: list[str]
) -> dict[str, tuple[str, bool | None, bool, bool]]:
    """column -> (kept name, direction, is a rate, strict: a non-number is an error) for the columns
    to compare. Priority for one metric: an explicit mapping, then a column named as the metric,
    then an alias; two at the same level are an error, lower ones keep their own names."""
    metric_names = set(registry.names())
    claims: dict[str, list[tuple[int, str]]] = {}
    out: dict[str, tuple[str, bool | None, bool, bool]] = {}
    for col in candidates:
        explicit = mapping.get(col)
        n = _norm(col)
        if explicit == _IGNORE:
            continue
        if explicit in _DIRECTIONS:
            out[col] = (col, _DIRECTIONS[explicit], False, True)
            continue
        if explicit is not None:
            claims.setdefault(explicit, []).append((0, col))
        elif n in metric_names or n in EXTRA_COLUMNS:
            claims.setdefault(n, []).append((1, col))
        elif n in ALIASES:
            claims.setdefault(ALIASES[n], []).append((2, col))
        else:
            out[col] = (col, None, False, False)  # unknown: kept if numeric, no direction
    for target, cs in claims.items():
        cs.sort(key=lambda c: c[0])  # by level, file order within a level
        top = [c for level, c in cs if level == cs[0][0]]
        if len(top) > 1:
            raise ValueError(
                f"{name}: columns {top[0]!r} and {top[1]!r} both give {target}; leave one out with "
                f"--column {_option(top[1], 'ignore')} (or map it to another metric)"
            )
        direction, rate = _direction_rate(target)
        out[top[0]] = (target, direction, rate, True)
        for _, col in cs[1:]:
            if col in claims or _norm(col) in claims:  # its own name is a metric another column gives
                notes.append(f"column {col!r} is ignored: {top[0]!r} gives {target}")
                continue
            notes.append(f"column {col!r} is kept under its own name: {top[0]!r} gives {target}")
            out[col] = (col, direction, rate, True)
    order = {c: k for k, c in enumerate(candidates)}
    return dict(sorted(out.items(), key=lambda kv: order[kv[0]]))


def _direction_rate(target: str) -> tuple[bool | None, bool]:
    if target in EXTRA_COLUMNS:
        return EXTRA_COLUMNS[target]
    m = registry.get(target)
    return m.higher_is_better, bool(m.rate)


def _fraction(
    v: np.ndarray, col: str, in_percent: bool, name: str, entry: Callable[[int], str], percent_given: bool
) -> np.ndarray:
    """A rate column as fractions in [0, 1] (NaN kept for the formula rule), or a ValueError."""
    finite = v[np.isfinite(v)]
    if in_percent:
        top = float(finite.max()) if finite.size else 0.0
        if 0.0 < top <= 1.0:
            raise ValueError(
                f"{name}: percent: {col!r} holds fractions already (largest value {top:g}); give percent "
                "only for the columns in percent (--percent-columns NAME,...)"
            )
        v = v / 100.0
    bad = np.flatnonzero(np.isinf(v) | (v < 0) | (v > 1))
    if bad.size:
        k = int(bad[0])
        x = float(v[k]) * (100.0 if in_percent else 1.0)
        if not in_percent and 1.0 < x <= 100.0:
            more = "" if percent_given else f" --percent (or --percent-columns {show(col)})"
            raise ValueError(
                f"{name}: {entry(k)}: {col!r} is a rate and must be a fraction in [0, 1], got {x:g}: "
                f"a percentage? Say so with{more or ' the percent option for this column'}"
            )
        scale = "percentage in [0, 100]" if in_percent else "fraction in [0, 1]"
        raise ValueError(f"{name}: {entry(k)}: {col!r} is a rate and must be a {scale}, got {x!r}")
    return v


def _formula_nans(
    values: dict[str, np.ndarray],
    kept: Mapping[str, str],
    name: str,
    entry: Callable[[int], str],
    ids: list[str],
    errors: dict[str, str] | None = None,
) -> None:
    """The non-finite policy (:func:`navdtw.registry.nonfinite_policy`, the one rule): a NaN (or a
    missing value) is 0 where the metric's formula says so (SPL, SDTW, SED where success is 0;
    RGSPL where RGS is 0), any other is an error naming the file, the entry and the column.

    One detail of results tables: SPL's formula is 0 where *plain* success is 0. A table may hold a
    column ``SR`` (the metric ``sr``: HA-VLN's success without a collision, stricter) and a column
    ``success`` (plain success, then kept under its own name): the rule reads ``success`` there."""
    col_of = {k: c for c, k in kept.items()}
    plain = next((values[k] for c, k in kept.items() if _norm(c) == "success" and k != "sr"), None)
    fixed = registry.nonfinite_policy(
        values,
        ids=ids,
        source=name,
        where=entry,
        columns={k: repr(c) for k, c in col_of.items()},
        indicators=None if plain is None else {"sr": ("success", plain)},
        hint=lambda k: f"--column {_option(col_of[k], 'ignore')} leaves the column out",
        nan="NaN or missing",
        errors=errors,
    )
    for k in errors or {}:
        del values[k]
    values.update(fixed)


def align(tables: Sequence[ResultsTable]) -> list[str]:
    """The episode ids shared by ``tables`` (several runs, or agents), in the first table's order,
    when every table has the same ids; otherwise a ``ValueError`` naming the file and its missing or
    extra ids (the first few and the count), never a silent inner join.

    Parameters
    ----------
    tables : sequence of ResultsTable
        The tables to compare.

    Returns
    -------
    list of str
        The ids, in the first table's order (empty for no table).

    Raises
    ------
    ValueError
        A table that lacks some of the first table's ids, or has others.
    """
    if not tables:
        return []
    first = tables[0]
    ref = set(first.ids)
    for t in tables[1:]:
        have = set(t.ids)
        missing = [i for i in first.ids if i not in have]
        if missing:
            raise ValueError(f"{t.source}: no row for {show(t.id_name)} {few(missing)}, which {first.source} has")
        extra = [i for i in t.ids if i not in ref]
        if extra:
            raise ValueError(f"{t.source}: rows for {show(t.id_name)} {few(extra)}, which {first.source} does not have")
    return list(first.ids)


# --------------------------------------------------------------------------------------------
# splits: which episodes, their scans, paths and languages
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Split:
    name: str
    ids: list[str]
    scans: list[str]
    paths: list[str] | None
    groups: dict[str, list[str]]
    other_ids: dict[str, str]  # another id an evaluator may key an episode by -> its id


def _split_r2r(path: Path) -> _Split:
    from . import r2r

    recs = r2r.instructions(r2r.load_r2r(path))
    ids = [r["instr_id"] for r in recs]
    return _Split(path.name, ids, [r["scan"] for r in recs], [str(r["path_id"]) for r in recs], {}, {})


def _split_reverie(path: Path) -> _Split:
    from . import reverie

    recs = reverie.instructions(reverie.load_reverie(path))
    ids = [r["instr_id"] for r in recs]
    paths = [str(r.get("path_id", r["id"].split("_", 1)[0])) for r in recs]
    return _Split(path.name, ids, [r["scan"] for r in recs], paths, {}, {})


def _split_ndh(path: Path) -> _Split:
    from . import ndh

    recs = ndh.load_ndh(path)
    return _Split(path.name, [str(r["inst_idx"]) for r in recs], [r["scan"] for r in recs], None, {}, {})


def _split_episodes(path: Path) -> _Split:
    """VLN-CE episodes (R2R-CE, RxR-CE): ``{"episodes": [...]}``."""
    from . import vlnce

    eps = vlnce.load_vlnce_episodes(path)
    ids = [str(e["episode_id"]) for e in eps]
    paths = [str(e["trajectory_id"]) for e in eps] if all("trajectory_id" in e for e in eps) else None
    other, langs = {}, []
    for e, i in zip(eps, ids):
        ins = e.get("instruction")
        if isinstance(ins, dict):
            if "instruction_id" in ins:
                other[str(ins["instruction_id"])] = i
            langs.append(str(ins.get("language", "")))
    groups = {"language": langs} if len(langs) == len(ids) and any(langs) else {}
    return _Split(path.name, ids, [str(e.get("scan", "")) for e in eps], paths, groups, other)


def _split_rxr(path: Path) -> _Split:
    from . import rxr

    head = read_text(path).lstrip()[:4096]
    if head.startswith("{") and '"episodes"' in head:
        return _split_episodes(path)  # RxR-CE episodes (VLN-CE's format)
    recs = rxr.load_rxr_guide(path)
    ids = [r["instr_id"] for r in recs]
    paths = [str(r.get("path_id", r["instr_id"])) for r in recs]
    other = {str(r["instruction_id"]): r["instr_id"] for r in recs}
    return _Split(path.name, ids, [r["scan"] for r in recs], paths, {"language": [r["language"] for r in recs]}, other)


#: data set kind -> how its split says which episodes there are (ids, scans, paths, languages).
SPLIT_READERS: dict[str, Callable[[Path], _Split]] = {
    "r2r": _split_r2r,
    "r4r": _split_r2r,
    "rxr": _split_rxr,
    "reverie": _split_reverie,
    "ndh": _split_ndh,
    "r2r-ce": _split_episodes,
    "rxr-ce": _split_episodes,
}


def _prefix_before_last(ids: Sequence[str]) -> list[str]:
    return [i.rsplit("_", 1)[0] for i in ids]


def _first_part(ids: Sequence[str]) -> list[str]:
    return [i.split("_", 1)[0] for i in ids]


_R2R_SHAPE = re.compile(r"\d+_\d+")
_REVERIE_SHAPE = re.compile(r"\d+_\d+_\d+")


def id_shape_clusters(ids: Sequence[str], kind: str | None = None) -> tuple[list[str] | None, str]:
    """Internal: path ids from the ids' shape, ``(labels or None, how)``: ``<path_id>_<k>`` (R2R,
    R4R, RxR's VLN-HAMT ids) or ``<path_id>_<objId>_<k>`` (REVERIE), for every id; a ``kind`` names
    the shape to expect."""
    if kind in ("r2r", "r4r", "rxr") or (kind is None and ids and all(_R2R_SHAPE.fullmatch(i) for i in ids)):
        return _prefix_before_last(ids), "the ids' shape <path_id>_<k>"
    if kind == "reverie" or (kind is None and ids and all(_REVERIE_SHAPE.fullmatch(i) for i in ids)):
        return _first_part(ids), "the ids' shape <path_id>_<objId>_<k>"
    return None, ""


# --------------------------------------------------------------------------------------------
# the data set kind
# --------------------------------------------------------------------------------------------


class ResultsBenchmark(Benchmark):
    """Results tables of one data set: each agent's file is read (:func:`~navdtw.datasets.load_results`) with the
    same options, checked against the split when one is given, and its columns are its scores.

    Attributes: ``split`` (the split's episodes, or None), ``dataset_kind`` (the kind whose split
    and id shapes apply, or None), ``options`` (the keyword arguments of :func:`~navdtw.datasets.load_results`),
    ``clusters`` (how :meth:`cluster_of` finds the paths, in words, after the tables are read).

    Parameters
    ----------
    split : str or os.PathLike, optional
        The data set's split (episodes, ids, scans, paths, languages), read by the reader of
        ``dataset_kind``.
    dataset_kind : str, optional
        The kind whose split and id shapes apply (a key of ``SPLIT_READERS``); needed with
        ``split``.
    columns, percent, id_column, path_column, select, layout, recursive : optional
        The options of :func:`~navdtw.datasets.load_results`, for every agent's table.
    partial : bool, optional
        Allow a table that covers fewer episodes than the split, or than the evaluator's summary
        says it evaluated (default False: an error; True: a warning in its notes).

    Raises
    ------
    ValueError
        A ``split`` without ``dataset_kind``, a malformed split, or a bad ``columns``,
        ``percent`` or ``select`` (:func:`parse_columns`, :func:`parse_percent`,
        :func:`parse_select`).
    KeyError
        With ``split``, a ``dataset_kind`` that has no split reader.
    FileNotFoundError
        A split file that does not exist.
    """

    def __init__(
        self,
        split=None,
        dataset_kind: str | None = None,
        columns=None,
        percent=False,
        id_column: str | None = None,
        path_column: str | None = None,
        select=None,
        layout: str | None = None,
        recursive: bool = False,
        partial: bool = False,
    ) -> None:
        if split is not None and dataset_kind is None:
            raise ValueError(
                f"split {Path(split).name}: say which kind of data set it is with dataset_kind "
                f"({', '.join(SPLIT_READERS)}; --dataset-kind)"
            )
        self.dataset_kind = dataset_kind
        self.split = None if split is None else SPLIT_READERS[dataset_kind](Path(split))
        self.options: dict[str, Any] = {
            "columns": parse_columns(columns),
            "percent": parse_percent(percent),
            "id_column": id_column,
            "path_column": path_column,
            "select": parse_select(select),
            "layout": None if layout is None else layouts.layout(layout).name,
            "recursive": _flag(recursive, "recursive"),
        }
        self.partial = _flag(partial, "partial")
        self._path_of: dict[str, str] = {}
        self.clusters = ""

    @property
    def n(self) -> int:
        """The split's number of episodes (0 without a split)."""
        return 0 if self.split is None else len(self.split.ids)

    def match(
        self, predictions, *, convention: str | None = None, strict: bool = False, errors: dict[str, str] | None = None
    ) -> ResultsTable:
        """Reads one agent's results table (a file name or a list of row dicts) and, with a split,
        checks its ids against the split's (an id the split does not have is an error; split
        episodes without a row are listed in ``left_out`` and ``notes``) and puts the rows in split
        order with the split's scans, paths and languages.

        Parameters
        ----------
        predictions : str, os.PathLike or list of dict
            The agent's results table, or its rows.
        convention : str, optional
            ``"external"`` (the only one: checked).
        strict : bool, optional
            Not used: a table holds no trajectories.
        errors : dict, optional
            If given, a column that breaks the non-finite policy is left out and its message stored
            here instead of raised (:func:`~navdtw.datasets.load_results`).

        Returns
        -------
        ResultsTable
            The table, in split order with a split.

        Raises
        ------
        ValueError
            A convention that does not apply, a malformed table (:func:`~navdtw.datasets.load_results`),
            an id the split does not have, or two rows for one episode.
        FileNotFoundError
            A file name that does not exist.
        """
        self.kind.check_convention(convention)
        table = load_results(predictions, **self.options, errors=errors)
        if table.expected is not None:
            self.check_coverage(table, table.expected, "the evaluator's summary says it evaluated")
        if self.split is not None:
            table = self._on_split(table)
            if table.left_out:
                self._short(
                    table,
                    f"covers {len(table)} of the {len(table) + len(table.left_out)} episodes of {self.split.name} "
                    f"(no row for {few(table.left_out)})",
                )
        if table.paths is not None:
            for i, p in zip(table.ids, table.paths):
                self._path_of.setdefault(i, p)
        return table

    def check_coverage(self, table: ResultsTable, expected: int, whose: str) -> None:
        """A table with fewer rows than the episodes an evaluator says it evaluated (its summary's or
        means file's count) is partial: an error unless ``partial``, then a warning. More rows than
        that is a warning: the count is of another evaluation.

        Parameters
        ----------
        table : ResultsTable
            What :meth:`match` read.
        expected : int
            The evaluator's episode count.
        whose : str
            Where the count is from, for the message (``"the evaluator's summary says it evaluated"``).

        Raises
        ------
        ValueError
            Fewer rows, without ``partial``.
        """
        if len(table) < expected:
            self._short(table, f"covers {len(table)} of the {expected} episodes {whose}")
        elif len(table) > expected:
            warnings.warn(
                f"{table.source}: {len(table)} episodes, more than the {expected} {whose}: its count is of "
                "another evaluation",
                stacklevel=2,
            )

    def _short(self, table: ResultsTable, what: str) -> None:
        """A table that covers part of the episodes: an error unless ``partial``, then a warning."""
        message = f"{table.source}: PARTIAL RESULTS: {what}"
        if not self.partial:
            raise ValueError(
                f"{message}; a mean over part of a split is not the agent's figure. Give every shard of the run "
                "(--shards, or a folder), or allow it with --partial (partial = true)"
            )
        warnings.warn(message + " (allowed by --partial: the figures are over these episodes only)", stacklevel=3)

    def _on_split(self, table: ResultsTable) -> ResultsTable:
        split = self.split
        assert split is not None
        known = set(split.ids)
        if table.id_name == "instruction_id" and split.other_ids:
            # an instruction id is never taken for an episode id: the two overlap in RxR-CE
            ids = [split.other_ids.get(i, "") for i in table.ids]
        else:
            ids = [i if i in known else split.other_ids.get(i, i) for i in table.ids]
        unknown = [t for t, i in zip(table.ids, ids) if i not in known]
        if len(unknown) == len(ids) > 1:  # a table of another split (val_seen given with val_unseen)
            raise ValueError(other_split(table.source, table.ids, split.name, split.ids, table.id_name))
        if unknown:
            raise ValueError(f"{table.source}: {show(table.id_name)} {few(unknown)}: not episodes of {split.name}")
        if len(set(ids)) != len(ids):
            twice = [i for i, c in Counter(ids).items() if c > 1]
            raise ValueError(f"{table.source}: episodes of {split.name} with two rows (under two ids): {few(twice)}")
        table = replace(table, ids=ids)
        have = set(ids)
        order = [i for i in split.ids if i in have]
        missing = tuple(i for i in split.ids if i not in have)
        table = table.take(order)
        pos = {i: k for k, i in enumerate(split.ids)}
        idx = [pos[i] for i in order]
        notes = list(table.notes)
        if missing:
            notes.append(f"{len(missing)} of the {len(split.ids)} episodes of {split.name} have no row: {few(missing)}")
        return replace(
            table,
            scans=[split.scans[k] for k in idx],
            paths=table.paths if split.paths is None else [split.paths[k] for k in idx],
            groups={**table.groups, **{g: [v[k] for k in idx] for g, v in split.groups.items()}},
            left_out=missing,
            notes=tuple(notes),
        )

    def evaluate(self, matched: ResultsTable, *, convention: str | None = None, **kwargs) -> Scores:  # type: ignore[override]
        """The table's columns as :class:`navdtw.Scores` (:meth:`ResultsTable.evaluate`);
        ``threshold`` is recorded, ``workers`` and ``strict`` do not apply.

        Parameters
        ----------
        matched : ResultsTable
            What :meth:`match` returned.
        convention : str, optional
            ``"external"`` (checked).
        **kwargs
            ``threshold`` (recorded) and ``metrics`` (the columns to keep); others are ignored.

        Returns
        -------
        navdtw.Scores
            The table's columns.

        Raises
        ------
        ValueError
            A convention that does not apply, or a metric the table does not have.
        """
        self.kind.check_convention(convention)
        return matched.evaluate(threshold=kwargs.get("threshold"), metrics=kwargs.get("metrics"))

    def cluster_of(self, ids: Sequence[str]) -> list[str] | None:
        """The path of each episode for the path bootstrap (``navdtw.suite.clusters``): from the
        split, else from the tables' path column, else from the ids' shape (R2R, REVERIE; the
        ``dataset_kind``'s), else None (episodes are resampled).

        Parameters
        ----------
        ids : sequence of str
            Episode ids of the tables read.

        Returns
        -------
        list of str or None
            The path of each episode, or None.
        """
        ids = [str(i) for i in ids]
        if self.split is not None and self.split.paths is not None:
            label = dict(zip(self.split.ids, self.split.paths))
            if all(i in label for i in ids):
                self.clusters = f"the paths of {self.split.name}"
                return [label[i] for i in ids]
        if ids and all(i in self._path_of for i in ids):
            self.clusters = "the tables' path column"
            return [self._path_of[i] for i in ids]
        if self.dataset_kind in ("ndh", "r2r-ce", "rxr-ce"):
            self.clusters = ""
            return None
        labels, how = id_shape_clusters(ids, self.dataset_kind)
        self.clusters = how
        return labels


#: The data set kind ``results`` (``navdtw.datasets.DATASETS["results"]``).
RESULTS = DatasetKind(
    "results",
    "Results tables",
    (
        Option(
            "split",
            "the data set's split (optional): which episodes, their scans and paths (needs dataset_kind)",
            required=False,
        ),
        Option(
            "dataset_kind",
            "the kind of the split, and of the ids' shape for the path bootstrap",
            kind="choice",
            required=False,
            choices=tuple(SPLIT_READERS),
        ),
        Option(
            "columns",
            "a column's metric (NAME=osr), direction (NAME=+ or NAME=-) or NAME=ignore; repeatable",
            kind="value",
            required=False,
            check=parse_columns,
            cli=(("--column", {"action": "append", "metavar": "NAME=METRIC"}),),
        ),
        Option(
            "percent",
            "rate columns are in percent (all of them; or the named ones)",
            kind="value",
            required=False,
            default=False,
            check=parse_percent,
            cli=(  # one option, two flags: each says what it does
                ("--percent", {"action": "store_const", "const": True, "help": "every rate column is in percent"}),
                ("--percent-columns", {"metavar": "NAME,...", "help": "these rate columns are in percent (spl,ndtw)"}),
            ),
        ),
        Option(
            "layout",
            "a project's results layout (default: recognised from the file name and content)",
            kind="choice",
            required=False,
            choices=tuple(lay.name for lay in layouts.LAYOUTS),
        ),
        Option(
            "recursive",
            "a folder of results is read with its subfolders",
            kind="value",
            required=False,
            default=False,
            check=lambda v: _flag(v, "recursive"),
            cli=(("--recursive", {"action": "store_const", "const": True}),),
        ),
        Option(
            "partial",
            "allow results that cover part of the split (or of the evaluator's episode count): a warning, not an error",
            kind="value",
            required=False,
            default=False,
            check=lambda v: _flag(v, "partial"),
            cli=(("--partial", {"action": "store_const", "const": True}),),
        ),
        Option("id_column", "the id column (default: episode_id, instr_id, ...)", kind="text", required=False),
        Option("path_column", "the column of path ids (default: path_id, trajectory_id)", kind="text", required=False),
        Option(
            "select",
            "keep only the rows whose COLUMN holds VALUE (a suite's episodes file: agent=NAME); repeatable",
            kind="value",
            required=False,
            check=parse_select,
            cli=(("--select", {"action": "append", "metavar": "COLUMN=VALUE"}),),
        ),
    ),
    ("external",),
    "external",
    ResultsBenchmark,
    id_name="episode_id",
    description="per-episode metrics computed by another evaluator (VLN-CE, HA-VLN, VLN-DUET, ...)",
    reads_scores=True,
)

ResultsBenchmark.kind = RESULTS
