"""Internal to :mod:`navdtw.datasets.results`: the column names a results table is read by (ids, paths,
scans, groups), the evaluators' names of navdtw's metrics (:data:`ALIASES`), the known columns that are
not metrics, and the options that map columns (``columns``, ``percent``, ``select``)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from ... import registry
from ...metrics import Convention
from .._common import ID_COLUMNS

__all__ = [
    "ALIASES",
    "EXTERNAL",
    "EXTRA_COLUMNS",
    "ID_COLUMNS",
    "parse_columns",
    "parse_percent",
    "parse_select",
]

#: Column names that hold the path an episode follows (episodes on one path are resampled together).
PATH_COLUMNS: tuple[str, ...] = ("path_id", "trajectory_id")
#: Column names that hold the scan (``scene_id`` paths such as ``mp3d/X/X.glb`` give ``X``).
SCAN_COLUMNS: tuple[str, ...] = ("scan", "scene_id", "scan_id", "scene")
#: Column names whose labels become ``groups`` (``summary(by="language")``).
GROUP_COLUMNS: tuple[str, ...] = ("language",)

#: The evaluators' column names (lowercase, spaces and dashes as ``_``) -> the registry metric they hold.
#: A column named as the metric itself (``sr``, ``NE``, ``nDTW``) is that metric too. docs/datasets/results.md
#: lists where each name comes from.
ALIASES: dict[str, str] = {
    # success: VLN-CE / habitat, VLN-DUET / HAMT, HA-VLN (its strict SR is the column SR)
    "success": "sr",
    "success_rate": "sr",
    # oracle success: VLN-CE / habitat, VLN-DUET, RxR-CE logs (os)
    "os": "osr",
    "oracle_success": "osr",
    "oracle_sr": "osr",
    "oracle_success_rate": "osr",
    # navigation error: habitat distance_to_goal, VLN-DUET nav_error, R2R / CVDN evaluators nav_errors
    "distance_to_goal": "ne",
    "nav_error": "ne",
    "nav_errors": "ne",
    "navigation_error": "ne",
    # oracle navigation error: VLN-DUET oracle_error, R2R / CVDN oracle_errors, VLN-CE, aerial VLN oracle_ne
    "oracle_error": "one",
    "oracle_errors": "one",
    "oracle_navigation_error": "one",
    "oracle_ne": "one",
    # path length: VLN-CE path_length, VLN-DUET / R2R trajectory_lengths, DUET's summary lengths, TL in papers
    "path_length": "pl",
    "trajectory_length": "pl",
    "trajectory_lengths": "pl",
    "lengths": "pl",
    "tl": "pl",
    # goal progress: CVDN dist_to_end_reduction(s), VLN-DUET gp / goal_progress
    "goal_progress": "gp",
    "dist_to_end_reduction": "gp",
    "dist_to_end_reductions": "gp",
    # steps: VLN-CE steps_taken (not a registry metric: kept as "steps", no direction)
    "steps_taken": "steps",
}

#: Known columns that are not registry metrics, each with (higher is better, is a rate).
EXTRA_COLUMNS: dict[str, tuple[bool | None, bool]] = {
    "steps": (None, False),  # actions taken (VLN-CE steps_taken)
    "oracle_spl": (True, True),  # VLN-CE OracleSPL
    "tcr": (False, False),  # HA-VLN: collisions beyond the unavoidable ones
    "cr": (False, True),  # HA-VLN: any such collision (0/1)
    "vlnpe_ndtw": (True, True),  # VLN-PE's "ndtw": a mean of exp(-d^2 / 18) in [0, 1], not DTW (layouts.py)
}

#: The convention of every results table, ``"external"``. The values are the table's evaluator's and
#: navdtw computes none, so nothing of it applies but the name.
EXTERNAL = Convention("external", False, "shortest", source="the evaluator that wrote the table")

#: Internal: the ``columns`` targets that keep a column under its own name, with its direction
#: (higher / lower is better).
DIRECTIONS = {"+": True, "-": False}
#: Internal: the ``columns`` target that leaves a column out.
IGNORE = "ignore"


def _pairs(value, what: str) -> dict[str, str]:
    """``{name: text}`` from a table or from ``"NAME=TEXT"`` strings (a list, or one string)."""
    if value is None:
        return {}
    if isinstance(value, Mapping):
        items = list(value.items())
    else:
        texts = [value] if isinstance(value, str) else value
        if not isinstance(texts, (list, tuple)):
            raise ValueError(f"expected a table of {what}, got {type(value).__name__}")
        items = []
        for t in texts:
            if not isinstance(t, str) or "=" not in t:
                raise ValueError(f"expected {what} as NAME=VALUE, got {t!r}")
            items.append(tuple(t.rsplit("=", 1)) if what == "column mappings" else tuple(t.split("=", 1)))
    out: dict[str, str] = {}
    for k, v in items:
        if not isinstance(k, str) or not k.strip():
            raise ValueError(f"{what}: a column name is empty")
        if not isinstance(v, str):
            raise ValueError(f"{what}: {k!r} must be given a string, got {v!r}")
        out[k.strip()] = v.strip()
    return out


def parse_columns(value) -> dict[str, str]:
    """The ``columns`` option: ``{column: target}``, from a table (suite file, Python) or
    ``"NAME=TARGET"`` strings (``--column NAME=TARGET``, repeatable).

    A target is a metric of :mod:`navdtw.registry` (``"osr"``) or of :data:`EXTRA_COLUMNS`, ``"+"`` /
    ``"-"`` (keep the column under its own name, higher / lower is better) or ``"ignore"``.

    Parameters
    ----------
    value : mapping, str, list of str or None
        ``{column: target}``, or ``"NAME=TARGET"`` strings; None: no mapping.

    Returns
    -------
    dict[str, str]
        column -> target.

    Raises
    ------
    ValueError
        A value of another type, a string without ``=``, an empty column name, a target that is
        not a string or is unknown.
    """
    out = _pairs(value, "column mappings")
    known = set(registry.names()) | set(EXTRA_COLUMNS)
    for col, target in out.items():
        if target not in known and target not in DIRECTIONS and target != IGNORE:
            raise ValueError(
                f"column {col!r}: unknown target {target!r}; give a metric ({', '.join(registry.names())}), "
                "'+' or '-' (higher / lower is better) or 'ignore'"
            )
    return out


def parse_percent(value) -> bool | tuple[str, ...]:
    """The ``percent`` option: ``True`` (every rate column is in percent), ``False``, or the
    columns that are (names or metrics: ``("spl", "ndtw")``, or ``"spl,ndtw"``).

    Parameters
    ----------
    value : bool, str, list of str or None
        True, False (or None), or the column names.

    Returns
    -------
    bool or tuple of str
        True, False, or the column names.

    Raises
    ------
    ValueError
        A value that is neither a bool nor column names, or no name at all.
    """
    if value is None or value is False:
        return False
    if value is True:
        return True
    names = value.split(",") if isinstance(value, str) else value
    if not isinstance(names, (list, tuple)) or not all(isinstance(n, str) for n in names):
        raise ValueError(f"expected true or a list of column names, got {value!r}")
    names = tuple(n.strip() for n in names if n.strip())
    if not names:
        raise ValueError("no column names given")
    return names


def parse_select(value) -> dict[str, str]:
    """The ``select`` option: keep the rows whose columns hold these values, compared as text
    (``{"agent": "mine", "dataset": "r2r_unseen"}``, or ``"COLUMN=VALUE"`` strings).

    Parameters
    ----------
    value : mapping, str, list of str or None
        ``{column: value}``, or ``"COLUMN=VALUE"`` strings; None: every row.

    Returns
    -------
    dict[str, str]
        column -> the value its rows must hold.

    Raises
    ------
    ValueError
        A value of another type, a string without ``=``, an empty column name, a value that is
        not a string.
    """
    return _pairs(value, "row selections")


def norm(column: str) -> str:
    """Internal: a column name as the name lists hold it (lowercase; spaces and dashes as ``_``)."""
    return re.sub(r"[\s\-]+", "_", column.strip().lower())


def first_column(names: Iterable[str], wanted: Sequence[str]) -> str | None:
    """Internal: the first of ``names`` that is one of ``wanted`` (compared by :func:`norm`), in
    ``wanted``'s order; None."""
    by_norm: dict[str, str] = {}
    for n in names:
        by_norm.setdefault(norm(n), n)
    return next((by_norm[w] for w in wanted if w in by_norm), None)
