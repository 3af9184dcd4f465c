#!/usr/bin/env python
"""Reading large results tables: wall time, CPU time and peak memory of ``load_results`` per format.

A VLN-CE-style table of ``--rows`` episodes (default 1,000,000) is generated once (seed 0):
``episode_id`` (int), ``scene_id`` (text), ``instruction`` (text, ~60 characters), ``success``,
``spl`` (NaN where success is 0, as habitat writes it), ``os``, ``ne`` (2% ``Infinity``: an
unreachable goal), ``ndtw``, ``path_length``, ``steps`` (int). It is written as JSON Lines, a JSON
object keyed by episode id, CSV and Parquet (with pyarrow) into a temporary folder. Each format is
then read by ``navdtw.datasets.load_results`` in a fresh Python process, ``--repeat`` times (best
kept): wall and CPU seconds of the call, rows per second, and the peak memory the call added
(``VmHWM`` after the call minus ``VmRSS`` before it, the peak counter reset through
``/proc/self/clear_refs``; tracemalloc would miss memory held outside Python's allocator).

Printed, never asserted (no target in the issue: the figures go to benchmarks/README.md). The
machine is shared: compare the formats of one run.

    python benchmarks/bench_results.py                  # 1,000,000 rows, about 1-2 minutes
    python benchmarks/bench_results.py --rows 100000 --repeat 3
    python benchmarks/bench_results.py --tiny           # 1,000 rows, 1 run: checks the script runs (CI)
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

CHILD = r"""
import json, sys, time
from pathlib import Path

def status(key):
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) / 1024.0  # MB
    return float("nan")

from navdtw.datasets import load_results
try:  # imported before timing: start-up, not reading
    import pyarrow.parquet
except ImportError:
    pass
try:
    Path("/proc/self/clear_refs").write_text("5")  # reset VmHWM to the current RSS
except OSError:
    pass
before = status("VmRSS")
w, c = time.perf_counter(), time.process_time()
table = load_results(sys.argv[1])
wall, cpu = time.perf_counter() - w, time.process_time() - c
print(json.dumps({"wall": wall, "cpu": cpu, "peak_mb": status("VmHWM") - before, "rows": len(table),
                  "columns": list(table.values)}))
"""


def generate(n: int, seed: int = 0) -> dict[str, np.ndarray | list]:
    rng = np.random.default_rng(seed)
    success = (rng.random(n) < 0.45).astype(np.float64)
    spl = np.where(success > 0, rng.uniform(0.3, 1.0, n), np.nan)
    ne = np.where(rng.random(n) < 0.02, np.inf, rng.gamma(2.0, 2.5, n))
    scenes = [f"mp3d/scan{k:02d}/scan{k:02d}.glb" for k in range(60)]
    words = ["walk", "past", "the", "sofa", "turn", "left", "at", "kitchen", "stop", "by", "door"]
    sentences = [" ".join(rng.choice(words, 12)) for _ in range(500)]
    return {
        "episode_id": np.arange(n),
        "scene_id": [scenes[k] for k in rng.integers(0, 60, n)],
        "instruction": [sentences[k] for k in rng.integers(0, 500, n)],
        "success": success,
        "spl": spl,
        "os": np.maximum(success, (rng.random(n) < 0.2).astype(np.float64)),
        "ne": ne,
        "ndtw": rng.uniform(0.0, 1.0, n),
        "path_length": rng.gamma(4.0, 2.5, n),
        "steps": rng.integers(5, 500, n),
    }


def _rows(cols: dict) -> list[dict]:
    keys = list(cols)
    lists = [c.tolist() if isinstance(c, np.ndarray) else c for c in cols.values()]
    return [dict(zip(keys, values)) for values in zip(*lists)]


def write_all(cols: dict, folder: Path) -> dict[str, Path]:
    rows = _rows(cols)
    out = {}
    out["jsonl"] = folder / "results.jsonl"
    with open(out["jsonl"], "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")  # NaN and Infinity as Python's json writes them
    out["json keyed"] = folder / "stats_episodes.json"
    with open(out["json keyed"], "w") as f:
        json.dump({str(r.pop("episode_id")): r for r in rows}, f)
    out["csv"] = folder / "results.csv"
    with open(out["csv"], "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(list(cols))
        lists = [c.tolist() if isinstance(c, np.ndarray) else c for c in cols.values()]
        w.writerows(zip(*lists))
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        print("note: pyarrow not installed: the Parquet row is skipped")
    else:
        out["parquet"] = folder / "results.parquet"
        pq.write_table(pa.table({k: pa.array(v) for k, v in cols.items()}), out["parquet"])
    return out


def measure(path: Path, repeat: int) -> dict:
    best = None
    for _ in range(repeat):
        proc = subprocess.run([sys.executable, "-c", CHILD, str(path)], capture_output=True, text=True, check=True)
        res = json.loads(proc.stdout.strip().splitlines()[-1])
        if best is None or res["wall"] < best["wall"]:
            best = res
    assert best is not None
    return best


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=1_000_000, help="episodes in the table (default 1000000)")
    ap.add_argument("--repeat", type=int, default=1, help="reads of each format, best kept (default 1)")
    ap.add_argument("--tiny", action="store_true", help="1,000 rows, 1 run: checks the script runs (CI)")
    args = ap.parse_args(argv)
    if args.tiny:
        args.rows, args.repeat = 1000, 1
    with tempfile.TemporaryDirectory(prefix="navdtw_bench_results_") as tmp:
        cols = generate(args.rows)
        files = write_all(cols, Path(tmp))
        print(f"load_results on {args.rows:,} rows x {len(cols)} columns (best of {args.repeat}, fresh process each)")
        print(f"{'format':<12} {'file MB':>8} {'wall s':>8} {'cpu s':>8} {'rows/s':>12} {'peak+MB':>9}")
        for fmt, path in files.items():
            res = measure(path, args.repeat)
            assert res["rows"] == args.rows, res
            size = os.path.getsize(path) / 2**20
            rate = res["rows"] / res["wall"] if res["wall"] > 0 else float("inf")
            print(f"{fmt:<12} {size:8.1f} {res['wall']:8.2f} {res['cpu']:8.2f} {rate:12,.0f} {res['peak_mb']:9.0f}")
        print(f"metric columns read: {', '.join(res['columns'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
