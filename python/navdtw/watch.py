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

from ._decisions import DECISIONS, FOREIGN_LIMIT
from ._io import atomic_write_json, output_folder
from ._messages import listed, named
from .datasets.base import Benchmark
from .datasets.results import ResultsTable
from .datasets.results.episode_log import LogMeta, log_meta
from .datasets.results.layouts import shard_of
from .order import Order
from .sequential import ConfidenceSequence, Interval, paired_bounds

__all__ = ["DECISIONS", "FOREIGN_LIMIT", "Episodes", "Follower", "NotInOrder", "Watch", "complete_part"]


class NotInOrder(ValueError):
    """A run's results are not episodes of the order: more than :data:`FOREIGN_LIMIT` of its ids,
    or every one, are not in it, or its navdtw episode log was written for another order or split
    (``navdtw watch`` exit status 19)."""


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
        if len(first) < 2 or not _whole_json(first[0]):
            return None  # a document being written (its first line is not a whole value)
    else:
        rows = [line for line in data.split(b"\n")[:-1] if line.strip()]
        return data[: data.rfind(b"\n") + 1] if len(rows) > 1 else None  # CSV: a header alone holds nothing yet
    cut = data.rfind(b"\n") + 1
    tail = data[cut:]
    return data if tail.strip() and _whole_json(tail) else (data[:cut] or None)


def _lines_as_list(part: bytes) -> bytes:
    """JSON Lines as a JSON list of the same records (the readers of trajectories take lists)."""
    with contextlib.suppress(ValueError, RecursionError):
        json.loads(part)
        return part  # a whole document already
    return b"[" + b",\n".join(line for line in part.split(b"\n") if line.strip()) + b"]"


def _whole_json(line: bytes) -> bool:
    try:
        json.loads(line)
    except (ValueError, RecursionError):
        return False
    return True


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


