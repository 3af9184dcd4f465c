"""The check of the order (navdtw.sequential.ConfidenceSequence.broken, broken_order), measured
as ``navdtw watch`` runs it: how often and how soon it says "not a uniformly random order" on
scene-grouped, sorted and reversed orders, and how often it says so falsely on uniformly random
ones.

    nice -n 10 python benchmarks/bench_broken_order.py           # docs/stopping.md's table (~10 min of CPU)
    nice -n 10 python benchmarks/bench_broken_order.py --quick   # 100 random orders, 20 grouped

The populations are real per-episode values on the shared R2R-CE val_unseen split (1,839
episodes in 11 scenes, $NAVDTW_DATA or ../shared/data): the R2R val_unseen agents' outputs
(prevalent, prevalent_add, random, phi, stop; scored with navdtw's ``r2r`` convention) on the R2R
instructions the R2R-CE episodes are made of (each episode matched to its path and instruction
text). A population whose values are all equal (stop's SR and SPL) is left out: every order of it
is the same.

The scenes come the way ``navdtw watch`` gets them: ``navdtw order`` (:func:`navdtw.order.write_order`)
writes an order of the real split into a temporary folder, :func:`navdtw.order.load_order` reads
it back, and each order measured is that order's units rearranged, with their recorded scenes
(``Order.scenes``), the groups' counts ``Order.scene_counts`` and the scenes of each stretch fed
``Order.scenes_of``: what ``Watch`` gives ``ConfidenceSequence`` (one metric: ``check_alpha`` =
``CHECK_ALPHA`` 0.005). ``--through-watch K`` also runs K orders of each kind of the first
population through ``navdtw.watch.Watch`` itself (results file, order file, one look) and checks
that it stops at the same episode, for the same reason. Orders:

* scene-grouped: the scenes in a random order, each scene's episodes together in a random order
  (habitat-lab's iterator with ``group_by_scene``);
* sorted by value (ties in a random order) and reversed (descending);
* uniformly random (what ``navdtw order`` writes).

Along each order the sequence of docs/stopping.md (``alpha`` 0.05) runs beside the check, once
with the episodes' scenes (the groups' test and the check's own sequence, 0.0025 each) and once
with values only (the check's sequence at 0.005). "Before" counts an order in which the check
fires at or before the first episode at which the interval excludes the split mean (``navdtw
watch`` stops on the check before it decides), or fires and the interval never excludes it. The
seed is 20261214 (new: not used before, not tuned; 20261219 measured the earlier table).
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import json
import os
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from navdtw.order import Order, load_order, write_order
from navdtw.sequential import CHECK_ALPHA, NotRandomOrder, broken_order, confidence_path

SEED = 20261214
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


def split_file(data: Path) -> Path:
    return data / "r2r_vlnce" / "R2R_VLNCE_v1-3_preprocessed" / "val_unseen" / "val_unseen.json.gz"


def populations(data: Path) -> tuple[list[str], dict[str, np.ndarray]]:
    """(the R2R-CE val_unseen episode ids, {agent metric: its values per episode, in that order})."""
    import navdtw

    with gzip.open(split_file(data), "rt") as f:
        eps = json.load(f)["episodes"]
    with open(data / "r2r" / "R2R_val_unseen.json") as f:
        r2r = json.load(f)
    instr = {(p["path_id"], t.strip()): f"{p['path_id']}_{k}" for p in r2r for k, t in enumerate(p["instructions"])}
    ids = [instr[(e["trajectory_id"], e["instruction"]["instruction_text"].strip())] for e in eps]
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
    return [str(e["episode_id"]) for e in eps], out


def written_order(data: Path, seed: int) -> Order:
    """The order ``navdtw order`` writes for the real split (into a temporary folder), read back as
    ``navdtw watch --order`` reads it: its units and their scenes."""
    with tempfile.TemporaryDirectory() as tmp:
        write_order(split_file(data), Path(tmp), seed=seed)
        return load_order(Path(tmp) / "order.json")


def grouped(scenes: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    names = rng.permutation(np.unique(scenes))
    return np.concatenate([rng.permutation(np.flatnonzero(scenes == s)) for s in names])


def by_value(values: np.ndarray, rng: np.random.Generator, reverse: bool) -> np.ndarray:
    ties = rng.permutation(values.size)
    return ties[np.argsort(-values[ties] if reverse else values[ties], kind="stable")]


def run(values: np.ndarray, order: Order, perm: np.ndarray) -> tuple[int, int, int]:
    """(first episode at which the interval excludes the split mean, the check with scenes, the
    check with values only); 0 for never. ``values`` are per unit of ``order``; the order measured
    is its units rearranged by ``perm``, with their scenes, fed as ``Watch`` feeds them."""
    n = values.size
    x = values[perm]
    truth = values.mean()
    lo, hi = confidence_path(x, n, alpha=ALPHA)
    out = np.flatnonzero((lo > truth + 1e-12) | (hi < truth - 1e-12))
    excluded = int(out[0]) + 1 if out.size else 0
    measured = rearranged(order, perm)
    with_scenes = broken_order(x, n, groups=measured.scenes_of(0, n), counts=measured.scene_counts)
    values_only = broken_order(x, n)
    return excluded, with_scenes.count if with_scenes else 0, values_only.count if values_only else 0


def rearranged(order: Order, perm: np.ndarray) -> Order:
    """The order's units in another order, each with its recorded scene."""
    return replace(order, units=tuple(order.units[k] for k in perm), scenes=tuple(order.scenes[k] for k in perm))


