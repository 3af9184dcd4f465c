"""Internal to :mod:`navdtw.watch`: what ``navdtw watch`` shows of a watch: the terminal view
(:meth:`navdtw.watch.Watch.lines`), the one line of a log (:meth:`navdtw.watch.Watch.summary`)
and the state written by ``--output`` (:meth:`navdtw.watch.Watch.state`)."""

from __future__ import annotations

from typing import Any

from ._decisions import DECISIONS, INTERRUPTED
from ._messages import ELLIPSIS, listed


def view(watch: Any) -> list[str]:
    """The lines of :meth:`navdtw.watch.Watch.lines`."""
    n = len(watch.order)
    unit = "paths" if any(len(u) > 1 for u in watch.order.units) else "episodes"
    out = [f"order {watch.order.source}: {n} {unit}, alpha {watch.alpha:g} shared out ({watch.share:.4g} each)"]
    out.append(order_check(watch.order))
    if watch.question == "against":
        out.append(f"against {watch.against.source}: the mean paired difference (the run's minus its)")
    for run in watch.runs.values():
        tag = "  [eliminated]" if run.eliminated else ""
        out.append(f"{run.name}: {bar(run.done / n)} {run.done}/{n} of the order ({100 * run.done / n:.1f}%){tag}")
        if run.next_unit:
            size = len(watch.order.units[run.done])
            out.append(f"    {run.next_unit} of the next path's {size} instructions in (a path counts once all are)")
        if run.waiting > run.next_unit:
            out.append(f"    {run.waiting - run.next_unit} finished out of order wait")
        if run.foreign:
            out.append(f"    {len(run.foreign)} not episodes of the order ({listed(run.foreign, limit=3)})")
        if run.follower.waiting:
            out.append(f"    waiting: {run.follower.waiting}")
        table = run.follower.table
        out += [f"    note: {note}" for note in (table.notes if table is not None else ())]
        f = "+.4f" if watch.question == "against" else ".4f"
        what = " diff" if watch.question == "against" else ""
        for m, t in run.tracks.items():
            iv = t.cs.interval()
            out.append(
                f"    {m + what:<9} mean so far {t.cs.mean:{f}}  interval [{iv.lower:{f}}, {iv.upper:{f}}]"
                f"  width {iv.width:.4f}"
            )
    out.append(("decided: " + watch.headline) if watch.decision != "undecided" else watch.message or "not decided yet")
    return out


def summary(watch: Any) -> str:
    """The line of :meth:`navdtw.watch.Watch.summary`."""
    n = len(watch.order)
    parts = []
    for run in watch.runs.values():
        ivs = {m: t.cs.interval() for m, t in run.tracks.items()}
        f = "+.4f" if watch.question == "against" else ".4f"
        text = f"{run.name} {run.done}/{n}" + "".join(
            f", {m} [{iv.lower:{f}}, {iv.upper:{f}}]" for m, iv in ivs.items()
        )
        if run.waiting:
            text += f", {run.waiting} beyond the prefix"
        if run.eliminated:
            text += " (eliminated)"
        parts.append(text)
    return "; ".join(parts)


def state(watch: Any) -> dict[str, Any]:
    """The dict of :meth:`navdtw.watch.Watch.state`."""
    return {
        "navdtw_watch": 1,
        "order": {
            "source": watch.order.source,
            "seed": watch.order.seed,
            "units": len(watch.order),
            "split": watch.order.split,
            "split_sha256": watch.order.split_sha256,
            "check": "scenes and values" if watch.order.scenes is not None else "values only",
            "scenes_from": watch.order.scenes_from,
        },
        "question": watch.question,
        "alpha": watch.alpha,
        "alpha_each": watch.share,
        "width": watch.width,
        "reported": watch.reported or None,
        "against": watch.against.source if watch.against is not None else None,
        "runs": {
            n: {
                "in_order": r.done,
                "waiting": r.waiting,
                "next_unit_in": r.next_unit,
                "not_in_order": len(r.foreign),
                "not_in_order_first": r.foreign[:5],
                "eliminated": r.eliminated,
                "metrics": {
                    m: {
                        "mean_so_far": t.cs.mean if t.cs.count else None,
                        "lower": t.cs.interval().lower,
                        "upper": t.cs.interval().upper,
                        "alpha": t.alpha,
                        "of": "difference" if watch.question == "against" else "mean",
                    }
                    for m, t in r.tracks.items()
                },
            }
            for n, r in watch.runs.items()
        },
        "per_metric": watch.per_metric or None,
        "decision": watch.decision,
        "message": watch.message,
        "exit_status": INTERRUPTED if watch.interrupted else DECISIONS[watch.decision][0],
    }


