"""Internal to :mod:`navdtw.cli`: ``navdtw order``, a seeded random order of a split's episodes."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from .. import _options, _parser
from .._files import check_out, need_file
from .._output import term
from .._status import UserError


def add_arguments(parser: argparse.ArgumentParser, *, help_only: bool = False) -> None:
    """Internal: the command's options."""
    parser.description = (
        "Write a seeded, uniformly random order of a split's episodes: order.txt (ids), order.json (what\n"
        "navdtw watch reads, with each episode's scene for its check of the order), a copy of the split\n"
        "file in that order and, with --workers, each worker's round-robin share. Run the evaluation in\n"
        "this order (no shuffling) to stop it early with navdtw watch (docs/stopping.md)."
    )
    parser.epilog = (
        "Example:\n  navdtw order data/R2R_VLNCE_v1-3_preprocessed/val_unseen/val_unseen.json.gz --seed 7 "
        "--workers 4 --out order/\n"
    )
    parser.add_argument(
        "split",
        metavar="SPLIT",
        help="the split file of a data set kind: R2R-CE / RxR-CE episodes, R2R-family or REVERIE JSON, NDH, "
        "RxR guide lines, positions references (JSON or JSON Lines, gzipped or not)",
    )
    parser.add_argument(
        "--dataset",
        metavar="KIND",
        default=None,
        help="the data set kind whose split it is (default: the kind recognised by the file's form)",
    )
    _options.add_seed(parser, "the order's seed (write it down)", required=True, default=None)
    parser.add_argument(
        "--workers", type=_parser.positive_int, default=1, metavar="K", help="workers (ranks), default 1"
    )
    _options.add_out(parser, "navdtw_order")
    _options.add_force(parser)


def run(args: argparse.Namespace) -> int:
    """Internal: writes the order's files."""
    from ...datasets.base import DATASETS, SPLIT_KINDS
    from ...order import write_order

    if args.dataset is not None and args.dataset not in SPLIT_KINDS:
        what = "unknown data set" if args.dataset not in DATASETS else "a data set kind without a split file"
        raise UserError(f"--dataset {args.dataset}: {what}; choose one of {', '.join(SPLIT_KINDS)}")
    check_out(Path(args.out), [], [need_file(args.split, "SPLIT")])
    files = write_order(args.split, args.out, seed=args.seed, workers=args.workers, force=args.force, kind=args.dataset)
    names = ", ".join(p.name for p in files.values())
    print(term(f"wrote {Path(args.out)}{os.sep} ({names}): seed {args.seed}"))
    return 0
