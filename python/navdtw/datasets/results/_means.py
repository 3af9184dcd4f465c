"""Internal to :mod:`navdtw.datasets.results`: an evaluator's means file (or the summary record of a
per-episode file) read as the figures it reports (:func:`load_means`), what ``--reported-from``
checks an agent's measured means against."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from ... import registry
from ..._messages import clipped
from ..._typing import PathLike
from . import layouts
from ._cells import NUMBER_TYPES, Overflow
from ._columns import ALIASES, EXTRA_COLUMNS, norm
from ._readers import read_one

__all__ = ["EvaluatorMeans", "load_means"]


@dataclass(frozen=True)
class EvaluatorMeans:
    """An evaluator's means file read as its reported figures (:func:`load_means`).

    Attributes
    ----------
    source:
        the file's name.
    layout:
        the project layout recognised (or given), or None.
    figures:
        metric (the registry's name where the key is one of its names or aliases, else the key)
        -> the evaluator's mean; rates as fractions. Non-finite means are left out (``notes``).
    length:
        the episode count the file states, or None.
    notes:
        what was left out and why (a NaN or Infinity mean, a setting).
    path:
        the file, absolute.
    """

    source: str
    layout: str | None
    figures: dict[str, float]
    length: int | None = None
    notes: tuple[str, ...] = ()
    path: str = ""


def load_means(path: PathLike, *, layout: str | None = None) -> EvaluatorMeans:
    """Reads an evaluator's means file (VLN-CE, ETPNav, AerialVLN and HA-VLN's ``stats_ckpt_*.json``,
    InternNav's ``result.json``, StreamVLN's summary) as the figures it reports: what
    ``--reported-from`` (``reported_from`` in a suite file) checks the agent's measured means
    against. A per-episode file with a summary record gives that record.

    Parameters
    ----------
    path : str or os.PathLike
        The means file.
    layout : str, optional
        The project layout (default: recognised).

    Returns
    -------
    EvaluatorMeans

    Raises
    ------
    ValueError
        A malformed file, or one without means (per-episode results without a summary).
    """
    path = Path(path)
    raw = read_one(path, layout, None)
    record = raw.means if raw.means is not None else (raw.summaries[-1][1] if raw.summaries else None)
    if record is None:
        raise ValueError(
            f"{path.name}: holds per-episode results, not an evaluator's means: give it as the agent's results"
        )
    lay = raw.layout if raw.layout is not None and raw.layout.holds == "means" else layouts.summary_layout(record)
    keys = dict(lay.summary.keys) if lay is not None and lay.summary is not None else {}
    skip = {lay.summary.length} if lay is not None and lay.summary is not None else set()
    skip |= set(lay.settings) if lay is not None else set()
    skip |= {"SUCCESS_DISTANCE", "length"}
    figures: dict[str, float] = {}
    notes: list[str] = []
    for key, value in record.items():
        if type(value) is Overflow:
            raise ValueError(f"{path.name}: {key!r} is {clipped(str(value))}, beyond float's range: a corrupt value")
        if key in skip or type(value) not in NUMBER_TYPES or value is None:
            continue
        n = norm(key)
        metric = keys.get(key) or (n if n in registry.names() or n in EXTRA_COLUMNS else ALIASES.get(n, key))
        x = float(value)
        if not math.isfinite(x):
            notes.append(f"{key} is {'NaN' if math.isnan(x) else 'Infinity'}: not a figure to check against")
            continue
        figures[metric] = x
    length = record.get("length")
    return EvaluatorMeans(
        path.name,
        None if lay is None else lay.name,
        figures,
        length if type(length) is int else None,
        tuple(notes),
        str(path.resolve()),
    )
