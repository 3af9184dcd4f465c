#!/usr/bin/env python
"""A look of ``navdtw watch`` after one new episode: reading what was appended or added
(incremental, the default) against reading the run whole at every change
(``Follower(incremental=False)``, how watch read before issue 36), per layout that grows.

A run of ``--episodes`` episodes (default 11,000: RxR-CE's val split) is written first, in the
random order of an order of ``--episodes + --looks`` units (seed 0), in each layout:

* ``jsonl``: one JSON Lines file appended per episode (VLN-CE-style rows; InternNav's
  progress.json, StreamVLN's result.json);
* ``shards``: four per-rank JSON Lines files ``stats_r{rank}_w4.jsonl`` (one rank's file named;
  episodes dealt round-robin), each appended to;
* ``folder``: a folder of one file per episode, NaVid's ``log/stats_{id}.json`` (``indent=4``);
* ``positions``: trajectories appended as JSON Lines (``{"episode_id", "path"}``), scored as they
  come by the kind ``positions`` against a references file of the order's episodes.

Each run is followed by two watches (``--width 0.001``: never decided), one per way of reading,
after a first look that reads everything. Then ``--looks`` times: one episode is appended (or its
file written), and each watch looks once (``Watch.poll``), the two in alternating order; the CPU
time and wall time of each look are recorded. Printed: the median per look of each, the ratio of
the whole read to the incremental one (same run, same looks, interleaved), and the goal of issue
36 (a look under 5 ms at 11,000 episodes). Both watches must end with the same state (asserted:
the benchmark also checks the equivalence). Never a timed assert; the machine is shared: compare
the two ways within a run.

    python benchmarks/bench_watch.py                    # 11,000 episodes, 15 looks a layout (~2 min)
    python benchmarks/bench_watch.py --episodes 2000 --looks 30
    python benchmarks/bench_watch.py --tiny             # 300 episodes, 3 looks: checks the script runs (CI)
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from navdtw.order import Order
from navdtw.watch import Follower, Watch


def record(i: str, rng: np.random.Generator, layout: str = "") -> dict:
    if layout == "positions":  # a path of 8 points near the reference's line
        x = np.linspace(0.0, 8.0 + rng.normal(0.0, 2.0), 8)
        return {"episode_id": i, "path": np.column_stack([x, rng.normal(0.0, 0.3, 8)]).round(3).tolist()}
    sr = float(rng.random() < 0.55)
    return {
        "episode_id": i,
        "success": sr,
        "spl": float(rng.uniform(0.3, 1.0)) if sr else math.nan,
        "oracle_success": max(sr, float(rng.random() < 0.2)),
        "distance_to_goal": float(rng.gamma(2.0, 2.5)),
        "ndtw": float(rng.random()),
        "path_length": float(rng.gamma(4.0, 2.5)),
        "steps_taken": int(rng.integers(5, 500)),
    }


class Writer:
    """Writes a run's episodes in one layout."""

    def __init__(self, root: Path, layout: str) -> None:
        self.layout, self.k = layout, 0
        if layout in ("jsonl", "positions"):
            self.files = [root / "results.jsonl"]
            self.source = self.files[0]
        elif layout == "shards":
            self.files = [root / f"stats_r{r}_w4.jsonl" for r in range(4)]
            self.source = self.files[0]
        else:
            self.source = root / "log"
            self.source.mkdir()
        if layout != "folder":
            for f in self.files:
                f.write_bytes(b"")

    def write(self, records: list[dict]) -> None:
        if self.layout == "folder":
            for rec in records:
                rec = dict(rec)
                i = rec.pop("episode_id")
                (self.source / f"stats_{i}.json").write_text(json.dumps({"id": i, **rec}, indent=4))
            return
        by_file: dict[Path, list[str]] = {}
        for rec in records:
            f = self.files[self.k % len(self.files)]
            self.k += 1
            by_file.setdefault(f, []).append(json.dumps(rec) + "\n")
        for f, lines in by_file.items():
            with open(f, "a") as out:
                out.write("".join(lines))


def one_layout(layout: str, episodes: int, looks: int) -> dict:
    rng = np.random.default_rng(0)
    n = episodes + looks
    ids = [str(i) for i in rng.permutation(n)]
    order = Order(tuple((i,) for i in ids), seed=0, source="order.json")
    with tempfile.TemporaryDirectory(prefix="navdtw_bench_watch_") as tmp:
        writer = Writer(Path(tmp), layout)
        writer.write([record(i, rng, layout) for i in ids[:episodes]])
        bench = None
        if layout == "positions":
            import navdtw.datasets as ds

            refs = Path(tmp) / "references.json"
            refs.write_text(json.dumps([{"episode_id": i, "path": [[0.0, 0.0], [8.0, 0.0]]} for i in ids]))
            bench = ds.open("positions", references=refs)
        watches = {}
        for way, incremental in (("incremental", True), ("whole", False)):
            follower = Follower(writer.source, name="run", incremental=incremental, bench=bench)
            watches[way] = Watch(order, {"run": follower}, metrics=["sr", "spl"], width=0.001)
            watches[way].poll()  # the first look reads everything
        cpu: dict[str, list[float]] = {w: [] for w in watches}
        wall: dict[str, list[float]] = {w: [] for w in watches}
        for j in range(looks):
            writer.write([record(ids[episodes + j], rng, layout)])
            ways = list(watches) if j % 2 == 0 else list(watches)[::-1]
            for way in ways:
                c, w = time.process_time(), time.perf_counter()
                watches[way].poll()
                cpu[way].append(time.process_time() - c)
                wall[way].append(time.perf_counter() - w)
        states = [watches[w].state() for w in watches]
        assert states[0] == states[1], "the two ways of reading disagree"
        assert states[0]["runs"]["run"]["in_order"] == n
        for w in watches.values():
            for run in w.runs.values():
                run.follower.close()
    return {w: (statistics.median(cpu[w]), statistics.median(wall[w])) for w in cpu}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--episodes", type=int, default=11_000, help="episodes written before the looks (11000)")
    ap.add_argument("--looks", type=int, default=15, help="looks measured per layout, one episode each (15)")
    ap.add_argument(
        "--layouts",
        default="jsonl,shards,folder,positions",
        help="the layouts measured (jsonl,shards,folder,positions)",
    )
    ap.add_argument("--tiny", action="store_true", help="300 episodes, 3 looks: checks the script runs (CI)")
    args = ap.parse_args(argv)
    if args.tiny:
        args.episodes, args.looks = 300, 3
    print(
        f"a look of navdtw watch after one new episode, {args.episodes:,} episodes read before "
        f"(median of {args.looks} looks; CPU and wall ms per look)"
    )
    print(f"{'layout':<10} {'incr cpu':>9} {'incr wall':>10} {'whole cpu':>10} {'whole wall':>11} {'whole/incr':>11}")
    for layout in args.layouts.split(","):
        res = one_layout(layout, args.episodes, args.looks)
        (ic, iw), (wc, ww) = res["incremental"], res["whole"]
        ratio = wc / ic if ic > 0 else float("inf")
        print(f"{layout:<10} {1e3 * ic:9.2f} {1e3 * iw:10.2f} {1e3 * wc:10.1f} {1e3 * ww:11.1f} {ratio:10.0f}x")
    print("goal (issue 36): a look under 5 ms at 11,000 episodes, in every layout that grows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
