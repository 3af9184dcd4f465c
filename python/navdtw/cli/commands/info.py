"""Internal to :mod:`navdtw.cli`: ``navdtw info``, the build and the kernels in use."""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser, *, help_only: bool = False) -> None:
    """Internal: the command's description (it has no options)."""
    parser.description = "Print navdtw's version, the compiled engine's build and the SIMD kernel in use."


def run(args: argparse.Namespace) -> int:
    """Internal: prints :func:`navdtw.show_config`."""
    from ..._config import show_config

    show_config()
    return 0
