"""Internal to :mod:`navdtw.datasets.results`: :class:`ResultsTable` (a table read and checked),
:func:`load_results` (a file, one run's files, or rows, read into one) and :func:`align` (the
episodes several tables share)."""

from __future__ import annotations

import contextlib
import gc
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ... import registry
from ..._messages import few, listed, named
from ..._typing import PathLike
from ...metrics import Scores
from ...registry import Metric
from .._common import INPUT, is_path
from ..shapes import refuse_other_shape, routed
from . import layouts
from ._build import build, extend
from ._columns import EXTERNAL, parse_columns, parse_percent, parse_select
from ._readers import (
    Raw,
    Reread,
    Tail,
    appended_raw,
    columns_of,
    concat_parts,
    gather,
    how_of,
    is_path_list,
    means_message,
    read_appended,
    read_kept,
    stamp_of,
)
from .episode_log import log_meta

__all__ = ["ResultsTable", "align", "load_results"]


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
        the project layout read (:data:`navdtw.datasets.results.layouts.LAYOUTS`), or None (a generic table).
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
    unmapped:
        the columns of ``columns`` (the option) this table lacks, left unapplied: only when read
        with ``errors`` (a suite says once which tables lack a column, and fails when none has it);
        without ``errors`` a missing column is an error.
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
    unmapped: tuple[str, ...] = ()

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
            raise ValueError(f"{self.source}: no row for {named(self.id_name)} {few(missing)}")
        idx = np.fromiter((pos[i] for i in ids), dtype=np.intp, count=len(ids))
        return replace(
            self,
            ids=list(ids),
            values={k: v[idx] for k, v in self.values.items()},
            scans=[self.scans[k] for k in idx.tolist()],
            paths=None if self.paths is None else [self.paths[k] for k in idx.tolist()],
            groups={g: [v[k] for k in idx.tolist()] for g, v in self.groups.items()},
        )


def _read_from_table(ctx):  # pragma: no cover - never called: the values are read, not computed
    raise ValueError("a results-table column is read from its file, not computed")


def _identifier(name: str) -> str:
    """A registry-style name (lowercase identifier) for a column's record."""
    out = re.sub(r"\W", "_", name.lower())
    return out if out.isidentifier() else f"c_{out}"


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
    """Reads a results table: per-episode metrics computed elsewhere (the formats of
    :mod:`navdtw.datasets.results`).

    Parameters
    ----------
    path:
        a JSON Lines, JSON, CSV / TSV or Parquet file (gzipped or not), or the rows as a list of
        dicts; or one run's results in several files (:mod:`navdtw.datasets.results.shards`): a folder, a
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
        the project layout (a name of :data:`navdtw.datasets.results.layouts.LAYOUTS`); default: recognised
        from the file's name and content, or none (a generic table).
    recursive:
        a folder's subfolders are read too.
    errors:
        if given, a column whose values break the non-finite policy (a NaN no formula defines) is
        left out of the table and its message stored here (``{metric: message}``) instead of
        raised, as :func:`navdtw.registry.nonfinite_policy` does (a suite fails that column only);
        a column of ``columns`` the table lacks is then not an error either: it is listed in the
        table's ``unmapped`` (a suite maps it where a table has it).

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


def _load(path, columns, percent, id_column, path_column, select, errors=None, layout=None, recursive=False, keep=None):
    with routed(path, "results"):  # not a results table (trajectories, a split, a log): say what it is
        table = _load_table(path, columns, percent, id_column, path_column, select, errors, layout, recursive, keep)
    if not set(table.values) & set(registry.names()):  # no metric of its own: trajectories read as columns?
        refuse_other_shape(path, "results")
    return table


def _load_table(
    path, columns, percent, id_column, path_column, select, errors=None, layout=None, recursive=False, keep=None
):
    if is_path(path) or is_path_list(path):
        raw = gather(path, layout, recursive, id_column, keep)
        if raw.means is not None:
            raise ValueError(means_message(raw))
    else:
        rows = list(path)  # type: ignore[arg-type]
        for k, row in enumerate(rows):
            if not isinstance(row, Mapping):
                raise ValueError(f"{INPUT}: entry {k}: expected a dict (one episode), got {type(row).__name__}")
        if not rows:
            raise ValueError(f"{INPUT}: no rows")
        raw = Raw(INPUT, columns_of([dict(r) for r in rows]), len(rows), lambda k: f"entry {k}")
    fields = build(raw, columns, percent, id_column, path_column, select, errors)
    if keep is not None and "files" in keep:
        keep.update(fields=fields, how=raw.how, layout=raw.layout, columns=list(raw.columns), sources=raw.sources)
    return ResultsTable(**fields)


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
            raise ValueError(f"{t.source}: no row for {named(t.id_name)} {few(missing)}, which {first.source} has")
        extra = [i for i in t.ids if i not in ref]
        if extra:
            raise ValueError(
                f"{t.source}: rows for {named(t.id_name)} {few(extra)}, which {first.source} does not have"
            )
    return list(first.ids)


@dataclass
class _Grown:
    """What :class:`GrowingResults` read of a run: its files (in reading order) with each one's rows,
    :class:`~._readers.Tail` and layout, and the table's fields."""

    files: Any  # shards.Files
    paths: list
    counts: list[int]
    tails: list[Tail | None]
    layouts: list[str | None]
    fields: dict[str, Any]
    how: str
    layout: Any  # the run's layout (layouts.Layout) or None
    columns: list[str]  # the run's raw columns, in order
    sources: list[str]
    seen: set[str]
    ordered: bool  # paths sorted (a folder, a glob): a new file's place found by bisection
    metas: list  # each file's navdtw episode log metadata (LogMeta), or None


