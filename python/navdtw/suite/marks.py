"""Which agents the leaderboards mark: the best mean of each metric, and the agents that cannot be
told apart from the best (:func:`navdtw.stats.compare_with_best`); what the marks mean, in one
sentence each; and what each metric is (label, unit, direction) for the marks and the tables.

:func:`leaderboard_marks` is the one rule, defined here only: the text, Markdown, CSV, LaTeX and
HTML tables and ``report.html`` (:mod:`navdtw.report`) all draw their marks from it.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from typing import Any

from .._messages import shown

__all__ = ["info_of", "leaderboard_marks", "mark_notes", "metric_info", "unmarked_reason"]


def metric_info(name: str) -> dict[str, Any]:
    """``{"label", "unit", "rate", "higher_is_better", "staying_wins"}`` of a metric, from its
    :mod:`navdtw.registry` record; a name the registry does not know gets its own name as label,
    no unit, not a rate, and no direction (no marks).

    Parameters
    ----------
    name : str
        A metric name (``"sr"``).

    Returns
    -------
    dict[str, object]
        ``label`` (str), ``unit`` (str), ``rate`` (bool), ``higher_is_better`` (bool or None),
        ``staying_wins`` (bool), and for a pooled ratio ``weight`` (the column that weights it,
        the ``weight`` of its :class:`navdtw.registry.Metric` record).
    """
    from .. import registry

    try:
        m = registry.get(name)
    except (KeyError, ValueError):
        return {"label": name, "unit": "", "rate": False, "higher_is_better": None, "staying_wins": False}
    out = {
        "label": m.label,
        "unit": m.unit,
        "rate": bool(m.rate),
        "higher_is_better": m.higher_is_better,
        "staying_wins": bool(m.staying_wins),
    }
    if m.weight is not None:  # a pooled ratio: the statistics weight it by this column
        out["weight"] = m.weight
    return out


def info_of(dataset: Mapping, name: str) -> dict[str, Any]:
    """The info of metric ``name`` in one data set of ``results.json``: its own ``"metrics"``
    entry (a results table's column, with the direction given for it), else :func:`metric_info`.

    Parameters
    ----------
    dataset : mapping
        One entry of ``results["datasets"]``.
    name : str
        A metric name.

    Returns
    -------
    dict[str, object]
        A copy of the info, with the keys of :func:`metric_info`.
    """
    return dict(dataset.get("metrics", {}).get(name) or metric_info(name))


def unmarked_reason(info: Mapping[str, Any]) -> str | None:
    """Why a metric gets no marks at all (None when it may get them): no direction (path length),
    or a path that never leaves its start wins it (AD, MD).

    Parameters
    ----------
    info : mapping
        A metric's info (:func:`~navdtw.suite.metric_info`, ``info_of``).

    Returns
    -------
    str or None
        ``"no direction"``, ``"staying at the start wins"`` or None.
    """
    if info.get("higher_is_better") is None:
        return "no direction"
    if info.get("staying_wins"):
        return "staying at the start wins"
    return None


def mark_notes(alpha: float) -> dict[str, str]:
    """What the marks mean, one sentence each (without the symbol, which each output draws its own
    way): ``{"tied": ..., "unresolved": ...}``. Every table and the report print these.

    Parameters
    ----------
    alpha : float
        The level of the dagger (the suite's ``settings.alpha``).

    Returns
    -------
    dict[str, str]
        The sentence of the dagger (``"tied"``) and of the question mark (``"unresolved"``).
    """
    return {
        "tied": (
            "not clearly worse than the best: the data cannot rule out that this agent is the best (multiple "
            f"comparisons with the best, p >= {alpha:g}: the truly best agent loses its mark at most "
            f'{alpha * 100:g}% of the time, the best being chosen from the same data). Not "equal": a gap '
            "of up to about 1.6 (2 agents) to 3 (80 agents) standard errors keeps the mark."
        ),
        "unresolved": (
            f"p within Monte-Carlo error of {alpha:g} even after the resamples navdtw draws for it "
            "(see the warnings); no mark."
        ),
    }


def leaderboard_marks(
    dataset: Mapping, alpha: float = 0.05, *, metrics: Mapping[str, Mapping[str, Any]] | None = None
) -> dict[str, dict[str, list[str]]]:
    """Per metric of one data set of ``results.json``: ``{"best": [agents], "tied": [agents],
    "unresolved": [agents]}``.

    * No marks on a metric without a direction (path length), on one that an agent which never
      moves wins (AD, MD: :func:`~navdtw.suite.marks.unmarked_reason`), with fewer than two
      agents that have a mean, or where an agent with a mean has no ``vs_best`` p-value (the
      comparisons with the best need ``min_units`` units, as the intervals do).
    * ``best``: the agent(s) with the best mean (direction from ``higher_is_better``).
    * ``tied`` (the dagger): the other agents that cannot be told apart from the best: the
      comparisons with the best (:func:`navdtw.stats.compare_with_best`, the agent's ``vs_best``)
      give "this agent is the best" a p-value at or above ``alpha``, even at the low end of where
      the Monte-Carlo error places it (``p_bounds``).
    * ``unresolved``: agents whose ``p_bounds`` hold ``alpha`` (the low end below it, the high end
      at or above): after every resample navdtw draws for it (``vs_best.resamples``), the answer
      is still the Monte-Carlo error's, not the data's; no mark.

    Parameters
    ----------
    dataset:
        one entry of ``results["datasets"]`` (its ``agents``).
    alpha:
        the level of the dagger (the suite's ``settings.alpha``).
    metrics:
        metric -> ``{"higher_is_better", "staying_wins"}``, for results whose metrics the registry
        does not know (default: the data set's own ``"metrics"``, which records a results
        table's columns and the directions given for them; else :func:`metric_info`, the registry).

    Returns
    -------
    dict[str, dict[str, list[str]]]
        ``{metric: {"best": [...], "tied": [...], "unresolved": [...]}}`` for the metrics that
        get marks.

    Raises
    ------
    TypeError
        An ``alpha`` that is not a number.
    ValueError
        An ``alpha`` outside (0, 1).
    """
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real):
        raise TypeError(f"leaderboard_marks: alpha must be a number in (0, 1), got {shown(alpha)}")
    if not 0.0 < float(alpha) < 1.0:
        raise ValueError(f"leaderboard_marks: alpha must be in (0, 1), got {shown(alpha)}")
    out: dict[str, dict[str, list[str]]] = {}
    agents = dataset.get("agents", {})
    names: dict[str, None] = {}
    for values in agents.values():
        names.update(dict.fromkeys(values))
    for m in names:
        info = (metrics or {}).get(m) or dataset.get("metrics", {}).get(m) or metric_info(m)
        means = {a: v[m]["mean"] for a, v in agents.items() if m in v and v[m]["mean"] is not None}
        if unmarked_reason(info) is not None or len(means) < 2:
            continue
        sign = 1.0 if info["higher_is_better"] else -1.0
        top = max(sign * x for x in means.values())
        best = [a for a, x in means.items() if sign * x == top]
        tested = {a: (agents[a][m].get("vs_best") or {}).get("p") is not None for a in means}
        if not all(tested.values()):  # the comparisons with the best did not run (too few units)
            continue
        tied, unresolved = [], []
        for a in means:
            if a in best:
                continue
            low, high = agents[a][m]["vs_best"]["p_bounds"]
            if low >= alpha:
                tied.append(a)
            elif high >= alpha:
                unresolved.append(a)
        out[m] = {"best": best, "tied": tied, "unresolved": unresolved}
    return out
