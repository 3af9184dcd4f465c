"""Internal to :mod:`navdtw.cli`: the commands, one module each, and their one registry.

:data:`COMMANDS` names each command's module and its one-line summary: all ``navdtw --help``
needs, so no command module is imported until its command is parsed (:func:`load`). A command
module defines ``add_arguments(parser, *, help_only=False)`` (its options, description and
epilog; ``help_only``: the command line asks for ``--help``, so options that would import the
data set kinds may be shown in a lighter form) and ``run(args) -> int`` (the exit status). A new
command is a module here and a line in :data:`COMMANDS`.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import NamedTuple


class Command(NamedTuple):
    """Internal: a command's module (under ``navdtw.cli.commands``) and its line in ``navdtw --help``."""

    module: str
    summary: str


#: The commands, in the order ``navdtw --help`` lists them.
COMMANDS: dict[str, Command] = {
    "info": Command("info", "which kernels this build and CPU use (as navdtw.show_config())"),
    "demo": Command("demo", "score synthetic pairs from the nDTW paper's world (no data needed)"),
    # the kinds are listed by `navdtw score --help`, from navdtw.datasets.DATASETS (read here, they would
    # import numpy for `navdtw --help`)
    "score": Command("score", "score an agent's predictions with every metric, on any data set kind"),
    "baseline": Command("baseline", "the nDTW paper's random-walk baseline on a split"),
    "suite": Command("suite", "run a benchmark suite: many agents on many data sets, with intervals and paired tests"),
    "compare": Command("compare", "compare agents' predictions on one data set (intervals, paired tests)"),
    "order": Command("order", "a seeded random order of a split's episodes, for an evaluation that may stop early"),
    "watch": Command("watch", "follow a running evaluation and stop when its question is answered"),
}


def load(name: str) -> ModuleType:
    """Internal: the module of the command ``name`` (imported on first use)."""
    return importlib.import_module(f"{__name__}.{COMMANDS[name].module}")