class GrowingResults:
    """Internal (``navdtw watch``): one run's results table read as its files grow.

    The lines appended to its JSON Lines files (:class:`~._readers.Tail`: by byte offset, an
    incomplete last line left for the next read) and the files added to its folder are read on
    their own, built by the same steps (:func:`~._build.extend`) and joined to the table read before
    (each file's rows in their place), when that is the table a whole read gives; anything else (a
    file truncated or rewritten, a CSV, gzip, Parquet or JSON document changed, an evaluator's
    summary, a change of the columns, a row that breaks a rule: every error) reads the run whole
    with :func:`load_results`, which gives the table or the error.

    Parameters
    ----------
    path : str, os.PathLike or list
        The run's files, as :func:`load_results` takes them.
    **options
        The options of :func:`load_results` (``columns``, ``percent``, ``id_column``,
        ``path_column``, ``select``, ``layout``, ``recursive``).

    Attributes
    ----------
    added : list of str or None
        The ids of the rows the last :meth:`read` added, every earlier row unchanged; None when it
        read the run whole.
    rows : list of int
        Where the rows added are in the table read (as ``added``).
    """

    def __init__(self, path: PathLike | Sequence[PathLike], **options: Any) -> None:
        self.path = path
        self._options = {
            "columns": parse_columns(options.get("columns")),
            "percent": parse_percent(options.get("percent", False)),
            "id_column": options.get("id_column"),
            "path_column": options.get("path_column"),
            "select": parse_select(options.get("select")),
            "layout": options.get("layout"),
            "recursive": bool(options.get("recursive", False)),
        }
        if self._options["layout"] is not None:
            layouts.layout(self._options["layout"])
        self.added: list[str] | None = None
        self.rows: list[int] = []
        self.new_sources: list[str] | None = None  # the sources of the files the last read added (None: read whole)
        self._state: _Grown | None = None

    def reset(self) -> None:
        """The next :meth:`read` reads the run whole (its caller knows a file was rewritten)."""
        self._state = None

    def read(self, files: Any = None, changed: Iterable[PathLike] | None = None) -> ResultsTable:
        """The run's table now.

        Parameters
        ----------
        files : navdtw.datasets.results.shards.Files, optional
            The run's files now, when the caller knows them (default: :func:`~.shards.files_of`).
        changed : iterable of path, optional
            The files appended to or added since the last read, when the caller knows them
            (default: every file whose size, time or inode changed).

        Returns
        -------
        ResultsTable

        Raises
        ------
        ValueError
            As :func:`load_results`.
        """
        with _gc_paused():
            if self._state is not None and not self._options["select"]:
                try:
                    return self._more(self._state, files, changed)
                except Reread:
                    pass
            return self._whole()

    def _whole(self) -> ResultsTable:
        self._state, self.added, self.rows, self.new_sources = None, None, [], None
        o = self._options
        keep: dict[str, Any] = {}
        table = _load(
            self.path, o["columns"], o["percent"], o["id_column"], o["path_column"], o["select"], None,
            o["layout"], o["recursive"], keep,
        )  # fmt: skip
        if "fields" not in keep:  # a folder of episode folders: read whole at every change
            return table
        parts, fields = keep["parts"], keep["fields"]
        plain = all(p.keys is None and not p.text_parsed and p.means is None and not p.tail for p in parts)
        counts = [p.n for p in parts]
        if plain and sum(counts) == len(fields["ids"]):
            paths = list(keep["files"].paths)
            self._state = _Grown(
                keep["files"], paths, counts, list(keep["tails"]),
                [None if p.layout is None else p.layout.name for p in parts], fields, keep["how"], keep["layout"],
                keep["columns"], list(keep["sources"]), set(fields["ids"]), paths == sorted(paths), list(keep["metas"]),
            )  # fmt: skip
        return table

    def _more(self, st: _Grown, files: Any, changed: Iterable[PathLike] | None) -> ResultsTable:
        from bisect import bisect_left

        from .shards import files_of

        o = self._options
        if files is None:
            files = files_of(self.path, recursive=o["recursive"])
        if files.label != st.files.label:
            raise Reread("the run's files are named otherwise")
        if changed is None:
            known = dict(zip(st.paths, st.tails))
            changed = [p for p in files.paths if p not in known or _stamp(p) != getattr(known[p], "stamp", None)]
        found: dict[int, tuple[Any, Any, Tail | None, bool]] = {}  # index -> (path, rows, tail, new)
        new_paths: list[Any] = []
        for p in changed:
            i = bisect_left(st.paths, p) if st.ordered else next((k for k, q in enumerate(st.paths) if q == p), -1)
            if 0 <= i < len(st.paths) and st.paths[i] == p:
                tail = st.tails[i]
                if tail is None:
                    raise Reread("a file read whole changed")
                after, data, _pending = read_appended(p, tail)
                if not data:
                    st.tails[i] = after
                    continue
                raw = appended_raw(data, tail, p, o["layout"], o["id_column"])
                if (None if raw.layout is None else raw.layout.name) != st.layouts[i]:
                    raise Reread("another layout")
                found[i] = (p, raw, after, False)
            elif st.ordered:
                new_paths.append(p)
            else:
                raise Reread("a file added to a list")
        for p in sorted(new_paths):  # placed in reading order, as files_of lists them
            if log_meta(p) is not None:  # a navdtw episode log: whole (its metadata checked with the others')
                raise Reread("a log added")
            try:
                raw, tail = read_kept(p, o["layout"], o["id_column"])
            except ValueError as exc:
                raise Reread(str(exc)) from None
            if raw.keys is not None or raw.text_parsed or raw.means is not None or raw.summaries or raw.tail:
                raise Reread("a file of another form")
            i = bisect_left(st.paths, p)
            st.paths.insert(i, p)  # from here on the state is the new files': a Reread starts again
            for lst, value in (
                (st.counts, 0),
                (st.tails, None),
                (st.layouts, None),
                (st.sources, ""),
                (st.metas, None),
            ):
                lst.insert(i, value)
            found = {(k + 1 if k >= i else k): v for k, v in found.items()}
            found[i] = (p, raw, tail, True)
            st.layouts[i] = None if raw.layout is None else raw.layout.name
            st.sources[i] = str(p.resolve())
        self.new_sources = [st.sources[bisect_left(st.paths, p)] for p in new_paths]
        if new_paths:
            self._state = None  # until the table is joined
            names = set(st.layouts)
            whole = next(iter(names)) if len(names) == 1 else None
            if whole != (None if st.layout is None else st.layout.name) or len(files.paths) != len(st.paths):
                raise Reread("the run's layout or files are not as read")
        if not found:
            self.added, self.rows = [], []
            self._state = st
            return ResultsTable(**st.fields)
        order = sorted(found)
        colset = set(st.columns)
        parts = []
        for i in order:
            p, raw, _tail, new = found[i]
            cols = list(raw.columns)
            if not colset.issuperset(cols):
                raise Reread("a column not read before")
            if new and i == 0 and cols + [c for c in st.columns if c not in set(cols)] != st.columns:
                raise Reread("the columns' order")
            raw.columns = {c: raw.columns[c] if c in raw.columns else [None] * raw.n for c in st.columns}
            parts.append(raw)
        raw = parts[0] if len(st.paths) == 1 else concat_parts(parts, files.label)
        raw.layout, raw.sources = st.layout, tuple(st.sources)
        logs = list(filter(None, st.metas))  # the LogMeta of the run's logs
        raw.how = how_of(files.how, st.layout, o["id_column"], logs, len(st.paths))
        part = extend(st.fields, raw, st.how, o["columns"], o["percent"], o["id_column"], o["path_column"], st.seen)
        cuts = []  # (row of the table read before, rows added there)
        for i, rows in zip(order, parts):
            cuts.append((sum(st.counts[: i + 1]), rows.n))
        f = _joined_fields(st.fields, cuts, part, raw.sources)
        for i, rows in zip(order, parts):
            st.counts[i] += rows.n
            st.tails[i] = found[i][2]
        st.fields, st.how = f, raw.how
        st.seen.update(part["ids"])
        st.files = files
        self._state, self.added, self.rows = st, list(part["ids"]), []
        shift = 0
        for pos, n in cuts:
            self.rows += range(pos + shift, pos + shift + n)
            shift += n
        return ResultsTable(**f)


