"""The statistics of one data set: every agent's means with bootstrap intervals, and every pair of
agents compared on every metric (paired interval, permutation and sign tests, Holm per metric).

One :func:`navdtw.stats.analyze` call per data set; the result is the data set's entry of
``results.json``. Infinite distances are left out (and counted, ``left_out``); intervals need
``settings.min_units`` units. Internal to :mod:`navdtw.suite`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import stats
from .clusters import cluster_labels
from .scoring import DatasetRun


def json_number(x) -> float | None:
    """A finite float, or None (``null`` in ``results.json``) for NaN and infinities."""
    x = float(x)
    return x if math.isfinite(x) else None


#: The confidence of ``p_bounds``: where the exact permutation p-value lies given the random flips.
P_BOUNDS_CONFIDENCE = 0.99


def p_bounds(p: np.ndarray, method: np.ndarray, resamples: int) -> tuple[np.ndarray, np.ndarray]:
    """Where each exact sign-flip p-value (all flips, as infinite resamples would give) lies: itself
    for ``"exact"``; below the bound for ``"tail bound"``; for ``"monte carlo"``, from its ``hits =
    p (resamples + 1) - 1`` random flips as extreme as the data, the two-sided Clopper-Pearson
    interval at :data:`P_BOUNDS_CONFIDENCE` (0 below when no flip was as extreme). Vectorized over
    the pairs (``p`` and ``method`` arrays)."""
    from scipy import special

    p = np.asarray(p, dtype=np.float64)
    lo, hi = p.copy(), p.copy()
    lo[method == "tail bound"] = 0.0
    mc = np.flatnonzero((method == "monte carlo") & np.isfinite(p))
    if len(mc):
        hits = np.rint(p[mc] * (resamples + 1)) - 1
        tail = (1.0 - P_BOUNDS_CONFIDENCE) / 2.0
        with np.errstate(invalid="ignore"):
            lo[mc] = np.where(hits > 0, special.betaincinv(np.maximum(hits, 1), resamples - hits + 1, tail), 0.0)
            hi[mc] = np.where(
                hits < resamples, special.betaincinv(hits + 1, np.maximum(resamples - hits, 1), 1.0 - tail), 1.0
            )
    return lo, hi


def analyze_dataset(run: DatasetRun, settings: dict) -> dict[str, Any]:
    """The ``results.json`` entry of one scored data set.

    Parameters
    ----------
    run:
        the data set after :func:`navdtw.suite.scoring.score_agents` (and its baseline).
    settings:
        the suite's settings (``confidence``, ``resamples``, ``method``, ``seed``, ``cluster``,
        ``min_units``).

    Returns
    -------
    ``{"dataset", "convention", "n", "units", "threshold", "resampling", "agents", "baseline",
    "comparisons"}``: per agent and metric ``{"mean", "ci", "left_out"}``; per pair of agents and
    metric ``{"a", "b", "metric", "diff", "ci", "dropped", "p", "p_holm", "test", "p_method",
    "p_bounds", "p_sign"}``. Non-finite numbers are None; an interval below ``min_units`` units is
    ``[None, None]``.
    """
    spec = run.spec
    agents = list(run.values)
    result: dict[str, Any] = {
        "dataset": spec.kind.name,
        "convention": spec.convention,
        "n": len(run.ids),
        "threshold": spec.threshold,
        "agents": {},
        "baseline": {m: {"mean": json_number(v)} for m, v in run.baseline.items()},
        "comparisons": [],
    }
    clusters = cluster_labels(run.bench, run.ids) if settings["cluster"] == "path" else None
    result["resampling"] = "episode" if clusters is None else "path"
    result["units"] = len(run.ids) if clusters is None else len(set(clusters))
    if not agents or not run.ids:
        return result
    columns = [(agent, m) for agent in agents for m in run.metrics if m in run.values[agent]]
    where = {c: q for q, c in enumerate(columns)}
    matrix = np.column_stack([run.values[a][m] for a, m in columns])
    pairs, family = [], []
    for m in run.metrics:  # one Holm family per (data set, metric): the pairs of agents that have it
        have = [a for a in agents if (a, m) in where]
        pairs += [(where[(a, m)], where[(b, m)]) for k, a in enumerate(have) for b in have[k + 1 :]]
        family.append(len(pairs))
    resamples = int(settings["resamples"])
    res = stats.analyze(
        matrix,
        pairs,
        confidence=settings["confidence"],
        resamples=resamples,
        method=settings["method"],
        seed=settings["seed"],
        clusters=clusters,
        names=[f"{spec.name}/{a}/{m}" for a, m in columns],
        min_units=int(settings["min_units"]),
    )
    mean, lo, hi = res.means
    infinite = ~np.isfinite(matrix)
    for q, (agent, m) in enumerate(columns):
        result["agents"].setdefault(agent, {})[m] = {
            "mean": json_number(mean[q]),
            "ci": [json_number(lo[q]), json_number(hi[q])],
            "left_out": int(infinite[:, q].sum()),
        }
    c = res.comparisons
    p_holm = np.empty(len(pairs))
    for start, stop in zip([0, *family[:-1]], family):
        p_holm[start:stop] = stats.holm(c.p_permutation[start:stop])
    # which rule gave p (stats.analyze): every sign flip, random flips, or the tail bound where no
    # random flip was as extreme; and where the exact p-value lies given the Monte-Carlo draws
    floor = 1.0 / (resamples + 1.0)
    if 2 ** result["units"] <= resamples:
        methods = np.full(len(pairs), "exact", dtype=object)
    else:
        methods = np.where(c.p_permutation < floor, "tail bound", "monte carlo").astype(object)
    lo_p, hi_p = p_bounds(c.p_permutation, methods, resamples)
    for q, (x, y) in enumerate(pairs):
        p = c.p_permutation[q]
        result["comparisons"].append(
            {
                "a": columns[x][0],
                "b": columns[y][0],
                "metric": columns[x][1],
                "diff": json_number(c.diff[q]),
                "ci": [json_number(c.lo[q]), json_number(c.hi[q])],
                "dropped": int((infinite[:, x] | infinite[:, y]).sum()),
                "p": json_number(p),
                "p_holm": json_number(p_holm[q]),
                "test": "permutation",
                "p_method": methods[q],
                "p_bounds": [json_number(lo_p[q]), json_number(hi_p[q])],
                "p_sign": json_number(c.p_sign[q]),
            }
        )
    return result
