"""Internal to :mod:`navdtw.cli`: the argument parser and the types of its arguments.

:class:`Parser` is argparse with one-line usage errors and options added when a command is first
parsed; :func:`build_parser` assembles the commands of :data:`navdtw.cli.commands.COMMANDS`.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from typing import ClassVar

from .._messages import named
from ._status import EXIT_USAGE, status_epilog
from .commands import COMMANDS, load

PROG = "navdtw"


class Parser(argparse.ArgumentParser):
    """Internal: argparse, but a usage mistake is one line on stderr (status 2) instead of usage +
    error; and a command's options may be added when it is first parsed (``fill``, see
    :func:`make_parser`)."""

    fill = None
    # The innermost parser of the command line being parsed (a subcommand's, set as argparse hands
    # it its arguments), with those arguments: a mistake's message names its options and --help.
    innermost: ClassVar[Parser | None] = None
    args: Sequence[str] = ()

    def parse_known_args(self, args=None, namespace=None):  # type: ignore[override]
        args = list(sys.argv[1:] if args is None else args)
        if self.fill is not None:
            fill, self.fill = self.fill, None
            fill(self, help_only=asks_help(args))
        Parser.innermost, self.args = self, args
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
                return named(name) + (f" (did you mean {close[0]}?)" if close else "")
        return None

    def error(self, message: str):  # type: ignore[override]
        parser = Parser.innermost or self
        misspelt = parser._misspelt()
        if misspelt and message.startswith(("unrecognized", "the following arguments")):
            message = f"unknown option {misspelt}"
        self.exit(EXIT_USAGE, f"{PROG}: error: {message} (see '{parser.prog} --help')\n")


def asks_help(args: Sequence[str]) -> bool:
    """Internal: whether a command line asks for ``--help`` (before any ``--``)."""
    for token in args:
        if token == "--":
            return False
        if token in ("-h", "--help"):
            return True
    return False


def build_parser() -> argparse.ArgumentParser:
    """The ``navdtw`` command's argument parser, with its commands (``info``, ``demo``, ``score``,
    ``baseline``, ``suite``, ``compare``, ``order``, ``watch``); the CLI reference (docs/cli.md)
    is generated from it.

    Returns
    -------
    argparse.ArgumentParser
        A parser whose usage mistakes print one line on stderr and exit with status 2.
    """
    return make_parser(lazy=False)


def make_parser(*, lazy: bool) -> argparse.ArgumentParser:
    """Internal: the parser; with ``lazy``, each command's module is imported and its options (which
    may need the metric registry and the data set kinds, hence numpy and scipy) are added only when
    that command is parsed, so that ``navdtw --help`` and a mistyped command answer without
    importing them."""
    from .. import __version__

    parser = Parser(
        prog=PROG,
        description="Exact DTW / nDTW / SDTW and every navigation metric for vision-and-language navigation.",
        epilog="Example:\n  navdtw demo\n  navdtw score --help\n",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    sub.required = True
    for name, command in COMMANDS.items():
        parser_of = sub.add_parser(name, help=command.summary, formatter_class=argparse.RawDescriptionHelpFormatter)
        if lazy:
            parser_of.fill = _filler(name)
        else:
            _filler(name)(parser_of, help_only=False)
    return parser


def _filler(name: str):
    """What adds the command ``name``'s options, description and epilog (ending with its exit statuses)."""

    def fill(parser: argparse.ArgumentParser, *, help_only: bool) -> None:
        from . import _help_snapshot

        if help_only and name in _help_snapshot.COMMANDS:  # their options would import numpy: as recorded
            from ._help_data import HELP

            _help_snapshot.replay(parser, HELP[name])
        else:
            load(name).add_arguments(parser, help_only=help_only)
        parser.epilog = (parser.epilog.rstrip("\n") + "\n\n" if parser.epilog else "") + status_epilog(name)

    return fill


# --------------------------------------------------------------------------------------------
# argument types: each reads one value or raises argparse.ArgumentTypeError saying what it expected
# --------------------------------------------------------------------------------------------


def positive_int(text: str) -> int:
    """Internal: an integer >= 1 (``1_000`` allowed)."""
    try:
        value = int(text.replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def seed(text: str) -> int:
    """Internal: a seed, an integer in [0, 2**63)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}") from None
    if not 0 <= value < 2**63:
        raise argparse.ArgumentTypeError(f"expected an integer in [0, 2**63), got {text!r}")
    return value


def threshold(text: str) -> float:
    """Internal: --threshold, checked by the engine's own rule (``check_threshold``)."""
    from ..engine import check_threshold

    try:
        return check_threshold(float(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a finite distance > 0 (metres), got {text!r}") from None


def workers(text: str) -> int:
    """Internal: --workers, checked by the engine's own rule (``resolve_workers``); -1 is kept as -1."""
    from ..engine import MAX_WORKERS, resolve_workers

    try:
        value = int(text)
        resolve_workers(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected -1 (all cores) or an integer from 1 to {MAX_WORKERS}, got {text!r}"
        ) from None
    return value


def fraction(text: str) -> float:
    """Internal: a number strictly between 0 and 1."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0 < v < 1:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1 (a fraction), not {text}")
    return v


def fraction_or_more(text: str) -> float:
    """Internal: a finite number > 0 (seconds)."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not (v > 0 and math.isfinite(v)):
        raise argparse.ArgumentTypeError(f"must be > 0, not {text}")
    return v
