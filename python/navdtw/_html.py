"""Internal: small HTML tables for notebooks (``_repr_html_``), every text escaped."""

from __future__ import annotations

import html
from collections.abc import Sequence

__all__ = ["html_table"]


def html_table(
    columns: Sequence[str],
    rows: Sequence[tuple[str, Sequence[str]]],
    *,
    units: Sequence[str] | None = None,
    caption: str = "",
) -> str:
    """An HTML ``<table>``: a header row of ``columns`` (and one of ``units`` under it, when given),
    then one row per ``(label, cells)`` with the label as a row header and the cells right-aligned.
    Every text is escaped (``html.escape``), so names from files cannot inject markup."""
    esc = html.escape
    right, left = ' style="text-align: right"', ' style="text-align: left"'
    head = "<tr><th></th>" + "".join(f"<th{right}>{esc(c)}</th>" for c in columns) + "</tr>"
    if units is not None:
        head += "<tr><th></th>" + "".join(f"<th{right}>{esc(u)}</th>" for u in units) + "</tr>"
    body = "".join(
        f"<tr><th{left}>{esc(label)}</th>" + "".join(f"<td{right}>{esc(c)}</td>" for c in cells) + "</tr>"
        for label, cells in rows
    )
    cap = f"<caption>{esc(caption)}</caption>" if caption else ""
    return f"<table>{cap}<thead>{head}</thead><tbody>{body}</tbody></table>"
