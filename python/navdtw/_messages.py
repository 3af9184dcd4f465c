"""Internal: how error messages show a value the caller gave."""

from __future__ import annotations

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
