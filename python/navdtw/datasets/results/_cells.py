"""Internal to :mod:`navdtw.datasets.results`: the cells of a table as read, turned into values: a
column's numbers (missing cells, CSV's text, JSON's numbers beyond float's range), ids and text."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..._messages import clipped

#: Internal: the Python types of a JSON cell that holds a number (None: missing).
NUMBER_TYPES = frozenset({int, float, bool, type(None)})


class Overflow(str):
    """Internal: a JSON number beyond float's range (``1e400``) as written: a corrupt value, refused
    by name (only the evaluators' ``Infinity`` token means an unreachable goal)."""


@dataclass
class _Column:
    """One raw column, classified: ``values`` float64 (NaN where missing) when every value is a
    number; else ``bad`` is the first entry that is not."""

    values: np.ndarray | None
    bad: int | None = None
    text: bool = False  # no number at all (a text column)
    overflow: bool = False  # ``bad`` is a number beyond float's range (1e400): refused in any column


def classify(raw, text_parsed: bool, stop_at_text: bool) -> _Column:
    """Internal: ``raw``'s values as numbers. ``stop_at_text``: a column whose first value is text is text
    (the whole column is not scanned)."""
    if isinstance(raw, np.ndarray):
        return _Column(np.array(raw, dtype=np.float64))  # a writable copy
    if not text_parsed:
        kinds = set(map(type, raw))
        if kinds <= NUMBER_TYPES:
            try:
                return _Column(np.array(raw, dtype=np.float64))
            except OverflowError:  # an int beyond float's range (a 400-digit integer): corrupt
                return _Column(None, bad=next(k for k, v in enumerate(raw) if not _fits(v)), overflow=True)
        for k, v in enumerate(raw):
            if type(v) is Overflow:
                return _Column(None, bad=k, overflow=True)
            if type(v) not in NUMBER_TYPES:
                numbers = any(type(x) in NUMBER_TYPES and x is not None for x in raw)
                return _Column(None, bad=k, text=not numbers)
        raise AssertionError("unreachable")  # pragma: no cover
    try:
        out = np.array(raw, dtype=np.float64)
    except ValueError:
        pass
    else:
        return _overflow_cells(out, raw) or _Column(out)
    out = np.empty(len(raw))
    seen_number = False
    for k, v in enumerate(raw):
        s = v.strip()
        low = s.lower()
        if not s or low in ("null", "none", "na", "n/a"):
            out[k] = np.nan
            continue
        if low in ("true", "false"):
            out[k] = float(low == "true")
        else:
            try:
                out[k] = float(s)
            except ValueError:
                return _Column(None, bad=k, text=not seen_number and (stop_at_text or _no_numbers(raw[k:])))
        seen_number = True
    return _overflow_cells(out, raw) or _Column(out)


#: CSV cells that mean an infinity (``inf``); any other text that float() takes to one is beyond
#: float's range (``1e400``, a 400-digit integer)
_INF_TEXT = frozenset({"inf", "+inf", "-inf", "infinity", "+infinity", "-infinity"})


def _overflow_cells(values: np.ndarray, raw: Sequence[str]) -> _Column | None:
    for k in np.flatnonzero(np.isinf(values)).tolist():
        if raw[k].strip().lower() not in _INF_TEXT:
            return _Column(None, bad=k, overflow=True)
    return None


def _fits(v) -> bool:
    try:
        float(v) if v is not None else None
    except OverflowError:
        return False
    return True


def _no_numbers(values: Sequence[str]) -> bool:
    for v in values:
        try:
            float(v)
            return False
        except ValueError:
            pass
    return True


def ids_of(raw, raw_table, column: str) -> list[str]:
    """Internal: the ids of the column ``raw`` of a table as read (``raw_table``, a
    :class:`~navdtw.datasets.results._readers.Raw`: its name, entries and whether its cells are
    text) as strings; ``12``, ``12.0`` and ``"12"`` are the same id."""
    name = raw_table.name
    if isinstance(raw, np.ndarray):
        if raw.dtype.kind in "iu":
            return [str(x) for x in raw.tolist()]
        vals = raw.tolist()
    else:
        vals = raw
    out = []
    for k, v in enumerate(vals):
        if type(v) is str:
            s = v.strip() if raw_table.text_parsed else v
            if s:
                out.append(s)
                continue
        elif type(v) is int:
            out.append(str(v))
            continue
        elif type(v) is float and math.isfinite(v) and v.is_integer():
            out.append(str(int(v)))
            continue
        where = f"{name}: {raw_table.entry(k)}"
        raise ValueError(f"{where}: {column!r} must be a string or an integer id, got {clipped(v)}")
    return out


def text_of(raw, n: int) -> list[str]:
    """Internal: a column's values as text (``""`` where missing)."""
    if isinstance(raw, np.ndarray):
        return ["" if not math.isfinite(x) else str(x) for x in raw.tolist()]
    return ["" if v is None else str(v) for v in raw]


def all_missing(values) -> bool:
    """Internal: every value missing: NaN (Parquet), None (JSON) or an empty cell (CSV)."""
    if isinstance(values, np.ndarray):
        return values.dtype.kind == "f" and bool(np.isnan(values).all())
    return all(
        v is None or (isinstance(v, float) and math.isnan(v)) or (isinstance(v, str) and not v.strip()) for v in values
    )
