#!/usr/bin/env python
"""Degrees of freedom that never fall below what the data carry (issue 34): one agent's interval
over episodes and seeds, and the two-agent test, with few runs, measured where the truth is known.

The simulation is benchmarks/bench_runs.py's (episodes of difficulty ``p_e ~ Beta(2, 2)``, each run
shifting every episode's success probability by its own ``b_r ~ N(0, sigma)``, success
``Bernoulli(clip(p_e + delta + b_r, 0, 1))``), plus a continuous metric (``x = 0.5 + d_e + b_r +
eps``, ``d_e ~ N(0, 0.2)``, ``eps ~ N(0, 0.2)``).

* **one**: ``stats.runs_intervals`` (one agent, 3 and 5 runs): coverage of both estimands, the
  expected score over episodes and seeds ("episodes resampled": 0.5 by symmetry) and the expected
  score over seeds on the split drawn ("split fixed": by Gauss-Hermite quadrature per episode);
  the median width over the width of the plain t(R - 1) interval on the run means (``t(R - 1) sd /
  sqrt(R)``), and the largest width (a rate's interval is clipped to [0, 1]).
* **pair**: ``stats.runs_difference`` beside Welch's t and the pooled t on the run means: type-I
  error at 5% and power at 3 and 5 points, equal and unequal seed spreads and numbers of runs.

Printed as Markdown, never asserted (tests/test_stats_runs.py has CI-sized checks).

    PYTHONPATH=python python benchmarks/bench_runs_df.py --reps 1000 --seed 20261229
    python benchmarks/bench_runs_df.py --tiny      # 40 replications: checks it runs
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy import special
from scipy import stats as sps

from navdtw import stats

ALPHA = 0.05
CHUNK = 100


def rate_agent(rng, p, runs, sigma, delta=0.0):
    """``[reps, n, runs]`` successes on the episodes of success probability ``p`` [reps, n, 1]."""
    b = rng.normal(0.0, sigma, (p.shape[0], 1, runs))
    return (rng.random((p.shape[0], p.shape[1], runs)) < np.clip(p + delta + b, 0.0, 1.0)).astype(np.float64)


def split_truth(p, sigma):
    """Per replication, the mean over the split's episodes of E_b clip(p_e + b, 0, 1)."""
    x, w = special.roots_hermitenorm(40)
    w = w / w.sum()
    return (np.clip(p[..., 0, None] + sigma * x, 0.0, 1.0) @ w).mean(axis=-1)


