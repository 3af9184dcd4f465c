"""Internal to :mod:`navdtw.watch`: what ``navdtw watch`` shows of a watch: the terminal view
(:meth:`navdtw.watch.Watch.lines`), the one line of a log (:meth:`navdtw.watch.Watch.summary`)
and the state written by ``--output`` (:meth:`navdtw.watch.Watch.state`)."""

from __future__ import annotations

from typing import Any

from ._decisions import DECISIONS, INTERRUPTED
from ._messages import listed


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