def through_watch(values: np.ndarray, metric: str, order: Order, perm: np.ndarray, tmp: Path) -> tuple[int, str]:
    """Where ``navdtw.watch.Watch`` stops on this order (its results file, one look): (count, reason)."""
    from navdtw.watch import Follower, Watch

    measured = rearranged(order, perm)
    run = tmp / "run.jsonl"
    run.write_text("".join(json.dumps({"episode_id": u[0], metric: float(values[k])}) + "\n"
                           for k, u in zip(perm, measured.units)))  # fmt: skip
    follower = Follower(run, name="run")
    try:
        watch = Watch(measured, {"run": follower}, metrics=[metric], width=1e-6)
        with contextlib.suppress(NotRandomOrder):  # said: where and why is in the sequence
            watch.poll()
        broken = watch.runs["run"].tracks[metric].cs.broken
    finally:
        follower.close()
    return (broken.count, broken.reason) if broken else (0, "")


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


def binom_interval(k: int, n: int) -> str:
    """The Clopper-Pearson 95% interval of a rate ``k / n`` (the Monte-Carlo error), as text."""
    from scipy import stats

    lo = float(stats.beta.ppf(0.025, k, n - k + 1)) if k > 0 else 0.0
    hi = float(stats.beta.ppf(0.975, k + 1, n - k)) if k < n else 1.0
    return f"[{lo:.2%}, {hi:.2%}]"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--random", type=int, default=1000, help="uniformly random orders per population (1000)")
    ap.add_argument("--grouped", type=int, default=100, help="scene-grouped orders per population (100)")
    ap.add_argument("--sorted", type=int, default=10, help="sorted and reversed orders per population (10 each)")
    ap.add_argument("--through-watch", type=int, default=2, help="orders of each kind also run through Watch (2)")
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--quick", action="store_true", help="100 random, 20 grouped, 2 sorted orders per population")
    ap.add_argument("--tiny", action="store_true", help="1 order of each kind (checks the script runs)")
    args = ap.parse_args(argv)
    if args.quick:
        args.random, args.grouped, args.sorted = 100, 20, 2
    if args.tiny:
        args.random, args.grouped, args.sorted, args.through_watch = 1, 1, 1, 1
    data = data_dir()
    if data is None:
        print("no shared data (NAVDTW_DATA): nothing to measure", file=sys.stderr)
        return 0
    t0, c0 = time.time(), time.process_time()
    ids, pops = populations(data)
    order = written_order(data, args.seed)  # what navdtw order writes, read back as watch reads it
    units = {u[0]: k for k, u in enumerate(order.units)}
    rows = np.asarray([units[i] for i in ids])  # each population's values per unit of the order
    pops = {name: _per_unit(v, rows) for name, v in pops.items()}
    scenes = np.asarray(order.scenes)
    counts = order.scene_counts
    print(f"R2R-CE val_unseen: {len(order)} episodes, {len(counts)} scenes (from order.json of navdtw order, seed "
          f"{args.seed}); check_alpha {CHECK_ALPHA}")  # fmt: skip
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
    agree = []
    with tempfile.TemporaryDirectory() as tmp:
        for ki, (kind, (reps, make)) in enumerate(kinds.items()):
            for pi, (name, v) in enumerate(pops.items()):
                rng = np.random.default_rng([args.seed, ki, pi])
                perms = [make(v, rng) for _ in range(reps)]
                rows_k = [run(v, order, perm) for perm in perms]
                if pi == 0:  # the same orders through navdtw.watch.Watch: where does it stop?
                    for perm, r in zip(perms[: args.through_watch], rows_k):
                        agree.append(through_watch(v, name.split()[-1], order, perm, Path(tmp))[0] == r[1])
                totals[kind] += rows_k
                s = summary(rows_k)
                print(
                    f"| {kind} | {name} | {reps} | {s['excluded']:.1%} ({s['excl_median']:.0f}) "
                    f"| {s['scenes_fires']:.1%} | {s['scenes_before']:.1%} | {s['scenes_median']:.0f} "
                    f"({s['scenes_max']:.0f}) | {s['values_fires']:.1%} | {s['values_before']:.1%} "
                    f"| {s['values_median']:.0f} |",
                    flush=True,
                )
    print()
    for kind, rows_k in totals.items():
        s = summary(rows_k)
        r = np.asarray(rows_k)
        n = len(rows_k)
        k_s, k_v = int(np.sum(r[:, 1] > 0)), int(np.sum(r[:, 2] > 0))
        k_b = round(s["scenes_before"] * n)
        print(
            f"all {kind}: {n} orders; interval excludes the mean {s['excluded']:.1%}; with scenes fires "
            f"{s['scenes_fires']:.2%} ({k_s}; 95% {binom_interval(k_s, n)}), at or before the exclusion "
            f"{s['scenes_before']:.2%} ({k_b}; 95% {binom_interval(k_b, n)}), median episode {s['scenes_median']:.0f}; "
            f"values only fires {s['values_fires']:.2%} ({k_v}; 95% {binom_interval(k_v, n)}), at or before "
            f"{s['values_before']:.2%}"
        )
    print(f"\nthrough Watch: {sum(agree)} of {len(agree)} orders stopped where broken_order says (first population)")
    print(f"{time.time() - t0:.0f} s wall, {time.process_time() - c0:.0f} s CPU")
    return 0 if all(agree) else 1


def _per_unit(values: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Values per episode of the split file -> per unit of the order (R2R-CE: a unit is an episode)."""
    out = np.empty_like(values)
    out[rows] = values
    return out


if __name__ == "__main__":
    raise SystemExit(main())
