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

import glob
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ._decisions import DECISIONS
from ._io import atomic_write_json
from ._messages import listed
from .datasets.results import ID_COLUMNS, ResultsTable, load_results
from .order import Order
from .sequential import ConfidenceSequence, Interval, paired_bounds

__all__ = ["DECISIONS", "Follower", "Watch"]

# --------------------------------------------------------------------------------------------
# reading results as they are written
# --------------------------------------------------------------------------------------------


class _Source:
    """One file of a run, read as it grows."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0  # JSON Lines: bytes taken so far (up to the last complete line)
        self.line = 0
        self.rows: list[dict] = []
        self.whole: Any = None  # a whole-document JSON file, once it parses
        self.mtime_size: tuple[float, int] | None = None

    def poll(self) -> bool:
        """Reads what was added; True when something new was taken."""
        try:
            st = self.path.stat()
        except FileNotFoundError:
            return False
        if self.mtime_size == (st.st_mtime, st.st_size):
            return False
        self.mtime_size = (st.st_mtime, st.st_size)
        data = self.path.read_bytes()
        if self.whole is None and self.offset == 0 and not _looks_like_lines(data):
            try:
                doc = json.loads(data)
            except ValueError:
                return False  # a whole document still being written: wait for it
            self.whole, self.rows = doc, _rows_of(doc, self.path)
            return True
        if self.whole is not None:  # rewritten whole: read it again
            try:
                doc = json.loads(data)
            except ValueError:
                return False
            self.whole, self.rows = doc, _rows_of(doc, self.path)
            return True
        return self._more_lines(data)

    def _more_lines(self, data: bytes) -> bool:
        new = data[self.offset :]
        taken = 0
        added = False
        while taken < len(new):
            end = new.find(b"\n", taken)
            piece = new[taken:] if end < 0 else new[taken:end]
            if end < 0:
                # The last line has no newline yet: taken only once it is a whole object (a writer
                # may end the file without a newline); a truncated object never parses.
                try:
                    obj = json.loads(piece)
                except ValueError:
                    break
                if not isinstance(obj, dict):
                    break
            self.line += 1
            taken = len(new) if end < 0 else end + 1
            if piece.strip():
                try:
                    obj = json.loads(piece)
                except ValueError as exc:
                    raise ValueError(f"{self.path.name}: line {self.line} is not JSON ({exc})") from None
                if not isinstance(obj, dict):
                    raise ValueError(f"{self.path.name}: line {self.line} is not a JSON object")
                self.rows.append(obj)
                added = True
        self.offset += taken
        return added


def _looks_like_lines(data: bytes) -> bool:
    """JSON Lines: the first line is a whole JSON object on its own."""
    first = data.split(b"\n", 1)[0].strip()
    if not first:
        return False
    try:
        return isinstance(json.loads(first), dict) and (b"\n" in data or first == data.strip())
    except ValueError:
        return False


def _rows_of(doc: Any, path: Path) -> list[dict]:
    if isinstance(doc, list) and all(isinstance(r, dict) for r in doc):
        return list(doc)
    if isinstance(doc, dict):
        if any(k in doc for k in ID_COLUMNS):
            return [doc]  # one file per episode
        if doc and all(isinstance(v, dict) for v in doc.values()):
            return [{"episode_id": k, **v} for k, v in doc.items()]  # keyed by episode id
    raise ValueError(f"{path.name}: not a results file of episodes (a list of rows, rows keyed by id, or one row)")


def _keyed(row: dict) -> list[dict]:
    """A line holding episodes keyed by id (a whole keyed JSON written on one line) as rows."""
    if not any(c in row for c in ID_COLUMNS) and row and all(isinstance(v, dict) for v in row.values()):
        return [{"episode_id": k, **v} for k, v in row.items()]
    return [row]


class Follower:
    """The results of one run, read as they are written: a file, a folder, a glob, or several shards.

    Parameters
    ----------
    paths : sequence of str or Path
        The run's files: JSON Lines (appended per episode), JSON, a folder of one file per episode
        (``*.json`` / ``*.jsonl`` directly inside), or a glob pattern; all of them are one run.
    name : str
        The run's name in messages.

    Raises
    ------
    ValueError
        A pattern that is neither a file, a folder nor a glob.
    """

    def __init__(self, paths: Sequence[str | Path], *, name: str) -> None:
        self.name = name
        self.patterns = [str(p) for p in paths]
        self._sources: dict[Path, _Source] = {}
        self.table: ResultsTable | None = None
        self.left_out = 0  # rows without an id (an evaluator's summary line)

    def _files(self) -> list[Path]:
        out = []
        for pat in self.patterns:
            p = Path(pat)
            if p.is_dir():
                out += sorted(q for q in p.iterdir() if q.suffix in (".json", ".jsonl") and q.is_file())
            elif glob.has_magic(pat):
                out += sorted(Path(q) for q in glob.glob(pat))
            else:
                out.append(p)
        return out

    def poll(self) -> bool:
        """Reads what the evaluator added since the last call.

        Returns
        -------
        bool
            True when new rows were read (``table`` is then the whole run so far).

        Raises
        ------
        ValueError
            A malformed complete line or file, an id in two files, a value the results reader
            refuses (the message names the file and entry).
        """
        new = False
        for f in self._files():
            src = self._sources.setdefault(f, _Source(f))
            new |= src.poll()
        if not new:
            return False
        rows, owner = [], {}
        self.left_out = 0
        for f, src in self._sources.items():
            for r in (row for raw in src.rows for row in _keyed(raw)):
                key = next((str(r[c]) for c in ID_COLUMNS if c in r), None)
                if key is None:
                    self.left_out += 1
                    continue
                if key in owner and owner[key] != f:
                    raise ValueError(f"{self.name}: episode {key!r} is in both {owner[key].name} and {f.name}")
                owner[key] = f
                rows.append(r)
        if rows:
            self.table = load_results(rows)
        return True


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
    waiting: int = 0  # finished episodes beyond the prefix
    tracks: dict[str, _Track] = field(default_factory=dict)
    eliminated: bool = False


def _unit_value(values: Mapping[str, float], unit: Sequence[str]) -> float:
    return float(np.mean([values[i] for i in unit]))


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
    against : ResultsTable, optional
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
        against: ResultsTable | None = None,
    ) -> None:
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
        self._against_values: dict[str, dict[str, float]] = {}
        if against is not None:
            for m in self.metrics:
                if m not in against.values:
                    raise ValueError(f"--against {against.source}: no column for {m!r}")
                if m not in against.rates:
                    raise ValueError(f"--against {against.source}: {m!r} is not a bounded metric (a rate)")
                self._against_values[m] = dict(zip(against.ids, against.values[m].tolist()))
            missing = [i for i in order.ids if i not in self._against_values[self.metrics[0]]]
            if missing:
                raise ValueError(
                    f"--against {against.source}: {len(missing)} episodes of the order have no row "
                    f"(first: {missing[0]!r})"
                )
        self.decision = "undecided"
        self.message = ""
        self.per_metric: dict[str, str] = {}

    # -- feeding ------------------------------------------------------------------------------

    def _ensure_tracks(self, run: _Run, table: ResultsTable) -> None:
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
        ValueError
            Malformed results (the message names the file and entry), a missing metric.
        """
        moved = False
        for run in self.runs.values():
            if not run.follower.poll() and run.tracks:
                continue
            table = run.follower.table
            if table is None:
                continue
            self._ensure_tracks(run, table)
            values = {m: dict(zip(table.ids, table.values[m].tolist())) for m in self.metrics}
            have = values[self.metrics[0]]
            k = run.done
            units = self.order.units
            while k < len(units) and all(i in have for i in units[k]):
                k += 1
            for m, track in run.tracks.items():
                new = [_unit_value(values[m], u) for u in units[run.done : k]]
                if self.question == "against":
                    base = self._against_values[m]
                    new = [v - _unit_value(base, u) for v, u in zip(new, units[run.done : k])]
                track.cs.extend(new)
            moved |= k > run.done
            run.done = k
            in_order = {i for u in units[:k] for i in u}
            run.waiting = sum(1 for i in table.ids if i not in in_order)
        if moved or self.decision == "undecided":
            self._decide()
        return moved

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
                + (f", {run.follower.left_out} rows without an id left out" if run.follower.left_out else "")
                + tag
            )
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
            "order": {"source": self.order.source, "seed": self.order.seed, "units": len(self.order)},
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
            A JSON file the final :meth:`state` is written to (atomically).

        Returns
        -------
        str
            The decision (a key of ``DECISIONS``).

        Raises
        ------
        ValueError
            Malformed results.
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
            atomic_write_json(output, self.state())
        return self.decision


def _show(ivs: Mapping[str, Any], signed: bool = False) -> str:
    f = "+.4f" if signed else ".4f"
    return "; ".join(f"{m} [{iv.lower:{f}}, {iv.upper:{f}}] after {iv.count}" for m, iv in ivs.items())


def _bar(frac: float, width: int = 24) -> str:
    k = round(frac * width)
    return "[" + "#" * k + "." * (width - k) + "]"
