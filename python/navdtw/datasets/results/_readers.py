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
import os
import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..._optional import import_optional
from ..._typing import PathLike
from ...subtasks import COMPUTATIONS
from .._common import ID_COLUMNS, is_path, loads, malformed, read_text
from . import layouts
from ._cells import NUMBER_TYPES, Overflow, ids_of
from ._columns import SCAN_COLUMNS, first_column
from .episode_log import LogMeta, cut_tail, log_meta, one_run
from .shards import is_store


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
    splits: dict[str, dict] | None = None  # a means file of one record per split: {split: means}
    sources: tuple[str, ...] = ()  # the files read (several: one run's shards)
    how: str = ""  # "4 shards of one run (ranks 0-3 of 4)"
    tail: str = ""  # a navdtw log's last line cut short, left out: "<file>: its last line ..."


def _read_raw(path: PathLike, log: bool = False) -> Raw:
    name = Path(path).name
    path = Path(path)
    if is_store(path):
        return _read_lmdb(path, name)
    try:
        with open(path, "rb") as f:
            head = f.read(4)
    except IsADirectoryError:
        raise ValueError(f"{path}: is a folder, not a results table") from None
    if head == b"PAR1":
        return _read_parquet(path, name)
    text = read_text(path)
    tail = ""
    if log:  # navdtw's episode log: a last line cut short is the one being written (or lost in a kill)
        text, tail = cut_tail(text)
    if not text.strip():
        raise ValueError(f"{name}: empty file (no rows)" + (f"; {tail}" if tail else ""))
    if text.lstrip()[0] in "[{":
        raw = _read_json(text, name)
        raw.tail = f"{name}: {tail}" if tail else ""
        return raw
    return _read_csv(text, name, tab=name.lower().removesuffix(".gz").endswith(".tsv"))


def _float(text: str) -> float | Overflow:
    x = float(text)
    return Overflow(text) if math.isinf(x) else x


def _json(text: str, where: str):
    return loads(text, where, parse_float=_float)


def _read_lmdb(path: Path, name: str) -> Raw:
    """An LMDB environment's records (:attr:`~.layouts.Layout.store`): every value but the
    ``timestamp_`` entries unpacked with msgpack_numpy, numpy values as Python numbers and lists."""
    lmdb = import_optional("lmdb", f"{name}: reading an LMDB store")
    msgpack_numpy = import_optional("msgpack_numpy", f"{name}: reading an LMDB store")
    keys: list[str] = []
    rows: list[dict] = []
    try:
        env = lmdb.open(str(path), readonly=True, lock=False, subdir=True)
    except lmdb.Error as exc:
        raise ValueError(f"{name}: not a readable LMDB store ({' '.join(str(exc).split())})") from None
    try:
        with env.begin() as txn:
            for key, value in txn.cursor():
                text = key.decode("utf-8", "replace")
                if text.startswith("timestamp_"):
                    continue
                try:
                    record = msgpack_numpy.unpackb(value)
                except Exception as exc:  # msgpack raises several types for a corrupt value
                    raise ValueError(f"{name}: key {text!r}: not a msgpack record ({type(exc).__name__})") from None
                if not isinstance(record, dict):
                    raise ValueError(f"{name}: key {text!r}: expected a record (a map), got {type(record).__name__}")
                keys.append(text)
                rows.append(_plain(record))
    finally:
        env.close()
    if not rows:
        raise ValueError(f"{name}: an LMDB store without records")
    return Raw(name, columns_of(rows), len(rows), lambda k: f"key {keys[k]!r}")


