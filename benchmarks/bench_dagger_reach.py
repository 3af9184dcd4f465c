"""How large a gap a leaderboard's dagger (†: the data cannot rule out that this agent is the
best; navdtw.suite.marks) can stand beside, in standard errors of the gap: the normal-theory
reach of the multiple comparisons with the best (docs/statistics.md, "The best, chosen honestly").

    python benchmarks/bench_dagger_reach.py          # seconds

Agent i keeps its dagger while its largest standardized gap to another agent, ``max_j t_ji``,
stays below the one-sided 1 - alpha quantile of ``max_j T_ji`` under "i is the best"; with equal
variances the K - 1 comparisons with a common agent are normal with correlation 1/2. The quantile
is estimated from 400,000 draws (Monte-Carlo error under 0.01), seed 20261221 (new). The two-step
method (Romano, Shaikh and Wolf) and the bootstrap's own correlations move it a little; this is the
reach the marks' note quotes, beside what a gap of 10 points of SR on 300 episodes is in
standard errors of the paired difference.
"""

from __future__ import annotations

import argparse

import numpy as np

SEED = 20261221
ALPHA = 0.05
DRAWS = 400_000


def reach(k: int, rng: np.random.Generator, draws: int = DRAWS) -> float:
    """The one-sided 1 - ALPHA quantile of the max of k - 1 standard normals with correlation 1/2."""
    if k == 2:
        return float(np.quantile(rng.standard_normal(draws), 1 - ALPHA))
    common = rng.standard_normal((draws, 1))
    own = rng.standard_normal((draws, k - 1))
    return float(np.quantile(((common + own) / np.sqrt(2.0)).max(axis=1), 1 - ALPHA))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tiny", action="store_true", help="2,000 draws (checks the script runs)")
    draws = 2000 if ap.parse_args(argv).tiny else DRAWS
    rng = np.random.default_rng(SEED)
    print(f"seed {SEED}, {draws} draws, alpha {ALPHA}")
    print("| agents | largest gap keeping the dagger (standard errors of the gap) |")
    print("|---|---|")
    for k in (2, 3, 5, 8, 20, 80):
        print(f"| {k} | {reach(k, rng, draws):.2f} |")
    p, n = 0.55, 300
    print("\nA 10-point SR gap on 300 episodes (SR about 0.55), in standard errors of the paired difference:")
    for rho in (0.0, 0.25, 0.5):
        se = np.sqrt(2 * p * (1 - p) * (1 - rho) / n)
        print(f"  agents' successes correlated {rho:g}: {0.10 / se:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
