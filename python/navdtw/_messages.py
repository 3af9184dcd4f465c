"""Internal: how error messages show a value the caller gave."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np


def shown(value: Any) -> str:
    """``repr(value)`` with numpy scalars (also inside a tuple or list) as the plain numbers they
    hold: ``3``, not ``np.int64(3)``; a string keeps its quotes (``'3'``), so a number given as text
    still shows as text."""
    if isinstance(value, np.generic):
        return repr(value.item())
    if isinstance(value, (tuple, list)):
        items = [v.item() if isinstance(v, np.generic) else v for v in value]
        return repr(tuple(items) if isinstance(value, tuple) else items)
    return repr(value)


def listed(names: Iterable[Any], limit: int | None = None) -> str:
    """Names joined by ", " for a message, each bare when that is unambiguous and quoted
    (``repr``) when it is empty, holds a comma, a control character or outer spaces: a column
    named ``"a\\nb"`` must not break a one-line message in two. ``limit`` shows the first names
    and says how many more there are."""
    names = list(names)
    shown_names = names if limit is None else names[:limit]

    def one(name: Any) -> str:
        text = str(name)
        plain = text and text.isprintable() and "," not in text and text == text.strip()
        return text if plain else repr(text)

    more = len(names) - len(shown_names)
    return ", ".join(map(one, shown_names)) + (f", … ({more} more)" if more > 0 else "")


def named(name: Any) -> str:
    """One name as :func:`listed` shows it: bare when plain, else quoted (``'a\\nb'``)."""
    return listed([name])
