"""The statistics of one data set: every agent's means with bootstrap intervals, and every pair of
agents compared on every metric (paired interval, permutation and sign tests, Holm per metric).

One :func:`navdtw.stats.analyze` call per data set; the result is the data set's entry of
``results.json``. Internal to :mod:`navdtw.suite`.
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


def analyze_dataset(run: DatasetRun, settings: dict) -> dict[str, Any]:
    """The ``results.json`` entry of one scored data set.

    Parameters
    ----------
    run:
        the data set after :func:`navdtw.suite.scoring.score_agents` (and its baseline).
    settings:
        the suite's settings (``confidence``, ``resamples``, ``method``, ``seed``, ``cluster``).

    Returns
    -------
    ``{"dataset", "convention", "n", "threshold", "agents", "baseline", "comparisons",
    "resampling"}``: per agent and metric ``{"mean", "ci"}``; per pair of agents and metric
    ``{"a", "b", "metric", "diff", "ci", "p", "p_holm", "test", "p_sign"}``. Non-finite numbers
    are None.

    Raises
    ------
    ValueError
        from :func:`navdtw.stats.analyze`, e.g. for a NaN metric value.
    """
    spec = run.spec
    agents, metrics = list(run.values), run.metrics
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
    if not agents or not run.ids:
        return result
    k = len(metrics)
    matrix = np.empty((len(run.ids), len(agents) * k))
    for a, agent in enumerate(agents):
        for j, m in enumerate(metrics):
            matrix[:, a * k + j] = run.values[agent][m]
    pairs = [(a * k + j, b * k + j) for j in range(k) for a in range(len(agents)) for b in range(a + 1, len(agents))]
    res = stats.analyze(
        matrix,
        pairs,
        confidence=settings["confidence"],
        resamples=settings["resamples"],
        method=settings["method"],
        seed=settings["seed"],
        clusters=clusters,
        names=[f"{agent}/{m}" for agent in agents for m in metrics],
    )
    mean, lo, hi = res.means
    for a, agent in enumerate(agents):
        result["agents"][agent] = {
            m: {"mean": json_number(mean[a * k + j]), "ci": [json_number(lo[a * k + j]), json_number(hi[a * k + j])]}
            for j, m in enumerate(metrics)
        }
    c = res.comparisons
    p_holm = np.empty(len(pairs))
    per_metric = len(agents) * (len(agents) - 1) // 2
    for j in range(k):  # one Holm family per (data set, metric)
        sl = slice(j * per_metric, (j + 1) * per_metric)
        p_holm[sl] = stats.holm(c.p_permutation[sl])
    for q, (x, y) in enumerate(pairs):
        result["comparisons"].append(
            {
                "a": agents[x // k],
                "b": agents[y // k],
                "metric": metrics[x % k],
                "diff": json_number(c.diff[q]),
                "ci": [json_number(c.lo[q]), json_number(c.hi[q])],
                "p": json_number(c.p_permutation[q]),
                "p_holm": json_number(p_holm[q]),
                "test": "permutation",
                "p_sign": json_number(c.p_sign[q]),
            }
        )
    return result
