"""Internal to :mod:`navdtw.distributed`: Arrow list columns read as :class:`navdtw.Paths` without
copies, and :class:`navdtw.Paths` batches written as Arrow tables and Parquet files."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import numpy as np

from .._io import atomic_target
from .._optional import import_optional
from ..paths import Paths, as_paths

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow as pa


def pyarrow_module():
    """Internal: pyarrow (with its compute functions), or the ImportError naming the extra."""
    import_optional("pyarrow.compute", "navdtw.distributed")
    return import_optional("pyarrow", "navdtw.distributed")


def parquet_module():
    """Internal: pyarrow.parquet, or the ImportError naming the extra."""
    return import_optional("pyarrow.parquet", "navdtw.distributed")


# --------------------------------------------------------------------------------------------
# Arrow list columns -> Paths, without copies
# --------------------------------------------------------------------------------------------


def first_null(arr) -> int:
    """Internal: the index of the first null of an Arrow array (one that has nulls)."""
    return int(np.argmax(arr.is_null().to_numpy(zero_copy_only=False)))


def _numpy(arr, name: str) -> np.ndarray:
    """A primitive Arrow array (no nulls) as numpy, a view of its buffer where the type allows."""
    if arr.null_count:
        raise ValueError(f"{name}: null value at flat position {first_null(arr)}")
    try:
        return arr.to_numpy(zero_copy_only=True)
    except Exception:  # e.g. boolean: not a numeric type we take anyway; let numpy report it
        return arr.to_numpy(zero_copy_only=False)


def _list_parts(arr, name: str) -> tuple[Any, np.ndarray]:
    """(values child sliced to the array's range, offsets rebased to 0 as int64) of a list array."""
    pa = pyarrow_module()
    t = arr.type
    if not (pa.types.is_list(t) or pa.types.is_large_list(t)):
        raise TypeError(f"{name}: expected an Arrow list column, got {t}")
    if arr.null_count:
        raise ValueError(f"{name}[{first_null(arr)}] is null; every row needs a path")
    offsets = arr.offsets.to_numpy(zero_copy_only=True)  # sliced with the array, not rebased
    start, stop = int(offsets[0]), int(offsets[-1])
    values = arr.values.slice(start, stop - start)
    rebased = offsets.astype(np.int64)
    if start:
        rebased -= start
    return values, rebased


def _point_rows(points, name: str) -> np.ndarray:
    """The ``[N, D]`` float coordinates of a column of points (fixed-size or variable lists)."""
    pa = pyarrow_module()
    t = points.type
    if points.null_count:
        raise ValueError(f"{name}: null point at flat position {first_null(points)}")
    if pa.types.is_fixed_size_list(t):
        d = t.list_size
        flat = points.values.slice(points.offset * d, len(points) * d)  # .values ignores the slice offset
    elif pa.types.is_list(t) or pa.types.is_large_list(t):
        flat, inner = _list_parts(points, name)
        sizes = np.diff(inner)
        d = int(sizes[0]) if len(sizes) else 0
        if len(sizes) and (sizes != d).any():
            k = int(np.argmax(sizes != d))
            raise ValueError(f"{name}: point {k} (flat) has {sizes[k]} coordinates but point 0 has {d}")
    else:
        raise TypeError(f"{name}: coordinate points must be lists of floats, got {t}")
    if not pa.types.is_floating(flat.type):
        raise TypeError(f"{name}: coordinates must be float32 (or float64), got {flat.type}")
    vals = _numpy(flat, name)
    if d == 0:
        if len(points):
            raise ValueError(f"{name}: points with 0 coordinates")
        d = 1
    return vals.reshape(-1, d)


def _as_array(column):
    """A chunked or plain Arrow array -> one Array (a single chunk is used as is)."""
    pa = pyarrow_module()
    if isinstance(column, pa.ChunkedArray):
        if column.num_chunks == 1:
            return column.chunk(0), None
        return None, column.chunks
    return column, None


def paths_from_arrow(column, *, name: str = "paths") -> Paths:
    """A :class:`navdtw.Paths` over an Arrow list column, sharing its memory where possible.

    A float32 or int32/int64 values buffer is used as is (the Paths values are a read-only view
    of it); only the offsets are rebuilt (int64, rebased for sliced arrays). Several chunks are
    joined with one copy; float64 coordinates are rounded to float32 (a copy), other integers
    widened to int64.

    Parameters
    ----------
    column : pyarrow.Array or pyarrow.ChunkedArray
        ``list<int32|int64>`` (node ids), ``list<fixed_size_list<float32, D>>`` or
        ``list<list<float32>>`` (coordinates); ``large_list`` works too. No null path or point.
    name : str, optional
        What the column is called in error messages (default ``"paths"``).

    Returns
    -------
    Paths
        One path per row.

    Raises
    ------
    TypeError
        A column that is not a list column, ``list<float>`` (ambiguous), points that are not
        lists of floats, integer coordinates, values of another type.
    ValueError
        A null path, point or value; points of different lengths or with 0 coordinates; chunks
        holding different kinds of points; the errors of :class:`navdtw.Paths`.
    ImportError
        pyarrow is not installed.
    """
    pa = pyarrow_module()
    arr, chunks = _as_array(column)
    if chunks is not None:
        if not chunks:
            arr = pa.array([], type=column.type)
        else:
            parts = [_path_parts(c, name) for c in chunks]
            return _join(parts, name)
    values, offsets = _path_parts(arr, name)
    return Paths(values, offsets, name=name)


def _path_parts(arr, name: str) -> tuple[np.ndarray, np.ndarray]:
    pa = pyarrow_module()
    child, offsets = _list_parts(arr, name)
    t = child.type
    if pa.types.is_integer(t):
        values = _numpy(child, name)
    elif pa.types.is_fixed_size_list(t) or pa.types.is_list(t) or pa.types.is_large_list(t):
        values = _point_rows(child, name)
    elif pa.types.is_floating(t):
        raise TypeError(
            f"{name}: list<float> is ambiguous; coordinates are list<fixed_size_list<float, D>> "
            "(or list<list<float>>) and node paths list<int>"
        )
    else:
        raise TypeError(f"{name}: paths must be lists of node ids (int) or of points (lists of float), got {arr.type}")
    return values, offsets


def _join(parts: list[tuple[np.ndarray, np.ndarray]], name: str) -> Paths:
    shapes = {v.shape[1:] for v, _ in parts}
    if len(shapes) > 1:
        raise ValueError(f"{name}: the chunks of the column hold different kinds of points {sorted(shapes)}")
    values = np.concatenate([v for v, _ in parts])
    offsets = np.zeros(1 + sum(len(o) - 1 for _, o in parts), dtype=np.int64)
    pos, base = 1, 0
    for v, o in parts:
        offsets[pos : pos + len(o) - 1] = o[1:] + base
        pos += len(o) - 1
        base += len(v)
    return Paths(values, offsets, name=name)


def is_node_type(t) -> bool:
    """Internal: whether Arrow type ``t`` is a node-path column (a list of integers)."""
    pa = pyarrow_module()
    return (pa.types.is_list(t) or pa.types.is_large_list(t)) and pa.types.is_integer(t.value_type)


# --------------------------------------------------------------------------------------------
# writing batches
# --------------------------------------------------------------------------------------------


def _list_array(paths: Paths):
    pa = pyarrow_module()
    off = paths.offsets
    large = off[-1] > np.iinfo(np.int32).max
    offsets = pa.array(off if large else off.astype(np.int32))
    if paths.is_nodes:
        child = pa.array(paths.values)
    else:
        child = pa.FixedSizeListArray.from_arrays(pa.array(np.ascontiguousarray(paths.values).reshape(-1)), paths.dim)
    cls = pa.LargeListArray if large else pa.ListArray
    return cls.from_arrays(offsets, child)


def to_arrow(
    references,
    queries,
    *,
    env=None,
    ids=None,
    reference: str = "reference",
    query: str = "query",
    id_column: str = "episode_id",
    env_column: str = "env",
    columns: dict[str, Any] | None = None,
) -> pa.Table:
    """A batch as an Arrow table in the layout of :func:`score_arrow`.

    Parameters
    ----------
    references, queries : Paths or sequence of array_like
        As many reference and query paths (:class:`navdtw.Paths` or lists of paths).
    env : array_like, optional
        Integer environment index per episode (or one for all), written as ``env_column``.
    ids : sequence, optional
        Episode ids, written as ``id_column``.
    reference : str, optional
        The reference paths' column (default ``"reference"``).
    query : str, optional
        The query paths' column (default ``"query"``).
    id_column : str, optional
        The ids' column name (default ``"episode_id"``).
    env_column : str, optional
        The environments' column name (default ``"env"``).
    columns : dict, optional
        More columns ``{name: per-episode values}`` (lists or Arrow arrays).

    Returns
    -------
    pyarrow.Table
        ``id_column`` (when ``ids`` given), ``env_column`` (when ``env`` given), any extra
        ``columns``, then ``reference`` and ``query`` as list columns (coordinates
        ``list<fixed_size_list<float32, D>>``; ``large_list`` beyond 2**31 - 1 values).

    Raises
    ------
    TypeError, ValueError
        Paths that :func:`navdtw.dtw_batch` would refuse as a batch (the errors of
        :meth:`navdtw.Paths.from_list`).
    ValueError
        Unequal numbers of references and queries, of ids, ``env`` entries or values of a
        column; an ``env`` that is not integers.
    ImportError
        pyarrow is not installed.
    """
    pa = pyarrow_module()
    refs = as_paths(references, "references")
    qrys = as_paths(queries, "queries")
    n = len(refs)
    if len(qrys) != n:
        raise ValueError(f"references ({n}) and queries ({len(qrys)}) differ in length")
    cols: dict[str, Any] = {}
    if ids is not None:
        if len(ids) != n:
            raise ValueError(f"ids has {len(ids)} entries for {n} episodes")
        cols[id_column] = pa.array(list(ids) if not isinstance(ids, np.ndarray) else ids)
    if env is not None:
        e = np.asarray(env)
        if e.ndim == 0:
            e = np.full(n, int(e), dtype=np.int64)
        if e.shape != (n,) or e.dtype.kind not in "iu":
            raise ValueError(f"env must be {n} integers, got shape {e.shape} dtype {e.dtype}")
        cols[env_column] = pa.array(e)
    for k, v in (columns or {}).items():
        if len(v) != n:
            raise ValueError(f"column {k!r} has {len(v)} entries for {n} episodes")
        cols[k] = v if isinstance(v, (pa.Array, pa.ChunkedArray)) else pa.array(v)
    cols[reference] = _list_array(refs)
    cols[query] = _list_array(qrys)
    return pa.table(cols)


def write_parquet_batch(
    path,
    references,
    queries,
    *,
    env=None,
    ids=None,
    row_group_size: int | None = None,
    columns: dict[str, Any] | None = None,
    **names,
) -> str:
    """Writes a batch as one Parquet file of list columns (the layout of :func:`score_arrow`).

    Coordinates become ``list<fixed_size_list<float32, D>>``, node paths ``list<int32|int64>``.

    Parameters
    ----------
    path : str or os.PathLike
        The Parquet file to write (replaced if it exists).
    references, queries : Paths or sequence of array_like
        The batch, as :func:`to_arrow`.
    env : array_like, optional
        Integer environment index per episode: an integer column ``env``.
    ids : sequence, optional
        Episode ids: a column ``episode_id``.
    row_group_size : int, optional
        Rows per row group (default: pyarrow's).
    columns : dict, optional
        More columns, e.g. ``{"scan": [...]}``.
    **names : str
        Column names, as :func:`to_arrow`: ``reference=``, ``query=``, ``id_column=``,
        ``env_column=``.

    Returns
    -------
    str
        ``path``.

    Raises
    ------
    TypeError, ValueError
        As :func:`to_arrow`; ``TypeError`` for another keyword in ``names``.
    OSError
        The file cannot be written (:class:`~navdtw.suite.OutputError`, naming ``path``): the
        folder is missing or read-only, the disk is full. The write is atomic (a temporary file in
        the same folder, renamed over ``path``): ``path`` is never left partial, and an old file
        there stays as it was.
    ImportError
        pyarrow is not installed.
    """
    pq = parquet_module()
    table = to_arrow(references, queries, env=env, ids=ids, columns=columns, **names)
    path = os.fspath(path)
    with atomic_target(path) as tmp:
        pq.write_table(table, tmp, row_group_size=row_group_size)
    return path
