"""Internal to :mod:`navdtw.cli`: ``navdtw suite run``, every agent of a suite file on every data set."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from .. import _options
from .._files import check_out, need_file
from .._output import print_suite
from .._parser import PROG, Parser
from .._status import UserError, status_epilog

EPILOG = """\
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
With exit status 1 some agent's file failed: the others' results are written (see
results.json "failures"). Progress bars need navdtw[progress] (tqdm).

Example:
  navdtw suite run suite.toml --out suite_results
  navdtw suite run suite.toml --out paper --metrics sr,spl,ndtw --latex compact
"""


def add_arguments(parser: argparse.ArgumentParser, *, help_only: bool = False) -> None:
    """Internal: ``suite`` and its subcommand ``run`` with its options."""
    parser.description = "Benchmark suites (see docs/suite.md)."
    parser.epilog = EPILOG
    suite_sub = parser.add_subparsers(dest="suite_command", metavar="SUBCOMMAND", parser_class=Parser)
    suite_sub.required = True
    suite_run = suite_sub.add_parser(
        "run",
        help="score every agent on every data set of a suite file and compare them",
        description="Score every (agent, data set) pair of a suite file; write leaderboards, results.json, "
        "per-episode values and report.html.",
        epilog=EPILOG + "\n" + status_epilog("suite"),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    suite_run.add_argument("suite_file", metavar="SUITE.toml", help="the suite file")
    _options.add_out(suite_run, "navdtw_suite")
    suite_run.add_argument("--cache", metavar="DIR", help="baseline cache folder (default DIR/.cache)")
    _options.add_progress_options(
        suite_run, report="do not write report.html", scenes="episode maps per data set in the report (default 500)"
    )
    _options.add_table_options(suite_run)


def overrides(args: argparse.Namespace) -> dict[str, Any]:
    """Internal: --metrics, --latex: the run's arguments of the same names (suite run, compare)."""
    return {"metrics": args.metrics, "latex": args.latex}


def run(args: argparse.Namespace) -> int:
    """Internal: runs the suite file and prints its leaderboards."""
    from ...suite import OUTPUTS, SuiteError, load_suite
    from ...suite import run as run_suite

    out = Path(args.out)
    suite_file = need_file(args.suite_file, "suite file")
    try:
        suite = load_suite(suite_file, **overrides(args))
    except SuiteError as exc:
        raise UserError(str(exc)) from None
    if args.shared_episodes:
        suite.settings["episodes"] = "shared"
    inputs = [suite_file] + [
        Path(p) for s in suite.datasets.values() for p in s.options.values() if isinstance(p, Path)
    ]
    inputs += [p for files in suite.agents.values() for paths in files.values() for p in paths]
    check_out(out, OUTPUTS, inputs)
    results = run_suite(
        suite,
        out,
        progress=not args.no_progress,
        report=not args.no_report,
        cache_dir=args.cache,
        max_scenes=args.max_scenes,
        command=[PROG, *args.argv],
        force=args.force,
    )
    return print_suite(results, out)