def order_check(order: Any) -> str:
    """Which check of the order runs: the scenes' repeats and the values when the order's scenes are
    known (:attr:`navdtw.order.Order.scenes`), else the values only (late: docs/stopping.md)."""
    if order.scenes is None:
        return "order check: the values only (no scenes known; --scenes SPLIT gives them)"
    k = len(set(order.scenes))
    return f"order check: the scenes' repeats ({k} scenes, from {order.scenes_from}) and the values"


def bar(frac: float, width: int = 24) -> str:
    """A progress bar, ``[######..................]``."""
    k = round(frac * width)
    return "[" + "#" * k + "." * (width - k) + "]"


#: Within how far of each other (their means so far) checkpoints cost nearly every episode to tell
#: apart: 97-99% of all the checkpoints' episodes (docs/stopping.md, bench_checkpoints.py).
CLOSE_CHECKPOINTS = 0.02


def checkpoints_cost(runs: Any, metric: str, population: int) -> str:
    """The cost of a choice among checkpoints: the share of all their episodes evaluated, and, when
    the two best means so far are within :data:`CLOSE_CHECKPOINTS` of each other, what that costs
    (the note is about close checkpoints: said only of them)."""
    done = sum(r.done for r in runs.values()) / (len(runs) * population)
    means = sorted((t.cs.mean for r in runs.values() if (t := r.tracks.get(metric)) and t.cs.count), reverse=True)
    close = len(means) > 1 and means[0] - means[1] <= CLOSE_CHECKPOINTS + 1e-12
    return f"{100 * done:.0f}% of all the checkpoints' episodes evaluated" + (
        f" (within {100 * CLOSE_CHECKPOINTS:g} points of each other: 97-99%)" if close else ""
    )


def rows(lines: list[str], columns: int) -> int:
    """The terminal rows ``lines`` take at ``columns`` wide (a longer line wraps; wide characters
    count two)."""
    import unicodedata

    def width(line: str) -> int:
        return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line)

    return sum(max(1, -(-width(line) // max(columns, 1))) for line in lines)


def fit(lines: list[str], height: int, columns: int) -> list[str]:
    """The view cut to a terminal of ``height`` rows and ``columns`` columns, so that redrawing it
    in place never scrolls (a view taller than the terminal would repeat its top at every
    redraw): it keeps ``height - 1`` rows, wrapped lines counted (:func:`rows`). Lines are left
    out least needed first: the readers' notes, then what a run waits for, then the intervals,
    then the runs' lines, each from the bottom up; the first line (the order) and the last (the
    decision) stay, and a line before the last says how many are hidden.

    Parameters
    ----------
    lines : list of str
        The view (:func:`view`).
    height, columns : int
        The terminal's size.

    Returns
    -------
    list of str
    """
    room = max(1, height - 1)
    if rows(lines, columns) <= room:
        return lines
    last = lines[-1]
    while len(last) > 2 and rows([last], columns) > max(1, room - 2):  # the decision's line: in the room left
        last = last[: max(1, len(last) - columns // 2 - 2)] + ELLIPSIS
    if room < 3:
        return [last]

    def rank(line: str) -> int:  # the higher, the sooner left out
        body = line.strip()
        if not line.startswith(" "):
            return 0
        if body.startswith("note: "):
            return 3
        return 1 if " mean so far " in body else 2

    kept = list(range(1, len(lines) - 1))
    for level in (3, 2, 1, 0):
        for k in reversed([k for k in kept if rank(lines[k]) == level]):
            kept.remove(k)
            shown = [lines[0], *(lines[j] for j in kept), _hidden(len(lines) - 2 - len(kept), height), last]
            if rows(shown, columns) <= room:
                return shown
    return [_hidden(len(lines) - 1, height)[: max(1, columns - 1)], last]


def _hidden(k: int, height: int) -> str:
    return f"{ELLIPSIS} {k} lines hidden: the terminal has {height} rows"
