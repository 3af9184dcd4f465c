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
from ._build import build
from ._columns import EXTERNAL, parse_columns, parse_percent, parse_select
from ._readers import Raw, columns_of, gather, is_path_list, means_message

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


def _load(path, columns, percent, id_column, path_column, select, errors=None, layout=None, recursive=False):
    with routed(path, "results"):  # not a results table (trajectories, a split, a log): say what it is
        table = _load_table(path, columns, percent, id_column, path_column, select, errors, layout, recursive)
    if not set(table.values) & set(registry.names()):  # no metric of its own: trajectories read as columns?
        refuse_other_shape(path, "results")
    return table


def _load_table(path, columns, percent, id_column, path_column, select, errors=None, layout=None, recursive=False):
    if is_path(path) or is_path_list(path):
        raw = gather(path, layout, recursive, id_column)
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
    return ResultsTable(**build(raw, columns, percent, id_column, path_column, select, errors))


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
