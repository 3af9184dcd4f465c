#!/usr/bin/env python
"""Wall time of navdtw's metric layer on real R2R data (val unseen), next to the issue's targets.

(a) Graph loading: ``load_connectivity`` of all 90 Matterport3D scans, then every all-pairs
    distance matrix. Then scoring: the 2,349 instructions of R2R val unseen with the real
    shortest-path agent's results file, every metric, ``convention="r2r"``; only ``evaluate`` is
    timed (graphs loaded, predictions matched beforehand), best and median of ``--repeat`` runs.
(b) The random baseline: ``random_baseline(split, graphs, n=1_000_000, progress=False)`` end to end
    (split reading, encoding, walks, scoring), after graph loading; seconds and the metrics (rates
    x100).

Targets are printed next to the figures ("well under a second" for scoring, "a few seconds at most"
for graph loading, "<= 1 s" for a million random trajectories); the script never fails on a missed
target. Without the data (../shared/data beside the repository, or $NAVDTW_DATA) it says so and exits 0.

    python benchmarks/bench_metrics.py                 # everything
    python benchmarks/bench_metrics.py --repeat 9 --walks 200000 --workers 2
    python benchmarks/bench_metrics.py --tiny          # 1 run, 20,000 walks: checks the script runs (CI)
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def find_data_dir():
    env = os.environ.get("NAVDTW_DATA")
    path = Path(env) if env else REPO.parent / "shared" / "data"
    return path if path.is_dir() else None


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=5, help="timed evaluate() runs (default 5)")
    ap.add_argument("--walks", type=int, default=1_000_000, help="random-baseline trajectories (default 1e6)")
    ap.add_argument("--workers", type=int, default=-1, help="threads (-1 = all cores)")
    ap.add_argument("--tiny", action="store_true", help="1 run, 20,000 walks: checks the script runs (CI)")
    args = ap.parse_args(argv)
    if args.tiny:
        args.repeat, args.walks = 1, 20_000

    data = find_data_dir()
    if data is None:
        print("bench_metrics: real VLN data not found (set NAVDTW_DATA or put it at ../shared/data); skipped")
        return 0
    conn = data / "matterport3dsimulator" / "connectivity"
    split_file = data / "r2r" / "R2R_val_unseen.json"
    results_file = data / "matterport3dsimulator" / "web" / "app" / "val_unseen_shortest_agent.json"
    for f in (conn, split_file, results_file):
        if not f.exists():
            print(f"bench_metrics: {f} missing; skipped")
            return 0

    import numpy as np

    import navdtw
    from navdtw import datasets
    from navdtw.engine import resolve_workers

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"load average (1 min) {load:.2f}: figures are wall times on a possibly shared machine")
    print(
        f"navdtw {navdtw.__version__}, Python {platform.python_version()}, numpy {np.__version__}, "
        f"{resolve_workers(-1)} cores available, workers={args.workers}"
    )

    # ---- (a) graph loading ----
    t0 = time.perf_counter()
    graphs = navdtw.load_connectivity(conn)
    t1 = time.perf_counter()
    mats = graphs.distances  # computes every all-pairs matrix
    t2 = time.perf_counter()
    nodes = sum(m.shape[0] for m in mats)
    load_s = t2 - t0
    print("\n(a) graphs and scoring, R2R val unseen")
    print(
        f"  load_connectivity, {len(graphs)} scans ({nodes} nodes):  {t1 - t0:7.3f} s parse "
        f"+ {t2 - t1:7.3f} s distances = {load_s:7.3f} s   target: a few seconds at most "
        f"(<= 3 s) [{verdict(load_s <= 3.0)}]"
    )

    split = datasets.load_r2r(split_file, graphs=graphs)
    matched = datasets.match_predictions(
        datasets.instructions(split), datasets.load_predictions(results_file), graphs, strict=True
    )

    def score():
        return navdtw.evaluate(
            matched.references,
            matched.queries,
            graphs=graphs,
            env=matched.env,
            convention="r2r",
            shortest_distance=matched.shortest_distance,
            workers=args.workers,
        )

    score()  # warm-up (first-touch of the matrices, thread pool)
    times = []
    for _ in range(max(1, args.repeat)):
        t = time.perf_counter()
        s = score()
        times.append(time.perf_counter() - t)
    best, med = min(times), statistics.median(times)
    print(
        f"  evaluate, {len(matched)} instructions x {len(s.keys())} metrics: best {best * 1e3:8.2f} ms, "
        f"median {med * 1e3:8.2f} ms over {len(times)} runs   target: well under a second "
        f"(<= 0.1 s) [{verdict(best <= 0.1)}]"
    )
    summ = s.summary()
    print(
        f"  scores: SR {summ['sr']:.4f}  SPL {summ['spl']:.6f}  NE {summ['ne']:.4f}  PL {summ['pl']:.4f} m "
        f"(R2R evaluator: 1.0, 1.0, 0.0, 9.4797)"
    )

    # ---- (b) random baseline ----
    t, c = time.perf_counter(), time.process_time()
    rb = navdtw.random_baseline(split_file, graphs, n=args.walks, progress=False, workers=args.workers)
    rb_s, rb_cpu = time.perf_counter() - t, time.process_time() - c
    print(
        f"\n(b) random baseline, {args.walks:,} trajectories end to end: {rb_s:7.3f} s "
        f"({rb_cpu:.3f} CPU s)   target: <= 1 s [{verdict(rb_s <= 1.0)}]"
    )
    rates = {k for k in rb if navdtw.registry.get(k).rate}
    shown = "  ".join(f"{k.upper()} {v * 100 if k in rates else v:.2f}" for k, v in rb.items())
    print(f"  metrics (rates x100, distances in m): {shown}")
    print("  paper (Ilharco et al. 2019, Table 2, random agent): SR 5.1, nDTW 27.9")
    return 0


if __name__ == "__main__":
    sys.exit(main())
