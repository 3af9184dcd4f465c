"""Which agents the leaderboards mark: the best mean of each metric, and the agents not
significantly different from it; and what each metric is (label, unit, direction) for the marks
and the tables.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["leaderboard_marks", "metric_info"]


def metric_info(name: str) -> dict[str, Any]:
    """``{"label", "unit", "rate", "higher_is_better"}`` of a metric, from its
    :mod:`navdtw.registry` record; a name the registry does not know gets its own name as label,
    no unit, not a rate, and no direction (no marks)."""
    from .. import registry

    try:
        m = registry.get(name)
    except (KeyError, ValueError):
        return {"label": name, "unit": "", "rate": False, "higher_is_better": None}
    return {"label": m.label, "unit": m.unit, "rate": bool(m.rate), "higher_is_better": m.higher_is_better}


def leaderboard_marks(dataset: Mapping, alpha: float = 0.05) -> dict[str, dict[str, list[str]]]:
    """Per metric of one data set of ``results.json``: ``{"best": [agents], "tied": [agents]}``.

    ``best``: the agent(s) with the best mean (direction from the metric's ``higher_is_better``;
    metrics without a direction, like path length, get no marks). ``tied``: the other agents whose
    paired permutation test against a best agent has ``p_holm >= alpha``, i.e. not significantly
    different from the best. The same rule as ``navdtw.report.leaderboard_marks``.

    Parameters
    ----------
    dataset:
        one entry of ``results["datasets"]`` (``agents`` and ``comparisons``).
    alpha:
        the level of the "not significantly different" mark (the suite's ``settings.alpha``).
    """
    p: dict[tuple[str, str, str], float] = {}
    for c in dataset.get("comparisons", []):
        if c.get("p_holm") is not None:
            p[(c["metric"], c["a"], c["b"])] = p[(c["metric"], c["b"], c["a"])] = float(c["p_holm"])
    out: dict[str, dict[str, list[str]]] = {}
    agents = dataset.get("agents", {})
    metrics: dict[str, None] = {}
    for values in agents.values():
        metrics.update(dict.fromkeys(values))
    for m in metrics:
        better = metric_info(m)["higher_is_better"]
        means = {a: v[m]["mean"] for a, v in agents.items() if m in v and v[m]["mean"] is not None}
        if better is None or not means:
            continue
        sign = 1.0 if better else -1.0
        top = max(sign * x for x in means.values())
        best = [a for a, x in means.items() if sign * x == top]
        tied = [a for a in means if a not in best and any(p.get((m, a, b), -1.0) >= alpha for b in best)]
        out[m] = {"best": best, "tied": tied}
    return out
