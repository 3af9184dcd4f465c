"""False alarms and detection of the off-by-one checks (issue 36), on the real runs of the shared
data: ``navdtw.order.off_by_one`` (watch: the ids a live run holds against the order's prefix)
and the start check of trajectories (compare, score: trajectories that start where the episode
whose id is one less starts).

    python benchmarks/bench_off_by_one.py            # ~1 minute
    python benchmarks/bench_off_by_one.py --tiny     # 2 orders of one split: that it runs

Live runs are simulated on the real splits' ids with integer ids (R2R-CE val unseen, 1,839
episodes; NDH val unseen, 907 dialogs; NDH val seen, 382): a seeded order per repetition (seed
20261129, one stream), ``workers`` workers (1, 4 or 16) going through it round-robin at random
paces (each episode's duration exponential, mean 1), the run's ids read after 10, 15, 20, 30, ...
1,280 finished episodes and the last but one: honest (ids as written: every alarm is false) and
off by one (each id plus 1: every silence is a miss). The start check runs on the four real NDH
agents' outputs matched to their splits with navdtw's ``ndh`` convention (honest: ids as written)
and with each inst_idx replaced by the next inst_idx of the split (off by one). R2R's
instruction ids are not integers: neither check judges them (0 alarms by construction, not
counted).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
from pathlib import Path

import numpy as np

SEED = 20261129
REPS = 40
#: the looks: after these many finished episodes (and the last but one)
LOOKS = (10, 15, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1280)


def data_dir() -> Path | None:
    env = os.environ.get("NAVDTW_DATA")
    for p in ([Path(env)] if env else []) + [Path(__file__).resolve().parents[1].parent / "shared" / "data"]:
        if (p / "cvdn").is_dir():
            return p
    return None


def live_run(order_ids: list[str], workers: int, rng: np.random.Generator):
    """The finish order of a run of ``workers`` going through the order round-robin, each
    episode's duration exponential (mean 1): the episode ids, in the order they finish."""
    finish = []
    for w in range(workers):
        mine = order_ids[w::workers]
        t = np.cumsum(rng.exponential(1.0, len(mine)))
        finish += list(zip(t.tolist(), mine))
    finish.sort()
    return [i for _, i in finish]


def order_checks(name: str, ids: list[str], rng: np.random.Generator, reps: int = REPS) -> dict:
    from navdtw.order import Order, off_by_one

    looks = false = missed = detected = 0
    first_found: list[int] = []
    for _ in range(reps):
        perm = rng.permutation(len(ids))
        order = Order(tuple((ids[k],) for k in perm))
        for workers in (1, 4, 16):
            done = live_run(order.ids, workers, rng)
            found_at = None
            for n in [k for k in LOOKS if k < len(done) - 1] + [len(done) - 1]:
                looks += 1
                if off_by_one(order, done[:n]) is not None:
                    false += 1
                shifted = [str(int(i) + 1) for i in done[:n]]
                if off_by_one(order, shifted) is not None:
                    detected += 1
                    found_at = n if found_at is None else found_at
                else:
                    missed += 1
            first_found.append(found_at if found_at is not None else -1)
    found = [f for f in first_found if f > 0]
    return {
        "split": name,
        "episodes": len(ids),
        "looks": looks,
        "false_alarms": false,
        "detected": detected,
        "missed": missed,
        "runs_never_flagged": sum(1 for f in first_found if f < 0),
        "first_flag_median": float(np.median(found)) if found else None,
        "first_flag_max": max(found) if found else None,
    }


def start_checks(data: Path) -> list[dict]:
    import navdtw

    out = []
    res = data / "cvdn" / "results"
    for f in sorted(res.glob("*.json")):
        split = "val_seen" if "val_seen" in f.name else "val_unseen"
        bench = navdtw.datasets.open(
            "ndh",
            split=data / "cvdn" / f"NDH_{split}.json",
            connectivity=data / "matterport3dsimulator" / "connectivity",
        )
        preds = json.loads(f.read_text())
        m = bench.match(preds)
        honest = m.start_note(f.name)
        ids = sorted({int(p["inst_idx"]) for p in preds})
        nxt = dict(zip(ids, ids[1:] + ids[:1]))
        shifted = [{**p, "inst_idx": nxt[int(p["inst_idx"])]} for p in preds]
        try:
            note = bench.match(shifted).start_note(f.name) or ""
        except ValueError as exc:  # a trajectory in another scan: refused before any start is compared
            note = f"refused: {str(exc)[:120]}"
        out.append(
            {
                "run": f.name,
                "episodes": len(m.ids),
                "honest_note": honest,
                "honest_says_off_by_one": bool(honest and "ids off by one" in honest),
                "shifted_says_off_by_one": "ids off by one" in note,
                "shifted": note[:160],
            }
        )
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tiny", action="store_true", help="2 orders of one split, no start check: that it runs")
    args = parser.parse_args()
    data = data_dir()
    if data is None:
        print("no shared data ($NAVDTW_DATA): nothing measured")
        return 0
    rng = np.random.default_rng(SEED)
    splits = {}
    with gzip.open(data / "r2r_vlnce" / "R2R_VLNCE_v1-3_preprocessed" / "val_unseen" / "val_unseen.json.gz") as f:
        splits["r2r-ce val_unseen"] = [str(e["episode_id"]) for e in json.load(f)["episodes"]]
    for s in ("val_unseen", "val_seen"):
        splits[f"ndh {s}"] = [str(d["inst_idx"]) for d in json.loads((data / "cvdn" / f"NDH_{s}.json").read_text())]
    if args.tiny:
        splits = {"ndh val_seen": splits["ndh val_seen"]}
    rows = [order_checks(name, ids, rng, 2 if args.tiny else REPS) for name, ids in splits.items()]
    for r in rows:
        print(json.dumps(r))
    for r in [] if args.tiny else start_checks(data):
        print(json.dumps(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
