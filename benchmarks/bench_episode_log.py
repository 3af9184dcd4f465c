"""Per-line cost of navdtw.EpisodeLog: each line synced to the disk (``os.fsync``, as it ships)
against the same lines written without the sync (what a kill -9 alone would need), in one run.

``EpisodeLog.write`` puts each line into the file with one ``write`` (unbuffered: the line is in
the kernel's page cache when ``write`` returns, so a killed process loses nothing) and then calls
``os.fsync``, so that a power cut or a crash of the machine loses at most the line being written
too. The sync waits for the disk; this measures what it costs beside an episode.

Rows, each a fresh log in a temporary folder (``--dir``: on the file system to measure; the
default is the system's temporary folder), ``--lines`` episodes per row, best of ``--repeat``:

* ``write + fsync``: ``EpisodeLog.write`` as it ships.
* ``write only``: the same calls with ``os.fsync`` replaced by a no-op for the run.

Lines: habitat's ``info`` of a VLN episode (11 scalar metrics), without a path and with a
100-point path (``path=``, the trajectory measure's positions: ~5 KB a line). Printed: wall-clock
microseconds per line (the sync is waiting, not CPU) and the ratio.

Usage: python benchmarks/bench_episode_log.py [--lines 2000] [--repeat 3] [--dir DIR]
       python benchmarks/bench_episode_log.py --tiny    # a few lines: checks the script runs (CI)
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

INFO = {
    "distance_to_goal": 2.5,
    "success": 1.0,
    "spl": 0.71,
    "ndtw": 0.64,
    "sdtw": 0.64,
    "path_length": 9.8,
    "oracle_success": 1.0,
    "oracle_navigation_error": 1.2,
    "steps_taken": 61.0,
    "collisions.count": 3.0,
    "ndtw_reward": 0.0,
}


def run(folder: Path, lines: int, path, sync: bool) -> float:
    """Wall-clock seconds of ``lines`` writes into a fresh log in ``folder``."""
    from navdtw import EpisodeLog

    real = os.fsync
    if not sync:
        os.fsync = lambda fd: None  # the same code path, without the wait for the disk
    try:
        with EpisodeLog(folder, rank=0, world_size=1) as log:
            t0 = time.perf_counter()
            for k in range(lines):
                log.write(f"ep{k}", INFO, path=path)
            return time.perf_counter() - t0
    finally:
        os.fsync = real


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tiny", action="store_true", help="a few lines (checks the script runs)")
    ap.add_argument("--lines", type=int, default=2000, help="episodes per row (default 2000)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per row, the best kept (default 3)")
    ap.add_argument("--dir", help="where the logs are written (default: the system's temporary folder)")
    args = ap.parse_args(argv)
    lines, repeat = (20, 1) if args.tiny else (args.lines, args.repeat)
    trajectory = np.cumsum(np.random.default_rng(0).normal(0, 0.25, (100, 3)), axis=0).round(4).tolist()
    print(f"{lines} lines per row, best of {repeat}; folder: {args.dir or tempfile.gettempdir()}")
    print()
    print("| line | write + fsync (us) | write only (us) | x |")
    print("|---|---:|---:|---:|")
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        k = 0
        for label, path in (("11 metrics", None), ("11 metrics + 100-point path", trajectory)):
            us = {}
            for sync in (True, False):
                best = []
                for _ in range(repeat):
                    k += 1
                    best.append(run(Path(tmp) / f"log{k}", lines, path, sync))
                us[sync] = min(best) / lines * 1e6
            print(f"| {label} | {us[True]:.0f} | {us[False]:.1f} | {us[True] / us[False]:.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
