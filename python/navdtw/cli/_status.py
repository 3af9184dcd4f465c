"""Internal to :mod:`navdtw.cli`: the exit statuses of the ``navdtw`` command, in one place.

What each status means (:data:`EXIT_STATUS`, with the decisions of ``navdtw watch`` from
:mod:`navdtw._decisions`), which statuses each command can end with (:data:`COMMAND_STATUS`: its
``--help`` lists them, and docs/cli.md's table by command is checked against it), and the error a
command raises for a mistake in its input (:class:`UserError`, status 2). No imports but the
decisions' table, so ``navdtw --help`` stays light.
"""

from __future__ import annotations

import textwrap

from .._decisions import DECISIONS, FOREIGN_LIMIT, INTERRUPTED

EXIT_SUCCESS = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_OUTPUT = 3
EXIT_ALL_FAILED = 5
EXIT_NOT_IN_ORDER = 19
EXIT_NOT_RANDOM = 20
EXIT_INTERRUPTED = INTERRUPTED  # 130

#: What each exit status of the ``navdtw`` command means (docs/cli.md).
EXIT_STATUS = {
    EXIT_SUCCESS: "success",
    EXIT_FAILED: "suite run or compare: some (agent, data set), or one agent's metric, failed; the others' "
    "results are written",
    EXIT_USAGE: "a mistake in the input: usage, a missing or malformed file or entry, a bad suite file",
    EXIT_OUTPUT: "an output could not be written (read-only folder, full disk, a file navdtw did not write); "
    "nothing half-written",
    EXIT_ALL_FAILED: "suite run or compare: every agent failed on every data set; nothing was written (the "
    "output folder is as it was)",
    EXIT_INTERRUPTED: "interrupted (Ctrl-C)",
    **dict(DECISIONS.values()),
    EXIT_NOT_IN_ORDER: "watch: the results are not episodes of the order (none of a run's ids is in it, or more than "
    f"{FOREIGN_LIMIT} are not: another split's results, an order of another data set, ids off by one; or a navdtw "
    "episode log written for another order or split); nothing decided",
    EXIT_NOT_RANDOM: "watch: the values are not in a uniformly random order (an order that is not navdtw order's, "
    "such as an id list in an evaluator's scene-by-scene order); nothing decided",
}

#: What a status means in one command's ``--help``, where :data:`EXIT_STATUS` says it of several.
OWN_STATUS: dict[str, dict[int, str]] = {
    "compare": {
        EXIT_FAILED: "compare: an agent, or one agent's metric, failed; the other agents' results are written",
        EXIT_ALL_FAILED: "compare: every agent failed; nothing was written (the output folder is as it was)",
    },
    "suite": {
        EXIT_FAILED: "suite run: some (agent, data set), or one agent's metric, failed; the others' results are "
        "written",
        EXIT_ALL_FAILED: "suite run: every agent failed on every data set; nothing was written (the output folder "
        "is as it was)",
    },
}

_WRITES = (EXIT_SUCCESS, EXIT_USAGE, EXIT_OUTPUT, EXIT_INTERRUPTED)  # a command that writes an output folder
_SUITE = (EXIT_SUCCESS, EXIT_FAILED, EXIT_USAGE, EXIT_OUTPUT, EXIT_ALL_FAILED, EXIT_INTERRUPTED)

#: The statuses each command ends with (``--help`` and ``--version`` end with 0, a usage mistake
#: with 2, whatever the command). ``watch`` ends with its decision's status, 0 never.
COMMAND_STATUS: dict[str, tuple[int, ...]] = {
    "info": (EXIT_SUCCESS, EXIT_USAGE, EXIT_INTERRUPTED),
    "demo": _WRITES,
    "score": _WRITES,
    "baseline": _WRITES,
    "suite": _SUITE,
    "compare": _SUITE,
    "order": _WRITES,
    "watch": tuple(
        sorted(
            {
                EXIT_USAGE,
                EXIT_OUTPUT,
                EXIT_NOT_IN_ORDER,
                EXIT_NOT_RANDOM,
                EXIT_INTERRUPTED,
                *(code for code, _ in DECISIONS.values()),
            }
        )
    ),
}


#: Status 2 in each command's own words (``--help``): what input it reads.
USAGE_BY_COMMAND: dict[str, str] = {
    "info": "a mistake in the input: usage",
    "demo": "a mistake in the input: usage",
    "score": "a mistake in the input: usage, a missing or malformed data set or predictions file or entry",
    "baseline": "a mistake in the input: usage, a missing or malformed data set file or entry",
    "suite": EXIT_STATUS[EXIT_USAGE],
    "compare": "a mistake in the input: usage, a missing or malformed results or data set file or entry",
    "order": "a mistake in the input: usage, a missing or malformed split file or entry",
    "watch": "a mistake in the input: usage, a missing or malformed order or results file or entry, nothing to decide",
}


class UserError(Exception):
    """A mistake in the command's input: reported as one line, exit status 2."""


def status_epilog(command: str) -> str:
    """Internal: the end of ``navdtw COMMAND --help``: the exit statuses the command ends with, one
    a line (wrapped under its meaning)."""
    lines = ["Exit status:"]
    own = OWN_STATUS.get(command, {})
    for code in COMMAND_STATUS[command]:
        text = USAGE_BY_COMMAND[command] if code == EXIT_USAGE else own.get(code, EXIT_STATUS[code])
        lines += textwrap.wrap(text, width=79, initial_indent=f"  {code:<5}", subsequent_indent=" " * 7)
    return "\n".join(lines)
