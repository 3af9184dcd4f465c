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
from .._decisions import reported_inside
from .clusters import cluster_labels
from .marks import metric_info, unmarked_reason
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
    p = np.asarray(p, dtype=np.float64)
    lo, hi = p.copy(), p.copy()
    lo[method == "tail bound"] = 0.0
    mc = np.flatnonzero((method == "monte carlo") & np.isfinite(p))
    if len(mc):
        hits = np.rint(p[mc] * (resamples + 1)) - 1
        lo[mc], hi[mc] = stats.monte_carlo_bounds(hits, resamples, P_BOUNDS_CONFIDENCE)
    return lo, hi


def analyze_dataset(
    run: DatasetRun, settings: dict, reported: dict[str, dict[str, float]] | None = None
) -> dict[str, Any]:
    """The ``results.json`` entry of one scored data set.

    Parameters
    ----------
    run:
        the data set after :func:`navdtw.suite.scoring.score_agents` (and its baseline).
    settings:
        the suite's settings (``confidence``, ``resamples``, ``method``, ``seed``, ``cluster``,
        ``min_units``).
    reported:
        agent -> metric -> the figure its paper reports (fractions for rates).

    Returns
    -------
    ``{"dataset", "convention", "n", "units", "threshold", "resampling", "metrics", "agents",
    "baseline", "comparisons", "reported"}`` (the shapes: docs/suite.md and
    ``navdtw/suite/results.schema.json``): per metric its label, unit, rate and direction; per
    agent and metric ``{"mean", "ci", "ci_episodes", "left_out", "runs", "runs_sd"}`` and, on a metric
    that gets marks, ``"vs_best": {"p", "p_bounds", "resamples"}`` (:func:`navdtw.stats.compare_with_best`); per pair of
    agents and metric ``{"a", "b", "metric", "diff", "ci", "dropped", "p", "p_holm", "test",
    "p_method", "p_bounds", "p_sign", "p_improvement"}``; per agent with reported figures and
    metric ``{"reported", "measured", "ci", "ci_episodes", "gap", "se", "gap_se", "inside",
    "inside_episodes", "runs", "verdict"}``. Non-finite numbers are None; an interval below
    ``min_units`` units is ``[None, None]``.
    """
    spec = run.spec
    agents = list(run.values)
    result: dict[str, Any] = {
        "dataset": spec.kind.name,
        "convention": spec.convention,
        "n": len(run.ids),
        "threshold": next(  # a results table's own (AerialVLN's SUCCESS_DISTANCE), else the data set's
            (m.settings["threshold"] for m in run.matched.values() if "threshold" in getattr(m, "settings", {})),
            spec.threshold,
        ),
        "metrics": {m: dict(run.info.get(m) or metric_info(m)) for m in run.metrics},
        "agents": {},
        "baseline": {m: {"mean": json_number(v)} for m, v in run.baseline.items()},
        "comparisons": [],
        "reported": {},
    }
    clusters = cluster_labels(run.bench, run.ids) if settings["cluster"] == "path" else None
    result["resampling"] = "episode" if clusters is None else "path"
    result["units"] = len(run.ids) if clusters is None else len(set(clusters))
    if not agents or not run.ids:
        return result
    columns = [(agent, m) for agent in agents for m in run.metrics if m in run.values[agent]]
    where = {c: q for q, c in enumerate(columns)}
    matrix = np.column_stack([run.values[a][m] for a, m in columns])
    info = {m: run.info.get(m) or metric_info(m) for m in run.metrics}
    weighting = {i.get("weight") for i in info.values()}  # a pooled ratio's weight: not compared
    pairs, family = [], []
    for m in run.metrics:  # one Holm family per (data set, metric): the pairs of agents that have it
        have = [a for a in agents if (a, m) in where] if m not in weighting else []
        pairs += [(where[(a, m)], where[(b, m)]) for k, a in enumerate(have) for b in have[k + 1 :]]
        family.append(len(pairs))
    resamples = int(settings["resamples"])
    weights = _weights(run, columns, info)
    groups, owners, blocks, run_weights, width = [], [], [], [], 0
    for agent, m in columns:  # the agents scored in several runs: one column per run
        x = run.runs.get(agent, {}).get(m)
        if x is not None:
            groups.append(list(range(width, width + x.shape[1])))
            owners.append((agent, m))
            blocks.append(x)
            run_weights.append(_run_weights(run, agent, m, info[m], x.shape))  # a pooled ratio's, per run
            width += x.shape[1]
    # one family of comparisons with the best per metric that gets marks: its agents' figures
    # (column q, or len(columns) + g for the mean over runs of group g)
    group_of = {c: len(columns) + g for g, c in enumerate(owners)}
    families = []
    for m in run.metrics:
        have = [a for a in agents if (a, m) in where]
        if unmarked_reason(info[m]) is None and len(have) >= 2:
            families.append((m, have, [group_of.get((a, m), where[(a, m)]) for a in have]))
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
        runs=(np.hstack(blocks), groups) if groups else None,
        run_weights=np.hstack(run_weights) if weights is not None and groups else None,
        improvement=[info[columns[x][1]]["higher_is_better"] is not False for x, _ in pairs],
        best=[(figures, info[m]["higher_is_better"]) for m, _, figures in families],
        alpha=settings["alpha"],
        weights=weights,
    )
    mean, lo, hi = res.means
    infinite = ~np.isfinite(matrix)
    for q, (agent, m) in enumerate(columns):
        ci = [json_number(lo[q]), json_number(hi[q])]
        result["agents"].setdefault(agent, {})[m] = {
            "mean": json_number(mean[q]),
            "ci": ci,
            "ci_episodes": list(ci),
            "left_out": int(infinite[:, q].sum()),
            "runs": None,
            "runs_sd": None,
            "runs_se": None,
            "runs_df": None,
        }
    if res.runs is not None:
        _several_runs(result, owners, blocks, res.runs)
    for (m, have, _), b in zip(families, res.best):
        for q, agent in enumerate(have):
            result["agents"][agent][m]["vs_best"] = {
                "p": json_number(b.p[q]),
                "p_bounds": [json_number(b.lo[q]), json_number(b.hi[q])],
                "resamples": int(b.resamples[q]),
            }
    higher = [info[columns[x][1]]["higher_is_better"] is not False for x, _ in pairs]
    result["comparisons"] = _comparisons(res, pairs, columns, infinite, result["units"], resamples)
    for entry, better in zip(result["comparisons"], higher):
        _with_runs(entry, run, clusters, settings, better, info[entry["metric"]].get("weight"))
    _holm(result["comparisons"], family)
    result["reported"] = reported_check(result, reported or {}, settings["confidence"])
    return result