def one(rng, reps, grid):
    print("## One agent's interval over episodes and seeds: stats.runs_intervals\n")
    print(
        "| metric | runs | episodes | sigma | coverage (episodes resampled) | coverage (split fixed) "
        "| median width / t(R-1) on run means | median df | widest |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for metric, runs, n, sigma in grid:
        cov_e, cov_s, ratio, dfs, widest = [], [], [], [], 0.0
        for start in range(0, reps, CHUNK):
            k = min(CHUNK, reps - start)
            if metric == "rate":
                p = rng.beta(2.0, 2.0, (k, n, 1))
                x = rate_agent(rng, p, runs, sigma)
                truth_e, truth_s = 0.5, split_truth(p, sigma)
            else:
                d = rng.normal(0.0, 0.2, (k, n, 1))
                x = 0.5 + d + rng.normal(0.0, sigma, (k, 1, runs)) + rng.normal(0.0, 0.2, (k, n, runs))
                truth_e, truth_s = 0.5, 0.5 + d[:, :, 0].mean(axis=1)
            matrix = x.transpose(1, 0, 2).reshape(n, k * runs)
            r = stats.runs_intervals(matrix, [list(range(q * runs, (q + 1) * runs)) for q in range(k)], resamples=1)
            cov_e.append((r.lo <= truth_e) & (r.hi >= truth_e))
            cov_s.append((r.lo <= truth_s) & (r.hi >= truth_s))
            means = x.mean(axis=1)
            plain = 2 * sps.t.ppf(0.975, runs - 1) * means.std(axis=1, ddof=1) / np.sqrt(runs)
            with np.errstate(invalid="ignore", divide="ignore"):
                ratio.append((r.hi - r.lo) / plain)
            dfs.append(r.df)
            widest = max(widest, float(np.max(r.hi - r.lo)))
        ce, cs = (100 * np.concatenate(c).mean() for c in (cov_e, cov_s))
        rt, df = np.nanmedian(np.concatenate(ratio)), np.nanmedian(np.concatenate(dfs))
        print(f"| {metric} | {runs} | {n:,} | {sigma:g} | {ce:.1f}% | {cs:.1f}% | {rt:.2f} | {df:.1f} | {widest:.3f} |")
    mc = 100 * np.sqrt(ALPHA * (1 - ALPHA) / reps)
    print(f"\n{reps} replications a cell: Monte-Carlo standard error {mc:.1f} points at 95%.\n")


def _welch_pooled(a, b):
    """p-values of Welch's and the pooled t on the run means, ``a`` [reps, n, Ra], ``b``."""
    ma, mb = a.mean(axis=1), b.mean(axis=1)
    welch = sps.ttest_ind(ma, mb, axis=1, equal_var=False).pvalue
    pooled = sps.ttest_ind(ma, mb, axis=1, equal_var=True).pvalue
    return welch, pooled


def pair(rng, reps, grid):
    print("## Two agents: stats.runs_difference beside Welch's and the pooled t on the run means\n")
    print(
        "| runs A / B | sigma A / B | episodes | type-I: navdtw | Welch | pooled | power +3: navdtw | Welch "
        "| pooled | power +5: navdtw | Welch | pooled |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for ra, rb, sa, sb, n in grid:
        rates = {(d, m): [] for d in (0.0, 0.03, 0.05) for m in ("navdtw", "welch", "pooled")}
        for start in range(0, reps, CHUNK):
            k = min(CHUNK, reps - start)
            for d in (0.0, 0.03, 0.05):
                p = rng.beta(2.0, 2.0, (k, n, 1))
                a, b = rate_agent(rng, p, ra, sa, d), rate_agent(rng, p, rb, sb)
                welch, pooled = _welch_pooled(a, b)
                rates[(d, "navdtw")].append(stats.runs_difference(a, b).p < ALPHA)
                rates[(d, "welch")].append(welch < ALPHA)
                rates[(d, "pooled")].append(pooled < ALPHA)
        m = {key: 100 * np.concatenate(v).mean() for key, v in rates.items()}
        cells = [f"{m[(d, k)]:.1f}%" for d in (0.0, 0.03, 0.05) for k in ("navdtw", "welch", "pooled")]
        print(f"| {ra} / {rb} | {sa:g} / {sb:g} | {n:,} | " + " | ".join(cells) + " |")
    mc = 100 * np.sqrt(ALPHA * (1 - ALPHA) / reps)
    print(f"\n{reps} replications a cell: Monte-Carlo standard error {mc:.1f} points at 5%.\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=1000, help="replications a cell (default 1,000)")
    ap.add_argument("--seed", type=int, default=20261229)
    ap.add_argument("--tiny", action="store_true", help="40 replications, small grid: checks the script runs")
    ap.add_argument("--only", nargs="+", choices=("one", "pair"), help="the tables to make (default: both)")
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    t0 = time.perf_counter()
    parts = set(args.only or ("one", "pair"))
    if args.tiny:
        one(rng, 40, [("rate", 3, 300, 0.03), ("continuous", 3, 300, 0.03)])
        pair(rng, 40, [(3, 5, 0.0, 0.06, 300)])
    else:
        if "one" in parts:
            grid = [
                (m, r, n, s)
                for m in ("rate", "continuous")
                for r in (3, 5)
                for n in (300, 2000)
                for s in (0.0, 0.01, 0.03, 0.06)
            ]
            one(rng, args.reps, grid)
        if "pair" in parts:
            spreads = [(0.0, 0.0), (0.01, 0.01), (0.03, 0.03), (0.06, 0.06), (0.0, 0.06), (0.06, 0.0)]
            runs = ((3, 3), (5, 5), (3, 5))
            cells = [(ra, rb, sa, sb, n) for ra, rb in runs for sa, sb in spreads for n in (300, 2000)]
            pair(rng, args.reps, cells)
    print(f"{time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
