#!/usr/bin/env python
"""Wall and CPU time of navdtw's REVERIE data set on the real val-unseen split, next to issue 13's targets.

(a) Loading the box file (``load_objects`` of ``BBox_val_scans.json.gz``, 6,983 viewpoints):
    target under 1 s.
(b) Opening the benchmark (split, the graphs of its 10 scans with their distance matrices, the
    boxes, the goal table), for information.
(c) Matching the 3,521 instructions with ground-truth-path predictions (``bench.match``), for
    information; and scoring them with every metric (``bench.evaluate``: sr, osr, spl, rgs, rgspl,
    ndtw, sdtw, cls, ... under ``reverie``): target "well under 50 ms" after loading.
(d) The continuous kinds (rxr-ce, positions) on R2R-CE val unseen, and their random baseline,
    for information (``continuous``).

Best and median of ``--repeat`` runs; CPU time beside wall time (the machine is shared). Never
fails on a missed target. Without the data (../shared/data beside the repository, or $NAVDTW_DATA)
it says so and exits 0.

    python benchmarks/bench_datasets.py --repeat 9
    python benchmarks/bench_datasets.py --tiny        # one run of each step: checks the script runs (CI)
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def find_data_dir():
    env = os.environ.get("NAVDTW_DATA")
    path = Path(env) if env else REPO.parent / "shared" / "data"
    return path if path.is_dir() else None


def timed(fn, repeat: int):
    walls, cpus, out = [], [], None
    for _ in range(repeat):
        w, c = time.perf_counter(), time.process_time()
        out = fn()
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
    return out, walls, cpus


def report(label: str, walls, cpus, target: float | None = None) -> None:
    best, med = min(walls), statistics.median(walls)
    line = f"{label:<44} wall best {best * 1e3:8.1f} ms  median {med * 1e3:8.1f} ms  cpu best {min(cpus) * 1e3:8.1f} ms"
    if target is not None:
        line += f"   target < {target * 1e3:.0f} ms: {'PASS' if best < target else 'MISS'}"
    print(line)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=5, help="timed runs of each step (default 5)")
    ap.add_argument("--workers", type=int, default=-1, help="threads (-1 = all cores)")
    ap.add_argument("--tiny", action="store_true", help="one run of each step: checks the script runs (CI)")
    args = ap.parse_args(argv)
    if args.tiny:
        args.repeat = 1

    data = find_data_dir()
    if data is None:
        print("bench_datasets: real VLN data not found (set NAVDTW_DATA or put it at ../shared/data); skipped")
        return 0
    folder = data / "reverie"
    conn = data / "matterport3dsimulator" / "connectivity"
    boxes, split = folder / "BBox_val_scans.json.gz", folder / "REVERIE_val_unseen.json"
    for f in (conn, boxes, split):
        if not f.exists():
            print(f"bench_datasets: {f} missing; skipped")
            return 0

    import json

    import navdtw
    from navdtw.datasets import reverie

    _, w, c = timed(lambda: reverie.load_objects(boxes), args.repeat)
    report("load_objects (BBox_val_scans.json.gz)", w, c, target=1.0)
    bench, w, c = timed(lambda: navdtw.datasets.open("reverie", split=split, connectivity=conn, objects=boxes), 1)
    report("open reverie val unseen (split, graphs, boxes)", w, c)
    raw = json.loads(split.read_text())
    preds = [
        {"instr_id": f"{e['id']}_{k}", "trajectory": [[vp, 0.0, 0.0] for vp in e["path"]], "predObjId": e["objId"]}
        for e in raw
        for k in range(len(e["instructions"]))
    ]
    matched, w, c = timed(lambda: bench.match(preds), args.repeat)
    report(f"match {len(matched)} instructions", w, c)
    scores, w, c = timed(lambda: bench.evaluate(matched, workers=args.workers), args.repeat)
    report(f"evaluate {len(matched)} instructions, {len(scores.keys())} metrics", w, c, target=0.05)
    summary = scores.summary()
    print("  " + ", ".join(f"{k} {v:.6f}" for k, v in summary.items()))
    continuous(data, args)
    return 0


def continuous(data: Path, args) -> None:
    """(d) The continuous kinds on R2R-CE val unseen (1,839 episodes): ``rxr-ce`` (the RxR-CE layout
    written from it, languages in turn) and ``positions`` (its ground truth as records), each
    opened, matched with a shifted copy of the ground truth and scored; and the continuous random
    baseline (``score_random_positions``: 100,000 walks, ``--tiny`` 4,096), for information."""
    import gzip
    import json
    import tempfile

    import numpy as np

    base = data / "r2r_vlnce" / "R2R_VLNCE_v1-3_preprocessed" / "val_unseen"
    if not base.is_dir():
        print(f"bench_datasets: {base} missing; the continuous part is skipped")
        return
    episodes = json.loads(gzip.decompress((base / "val_unseen.json.gz").read_bytes()))["episodes"]
    gt = json.loads(gzip.decompress((base / "val_unseen_gt.json.gz").read_bytes()))
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        langs = ("en-US", "en-IN", "hi-IN", "te-IN")
        for k, e in enumerate(episodes):
            e["episode_id"] = str(e["episode_id"])
            e["instruction"] = {"instruction_id": str(k), "language": langs[k % 4]}
        (tmp / "guide.json.gz").write_bytes(gzip.compress(json.dumps({"episodes": episodes}).encode()))
        (tmp / "guide_gt.json.gz").write_bytes(gzip.compress(json.dumps(gt).encode()))
        shifted = {e["episode_id"]: (np.array(gt[e["episode_id"]]["locations"]) + 0.5).tolist() for e in episodes}
        with open(tmp / "preds.jsonl", "w") as f:
            for k, e in enumerate(episodes):
                f.write(json.dumps({"instruction_id": k, "path": shifted[e["episode_id"]]}) + "\n")
        with open(tmp / "refs.jsonl", "w") as f:
            for e in episodes:
                ref = {"episode_id": e["episode_id"], "path": gt[e["episode_id"]]["locations"]}
                f.write(json.dumps({**ref, "geodesic_distance": e["info"]["geodesic_distance"]}) + "\n")
        with open(tmp / "shifted.jsonl", "w") as f:
            f.writelines(json.dumps({"episode_id": k, "path": p}) + "\n" for k, p in shifted.items())
        walks = 4096 if args.tiny else 100_000
        kinds = {
            "rxr-ce": ({"rxrce_episodes": tmp / "guide.json.gz", "rxrce_gt": tmp / "guide_gt.json.gz"}, "preds.jsonl"),
            "positions": ({"references": tmp / "refs.jsonl"}, "shifted.jsonl"),
        }
        for kind, (files, preds) in kinds.items():
            measure_kind(kind, files, tmp / preds, walks, args)


def measure_kind(kind: str, files: dict, preds: Path, walks: int, args) -> None:
    """Open, match, evaluate and the random baseline of one continuous kind."""
    import navdtw

    bench, w, c = timed(lambda: navdtw.datasets.open(kind, **files), args.repeat)
    report(f"open {kind} ({bench.n} episodes)", w, c)
    matched, w, c = timed(lambda: bench.match(preds), args.repeat)
    report(f"match {kind}", w, c)
    scores, w, c = timed(lambda: bench.evaluate(matched, workers=args.workers), args.repeat)
    report(f"evaluate {kind} ({scores.convention.name}), {len(scores.keys())} metrics", w, c)
    means, w, c = timed(lambda: bench.baseline(walks, progress=False, workers=args.workers), 1)
    report(f"random baseline {kind}, {walks} walks", w, c)
    print(f"  sr {means['sr']:.4f}, spl {means['spl']:.4f}, ndtw {means['ndtw']:.4f}")


if __name__ == "__main__":
    raise SystemExit(main())
