"""The ``navdtw`` command: ``demo``, ``score``, ``baseline``, ``suite run``, ``compare``, ``order`` and ``watch``.

``main(argv=None) -> int`` is the console entry point (``navdtw = "navdtw.cli:main"``); it returns
the exit status instead of exiting, so it can be called from Python and tests. Every mistake in the
user's input (missing or malformed file, unknown scan or viewpoint, missing predictions, bad
numbers) prints one line ``navdtw: error: <file>: <what is wrong>`` to stderr and returns 2; an
output that cannot be written (a read-only folder, a full disk) prints one line naming the output
and returns 3 (:data:`EXIT_STATUS`).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from ._decisions import DECISIONS

__all__ = ["UserError", "build_parser", "main"]

PROG = "navdtw"
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_OUTPUT = 3
EXIT_ALL_FAILED = 5
EXIT_INTERRUPTED = 130

#: What each exit status of the ``navdtw`` command means (docs/cli.md).
EXIT_STATUS = {
    0: "success",
    EXIT_FAILED: "suite run or compare: some (agent, data set), or one agent's metric, failed; the others' "
    "results are written",
    EXIT_USAGE: "a mistake in the input: usage, a missing or malformed file or entry, a bad suite file",
    EXIT_OUTPUT: "an output could not be written (read-only folder, full disk, a file navdtw did not write); "
    "nothing half-written",
    EXIT_ALL_FAILED: "suite run or compare: every agent failed on every data set; nothing was written (the "
    "output folder is as it was)",
    EXIT_INTERRUPTED: "interrupted (Ctrl-C)",
    **dict(DECISIONS.values()),
}

_EXIT_EPILOG = "Exit status: " + "; ".join(f"{k} {v}" for k, v in sorted(EXIT_STATUS.items())) + "."

# The random agent of Ilharco et al. (2019), Table 2, on R2R validation unseen, in percent, as
# transcribed in the README (which discusses where navdtw differs: SED and SPL).
PAPER_RANDOM_R2R_VAL_UNSEEN: dict[str, float] = {
    "sr": 5.1,
    "spl": 3.3,
    "sed": 5.8,
    "cls": 29.0,
    "ndtw": 27.9,
    "sdtw": 3.6,
}


# The printed tables and episodes.csv take their columns, labels and units from the metric
# registry (navdtw.registry): rates in percent, distances in metres.
def _scale_note(files: str) -> str:
    return f"Rates in percent, distances in metres\n({files}: rates as fractions)."


class UserError(Exception):
    """A mistake in the command's input: reported as one line, exit status 2."""


# --------------------------------------------------------------------------------------------
# argument parsing
# --------------------------------------------------------------------------------------------


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage mistake is one line on stderr (status 2) instead of usage + error; and a
    subcommand's options may be added when it is first parsed (``fill``, see :func:`_build_parser`)."""

    fill = None
    # The innermost parser of the command line being parsed (a subcommand's, set as argparse hands
    # it its arguments), with those arguments: a mistake's message names its options and --help.
    innermost: ClassVar[_Parser | None] = None
    args: Sequence[str] = ()

    def parse_known_args(self, args=None, namespace=None):  # type: ignore[override]
        if self.fill is not None:
            fill, self.fill = self.fill, None
            fill(self)
        _Parser.innermost, self.args = self, list(sys.argv[1:] if args is None else args)
        return super().parse_known_args(args, namespace)

    def _misspelt(self) -> str | None:
        """The first option this parser does not know, with the closest one it does (a typo such as
        --predicitons makes argparse report the option it hides as missing instead)."""
        import difflib

        known = [o for o in self._option_string_actions if o.startswith("--")]
        for token in self.args:
            if token == "--":
                break
            name = token.split("=", 1)[0]
            if name.startswith("--") and name not in known and not any(k.startswith(name) for k in known):
                close = difflib.get_close_matches(name, known, n=1)
                name = name if name.isprintable() else repr(name)  # the message stays one line
                return name + (f" (did you mean {close[0]}?)" if close else "")
        return None

    def error(self, message: str):  # type: ignore[override]
        parser = _Parser.innermost or self
        misspelt = parser._misspelt()
        if misspelt and message.startswith(("unrecognized", "the following arguments")):
            message = f"unknown option {misspelt}"
        self.exit(EXIT_USAGE, f"{PROG}: error: {message} (see '{parser.prog} --help')\n")


