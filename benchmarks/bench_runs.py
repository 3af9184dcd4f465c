#!/usr/bin/env python
"""Error rates of navdtw's verdicts on agents scored in several runs (seeds): the tables of
docs/statistics.md, "Several runs" and "Reported versus measured", simulated where the truth is
known (issue 26).

The simulation (the issue's): episodes of difficulty ``p_e ~ Beta(2, 2)``; each run of an agent
shifts every episode's success probability by its own ``b_r ~ N(0, sigma)``; success on episode e
in run r is ``Bernoulli(clip(p_e + delta + b_r, 0, 1))``. Two agents share the episodes (and their
difficulties) but not their seeds. The estimand is the expected success rate over episodes and
seeds, computed by quadrature (0.5 for ``delta = 0`` by symmetry).

* **Comparisons** (``stats.runs_difference``): per (runs, episodes, sigma), the rejection rate at
  5% of equal agents (type-I error), the coverage of the 95% interval of the difference (equal
  agents, and A ahead by 5 points), power at 3 and 5 points, and beside them the type-I error of
  the comparison of per-episode means over runs (the design before issue 26).
* **Reported figures** (``stats.runs_intervals``, the rule of ``navdtw.suite``'s reported check):
  how often a figure that differs from the agent's expected score by a gap of 0, 1, 2, 3 or 5
  points lies outside the 95% interval (over episodes and seeds; with one run, over episodes), for
  1, 3 and 5 runs and sigma 0 and 0.03; beside it the rule before issue 26 (the episode interval
  widened by ``t(R - 1) sd / sqrt(R)`` of the run means).

Everything is vectorised over replications (numpy); the seed is fixed (2026, not tuned). Printed as
Markdown, never asserted (tests/test_stats_runs.py has a CI-sized version with bounds).

    PYTHONPATH=python python benchmarks/bench_runs.py             # 1,000 replications a cell
    python benchmarks/bench_runs.py --reps 400 --seed 7
    python benchmarks/bench_runs.py --tiny                        # 40 replications: checks it runs
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy import special
from scipy import stats as sps

from navdtw import stats

ALPHA = 0.05
PARTS = ("comparisons", "unequal", "improvement", "reported")
CHUNK = 100  # replications per batch (memory: CHUNK x episodes x runs floats per agent)


def agents(rng, reps, n, runs, sigma, delta=0.0, runs_b=None, sigma_b=None):
    """Two agents' successes, ``[reps, n, runs]`` each: the same episodes, their own seeds (B: its
    own number of runs and seed spread where given)."""
    p = rng.beta(2.0, 2.0, (reps, n, 1))

    def one(shift, r, s):
        b = rng.normal(0.0, s, (reps, 1, r))
        return (rng.random((reps, n, r)) < np.clip(p + shift + b, 0.0, 1.0)).astype(np.float64)

    b = one(0.0, runs if runs_b is None else runs_b, sigma if sigma_b is None else sigma_b)
    return one(delta, runs, sigma), b


def expected(delta, sigma):
    """E over p ~ Beta(2, 2) and b ~ N(0, sigma) of clip(p + delta + b, 0, 1) (quadrature)."""
    p = (np.arange(20000) + 0.5) / 20000
    wp = sps.beta.pdf(p, 2, 2) / 20000
    x, wb = special.roots_hermitenorm(60)
    wb = wb / wb.sum()
    vals = np.clip(p[:, None] + delta + sigma * x[None, :], 0.0, 1.0)
    return float(wp @ vals @ wb)


def comparisons(rng, reps, grid):
    print("## Comparisons: stats.runs_difference on equal agents and on A ahead\n")
    print(
        "| runs | episodes | sigma | type-I error | coverage (equal) | coverage (A +5) | power +3 | power +5 "
        "| per-episode means: type-I |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for runs, n, sigma in grid:
        rates = {k: [] for k in ("null", "cover0", "cover5", "p3", "p5", "old")}
        truth5 = expected(0.05, sigma) - expected(0.0, sigma)
        for start in range(0, reps, CHUNK):
            k = min(CHUNK, reps - start)
            a, b = agents(rng, k, n, runs, sigma)
            r = stats.runs_difference(a, b)
            rates["null"].append(r.p < ALPHA)
            rates["cover0"].append((r.lo <= 0) & (r.hi >= 0))
            old = stats.runs_difference(a.mean(axis=2, keepdims=True), b.mean(axis=2, keepdims=True))
            rates["old"].append(old.p < ALPHA)
            a, b = agents(rng, k, n, runs, sigma, 0.03)
            rates["p3"].append(stats.runs_difference(a, b).p < ALPHA)
            a, b = agents(rng, k, n, runs, sigma, 0.05)
            r = stats.runs_difference(a, b)
            rates["p5"].append(r.p < ALPHA)
            rates["cover5"].append((r.lo <= truth5) & (r.hi >= truth5))
        m = {key: 100 * np.concatenate(v).mean() for key, v in rates.items()}
        print(
            f"| {runs} | {n:,} | {sigma:g} | {m['null']:.1f}% | {m['cover0']:.1f}% | {m['cover5']:.1f}% | "
            f"{m['p3']:.1f}% | {m['p5']:.1f}% | {m['old']:.1f}% |"
        )
    mc = 100 * np.sqrt(ALPHA * (1 - ALPHA) / reps)
    print(f"\n{reps} replications a cell: Monte-Carlo standard error {mc:.1f} points at 5% (95%).\n")


def unequal(rng, reps, grid):
    print("## Comparisons of agents with unequal seed spreads and numbers of runs: stats.runs_difference\n")
    print("| runs A / B | sigma A / B | episodes | type-I error | coverage (equal) | coverage (A +5) | power +5 |")
    print("|---|---|---|---|---|---|---|")
    for ra, rb, sa, sb, n in grid:
        rates = {k: [] for k in ("null", "cover0", "cover5", "p5")}
        truth5 = expected(0.05, sa) - expected(0.0, sb)
        for start in range(0, reps, CHUNK):
            k = min(CHUNK, reps - start)
            a, b = agents(rng, k, n, ra, sa, runs_b=rb, sigma_b=sb)
            r = stats.runs_difference(a, b)
            rates["null"].append(r.p < ALPHA)
            rates["cover0"].append((r.lo <= 0) & (r.hi >= 0))
            a, b = agents(rng, k, n, ra, sa, 0.05, runs_b=rb, sigma_b=sb)
            r = stats.runs_difference(a, b)
            rates["p5"].append(r.p < ALPHA)
            rates["cover5"].append((r.lo <= truth5) & (r.hi >= truth5))
        m = {key: 100 * np.concatenate(v).mean() for key, v in rates.items()}
        print(
            f"| {ra} / {rb} | {sa:g} / {sb:g} | {n:,} | {m['null']:.1f}% | {m['cover0']:.1f}% | {m['cover5']:.1f}% | "
            f"{m['p5']:.1f}% |"
        )
    print(f"\n{reps} replications a cell.\n")


def improvement(rng, reps, grid):
    print("## Probability of improvement over episodes and runs: stats.runs_improvement\n")
    print("| runs | episodes | sigma | coverage (equal: 0.5) | coverage (A +5) | truth (A +5) |")
    print("|---|---|---|---|---|---|")
    for runs, n, sigma in grid:
        cover0, cover5 = [], []
        # per episode and pair of runs, P(A > B) + P(tie) / 2 = 1/2 + (pA - pB) / 2 for 0/1 success
        truth5 = 0.5 + 0.5 * (expected(0.05, sigma) - expected(0.0, sigma))
        for start in range(0, reps, CHUNK):
            k = min(CHUNK, reps - start)
            a, b = agents(rng, k, n, runs, sigma)
            r = stats.runs_improvement(a, b)
            cover0.append((r.lo <= 0.5) & (r.hi >= 0.5))
            a, b = agents(rng, k, n, runs, sigma, 0.05)
            r = stats.runs_improvement(a, b)
            cover5.append((r.lo <= truth5) & (r.hi >= truth5))
        c0, c5 = (100 * np.concatenate(c).mean() for c in (cover0, cover5))
        print(f"| {runs} | {n:,} | {sigma:g} | {c0:.1f}% | {c5:.1f}% | {truth5:.4f} |")
    print(f"\n{reps} replications a cell.\n")


def reported(rng, reps, n, gaps, resamples):
    print(f"## Reported figures: outside the 95% interval, {n:,} episodes\n")
    head = " | ".join(f"gap {g:g}" for g in gaps)
    print(f"| runs | sigma | {head} | before issue 26: {head} |")
    print("|---|---|" + "---|" * (2 * len(gaps)))
    truth = expected(0.0, 0.0)  # 0.5 for any sigma, by symmetry
    for runs in (1, 3, 5):
        for sigma in (0.0, 0.03):
            new = {g: [] for g in gaps}
            old = {g: [] for g in gaps}
            for start in range(0, reps, CHUNK):
                k = min(CHUNK, reps - start)
                x, _ = agents(rng, k, n, runs, sigma)
                matrix = x.transpose(1, 0, 2).reshape(n, k * runs)
                groups = [list(range(q * runs, (q + 1) * runs)) for q in range(k)]
                r = stats.runs_intervals(matrix, groups, resamples=resamples, seed=start)
                half = np.where(
                    runs > 1, sps.t.ppf(0.975, max(runs - 1, 1)) * np.nan_to_num(r.run_sd) / np.sqrt(runs), 0.0
                )
                old_lo = r.mean - np.hypot(r.mean - r.episode_lo, half)
                old_hi = r.mean + np.hypot(r.episode_hi - r.mean, half)
                for g in gaps:
                    figure = truth + g / 100.0
                    new[g].append((figure < r.lo) | (figure > r.hi))
                    old[g].append((figure < old_lo) | (figure > old_hi))
            cells = [f"{100 * np.concatenate(new[g]).mean():.1f}%" for g in gaps]
            cells += [f"{100 * np.concatenate(old[g]).mean():.1f}%" for g in gaps]
            print(f"| {runs} | {sigma:g} | " + " | ".join(cells) + " |")
    print(f"\n{reps} replications a cell; one run: BCa over episodes, {resamples:,} resamples.\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=1000, help="replications a cell (default 1,000)")
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--tiny", action="store_true", help="40 replications, small grid: checks the script runs")
    ap.add_argument("--only", nargs="+", choices=PARTS, help="the tables to make (default: all)")
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    t0 = time.perf_counter()
    parts = set(args.only or PARTS)
    if args.tiny:
        comparisons(rng, 40, [(3, 300, 0.03)])
        unequal(rng, 40, [(3, 5, 0.0, 0.06, 300)])
        improvement(rng, 40, [(3, 300, 0.03)])
        reported(rng, 40, 300, (0, 3), 200)
    else:
        if "comparisons" in parts:
            grid = [(r, n, s) for r in (3, 5) for n in (300, 2000) for s in (0.0, 0.01, 0.03, 0.06)]
            comparisons(rng, args.reps, grid)
        if "unequal" in parts:
            pairs = [(3, 5, 0.0, 0.06), (5, 3, 0.0, 0.06), (3, 3, 0.0, 0.06), (3, 5, 0.06, 0.0), (3, 5, 0.03, 0.03)]
            unequal(rng, args.reps, [(*c, n) for c in pairs for n in (300, 2000)])
        if "improvement" in parts:
            improvement(rng, args.reps, [(r, n, s) for r in (3, 5) for n in (300, 2000) for s in (0.0, 0.03, 0.06)])
        if "reported" in parts:
            reported(rng, args.reps, 2000, (0, 1, 2, 3, 5), 1000)
    print(f"{time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
