"""Follows an evaluation that is still running and says when its question is answered.

``navdtw watch`` reads the per-episode results an evaluator is writing (JSON Lines appended per
episode, whose partial last line is waited for; a folder of one file per episode; several shards
of one run), takes the longest complete prefix of the random order written by ``navdtw order``,
and keeps a confidence sequence (:mod:`navdtw.sequential`) for the mean over the whole split of
each bounded metric (the rates: SR, OSR, SPL, nDTW, SDTW, ...). The questions it decides:

* ``width``: every chosen metric's interval is at most ``width`` wide;
* ``reported``: a reported figure is outside the interval, or inside it at the width;
* ``against``: the mean paired difference from an agent evaluated on the same split is above 0,
  below 0, or within the width of 0, for every chosen metric (the error shared out);
* ``checkpoints``: several runs in the same order, each at its own pace; a run whose upper bound is
  below another's lower bound is eliminated, until one remains or the rest are within the width.

The error ``alpha`` is shared out equally over what one decision depends on (the metrics, or the
runs), and every message states the share. docs/stopping.md has the guarantees and measurements.
"""

from __future__ import annotations

import contextlib
import glob
import gzip
import json
import os
import shutil
import tempfile
import time
import warnings
import weakref
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from . import registry
from ._decisions import DECISIONS, FOREIGN_LIMIT, INTERRUPTED, reported_inside
from ._following import Growing, files_base, stamp_changed, whole_json
from ._io import atomic_write_json, output_folder
from ._messages import listed, named, no_column
from ._watch_view import checkpoints_cost, state, summary, view
from .datasets.base import Benchmark
from .datasets.results import ResultsTable
from .datasets.results.episode_log import LogMeta, log_meta
from .datasets.results.layouts import shard_of
from .order import Order, off_by_one
from .sequential import CHECK_ALPHA, ConfidenceSequence, Interval, NotRandomOrder, paired_bounds

__all__ = ["DECISIONS", "FOREIGN_LIMIT", "Episodes", "Follower", "NotInOrder", "Watch", "complete_part", "unfinished"]


class NotInOrder(ValueError):
    """A run's results are not episodes of the order (``navdtw watch`` exit status 19): foreign ids,
    ids off by one (:func:`navdtw.order.off_by_one`), a log of another order or split."""


# --------------------------------------------------------------------------------------------
# reading a run as it is written
# --------------------------------------------------------------------------------------------


def complete_part(data: bytes) -> bytes | None:
    """The part of a file still being written that a reader may take, or None (nothing yet).

    A whole JSON document (a file rewritten as it grows) is taken whole, and a document cut short
    (being written) is not taken at all; a file of lines (JSON Lines, CSV) is taken up to its last
    newline, with a last line that has no newline yet only when it is already a whole JSON value
    (StreamVLN ends its file with a summary object and no newline); a CSV table's header alone, an
    empty list or object hold nothing yet. Gzip and Parquet files are taken only when whole.

    Parameters
    ----------
    data : bytes
        The file's bytes as they are now.

    Returns
    -------
    bytes or None
        What to read (gzip decompressed), or None when no part is complete yet.
    """
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error):
            return None  # the compressed stream is not finished yet
    if data[:4] == b"PAR1":
        return data if len(data) > 8 and data[-4:] == b"PAR1" else None
    head = data.lstrip(b"\xef\xbb\xbf \t\r\n")
    if not head:
        return None
    if head[:1] in b"[{":
        with contextlib.suppress(ValueError, RecursionError):
            return data if json.loads(data) else None  # a whole document; an empty one holds nothing yet
        first = head.split(b"\n", 1)
        if len(first) < 2 or not whole_json(first[0]):
            return None  # a document being written (its first line is not a whole value)
    else:
        rows = [line for line in data.split(b"\n")[:-1] if line.strip()]
        return data[: data.rfind(b"\n") + 1] if len(rows) > 1 else None  # CSV: a header alone holds nothing yet
    cut = data.rfind(b"\n") + 1
    tail = data[cut:]
    return data if tail.strip() and whole_json(tail) else (data[:cut] or None)


