"""Internal to :mod:`navdtw.datasets.results`: a results table's files read as raw columns, before
any value is judged: JSON (a list of objects, an object keyed by episode id, one object), JSON Lines,
CSV / TSV and Parquet, found from the content; one run's files gathered into one table
(:mod:`~navdtw.datasets.results.shards`), each file's layout recognised
(:mod:`~navdtw.datasets.results.layouts`) and its evaluator's summary records taken out of the rows."""

from __future__ import annotations

import contextlib
import csv
import itertools
import json
import math
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..._optional import import_optional
from ..._typing import PathLike
from .._common import ID_COLUMNS, is_path, loads, malformed, read_text
from . import layouts
from ._cells import NUMBER_TYPES, Overflow
from ._columns import first_column


@dataclass
class Raw:
    """Internal: a table as read: columns of raw values (Python lists, or float64 arrays from Parquet)."""

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


def _read_raw(path: PathLike) -> Raw:
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


def _float(text: str) -> float | Overflow:
    x = float(text)
    return Overflow(text) if math.isinf(x) else x


def _json(text: str, where: str):
    return loads(text, where, parse_float=_float)


def _read_json(text: str, name: str) -> Raw:
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
        return Raw(name, columns_of(data), len(data), lambda k: f"entry {k}")
    if data and all(isinstance(v, dict) for v in data.values()):  # {episode_id: {metric: value}}
        keys = [str(k) for k in data]
        return Raw(name, columns_of(list(data.values())), len(keys), lambda k: f"entry {k}", keys=keys)
    raw = Raw(name, columns_of([data]), 1, lambda k: "line 1")  # one object: one JSON line
    if first_column(data, ID_COLUMNS) is None and data and all(type(v) in NUMBER_TYPES for v in data.values()):
        raw.means = data  # numbers and no id: an evaluator's means (VLN-CE's stats_ckpt_*.json)
    return raw


def _json_lines(text: str, name: str) -> Raw:
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
            _extend(columns, columns_of(rows), len(numbers), len(rows))
            numbers.extend(at)
    return Raw(name, columns, len(numbers), lambda k: f"line {numbers[k]}")


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


def columns_of(rows: list[dict]) -> dict[str, list]:
    """Internal: column lists of a list of JSON objects (keys in order of first appearance; a key missing from
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


def _read_csv(text: str, name: str, tab: bool) -> Raw:
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
    return Raw(name, cols, n, lambda k: line(k + 1), text_parsed=True)


#: The text columns a suite's ``episodes.csv`` starts with; navdtw writes a cell of them that starts
#: with ``= + - @``, a tab or a carriage return with a leading ``'`` (formula injection,
#: ``navdtw.suite.tables.csv_cell``), which this reader removes again.
_EPISODES_TEXT = ("dataset", "agent", "id", "scan")


def _unescape_cell(text: str) -> str:
    return text[1:] if text[:1] == "'" and text[1:2] in ("=", "+", "-", "@", "\t", "\r") else text


def _filled(row: list[str]) -> bool:
    """Not a blank line."""
    return bool(row) and (len(row) > 1 or bool(row[0].strip()))


def _read_parquet(path: Path, name: str) -> Raw:
    pa = import_optional("pyarrow", f"{name}: reading Parquet")
    pq = import_optional("pyarrow.parquet", f"{name}: reading Parquet")
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
    return Raw(name, columns, table.num_rows, lambda k: f"row {k}")


def is_path_list(obj) -> bool:
    """Internal: a non-empty list of file names (one run's files)."""
    return isinstance(obj, (list, tuple)) and bool(obj) and all(is_path(p) for p in obj)


def gather(path, layout: str | None, recursive: bool, id_column: str | None) -> Raw:
    """Internal: one run's files (:func:`~navdtw.datasets.results.shards.files_of`) read as one table, each file's
    summary records taken out and its layout recognised."""
    from .shards import files_of

    files = files_of(path, recursive=recursive)
    parts = [read_one(p, layout, id_column) for p in files.paths]
    raw = parts[0] if len(parts) == 1 else _concat(parts, files.label)
    raw.sources = tuple(str(p.resolve()) for p in files.paths)
    raw.how = files.how
    return raw


def read_one(path: Path, layout: str | None, id_column: str | None) -> Raw:
    """Internal: one file read, its summary records taken out, its layout given (a name) or
    recognised."""
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
    return "length" in record and all(type(v) in NUMBER_TYPES for v in record.values())


def _take_summaries(raw: Raw, id_column: str | None) -> None:
    """Moves the summary records of a JSON file (records without an id, of a summary's shape) from
    its rows to ``raw.summaries``; a file of summaries only holds means (``raw.means``: the last)."""
    if raw.text_parsed or raw.keys is not None or raw.means is not None:
        return
    if any(isinstance(c, np.ndarray) for c in raw.columns.values()):
        return
    id_col = id_column if id_column in raw.columns else first_column(raw.columns, ID_COLUMNS)
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


def _concat(parts: list[Raw], label: str) -> Raw:
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
    return Raw(
        label,
        columns,
        len(where),
        lambda k: f"{parts[where[k][0]].name} {parts[where[k][0]].entry(where[k][1])}",
        keys=keys,
        text_parsed=parts[0].text_parsed,
        summaries=[s for p in parts for s in ((f"{p.name} {w}", r) for w, r in p.summaries)],
        layout=parts[0].layout if len(lays) == 1 else None,
    )


def means_message(raw: Raw) -> str:
    """Internal: the error for a means file given where per-episode results go."""
    lay = raw.layout or layouts.summary_layout(raw.means or {})
    who = f" ({lay.project}'s {lay.pattern})" if lay is not None else ""
    length = (raw.means or {}).get("length")
    over = f" over {length} episodes" if isinstance(length, int) else ""
    return (
        f"{raw.name}: holds the evaluator's means{over}{who}, not per-episode results: give it as the agent's "
        f'reported figures (--reported-from {raw.name}; reported_from = "..." in a suite file), beside the '
        "per-episode results or trajectories of the same run"
    )
