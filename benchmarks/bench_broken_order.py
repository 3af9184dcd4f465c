"""The check of the order (navdtw.sequential.ConfidenceSequence.broken, broken_order), measured:
how often and how soon it says "not a uniformly random order" on scene-grouped, sorted and
reversed orders, and how often it says so falsely on uniformly random ones.

    nice -n 10 python benchmarks/bench_broken_order.py           # docs/stopping.md's table (90 s of CPU)
    nice -n 10 python benchmarks/bench_broken_order.py --quick   # 50 random orders, 20 grouped

The populations are real per-episode values on the shared R2R-CE val_unseen split (1,839
episodes in 11 scenes, $NAVDTW_DATA or ../shared/data): the R2R val_unseen agents' outputs
(prevalent, prevalent_add, random, phi, stop; scored with navdtw's ``r2r`` convention) on the R2R
instructions the R2R-CE episodes are made of (each episode matched to its path and instruction
text), each episode in its R2R-CE scene. A population whose values are all equal (stop's SR and
SPL) is left out: every order of it is the same. Orders:

* scene-grouped: the scenes in a random order, each scene's episodes together in a random order
  (habitat-lab's iterator with ``group_by_scene``);
* sorted by value (ties in a random order) and reversed (descending);
* uniformly random (what ``navdtw order`` writes).

Along each order the sequence of docs/stopping.md (``alpha`` 0.05) runs beside the check
(``check_alpha`` 0.005), once with the episodes' scenes given (the groups' test and the check's
own sequence, 0.0025 each) and once with values only (the check's sequence at 0.005). "Before" counts an
order in which the check fires at or before the first episode at which the interval excludes the
split mean (``navdtw watch`` stops on the check before it decides), or fires and the interval never
excludes it. The seed is 20261219 (new; not tuned).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

from navdtw.sequential import CHECK_ALPHA, broken_order, confidence_path

SEED = 20261219
ALPHA = 0.05
AGENTS = {
    "prevalent": ("prevalent_r2r", "seq2seq_teacher_imagenet_val_unseen_iter_36000.json"),
    "prevalent_add": ("prevalent_r2r", "seq2seq_teacher_imagenet_val_unseen_iter_36000_add.json"),
    "random": ("rpl2024_group9", "val_unseen_random_agent.json"),
    "phi": ("rpl2024_group9", "val_unseen_phi_agent.json"),
    "stop": ("rpl2024_group9", "val_unseen_stop_agent.json"),
}


def data_dir() -> Path | None:
    env = os.environ.get("NAVDTW_DATA")
    for p in ([Path(env)] if env else []) + [Path(__file__).resolve().parents[1].parent / "shared" / "data"]:
        if (p / "r2r_vlnce").is_dir() and (p / "r2r_results").is_dir():
            return p
    return None


def populations(data: Path) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """(each R2R-CE val_unseen episode's scene, {agent metric: its values per episode})."""
    import navdtw

    episodes = data / "r2r_vlnce" / "R2R_VLNCE_v1-3_preprocessed" / "val_unseen" / "val_unseen.json.gz"
    with gzip.open(episodes, "rt") as f:
        eps = json.load(f)["episodes"]
    with open(data / "r2r" / "R2R_val_unseen.json") as f:
        r2r = json.load(f)
    instr = {(p["path_id"], t.strip()): f"{p['path_id']}_{k}" for p in r2r for k, t in enumerate(p["instructions"])}
    ids = [instr[(e["trajectory_id"], e["instruction"]["instruction_text"].strip())] for e in eps]
    scenes = np.asarray([e["scene_id"].split("/")[-2] for e in eps])
    bench = navdtw.datasets.open(
        "r2r", split=data / "r2r" / "R2R_val_unseen.json", connectivity=data / "matterport3dsimulator" / "connectivity"
    )
    out = {}
    for agent, (folder, name) in AGENTS.items():
        matched = bench.match(data / "r2r_results" / folder / name, convention="r2r")
        scores = bench.evaluate(matched, convention="r2r")
        where = {str(i): k for k, i in enumerate(matched.ids)}
        rows = [where[i] for i in ids]
        for m in ("sr", "spl", "ndtw"):
            v = np.asarray(scores[m], dtype=np.float64)[rows]
            if np.ptp(v) > 0:
                out[f"{agent} {m}"] = v
    return scenes, out


def grouped(scenes: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    names = rng.permutation(np.unique(scenes))
    return np.concatenate([rng.permutation(np.flatnonzero(scenes == s)) for s in names])


def by_value(values: np.ndarray, rng: np.random.Generator, reverse: bool) -> np.ndarray:
    ties = rng.permutation(values.size)
    return ties[np.argsort(-values[ties] if reverse else values[ties], kind="stable")]


def run(values: np.ndarray, scenes: np.ndarray, order: np.ndarray, counts: dict) -> tuple[int, int, int]:
    """(first episode at which the interval excludes the split mean, the check with scenes, the
    check with values only); 0 for never."""
    n = values.size
    x = values[order]
    truth = values.mean()
    lo, hi = confidence_path(x, n, alpha=ALPHA)
    out = np.flatnonzero((lo > truth + 1e-12) | (hi < truth - 1e-12))
    excluded = int(out[0]) + 1 if out.size else 0
    with_scenes = broken_order(x, n, groups=scenes[order].tolist(), counts=counts)
    values_only = broken_order(x, n)
    return excluded, with_scenes.count if with_scenes else 0, values_only.count if values_only else 0


def summary(rows: list[tuple[int, int, int]]) -> dict[str, float]:
    r = np.asarray(rows)
    excl, scen, vals = r[:, 0], r[:, 1], r[:, 2]

    def before(fire):
        return float(np.mean((fire > 0) & ((excl == 0) | (fire <= excl))))

    def med(a):
        return float(np.median(a[a > 0])) if np.any(a > 0) else float("nan")

    return {
        "orders": len(rows),
        "excluded": float(np.mean(excl > 0)),
        "excl_median": med(excl),
        "scenes_fires": float(np.mean(scen > 0)),
        "scenes_before": before(scen),
        "scenes_median": med(scen),
        "scenes_max": float(scen.max()) if np.any(scen > 0) else float("nan"),
        "values_fires": float(np.mean(vals > 0)),
        "values_before": before(vals),
        "values_median": med(vals),
    }


def binom_upper(k: int, n: int) -> float:
    from scipy import stats

    return float(stats.beta.ppf(0.975, k + 1, n - k)) if k < n else 1.0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--random", type=int, default=200, help="uniformly random orders per population (200)")
    ap.add_argument("--grouped", type=int, default=100, help="scene-grouped orders per population (100)")
    ap.add_argument("--sorted", type=int, default=10, help="sorted and reversed orders per population (10 each)")
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--quick", action="store_true", help="50 random, 20 grouped, 2 sorted orders per population")
    ap.add_argument("--tiny", action="store_true", help="1 order of each kind (checks the script runs)")
    args = ap.parse_args(argv)
    if args.quick:
        args.random, args.grouped, args.sorted = 50, 20, 2
    if args.tiny:
        args.random, args.grouped, args.sorted = 1, 1, 1
    data = data_dir()
    if data is None:
        print("no shared data (NAVDTW_DATA): nothing to measure", file=sys.stderr)
        return 0
    t0 = time.time()
    scenes, pops = populations(data)
    counts = dict(Counter(scenes.tolist()))
    print(f"R2R-CE val_unseen: {scenes.size} episodes, {len(counts)} scenes; seed {args.seed}; ", end="")
    print(f"check_alpha {CHECK_ALPHA}")
    kinds = {
        "scene-grouped": (args.grouped, lambda v, rng: grouped(scenes, rng)),
        "random": (args.random, lambda v, rng: rng.permutation(v.size)),
        "sorted": (args.sorted, lambda v, rng: by_value(v, rng, False)),
        "reversed": (args.sorted, lambda v, rng: by_value(v, rng, True)),
    }
    print(
        "| order | population | orders | interval excludes the mean (median episode) | check with scenes: fires "
        "| at or before the exclusion | median (max) episode | values only: fires | at or before | median |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    totals: dict[str, list] = {k: [] for k in kinds}
    for ki, (kind, (reps, make)) in enumerate(kinds.items()):
        for pi, (name, v) in enumerate(pops.items()):
            rng = np.random.default_rng([args.seed, ki, pi])
            rows = [run(v, scenes, make(v, rng), counts) for _ in range(reps)]
            totals[kind] += rows
            s = summary(rows)
            print(
                f"| {kind} | {name} | {reps} | {s['excluded']:.1%} ({s['excl_median']:.0f}) | {s['scenes_fires']:.1%} "
                f"| {s['scenes_before']:.1%} | {s['scenes_median']:.0f} ({s['scenes_max']:.0f}) "
                f"| {s['values_fires']:.1%} | {s['values_before']:.1%} | {s['values_median']:.0f} |",
                flush=True,
            )
    print()
    for kind, rows in totals.items():
        s = summary(rows)
        r = np.asarray(rows)
        k_s, k_v, n = int(np.sum(r[:, 1] > 0)), int(np.sum(r[:, 2] > 0)), len(rows)
        print(
            f"all {kind}: {n} orders; interval excludes the mean {s['excluded']:.1%}; with scenes fires "
            f"{s['scenes_fires']:.2%} ({k_s}; 95% upper {binom_upper(k_s, n):.2%}), at or before the exclusion "
            f"{s['scenes_before']:.2%}, median episode {s['scenes_median']:.0f}; values only fires "
            f"{s['values_fires']:.2%} ({k_v}; 95% upper {binom_upper(k_v, n):.2%}), at or before "
            f"{s['values_before']:.2%}"
        )
    print(f"\n{time.time() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
