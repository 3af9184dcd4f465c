"""Internal to :mod:`navdtw.datasets.results`: the data set kind ``results``
(:data:`RESULTS`, ``navdtw.datasets.DATASETS["results"]``) and its :class:`ResultsBenchmark`: every
agent's table read with the same options, checked against the split when one is given, its columns
its scores, its paths for the path bootstrap."""

from __future__ import annotations

import itertools
import re
import warnings
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..._io import sha256_of
from ..._messages import few, named
from ...metrics import Scores
from .._common import shifted_ids_hint
from ..base import DATASETS, SPLIT_KINDS, Benchmark, DatasetKind, Option
from ..shapes import other_split
from . import layouts
from ._columns import parse_columns, parse_percent, parse_select
from ._table import GrowingResults, ResultsTable, load_results
from .episode_log import LogMeta, log_meta

__all__ = ["RESULTS", "ResultsBenchmark"]


def _flag(value, name: str) -> bool:
    """A true / false option (a bool, or ``"true"`` / ``"false"`` from the command line)."""
    if isinstance(value, str) and value.lower() in ("true", "false"):  # from the command line
        return value.lower() == "true"
    if not isinstance(value, bool):
        raise ValueError(f"{name}: expected true or false, got {value!r}")
    return value


def id_shape_clusters(ids: Sequence[str], kind: str | None = None) -> tuple[list[str] | None, str]:
    """Internal: path ids from the ids' shape, ``(labels or None, how)``: the shape of ``kind``'s ids
    (its :class:`~navdtw.datasets.base.IdShape`: ``<path_id>_<k>`` of R2R, R4R and RxR's VLN-HAMT
    ids, ``<path_id>_<objId>_<k>`` of REVERIE; none for NDH and the continuous kinds), or without
    a kind the first registered kind's shape that every id has."""
    if kind is not None:
        shape = DATASETS[kind].id_shape if kind in DATASETS else None
        shapes = [shape] if shape is not None else []
    else:
        shapes = list({k.id_shape.words: k.id_shape for k in DATASETS.values() if k.id_shape is not None}.values())
        shapes = [s for s in shapes if ids and all(re.fullmatch(s.pattern, i) for i in ids)]
    if not shapes:
        return None, ""
    return [shapes[0].path(i) for i in ids], f"the ids' shape {shapes[0].words}"