class Follower:
    """One run, read as it is written: its results (or its trajectories, scored) so far.

    Every look mirrors the complete part of the run's files (:func:`complete_part`) into a private
    folder, under their own names, and reads that through the data set's own reader and scorer,
    as ``navdtw compare`` does: a results table through :func:`navdtw.datasets.load_results` (every
    layout it reads: JSON Lines, JSON, CSV, an ETPNav rank's file with its siblings, a folder of
    one file per episode, StreamVLN's summary line, ...); trajectories through their kind's
    matcher and :func:`navdtw.evaluate`, file by file: the lines appended to a JSON Lines file are
    matched and scored on their own (each episode once), any other change reads the file again
    whole. Trajectories in JSON Lines are given to the reader as a JSON list of the same records,
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

    Raises
    ------
    ValueError
        A kind that cannot score a part of its split.
    """

    def __init__(
        self,
        source: str | Path,
        *,
        name: str,
        bench: Benchmark | None = None,
        convention: str | None = None,
        threshold: float = 3.0,
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
        self._taken: dict[Path, bytes] = {}  # trajectories: each file's complete part scored so far
        self._logs: dict[Path, LogMeta | None] = {}  # each file's navdtw log metadata (None: not a log)

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
        if len(self._logs) != len(self._seen):
            for f in self._seen:
                if f not in self._logs:
                    self._logs[f] = log_meta(f)
        return [m for m in self._logs.values() if m is not None]

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
        found = self._files()
        if found is None:
            return False
        files, folder = found
        base = (folder or Path(os.path.commonpath([str(f.parent.resolve()) for f in files]))).resolve()
        changed = False
        new: dict[Path, bytes] = {}
        for f in files:
            try:
                st = f.stat()
            except OSError:
                continue
            stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
            if self._seen.get(f) == stamp:
                continue
            self._seen[f] = stamp
            part = complete_part(f.read_bytes())
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
        self.waiting = "" if self._mirror else "nothing complete yet"
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

    def _score_file(self, f: Path, part: bytes) -> None:
        """Trajectories of one file: the JSON lines added since the last look matched and scored on
        their own (each episode once); a whole document, a file rewritten otherwise, or lines that
        repeat an episode of the earlier ones, read again whole (as ``navdtw compare`` reads it)."""
        copy = self._mirror[f]
        before = self._taken.get(f, b"")
        lines = not _whole_json(part)
        if lines and before and part.startswith(before) and not _whole_json(before):
            copy.write_bytes(_lines_as_list(part[len(before) :]))
            try:
                chunk = self._read(str(copy))
            except ValueError:
                chunk = None  # read whole below: its message numbers the entries as the file does
            seen = {i for p in self._parts[f] for i in p.ids}
            if chunk is not None and not seen & set(chunk.ids):
                self._parts[f].append(chunk)
                self._taken[f] = part
                return
        copy.write_bytes(_lines_as_list(part) if lines else part)
        self._parts[f] = [self._read(str(copy))]
        self._taken[f] = part

    def _joined(self, files: list[Path]) -> Episodes:
        """Trajectories: the episodes of every file, joined (an episode in two files is an error)."""
        owner: dict[str, Path] = {}
        parts = [(f, p) for f in files for p in self._parts.get(f, ())]
        if not parts:
            return Episodes(self.name, [], {}, frozenset())
        for f, part in parts:
            for i in part.ids:
                if i in owner:
                    raise ValueError(f"{self.name}: episode {i!r} is in both {owner[i].name} and {f.name}")
                owner[i] = f
        common = set.intersection(*(set(p.values) for _, p in parts))
        return Episodes(
            self.name,
            [i for _, p in parts for i in p.ids],
            {m: np.concatenate([p.values[m] for _, p in parts]) for m in common},
            frozenset(m for _, p in parts for m in p.rates),
            frozenset(i for _, p in parts for i in p.unscored),
            tuple(dict.fromkeys(n for _, p in parts for n in p.notes))[:5],
        )

    def _read(self, what: Any) -> Episodes:
        """The mirrored files through the data set's reader and scorer, as ``navdtw compare``."""
        from .registry import nonfinite_policy

        bench = self.bench
        partial = {"partial": True} if bench.matches_partial else {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # a part of the split: that is the point
            matched = bench.match(what, convention=self.convention, **partial)
            scores = bench.evaluate(matched, convention=self.convention, threshold=self.threshold)
        ids = [str(i) for i in matched.ids]
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
    foreign: list[str] = field(default_factory=list)  # its ids that are not episodes of the order
    tracks: dict[str, _Track] = field(default_factory=dict)
    eliminated: bool = False


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
        # The error is shared out over the metrics (one run) or the runs (checkpoints).
        self.share = alpha / (len(runs) if self.question == "checkpoints" else len(self.metrics))
        self.runs = {n: _Run(n, f) for n, f in runs.items()}
        self._in_order = frozenset(order.ids)
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
        self.per_metric: dict[str, str] = {}

    # -- feeding ------------------------------------------------------------------------------

    def _ensure_tracks(self, run: _Run, table: Episodes) -> None:
        if run.tracks:
            return
        n = len(self.order)
        for m in self.metrics:
            if m not in table.values:
                raise ValueError(f"{run.name}: the results have no column for {m!r} (they have {listed(table.values)})")
            if m not in table.rates:
                raise ValueError(f"{run.name}: {m!r} is not a bounded metric (only rates in [0, 1] are)")
            bounds = paired_bounds((0.0, 1.0)) if self.question == "against" else (0.0, 1.0)
            run.tracks[m] = _Track(m, ConfidenceSequence(n, bounds=bounds, alpha=self.share), self.share)

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
            self._check_foreign(run, table)
            self._ensure_tracks(run, table)
            values = {m: dict(zip(table.ids, table.values[m].tolist())) for m in self.metrics}
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
                track.cs.extend(new)
            moved |= k > run.done
            run.done = k
            fed = {i for u in units[:k] for i in u}
            run.waiting = sum(1 for i in table.ids if i not in fed and i in self._in_order)
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
        if not run.foreign:
            return
        n, k = len(table.ids), len(run.foreign)
        if k <= FOREIGN_LIMIT and k < n:
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
                self._set("width", f"every metric known to ±{self.width / 2:g} ({share}): " + _show(ivs))
        elif q == "reported":
            verdict = {}
            for m, iv in ivs.items():
                r = self.reported[m]
                if not iv.lower <= r <= iv.upper:
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
                    + f" outside the split mean's interval ({share}): "
                    + _show({m: ivs[m] for m in out}),
                )
            elif len(verdict) == len(ivs):
                self._set(
                    "reported-inside",
                    f"every reported figure inside its interval at width {self.width:g} ({share}): " + _show(ivs),
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
                self._set(kind, f"{kind} than {self.against.source} ({share}): " + _show(ivs, signed=True))
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
        if len(live) == 1:
            self._set("chosen", f"{live[0]} is the best on {m} ({share}): " + _show({n: ivs[n] for n in ivs}))
        elif self.width is not None and max(ivs[n].upper for n in live) - min(ivs[n].lower for n in live) <= self.width:
            self._set(
                "tied-checkpoints",
                f"{', '.join(live)} are within {self.width:g} on {m} ({share}): " + _show({n: ivs[n] for n in live}),
            )

    def _set(self, decision: str, message: str) -> None:
        self.decision, self.message = decision, message

    # -- showing ------------------------------------------------------------------------------

    def lines(self) -> list[str]:
        """The terminal view: progress of the order, each interval, the question's state.

        Returns
        -------
        list of str
            One line each.
        """
        n = len(self.order)
        unit = "paths" if any(len(u) > 1 for u in self.order.units) else "episodes"
        out = [f"order {self.order.source}: {n} {unit}; alpha {self.alpha:g} shared out ({self.share:.4g} each)"]
        for run in self.runs.values():
            bar = _bar(run.done / n)
            tag = "  [eliminated]" if run.eliminated else ""
            out.append(
                f"{run.name}: {bar} {run.done}/{n} of the order ({100 * run.done / n:.1f}%)"
                + (f", {run.waiting} finished out of order wait" if run.waiting else "")
                + (
                    f", {len(run.foreign)} not episodes of the order ({listed(run.foreign, limit=3)})"
                    if run.foreign
                    else ""
                )
                + (f"; waiting: {run.follower.waiting}" if run.follower.waiting else "")
                + tag
            )
            table = run.follower.table
            out += [f"    note: {note}" for note in (table.notes if table is not None else ())]
            for m, t in run.tracks.items():
                iv = t.cs.interval()
                what = f"{m} - against" if self.question == "against" else m
                out.append(
                    f"    {what:<14} mean so far {t.cs.mean:+.4f}  interval [{iv.lower:+.4f}, {iv.upper:+.4f}]"
                    f"  width {iv.width:.4f}"
                    if self.question == "against"
                    else f"    {what:<14} mean so far {t.cs.mean:.4f}  interval [{iv.lower:.4f}, {iv.upper:.4f}]"
                    f"  width {iv.width:.4f}"
                )
        out.append(("decided: " + self.message) if self.decision != "undecided" else "not decided yet")
        return out

    def state(self) -> dict[str, Any]:
        """The state as a results.json-style dict (``--output``).

        Returns
        -------
        dict
            The order, the question, each run's prefix and intervals, the decision and exit status.
        """
        return {
            "navdtw_watch": 1,
            "order": {
                "source": self.order.source,
                "seed": self.order.seed,
                "units": len(self.order),
                "split": self.order.split,
                "split_sha256": self.order.split_sha256,
            },
            "question": self.question,
            "alpha": self.alpha,
            "alpha_each": self.share,
            "width": self.width,
            "reported": self.reported or None,
            "against": self.against.source if self.against is not None else None,
            "runs": {
                n: {
                    "in_order": r.done,
                    "waiting": r.waiting,
                    "not_in_order": len(r.foreign),
                    "not_in_order_first": r.foreign[:5],
                    "eliminated": r.eliminated,
                    "metrics": {
                        m: {
                            "mean_so_far": t.cs.mean if t.cs.count else None,
                            "lower": t.cs.interval().lower,
                            "upper": t.cs.interval().upper,
                            "alpha": t.alpha,
                            "of": "difference" if self.question == "against" else "mean",
                        }
                        for m, t in r.tracks.items()
                    },
                }
                for n, r in self.runs.items()
            },
            "per_metric": self.per_metric or None,
            "decision": self.decision,
            "message": self.message,
            "exit_status": DECISIONS[self.decision][0],
        }

    def run(
        self,
        *,
        once: bool = False,
        poll: float = 2.0,
        idle: float | None = None,
        show: Callable[[list[str]], None] | None = None,
        output: str | Path | None = None,
        force: bool = False,
    ) -> str:
        """Follows the runs until the question is decided (or once, or until idle).

        Parameters
        ----------
        once : bool
            Look once and return.
        poll : float
            Seconds between looks.
        idle : float or None
            Give up after this many seconds without new results.
        show : callable, optional
            Called with :meth:`lines` after every look that changed something.
        output : str or Path, optional
            A JSON file the final :meth:`state` is written to, by navdtw's output rules
            (the output folders of :doc:`the command </cli>`): a file of that name that navdtw did not write (no
            record in the folder's manifest), or that was changed since, is an error naming it.
        force : bool
            Replace such a file (never a read-only one).

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
        """
        last_new = time.monotonic()
        first = True
        while True:
            moved = self.poll()
            if moved or first:
                last_new = time.monotonic()
                if show is not None:
                    show(self.lines())
            first = False
            if once or self.decision != "undecided":
                break
            if all(r.done == len(self.order) for r in self.runs.values()):
                break
            if idle is not None and time.monotonic() - last_new > idle:
                break
            time.sleep(poll)
        if output is not None:
            output = Path(output)
            with output_folder(output.parent, force=force) as stage:
                atomic_write_json(stage / output.name, self.state())
        return self.decision


def _show(ivs: Mapping[str, Any], signed: bool = False) -> str:
    f = "+.4f" if signed else ".4f"
    return "; ".join(f"{m} [{iv.lower:{f}}, {iv.upper:{f}}] after {iv.count}" for m, iv in ivs.items())


def _bar(frac: float, width: int = 24) -> str:
    k = round(frac * width)
    return "[" + "#" * k + "." * (width - k) + "]"
