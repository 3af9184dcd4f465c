"""Internal to :mod:`navdtw.cli`: what the commands print and write.

The printed tables (:func:`format_table`: columns, labels and units from the metric registry,
rates in percent, distances in metres), messages safe to print (:func:`term`), the one-line
warnings and errors, a standard output that a closed pipe does not stop (:class:`PipeSafe`), a
suite run's or comparison's report on the terminal (:func:`print_suite`), and the output folders of
``demo``, ``score`` and ``baseline`` (:func:`write_folder`: staged, then switched in as one step
with the manifest, as every output folder of navdtw is, by :func:`navdtw._io.output_folder`).
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ._parser import PROG
from ._status import EXIT_ALL_FAILED, EXIT_FAILED

# --------------------------------------------------------------------------------------------
# messages
# --------------------------------------------------------------------------------------------


def term(text: str) -> str:
    """Internal: a message safe to print (control characters from names and files shown, not acted on)."""
    from ..suite.tables import term_escape

    return term_escape(text)


def warn(text: str) -> None:
    """Internal: ``navdtw: warning: TEXT`` on stderr."""
    print(f"{PROG}: warning: {term(text)}", file=sys.stderr)


def one_line(exc: BaseException) -> str:
    """Internal: an exception's message on one line (an ``OSError`` names its file)."""
    from .._io import OutputError

    if isinstance(exc, OSError) and exc.filename is not None and not isinstance(exc, OutputError):
        msg = f"{exc.filename}: {exc.strerror or exc}"
    elif isinstance(exc, KeyError) and type(exc).__str__ is KeyError.__str__ and exc.args:
        msg = str(exc.args[0])  # KeyError's str() would quote the message
    else:
        msg = str(exc) or type(exc).__name__
    return " ".join(msg.split())


def show_output_warning(shown, category):
    """Internal: ``warnings.showwarning`` that prints navdtw's warnings about output folders as one
    line ``navdtw: warning: ...`` and leaves the others to ``shown``."""

    def show(message, cat, *args, **kwargs):
        if issubclass(cat, category):
            print(term(f"{PROG}: warning: {message}"), file=sys.stderr)
        else:
            shown(message, cat, *args, **kwargs)

    return show


class PipeSafe:
    """Internal: standard output that a closed pipe does not stop (``navdtw ... | head``): the rest
    of what is printed goes nowhere, and the command goes on to write its files and exit with its
    status, instead of failing with "Broken pipe" half-way."""

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


# --------------------------------------------------------------------------------------------
# tables and numbers
# --------------------------------------------------------------------------------------------


def scale_note(files: str) -> str:
    """Internal: the units of the printed tables, and of the files ``files``."""
    return f"Rates in percent, distances in metres\n({files}: rates as fractions)."


def finite_or_none(x: float) -> float | None:
    """Internal: ``x``, or None when it is not finite (JSON)."""
    return float(x) if math.isfinite(x) else None


def jsonable_means(means: dict[str, float]) -> dict[str, float | None]:
    """Internal: means for JSON: non-finite values (an unreachable goal somewhere) become null."""
    return {k: finite_or_none(v) for k, v in means.items()}


def rates(scores) -> list[str]:
    """Internal: the names of the rates among ``scores``' metrics."""
    return [k for k in scores if scores.metric(k).rate]


def _fmt(value: float, rate: bool) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if math.isinf(value):
        return "inf"
    return f"{value * 100:.2f}" if rate else f"{value:.2f}"


def format_table(
    rows: Sequence[tuple[str, int | None, dict[str, float]]], *, label: str = "", records: Sequence[Any] = ()
) -> str:
    """Internal: a fixed-width table: one row per (name, count, means as fractions), one column per
    registered metric present in a row (registry order), then per metric of ``records`` (a kind's
    own, not registered: IVLN-CE's t-nDTW), its label over its unit (rates in percent)."""
    from .. import registry

    known = set(registry.names())
    present = [m for m in [*registry.metrics(), *(r for r in records if r.name not in known)]
               if any(m.name in r[2] for r in rows)]  # fmt: skip
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


# --------------------------------------------------------------------------------------------
# suite runs and comparisons
# --------------------------------------------------------------------------------------------


def print_suite(results: dict, out: Path | None) -> int:
    """Internal: a suite run's or comparison's leaderboard, warnings, failures and files written;
    returns the exit status (0, 1 some failed, 5 every agent failed)."""
    from ..suite import format_leaderboard

    if results["datasets"]:  # else every agent failed: no table, nothing written
        print(format_leaderboard(results))
    for w in results.get("warnings", []):
        who = " on ".join(str(w[k]) for k in ("agent", "dataset") if w.get(k))
        print(term(f"{PROG}: warning: {who + ': ' if who else ''}{w['message']}"), file=sys.stderr)
    for f in results["failures"]:
        who = " on ".join(str(f[k]) for k in ("agent", "dataset") if f.get(k))
        what = f" ({f['metric']})" if f.get("metric") else ""
        print(term(f"{PROG}: failed: {who}{what}: {f['error']}"), file=sys.stderr)
    if not results["datasets"]:
        nothing = f"; nothing written to {out}{os.sep}" if out is not None else ""
        print(term(f"{PROG}: every agent failed{nothing}"), file=sys.stderr)
    written = results.get("outputs")
    if out is not None and written:
        print()
        print(term(f"wrote {out}{os.sep} ({', '.join(written['files'])})"))
        if written["removed"]:
            print(term(f"removed the earlier run's {', '.join(written['removed'])} from {out}{os.sep}"))
    if not results["datasets"]:
        return EXIT_ALL_FAILED
    return EXIT_FAILED if results["failures"] else 0


# --------------------------------------------------------------------------------------------
# output folders
# --------------------------------------------------------------------------------------------


def plotting_available() -> bool:
    """Internal: whether matplotlib can be imported."""
    from .._optional import import_optional

    return import_optional("matplotlib", "figures", errors="ignore") is not None


def skip_figures_note() -> None:
    """Internal: the note that figures are skipped without matplotlib."""
    from .._optional import install_hint

    print(f"{PROG}: note: figures skipped (matplotlib is not installed: {install_hint('matplotlib')})", file=sys.stderr)


def write_folder(
    out: Path,
    summary: dict[str, Any],
    *,
    summary_name: str = "summary.json",
    scores=None,
    columns: dict[str, Any] | None = None,
    figures: Callable[[Path], list[Path]] | None = None,
    force: bool = False,
) -> list[Path]:
    """Internal: a command's outputs switched into the folder ``out`` in one step, with the manifest
    (:func:`navdtw._io.output_folder`): ``summary`` as JSON (``summary_name``), with ``scores`` one
    row per episode in ``episodes.csv`` (``columns`` first), and the figures that ``figures(stage)``
    draws into the staging folder (a note instead when matplotlib is missing). Returns the paths
    written, as named in the staging folder (their names are the outputs' names).

    Raises :class:`navdtw._io.OutputError` naming the output when a file may not be replaced or
    cannot be written: ``out`` is then as it was."""
    from .._io import atomic_write_json, output_folder

    with output_folder(out, force=force) as stage:
        written = [atomic_write_json(stage / summary_name, summary)]
        if scores is not None:
            written.append(scores.to_csv(stage / "episodes.csv", columns=columns))
        if figures is not None:
            if plotting_available():
                written += figures(stage)
            else:
                skip_figures_note()
    return written
