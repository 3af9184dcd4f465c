"""What choosing among checkpoints with ``navdtw watch`` costs when they are close: the share of
all episodes (K checkpoints x N) evaluated before the choice, for checkpoints within 2 points of
each other, with and without ``--width 0.02`` (docs/stopping.md, "Choosing among checkpoints").

    nice -n 10 python benchmarks/bench_checkpoints.py               # 60 orders per row (~12 min on busy cores)
    nice -n 10 python benchmarks/bench_checkpoints.py --orders 200  # tighter figures

The population is real: ``prevalent``'s per-episode SR and SPL on the shared R2R-CE val_unseen
split (bench_broken_order.populations: the R2R agent's outputs on the instructions the 1,839
R2R-CE episodes are made of). The other checkpoints are copies of it that lose a share of its
successes at random (a checkpoint 1 or 2 points worse, made up for this table). Each repetition
draws a uniformly random order and runs the selection as ``navdtw watch`` does (each checkpoint's
sequence at alpha / K, all at the same pace; a checkpoint stops when eliminated; the selection
ends when one remains or, with a width, when the rest are within it). Seed 20261220 (new).
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from bench_broken_order import data_dir, populations

from navdtw.sequential import confidence_path

SEED = 20261220
ALPHA = 0.05


def select(arms: dict[str, np.ndarray], rng: np.random.Generator, width: float | None) -> tuple[float, str | None]:
    """(fraction of K x N evaluated, the checkpoint chosen or None: tied at the width / undecided)."""
    names = list(arms)
    k, n = len(names), len(next(iter(arms.values())))
    perm = rng.permutation(n)
    paths = [confidence_path(arms[a][perm], n, alpha=ALPHA / k) for a in names]
    lo = np.stack([p[0] for p in paths])
    hi = np.stack([p[1] for p in paths])
    live = np.ones(k, bool)
    stop = np.full(k, n)
    for t in range(n):
        out = live & (hi[:, t] < lo[live, t].max())
        stop[out] = t + 1
        live &= ~out
        if live.sum() == 1:
            stop[live] = t + 1
            return stop.sum() / (k * n), names[int(np.flatnonzero(live)[0])]
        if width is not None and hi[live, t].max() - lo[live, t].min() <= width:
            stop[live] = t + 1
            return stop.sum() / (k * n), None
    return 1.0, None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--orders", type=int, default=60)
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--tiny", action="store_true", help="1 order per row (checks the script runs)")
    args = ap.parse_args(argv)
    if args.tiny:
        args.orders = 1
    data = data_dir()
    if data is None:
        print("no shared data (NAVDTW_DATA): nothing to measure", file=sys.stderr)
        return 0
    t0 = time.time()
    _, pops = populations(data)
    copies = np.random.default_rng([args.seed, 0])
    print(f"seed {args.seed}, {args.orders} orders per row, alpha {ALPHA} shared over the checkpoints")
    print(
        "| checkpoints (SR / SPL of each) | metric | K | `--width` | episodes evaluated: mean fraction of K x N "
        "(10th-90th pct) | chose the best | chose another | tied at the width | undecided at the end |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for ki, losses in enumerate(((0.0, 0.017), (0.0, 0.017, 0.034), (0.0, 0.009, 0.017, 0.034))):
        keep = {p: copies.random(pops["prevalent sr"].size) >= p for p in losses}
        for mi, m in enumerate(("sr", "spl")):
            arms = {f"lose{100 * p:.1f}%": pops[f"prevalent {m}"] * keep[p] for p in losses}
            best = max(arms, key=lambda a: arms[a].mean())
            means = " / ".join(f"{100 * v.mean():.1f}" for v in arms.values())
            for wi, width in enumerate((0.02, None)):
                rng = np.random.default_rng([args.seed, 1 + ki, mi, wi])
                runs = [select(arms, rng, width) for _ in range(args.orders)]
                frac = np.asarray([r[0] for r in runs])
                chosen = [r[1] for r in runs]
                right = sum(c == best for c in chosen) / len(runs)
                wrong = sum(c is not None and c != best for c in chosen) / len(runs)
                tied = sum(c is None and f < 1.0 for c, f in zip(chosen, frac)) / len(runs)
                never = sum(c is None and f == 1.0 for c, f in zip(chosen, frac)) / len(runs)
                print(
                    f"| {means} | {m} | {len(arms)} | {width if width else 'none'} | {frac.mean():.3f} "
                    f"({np.percentile(frac, 10):.3f}-{np.percentile(frac, 90):.3f}) | {right:.1%} | {wrong:.1%} "
                    f"| {tied:.1%} | {never:.1%} |",
                    flush=True,
                )
    print(f"\n{time.time() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
