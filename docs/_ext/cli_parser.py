"""``navdtw.cli.build_parser()`` as the CLI reference shows it.

sphinx-argparse reads descriptions and epilogs as reStructuredText, but navdtw's are preformatted
for the terminal (``RawDescriptionHelpFormatter``: aligned examples and tables). This returns the
same parser with each preformatted text turned into a literal block, so the page shows it as
``navdtw COMMAND --help`` does.
"""

from __future__ import annotations

import argparse
import textwrap

from navdtw.cli import build_parser


def _literal(text: str) -> str:
    return "::\n\n" + textwrap.indent(textwrap.dedent(text).strip("\n"), "   ") + "\n"


def _walk(parser: argparse.ArgumentParser) -> None:
    if issubclass(parser.formatter_class, argparse.RawDescriptionHelpFormatter) and parser.epilog:
        parser.epilog = _literal(parser.epilog)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                _walk(sub)


def parser() -> argparse.ArgumentParser:
    p = build_parser()
    _walk(p)
    return p