def _joined_fields(before: dict[str, Any], cuts: list[tuple[int, int]], part: dict[str, Any], sources) -> dict:
    """A table's fields with the rows of ``part`` put in at the cuts (:func:`spliced`)."""
    f = dict(before)
    f["ids"] = spliced(before["ids"], cuts, part["ids"])
    f["values"] = {k: spliced(v, cuts, part["values"][k]) for k, v in before["values"].items()}
    f["scans"] = spliced(before["scans"], cuts, part["scans"])
    f["paths"] = None if f["paths"] is None else spliced(before["paths"], cuts, part["paths"])
    f["groups"] = {g: spliced(v, cuts, part["groups"][g]) for g, v in before["groups"].items()}
    f["notes"], f["sources"] = part["notes"], sources
    return f


def _stamp(path) -> tuple[int, int, int] | None:
    import os

    try:
        return stamp_of(os.stat(path))
    except OSError:
        return None


def spliced(old, cuts: list[tuple[int, int]], new):
    """``old`` with ``new``'s items put in at the cuts (``(position in old, how many)``, in order):
    lists or arrays."""
    out, start, k = [], 0, 0
    for pos, n in cuts:
        out += [old[start:pos], new[k : k + n]]
        start, k = pos, k + n
    out.append(old[start:])
    if isinstance(old, np.ndarray):
        return np.concatenate(out)
    joined: list = []
    for seg in out:
        joined += seg
    return joined
