"""Internal to :mod:`navdtw.cli`: ``navdtw demo``, reference/query pairs of the nDTW paper's
synthetic world scored with every metric."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from .. import _options, _parser
from .._files import check_out
from .._output import format_table, jsonable_means, rates, scale_note, write_folder

EPILOG = """\
Builds the synthetic world of the nDTW paper (a jittered 15 x 15 grid graph), draws
reference/query pairs of five kinds (identical, detour, near_goal, partial, random),
scores them with every metric and writes summary.json, episodes.csv and figures.
No data download; takes a few seconds.

Example:
  navdtw demo
  navdtw demo --seed 3 --pairs 500 --out demo_seed3 --no-figures
"""

OUTPUTS = ["summary.json", "episodes.csv", "alignment.png", "pairs_grid.png", "histograms.png"]


def add_arguments(parser: argparse.ArgumentParser, *, help_only: bool = False) -> None:
    """Internal: the command's options."""
    parser.description = "Score reference/query pairs in the nDTW paper's synthetic world."
    parser.epilog = EPILOG
    _options.add_seed(parser, "seed of the world and the pairs (default 0)")
    parser.add_argument(
        "--pairs",
        type=_parser.positive_int,
        default=100,
        metavar="N",
        help="number of reference/query pairs (default 100)",
    )
    _options.add_out(parser, "navdtw_demo")
    _options.add_force(parser)
    _options.add_no_figures(parser)


def run(args: argparse.Namespace) -> int:
    """Internal: scores the pairs, prints the table by kind of pair and writes the outputs."""
    import numpy as np

    from ..._io import check_writable
    from ...metrics import evaluate
    from ...synthetic import PAIR_KINDS, SyntheticWorld

    out = Path(args.out)
    check_out(out, [], [])
    check_writable(out, OUTPUTS, force=args.force)
    t0 = time.perf_counter()
    world = SyntheticWorld.generate(seed=args.seed)
    refs, queries = world.sample_pairs(args.pairs, seed=args.seed)
    kinds = [PAIR_KINDS[i % len(PAIR_KINDS)] for i in range(len(refs))]
    scores = evaluate(refs, queries, distances=world.distances, threshold=world.threshold, convention="paper")

    kinds_arr = np.array(kinds)
    rows = []
    per_kind: dict[str, dict[str, Any]] = {}
    for kind in PAIR_KINDS:
        sel = kinds_arr == kind
        if not sel.any():
            continue
        means = {k: float(np.mean(scores[k][sel])) for k in scores}
        rows.append((kind, int(sel.sum()), means))
        per_kind[kind] = {"n": int(sel.sum()), "means": jsonable_means(means)}
    overall = scores.summary()
    rows.append(("all", len(scores), overall))

    print(
        f"navdtw demo: the nDTW paper's synthetic world (seed {args.seed}): {world.num_nodes} nodes, "
        f"{len(world.edges)} edges; {len(refs)} pairs,\nconvention 'paper', success threshold "
        f"{world.threshold:.3f} m. {scale_note('summary.json and episodes.csv')}"
    )
    print()
    print(format_table(rows, label="query kind"))
    print()
    if "identical" in per_kind:
        print(
            "SPL of identical pairs is below 100 %: SPL's l is the shortest start-to-goal distance "
            "d(q_1, r_last);\na reference that is not a shortest path is longer than l, so even a query "
            "equal to it scores l / PL(R) < 1."
        )
        print()

    summary = {
        "command": "demo",
        "seed": args.seed,
        "pairs": len(refs),
        "world": {
            "size": world.size,
            "nodes": world.num_nodes,
            "edges": len(world.edges),
            "jitter": world.jitter,
            "radius": world.radius,
        },
        "threshold": world.threshold,
        "convention": "paper",
        "metrics_note": f"means over pairs; rates ({', '.join(rates(scores))}) as fractions in [0, 1] "
        "(the printed table shows them in percent); distances in metres",
        "by_kind": per_kind,
        "means": jsonable_means(overall),
    }
    lead = {
        "pair": range(len(refs)),
        "kind": kinds,
        "reference_nodes": [len(r) for r in refs],
        "query_nodes": [len(q) for q in queries],
    }
    written = write_folder(
        out,
        summary,
        scores=scores,
        columns=lead,
        figures=None if args.no_figures else lambda stage: _figures(stage, world, refs, queries, kinds, scores),
        force=args.force,
    )
    elapsed = time.perf_counter() - t0
    print(f"wrote {', '.join(str(out / p.name) for p in written)} ({elapsed:.1f} s)")
    return 0


def _figures(stage: Path, world, refs, queries, kinds: list[str], scores) -> list[Path]:
    """The demo's figures, drawn into ``stage``: one alignment of every kind of pair, up to 16 pairs
    sorted by nDTW, and the histograms of every metric."""
    from ... import plot
    from ...engine import warping_path
    from ...synthetic import PAIR_KINDS

    written = []
    # Figure 1: one example of every kind with its alignment over the graph distances.
    shown = min(len(PAIR_KINDS), len(refs))
    fig = plot.new_figure((3.6 * shown, 4.4))
    axes = fig.subplots(1, shown, squeeze=False)[0]
    for ax, i in zip(axes, range(shown)):
        value, path = warping_path(refs[i], queries[i], distances=world.distances)
        plot.plot_alignment(
            world.positions[refs[i]],
            world.positions[queries[i]],
            path,
            ax=ax,
            title=f"pair {i}: {kinds[i]}",
            threshold=world.threshold,
            dtw=value,
            legend=False,
            percent=True,
        )
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=len(labels), frameon=False)
    fig.suptitle(
        "DTW alignment (grey lines) between reference and query, one pair of each kind; DTW over graph distances"
    )
    written.append(plot.save(fig, stage / "alignment.png"))
    # Figure 3: up to 16 pairs sorted by nDTW.
    m = min(16, len(refs))
    pairs = [(world.positions[refs[i]], world.positions[queries[i]]) for i in range(m)]
    fig = plot.plot_pairs_grid(
        pairs,
        scores["ndtw"][:m],
        titles=kinds[:m],
        ids=list(range(m)),
        percent=True,
        ncols=4,
        suptitle="Reference / query pairs sorted by nDTW (pair = the 'pair' column of episodes.csv)",
    )
    written.append(plot.save(fig, stage / "pairs_grid.png"))
    title = f"Per-pair metrics ({len(refs)} synthetic pairs)"
    fig = plot.plot_histograms(scores, title=title, counts="synthetic pairs")
    written.append(plot.save(fig, stage / "histograms.png"))
    return written