def _positive_int(text: str) -> int:
    try:
        value = int(text.replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _seed(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}") from None
    if not 0 <= value < 2**63:
        raise argparse.ArgumentTypeError(f"expected an integer in [0, 2**63), got {text!r}")
    return value


def _threshold(text: str) -> float:
    """--threshold: checked by the engine's own rule (``check_threshold``)."""
    from .engine import check_threshold

    try:
        return check_threshold(float(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a finite distance > 0 (metres), got {text!r}") from None


def _workers(text: str) -> int:
    """--workers: checked by the engine's own rule (``resolve_workers``); -1 is kept as -1."""
    from .engine import MAX_WORKERS, resolve_workers

    try:
        value = int(text)
        resolve_workers(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected -1 (all cores) or an integer from 1 to {MAX_WORKERS}, got {text!r}"
        ) from None
    return value


_DEMO_EPILOG = """\
Builds the synthetic world of the nDTW paper (a jittered 15 x 15 grid graph), draws
reference/query pairs of five kinds (identical, detour, near_goal, partial, random),
scores them with every metric and writes summary.json, episodes.csv and figures.
No data download; takes a few seconds.

Example:
  navdtw demo
  navdtw demo --seed 3 --pairs 500 --out demo_seed3 --no-figures
"""

_SCORE_EPILOG = """\
R2R / R4R (discrete, Matterport3D graphs): the split, the connectivity folder and an
R2R results file [{"instr_id": "<path_id>_<k>", "trajectory": [[viewpoint, heading,
elevation], ...]}, ...]. Every instruction of the split needs exactly one prediction.

R2R-CE (continuous): the episodes, their *_gt file (dense reference locations) and the
predictions as {episode_id: [{"position": [x, y, z], ...}, ...]} or JSON lines
{"episode_id" (or "instruction_id"): ..., "path": [[x, y, z], ...]}. SPL's l is the
episodes' info["geodesic_distance"] when present. NE / SR use straight-line distances.

Writes summary.json, episodes.csv (one row per episode) and histograms.png to --out.

Example:
  navdtw score --split R2R_val_unseen.json --connectivity connectivity/ \\
      --predictions results.json --convention r2r --out scores/
  navdtw score --vlnce-episodes val_unseen.json.gz --vlnce-gt val_unseen_gt.json.gz \\
      --predictions preds.json --convention vlnce
"""

_BASELINE_EPILOG = """\
The random agent of the nDTW paper (Ilharco et al. 2019, Table 2): from each reference's
start, walk as many random steps as a reference of the split has edges. Walks depend
only on (seed, walk index): the same seed gives identical numbers on any machine and
any number of workers. Writes baseline.json to --out.

Example:
  navdtw baseline --split R2R_val_unseen.json --connectivity connectivity/ -n 1000000 --seed 0
"""


def build_parser() -> argparse.ArgumentParser:
    """The ``navdtw`` command's argument parser, with its subcommands (``info``, ``demo``,
    ``score``, ``baseline``, ``suite``, ``compare``); the CLI reference (docs/cli.md) is generated
    from it.

    Returns
    -------
    argparse.ArgumentParser
        A parser whose usage mistakes print one line on stderr and exit with status 2.
    """
    return _build_parser(lazy=False)


def _build_parser(*, lazy: bool) -> argparse.ArgumentParser:
    """The parser; with ``lazy``, each subcommand's options (which need the metric registry and the
    data set kinds, hence numpy and scipy) are added only when that subcommand is parsed, so that
    ``navdtw --help`` and a mistyped command answer without importing them."""
    from . import __version__

    parser = _Parser(
        prog=PROG,
        description="Exact DTW / nDTW / SDTW and every navigation metric for vision-and-language navigation.",
        epilog="Example:\n  navdtw demo\n  navdtw score --help\n",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for name, (help_, fill) in _COMMANDS.items():
        command = sub.add_parser(name, help=help_, formatter_class=argparse.RawDescriptionHelpFormatter)
        if lazy:
            command.fill = fill
        else:
            fill(command)
    return parser


def _info_args(info: argparse.ArgumentParser) -> None:
    info.description = "Print navdtw's version, the compiled engine's build and the SIMD kernel in use."


def _demo_args(demo: argparse.ArgumentParser) -> None:
    demo.description = "Score reference/query pairs in the nDTW paper's synthetic world."
    demo.epilog = _DEMO_EPILOG
    demo.add_argument("--seed", type=_seed, default=0, help="seed of the world and the pairs (default 0)")
    demo.add_argument(
        "--pairs", type=_positive_int, default=100, metavar="N", help="number of reference/query pairs (default 100)"
    )
    demo.add_argument("--out", default="navdtw_demo", metavar="DIR", help="output folder (default navdtw_demo/)")
    demo.add_argument("--force", action="store_true", help=_FORCE_HELP)
    demo.add_argument("--no-figures", action="store_true", help="do not draw figures")


def _score_args(score: argparse.ArgumentParser) -> None:
    from .metrics import CONVENTIONS
    from .registry import help_text

    score.description = "Score an agent's predictions with every navigation metric."
    score.epilog = (
        _SCORE_EPILOG
        + "\nMetrics (episodes.csv columns; summary.json means, rates as fractions):\n"
        + help_text()
        + "\n\n"
        + _EXIT_EPILOG
    )
    _add_dataset_options(score)
    score.add_argument("--predictions", required=True, metavar="FILE", help="the agent's predictions")
    score.add_argument(
        "--convention",
        choices=sorted(CONVENTIONS),
        default=None,
        help="whose definitions to follow (default: the data set's own evaluator, e.g. r2r, reverie, ndh)",
    )
    score.add_argument(
        "--threshold", type=_threshold, default=3.0, metavar="M", help="success distance in metres (default 3.0)"
    )
    score.add_argument("--out", default="navdtw_scores", metavar="DIR", help="output folder (default navdtw_scores/)")
    score.add_argument("--force", action="store_true", help=_FORCE_HELP)
    score.add_argument(
        "--strict", action="store_true", help="require every prediction to start at its reference's start"
    )
    score.add_argument("--workers", type=_workers, default=-1, help="threads (-1 = all cores, default)")
    score.add_argument("--no-figures", action="store_true", help="do not draw figures")


def _baseline_args(base: argparse.ArgumentParser) -> None:
    from .metrics import CONVENTIONS

    base.description = "Score random walks against a split's references (Ilharco et al. 2019, Table 2)."
    base.epilog = _BASELINE_EPILOG
    _add_dataset_options(base, walks=True)
    base.add_argument("-n", type=_positive_int, default=1_000_000, help="number of random walks (default 1000000)")
    base.add_argument("--seed", type=_seed, default=0, help="seed (default 0)")
    base.add_argument(
        "--convention",
        choices=sorted(CONVENTIONS),
        default=None,
        help="whose definitions to follow (default: the data set's own evaluator, as score and suite runs; "
        "paper: the nDTW paper's, whose Table 2 the R2R rows are compared with)",
    )
    base.add_argument(
        "--threshold", type=_threshold, default=3.0, metavar="M", help="success distance in metres (default 3.0)"
    )
    base.add_argument(
        "--out", default="navdtw_baseline", metavar="DIR", help="output folder (default navdtw_baseline/)"
    )
    base.add_argument("--force", action="store_true", help=_FORCE_HELP)
    base.add_argument("--workers", type=_workers, default=-1, help="threads (-1 = all cores, default)")
    base.add_argument("--no-progress", action="store_true", help="no progress bar")


_FORCE_HELP = (
    "replace files in --out of the outputs' names that navdtw did not write or that were changed since "
    "(never read-only ones)"
)


def _suite_args(suite: argparse.ArgumentParser) -> None:
    suite.description = "Benchmark suites (see docs/suite.md)."
    suite.epilog = _SUITE_EPILOG
    suite_sub = suite.add_subparsers(dest="suite_command", metavar="SUBCOMMAND", parser_class=_Parser)
    suite_sub.required = True
    suite_run = suite_sub.add_parser(
        "run",
        help="score every agent on every data set of a suite file and compare them",
        description="Score every (agent, data set) pair of a suite file; write leaderboards, results.json, "
        "per-episode values and report.html.",
        epilog=_SUITE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    suite_run.add_argument("suite_file", metavar="SUITE.toml", help="the suite file")
    suite_run.add_argument("--out", default="navdtw_suite", metavar="DIR", help="output folder (default navdtw_suite/)")
    suite_run.add_argument("--cache", metavar="DIR", help="baseline cache folder (default DIR/.cache)")
    suite_run.add_argument("--no-report", action="store_true", help="do not write report.html")
    suite_run.add_argument("--force", action="store_true", help=_FORCE_HELP)
    suite_run.add_argument(
        "--max-scenes",
        type=_positive_int,
        default=500,
        metavar="N",
        help="episode maps per data set in the report (default 500)",
    )
    suite_run.add_argument("--no-progress", action="store_true", help="no progress bar (bars need navdtw[progress])")
    _table_options(suite_run)


def _compare_args(comp: argparse.ArgumentParser) -> None:
    from .metrics import CONVENTIONS

    comp.description = (
        "Compare several agents' predictions on one data set, as a one-data-set suite; "
        "agents are named by their file names."
    )
    comp.epilog = _COMPARE_EPILOG
    comp.add_argument(
        "predictions",
        nargs="*",
        metavar="PREDICTIONS",
        help="predictions files (or results tables, or folders of one run's results), one per agent: FILE "
        "(named by the file) or NAME=FILE",
    )
    comp.add_argument(
        "--runs",
        action="append",
        default=[],
        metavar="NAME=FILES",
        help="an agent scored in several runs (seeds): its files, a quoted glob ('runs/mine_seed*.jsonl') "
        "or a comma-separated list; a run may be a folder of one run's files, and the rank files of one run "
        "(NAME_r{rank}_w{world}.json) are one run; repeatable, one per agent",
    )
    comp.add_argument(
        "--shards",
        action="append",
        default=[],
        metavar="NAME=FILES",
        help="an agent's one run in several files (DDP ranks, chunks, one file per episode): a quoted glob, "
        "a folder or a comma-separated list; results tables; repeatable, one per agent",
    )
    comp.add_argument(
        "--reported-from",
        action="append",
        default=[],
        metavar="[AGENT=]FILE",
        help="the evaluator's means file of an agent's run (stats_ckpt_*.json, result.json), checked against "
        "the measured means as its reported figures (default agent: the first); repeatable",
    )
    comp.add_argument(
        "--reported",
        action="append",
        default=[],
        metavar="[AGENT:]M=V,...",
        help="the figures a paper reports for an agent (default: the first), checked against the measured "
        "means: sr=0.558,spl=0.512 (fractions) or sr=55.8%%,spl=51.2%%; repeatable",
    )
    comp.add_argument("--dataset", required=True, metavar="KIND", help="data set kind (r2r, r4r, r2r-ce, ..., results)")
    _dataset_options(comp)
    comp.add_argument(
        "--convention", choices=sorted(CONVENTIONS), default=None, help="definitions (default: the kind's)"
    )
    comp.add_argument(
        "--threshold", type=_threshold, default=None, metavar="M", help="success distance in metres (default 3.0)"
    )
    comp.add_argument("--resamples", type=_positive_int, default=10_000, help="bootstrap resamples (default 10000)")
    comp.add_argument("--seed", type=_seed, default=0, help="seed (default 0)")
    comp.add_argument(
        "--baseline-walks",
        type=int,
        default=0,
        metavar="N",
        help="random-walk baseline row of N walks (default 0: none)",
    )
    comp.add_argument("--out", metavar="DIR", help="also write the suite outputs (leaderboards, report) there")
    comp.add_argument("--no-report", action="store_true", help="with --out: do not write report.html")
    comp.add_argument("--force", action="store_true", help=_FORCE_HELP)
    comp.add_argument(
        "--max-scenes",
        type=_positive_int,
        default=500,
        metavar="N",
        help="episode maps in the report (default 500)",
    )
    comp.add_argument("--no-progress", action="store_true", help="no progress bar (bars need navdtw[progress])")
    _table_options(comp)


def _order_args(order: argparse.ArgumentParser) -> None:
    order.description = (
        "Write a seeded, uniformly random order of a split's episodes: order.txt (ids), order.json (what\n"
        "navdtw watch reads), a copy of the split file in that order and, with --workers, each worker's\n"
        "round-robin share. Run the evaluation in this order (no shuffling) to stop it early with\n"
        "navdtw watch (docs/stopping.md)."
    )
    order.epilog = (
        "Example:\n  navdtw order data/R2R_VLNCE_v1-3_preprocessed/val_unseen/val_unseen.json.gz --seed 7 "
        "--workers 4 --out order/\n\n" + _EXIT_EPILOG
    )
    order.add_argument(
        "split",
        metavar="SPLIT",
        help="the split file (R2R-CE / RxR-CE episodes, R2R-family JSON, positions references)",
    )
    order.add_argument("--seed", type=_seed, required=True, help="the order's seed (write it down)")
    order.add_argument("--workers", type=_positive_int, default=1, metavar="K", help="workers (ranks), default 1")
    order.add_argument("--out", default="navdtw_order", metavar="DIR", help="output folder (default navdtw_order/)")
    order.add_argument("--force", action="store_true", help=_FORCE_HELP)


def _watch_args(watch: argparse.ArgumentParser) -> None:
    from .metrics import CONVENTIONS

    watch.description = (
        "Follow the results (or the trajectories) an evaluation is writing, in the order of navdtw order,\n"
        "and stop when the question is answered, with an error of at most --alpha however often you look\n"
        "(docs/stopping.md). One run: --width, --reported or --against; several runs: the best checkpoint."
    )
    watch.epilog = (
        "Per-episode results (--dataset results, the default) are read as navdtw compare reads them: JSON\n"
        "Lines, JSON, CSV, a folder of one file per episode, one rank's file of a run written per rank, a\n"
        "glob of shards, every project layout of docs/datasets/results.md. Trajectories are scored as they\n"
        "come with their data set's metrics (--dataset r2r, r4r, r2r-ce, rxr-ce or positions and its files).\n"
        "A last line or file still being written is waited for.\n\n"
        "Examples:\n"
        "  navdtw watch eval/results.jsonl --order order/order.json --width 0.02\n"
        "  navdtw watch eval/results.jsonl --order order/order.json --reported sr=0.564\n"
        "  navdtw watch eval/results.jsonl --order order/order.json --against base.jsonl --metric sr,ndtw\n"
        "  navdtw watch ckpt6=eval6/ ckpt9=eval9/ ckpt12=eval12/ --order order/order.json --width 0.02\n"
        "  navdtw watch preds.jsonl --dataset r2r --split R2R_val_unseen.json --connectivity connectivity/ \\\n"
        "      --order order/order.json --against base_preds.json --metric sr,ndtw\n\n" + _EXIT_EPILOG
    )
    watch.add_argument(
        "runs",
        nargs="+",
        metavar="[NAME=]FILES",
        help="the run's results or trajectories: a JSON Lines / JSON file, a folder of one file per episode, one "
        "rank's file, or a quoted glob of shards; several: checkpoints to choose from",
    )
    watch.add_argument(
        "--dataset",
        default="results",
        metavar="KIND",
        help="results (default: per-episode results) or the kind that scores the trajectories "
        "(r2r, r4r, r2r-ce, rxr-ce, positions)",
    )
    _dataset_options(watch)
    watch.add_argument(
        "--convention", choices=sorted(CONVENTIONS), default=None, help="definitions (default: the kind's)"
    )
    watch.add_argument(
        "--threshold", type=_threshold, default=3.0, metavar="M", help="success distance in metres (default 3.0)"
    )
    watch.add_argument("--order", required=True, metavar="FILE", help="order.json of navdtw order (or an id list)")
    watch.add_argument(
        "--metric",
        action="append",
        metavar="LIST",
        help="the metrics decided on, comma-separated (rates: sr, osr, spl, ndtw, sdtw, ...; default sr)",
    )
    watch.add_argument("--width", type=_fraction, default=None, metavar="W", help="target width of the intervals")
    watch.add_argument(
        "--reported",
        action="append",
        metavar="M=V",
        help="a reported figure as a fraction (sr=0.564); repeat or comma-separate for several",
    )
    watch.add_argument(
        "--against", metavar="FILES", help="another agent's complete results (or trajectories) on the same split"
    )
    watch.add_argument(
        "--alpha", type=_fraction, default=0.05, help="the error, shared out over metrics or checkpoints (0.05)"
    )
    watch.add_argument("--once", action="store_true", help="look once, print the state and exit")
    watch.add_argument("--poll", type=_fraction_or_more, default=2.0, metavar="S", help="seconds between looks (2)")
    watch.add_argument(
        "--idle", type=_fraction_or_more, default=None, metavar="S", help="give up after S seconds without new results"
    )
    watch.add_argument("--output", metavar="FILE", help="write the final state as JSON")
    watch.add_argument(
        "--force",
        action="store_true",
        help="replace the --output file though navdtw did not write it or it was changed since (never a read-only one)",
    )


def _fraction(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0 < v < 1:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1 (a fraction), not {text}")
    return v


def _fraction_or_more(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not (v > 0 and math.isfinite(v)):
        raise argparse.ArgumentTypeError(f"must be > 0, not {text}")
    return v


#: The subcommands: their one-line help (all ``navdtw --help`` needs) and what adds their options.
_COMMANDS: dict[str, tuple[str, Any]] = {
    "info": ("which kernels this build and CPU use (as navdtw.show_config())", _info_args),
    "demo": ("score synthetic pairs from the nDTW paper's world (no data needed)", _demo_args),
    # every scored kind's title (tests/test_cli.py checks them against navdtw.datasets.DATASETS)
    "score": ("score predictions on R2R, R4R, R2R-CE, REVERIE, CVDN/NDH, RxR, RxR-CE or positions", _score_args),
    "baseline": ("the nDTW paper's random-walk baseline on a split", _baseline_args),
    "suite": ("run a benchmark suite: many agents on many data sets, with intervals and paired tests", _suite_args),
    "compare": ("compare agents' predictions on one data set (intervals, paired tests)", _compare_args),
    "order": ("a seeded random order of a split's episodes, for an evaluation that may stop early", _order_args),
    "watch": ("follow a running evaluation and stop when its question is answered", _watch_args),
}


def _table_options(parser: argparse.ArgumentParser) -> None:
    """What suite runs and compare share: the metrics reported, the LaTeX form, shared episodes."""
    from .suite import LATEX_FORMS

    parser.add_argument(
        "--metrics",
        metavar="LIST",
        default=None,
        help="the metrics to report, in order, comma-separated (e.g. sr,spl,ndtw; default: all, and "
        "leaderboard.tex the headline ones)",
    )
    parser.add_argument(
        "--latex",
        choices=LATEX_FORMS,
        default=None,
        help="leaderboard.tex: intervals under the means (default) or the means alone (compact)",
    )
    parser.add_argument(
        "--shared-episodes",
        action="store_true",
        help="compare agents on the episodes all of them have (default: an agent missing some fails)",
    )


def _add_dataset_options(parser: argparse.ArgumentParser, *, walks: bool = False) -> None:
    """``--dataset`` and the options of every data set kind (``navdtw.datasets.DATASETS``)."""
    from .datasets import DATASETS

    kinds = [k for k in DATASETS.values() if not walks or k.has_baseline]
    parser.add_argument(
        "--dataset",
        choices=[k.name for k in kinds],
        default=None,
        help="data set kind (default r2r; r2r-ce, rxr-ce or positions when their files are given)",
    )
    seen: dict[str, list] = {}
    for kind in kinds:
        if kind.reads_scores:  # results tables: compared with `navdtw compare`, not scored
            continue
        for opt in kind.options:
            seen.setdefault(opt.name, []).append((kind, opt))
    for name, uses in seen.items():
        opt = uses[0][1]
        metavar = {"file": "FILE", "dir": "DIR", "path": "PATH"}.get(opt.kind, name.upper())
        helps = [f"{k.name}: {o.help}" for k, o in uses]
        text = opt.help if len({o.help for _, o in uses}) == 1 else "; ".join(helps)
        text += f" ({', '.join(k.name for k, _ in uses)})" if len({o.help for _, o in uses}) == 1 else ""
        if opt.choices:
            parser.add_argument(opt.flag, choices=list(opt.choices), default=None, help=text)
        else:
            parser.add_argument(opt.flag, metavar=metavar, default=None, help=text.replace("%", "%%"))


def _open_dataset(args):
    """The data set kind the options name and its :class:`~navdtw.datasets.Benchmark`, opened."""
    from .datasets import DATASETS

    name = args.dataset or _kind_of_files(args)
    kind = DATASETS[name]
    mine = {o.name for o in kind.options}
    for other in {o for k in DATASETS.values() for o in k.options if o.name not in mine}:
        if getattr(args, other.name, None) is not None:
            raise UserError(f"{other.flag} does not apply to --dataset {name} (it takes {_flags(kind)})")
    for opt in kind.options:
        if opt.required and getattr(args, opt.name) is None:
            raise UserError(f"{opt.flag} is required for --dataset {name} ({opt.help})")
    return kind, kind.open(**{o.name: getattr(args, o.name) for o in kind.options})


def _kind_of_files(args) -> str:
    """The kind whose own files are given when --dataset is not: r2r-ce, rxr-ce, positions, else r2r."""
    names = ("vlnce_episodes", "vlnce_gt", "rxrce_episodes", "rxrce_gt", "references")
    given = {name for name in names if getattr(args, name, None) is not None}
    for kind, files in (("r2r-ce", {"vlnce_episodes", "vlnce_gt"}), ("rxr-ce", {"rxrce_episodes", "rxrce_gt"})):
        if given & files:
            return kind
    return "positions" if "references" in given else "r2r"


def _flags(kind) -> str:
    return ", ".join(o.flag for o in kind.options)


# --------------------------------------------------------------------------------------------
# helpers: inputs, outputs, tables
# --------------------------------------------------------------------------------------------


def _need_file(path: str | None, option: str) -> Path:
    if not path:
        raise UserError(f"{option} is required")
    p = Path(path)
    if p.is_dir():
        raise UserError(f"{option} {path}: is a folder, not a file")
    if not p.is_file():
        raise UserError(f"{option} {path}: no such file")
    return p


def _need_dir(path: str | None, option: str) -> Path:
    if not path:
        raise UserError(f"{option} is required")
    p = Path(path)
    if not p.is_dir():
        raise UserError(f"{option} {path}: no such folder")
    return p


def _same(a: Path, b: Path) -> bool:
    try:
        return os.path.realpath(a) == os.path.realpath(b)
    except OSError:  # pragma: no cover
        return False


def _check_out(out: Path, outputs: Sequence[str], inputs: Sequence[Path]) -> None:
    """Refuses an output folder that is, or would overwrite, an input."""
    for p in inputs:
        if _same(out, p):
            raise UserError(f"--out {out}: is an input ({p}); choose another output folder")
        for name in outputs:
            if _same(out / name, p):
                raise UserError(f"--out {out}: writing {name} there would overwrite the input {p}")
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out}: exists and is not a folder")


def _finite_or_none(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


def _jsonable_means(means: dict[str, float]) -> dict[str, float | None]:
    """Means for JSON: non-finite values (an unreachable goal somewhere) become null."""
    return {k: _finite_or_none(v) for k, v in means.items()}


def _rates(scores) -> list[str]:
    return [k for k in scores if scores.metric(k).rate]


def _fmt(value: float, rate: bool) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if math.isinf(value):
        return "inf"
    return f"{value * 100:.2f}" if rate else f"{value:.2f}"


def format_table(rows: Sequence[tuple[str, int | None, dict[str, float]]], *, label: str = "") -> str:
    """A fixed-width table: one row per (name, count, means as fractions), one column per registered
    metric present in a row (registry order), its label over its unit (rates in percent)."""
    from . import registry

    present = [m for m in registry.metrics() if any(m.name in r[2] for r in rows)]
    units = ["%" if m.rate else m.unit for m in present]
    name_w = max([len(label)] + [len(r[0]) for r in rows])
    show_n = any(r[1] is not None for r in rows)
    n_w = max([1] + [len(str(r[1])) for r in rows if r[1] is not None])
    cells = [[_fmt(r[2].get(m.name, float("nan")), m.rate) for m in present] for r in rows]
    widths = [max(len(m.label), len(u), *(len(c[j]) for c in cells)) for j, (m, u) in enumerate(zip(present, units))]
    lead = "  " + " " * n_w if show_n else ""
    head = label.ljust(name_w) + ("  " + "n".rjust(n_w) if show_n else "")
    head += "".join("  " + m.label.rjust(w) for m, w in zip(present, widths))
    unit_line = " " * name_w + lead + "".join("  " + u.rjust(w) for u, w in zip(units, widths))
    lines = [head, unit_line.rstrip(), "-" * len(head)]
    for (name, n, _), row in zip(rows, cells):
        line = name.ljust(name_w) + ("  " + (str(n) if n is not None else "").rjust(n_w) if show_n else "")
        line += "".join("  " + c.rjust(w) for c, w in zip(row, widths))
        lines.append(line)
    return "\n".join(lines)


def _plotting_available() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def _skip_figures_note() -> None:
    print(f"{PROG}: note: figures skipped (matplotlib is not installed: pip install 'navdtw[plot]')", file=sys.stderr)


# --------------------------------------------------------------------------------------------
# demo
# --------------------------------------------------------------------------------------------


def _cmd_demo(args) -> int:
    import numpy as np

    from ._io import atomic_write_json, check_replaceable, output_folder
    from .engine import warping_path
    from .metrics import evaluate
    from .synthetic import PAIR_KINDS, SyntheticWorld

    out = Path(args.out)
    _check_out(out, [], [])
    check_replaceable(
        out, ["summary.json", "episodes.csv", "alignment.png", "pairs_grid.png", "histograms.png"], force=args.force
    )
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
        per_kind[kind] = {"n": int(sel.sum()), "means": _jsonable_means(means)}
    overall = scores.summary()
    rows.append(("all", len(scores), overall))

    print(
        f"navdtw demo: the nDTW paper's synthetic world (seed {args.seed}): {world.num_nodes} nodes, "
        f"{len(world.edges)} edges; {len(refs)} pairs,\nconvention 'paper', success threshold "
        f"{world.threshold:.3f} m. {_scale_note('summary.json and episodes.csv')}"
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
        "metrics_note": f"means over pairs; rates ({', '.join(_rates(scores))}) as fractions in [0, 1] "
        "(the printed table shows them in percent); distances in metres",
        "by_kind": per_kind,
        "means": _jsonable_means(overall),
    }
    with output_folder(out, force=args.force) as stage:
        written = [atomic_write_json(stage / "summary.json", summary)]
        lead = {
            "pair": range(len(refs)),
            "kind": kinds,
            "reference_nodes": [len(r) for r in refs],
            "query_nodes": [len(q) for q in queries],
        }
        written.append(scores.to_csv(stage / "episodes.csv", columns=lead))

        if not args.no_figures:
            if _plotting_available():
                from . import plot

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
                    "DTW alignment (grey lines) between reference and query, one pair of each kind; "
                    "DTW over graph distances"
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
                fig = plot.plot_histograms(
                    scores, title=f"Per-pair metrics ({len(refs)} synthetic pairs)", counts="synthetic pairs"
                )
                written.append(plot.save(fig, stage / "histograms.png"))
            else:
                _skip_figures_note()
    elapsed = time.perf_counter() - t0
    print(f"wrote {', '.join(str(out / p.name) for p in written)} ({elapsed:.1f} s)")
    return 0


# --------------------------------------------------------------------------------------------
# score
# --------------------------------------------------------------------------------------------


def _dataset_values(args) -> list:
    """The files and folders given to the data set options (not the choices)."""
    from .datasets import DATASETS

    names = {o.name for k in DATASETS.values() for o in k.options if o.kind in ("file", "dir", "path")}
    return [getattr(args, n, None) for n in sorted(names) if getattr(args, n, None) is not None]


def _cmd_score(args) -> int:
    import numpy as np

    from . import __version__
    from ._io import atomic_write_json, check_replaceable, output_folder
    from .datasets import DATASETS
    from .metrics import CONVENTIONS

    if args.dataset is not None and DATASETS[args.dataset].reads_scores:
        raise UserError(
            f"--dataset {args.dataset}: a results table holds scores already, there is nothing to score; "
            f"compare tables (one gives its means with intervals): navdtw compare TABLE ... --dataset {args.dataset}"
        )
    pred_file = _need_file(args.predictions, "--predictions")
    out = Path(args.out)
    input_paths = [pred_file] + [Path(v) for v in _dataset_values(args) if isinstance(v, str)]
    outputs = ["summary.json", "episodes.csv", "histograms.png"]
    _check_out(out, outputs, input_paths)
    check_replaceable(out, outputs, force=args.force)
    t0 = time.perf_counter()
    kind, bench = _open_dataset(args)
    try:
        convention = kind.check_convention(args.convention)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UserWarning)
        matched = bench.match(pred_file, convention=convention, strict=args.strict)
        scores = bench.evaluate(
            matched, convention=convention, threshold=args.threshold, strict=args.strict, workers=args.workers
        )
    inputs = {**bench.inputs, "predictions": str(pred_file.resolve())}
    said = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
    start = None if args.strict else matched.start_note(pred_file.name)
    said += [start] if start else []
    infinite = {k: int(np.isinf(scores[k]).sum()) for k in scores if np.isinf(scores[k]).any()}
    if infinite:
        said.append(
            f"{pred_file.name}: unreachable goals: "
            + ", ".join(f"{scores.metric(k).label} inf on {n} episode(s)" for k, n in infinite.items())
            + "; these means are inf (null in summary.json), as the evaluators' are; a suite run or "
            "navdtw compare leaves such episodes out of the mean and counts them"
        )
    said = list(dict.fromkeys(said))
    columns = {matched.id_name: matched.ids, "scan": matched.scans}
    columns.update({k: list(v) for k, v in matched.groups.items()})
    means = scores.summary()
    conv = CONVENTIONS[convention]
    print(
        f"navdtw score: {kind.title}, {len(scores)} episodes, convention {convention!r} ({conv.source}), "
        f"threshold {args.threshold:g} m. {_scale_note('summary.json and episodes.csv')}"
    )
    for note in matched.notes:
        print(f"note: {_term(note)}")
    for w in said:
        print(f"{PROG}: warning: {_term(w)}", file=sys.stderr)
    print()
    rows = [(_term(pred_file.name), len(scores), means)]
    by_group = {}
    for group in matched.groups:
        by_group[group] = scores.summary(by=group)
        counts = {}
        for g in scores.groups[group]:
            counts[str(g)] = counts.get(str(g), 0) + 1
        rows += [(f"  {group} {label}", counts[label], m) for label, m in by_group[group].items() if label != "all"]
    print(format_table(rows, label="predictions"))
    print()
    summary = {
        "command": "score",
        "navdtw_version": __version__,
        "dataset": kind.name,
        "convention": convention,
        "convention_source": conv.source,
        "threshold": args.threshold,
        "n": len(scores),
        "inputs": inputs,
        "strict": bool(args.strict),
        "metrics_note": f"means over episodes; rates ({', '.join(_rates(scores))}) as fractions in [0, 1] "
        "(the printed table shows them in percent); distances in metres; null = not finite (an unreachable goal)",
        "means": _jsonable_means(means),
    }
    if matched.notes:
        summary["notes"] = list(matched.notes)
        summary["left_out"] = list(matched.left_out)
    if said:
        summary["warnings"] = said
    for group, groups in by_group.items():
        summary[f"means_by_{group}"] = {label: _jsonable_means(m) for label, m in groups.items() if label != "all"}
    with output_folder(out, force=args.force) as stage:
        written = [atomic_write_json(stage / "summary.json", summary)]
        written.append(scores.to_csv(stage / "episodes.csv", columns=columns))
        if not args.no_figures:
            if _plotting_available():
                from . import plot

                fig = plot.plot_histograms(
                    scores, title=f"{pred_file.name}: {len(scores)} episodes, convention {convention!r}"
                )
                written.append(plot.save(fig, stage / "histograms.png"))
            else:
                _skip_figures_note()
    print(f"wrote {', '.join(str(out / p.name) for p in written)} ({time.perf_counter() - t0:.1f} s)")
    return 0


# --------------------------------------------------------------------------------------------
# baseline
# --------------------------------------------------------------------------------------------


def _looks_like_r2r_val_unseen(split_file: Path) -> bool:
    name = split_file.name.lower()
    return "r2r" in name and "val_unseen" in name and "r4r" not in name


def _cmd_baseline(args) -> int:
    from . import __version__, registry
    from ._io import atomic_write_json, check_replaceable, output_folder

    out = Path(args.out)
    _check_out(out, ["baseline.json"], [Path(v) for v in _dataset_values(args) if isinstance(v, str)])
    check_replaceable(out, ["baseline.json"], force=args.force)
    kind, bench = _open_dataset(args)
    try:
        convention = kind.check_convention(args.convention)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    chunk = int(min(250_000, max(10_000, -(-args.n // 20))))
    t0 = time.perf_counter()
    means = bench.baseline(
        args.n,
        seed=args.seed,
        threshold=args.threshold,
        convention=convention,
        chunk=chunk,
        progress=not args.no_progress,
        workers=args.workers,
    )
    elapsed = time.perf_counter() - t0
    split = Path(bench.inputs[kind.options[0].name])
    print(
        f"navdtw baseline: {kind.title}, {args.n} random walks over the {bench.n} episodes of "
        f"{split.name}, seed {args.seed}, convention {convention!r}, "
        f"threshold {args.threshold:g} m ({elapsed:.1f} s). {_scale_note('baseline.json')}"
    )
    print()
    rows = [(f"random (navdtw, seed {args.seed})", None, means)]
    paper_row = kind.name == "r2r" and _looks_like_r2r_val_unseen(split)
    if paper_row and convention == "paper":
        paper = {k: (v / 100.0 if registry.get(k).rate else v) for k, v in PAPER_RANDOM_R2R_VAL_UNSEEN.items()}
        rows.append(("random (Ilharco et al. 2019, Table 2)", None, paper))
    print(format_table(rows, label="agent"))
    print()
    if paper_row and convention != "paper":
        print("note: --convention paper adds the nDTW paper's Table 2 row (its definitions) for comparison")
        print()
    result = {
        "command": "baseline",
        "navdtw_version": __version__,
        "dataset": kind.name,
        "n": args.n,
        "seed": args.seed,
        "convention": convention,
        "threshold": args.threshold,
        "inputs": bench.inputs,
        "episodes": bench.n,
        "metrics_note": "means over the random walks; rates "
        f"({', '.join(k for k in means if registry.get(k).rate)}) as fractions in [0, 1] "
        "(the printed table shows them in percent); distances in metres",
        "means": _jsonable_means(means),
    }
    with output_folder(out, force=args.force) as stage:
        atomic_write_json(stage / "baseline.json", result)
    print(f"wrote {out / 'baseline.json'}")
    return 0


# --------------------------------------------------------------------------------------------
# suite runs: suite run, compare
# --------------------------------------------------------------------------------------------

_SUITE_EPILOG = """\
A suite file (TOML) names data sets and agents; paths are relative to it:

  [datasets.r2r_unseen]
  dataset = "r2r"
  split = "data/R2R_val_unseen.json"
  connectivity = "data/connectivity"

  [agents.mine]
  r2r_unseen = "runs/mine_val_unseen.json"

Writes leaderboard.md/.csv/.tex, results.json, episodes.parquet (episodes.csv without
pyarrow) and report.html to --out, all together at the end; files of an earlier run
there that this run does not write are removed (navdtw's own, unchanged ones only).
A file there that navdtw did not write (or that was changed since) is never replaced:
an error names it (--force replaces it; a read-only file, never).
Exit status 1 when some agent's file failed (the others' results are written; see
results.json "failures"), 2 for a bad suite file or input, 3 when an output cannot be
written (nothing half-written), 5 when every agent failed (nothing written). Progress bars
need navdtw[progress] (tqdm).

Example:
  navdtw suite run suite.toml --out suite_results
  navdtw suite run suite.toml --out paper --metrics sr,spl,ndtw --latex compact
"""

_COMPARE_EPILOG = """\
Results tables (--dataset results): per-episode metrics computed by another evaluator,
as JSON Lines, JSON (a list, or an object keyed by episode id), CSV or Parquet; columns
are matched to navdtw's metrics by name (docs/datasets/results.md lists the aliases).

Exit status as for suite run: 1 when some agent failed, 2 for bad input, 3 when an
output cannot be written, 5 when every agent failed (nothing written).

Example:
  navdtw compare mine.json ablation.json --dataset r2r \\
      --split R2R_val_unseen.json --connectivity connectivity/
  navdtw compare mine.jsonl theirs.jsonl --dataset results --column "Oracle SR=osr" \\
      --percent-columns spl,ndtw
  navdtw compare --runs mine='runs/mine_seed*.jsonl' --runs base='runs/base_seed*.jsonl' \\
      --dataset results --reported mine:sr=55.8%,spl=51.2%

Several runs (seeds) of an agent: --runs NAME=FILES (a quoted glob, or a comma-separated
list); the agent's figure is the mean over its runs, its interval covers episodes and runs.
--reported: a paper's figures (rates as fractions, or with %), checked against the means.
"""


def _dataset_options(parser: argparse.ArgumentParser) -> None:
    """The options of every data set kind (--split, --connectivity, ...), each once."""
    from .datasets import DATASETS

    seen: set[str] = set()
    for kind in DATASETS.values():
        for opt in kind.options:
            if opt.name not in seen:
                seen.add(opt.name)
                for flag, extra in opt.cli or ((opt.flag, {}),):
                    spec = {"metavar": opt.kind.upper(), "help": opt.help.replace("%", "%%"), **extra}
                    if spec.get("action") == "store_const":
                        spec.pop("metavar")
                    parser.add_argument(flag, dest=f"ds_{opt.name}", **spec)


def _term(text: str) -> str:
    """A message safe to print (control characters from names and files shown, not acted on)."""
    from .suite.tables import term_escape

    return term_escape(text)


def _print_suite(results: dict, out: Path | None) -> int:
    from .suite import format_leaderboard

    if results["datasets"]:  # else every agent failed: no table, nothing written
        print(format_leaderboard(results))
    for w in results.get("warnings", []):
        who = " on ".join(str(w[k]) for k in ("agent", "dataset") if w.get(k))
        print(_term(f"{PROG}: warning: {who + ': ' if who else ''}{w['message']}"), file=sys.stderr)
    for f in results["failures"]:
        who = " on ".join(str(f[k]) for k in ("agent", "dataset") if f.get(k))
        what = f" ({f['metric']})" if f.get("metric") else ""
        print(_term(f"{PROG}: failed: {who}{what}: {f['error']}"), file=sys.stderr)
    if not results["datasets"]:
        nothing = f"; nothing written to {out}{os.sep}" if out is not None else ""
        print(_term(f"{PROG}: every agent failed{nothing}"), file=sys.stderr)
    written = results.get("outputs")
    if out is not None and written:
        print()
        print(_term(f"wrote {out}{os.sep} ({', '.join(written['files'])})"))
        if written["removed"]:
            print(_term(f"removed the earlier run's {', '.join(written['removed'])} from {out}{os.sep}"))
    if not results["datasets"]:
        return EXIT_ALL_FAILED
    return EXIT_FAILED if results["failures"] else 0


def _suite_overrides(args) -> dict[str, Any]:
    """--metrics, --latex: the run's arguments of the same names."""
    return {"metrics": args.metrics, "latex": args.latex}


def _cmd_suite(args) -> int:
    from .suite import SuiteError, load_suite, run

    out = Path(args.out)
    suite_file = _need_file(args.suite_file, "suite file")
    try:
        suite = load_suite(suite_file, **_suite_overrides(args))
    except SuiteError as exc:
        raise UserError(str(exc)) from None
    if args.shared_episodes:
        suite.settings["episodes"] = "shared"
    inputs = [suite_file] + [
        Path(p) for s in suite.datasets.values() for p in s.options.values() if isinstance(p, Path)
    ]
    inputs += [p for files in suite.agents.values() for paths in files.values() for p in paths]
    from .suite import OUTPUTS

    _check_out(out, OUTPUTS, inputs)
    results = run(
        suite,
        out,
        progress=not args.no_progress,
        report=not args.no_report,
        cache_dir=args.cache,
        max_scenes=args.max_scenes,
        command=[PROG, *args.argv],
        force=args.force,
    )
    return _print_suite(results, out)


def _runs_groups(texts: Sequence[str]) -> dict[str, tuple[Path, ...]]:
    """``--runs NAME=FILES``: each agent's files, one per run (globs expanded, sorted)."""
    from .suite.config import expand_runs

    out: dict[str, tuple[Path, ...]] = {}
    for text in texts:
        name, eq, files = text.partition("=")
        name = name.strip()
        if not eq or not name or not files.strip():
            raise UserError(f"--runs {text}: expected NAME=FILES (a quoted glob, or files separated by commas)")
        if name in out:
            raise UserError(f"--runs {text}: agent {name!r} is given twice")
        try:
            out[name] = expand_runs([f.strip() for f in files.split(",") if f.strip()], Path.cwd())
        except ValueError as exc:
            raise UserError(f"--runs {name}: {exc}") from None
    return out


def _named_files(texts: Sequence[str]) -> dict:
    """Positional predictions, ``FILE`` or ``NAME=FILE`` (a file, or a folder of one run's results):
    ``{name or _Unnamed(position): path}``; the unnamed are named from their paths."""
    out: dict = {}
    for k, text in enumerate(texts):
        name, eq, rest = text.partition("=")
        if eq and name and not Path(text).exists():
            if name in out:
                raise UserError(f"{text}: agent {name!r} is given twice")
            out[name] = _need_path(rest, "predictions")
        else:
            out[_Unnamed(k)] = _need_path(text, "predictions")
    return out


class _Unnamed(int):
    """A positional file without a name: named from its path."""


def _need_path(text: str, option: str) -> Path:
    path = Path(text)
    return path if path.is_dir() else _need_file(text, option)


def _pairs_of(texts: Sequence[str], flag: str, form: str, default: str | None = "") -> dict:
    """``NAME=VALUE`` arguments (repeatable); with ``default`` None, ``VALUE`` alone is the first agent's."""
    out: dict = {}
    for text in texts:
        name, eq, value = text.partition("=")
        if not eq and default is None:
            name, value = None, text
        elif not eq or not name.strip() or not value.strip():
            raise UserError(f"{flag} {text}: expected {form}")
        name = None if name is None else name.strip()
        if name in out:
            raise UserError(f"{flag} {text}: agent {name or 'of the first file'!r} is given twice")
        out[name] = value.strip()
    return out


def _kind_options(args, kind) -> dict[str, Any]:
    """The values of ``kind``'s options given as ``--split`` ... (``_dataset_options``), checked;
    an option of another kind, or a required one missing, is a usage error."""
    from .datasets import DATASETS

    flags = {o.name: o.flag for k in DATASETS.values() for o in k.options}
    given = {o.name for k in DATASETS.values() for o in k.options if getattr(args, f"ds_{o.name}", None) is not None}
    extra = sorted(given - {o.name for o in kind.options})
    if extra:
        raise UserError(f"--dataset {kind.name} does not take {', '.join(flags[e] for e in extra)}")
    options = {}
    for opt in kind.options:
        value = getattr(args, f"ds_{opt.name}", None)
        if value is None and opt.required:
            raise UserError(f"--dataset {kind.name} needs {opt.flag} ({opt.help})")
        if value is not None:
            if opt.kind == "file":
                _need_file(value, opt.flag)
            elif opt.kind == "dir":
                _need_dir(value, opt.flag)
            elif opt.kind == "path" and not Path(value).exists():
                raise UserError(f"{opt.flag} {value}: no such file or folder")
            elif opt.kind == "choice" and value not in opt.choices:
                raise UserError(f"{opt.flag} {value}: choose one of {', '.join(opt.choices)}")
            elif opt.kind in ("text", "value"):
                try:
                    value = opt.read(value)
                except ValueError as exc:
                    raise UserError(f"{opt.flag}: {exc}") from None
            options[opt.name] = value
    return options


def _cmd_compare(args) -> int:
    from .datasets import DATASETS
    from .suite import OUTPUTS, SuiteError, compare

    if args.dataset not in DATASETS:
        raise UserError(f"--dataset {args.dataset}: unknown data set; choose one of {', '.join(DATASETS)}")
    from .suite.runner import agent_names

    kind = DATASETS[args.dataset]
    named = _named_files(args.predictions)
    files = list(named.values())
    runs = _runs_groups(args.runs)
    shards = _pairs_of(args.shards, "--shards", "NAME=FILES (a quoted glob, a folder or files separated by commas)")
    means = _pairs_of(args.reported_from, "--reported-from", "[AGENT=]FILE", default=None)
    if not files and not runs and not shards:
        raise UserError("compare: give predictions files (one per agent), --runs NAME=FILES or --shards NAME=FILES")
    unnamed = [f for key, f in named.items() if isinstance(key, _Unnamed)]
    try:
        made = iter(agent_names(unnamed))
    except SuiteError as exc:
        raise UserError(str(exc)) from None
    predictions: dict[str, Path] = {}
    for key, f in named.items():
        name = next(made) if isinstance(key, _Unnamed) else key
        if name in predictions:
            raise UserError(f"{f}: agent {name!r} is given twice; name each agent: NAME=FILE or --runs NAME=FILE")
        predictions[name] = f
    first = next(iter(predictions)) if predictions else next(iter(runs or shards))
    if None in means:
        means[first] = means.pop(None)
    shards = {n: [t.strip() for t in v.split(",") if t.strip()] for n, v in shards.items()}
    reported: dict[str, str] = {}
    for text in args.reported:
        agent, _, figures = text.rpartition(":") if ":" in text.split("=", 1)[0] else ("", "", text)
        agent = agent or first
        if agent in reported:
            raise UserError(f"--reported {text}: the figures of {agent!r} are given twice")
        reported[agent] = figures
    options = _kind_options(args, kind)
    out = Path(args.out) if args.out else None
    if out is not None:
        paths = [Path(options[o.name]) for o in kind.options if o.kind in ("file", "dir", "path") and o.name in options]
        _check_out(out, OUTPUTS, files + [p for group in runs.values() for p in group] + paths)
    if args.baseline_walks < 0:
        raise UserError(f"--baseline-walks {args.baseline_walks}: expected an integer >= 0")
    settings = {"resamples": args.resamples, "seed": args.seed, "baseline_walks": args.baseline_walks}
    if args.shared_episodes:
        settings["episodes"] = "shared"
    try:
        results = compare(
            predictions,
            dataset=args.dataset,
            out_dir=out,
            convention=args.convention,
            threshold=args.threshold,
            settings=settings,
            progress=not args.no_progress,
            report=not args.no_report,
            max_scenes=args.max_scenes,
            command=[PROG, *args.argv],
            force=args.force,
            runs=runs,
            reported=reported,
            shards=shards,
            reported_from={a: _need_file(f, "--reported-from") for a, f in means.items()},
            **_suite_overrides(args),
            **options,
        )
    except SuiteError as exc:
        raise UserError(str(exc).replace("<suite>: ", "")) from None
    return _print_suite(results, out)


# --------------------------------------------------------------------------------------------
# entry point
# --------------------------------------------------------------------------------------------


def _cmd_order(args) -> int:
    from .order import write_order

    _check_out(Path(args.out), [], [_need_file(args.split, "SPLIT")])
    files = write_order(args.split, args.out, seed=args.seed, workers=args.workers, force=args.force)
    names = ", ".join(p.name for p in files.values())
    print(_term(f"wrote {Path(args.out)}{os.sep} ({names}): seed {args.seed}"))
    return 0


def _split_pairs(values: list[str] | None) -> list[str]:
    return [v.strip() for text in values or [] for v in text.split(",") if v.strip()]


def _cmd_watch(args) -> int:
    import glob

    from ._messages import listed
    from .datasets import DATASETS
    from .datasets._common import not_found
    from .order import load_order
    from .watch import Follower, Watch

    kind = DATASETS.get(args.dataset)
    if kind is None:
        raise UserError(f"--dataset {args.dataset}: unknown data set; choose one of {', '.join(DATASETS)}")
    options = _kind_options(args, kind)
    if kind.reads_scores:
        options["partial"] = True  # the run covers part of the split until it ends: that is the point
    bench = kind.open(**options)
    try:
        convention = kind.check_convention(args.convention)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    if args.output:
        from ._io import check_replaceable

        output = Path(args.output)
        inputs = [Path(s.partition("=")[2] if "=" in s and not os.path.exists(s) else s) for s in args.runs]
        inputs += [Path(args.order), *([Path(args.against)] if args.against else [])]
        for p in inputs:  # a run's folder would read the state as an episode's file
            if _same(output, p) or (p.is_dir() and _same(output.parent, p)):
                raise UserError(f"--output {output}: would be written into the input {p}; choose another file")
        check_replaceable(output.parent, [output.name], force=args.force)  # before the hours of watching

    def follower(path: str, name: str) -> Follower:
        return Follower(path, name=name, bench=bench, convention=convention, threshold=args.threshold)

    runs = {}
    for k, spec in enumerate(args.runs):
        name, sep, path = spec.partition("=")
        if not sep or not name or os.path.exists(spec):
            name, path = (Path(spec.rstrip("/\\")).stem or f"run{k}") if len(args.runs) > 1 else "run", spec
        if name in runs:
            raise UserError(f"two runs are named {name!r}: name them with NAME=FILES")
        if not path:
            raise UserError(f"run {listed([spec])}: no file or folder given (give FILES or NAME=FILES)")
        if args.once and not os.path.lexists(path) and not glob.has_magic(path):
            raise UserError(not_found(path, "path"))  # following would wait for it to appear
        runs[name] = follower(path, name)
    reported = {}
    for item in _split_pairs(args.reported):
        m, sep, v = item.partition("=")
        try:
            value = float(v)
        except ValueError:
            value = math.nan
        if not sep or not 0 <= value <= 1:
            raise UserError(f"--reported {item!r}: give METRIC=FRACTION, e.g. sr=0.564 (not 56.4)")
        reported[m.strip().lower()] = value
    metrics = [m.lower() for m in _split_pairs(args.metric)] or ["sr"]
    against = None
    if args.against:
        if not os.path.lexists(args.against) and not glob.has_magic(args.against):
            raise UserError(f"--against {not_found(args.against, 'path')}")
        base = follower(args.against, Path(args.against.rstrip("/\\")).name)
        base.poll()
        if base.table is None:
            raise UserError(f"--against {args.against}: {base.waiting or 'no episodes'}")
        against = base.table
    try:
        watch = Watch(
            load_order(args.order),
            runs,
            metrics=metrics,
            alpha=args.alpha,
            width=args.width,
            reported=reported,
            against=against,
        )
    except ValueError as exc:
        raise UserError(str(exc)) from None
    live = sys.stdout.isatty() and not args.once
    shown = [0]
    said: set[str] = set()

    def show(lines: list[str]) -> None:
        if not live and not args.once:  # no view to read: say once what is waited for
            for run in runs.values():
                if run.missing and run.name not in said:
                    said.add(run.name)
                    print(_term(f"{PROG} watch: {run.name}: {run.waiting}"), file=sys.stderr, flush=True)
        if live:
            if shown[0]:
                sys.stdout.write(f"\x1b[{shown[0]}F\x1b[J")  # back to the block's first line, clear below
            sys.stdout.write("".join(_term(line) + "\n" for line in lines))
            sys.stdout.flush()
            shown[0] = len(lines)

    decision = watch.run(
        once=args.once, poll=args.poll, idle=args.idle, show=show, output=args.output, force=args.force
    )
    if not live:
        print("\n".join(_term(line) for line in watch.lines()[:-1]))
    code = DECISIONS[decision][0]
    what = watch.message if decision != "undecided" else "not decided yet"
    print(_term(f"{PROG} watch: {what} (exit status {code})"))
    return code


def _cmd_info(args) -> int:
    from ._config import show_config

    show_config()
    return 0


def _one_line(exc: BaseException) -> str:
    from ._io import OutputError

    if isinstance(exc, OSError) and exc.filename is not None and not isinstance(exc, OutputError):
        msg = f"{exc.filename}: {exc.strerror or exc}"
    elif isinstance(exc, KeyError) and type(exc).__str__ is KeyError.__str__ and exc.args:
        msg = str(exc.args[0])  # KeyError's str() would quote the message
    else:
        msg = str(exc) or type(exc).__name__
    return " ".join(msg.split())


def _show_output_warning(shown, category):
    """``warnings.showwarning`` that prints navdtw's warnings about output folders as one line
    ``navdtw: warning: ...`` and leaves the others to ``shown``."""

    def show(message, cat, *args, **kwargs):
        if issubclass(cat, category):
            print(_term(f"{PROG}: warning: {message}"), file=sys.stderr)
        else:
            shown(message, cat, *args, **kwargs)

    return show


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the ``navdtw`` command.

    A mistake in the input (usage, a missing or malformed file or entry) is printed as one line on
    stderr, not raised; so is an output that cannot be written.

    Parameters
    ----------
    argv : sequence of str, optional
        The command line without the program name (default ``sys.argv[1:]``).

    Returns
    -------
    int
        The exit status: 0 success, 1 some (agent, data set) of a suite run or compare failed,
        2 a mistake in the input, 3 an output could not be written, 5 every agent of a suite run
        or compare failed (nothing written), 130 interrupted (:data:`EXIT_STATUS`).
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        parser = _build_parser(lazy=True)
        args = parser.parse_args(argv)  # imports what the command's options need: Ctrl-C may come here
        from ._io import OutputError, OutputWarning  # after parsing: its numpy import is not --help's to pay
    except SystemExit as exc:  # --help, --version, usage errors
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else EXIT_USAGE)
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED

    args.argv = argv
    commands = {
        "info": _cmd_info,
        "demo": _cmd_demo,
        "score": _cmd_score,
        "baseline": _cmd_baseline,
        "suite": _cmd_suite,
        "compare": _cmd_compare,
        "order": _cmd_order,
        "watch": _cmd_watch,
    }
    stdout = sys.stdout
    try:
        sys.stdout = _PipeSafe(stdout)  # `navdtw compare ... --out d | head` still writes d
        with warnings.catch_warnings():
            warnings.simplefilter("always", OutputWarning)
            warnings.showwarning = _show_output_warning(warnings.showwarning, OutputWarning)
            return commands[args.command](args)
    except UserError as exc:
        print(_term(f"{PROG}: error: {_one_line(exc)}"), file=sys.stderr)
    except OutputError as exc:  # names the output, never a temporary file
        print(_term(f"{PROG}: error: {_one_line(exc)}"), file=sys.stderr)
        return EXIT_OUTPUT
    except (ValueError, KeyError, OSError, json.JSONDecodeError) as exc:
        # the readers name the file and the entry in their messages
        print(_term(f"{PROG}: error: {_one_line(exc)}"), file=sys.stderr)
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        sys.stdout = stdout
    return EXIT_USAGE


class _PipeSafe:
    """Standard output that a closed pipe does not stop (``navdtw ... | head``): the rest of what
    is printed goes nowhere, and the command goes on to write its files and exit with its status,
    instead of failing with "Broken pipe" half-way."""

    def __init__(self, stream):
        self._stream = stream
        self._gone = False

    def _closed(self) -> None:
        self._gone = True
        try:  # the stream's buffered text would fail again at exit: point its descriptor at devnull
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._stream.fileno())
            os.close(devnull)
        except (OSError, ValueError):  # a stream without a descriptor (captured): nothing more to do
            pass

    def write(self, text: str) -> int:
        if not self._gone:
            try:
                return self._stream.write(text)
            except BrokenPipeError:
                self._closed()
        return len(text)

    def flush(self) -> None:
        if not self._gone:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._closed()

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