def _weights(run: DatasetRun, columns: list, info: dict) -> np.ndarray | None:
    """The weights of the columns (agent, metric): a pooled ratio's (its metric info's ``weight``,
    the agent's column of that name), ones for a plain mean; None when no column is weighted."""
    names = [info[m].get("weight") for _, m in columns]
    if not any(names):
        return None
    ones = np.ones(len(run.ids))
    return np.column_stack(
        [run.values[a][w] if w and w in run.values[a] else ones for (a, _), w in zip(columns, names)]
    )


def _run_weights(run: DatasetRun, agent: str, m: str, info: dict, shape: tuple[int, ...]) -> np.ndarray:
    """The weights of an agent's runs of metric ``m`` [episodes, runs]: a pooled ratio's weight
    column in each run (the agent's per-episode weight in every run if its runs lack it), ones for a
    plain mean."""
    name = info.get("weight")
    if not name:
        return np.ones(shape)
    x = run.runs.get(agent, {}).get(name)
    if x is not None and x.shape == shape:
        return x
    return np.broadcast_to(np.asarray(run.values[agent][name], dtype=np.float64)[:, None], shape).copy()


def _comparisons(res, pairs, columns, infinite: np.ndarray, units: int, resamples: int) -> list[dict[str, Any]]:
    """The ``results.json`` entries of the pairwise comparisons of :func:`navdtw.stats.analyze`'s
    result ``res``: pair ``q`` compares figures ``pairs[q]`` (columns ``(agent, metric)``), over
    episodes; ``p_holm`` is left None (:func:`_holm` fills it per family)."""
    c = res.comparisons
    # which rule gave p (stats.analyze): every sign flip, random flips, or the tail bound where no
    # random flip was as extreme; and where the exact p-value lies given the Monte-Carlo draws
    floor = 1.0 / (resamples + 1.0)
    if 2**units <= resamples:
        methods = np.full(len(pairs), "exact", dtype=object)
    else:
        methods = np.where(c.p_permutation < floor, "tail bound", "monte carlo").astype(object)
    lo_p, hi_p = p_bounds(c.p_permutation, methods, resamples)
    improve = res.improvement
    out = []
    for q, (x, y) in enumerate(pairs):
        p = c.p_permutation[q]
        entry = {
            "a": columns[x][0],
            "b": columns[y][0],
            "metric": columns[x][1],
            "diff": json_number(c.diff[q]),
            "ci": [json_number(c.lo[q]), json_number(c.hi[q])],
            "dropped": int((infinite[:, x] | infinite[:, y]).sum()),
            "p": json_number(p),
            "p_holm": None,  # below, per family
            "test": "permutation",
            "p_method": methods[q],
            "p_bounds": [json_number(lo_p[q]), json_number(hi_p[q])],
            "p_sign": json_number(c.p_sign[q]),
            "p_improvement": {
                "value": json_number(improve.mean[q]),
                "ci": [json_number(improve.lo[q]), json_number(improve.hi[q])],
            },
            "over": OVER_EPISODES,
            "df": None,
        }
        out.append(entry)
    return out