def unfinished(data: bytes, part: bytes | None) -> str:
    """What of a file is still being written, as the view says it ("" when nothing is).

    Parameters
    ----------
    data : bytes
        The file's bytes as they are now.
    part : bytes or None
        Its :func:`complete_part`.

    Returns
    -------
    str
        ``"a last line being written (37 bytes, no newline yet)"``, ``"nothing complete yet (a
        first line or a document being written)"``, ``"a gzip stream not finished yet"``, or "".
    """
    if data[:2] == b"\x1f\x8b":
        return "a gzip stream not finished yet" if part is None else ""
    if part is None:
        return "nothing complete yet (a first line or a document being written)" if data.strip() else ""
    tail = data[len(part) :] if data.startswith(part) else b""
    return f"a last line being written ({len(tail)} bytes, no newline yet)" if tail.strip() else ""


@dataclass(frozen=True)
class Episodes:
    """A run's episodes scored so far (or another agent's complete ones, ``--against``).

    Attributes
    ----------
    source:
        the run's files, as messages name them.
    ids:
        the episode ids, as strings.
    values:
        metric -> float64 values, one per id (navdtw's non-finite policy applied).
    rates:
        the metrics that are rates, bounded in [0, 1].
    unscored:
        ids of the split the evaluator's convention does not score (the R2R evaluator scores
        instructions 0..2 of each path): done, without a value.
    notes:
        what the reader or the matcher said (the layout recognised, the evaluator's summary).
    """

    source: str
    ids: list[str]
    values: dict[str, np.ndarray]
    rates: frozenset[str]
    unscored: frozenset[str] = frozenset()
    notes: tuple[str, ...] = ()

    @classmethod
    def of_table(cls, table: ResultsTable) -> Episodes:
        """A results table's episodes.

        Parameters
        ----------
        table : ResultsTable
            A table of :func:`navdtw.datasets.load_results`.

        Returns
        -------
        Episodes
        """
        return cls(table.source, list(table.ids), dict(table.values), frozenset(table.rates), notes=table.notes)


