#!/usr/bin/env python
"""Wall time of navdtw.stats at benchmark-suite scale: 4 data sets x 8 agents x 13 metrics.

Each data set is one ``analyze`` call on an [episodes, 8 agents x 13 metrics] matrix: every
column's mean with its bootstrap interval and, per metric, all 28 pairs of agents (paired
bootstrap interval, permutation test, sign test), then Holm over each metric's pairs. The sizes
are those of the real splits (R2R val seen / val unseen, NDH val unseen, REVERIE val unseen);
instructions share paths three to a path in R2R and REVERIE-like splits (the cluster run), NDH
episodes are their own clusters. The values are simulated (a mix of 0/1 rates and continuous
scores); the cost does not depend on them.

The issue's target for the whole suite (scoring and report included) is 5 s on 2 cores; the
statistics should take a small part of it. Printed, never asserted.

    PYTHONPATH=python python benchmarks/bench_stats.py     # 10,000 resamples, BCa (or installed navdtw)
    python benchmarks/bench_stats.py --resamples 2000 --method percentile --repeat 3
    python benchmarks/bench_stats.py --scipy     # also scipy.stats one column / pair at a time, for scale
    python benchmarks/bench_stats.py --tiny      # 50 resamples, 1 run: checks the script runs (CI)
"""

from __future__ import annotations

import argparse
import itertools
import os
import platform
import time

import numpy as np

from navdtw import stats

# (name, episodes, instructions per path); 1 = every episode its own cluster
DATASETS = [
    ("r2r_val_seen", 1021, 3),
    ("r2r_val_unseen", 2349, 3),
    ("ndh_val_unseen", 907, 1),
    ("reverie_val_unseen", 3521, 3),
]
AGENTS, METRICS = 8, 13


def simulate(n: int, rng: np.random.Generator) -> np.ndarray:
    """[n, AGENTS * METRICS]: column a * METRICS + m; odd metrics 0/1, even ones continuous."""
    skill = rng.normal(size=(n, 1))
    cols = []
    for a in range(AGENTS):
        for m in range(METRICS):
            z = skill + 0.1 * a + rng.normal(size=(n, 1))
            cols.append((z > 0).astype(float) if m % 2 else 1.0 / (1.0 + np.exp(-z)))
    return np.hstack(cols)


def suite(data: list[tuple[np.ndarray, np.ndarray | None]], args: argparse.Namespace) -> dict[str, tuple[float, float]]:
    """(wall, CPU) seconds per data set: ``analyze`` on every column and pair, then Holm per metric."""
    pairs = [
        (a * METRICS + m, b * METRICS + m) for m in range(METRICS) for a, b in itertools.combinations(range(AGENTS), 2)
    ]
    times = {}
    for (name, _, _), (matrix, clusters) in zip(DATASETS, data):
        t, c = time.perf_counter(), time.process_time()
        r = stats.analyze(
            matrix, pairs, resamples=args.resamples, method=args.method, seed=0, clusters=clusters
        ).comparisons
        p = r.p_permutation.reshape(METRICS, -1)
        np.apply_along_axis(stats.holm, 1, p)
        times[name] = (time.perf_counter() - t, time.process_time() - c)
    return times


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--resamples", type=int, default=10_000)
    ap.add_argument("--method", default="bca", choices=["bca", "percentile"])
    ap.add_argument("--repeat", type=int, default=3, help="timed runs; best and median are printed")
    ap.add_argument("--scipy", action="store_true", help="also time scipy.stats on one column and one pair")
    ap.add_argument("--tiny", action="store_true", help="50 resamples, 1 run: checks the script runs (CI)")
    args = ap.parse_args(argv)
    if args.tiny:
        args.resamples, args.repeat = 50, 1
    print(f"navdtw.stats: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, numpy {np.__version__}")
    print(f"{AGENTS} agents x {METRICS} metrics, {args.resamples} resamples, {args.method}, all pairs per metric")
    rng = np.random.default_rng(0)
    mats = [simulate(n, rng) for _, n, _ in DATASETS]
    for mode in ("episodes", "clusters"):
        data = []
        for (_, n, per), m in zip(DATASETS, mats):
            clusters = np.arange(n) // per if mode == "clusters" and per > 1 else None
            data.append((m, clusters))
        runs = [suite(data, args) for _ in range(args.repeat)]
        print(f"\nresampling {mode} (best of {args.repeat}: wall s / CPU s, both threads):")
        for name, n, per in DATASETS:
            wall, cpu = min(r[name] for r in runs)
            g = n // per if mode == "clusters" else n
            print(f"  {name:20s} {n:5d} episodes, {g:5d} units  {wall:6.3f} / {cpu:6.3f}")
        totals = sorted((sum(w for w, _ in r.values()), sum(c for _, c in r.values())) for r in runs)
        wall, cpu = totals[0]
        print(
            f"  whole suite: best {wall:.3f} s wall ({cpu:.3f} s CPU), median {totals[len(totals) // 2][0]:.3f} s wall"
        )
    if args.scipy:
        scipy_reference(mats[1], args)
    return 0


def scipy_reference(matrix: np.ndarray, args: argparse.Namespace) -> None:
    """For scale: scipy.stats on one column and one pair of R2R val unseen, same settings."""
    from scipy import stats as sps

    a, b = matrix[:, 0], matrix[:, METRICS]
    t = time.perf_counter()
    sps.bootstrap((a,), np.mean, n_resamples=args.resamples, method="BCa" if args.method == "bca" else "percentile")
    boot = time.perf_counter() - t
    t = time.perf_counter()
    sps.permutation_test(
        (a, b),
        lambda x, y, axis: np.abs(np.mean(x - y, axis=axis)),
        permutation_type="samples",
        alternative="greater",
        n_resamples=args.resamples,
        vectorized=True,
    )
    perm = time.perf_counter() - t
    columns, pairs = AGENTS * METRICS, METRICS * AGENTS * (AGENTS - 1) // 2
    print(f"\nscipy.stats on r2r_val_unseen: bootstrap {boot:.3f} s per column, permutation_test {perm:.3f} s per pair")
    print(f"  -> {columns} columns + {pairs} pairs one at a time: ~{columns * boot + pairs * (boot + perm):.0f} s")


if __name__ == "__main__":
    raise SystemExit(main())
