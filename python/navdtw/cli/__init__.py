"""The ``navdtw`` command: ``info``, ``demo``, ``score``, ``baseline``, ``suite run``, ``compare``,
``order`` and ``watch``.

``main(argv=None) -> int`` is the console entry point (``navdtw = "navdtw.cli:main"``); it returns
the exit status instead of exiting, so it can be called from Python and tests. Every mistake in the
user's input (missing or malformed file, unknown scan or viewpoint, missing predictions, bad
numbers) prints one line ``navdtw: error: <file>: <what is wrong>`` to stderr and returns 2; an
output that cannot be written (a read-only folder, a full disk) prints one line naming the output
and returns 3 (:data:`EXIT_STATUS`).

The package (docs/design.md): ``commands/`` holds one module per command and their one registry
(name, module, summary), imported when its command is parsed, so ``navdtw --help`` imports
neither numpy nor scipy; ``_parser`` the parser and the argument types; ``_status`` the exit
statuses; ``_options`` the options several commands share; ``_files`` the checks of the files a
command line names; ``_output`` what the commands print and write.
"""

from __future__ import annotations

import json
import sys
import warnings
from collections.abc import Sequence

from ._output import PipeSafe, one_line, show_output_warning, term
from ._parser import PROG, build_parser, make_parser
from ._status import EXIT_INTERRUPTED, EXIT_OUTPUT, EXIT_USAGE, UserError
from .commands import load

# Internal names that tests and tools read from the package (not in __all__).
from ._output import format_table  # noqa: F401  isort: skip
from ._status import EXIT_ALL_FAILED, EXIT_FAILED, EXIT_SUCCESS  # noqa: F401  isort: skip
from . import _status  # isort: skip

__all__ = ["UserError", "build_parser", "main"]

#: What each exit status of the ``navdtw`` command means (docs/cli.md, whose table by command, as
#: each command's ``--help``, says which statuses the command ends with).
EXIT_STATUS = _status.EXIT_STATUS


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
        or compare failed (nothing written), 4 and 10-18 the decisions of ``navdtw watch``, 19 its
        results not episodes of the order, 130
        interrupted (:data:`EXIT_STATUS`; each command's ``--help`` lists its own).
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        parser = make_parser(lazy=True)
        args = parser.parse_args(argv)  # imports what the command's options need: Ctrl-C may come here
        from .._io import OutputError, OutputWarning  # after parsing: its numpy import is not --help's to pay
    except SystemExit as exc:  # --help, --version, usage errors
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else EXIT_USAGE)
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED

    args.argv = argv
    stdout = sys.stdout
    try:
        sys.stdout = PipeSafe(stdout)  # `navdtw compare ... --out d | head` still writes d
        with warnings.catch_warnings():
            warnings.simplefilter("always", OutputWarning)
            warnings.showwarning = show_output_warning(warnings.showwarning, OutputWarning)
            return load(args.command).run(args)
    except UserError as exc:
        print(term(f"{PROG}: error: {one_line(exc)}"), file=sys.stderr)
    except OutputError as exc:  # names the output, never a temporary file
        print(term(f"{PROG}: error: {one_line(exc)}"), file=sys.stderr)
        return EXIT_OUTPUT
    except (ValueError, KeyError, OSError, json.JSONDecodeError) as exc:
        # the readers name the file and the entry in their messages
        print(term(f"{PROG}: error: {one_line(exc)}"), file=sys.stderr)
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        sys.stdout = stdout
    return EXIT_USAGE


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
