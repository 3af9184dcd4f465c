"""Anchored DTW: DTW of pairs whose alignment must pass through given cells (metres).

The engine capability behind IVLN-CE's tour nDTW (:mod:`navdtw.tours`): a warping path forced
through anchor cells ``(i, j)``, exact by decomposition at the anchors, or IVLN-CE's exclusive
window. The argument checks and the batch are :mod:`navdtw.engine`'s, so every entry point refuses
bad input alike. Definitions and why the decomposition is exact: docs/engine.md, "Anchored DTW".
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from . import _core
from ._messages import shown
from .engine import (
    Batch,
    DistancesArg,
    Matrix,
    checked_pair,
    index_array,
    method_codes,
    resolve_workers,
)

__all__ = ["dtw_anchored", "dtw_anchored_batch"]


def _anchor_rows(a, name: str) -> np.ndarray:
    """One pair's anchors as int64 ``[k, 2]`` (an empty sequence is no anchor)."""
    if a is None:
        return np.zeros((0, 2), dtype=np.int64)
    arr = np.asarray(a)
    if arr.size == 0:
        return np.zeros((0, 2), dtype=np.int64)
    arr = index_array(arr, name, "[k, 2] of (reference index, query index)")
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise ValueError(f"{name} must have shape [k, 2] (reference index, query index), got {arr.shape}")
    return arr


def _packed(anchors) -> bool:
    """Whether ``anchors`` is the packed form ``(values [A, 2], offsets [B + 1])``: a 2-tuple of a
    2-D array and a non-empty 1-D one (a pair's own anchors are never a non-empty 1-D array)."""
    return (
        isinstance(anchors, tuple)
        and len(anchors) == 2
        and np.ndim(anchors[0]) == 2
        and np.ndim(anchors[1]) == 1
        and np.size(anchors[1]) > 0
    )


