#!/usr/bin/env python
"""Memory and time of a suite's statistics with many agents (issue 26): 80 agents x 3 data sets x
10 metrics at 10,000 resamples.

Each data set is the one ``stats.analyze`` call ``navdtw.suite`` makes (``suite/analysis.py``):
every column's interval; per metric all pairs of agents (paired interval, permutation and sign
tests, probability of improvement); and per metric the comparisons with the best (the marks).
Sizes of the real splits (R2R val seen / val unseen, REVERIE val unseen; instructions three to a
path, resampled by path); the values are simulated (the cost does not depend on them, except the
few p-values near alpha that the comparisons with the best resolve with more resamples).

Each configuration runs in a fresh process, which prints its peak resident memory
(``resource.getrusage``: ``ru_maxrss``) and its wall and CPU time. Printed, never asserted.

    PYTHONPATH=python python benchmarks/bench_marks.py                    # 80 agents, 1 run
    python benchmarks/bench_marks.py --agents 40 80 --runs 1 3            # the grid
    python benchmarks/bench_marks.py --stats OLD/stats.py --agents 20 40  # a single-file stats.py (before issue 32)
    python benchmarks/bench_marks.py --tiny                               # checks the script runs (CI)
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import json
import os
import platform
import resource
import subprocess
import sys
import time

import numpy as np

DATASETS = [("r2r_val_seen", 1021, 3), ("r2r_val_unseen", 2349, 3), ("reverie_val_unseen", 3521, 3)]
METRICS = 10


def load_stats(path: str | None):
    """navdtw.stats, or the stats.py at ``path`` (its package's other modules from navdtw)."""
    if path is None:
        from navdtw import stats

        return stats
    spec = importlib.util.spec_from_file_location("navdtw._bench_stats", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def simulate(n: int, agents: int, runs: int, rng: np.random.Generator) -> np.ndarray:
    """[n, agents * METRICS * runs]: odd metrics 0/1, even ones continuous; agent a is 0.01 a
    better on a latent scale (many close agents, as on a real leaderboard)."""
    skill = rng.normal(size=(n, 1))
    cols = []
    for a in range(agents):
        for m in range(METRICS):
            for _ in range(runs):
                z = skill + 0.01 * a + rng.normal(size=(n, 1))
                cols.append((z > 0).astype(float) if m % 2 else 1.0 / (1.0 + np.exp(-z)))
    return np.hstack(cols)


def one(args: argparse.Namespace) -> dict:
    """One configuration, in this process: seconds and peak memory."""
    stats = load_stats(args.stats)
    rng = np.random.default_rng(0)
    agents, runs = args.agents[0], args.runs[0]
    wall = cpu = 0.0
    for _, n, per in DATASETS[: args.datasets]:
        x = simulate(n, agents, runs, rng)
        clusters = np.arange(n) // per
        k = agents * METRICS
        if runs == 1:
            matrix, extra = x, {}
        else:  # one column per run; the agents' figures are the means over runs
            matrix = x.reshape(n, k, runs).mean(axis=2)
            extra = {"runs": (x, [list(range(c * runs, (c + 1) * runs)) for c in range(k)])}
        pairs = [
            (a * METRICS + m, b * METRICS + m)
            for m in range(METRICS)
            for a, b in itertools.combinations(range(agents), 2)
        ]
        if hasattr(stats, "compare_with_best"):
            base = 0 if runs == 1 else k
            extra["best"] = [([base + a * METRICS + m for a in range(agents)], True) for m in range(METRICS)]
        t, c = time.perf_counter(), time.process_time()
        stats.analyze(matrix, pairs, resamples=args.resamples, seed=0, clusters=clusters, improvement=True, **extra)
        wall += time.perf_counter() - t
        cpu += time.process_time() - c
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # KiB on Linux
    return {"agents": agents, "runs": runs, "wall": wall, "cpu": cpu, "peak_mib": peak}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--agents", type=int, nargs="+", default=[80])
    ap.add_argument("--runs", type=int, nargs="+", default=[1])
    ap.add_argument("--datasets", type=int, default=3, help="how many of the 3 data sets (default 3)")
    ap.add_argument("--resamples", type=int, default=10_000)
    ap.add_argument("--stats", metavar="FILE", help="a single-file stats.py (before issue 32) to measure")
    ap.add_argument("--tiny", action="store_true", help="4 agents, 1 data set, 50 resamples: checks the script runs")
    ap.add_argument("--one", action="store_true", help=argparse.SUPPRESS)  # a child: one configuration
    args = ap.parse_args(argv)
    if args.tiny:
        args.agents, args.runs, args.datasets, args.resamples = [4], [1, 3], 1, 50
    if args.one:
        print(json.dumps(one(args)))
        return 0
    print(f"navdtw stats: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, numpy {np.__version__}")
    print(f"{args.datasets} data sets x {METRICS} metrics, {args.resamples} resamples, every pair, marks per metric")
    print(f"{'agents':>6} {'runs':>4} {'pairs':>7} {'wall s':>8} {'CPU s':>8} {'peak MiB':>9}")
    for agents, runs in itertools.product(args.agents, args.runs):
        cmd = [sys.executable, __file__, "--one", "--agents", str(agents), "--runs", str(runs)]
        cmd += ["--datasets", str(args.datasets), "--resamples", str(args.resamples)]
        cmd += ["--stats", args.stats] if args.stats else []
        got = subprocess.run(cmd, capture_output=True, text=True)
        if got.returncode:
            print(f"{agents:>6} {runs:>4}: failed ({got.stderr.strip().splitlines()[-1:]})")
            continue
        r = json.loads(got.stdout.strip().splitlines()[-1])
        pairs = args.datasets * METRICS * agents * (agents - 1) // 2
        print(f"{agents:>6} {runs:>4} {pairs:>7} {r['wall']:>8.1f} {r['cpu']:>8.1f} {r['peak_mib']:>9.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