#: What a comparison covers (``results.json``'s ``"over"``): both agents scored in several runs,
#: or a single run on either side (the episodes-only comparison).
OVER_SEEDS = "episodes and seeds"
OVER_EPISODES = "episodes (one run: seed spread not estimated)"


def _with_runs(entry: dict, run: DatasetRun, clusters, settings: dict, higher: bool, weight: str | None) -> None:
    """A comparison with an agent scored in several runs. Both in several runs: the runs-aware
    comparison (:func:`navdtw.stats.runs_difference`: the difference over episodes and seeds, its
    t interval, p and degrees of freedom; ``test`` "runs t"). Either way rliable's probability of
    improvement over the pairs of runs (:func:`navdtw.stats.runs_improvement`), over episodes and
    seeds when both have several runs, over episodes otherwise. A pooled ratio (``weight``, its
    weight column) is compared as one: each run's ratio, linearized (the functions' ``weights=``),
    and its probability of improvement counts each episode by its weight."""
    a = run.runs.get(entry["a"], {}).get(entry["metric"])
    b = run.runs.get(entry["b"], {}).get(entry["metric"])
    if a is None and b is None:
        return
    one = {entry["a"]: a, entry["b"]: b}
    a, b = (x if x is not None else run.values[name][entry["metric"]][:, None] for name, x in one.items())
    conf = settings["confidence"]
    w = None
    if weight:
        w = tuple(_run_weights(run, name, entry["metric"], {"weight": weight}, x.shape) for name, x in zip(one, (a, b)))
    pi = stats.runs_improvement(a, b, higher_is_better=higher, clusters=clusters, confidence=conf, weights=w)
    entry["p_improvement"] = {"value": json_number(pi.mean), "ci": [json_number(pi.lo), json_number(pi.hi)]}
    if a.shape[1] < 2 or b.shape[1] < 2:
        return
    r = stats.runs_difference(a, b, clusters=clusters, confidence=conf, weights=w)
    few = r.units < int(settings["min_units"])
    entry.update(
        diff=json_number(r.diff),
        ci=[None, None] if few else [json_number(r.lo), json_number(r.hi)],
        p=json_number(r.p),
        test="runs t",
        p_method="satterthwaite t",
        p_bounds=[json_number(r.p), json_number(r.p)],
        over=OVER_SEEDS,
        df=json_number(r.df),
    )


def _holm(comparisons: list[dict], family: list[int]) -> None:
    """Holm within each metric's family (one per data set and metric), on each comparison's p:
    the permutation test's, or the runs-aware t test's where both agents have several runs."""
    for start, stop in zip([0, *family[:-1]], family):
        p = np.array([np.nan if c["p"] is None else c["p"] for c in comparisons[start:stop]])
        for c, h in zip(comparisons[start:stop], stats.holm(p)):
            c["p_holm"] = json_number(h)


