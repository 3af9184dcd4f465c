#!/usr/bin/env python
"""navdtw on Dask versus one process: every metric of 2M coordinate pairs read from Parquet.

Data (deterministic, ``numpy.random.default_rng(5)``): 2,000,000 pairs of 3-D float32 random
walks (0.5 m Gaussian steps), |R| 5-20 and |Q| 5-30 points, written with
``navdtw.distributed.write_parquet_batch`` as 16 Parquet files (one row group each, unless
``--row-groups``) of ``list<fixed_size_list<float32, 3>>`` columns plus ``episode_id`` in a temp
folder (``--data-dir`` keeps them).

Measurements (all metrics, ``convention="paper"``):

* ``serial-w1``: one process, every file read with ``pyarrow.parquet`` and scored with
  ``score_arrow(workers=1)``; read time and score time are reported apart.
* ``serial-wall``: the same with ``workers=-1`` (all cores, threads inside the C++ kernels).
* ``dask-summary``: ``score_parquet(folder, client, summary=True)`` on a ``LocalCluster`` of
  2 worker processes x 1 thread (one task per file; only the means come back).
* ``dask-collect``: ``score_parquet(folder, client).compute()``: every per-pair row is sent back
  to the client (13 float64 columns + ids), which costs serialisation.

From the Dask task stream it derives the per-worker rate (pairs / busy seconds of the tasks) and,
from 400 no-op tasks, the scheduling overhead per task; the projection for N workers is
``P / (ceil(T / N) * (P / T / rate + overhead))`` for these T tasks of P pairs in all, and
``N * rate * task / (task + overhead)`` for tasks split finely enough. Caveats are printed with it.

    python benchmarks/bench_distributed.py               # 2M pairs, 16 files (~2-3 min on 2 cores)
    python benchmarks/bench_distributed.py --quick       # 100k pairs smoke run
    python benchmarks/bench_distributed.py --tiny        # 2,000 pairs, 1 worker: checks the script runs (CI)
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def make_data(folder: Path, pairs: int, files: int, row_groups: int, seed: int = 5) -> float:
    from navdtw import Paths
    from navdtw.distributed import write_parquet_batch

    rng = np.random.default_rng(seed)
    t0 = time.perf_counter()
    edges = np.linspace(0, pairs, files + 1).astype(np.int64)
    for k in range(files):
        n = int(edges[k + 1] - edges[k])

        def walks(lo, hi, n=n):
            lengths = rng.integers(lo, hi + 1, size=n)
            off = np.zeros(n + 1, dtype=np.int64)
            np.cumsum(lengths, out=off[1:])
            steps = rng.normal(scale=0.5, size=(off[-1], 3)).astype(np.float32)
            pts = np.cumsum(steps, axis=0, dtype=np.float32)
            pts -= np.repeat(pts[off[:-1]], lengths, axis=0)  # every walk starts at the origin
            return Paths(pts, off)

        refs, qrys = walks(5, 20), walks(5, 30)
        ids = np.arange(edges[k], edges[k + 1], dtype=np.int64)
        rg = max(1, math.ceil(n / row_groups))
        write_parquet_batch(folder / f"part-{k:03d}.parquet", refs, qrys, ids=ids, row_group_size=rg)
    return time.perf_counter() - t0


def serial(files, workers: int):
    import pyarrow.parquet as pq

    from navdtw.distributed import score_arrow

    read = score = 0.0
    n = 0
    for f in files:
        t0 = time.perf_counter()
        table = pq.read_table(f)
        t1 = time.perf_counter()
        out = score_arrow(table, workers=workers)
        t2 = time.perf_counter()
        read += t1 - t0
        score += t2 - t1
        n += out.num_rows
    return n, read, score


def noop(x):
    return x


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=2_000_000)
    ap.add_argument("--files", type=int, default=16)
    ap.add_argument("--row-groups", type=int, default=1, help="row groups per file")
    ap.add_argument("--workers", type=int, default=2, help="Dask worker processes (1 thread each)")
    ap.add_argument("--quick", action="store_true", help="100k pairs")
    ap.add_argument("--tiny", action="store_true", help="2,000 pairs in 2 files, 1 worker: checks the script runs (CI)")
    ap.add_argument("--data-dir", help="keep the Parquet files here (reused when present)")
    ap.add_argument("--json", help="write the figures to this file")
    args = ap.parse_args(argv)
    if args.quick:
        args.pairs = 100_000
    if args.tiny:
        args.pairs, args.files, args.workers = 2_000, 2, 1
    noop_tasks = 20 if args.tiny else 400

    try:
        import pyarrow  # noqa: F401
        from dask.distributed import Client, LocalCluster
    except ImportError:
        print('bench_distributed: needs the [dask] extra (pip install "navdtw[dask]"); skipped')
        return 0

    from navdtw.distributed import score_parquet

    tmp = None
    if args.data_dir:
        folder = Path(args.data_dir)
        folder.mkdir(parents=True, exist_ok=True)
    else:
        tmp = tempfile.mkdtemp(prefix="navdtw-bench-dist-")
        folder = Path(tmp)
    results = {"pairs": args.pairs, "files": args.files, "row_groups": args.row_groups, "cores": os.cpu_count()}
    try:
        files = sorted(str(p) for p in folder.glob("part-*.parquet"))
        if len(files) != args.files:
            for p in files:
                os.remove(p)
            gen = make_data(folder, args.pairs, args.files, args.row_groups)
            files = sorted(str(p) for p in folder.glob("part-*.parquet"))
            print(
                f"data: {args.pairs:,} pairs in {args.files} files written in {gen:.1f} s "
                f"({sum(os.path.getsize(f) for f in files) / 2**20:.0f} MiB) at {folder}"
            )
        rows = []

        def row(name, n, seconds, note=""):
            rate = n / seconds
            rows.append((name, n, seconds, rate, note))
            results[name] = {"pairs": n, "seconds": seconds, "pairs_per_s": rate, "note": note}
            print(f"  {name:<16} {n:>10,} pairs {seconds:8.2f} s {rate:14,.0f} pairs/s  {note}", flush=True)

        print("\nserial (one process, score_arrow per file):")
        serial(files[:1], 1)  # warm the page cache and imports
        n, rd, sc = serial(files, 1)
        row("serial-w1", n, rd + sc, f"read {rd:.2f} s + score {sc:.2f} s; score only {n / sc:,.0f} pairs/s")
        n, rd, sc = serial(files, -1)
        row("serial-wall", n, rd + sc, f"workers=-1 ({os.cpu_count()} cores); read {rd:.2f} s + score {sc:.2f} s")

        print(f"\nDask LocalCluster ({args.workers} worker processes x 1 thread):")
        with (
            LocalCluster(
                n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=40
            ) as cluster,
            Client(cluster) as client,
        ):
            # warm-up: imports navdtw / pyarrow / pandas on every worker
            client.run(lambda: __import__("navdtw.distributed") and __import__("pyarrow.parquet") and None)
            score_parquet(files[: args.workers], client=client, summary=True, metrics=["ndtw"])

            from distributed import get_task_stream

            with get_task_stream(client) as ts:
                t0 = time.perf_counter()
                means = score_parquet(files, client=client, summary=True)
                wall = time.perf_counter() - t0
            row("dask-summary", args.pairs, wall, f"mean ndtw {means['ndtw']:.4f}")
            busy = sum(
                sum(s["stop"] - s["start"] for s in t["startstops"] if s["action"] == "compute")
                for t in ts.data
                if str(t["key"]).find("navdtw-score") >= 0
            )
            per_worker = args.pairs / busy if busy > 0 else float("nan")

            t0 = time.perf_counter()
            df = score_parquet(files, client=client).compute()
            wall = time.perf_counter() - t0
            row("dask-collect", len(df), wall, "all per-pair rows back to the client")
            del df

            ntask = noop_tasks
            t0 = time.perf_counter()
            client.gather(client.map(noop, range(ntask), pure=False))
            overhead = (time.perf_counter() - t0) * args.workers / ntask

        tasks = len(files)
        results["per_worker_pairs_per_s"] = per_worker
        results["overhead_s_per_task"] = overhead
        print(
            f"\nper-worker rate (task-stream busy time): {per_worker:,.0f} pairs/s; "
            f"scheduling overhead: {overhead * 1e3:.2f} ms/task (no-op tasks, {args.workers} workers)"
        )
        task_s = args.pairs / tasks / per_worker
        eff = task_s / (task_s + overhead)
        print(
            f"projection, N workers x 1 core: (a) these T = {tasks} tasks: "
            "P / (ceil(T / N) * (P / T / rate + overhead)); "
            f"(b) tasks split finely enough to keep N workers busy: N * rate * {eff:.3f} "
            f"(task time {task_s:.2f} s / (task time + overhead))"
        )
        proj = {}
        for nw in (1, 2, 4, 8, 16, 32, 64):
            a = args.pairs / (math.ceil(tasks / nw) * (task_s + overhead))
            b = nw * per_worker * eff
            proj[nw] = {"these_tasks": a, "fine_tasks": b}
            extra = "  (more workers than tasks: idle in (a))" if nw > tasks else ""
            print(f"  N = {nw:>3}: (a) {a:14,.0f} pairs/s   (b) {b:14,.0f} pairs/s{extra}")
        results["projection"] = proj
        print(
            "caveats: the projection assumes one core per worker and no shared bottleneck. It leaves out "
            "Parquet reads from shared storage, the client collecting per-pair rows (dask-collect), "
            "stragglers, and the wait for the last task (T tasks on N workers: ceil(T/N) rounds); "
            "more files / split_row_groups give finer tasks. On this 2-core machine the scheduler, the client and "
            "2 workers share the cores, so the 2-worker figure is a lower bound."
        )
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