class ResultsBenchmark(Benchmark):
    """Results tables of one data set: each agent's file is read (:func:`~navdtw.datasets.load_results`) with the
    same options, checked against the split when one is given, and its columns are its scores.

    Attributes: ``split`` (the split's episodes, a :class:`~navdtw.datasets.SplitIndex`, or None),
    ``dataset_kind`` (the kind whose split and id shapes apply, or None), ``options`` (the keyword
    arguments of :func:`~navdtw.datasets.load_results`), ``clusters`` (how :meth:`cluster_of` finds
    the paths, in words, after the tables are read).

    Parameters
    ----------
    split : str or os.PathLike, optional
        The data set's split (episodes, ids, scans, paths, languages), read by ``dataset_kind``'s
        own reader (its ``split_index``).
    dataset_kind : str, optional
        The kind whose split and id shapes apply (a kind of :data:`~navdtw.datasets.DATASETS`
        that reads a split file: ``SPLIT_KINDS``); needed with ``split``.
    columns, percent, id_column, path_column, select, layout, recursive : optional
        The options of :func:`~navdtw.datasets.load_results`, for every agent's table.
    partial : bool, optional
        Allow a table that covers fewer episodes than the split, or than the evaluator's summary
        says it evaluated (default False: an error; True: a warning in its notes).

    Raises
    ------
    ValueError
        A ``split`` without ``dataset_kind``, a ``dataset_kind`` without a split file, a malformed
        split (or one of another kind), or a bad ``columns``, ``percent`` or ``select``
        (:func:`parse_columns`, :func:`parse_percent`, :func:`parse_select`).
    KeyError
        With ``split``, a ``dataset_kind`` that is not a registered kind.
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
                f"({', '.join(SPLIT_KINDS)}; --dataset-kind)"
            )
        self.dataset_kind = dataset_kind
        self.split = None if split is None else DATASETS[dataset_kind].split_index(split)
        self._split_file = None if split is None else Path(split)
        self._split_sha256: str | None = None
        self._first_log: tuple[LogMeta, str] | None = None  # without a split: the first agent's log
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
        self._logs_seen: set[str] = set()  # files whose log metadata match_grown checked
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
            an id the split does not have, two rows for one episode, or a navdtw episode log
            written for another split (its metadata says which).
        FileNotFoundError
            A file name that does not exist.
        """
        self.kind.check_convention(convention)
        return self._checked(load_results(predictions, **self.options, errors=errors))

    def follow(self, predictions) -> GrowingResults:
        """Internal (``navdtw watch``): one agent's results table, read as its files grow
        (:meth:`match_grown`).

        Parameters
        ----------
        predictions : str, os.PathLike or list
            The agent's results files.

        Returns
        -------
        GrowingResults

        Raises
        ------
        ValueError
            An unknown layout in the options.
        """
        return GrowingResults(predictions, **self.options)

    def match_grown(self, growing: GrowingResults, files=None, changed=None) -> ResultsTable:
        """Internal (``navdtw watch``): :meth:`match` of a run read as it grows: what was appended or
        added since the last call read (:meth:`GrowingResults.read`), the same table and checks.

        Parameters
        ----------
        growing : GrowingResults
            From :meth:`follow`.
        files, changed : optional
            As :meth:`GrowingResults.read`.

        Returns
        -------
        ResultsTable
            As :meth:`match`.

        Raises
        ------
        ValueError
            As :meth:`match`.
        """
        table = self._checked(growing.read(files, changed), logs_seen=self._logs_seen, sources=growing.new_sources)
        if self.split is not None:
            growing.added = None  # the rows are put in split order: not an append
        return table

    def _checked(
        self, table: ResultsTable, logs_seen: set[str] | None = None, sources: list[str] | None = None
    ) -> ResultsTable:
        """The table checked against the evaluator's count and the split, in split order (its
        episode logs' metadata checked, but those in ``logs_seen``: a run read as it grows; of its
        ``sources``, only those of the files added, when the read says which)."""
        self._check_logs(table, logs_seen, sources)
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

    def _check_logs(self, table: ResultsTable, seen: set[str] | None = None, sources: Any = None) -> None:
        """A navdtw episode log written for another split than the one given (its metadata's
        SHA-256 against the split file's), or without a split, for another split than the first
        agent's log: named, never compared as if of one split. ``seen``: files checked already
        (skipped; those checked now are added)."""
        sources = table.sources if sources is None else sources
        for source in sources if seen is None else itertools.filterfalse(seen.__contains__, sources):
            if seen is not None:
                seen.add(source)  # an error stops the watch: not checked again
            meta = log_meta(source)
            if meta is None:
                continue
            if self._split_file is not None:
                if self._split_sha256 is None:
                    self._split_sha256 = sha256_of(self._split_file)
                wrong = meta.against_split(self._split_file.name, self._split_sha256)
            elif self._first_log is None or not self._first_log[0].split_sha256:
                self._first_log = (meta, table.source)
                wrong = None
            else:
                first, whose = self._first_log
                wrong = meta.against_split(first.split or "", first.split_sha256 or "", given=f"{whose}'s split")
                wrong = wrong and f"{wrong}: the agents compared ran different splits"
            if wrong:
                raise ValueError(wrong)

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
            raise ValueError(
                f"{table.source}: {named(table.id_name)} {few(unknown)}: not episodes of {split.name}"
                + shifted_ids_hint(ids, split.ids)
            )
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
            choices=SPLIT_KINDS,  # type: ignore[arg-type]  # read from the registry when asked
        ),
        Option(
            "columns",
            "a column's metric (NAME=osr), direction (NAME=+ or NAME=-) or NAME=ignore; repeatable",
            kind="value",
            required=False,
            parse=parse_columns,
            cli=(("--column", {"action": "append", "metavar": "NAME=METRIC"}),),
        ),
        Option(
            "percent",
            "rate columns are in percent (all of them; or the named ones)",
            kind="value",
            required=False,
            default=False,
            parse=parse_percent,
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
            parse=lambda v: _flag(v, "recursive"),
            cli=(("--recursive", {"action": "store_const", "const": True}),),
        ),
        Option(
            "partial",
            "allow results that cover part of the split (or of the evaluator's episode count): a warning, not an error",
            kind="value",
            required=False,
            default=False,
            parse=lambda v: _flag(v, "partial"),
            cli=(("--partial", {"action": "store_const", "const": True}),),
        ),
        Option("id_column", "the id column (default: episode_id, instr_id, ...)", kind="text", required=False),
        Option("path_column", "the column of path ids (default: path_id, trajectory_id)", kind="text", required=False),
        Option(
            "select",
            "keep only the rows whose COLUMN holds VALUE (a suite's episodes file: agent=NAME); repeatable",
            kind="value",
            required=False,
            parse=parse_select,
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