def _several_runs(result: dict, owners: list, blocks: list, r: stats.RunIntervals) -> None:
    """The figures of the agents scored in several runs: the mean over runs of the run means, its
    interval over episodes and runs (:func:`navdtw.stats.runs_intervals`), the run means and
    their spread; ``left_out`` counts the values left out over all runs."""
    for q, ((agent, m), x) in enumerate(zip(owners, blocks)):
        result["agents"][agent][m].update(
            {
                "mean": json_number(r.mean[q]),
                "ci": [json_number(r.lo[q]), json_number(r.hi[q])],
                "ci_episodes": [json_number(r.episode_lo[q]), json_number(r.episode_hi[q])],
                "left_out": int((~np.isfinite(x)).sum()),
                "runs": [json_number(v) for v in r.run_means[q]],
                "runs_sd": json_number(r.run_sd[q]),
                "runs_se": json_number(r.se[q]),
                "runs_df": json_number(r.df[q]),
            }
        )


def reported_check(result: dict, reported: dict[str, dict[str, float]], confidence: float) -> dict[str, Any]:
    """Per agent and metric, a paper's figure against the measured mean: the gap (measured minus
    reported), its standard error (with several runs over episodes and seeds, ``runs_se``; with one
    run over episodes, the interval's half-width over the normal quantile), the gap in standard
    errors, whether the figure lies inside the interval (``inside``: the decision rule, outside is
    flagged; ``inside_episodes``: the interval over episodes alone) and a verdict in words that
    states only that (docs/statistics.md, "Reported versus measured"). A metric the agent lacks
    here is listed with ``measured`` None."""
    from scipy import special

    z = float(special.ndtri(0.5 + confidence / 2.0))
    out: dict[str, Any] = {}
    for agent, figures in reported.items():
        values = result["agents"].get(agent)
        if values is None:
            continue
        rows = out.setdefault(agent, {})
        for m, r in figures.items():
            v = values.get(m)
            row: dict[str, Any] = {
                "reported": float(r),
                "measured": None,
                "ci": [None, None],
                "ci_episodes": [None, None],
                "gap": None,
                "se": None,
                "gap_se": None,
                "inside": None,
                "inside_episodes": None,
                "runs": 1,
                "verdict": f"not measured: {agent} has no {m} on this data set",
            }
            rows[m] = row
            if v is None or v["mean"] is None:
                continue
            runs = len(v["runs"]) if v["runs"] else 1
            row.update(measured=v["mean"], ci=v["ci"], ci_episodes=v["ci_episodes"], runs=runs)
            row["gap"] = v["mean"] - r
            if result["metrics"].get(m, {}).get("rate") and not 0.0 <= r <= 1.0:
                row["verdict"] = f"not judged: {m} is a rate, and {r:g} is not a fraction in [0, 1]"
                continue
            lo, hi = v["ci"]
            if lo is None or hi is None:
                row["verdict"] = "no interval (too few paths or episodes): the gap cannot be judged"
                continue
            row["se"] = v.get("runs_se") if runs > 1 else (hi - lo) / (2.0 * z)
            row["gap_se"] = row["gap"] / row["se"] if row["se"] else None
            row["inside"] = reported_inside(r, lo, hi)  # the figure as rounded meets the interval
            elo, ehi = v["ci_episodes"]
            row["inside_episodes"] = None if elo is None else reported_inside(r, elo, ehi)
            row["verdict"] = _verdict(row, runs, confidence)
    return out


def _verdict(row: dict, runs: int, confidence: float) -> str:
    """The reported-versus-measured verdict: where the figure lies against the interval and how far
    from the measured mean, in standard errors; never a cause, which the data cannot show."""
    over = f"over episodes and seeds ({runs} runs)" if runs > 1 else "over episodes (one run: seed spread not covered)"
    text = f"{'inside' if row['inside'] else 'outside'} the {confidence * 100:g}% interval {over}"
    if row["gap_se"] is None or row["gap"] == 0:
        return text + ("" if row["gap_se"] is None else ": the reported figure equals the measured mean")
    side = "above" if row["reported"] > row["measured"] else "below"
    return text + f": the reported figure is {abs(row['gap_se']):.1f} standard errors {side} the measured mean"
