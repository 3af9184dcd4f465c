"""Internal: how messages show what the caller gave, the one display rule of the package.

A value (:func:`shown`, :func:`clipped`), a user's name or path (:func:`named`), several names
(:func:`listed`, :func:`few`) and text to copy into a command line (:func:`quoted`), each on one
line whatever it holds, with one ellipsis (:data:`ELLIPSIS`). Imports nothing heavy: the command
line's own errors use it before numpy is loaded.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from typing import Any


def _plain(value: Any) -> Any:
    """A numpy scalar as the Python number it holds; anything else as it is (numpy is looked up,
    not imported: without it loaded there is no numpy scalar)."""
    np = sys.modules.get("numpy")
    return value.item() if np is not None and isinstance(value, np.generic) else value


def shown(value: Any) -> str:
    """``repr(value)`` with numpy scalars (also inside a tuple or list) as the plain numbers they
    hold: ``3``, not ``np.int64(3)``; a string keeps its quotes (``'3'``), so a number given as text
    still shows as text."""
    if isinstance(value, (tuple, list)):
        items = [_plain(v) for v in value]
        return repr(tuple(items) if isinstance(value, tuple) else items)
    return repr(_plain(value))


#: The one ellipsis of messages: what a list or a value cut short ends with.
ELLIPSIS = "…"


def clipped(value: Any, width: int = 40) -> str:
    """:func:`shown` cut to ``width`` characters, the cut marked by :data:`ELLIPSIS`: a long value
    in a one-line message (``'goal' must be a point, got [[1, 2, 3], [4, …``)."""
    text = shown(value)
    return text if len(text) <= width else text[: width - 1] + ELLIPSIS


def named(name: Any) -> str:
    """A user's name or path (an id, a column, a file, an agent) as every message shows it, the
    one display rule: bare when that is unambiguous, else quoted as Python's ``repr`` when it is
    empty, holds a comma, a line break or another control character, or outer spaces, so a name
    such as ``"a\nb"`` cannot break a one-line message in two nor read as two names."""
    text = str(name)
    plain = text and text.isprintable() and "," not in text and text == text.strip()
    return text if plain else repr(text)


def listed(names: Iterable[Any], limit: int | None = None) -> str:
    """Names joined by ", " for a message, each as :func:`named` shows it. ``limit`` shows the first
    names and says how many more there are: ``"c0, c1, … (3 more)"``."""
    names = list(names)
    shown_names = names if limit is None else names[:limit]
    more = len(names) - len(shown_names)
    return ", ".join(map(named, shown_names)) + (f", {ELLIPSIS} ({more} more)" if more > 0 else "")


def few(names: Sequence[Any], limit: int = 5) -> str:
    """Up to ``limit`` names and the count, as messages list the ids a problem concerns:
    ``"7_1, 9_0 (2 in all)"``, ``"0, 1, 2, 3, 4, … (7 in all)"``."""
    head = ", ".join(named(n) for n in names[:limit])
    return head + (f", {ELLIPSIS}" if len(names) > limit else "") + f" ({len(names)} in all)"


def quoted(text: str) -> str:
    """A user's text to copy into a command line (``--column 'Oracle SR=osr'``): in single quotes,
    as a shell reads it, when that is exact and one line; else (a quote, a line break, a control
    character) as Python's ``repr``."""
    return f"'{text}'" if text.isprintable() and "'" not in text else repr(text)


def no_column(name: str, columns: Iterable[Any], known: Iterable[str] = ()) -> str:
    """``no column for 'ndwt' (did you mean ndtw?) (they have sr, ndtw)``: a metric asked of tables
    that lack it, with the closest column when it looks like a typo (the rule of ``--metrics``);
    none for a name in ``known`` (``osr`` is a metric of its own, not a typo of ``sr``)."""
    from difflib import get_close_matches

    columns = [str(c) for c in columns]
    close = [] if name in set(known) else get_close_matches(str(name).lower(), columns, n=1, cutoff=0.75)
    hint = f" (did you mean {named(close[0])}?)" if close else ""
    return f"no column for {name!r}{hint} (they have {listed(columns)})"