def _plain(value):
    """numpy scalars and arrays of an unpacked record as Python numbers and lists; bytes keys as text."""
    if isinstance(value, dict):
        return {(k.decode("utf-8", "replace") if isinstance(k, bytes) else k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    return value


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
        lay = layouts.grouping(name)
        if lay is not None and all(isinstance(r, dict) for v in data.values() for r in v.values()):
            return _grouped(data, name, lay)
        keys = [str(k) for k in data]
        return Raw(name, columns_of(list(data.values())), len(keys), lambda k: f"entry {k}", keys=keys)
    raw = Raw(name, columns_of([data]), 1, lambda k: "line 1")  # one object: one JSON line
    if first_column(data, ID_COLUMNS) is None and data and all(type(v) in NUMBER_TYPES for v in data.values()):
        raw.means = data  # numbers and no id: an evaluator's means (VLN-CE's stats_ckpt_*.json)
    return raw


def _grouped(data: dict, name: str, lay: layouts.Layout) -> Raw:
    """``{group: {id: record}}`` (:attr:`~.layouts.Layout.grouped`) as a table keyed by id, each
    row's group in the column ``lay.grouped``."""
    group_key = lay.grouped or "group"
    keys: list[str] = []
    where: list[str] = []
    rows: list[dict] = []
    for group, inner in data.items():
        for j, (i, record) in enumerate(inner.items()):
            keys.append(str(i))
            where.append(f"{group_key} {group} entry {j}")
            rows.append({group_key: str(group), **record})
    if not rows:
        raise ValueError(f"{name}: no episodes in any {group_key.removesuffix('_id')}")
    return Raw(name, columns_of(rows), len(rows), lambda k: where[k], keys=keys)


def _json_lines(text: str, name: str, first: int = 1) -> Raw:
    """JSON Lines, read in blocks of lines: only one block's objects exist at a time, the columns
    grow block by block (a million rows as dicts would take several times their columns' memory).
    ``first``: the number of the text's first line (lines appended to a file read before)."""
    columns: dict[str, list] = {}
    numbers: list[int] = []
    lines = text.split("\n")  # at "\n" only, as JSON Lines is split (not str.splitlines)
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


def gather(path, layout: str | None, recursive: bool, id_column: str | None, keep: dict | None = None) -> Raw:
    """Internal: one run's files (:func:`~navdtw.datasets.results.shards.files_of`) read as one table, each file's
    summary records taken out and its layout recognised. ``keep`` (reading a run as it grows): a
    dict given the files, each file's table and :class:`Tail` (None: read whole when it changes);
    left empty for a folder of episode folders (read whole at every change)."""
    from .shards import files_of

    if isinstance(path, (str, os.PathLike)) and Path(path).is_dir() and not is_store(Path(path)):
        lay = layouts.layout(layout) if layout is not None else layouts.tree_layout(path)
        if lay is not None and lay.tree is not None:
            return _read_tree(Path(path), lay)
    files = files_of(path, recursive=recursive)
    metas = {p: log_meta(p) for p in files.paths}
    logs = [m for m in metas.values() if m is not None]
    mixed = one_run(logs)
    if mixed:
        raise ValueError(mixed)
    if keep is None:
        parts = [read_one(p, layout, id_column, log=metas[p] is not None) for p in files.paths]
    else:
        kept = [read_kept(p, layout, id_column, log=metas[p] is not None) for p in files.paths]
        parts = [part for part, _ in kept]
        keep.update(files=files, parts=parts, tails=[tail for _, tail in kept], metas=list(metas.values()))
    raw = parts[0] if len(parts) == 1 else concat_parts(parts, files.label)
    raw.sources = tuple(str(p.resolve()) for p in files.paths)
    cut = [part.tail for part in parts if part.tail]
    raw.how = how_of(files.how, raw.layout, id_column, logs, len(files.paths), cut)
    return raw


def how_of(
    how: str,
    lay: layouts.Layout | None,
    id_column: str | None,
    logs: list[LogMeta] | tuple = (),
    files: int = 0,
    cut: list[str] | tuple = (),
) -> str:
    """Internal: how a run's files were read, in words (its files, the layout's ids and renames,
    its navdtw episode logs, their last lines cut short)."""
    words = (lay.id_words if id_column is None else "", lay.rename_words) if lay is not None else ()
    log_words = [_log_words(list(logs), files)] if logs else []
    return "; ".join(w for w in (how, *words, *log_words, *cut) if w)


def read_kept(path: Path, layout: str | None, id_column: str | None, log: bool = False) -> tuple[Raw, Tail | None]:
    """Internal: :func:`read_one`, and the file's :class:`Tail` when it is JSON Lines that did not
    change while it was read (None: read whole when it changes)."""
    if is_store(path):
        return read_one(path, layout, id_column, log), None
    with open(path, "rb") as f:
        data = f.read()
        before = stamp_of(os.fstat(f.fileno()))
    raw = read_one(path, layout, id_column, log)
    after = stamp_of(os.stat(path))
    return raw, Tail.of(data, after) if after == before and after[0] == len(data) else None


def _log_words(logs: list[LogMeta], files: int) -> str:
    """A navdtw episode log's metadata, for the notes."""
    meta = logs[0]
    settings = ", ".join(
        w
        for w in (
            f"convention {meta.convention}" if meta.convention else "",
            f"success distance {meta.success_distance:g} m" if meta.success_distance is not None else "",
        )
        if w
    )
    without = f" ({files - len(logs)} of the files without)" if len(logs) < files else ""
    head = f"navdtw episode log{'s' if len(logs) > 1 else ''} of {meta.what()}"
    return head + (f", {settings}" if settings else "") + without


def _read_tree(root: Path, lay: layouts.Layout) -> Raw:
    """A run's folder of episode folders (:attr:`~.layouts.Layout.tree`): per episode its outcome
    (the folder's prefix), its last frame's record (nested objects left out) and ``steps`` (its
    frames - 1, the actions); an episode written twice (a re-flown padding task of a batch) counted
    once, the first written, and said."""
    rx = lay.tree_regex
    assert rx is not None and lay.tree is not None
    pattern = re.sub(r"\{\w+\}", "*", lay.tree)
    pattern = re.sub(r"\*+", "*", pattern)
    episodes: dict[str, tuple[str, str, list[tuple[int, Path]]]] = {}
    for p in root.glob(pattern):
        m = rx.fullmatch(p.relative_to(root).as_posix())
        if m is None or not p.is_file():
            continue
        frame = int(m["frame"]) if m.groupdict().get("frame") is not None else -1
        episodes.setdefault(m["episode"], (m["outcome"], m["id"], []))[2].append((frame, p))
    if not episodes:
        raise ValueError(f"{root.name}: no episode folder of {lay.project}'s {lay.tree} below it")
    first: dict[str, str] = {}  # the episode folder without its outcome -> the folder kept
    twice: list[str] = []
    order = sorted(episodes, key=lambda e: (min(q.stat().st_mtime_ns for _, q in episodes[e][2]), e))
    for ep in order:
        outcome = episodes[ep][0]
        base = ep[len(outcome) :]
        if base in first:
            twice.append(f"{ep} (also {first[base]}, written first: kept)")
            continue
        first[base] = ep
    rows: list[dict] = []
    where: list[str] = []
    keys: list[str] = []
    for _base, ep in sorted(first.items()):
        outcome, ident, frames = episodes[ep]
        frames.sort(key=lambda f: (f[0], f[1].name))
        last, n = _last_frame(frames, lay)
        record = {k: v for k, v in last.items() if not isinstance(v, dict)}  # sensors: not read
        missing = [k for k in sorted(lay.keys) if k not in last]
        if missing:
            raise ValueError(f"{ep}: {frames[-1][1].name}: no {missing[0]!r}: not {lay.project}'s {lay.tree}")
        rows.append({**lay.outcomes[outcome], **record, "steps": n - 1})
        where.append(ep)
        keys.append(ident)
    raw = Raw(root.name, columns_of(rows), len(rows), lambda k: where[k], keys=keys, layout=lay)
    raw.sources = tuple(str(p.resolve()) for ep in first.values() for _, p in episodes[ep][2][-1:])
    how = f"{len(rows)} episode folders of one run (the folder {root.name}); the outcome from each folder's prefix"
    if twice:
        how += (
            f"; {len(twice)} episode(s) written twice, counted once (a batch larger than one re-flies tasks to fill "
            f"it): {', '.join(twice[:3])}" + (" ..." if len(twice) > 3 else "")
        )
    raw.how = how
    return raw


def _last_frame(frames: list[tuple[int, Path]], lay: layouts.Layout) -> tuple[dict, int]:
    """An episode's last frame's record and its number of frames: the last line of its one JSON
    Lines file, or its highest-numbered file."""
    path = frames[-1][1]
    if frames[-1][0] < 0:  # one JSON Lines file of frames
        lines = [line for line in read_text(path).split("\n") if line.strip()]
        if not lines:
            raise ValueError(f"{path}: empty file (no frames)")
        record = _json(lines[-1], f"{path.name}: line {len(lines)}")
        n = len(lines)
    else:
        record = _json(read_text(path), path.name)
        n = len(frames)
    if not isinstance(record, dict):
        raise ValueError(f"{path.name}: expected an object (a frame of {lay.project}), got {type(record).__name__}")
    return record, n


def read_one(path: Path, layout: str | None, id_column: str | None, log: bool = False) -> Raw:
    """Internal: one file read, its summary records taken out, its layout given (a name) or
    recognised; ``log``: a navdtw episode log, whose last line cut short is left out."""
    return finish(_read_raw(path, log), Path(path), layout, id_column)


def finish(raw: Raw, path: Path, layout: str | None, id_column: str | None) -> Raw:
    """Internal: a file's table as read (or the lines appended to it), its summary records taken
    out, its layout given (a name) or recognised, the layout's records and ids made."""
    _take_summaries(raw, id_column)
    if layout is not None:
        raw.layout = layouts.layout(layout)
    else:
        lay = None
        if raw.means is not None:  # one object of numbers: an episode of a layout without an id inside?
            lay = layouts.recognise(path.name, raw.means, "episodes")
            lay = lay if lay is not None and lay.name_id is not None else None
        if lay is None:
            record = raw.means if raw.means is not None else dict.fromkeys(c.split(".", 1)[0] for c in raw.columns)
            lay = layouts.recognise(path.name, record, "means" if raw.means is not None else "episodes")
        if lay is None and raw.keys is not None:  # {split: means}?
            lay = layouts.recognise(path.name, dict.fromkeys(raw.columns), "means")
            lay = lay if lay is not None and lay.split_keyed else None
        raw.layout = lay
    if raw.layout is not None:
        _layout_record(raw, raw.layout)
    if raw.layout is not None and id_column is None:
        _layout_ids(raw, raw.layout, path.name)
    return raw


def _layout_record(raw: Raw, lay: layouts.Layout) -> None:
    """A layout's record unwrapped (:attr:`~.layouts.Layout.record`), its columns renamed
    (:attr:`~.layouts.Layout.renamed`), a ``{split: means}`` file made a means file."""
    if lay.split_keyed and raw.keys is not None and raw.means is None:
        records = [{c: col[k] for c, col in raw.columns.items() if col[k] is not None} for k in range(raw.n)]
        raw.splits = dict(zip(raw.keys, records))
        raw.means = records[0] if len(records) == 1 else {}
        return
    if lay.record is not None:
        prefix = lay.record + "."
        inner = {c[len(prefix) :]: v for c, v in raw.columns.items() if c.startswith(prefix)}
        outer = {c: v for c, v in raw.columns.items() if not c.startswith(prefix) and c != lay.record}
        raw.columns = {**inner, **outer}  # a key in both (fail_reason): the value's own
    for col, (new, _) in lay.renamed.items():
        if col in raw.columns:
            raw.columns = {(new if c == col else c): v for c, v in raw.columns.items()}
    if lay.computed is not None:
        _computed(raw, lay)


def _computed(raw: Raw, lay: layouts.Layout) -> None:
    """The metric columns a layout's computation (:attr:`~.layouts.Layout.computed`) makes of each
    record's fields, in place of them."""
    fields, compute = COMPUTATIONS[lay.computed]  # type: ignore[index]
    missing = [f for f in fields if f not in raw.columns]
    if missing:
        raise ValueError(f"{raw.name}: no column {missing[0]!r}: {lay.project}'s records hold {', '.join(fields)}")
    cols = {f: raw.columns[f] for f in fields}
    records = [{f: _plain(cols[f][k]) for f in fields} for k in range(raw.n)]
    values = compute(records, where=lambda k: f"{raw.name}: {raw.entry(k)}")
    rest = {c: v for c, v in raw.columns.items() if c not in fields}
    raw.columns = {**rest, **{c: v.tolist() for c, v in values.items()}}


def _layout_ids(raw: Raw, lay: layouts.Layout, file_name: str) -> None:
    """The ids a layout makes (:attr:`~.layouts.Layout.name_id`, :attr:`~.layouts.Layout.id_keys`),
    put in the column ``lay.id_key``."""
    if lay.name_id is not None and lay.id_key and raw.n == 1 and lay.id_key not in raw.columns:
        m = lay.regex.fullmatch(file_name)
        if m is None or "index" not in m.groupdict():
            raise ValueError(
                f"{file_name}: {lay.project} names each file by its episode ({lay.pattern}, the episode id "
                f"- {lay.name_id}) and writes no id inside: this name gives none"
            )
        raw.columns = {lay.id_key: [str(int(m["index"]) + lay.name_id)], **raw.columns}
        raw.means = None
    if lay.id_keys and lay.id_key:
        missing = [k for k in lay.id_keys if k not in raw.columns]
        if missing:
            raise ValueError(f"{raw.name}: no column {missing[0]!r}: {lay.project}'s ids are "
                             f"{' / '.join(lay.id_keys)}")  # fmt: skip
        parts = []
        for key in lay.id_keys:
            texts = ids_of(raw.columns[key], raw, key)
            parts.append([_stem(t) for t in texts] if key in SCAN_COLUMNS else texts)
        raw.columns[lay.id_key] = ["/".join(p) for p in zip(*parts)]


def _stem(text: str) -> str:
    """A scene path's scan (``hm3d/val/00800-TEEsavR23oF/TEEsavR23oF.basis.glb`` -> ``TEEsavR23oF``)."""
    return text.rsplit("/", 1)[-1].split(".", 1)[0] if "/" in text or text.endswith(".glb") else text


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


def concat_parts(parts: list[Raw], label: str) -> Raw:
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
    count = lay.summary.length if lay is not None and lay.summary is not None and lay.summary.length else "length"
    length = (raw.means or {}).get(count)
    over = f" over {length} episodes" if isinstance(length, int) else ""
    if raw.splits is not None:
        over = f" of the split{'s' if len(raw.splits) > 1 else ''} {', '.join(raw.splits)}{over}"
    return (
        f"{raw.name}: holds the evaluator's means{over}{who}, not per-episode results: give it as the agent's "
        f'reported figures (--reported-from {raw.name}; reported_from = "..." in a suite file), beside the '
        "per-episode results or trajectories of the same run"
    )


# --------------------------------------------------------------------------------------------
# reading a file as it grows (navdtw watch): what was appended since the last look
# --------------------------------------------------------------------------------------------


class Reread(Exception):
    """Internal: what was read of a run cannot be continued (a file truncated or rewritten, a line
    that is not the next episode, a summary record, a change of columns or of anything a whole
    read decides from every row): the caller reads the run whole again, which says what is wrong
    if anything is."""


#: bytes compared at a file's start and before the point the last look stopped, to tell an
#: append from a rewrite
CHECKED = 4096


@dataclass(frozen=True)
class Tail:
    """Internal: how far a JSON Lines file was read: up to the end of its last complete line.

    A file is taken as appended to when it is at least ``offset`` bytes long and its first bytes
    and the bytes before ``offset`` (:data:`CHECKED` each) are unchanged; anything else is a
    rewrite (:class:`Reread`)."""

    offset: int  # bytes read: up to and including the last newline
    lines: int  # the lines in them (the next line's number is lines + 1)
    head: bytes  # the first bytes (up to CHECKED)
    last: bytes  # the bytes before offset (up to CHECKED)
    stamp: tuple[int, int, int] = (0, 0, 0)  # (size, mtime_ns, inode) when read

    @classmethod
    def of(cls, data: bytes, stamp: tuple[int, int, int] = (0, 0, 0)) -> Tail | None:
        """The tail after reading ``data`` (a file's bytes, all of them read): None unless the
        file is JSON Lines (its first line a JSON object) that ends with a newline, uncompressed."""
        if not data.endswith(b"\n") or data[:2] == b"\x1f\x8b" or data[:4] == b"PAR1":
            return None
        first = data.lstrip(b"\xef\xbb\xbf \t\r\n").split(b"\n", 1)[0]
        if first[:1] != b"{" or not _is_object(first):
            return None
        return cls(len(data), data.count(b"\n"), data[:CHECKED], data[-CHECKED:], stamp)


def _is_object(line: bytes) -> bool:
    try:
        return type(json.loads(line)) is dict
    except (ValueError, RecursionError):
        return False


def stamp_of(st: os.stat_result) -> tuple[int, int, int]:
    """Internal: a file's (size, mtime_ns, inode): a change of any is a change of the file."""
    return (st.st_size, st.st_mtime_ns, st.st_ino)


def read_appended(path: PathLike, tail: Tail) -> tuple[Tail, bytes, bytes]:
    """Internal: the complete lines appended to a JSON Lines file since ``tail``, the new tail,
    and the incomplete last line (pending: read again from its start at the next look).

    Raises
    ------
    Reread
        The file is shorter than what was read, or its first bytes or the bytes before the tail
        changed (truncated, rewritten, replaced).
    """
    with open(path, "rb") as f:
        st = os.fstat(f.fileno())
        if st.st_size < tail.offset:
            raise Reread(f"{Path(path).name}: shorter than what was read: truncated or rewritten")
        head = f.read(len(tail.head))
        f.seek(tail.offset - len(tail.last))
        before = f.read(len(tail.last))
        if head != tail.head or before != tail.last:
            raise Reread(f"{Path(path).name}: rewritten")
        data = f.read()
    cut = data.rfind(b"\n") + 1
    new, pending = data[:cut], data[cut:]
    if not new:
        return replace_tail(tail, stamp_of(st)), b"", pending
    last = (tail.last + new)[-CHECKED:]
    return Tail(tail.offset + cut, tail.lines + new.count(b"\n"), tail.head, last, stamp_of(st)), new, pending


def replace_tail(tail: Tail, stamp: tuple[int, int, int]) -> Tail:
    """Internal: the same tail, with a new stamp."""
    return Tail(tail.offset, tail.lines, tail.head, tail.last, stamp)


def appended_raw(data: bytes, tail: Tail, path: Path, layout: str | None, id_column: str | None) -> Raw:
    """Internal: the lines appended to a JSON Lines file (``data``, whole lines read after ``tail``)
    as a table, its lines numbered as in the file, finished as :func:`read_one` finishes a file.

    Raises
    ------
    Reread
        The lines are not UTF-8, hold an evaluator's summary, or a line is malformed (a whole read
        says so, naming the line).
    """
    name = path.name
    try:
        text = data.decode("utf-8")
        raw = _json_lines(text, name, first=tail.lines + 1)
    except (UnicodeDecodeError, ValueError) as exc:
        raise Reread(str(exc)) from None
    raw = finish(raw, path, layout, id_column)
    if raw.summaries or raw.means is not None:
        raise Reread(f"{name}: an evaluator's summary record: read whole")
    return raw
