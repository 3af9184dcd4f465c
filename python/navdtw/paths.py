"""Ragged batches of paths: flat values plus int64 offsets (CSR), zero-copy from numpy.

A path is either a node-index path (1-D integer array of graph node indices) or a coordinate path
(2-D ``[n, D]`` array of float32 positions, metres). :class:`Paths` holds many of them as one
``values`` array and ``offsets`` such that path ``i`` is ``values[offsets[i]:offsets[i + 1]]``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np

from ._messages import shown
from ._typing import ArrayLike

__all__ = ["Paths", "as_path", "as_paths", "collapse_repeats", "first_start_mismatch", "start_mismatches"]


def _normalize_values(values: np.ndarray, name: str) -> np.ndarray:
    """Checks a values array and brings it to the engine's dtypes.

    Node paths (1-D) keep int32 / int64 (other integer types become int64); coordinates (2-D)
    become float32 (the engine's storage type; float64 input is rounded to float32).
    """
    if values.dtype == np.bool_ or values.dtype.kind not in "iuf":
        raise TypeError(
            f"{name}: paths must hold integer node ids (1-D) or real coordinates ([n, D]); got dtype {values.dtype}"
        )
    if values.ndim == 1:
        if values.size == 0 and values.dtype.kind == "f":
            values = values.astype(np.int64)  # [] from a plain list: an empty node path, not floats
        if values.dtype.kind == "f":
            raise TypeError(
                f"{name}: a 1-D float array is ambiguous; node paths must be integers, "
                "and 1-D coordinates must have shape [n, 1]"
            )
        # Compared as uint64: numpy 1.x compares uint64 with a Python int in float64, where
        # 2**63 - 1 rounds to 2**63 and the largest overflowing id passes.
        if values.dtype.kind == "u" and values.size and values.max() > np.uint64(np.iinfo(np.int64).max):
            raise ValueError(f"{name}: node id {values.max()} does not fit int64")
        if values.dtype not in (np.int32, np.int64):
            values = values.astype(np.int64)
        return np.ascontiguousarray(values)
    if values.ndim == 2:
        if values.shape[1] < 1:
            raise ValueError(f"{name}: coordinates must have at least one dimension, got shape {values.shape}")
        # Values beyond float32 range become inf here; check_finite then names the point.
        with np.errstate(over="ignore"):
            return np.ascontiguousarray(values, dtype=np.float32)
    raise ValueError(f"{name}: paths must be 1-D (node ids) or 2-D (coordinates [n, D]); got {values.ndim}-D")


def unchecked_paths(values: np.ndarray, offsets: np.ndarray) -> Paths:
    """Internal (for navdtw's modules): a :class:`Paths` around arrays already in the engine's
    form (values normalised, offsets int64, starting at 0, non-decreasing, ending at ``len(values)``),
    without the constructor's checks or copies. Wrong input here gives wrong results, not errors."""
    paths = Paths.__new__(Paths)
    paths.values = values
    paths.offsets = offsets
    return paths


class Paths:
    """A ragged batch of paths stored as flat ``values`` and int64 ``offsets``.

    Parameters
    ----------
    values : array_like
        ``[N]`` integer node ids (int32 and int64 kept, other integer types become int64), or
        ``[N, D]`` coordinates, D >= 1 (stored as float32, metres).
    offsets : array_like
        ``[len + 1]`` integers, starting at 0, non-decreasing, ending at ``N`` (stored as
        int64).
    name : str, optional
        What the batch is called in error messages (default ``"paths"``).

    Raises
    ------
    TypeError
        ``values`` that are not numbers, or 1-D floats (ambiguous: node ids must be integers,
        1-D coordinates have shape ``[n, 1]``).
    ValueError
        ``values`` that are neither 1-D nor 2-D, coordinates with 0 dimensions, an unsigned node
        id beyond int64, ``offsets`` that are not a non-empty 1-D integer array, do not start at
        0, decrease or do not end at ``len(values)``.

    Notes
    -----
    ``paths[i]`` is a view of path ``i``; ``len(paths)`` the number of paths. Build from a list
    of arrays with :meth:`from_list`.
    """

    __slots__ = ("offsets", "values")

    def __init__(self, values: ArrayLike, offsets: ArrayLike, *, name: str = "paths") -> None:
        values = _normalize_values(_asarray(values, name), name)
        offsets_in = np.asarray(offsets)
        if offsets_in.dtype.kind not in "iu" or offsets_in.ndim != 1 or offsets_in.size < 1:
            raise ValueError(f"{name}: offsets must be a 1-D integer array with at least one element")
        offsets = np.ascontiguousarray(offsets_in, dtype=np.int64)
        if offsets[0] != 0:
            raise ValueError(f"{name}: offsets[0] must be 0, got {offsets[0]}")
        steps = np.diff(offsets)
        if steps.size and steps.min() < 0:
            bad = int(np.argmax(steps < 0))
            raise ValueError(f"{name}: offsets must not decrease (offsets[{bad + 1}] < offsets[{bad}])")
        if offsets[-1] != len(values):
            raise ValueError(f"{name}: offsets[-1] = {offsets[-1]} but values has {len(values)} rows")
        self.values = values
        self.offsets = offsets

    @classmethod
    def from_list(cls, paths: Iterable[ArrayLike], *, name: str = "paths") -> Paths:
        """Builds a batch from a sequence of paths (arrays or nested lists).

        Parameters
        ----------
        paths : iterable of array_like
            At least one path: all node paths (1-D integers; ``[]`` is an empty node path) or all
            coordinate paths (``[n, D]``, one D).
        name : str, optional
            What the batch is called in error messages (default ``"paths"``).

        Returns
        -------
        Paths
            One batch holding a copy of every path, in order.

        Raises
        ------
        TypeError
            A string or a non-iterable instead of a sequence of paths, a scalar entry, an entry
            that is not numeric; the errors of :class:`Paths` for the joined values.
        ValueError
            No path at all, node paths mixed with coordinate paths, coordinate paths of
            different dimensions, a ragged entry (naming the entry and its first odd point); the
            errors of :class:`Paths`.
        """
        if isinstance(paths, (str, bytes)):
            raise TypeError(f"{name} must be a sequence of paths, got {type(paths).__name__}")
        arrays = [_asarray(p, f"{name}[{i}]") for i, p in enumerate(paths)]
        # [] in a list of node paths is an empty node path (numpy reads it as float64)
        arrays = [a.astype(np.int64) if a.ndim == 1 and a.size == 0 and a.dtype.kind == "f" else a for a in arrays]
        if not arrays:
            raise ValueError(f"{name}: empty batch: give at least one path (or use Paths(values, offsets))")
        for i, a in enumerate(arrays):
            if a.ndim == 0:
                raise TypeError(f"{name}[{i}] is a scalar ({a!r}), not a path")
        ndims = {a.ndim for a in arrays}
        if len(ndims) != 1:
            raise ValueError(f"{name}: mixes node paths (1-D) and coordinate paths (2-D)")
        for i, a in enumerate(arrays):
            if a.ndim == 2 and a.shape[1] != arrays[0].shape[1]:
                raise ValueError(f"{name}[{i}] has {a.shape[1]} dimensions but {name}[0] has {arrays[0].shape[1]}")
            if a.dtype == object:
                raise TypeError(f"{name}[{i}]: ragged or non-numeric entries (dtype object)")
        lengths = np.fromiter((len(a) for a in arrays), dtype=np.int64, count=len(arrays))
        offsets = np.zeros(len(arrays) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        values = np.concatenate(arrays) if offsets[-1] else arrays[0][:0]
        return cls(values, offsets, name=name)

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def __getitem__(self, i):
        """``paths[i]``: a view of path ``i``; ``paths[a:b]``: a :class:`Paths` of views
        (other slices and integer arrays copy, as :meth:`take`)."""
        n = len(self)
        if isinstance(i, slice):
            start, stop, step = i.indices(n)
            if step != 1:
                return self.take(np.arange(start, stop, step))
            stop = max(start, stop)
            o = self.offsets[start : stop + 1]
            return unchecked_paths(self.values[o[0] : o[-1]], o - o[0])
        if isinstance(i, (list, np.ndarray)):
            return self.take(i)
        if isinstance(i, (bool, np.bool_)) or not isinstance(i, (int, np.integer)):
            raise TypeError(f"Paths index must be an integer, a slice or an integer array, got {shown(i)}")
        k = i + n if i < 0 else i
        if not 0 <= k < n:
            raise IndexError(f"path index {i} out of range for {n} paths")
        return self.values[self.offsets[k] : self.offsets[k + 1]]

    def __iter__(self) -> Iterator[np.ndarray]:
        for i in range(len(self)):
            yield self[i]

    def __repr__(self) -> str:
        kind = "node" if self.is_nodes else f"{self.dim}-D coordinate"
        return f"Paths({len(self)} {kind} paths, {len(self.values)} points)"

    @property
    def lengths(self) -> np.ndarray:
        """Number of points of each path (int64 ``[len]``)."""
        return np.diff(self.offsets)

    @property
    def is_nodes(self) -> bool:
        """True for node-index paths, False for coordinate paths."""
        return self.values.ndim == 1

    @property
    def dim(self) -> int:
        """Coordinate dimension D (0 for node paths)."""
        return 0 if self.is_nodes else int(self.values.shape[1])

    def tolist(self) -> list:
        """The paths as a list of arrays.

        Returns
        -------
        list of numpy.ndarray
            One view of ``values`` per path, in order.
        """
        return list(self)

    def take(self, index: ArrayLike) -> Paths:
        """A new batch of the paths at ``index``, copying their values.

        Parameters
        ----------
        index : array_like
            Integer path indices, in any order, repeats allowed; negative ones count from the end.

        Returns
        -------
        Paths
            The selected paths, in the order of ``index``.

        Raises
        ------
        TypeError
            Indices that are not integers (a boolean mask included).
        IndexError
            An index out of range for ``len(self)`` paths.
        """
        raw = np.asarray(index)
        if raw.size and (raw.dtype == np.bool_ or raw.dtype.kind not in "iu"):
            raise TypeError(f"Paths.take needs integer indices, got dtype {raw.dtype}")
        index = raw.astype(np.int64).reshape(-1)
        n = len(self)
        if index.size and (index.min() < -n or index.max() >= n):
            raise IndexError(f"path index out of range for {n} paths")
        index = np.where(index < 0, index + n, index)
        lengths = self.lengths[index]
        offsets = np.zeros(len(index) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        starts = self.offsets[:-1][index]
        flat = np.repeat(starts - offsets[:-1], lengths) + np.arange(offsets[-1], dtype=np.int64)
        return unchecked_paths(self.values[flat], offsets)

    def last(self) -> np.ndarray:
        """The last point of every path (all paths must be non-empty; not checked).

        Returns
        -------
        numpy.ndarray
            ``[len]`` node ids or ``[len, D]`` coordinates.
        """
        return self.values[self.offsets[1:] - 1]

    def first(self) -> np.ndarray:
        """The first point of every path (all paths must be non-empty; not checked).

        Returns
        -------
        numpy.ndarray
            ``[len]`` node ids or ``[len, D]`` coordinates.
        """
        return self.values[self.offsets[:-1]]


def _asarray(obj, name: str) -> np.ndarray:
    """``np.asarray(obj)``; a ragged nested list (numpy's "inhomogeneous shape" ValueError) is a
    ValueError naming ``name`` and the first point whose size differs from point 0's."""
    try:
        return np.asarray(obj)
    except ValueError as exc:
        if "inhomogeneous" not in str(exc):
            raise
        raise ValueError(f"{name}: ragged path: {_first_odd_point(obj)}") from None


def _first_odd_point(points) -> str:
    def size(x):
        try:
            return len(x)
        except TypeError:
            return None

    def what(n):
        return "is a single number" if n is None else f"has {n} coordinate{'' if n == 1 else 's'}"

    try:
        items = list(points)
    except TypeError:  # pragma: no cover - numpy iterated it
        return "nested lists of different sizes"
    first = size(items[0]) if items else None
    for k, x in enumerate(items[1:], start=1):
        n = size(x)
        if n != first:
            return f"point {k} {what(n)}, point 0 {what(first)}"
    for k, x in enumerate(items):
        try:
            np.asarray(x)
        except ValueError:
            return f"point {k} holds nested lists of different sizes"
    return "nested lists of different sizes"  # pragma: no cover - numpy found one


def as_paths(obj, name: str) -> Paths:
    """Turns a :class:`Paths` or a sequence of paths into :class:`Paths`.

    Parameters
    ----------
    obj : Paths or sequence of array_like
        A batch (returned as it is) or paths for :meth:`Paths.from_list`.
    name : str
        What the batch is called in error messages (e.g. ``"references"``).

    Returns
    -------
    Paths
        ``obj`` itself, or a new batch.

    Raises
    ------
    TypeError
        A string, a single numeric array (ambiguous for a batch) or a non-iterable; the errors of
        :meth:`Paths.from_list`.
    ValueError
        The errors of :meth:`Paths.from_list`.
    """
    if isinstance(obj, Paths):
        return obj
    if isinstance(obj, (str, bytes)):
        raise TypeError(f"{name} must be navdtw.Paths or a sequence of paths, got {type(obj).__name__}")
    if isinstance(obj, np.ndarray) and obj.dtype != object:
        raise TypeError(f"{name}: a single array is ambiguous for a batch; pass a list of paths or navdtw.Paths")
    try:
        seq = list(obj)
    except TypeError:
        raise TypeError(f"{name} must be navdtw.Paths or a sequence of paths, got {type(obj).__name__}") from None
    return Paths.from_list(seq, name=name)


def as_path(obj, name: str) -> np.ndarray:
    """Normalises one path (node ids or coordinates) to the engine's dtypes.

    Parameters
    ----------
    obj : array_like
        One path: 1-D integer node ids or ``[n, D]`` coordinates.
    name : str
        What the path is called in error messages (e.g. ``"reference"``).

    Returns
    -------
    numpy.ndarray
        int32 / int64 node ids, or C-contiguous float32 ``[n, D]`` coordinates.

    Raises
    ------
    TypeError
        A :class:`Paths` batch, a ragged or non-numeric path, 1-D floats.
    ValueError
        An empty path, a path that is neither 1-D nor 2-D, coordinates with 0 dimensions, an
        unsigned node id beyond int64, a ragged nested list (naming its first odd point).
    """
    if isinstance(obj, Paths):
        raise TypeError(f"{name} must be a single path; use the *_batch functions for Paths")
    arr = _asarray(obj, name)
    if arr.dtype == object:
        raise TypeError(f"{name}: ragged or non-numeric path")
    arr = _normalize_values(arr, name)
    if len(arr) == 0:
        raise ValueError(f"{name} is empty (empty path: a path needs at least one point)")
    return arr


def collapse_repeats(paths: Paths) -> Paths:
    """Drops consecutive repeats of the same point (an agent turning in place stays one point).

    Node paths compare node ids; coordinate paths drop a position exactly equal to the previous
    one (VLN-CE's ``NDTW.update_metric`` rule). The first point of every path is always kept, so
    no path becomes empty.

    Parameters
    ----------
    paths : Paths
        The batch.

    Returns
    -------
    Paths
        ``paths`` itself when nothing repeats, else a new batch without the repeats.
    """
    v = paths.values
    keep = np.ones(len(v), dtype=bool)
    if len(v) > 1:
        same = v[1:] == v[:-1]
        keep[1:] = ~same if paths.is_nodes else ~same.all(axis=1)
    keep[paths.offsets[:-1][paths.lengths > 0]] = True  # a path start is never a repeat of the previous path
    if keep.all():
        return paths
    path_of = np.repeat(np.arange(len(paths), dtype=np.int64), paths.lengths)
    counts = np.bincount(path_of[keep], minlength=len(paths))
    offsets = np.zeros(len(paths) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    return unchecked_paths(np.ascontiguousarray(v[keep]), offsets)


def start_mismatches(references: Paths, queries: Paths) -> np.ndarray:
    """Indices of the queries that do not start where their references start.

    Node paths compare node ids; coordinate paths allow 1e-6 m. The one start check of the package
    (``evaluate(strict=True)``, the data-set matchers, the warnings of ``navdtw score`` and suites).

    Parameters
    ----------
    references, queries : Paths
        Two batches of the same length and kind, every path non-empty (not checked: callers pass
        a validated batch).

    Returns
    -------
    numpy.ndarray
        int64 indices ``i`` where ``queries[i][0]`` differs from ``references[i][0]``, ascending.
    """
    r0, q0 = references.first(), queries.first()
    bad = r0 != q0 if references.is_nodes else np.linalg.norm(r0.astype(np.float64) - q0, axis=1) > 1e-06
    return np.flatnonzero(bad)


def first_start_mismatch(references: Paths, queries: Paths) -> int:
    """Index of the first query that does not start where its reference starts.

    Parameters
    ----------
    references, queries : Paths
        Two batches of the same length and kind, as :func:`start_mismatches`.

    Returns
    -------
    int
        The first index of :func:`start_mismatches`, or -1 when every query starts right.
    """
    bad = start_mismatches(references, queries)
    return int(bad[0]) if len(bad) else -1