class Follower(Growing):
    """One run, read as it is written: its results (or its trajectories, scored) so far.

    Every look mirrors the complete part of the run's files (:func:`complete_part`) into a private
    folder, under their own names, and reads that through the data set's own reader and scorer,
    as ``navdtw compare`` does: a results table through :func:`navdtw.datasets.load_results` (every
    layout it reads: JSON Lines, JSON, CSV, an ETPNav rank's file with its siblings, a folder of
    one file per episode, StreamVLN's summary line, ...); trajectories through their kind's
    matcher and :func:`navdtw.evaluate`, file by file: the lines appended to a JSON Lines file are
    matched and scored on their own (each episode once), any other change reads the file again
    whole. A look reads only what was written since the last one (``incremental``): the lines
    appended to each JSON Lines file (by byte offset) and the files added to a folder, put into
    the copies and read by the results reader that follows them (``ResultsBenchmark.follow``), or
    matched and scored on their own and joined to the run's episodes; a file truncated or
    rewritten is read whole. Trajectories in JSON Lines are given to the reader as a JSON list of the same records,
    so its messages name them ``entry k``, counted from 0 in the whole file. A file with nothing
    complete yet, and a rank's file not written yet, are waited for.

    Parameters
    ----------
    source : str or Path
        The run's files as ``navdtw compare`` takes them: a file (JSON Lines appended per episode,
        a JSON file rewritten as it grows, one rank's file of a run written per rank), a folder of
        one file per episode, or a glob pattern of shards.
    name : str
        The run's name in messages.
    bench : Benchmark, optional
        The data set the run is read through (:func:`navdtw.datasets.open`); default: results
        tables (``open("results", partial=True)``). A kind that scores trajectories must match a
        part of its split (``matches_partial``: r2r, r4r, r2r-ce, rxr-ce, positions; the message lists the
        registered kinds that do).
    convention : str, optional
        The convention scored (default: the kind's).
    threshold : float, optional
        The success distance in metres for trajectories (default 3.0).
    incremental : bool, optional
        Read results tables as they grow (default): what was appended to a JSON Lines file since
        the last look (by byte offset; an incomplete last line is read again from its start next
        time) and the files added to a folder, each shard by its own state; a file truncated or
        rewritten, and a change a whole read decides from every row, read the run whole
        (:class:`navdtw.datasets.results.ResultsBenchmark`'s ``follow``). False: every change
        reads the run whole (the reference the incremental reading is tested against).
    restat : int, optional
        A folder's files whose contents were complete are looked at again this many a look (in
        turn), besides the files added and those still being written: a file rewritten in place
        is seen within ``files / restat`` looks (default 256; every look for a smaller folder).

    Attributes
    ----------
    added : Episodes or None
        After a :meth:`poll` that changed the run: the episodes it added, every earlier one
        unchanged (an incremental read); None when the run was read whole.

    Raises
    ------
    ValueError
        A kind that cannot score a part of its split.
    """

    _Episodes = Episodes
    _complete_part = staticmethod(complete_part)
    _unfinished_of = staticmethod(unfinished)

    def __init__(
        self,
        source: str | Path,
        *,
        name: str,
        bench: Benchmark | None = None,
        convention: str | None = None,
        threshold: float = 3.0,
        incremental: bool = True,
        restat: int = 256,
    ) -> None:
        from .datasets import DATASETS
        from .datasets import open as open_dataset

        self.name = name
        self.source = str(source)
        self.bench = bench if bench is not None else open_dataset("results", partial=True)
        kind = self.bench.kind
        if not kind.reads_scores and not self.bench.matches_partial:
            partial = ", ".join(k.name for k in DATASETS.values() if getattr(k.opener, "matches_partial", False))
            raise ValueError(
                f"{name}: navdtw watch scores trajectories of the kinds that match a part of their split "
                f"({partial}), not {kind.name}: give the per-episode results (--dataset results)"
            )
        self.convention = kind.check_convention(convention)
        self.threshold = threshold
        self.table: Episodes | None = None
        self.waiting = ""  # why the run cannot be read yet, for the terminal view
        self.missing = False  # its file or folder does not exist (yet)
        self._root = Path(tempfile.mkdtemp(prefix="navdtw-watch-"))
        self._cleanup = weakref.finalize(self, shutil.rmtree, self._root, True)
        self._seen: dict[Path, tuple[int, int, int]] = {}
        self._mirror: dict[Path, Path] = {}  # file -> its complete part's copy
        self._parts: dict[Path, list[Episodes]] = {}  # trajectories: each file's episodes, scored
        self._taken: dict[Path, bytes | bytearray] = {}  # trajectories: each file's complete part scored so far
        self._unfinished: dict[Path, str] = {}  # a file's part still being written, for the view
        self._logs: dict[Path, LogMeta | None] = {}  # each file's navdtw log metadata (None: not a log)
        self._start_growing(incremental, restat)

    def close(self) -> None:
        """Removes the private copies (also done when the follower is collected)."""
        self._cleanup()

    def logs(self) -> list[LogMeta]:
        """The metadata of the run's files that are navdtw episode logs
        (:class:`~navdtw.datasets.results.episode_log.EpisodeLog`), among the files seen so far.

        Returns
        -------
        list of LogMeta
            One per log file (none for other results).

        Raises
        ------
        ValueError
            A log's metadata file that is not navdtw's (named).
        """
        if len(self._logs) != len(self._seen):  # the files seen since: _logs holds the first of _seen
            for f in list(self._seen)[len(self._logs) :]:
                self._logs[f] = log_meta(f)
        return list(filter(None, self._logs.values()))

    def _files(self) -> tuple[list[Path], Path | None] | None:
        """The run's files and the folder they are mirrored from (None: not there yet)."""
        from .datasets.results.shards import files_of

        try:
            files = files_of(self.source, recursive=bool(getattr(self.bench, "options", {}).get("recursive")))
        except (ValueError, OSError) as exc:  # no file yet, an empty folder, a rank not written yet
            self.waiting = " ".join(str(exc).split())
            self.missing = not os.path.lexists(self.source) and not glob.has_magic(self.source)
            if self.missing:  # a mistyped path, or a run not started yet: the view says which
                self.waiting = f"{named(self.source)} does not exist yet: waiting for it to appear"
            return None
        self.missing = False
        folder = Path(self.source)
        return list(files.paths), folder if folder.is_dir() else None

    def poll(self) -> bool:
        """Reads what the evaluator added since the last call.

        Returns
        -------
        bool
            True when the run changed (``table`` is then every episode so far).

        Raises
        ------
        ValueError
            What the data set's reader or matcher refuses in the complete part: a malformed line
            or entry, an id in two shards, an episode not in the split (the message names the file
            and the entry).
        """
        self.added = None
        if self._grow:
            return self._poll_grown()
        found = self._files()
        if found is None:
            return False
        files, folder = found
        base = files_base(files, folder)
        changed = False
        new: dict[Path, bytes] = {}
        for f in files:
            if not stamp_changed(self._seen, f):
                continue
            data = f.read_bytes()
            part = complete_part(data)
            self._unfinished[f] = unfinished(data, part)
            if part is None:
                continue  # nothing complete yet, or being rewritten: its last complete copy stays
            copy = self._root / base.name / f.resolve().relative_to(base)
            copy.parent.mkdir(parents=True, exist_ok=True)
            if not self.bench.kind.reads_scores:
                if self._taken.get(f) != part:
                    new[f] = part  # scored below, where a message names the run's own folder
                    changed = True
            elif not copy.exists() or copy.read_bytes() != part:
                copy.write_bytes(part)
                changed = True
            self._mirror[f] = copy
        pending = [f for f in files if f not in self._mirror and shard_of(f.name) is not None]
        if pending:  # one rank's file is one run with its siblings: all of them, or none
            self.waiting = f"{pending[0].name}: nothing complete yet"
            return False
        self.waiting = self._being_written(files) or ("" if self._mirror else "nothing complete yet")
        if not changed or not self._mirror:
            return False
        try:
            if not self.bench.kind.reads_scores:
                for f, part in new.items():
                    self._score_file(f, part)
                self.table = self._joined(files)
            elif folder is not None:
                self.table = self._read(str(self._root / base.name))
            elif Path(self.source).is_file():  # one file; one rank's names its siblings, as in compare
                self.table = self._read(str(self._root / base.name / Path(self.source).resolve().relative_to(base)))
            else:
                self.table = self._read([str(self._mirror[f]) for f in files if f in self._mirror])
        except ValueError as exc:  # the copies' folder named as the run's own
            raise ValueError(str(exc).replace(str(self._root / base.name), str(base))) from None
        return True

    def _being_written(self, files: Sequence[Path]) -> str:
        """What the view says the run waits for: its files' parts still being written."""
        notes = [f"{f.name}: {self._unfinished[f]}" for f in files if self._unfinished.get(f)]
        more = f" (and {len(notes) - 2} more files)" if len(notes) > 2 else ""
        return "; ".join(notes[:2]) + more

    def _read(self, what: Any) -> Episodes:
        """The mirrored files through the data set's reader and scorer, as ``navdtw compare``."""
        bench = self.bench
        partial = {"partial": True} if bench.matches_partial else {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # a part of the split: that is the point
            matched = bench.match(what, convention=self.convention, **partial)
            return self._episodes(matched)

    def _episodes(self, matched: Any) -> Episodes:
        """The episodes of what the data set's matcher gave, scored."""
        from .registry import nonfinite_policy

        bench = self.bench
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            scores = bench.evaluate(matched, convention=self.convention, threshold=self.threshold)
        ids = matched.ids if bench.kind.reads_scores else [str(i) for i in matched.ids]  # a table's are str
        values = nonfinite_policy({k: scores[k] for k in scores}, ids=ids, source=self.name)
        unscored = frozenset() if bench.kind.reads_scores else frozenset(map(str, matched.left_out))
        return Episodes(
            self.name,
            ids,
            values,
            frozenset(k for k in values if scores.metric(k).rate),
            unscored,
            tuple(matched.notes),
        )


# --------------------------------------------------------------------------------------------
# the questions
# --------------------------------------------------------------------------------------------


@dataclass
class _Track:
    """One confidence sequence fed from a run's prefix of the order."""

    label: str
    cs: ConfidenceSequence
    alpha: float


@dataclass
class _Run:
    name: str
    follower: Follower
    done: int = 0  # units of the order fed so far
    waiting: int = 0  # finished episodes of the order beyond the prefix
    next_unit: int = 0  # of them, the episodes of the first unit not complete (a path's instructions)
    foreign: list[str] = field(default_factory=list)  # its ids that are not episodes of the order
    tracks: dict[str, _Track] = field(default_factory=dict)
    eliminated: bool = False
    values: dict[str, dict[str, float]] | None = None  # metric -> id -> value, of the table read
    in_order: int = 0  # its ids that are episodes of the order
    fed: int = 0  # its ids in the units fed


def _unit_value(values: Mapping[str, float], unit: Sequence[str]) -> float:
    """A unit's value: the mean over its scored episodes (a path's instructions)."""
    return float(np.mean([values[i] for i in unit if i in values]))


class Watch:
    """The state of a watch: runs, their confidence sequences, the question and its decision.

    Parameters
    ----------
    order : Order
        The random order the runs follow.
    runs : Mapping[str, Follower]
        The run watched (one), or the checkpoints compared (several).
    metrics : sequence of str
        The metrics the question is about (rates of the results, bounded in [0, 1]).
    alpha : float
        The error of the decision, shared out equally over what it depends on.
    width : float or None
        The target width (``--width``; for ``reported`` and ``against``: the width at which
        "inside" and "tied" are decided).
    reported : Mapping[str, float], optional
        Reported figures per metric (``--reported``).
    against : Episodes or ResultsTable, optional
        Another agent's complete results on the same split (``--against``).

    Raises
    ------
    ValueError
        No question, several questions, or a metric that is not bounded.
    """

    def __init__(
        self,
        order: Order,
        runs: Mapping[str, Follower],
        *,
        metrics: Sequence[str],
        alpha: float = 0.05,
        width: float | None = None,
        reported: Mapping[str, float] | None = None,
        against: Episodes | ResultsTable | None = None,
    ) -> None:
        if isinstance(against, ResultsTable):
            against = Episodes.of_table(against)
        self.order = order
        self.metrics = list(metrics)
        self.alpha = alpha
        self.width = width
        self.reported = dict(reported or {})
        self.against = against
        if len(runs) > 1:
            self.question = "checkpoints"
        elif against is not None:
            self.question = "against"
        elif self.reported:
            self.question = "reported"
        elif width is not None:
            self.question = "width"
        else:
            raise ValueError("nothing to decide: give --width, --reported, --against or several checkpoints")
        if self.question == "reported":
            self.metrics = list(self.reported)
        if self.question == "checkpoints" and len(self.metrics) != 1:
            raise ValueError("checkpoints are chosen on one metric (--metric)")
        if not self.metrics:
            raise ValueError("no metric to decide on (--metric)")
        if width is not None and not width > 0:
            raise ValueError(f"--width must be > 0, not {width}")
        # The error is shared out over the metrics (one run) or the runs (checkpoints); the order's check over all.
        self.share = alpha / (len(runs) if self.question == "checkpoints" else len(self.metrics))
        self.check_share = CHECK_ALPHA / (len(runs) * len(self.metrics))
        self.runs = {n: _Run(n, f) for n, f in runs.items()}
        self._in_order = frozenset(order.ids)
        self._unit_of = {i: k for k, u in enumerate(order.units) for i in u}
        self._against_values: dict[str, dict[str, float]] = {}
        if against is not None:
            for m in self.metrics:
                if m not in against.values:
                    raise ValueError(f"--against {against.source}: no column for {m!r}")
                if m not in against.rates:
                    raise ValueError(f"--against {against.source}: {m!r} is not a bounded metric (a rate)")
                self._against_values[m] = dict(zip(against.ids, against.values[m].tolist()))
            have = self._against_values[self.metrics[0]]
            missing = [i for i in order.ids if i not in have and i not in against.unscored]
            if missing:
                raise ValueError(
                    f"--against {against.source}: {len(missing)} episodes of the order have no row "
                    f"(first: {missing[0]!r})"
                )
        self.decision = "undecided"
        self.message = ""
        self.headline = ""  # the decision without its intervals (the view shows them above it)
        self.interrupted = False  # Ctrl-C ended run(): the state written says so
        self.per_metric: dict[str, str] = {}

    # -- feeding ------------------------------------------------------------------------------

    def _ensure_tracks(self, run: _Run, table: Episodes) -> None:
        if run.tracks:
            return
        n, scenes = len(self.order), self.order.scene_counts
        for m in self.metrics:
            if m not in table.values:
                raise ValueError(f"{run.name}: the results have {no_column(m, table.values, registry.names())}")
            if m not in table.rates:
                raise ValueError(f"{run.name}: {m!r} is not a bounded metric (only rates in [0, 1] are)")
            bounds = paired_bounds((0.0, 1.0)) if self.question == "against" else (0.0, 1.0)
            cs = ConfidenceSequence(n, bounds=bounds, alpha=self.share, check_alpha=self.check_share, groups=scenes)
            run.tracks[m] = _Track(m, cs, self.share)

    def poll(self) -> bool:
        """Reads every run's new results and feeds the new complete prefix of the order.

        Returns
        -------
        bool
            True when a confidence sequence moved.

        Raises
        ------
        NotInOrder
            More than :data:`FOREIGN_LIMIT` of a run's ids, or all of them, are not episodes of the
            order (the message says how many and names the first), or a run's navdtw episode log
            was written for another order or split (the message names both).
        ~navdtw.sequential.NotRandomOrder
            A run's values are not in a uniformly random order (the message says what, when, which order).
        ValueError
            Malformed results (the message names the file and entry), a missing metric.
        """
        moved = False
        for run in self.runs.values():
            if not run.follower.poll() and run.tracks:
                continue
            self._check_logs(run)
            table = run.follower.table
            if table is None:
                continue
            fresh = run.follower.added
            if fresh is not None and run.values is not None:  # episodes added, the others unchanged
                foreign = [i for i in fresh.ids if i not in self._in_order]
                if foreign:
                    self._check_foreign(run, table)
                for m in self.metrics:
                    run.values[m].update(zip(fresh.ids, fresh.values[m].tolist()))
                run.in_order += len(fresh.ids) - len(foreign)
                run.fed += sum(1 for i in fresh.ids if self._unit_of.get(i, len(self.order)) < run.done)
            else:
                self._check_foreign(run, table)
                self._ensure_tracks(run, table)
                run.values = {m: dict(zip(table.ids, table.values[m].tolist())) for m in self.metrics}
                run.in_order = len(table.ids) - len(run.foreign)
                run.fed = -1  # counted below
            values = run.values
            have = values[self.metrics[0]]
            k = run.done
            units = self.order.units
            while k < len(units) and all(i in have or i in table.unscored for i in units[k]):
                if not any(i in have for i in units[k]):
                    raise ValueError(f"{run.name}: unit {k} of the order has no episode the convention scores")
                k += 1
            for m, track in run.tracks.items():
                new = [_unit_value(values[m], u) for u in units[run.done : k]]
                if self.question == "against":
                    base = self._against_values[m]
                    new = [v - _unit_value(base, u) for v, u in zip(new, units[run.done : k])]
                track.cs.extend(new, self.order.scenes_of(run.done, k))
            if run.fed < 0:
                run.fed = sum(1 for u in units[:k] for i in u if i in have)
            else:
                run.fed += sum(1 for u in units[run.done : k] for i in u if i in have)
            moved |= k > run.done
            run.done = k
            NotRandomOrder.check(run.name, {m: t.cs for m, t in run.tracks.items()}, self.order)
            run.next_unit = sum(1 for i in units[k] if i in have) if k < len(units) else 0
            run.waiting = run.in_order - run.fed
        if moved or self.decision == "undecided":
            self._decide()
        return moved

    def _check_logs(self, run: _Run) -> None:
        """A navdtw episode log written for another order or split is refused before any of its
        lines is fed (its metadata against the order's seed, digest and split)."""
        for meta in run.follower.logs():
            wrong = meta.against_order(self.order)
            if wrong:
                raise NotInOrder(f"{run.name}: {wrong}")

    def _check_foreign(self, run: _Run, table: Episodes) -> None:
        """Counts the run's ids that are not episodes of the order: a few are reported (the view,
        the state); more than :data:`FOREIGN_LIMIT`, or every id, stop the watch."""
        run.foreign = [i for i in table.ids if i not in self._in_order]
        if (shifted := off_by_one(self.order, table.ids, done=run.done)) is not None:
            raise NotInOrder(f"{run.name}: {shifted}")
        n, k = len(table.ids), len(run.foreign)
        if k == 0 or (k <= FOREIGN_LIMIT and k < n):
            return
        of = f"{self.order.source}" + (f" (of {self.order.split})" if self.order.split else "")
        why = (
            "none of its ids is an episode of the order"
            if k == n
            else f"more than {FOREIGN_LIMIT} of its ids are not episodes of the order"
        )
        raise NotInOrder(
            f"{run.name}: {k} of its {n} episode ids are not episodes of the order {of} "
            f"(first: {listed(run.foreign, limit=5)}); {why}: results of another split or data set, or ids "
            "off by one? give the order of the split the run evaluates"
        )

    # -- deciding -----------------------------------------------------------------------------

    def _decide(self) -> None:
        q = self.question
        run = next(iter(self.runs.values()))
        if not run.tracks:
            return
        ivs = {m: t.cs.interval() for m, t in run.tracks.items()}
        share = f"alpha {self.alpha:g}, {self.share:.4g} each"
        if q == "width":
            wide = {m: iv.width for m, iv in ivs.items()}
            if all(w <= self.width for w in wide.values()):
                self._set("width", f"every metric known to ±{self.width / 2:g} ({share})", _show(ivs))
        elif q == "reported":
            verdict = {}
            for m, iv in ivs.items():
                if not reported_inside(self.reported[m], iv.lower, iv.upper):  # the figure as rounded
                    verdict[m] = "outside"
                elif self.width is not None and iv.width <= self.width:
                    verdict[m] = "inside"
            self.per_metric = verdict
            if any(v == "outside" for v in verdict.values()):
                out = [m for m, v in verdict.items() if v == "outside"]
                self._set(
                    "reported-outside",
                    "reported "
                    + ", ".join(f"{m} {self.reported[m]:g}" for m in out)
                    + f" outside the split mean's interval ({share})",
                    _show({m: ivs[m] for m in out}),
                )
            elif len(verdict) == len(ivs):
                self._set(
                    "reported-inside",
                    f"every reported figure inside its interval at width {self.width:g} ({share})",
                    _show(ivs),
                )
        elif q == "against":
            verdict = {}
            for m, iv in ivs.items():
                if iv.lower > 0:
                    verdict[m] = "better"
                elif iv.upper < 0:
                    verdict[m] = "worse"
                elif self.width is not None and iv.width <= self.width:
                    verdict[m] = "tied"
            self.per_metric = verdict
            if len(verdict) == len(ivs):
                kinds = set(verdict.values())
                kind = (
                    "mixed"
                    if {"better", "worse"} <= kinds
                    else "better"
                    if "better" in kinds
                    else "worse"
                    if "worse" in kinds
                    else "tied"
                )
                base = self.against.source
                on = {v: ", ".join(m for m, w in verdict.items() if w == v) for v in kinds}
                head = (
                    f"mixed against {base}: better on {on['better']}, worse on {on['worse']}"
                    if kind == "mixed"
                    else f"tied with {base}: every difference within {self.width:g} of 0"
                    if kind == "tied"
                    else f"{kind} than {base}" + (f" (tied on {on['tied']})" if "tied" in on else "")
                )
                self._set(kind, f"{head} ({share})", _show(ivs, signed=True))
        else:
            self._decide_checkpoints()

    def _decide_checkpoints(self) -> None:
        m = self.metrics[0]
        ivs = {
            n: r.tracks[m].cs.interval() if r.tracks else Interval(0.0, 1.0, 0, len(self.order))
            for n, r in self.runs.items()
        }
        live = [n for n, r in self.runs.items() if not r.eliminated]
        best_lower = max(ivs[n].lower for n in live)
        for n in live:
            if ivs[n].upper < best_lower:
                self.runs[n].eliminated = True
        live = [n for n in live if not self.runs[n].eliminated]
        share = f"alpha {self.alpha:g}, {self.share:.4g} per checkpoint"
        cost = checkpoints_cost(self.runs, m, len(self.order))
        if len(live) == 1:
            head = f"{live[0]} is the best on {m} on this split (the highest mean over all episodes; {share}); {cost}"
            self._set("chosen", head, _show({n: ivs[n] for n in ivs}))
        elif self.width is not None and max(ivs[n].upper for n in live) - min(ivs[n].lower for n in live) <= self.width:
            self._set(
                "tied-checkpoints",
                f"{', '.join(live)} are within {self.width:g} on {m} on this split ({share}); {cost}",
                _show({n: ivs[n] for n in live}),
            )

    def _set(self, decision: str, head: str, intervals: str) -> None:
        self.decision, self.headline, self.message = decision, head, f"{head}: {intervals}"

    # -- showing ------------------------------------------------------------------------------

    def lines(self) -> list[str]:
        """The terminal view: progress of the order, each interval, the question's state.

        Every line of fixed form fits 80 columns (with metric names up to 8 characters and run
        names up to 20); a path or a message may be longer (the terminal view counts the rows it
        wraps to).

        Returns
        -------
        list of str
            One line each.
        """
        return view(self)

    def summary(self) -> str:
        """The state in one line, for a log (``navdtw watch`` off a terminal prints it when it changes).

        Returns
        -------
        str
            Each run's prefix and intervals (``run 613/1839, sr [0.5412, 0.6230]``), and how
            many of its episodes wait beyond the prefix.
        """
        return summary(self)

    def state(self) -> dict[str, Any]:
        """The state as a results.json-style dict (``--output``).

        Returns
        -------
        dict
            The order, the question, each run's prefix and intervals, the decision and exit status.
        """
        return state(self)

    def run(
        self,
        *,
        once: bool = False,
        poll: float = 2.0,
        idle: float | None = None,
        show: Callable[[list[str]], None] | None = None,
        output: str | Path | None = None,
        force: bool = False,
        clock: Callable[[], float] | None = None,
        sleep: Callable[[float], None] | None = None,
    ) -> str:
        """Follows the runs until the question is decided (or once, or until idle).

        Parameters
        ----------
        once : bool
            Look once and return.
        poll : float
            Seconds between looks.
        idle : float or None
            Give up after this many seconds without new results (the message says so).
        show : callable, optional
            Called with :meth:`lines` after every look (a viewer compares them with the last to
            redraw only what changed).
        output : str or Path, optional
            A JSON file the final :meth:`state` is written to, by navdtw's output rules
            (the output folders of :doc:`the command </cli>`): a file of that name that navdtw did not write (no
            record in the folder's manifest), or that was changed since, is an error naming it.
        force : bool
            Replace such a file (never a read-only one).
        clock, sleep : callable, optional
            The clock ``idle`` is measured with and the wait between looks (default:
            ``time.monotonic``, ``time.sleep``; tests fake them).

        Returns
        -------
        str
            The decision (a key of ``DECISIONS``).

        Raises
        ------
        NotInOrder
            A run's results are not episodes of the order (see :meth:`poll`).
        ValueError
            Malformed results.
        ~navdtw.suite.OutputError
            ``output`` may not be replaced, or cannot be written.
        KeyboardInterrupt
            Ctrl-C: raised again once ``output`` holds the state of the last whole look, its
            message saying so and its ``exit_status`` 130 (the command's).
        """
        clock = clock or time.monotonic
        sleep = sleep or time.sleep
        last_new = clock()
        looks = 0
        stood = self.state()
        try:
            while True:
                moved = self.poll()
                looks += 1
                stood = self.state()  # what Ctrl-C writes: the last whole look
                if moved:
                    last_new = clock()
                if show is not None:
                    show(self.lines())
                if self.decision != "undecided":
                    break
                if once:
                    self.message = "not decided yet after one look (--once)"
                    break
                if all(r.done == len(self.order) for r in self.runs.values()):
                    self.message = "not decided: every unit of the order is in and the question is still open" + (
                        " (give --width for 'inside' / 'tied')" if self.width is None else ""
                    )
                    break
                if idle is not None and clock() - last_new > idle:
                    self.message = f"not decided: gave up after {idle:g} s without new results (--idle {idle:g})"
                    break
                sleep(poll)
        except KeyboardInterrupt:
            self.interrupted = True
            self.message = f"not decided: interrupted (Ctrl-C) after {looks} look{'s' * (looks != 1)}"
            if output is not None:
                stood.update(message=self.message, exit_status=INTERRUPTED)
                _write_state(output, stood, force)
            raise
        if output is not None:
            _write_state(output, self.state(), force)
        return self.decision


def _write_state(output: str | Path, state: dict[str, Any], force: bool) -> None:
    output = Path(output)
    with output_folder(output.parent, force=force) as stage:
        atomic_write_json(stage / output.name, state)


def _show(ivs: Mapping[str, Any], signed: bool = False) -> str:
    f = "+.4f" if signed else ".4f"
    return "; ".join(f"{m} [{iv.lower:{f}}, {iv.upper:{f}}] after {iv.count}" for m, iv in ivs.items())