def _anchor_csr(anchors, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Ragged anchors (one array per pair, or packed) -> (values [A, 2], offsets [B + 1])."""
    if _packed(anchors):
        values = index_array(anchors[0], "anchors values", "[A, 2]")
        offsets = index_array(anchors[1], "anchors offsets", "[B + 1]")
        if values.shape[1] != 2:
            raise ValueError(
                f"anchors values must have shape [A, 2] (reference index, query index), not {values.shape}"
            )
        if len(offsets) != size + 1:
            raise ValueError(f"anchors offsets has {len(offsets)} entries but the batch has {size} pairs (pairs + 1)")
        if offsets[0] != 0 or offsets[-1] != len(values) or (np.diff(offsets) < 0).any():
            raise ValueError(
                f"anchors offsets must start at 0, not decrease and end at the {len(values)} anchors, as Paths' offsets"
            )
        return np.ascontiguousarray(values), np.ascontiguousarray(offsets)
    if isinstance(anchors, (str, bytes)) or not isinstance(anchors, (Sequence, np.ndarray)):
        raise TypeError(f"anchors must be a sequence of [k, 2] index arrays, one per pair, got {shown(anchors)}")
    if len(anchors) != size:
        raise ValueError(f"anchors has {len(anchors)} entries but the batch has {size} pairs (one list per pair)")
    # Fast path: every pair's anchors already [k, 2] integers (one concatenation, no loop).
    try:
        joined = np.concatenate(anchors) if size else None
    except (ValueError, TypeError):
        joined = None
    if joined is not None and joined.ndim == 2 and joined.shape[1] == 2 and joined.dtype.kind in "iu":
        offsets = np.zeros(size + 1, dtype=np.int64)
        np.cumsum(np.fromiter(map(len, anchors), dtype=np.int64, count=size), out=offsets[1:])
        return np.ascontiguousarray(index_array(joined, "anchors", "[k, 2]")), offsets
    rows = [_anchor_rows(a, f"anchors[{b}]") for b, a in enumerate(anchors)]
    offsets = np.zeros(size + 1, dtype=np.int64)
    np.cumsum([len(r) for r in rows], out=offsets[1:])
    values = np.concatenate(rows) if rows else np.zeros((0, 2), dtype=np.int64)
    return np.ascontiguousarray(values, dtype=np.int64), offsets


def _check_exclusive(exclusive) -> bool:
    if not isinstance(exclusive, (bool, np.bool_)):
        raise TypeError(f"exclusive must be True or False, got {shown(exclusive)}")
    return bool(exclusive)


def dtw_anchored_batch(
    references,
    queries,
    anchors,
    *,
    distances: DistancesArg = None,
    env=None,
    pairs=None,
    window: int | None = None,
    exclusive: bool = False,
    workers: int = -1,
) -> np.ndarray:
    """DTW of many pairs, each alignment constrained to pass through given cells (metres).

    An anchor ``(i, j)`` is a cell of the pair's DP table: reference point ``i`` aligned with
    query point ``j``. The warping path always starts at ``(0, 0)`` and ends at
    ``(|R| - 1, |Q| - 1)``; anchors need not repeat these corners. See the engine guide
    (docs/engine.md, "Anchored DTW") for the definitions and why the result is exact.

    Parameters
    ----------
    references, queries : Paths or sequence of array_like
        The batch, as :func:`dtw_batch`.
    anchors : sequence of array_like, or (array_like, array_like)
        One ``[k, 2]`` integer array of ``(reference index, query index)`` rows per pair, in path
        order (both indices non-decreasing); ``k`` may be 0 (plain DTW). Or packed, as
        :class:`navdtw.Paths` packs paths: ``(values, offsets)``, every pair's anchors in one integer
        ``[A, 2]`` array and pair b's the rows ``offsets[b]:offsets[b + 1]`` (``[B + 1]``
        integers from 0 to A): no per-pair work in Python, for batches scored again and again.
    distances : array_like or sequence of array_like, optional
        One ``[V, V]`` matrix or a sequence of them (node paths), as :func:`dtw_batch`.
    env : array_like, optional
        The matrix of each pair, as :func:`dtw_batch`.
    pairs : array_like, optional
        ``[B, 2]`` (reference index, query index) rows, as :func:`dtw_batch`.
    window : int or None, optional
        Sakoe-Chiba band half-width in points, >= 0: a band of each stretch between consecutive
        anchors, scaled to that stretch's lengths as :func:`dtw` scales it to a pair's.
    exclusive : bool, optional
        ``False`` (the default): the path passes through every anchor. ``True``: IVLN-CE's
        window (``habitat_extensions/tour_ndtw.py``, ``window_align_func``, on dtw-python's
        ``symmetric1``): an anchor ``(i, j)`` removes every other cell of reference row ``i``, so
        reference point ``i`` is aligned with query point ``j`` alone; the start cell ``(0, 0)``
        is never removed (dtw-python seeds it). At most one anchor per reference index.
    workers : int, optional
        Threads (-1 = all cores), as :func:`dtw_batch`; results are identical for every value.

    Returns
    -------
    numpy.ndarray
        float64 ``[B]``, one anchored DTW per pair (metres); ``inf`` where the constraints leave
        no warping path (``exclusive=True`` only) or a needed node pair is unreachable.

    Raises
    ------
    TypeError
        As :func:`dtw_batch`; also ``anchors`` that are not a sequence of integer arrays, an
        ``exclusive`` that is not a bool.
    ValueError
        As :func:`dtw_batch`, naming the path or pair; also ``anchors`` of another length than the
        batch, an anchor not of shape ``[k, 2]``, packed anchors whose offsets are not those of the
        batch's pairs over the values, and, naming ``anchors[b][k]``: an anchor out of
        range of its pair's paths, anchors not in path order (not monotone), and, with
        ``exclusive=True``, two anchors on one reference index.
    """
    exclusive = _check_exclusive(exclusive)
    batch = Batch(references, queries, distances, env, pairs)
    w, _, _ = method_codes(window, None)
    workers = resolve_workers(workers)
    av, ao = _anchor_csr(anchors, batch.size)
    r, q = batch.refs, batch.qrys
    if batch.matrices is None:
        return _core.dtw_anchored_points(
            r.values,
            r.offsets,
            q.values,
            q.offsets,
            av,
            ao,
            pairs=batch.pairs,
            exclusive=exclusive,
            window=w,
            workers=workers,
        )
    return _core.dtw_anchored_nodes(
        r.values,
        r.offsets,
        q.values,
        q.offsets,
        batch.matrices,
        av,
        ao,
        env=batch.env,
        pairs=batch.pairs,
        exclusive=exclusive,
        window=w,
        workers=workers,
    )


def dtw_anchored(
    reference,
    query,
    anchors,
    *,
    distances: Matrix | None = None,
    window: int | None = None,
    exclusive: bool = False,
) -> float:
    """DTW(R, Q) with the alignment constrained to pass through given cells (metres).

    ``dtw_anchored(R, Q, [])`` is :func:`dtw`; each anchor ``(i, j)`` forces reference point
    ``i`` to be aligned with query point ``j``. With the usual steps the constrained optimum splits
    at every anchor, so it equals the sum of the DTWs of the stretches between consecutive anchors
    minus the costs of the anchors counted twice (docs/engine.md, "Anchored DTW").

    Parameters
    ----------
    reference, query : array_like
        Two node paths (with ``distances``) or two coordinate paths, as :func:`dtw`.
    anchors : array_like
        ``[k, 2]`` integers, ``(reference index, query index)`` rows in path order (both
        non-decreasing); ``[]`` for none. The corners ``(0, 0)`` and ``(|R| - 1, |Q| - 1)`` are on
        every path and need not be given.
    distances : array_like or None, optional
        One ``[V, V]`` distance matrix for node paths, as :func:`dtw`.
    window : int or None, optional
        Sakoe-Chiba band half-width of each stretch between anchors, as
        :func:`dtw_anchored_batch`.
    exclusive : bool, optional
        ``True``: IVLN-CE's window, each anchored reference point aligned with its query point
        alone (see :func:`dtw_anchored_batch`).

    Returns
    -------
    float
        Anchored DTW in metres, >= :func:`dtw` of the same pair (up to rounding: joining the
        stretches subtracts the anchors' costs, which can leave a result an ulp or so below
        :func:`dtw` when the anchors lie on an optimal path); ``inf`` when no warping path
        meets the constraints (``exclusive=True`` only) or a needed node pair is unreachable.

    Raises
    ------
    TypeError
        As :func:`dtw`; also anchors that are not integers, an ``exclusive`` that is not a bool.
    ValueError
        As :func:`dtw`; also anchors not of shape ``[k, 2]`` and, naming ``anchors[k]``: an anchor
        out of range, anchors not in path order (not monotone), and, with ``exclusive=True``, two
        anchors on one reference index.

    Examples
    --------
    >>> import navdtw
    >>> r = [[0.0, 0.0], [1.0, 0.0], [2.0, 0.0]]
    >>> q = [[0.0, 0.0], [2.0, 0.0], [2.0, 0.0]]
    >>> navdtw.dtw(r, q)
    1.0
    >>> navdtw.dtw_anchored(r, q, [[1, 2]])  # reference point 1 with query point 2: 1 m more
    2.0
    """
    exclusive = _check_exclusive(exclusive)
    r, q, m = checked_pair(reference, query, distances)
    w, _, _ = method_codes(window, None)
    av = _anchor_rows(anchors, "anchors")
    ao = np.array([0, len(av)], dtype=np.int64)
    ro = np.array([0, len(r)], dtype=np.int64)
    qo = np.array([0, len(q)], dtype=np.int64)
    try:
        if m is None:
            out = _core.dtw_anchored_points(r, ro, q, qo, av, ao, exclusive=exclusive, window=w, workers=1)
        else:
            out = _core.dtw_anchored_nodes(r, ro, q, qo, [m], av, ao, exclusive=exclusive, window=w, workers=1)
    except ValueError as e:
        if str(e).startswith("anchors[0]["):
            raise ValueError("anchors[" + str(e)[len("anchors[0][") :]) from None
        raise
    return float(out[0])
