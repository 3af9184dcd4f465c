"""HA-VLN (human-aware VLN): the per-episode baseline collision counts.

HA-VLN ships ``collision_num_val_{seen,unseen}.json``: one JSON object mapping episode ids
(strings) to the number of collisions that are unavoidable because a human walks into the
reference path. :mod:`navdtw.humanaware` subtracts them from the agent's collisions (TCR, CR,
strict SR); the episodes and paths are R2R-CE's (:mod:`navdtw.datasets.vlnce`).
"""

from __future__ import annotations

import math

from .._messages import named
from .._typing import PathLike
from ._common import is_int, is_real, object_of, source

__all__ = ["load_havln_collisions"]


def load_havln_collisions(path: PathLike | dict) -> dict[str, int]:
    """Reads HA-VLN baseline collision counts ``{episode_id: count}`` -> ``{str: int}``, in file order.

    The rule for a count: an integer in [0, 2**63) (an int64). A number written as an integral
    float (``3.0``) is that count; fractions (``3.5``), negatives, counts of 2**63 or more
    (``1e300``), booleans, strings, ``NaN`` and infinities are refused with a ``ValueError`` naming
    the file and the entry (``"collision_num_val_unseen.json: entry 4 (episode_id 17): collision
    count must be an integer >= 0, got 3.5"``).

    Parameters
    ----------
    path : str, os.PathLike or dict
        ``collision_num_val_*.json`` (gzipped or not), or its parsed object (messages then say
        ``<input>``).

    Returns
    -------
    dict[str, int]
        Episode id (as a string) -> baseline collision count, in file order.

    Raises
    ------
    ValueError
        A file that is not a JSON object, or a count that is not an integer in [0, 2**63) (naming
        the file and the entry).
    FileNotFoundError
        ``path`` does not exist.
    """
    data, name = source(path)
    data = object_of(data, name, "episode id (collision counts)")
    out: dict[str, int] = {}
    for k, (eid, n) in enumerate(data.items()):
        integral = is_int(n) or (is_real(n) and math.isfinite(n) and float(n).is_integer())
        if not integral or n < 0:
            where = f"{name}: entry {k} (episode_id {named(eid)})"
            raise ValueError(f"{where}: collision count must be an integer >= 0, got {n!r}")
        if n >= 2**63:  # counts are int64 in navdtw.humanaware
            where = f"{name}: entry {k} (episode_id {named(eid)})"
            raise ValueError(f"{where}: collision count {n!r} is too large (counts must be below 2**63)")
        out[str(eid)] = int(n)
    return out
