"""Scoring batches stored as Apache Arrow / Parquet, on one machine or on Dask, Ray or Spark.

navdtw does not ship a distributed engine of its own: it scores *Arrow batches*, and an existing
engine moves those batches around. Everything here is optional (``pip install "navdtw[dask]"``):
``import navdtw`` and ``import navdtw.distributed`` import neither dask nor pyarrow; the functions
import them when called.

Data layout
-----------
One row per episode (a reference path and the query path scored against it):

* ``reference`` / ``query`` columns (names configurable) as Arrow list columns, either
  coordinate paths ``list<fixed_size_list<float32, D>>`` (or ``list<list<float32>>`` with every
  point of length D; float64 is accepted and rounded to float32, as :func:`navdtw.evaluate` does)
  or node paths ``list<int32>`` / ``list<int64>`` (``large_list`` works too);
* optional ``env`` (integer environment index into ``distances``) or ``scan`` (string, turned
  into an environment index with ``graphs.env_of``) for node paths;
* any other column (``episode_id``, ``split``, ...) is carried through to the result.

:func:`write_parquet_batch` writes :class:`navdtw.Paths` batches in this layout.

Engine-neutral core
-------------------
:func:`score_arrow` takes a ``pyarrow.Table`` or ``RecordBatch`` and returns a ``pyarrow.Table``
of the carried columns plus one float64 column per metric. It reads the flat values and offsets
of the list arrays without copying them (an Arrow float32 buffer becomes the
:class:`navdtw.Paths` values as is; sliced arrays are rebased; a column of several chunks is
joined once), and calls :func:`navdtw.evaluate`. ``workers`` defaults to -1 (all cores) as
everywhere in navdtw; inside an engine that owns the parallelism (Spark, Dask, Ray tasks) pass
``workers=1`` so tasks do not oversubscribe the cores, as :func:`score_parquet`'s tasks do. Per
pair, the result is bitwise identical to ``navdtw.evaluate`` over the whole batch: every metric
of a pair depends on that pair alone.

Dask
----
:func:`score_parquet` maps Parquet files (or their row groups) onto Dask workers and returns a
lazy ``dask.dataframe.DataFrame`` (``summary=True``: a dict of means)::

    from dask.distributed import Client
    from navdtw.distributed import score_parquet

    client = Client("scheduler:8786")               # or LocalCluster(...)
    ddf = score_parquet("s3://bucket/episodes/*.parquet", client=client, graphs=graphs)
    ddf.to_parquet("s3://bucket/scores/")            # or ddf.compute(), ddf.ndtw.mean().compute()
    means = score_parquet("episodes/", client=client, distances=matrices, summary=True)

One task per file (``split_row_groups=True``: per row group) reads its rows with
``pyarrow.parquet`` straight into Arrow (no pandas round trip of the list columns), scores them
with :func:`score_arrow` (``workers=1``) and hands Dask a pandas frame of scalar columns. The
distance matrices are scattered to every worker once (``client.scatter(..., broadcast=True)``)
and the tasks receive their futures. An error in a task is re-raised by ``compute()`` with the
file and row groups named.

Ray Data
--------
Same core, one ``map_batches``; the matrices go to the object store once through a callable
class's constructor::

    import ray, functools
    from navdtw.distributed import score_arrow

    class Score:
        def __init__(self, distances):           # runs once per actor
            self.fn = functools.partial(score_arrow, distances=distances, workers=1)
        def __call__(self, batch):               # a pyarrow.Table
            return self.fn(batch)

    ds = ray.data.read_parquet("episodes/")
    scores = ds.map_batches(Score, fn_constructor_kwargs={"distances": matrices},
                            batch_format="pyarrow", concurrency=8)
    scores.write_parquet("scores/")

(For coordinate paths no matrices are needed: ``ds.map_batches(score_arrow,
batch_format="pyarrow")`` is enough.)

Spark
-----
``mapInArrow`` hands each task an iterator of ``pyarrow.RecordBatch``; :func:`result_schema`
gives the output schema (write it as a Spark DDL string or StructType)::

    from navdtw.distributed import score_arrow

    bc = spark.sparkContext.broadcast(matrices)          # sent once per executor

    def fn(batches):
        for batch in batches:
            yield from score_arrow(batch, distances=bc.value, workers=1).to_batches()

    df = spark.read.parquet("episodes/")
    schema = "episode_id string, " + ", ".join(f"{m} double" for m in navdtw.METRICS)
    scores = df.mapInArrow(fn, schema)

Spark reads ``list<fixed_size_list<float32, D>>`` as ``array<array<float>>``, which arrives in
``fn`` as ``list<list<float32>>``: :func:`score_arrow` accepts both.
"""

from __future__ import annotations

import glob as _glob
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ._io import atomic_target
from ._optional import import_optional
from .graphs import resolve_distances
from .metrics import evaluate, wanted_names
from .paths import Paths, as_paths

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow as pa

__all__ = [
    "paths_from_arrow",
    "result_schema",
    "score_arrow",
    "score_parquet",
    "to_arrow",
    "write_parquet_batch",
]


def _pyarrow():
    import_optional("pyarrow.compute", "navdtw.distributed")
    return import_optional("pyarrow", "navdtw.distributed")


def _parquet():
    return import_optional("pyarrow.parquet", "navdtw.distributed")


def _dask():
    return import_optional("dask", "score_parquet"), import_optional("dask.dataframe", "score_parquet")


# --------------------------------------------------------------------------------------------
# Arrow list columns -> Paths, without copies
# --------------------------------------------------------------------------------------------


def _first_null(arr) -> int:
    return int(np.argmax(arr.is_null().to_numpy(zero_copy_only=False)))


def _numpy(arr, name: str) -> np.ndarray:
    """A primitive Arrow array (no nulls) as numpy, a view of its buffer where the type allows."""
    if arr.null_count:
        raise ValueError(f"{name}: null value at flat position {_first_null(arr)}")
    try:
        return arr.to_numpy(zero_copy_only=True)
    except Exception:  # e.g. boolean: not a numeric type we take anyway; let numpy report it
        return arr.to_numpy(zero_copy_only=False)


def _list_parts(arr, name: str) -> tuple[Any, np.ndarray]:
    """(values child sliced to the array's range, offsets rebased to 0 as int64) of a list array."""
    pa = _pyarrow()
    t = arr.type
    if not (pa.types.is_list(t) or pa.types.is_large_list(t)):
        raise TypeError(f"{name}: expected an Arrow list column, got {t}")
    if arr.null_count:
        raise ValueError(f"{name}[{_first_null(arr)}] is null; every row needs a path")
    offsets = arr.offsets.to_numpy(zero_copy_only=True)  # sliced with the array, not rebased
    start, stop = int(offsets[0]), int(offsets[-1])
    values = arr.values.slice(start, stop - start)
    rebased = offsets.astype(np.int64)
    if start:
        rebased -= start
    return values, rebased


def _point_rows(points, name: str) -> np.ndarray:
    """The ``[N, D]`` float coordinates of a column of points (fixed-size or variable lists)."""
    pa = _pyarrow()
    t = points.type
    if points.null_count:
        raise ValueError(f"{name}: null point at flat position {_first_null(points)}")
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
    pa = _pyarrow()
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
    pa = _pyarrow()
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
    pa = _pyarrow()
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


def _is_node_type(t) -> bool:
    pa = _pyarrow()
    return (pa.types.is_list(t) or pa.types.is_large_list(t)) and pa.types.is_integer(t.value_type)


# --------------------------------------------------------------------------------------------
# the engine-neutral core
# --------------------------------------------------------------------------------------------


def result_schema(
    schema, *, reference: str = "reference", query: str = "query", metrics=None, keep: Sequence[str] | None = None
) -> pa.Schema:
    """The schema :func:`score_arrow` returns for input ``schema`` (e.g. for Spark's ``mapInArrow``).

    Parameters
    ----------
    schema : pyarrow.Schema
        The input's schema.
    reference : str, optional
        The reference paths' column (default ``"reference"``).
    query : str, optional
        The query paths' column (default ``"query"``).
    metrics : iterable of str, optional
        The metrics, as :func:`score_arrow` (default: every one that applies to the paths'
        kind).
    keep : sequence of str, optional
        The carried columns (default: every column but the two path columns).

    Returns
    -------
    pyarrow.Schema
        The carried columns first, then one float64 column per metric.

    Raises
    ------
    KeyError
        A path column or a ``keep`` column that ``schema`` does not have.
    ValueError
        An unknown metric, a metric that does not apply (``sed`` on coordinates, one needing
        per-episode inputs), a carried column with a metric's name.
    ImportError
        pyarrow is not installed.
    """
    pa = _pyarrow()
    for col in (reference, query):
        if col not in schema.names:
            raise KeyError(f"no column {col!r} (columns: {', '.join(schema.names)})")
    nodes = _is_node_type(schema.field(reference).type)
    wanted = wanted_names(metrics, nodes)
    kept = _kept(schema.names, reference, query, keep, wanted)
    return pa.schema([schema.field(c) for c in kept] + [pa.field(m, pa.float64()) for m in wanted])


def _kept(names, reference, query, keep, wanted) -> list[str]:
    if keep is None:
        kept = [c for c in names if c not in (reference, query)]
    else:
        kept = [keep] if isinstance(keep, str) else list(keep)
        missing = [c for c in kept if c not in names]
        if missing:
            raise KeyError(f"keep: no column(s) {missing} (columns: {', '.join(names)})")
    clash = [c for c in kept if c in wanted]
    if clash:
        raise ValueError(f"column(s) {clash} would clash with the metric columns; pass keep= without them")
    return kept


def _env_column(table, nodes: bool, env: str, scan: str, scans: Sequence[str] | None, graphs) -> np.ndarray | None:
    """The int64 environment index of every row, from ``env`` or from ``scan`` strings."""
    pa = _pyarrow()
    if not nodes:
        return None  # coordinates have no distance matrices; such columns are only carried
    names = table.schema.names
    if env in names:
        col = table.column(env)
        if not pa.types.is_integer(col.type):
            raise TypeError(f"column {env!r} must hold integer environment indices, got {col.type}")
        if col.null_count:
            raise ValueError(f"{env}[{_first_null(col)}] is null")
        return np.asarray(col.to_numpy()).astype(np.int64, copy=False)
    if scan in names:
        if scans is None:
            raise ValueError(f"column {scan!r} names scans: give graphs= (a navdtw.GraphSet) to resolve them")
        col = table.column(scan)
        if col.null_count:
            raise ValueError(f"{scan}[{_first_null(col)}] is null")
        enc = pa.compute.dictionary_encode(col).combine_chunks() if len(col) else None
        if enc is None:
            return np.zeros(0, dtype=np.int64)
        lookup_fn = graphs.env_of if graphs is not None else {s: k for k, s in enumerate(scans)}.__getitem__
        lookup = np.empty(len(enc.dictionary), dtype=np.int64)
        for k, s in enumerate(enc.dictionary.to_pylist()):
            try:
                lookup[k] = lookup_fn(s)
            except KeyError:
                row = int(np.argmax(enc.indices.to_numpy(zero_copy_only=False) == k))
                raise KeyError(f"{scan}[{row}] = {s!r} is not a scan of the graphs") from None
        return lookup[enc.indices.to_numpy(zero_copy_only=False)]
    return None


def score_arrow(
    table_or_batch,
    *,
    distances=None,
    graphs=None,
    metrics=None,
    threshold: float = 3.0,
    convention="paper",
    workers: int = -1,
    reference: str = "reference",
    query: str = "query",
    env: str = "env",
    scan: str = "scan",
    keep: Sequence[str] | None = None,
    _scans: Sequence[str] | None = None,
) -> pa.Table:
    """Scores every row of an Arrow table (reference vs query) with :func:`navdtw.evaluate`.

    Parameters
    ----------
    table_or_batch : pyarrow.Table or pyarrow.RecordBatch
        With list columns ``reference`` and ``query`` (node ids or coordinates, see the module
        docs), optionally ``env`` (int) or ``scan`` (string).
    distances : array_like or sequence of array_like, optional
        For node paths: one ``[V, V]`` matrix, or a list of them (indexed by the ``env``
        column). Coordinate paths need none.
    graphs : GraphSet, optional
        For node paths, instead of ``distances``: its ``distances``; a ``scan`` column is
        resolved with ``graphs.env_of``.
    metrics : iterable of str, optional
        As :func:`navdtw.evaluate` (default: every metric that applies).
    threshold : float, optional
        Success distance d_th in metres (default 3.0), as :func:`navdtw.evaluate`.
    convention : str or Convention, optional
        As :func:`navdtw.evaluate` (default ``"paper"``).
    workers : int, optional
        Kernel threads (-1 = all cores, the default everywhere; pass 1 inside Spark / Dask / Ray
        tasks, whose engine owns the parallelism).
    reference : str, optional
        The reference paths' column (default ``"reference"``).
    query : str, optional
        The query paths' column (default ``"query"``).
    env : str, optional
        The integer environment column, if any (default ``"env"``).
    scan : str, optional
        The scan id column, if any (default ``"scan"``), resolved with ``graphs``.
    keep : sequence of str, optional
        Columns carried to the result (default: every column except the two path columns).

    Returns
    -------
    pyarrow.Table
        The kept columns (zero-copy) then one float64 column per metric, one row per input
        row. Per pair, values are bitwise those of ``navdtw.evaluate`` on the whole batch.

    Raises
    ------
    TypeError
        Not a ``pyarrow.Table`` or ``RecordBatch``; path columns of the wrong types (as
        :func:`paths_from_arrow`); an ``env`` column that is not integers; the type errors of
        :func:`navdtw.evaluate`.
    KeyError
        A path or ``keep`` column that the table does not have, a ``scan`` value that is not a
        scan of ``graphs``.
    ValueError
        A null path or environment; a ``scan`` column without ``graphs``; both ``graphs`` and
        ``distances``; the errors of :func:`result_schema` and :func:`navdtw.evaluate` (node
        paths without matrices, an unknown metric, ...).
    ImportError
        pyarrow is not installed.
    """
    pa = _pyarrow()
    table = table_or_batch
    if isinstance(table, pa.RecordBatch):
        table = pa.Table.from_batches([table])
    if not isinstance(table, pa.Table):
        raise TypeError(f"score_arrow takes a pyarrow.Table or RecordBatch, got {type(table_or_batch).__name__}")
    for col in (reference, query):
        if col not in table.schema.names:
            raise KeyError(f"no column {col!r} (columns: {', '.join(table.schema.names)})")
    distances = resolve_distances(graphs, distances)
    if graphs is not None:
        _scans = graphs.scans
    nodes = _is_node_type(table.schema.field(reference).type)
    wanted = wanted_names(metrics, nodes)
    kept = _kept(table.schema.names, reference, query, keep, wanted)
    columns = {c: table.column(c) for c in kept}

    if table.num_rows == 0:
        scored = {m: np.zeros(0, dtype=np.float64) for m in wanted}
    else:
        refs = paths_from_arrow(table.column(reference), name=reference)
        qrys = paths_from_arrow(table.column(query), name=query)
        env_index = _env_column(table, nodes, env, scan, _scans, graphs)
        scores = evaluate(
            refs,
            qrys,
            env=env_index,
            distances=distances,
            threshold=threshold,
            metrics=wanted,
            convention=convention,
            workers=workers,
        )
        scored = {m: scores[m] for m in wanted}
    for m in wanted:
        columns[m] = pa.array(scored[m], type=pa.float64())
    return pa.table(
        columns, schema=result_schema(table.schema, reference=reference, query=query, metrics=wanted, keep=kept)
    )


# --------------------------------------------------------------------------------------------
# writing batches
# --------------------------------------------------------------------------------------------


def _list_array(paths: Paths):
    pa = _pyarrow()
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
    pa = _pyarrow()
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
    pq = _parquet()
    table = to_arrow(references, queries, env=env, ids=ids, columns=columns, **names)
    path = os.fspath(path)
    with atomic_target(path) as tmp:
        pq.write_table(table, tmp, row_group_size=row_group_size)
    return path


# --------------------------------------------------------------------------------------------
# Dask
# --------------------------------------------------------------------------------------------


def _expand(paths_or_glob) -> tuple[Any, list[str]]:
    """(fsspec filesystem, sorted file list) for a path, directory, glob or list of them."""
    fsspec = import_optional("fsspec", "score_parquet")
    import_optional("fsspec.core", "score_parquet")
    items = [paths_or_glob] if isinstance(paths_or_glob, (str, os.PathLike)) else list(paths_or_glob)
    if not items:
        raise ValueError("score_parquet: no input paths")
    items = [os.fspath(p) for p in items]
    fs, _, _ = fsspec.core.get_fs_token_paths(items[0], mode="rb")
    files: list[str] = []
    for p in items:
        if _glob.has_magic(p):
            found = sorted(fs.glob(p))
        elif fs.isdir(p):
            found = sorted(f for f in fs.find(p) if f.endswith((".parquet", ".parq", ".pq")))
        else:
            found = [p] if fs.exists(p) else []
        if not found:
            raise FileNotFoundError(f"score_parquet: no Parquet file at {p!r}")
        files.extend(found)
    return fs, files


def _describe(path: str, row_groups: list[int] | None) -> str:
    if row_groups is None:
        return f"file {path}"
    if len(row_groups) == 1:
        return f"file {path}, row group {row_groups[0]}"
    return f"file {path}, row groups {row_groups[0]}-{row_groups[-1]}"


def _with_context(err: BaseException, where: str) -> BaseException:
    msg = f"{where}: {err}"
    if type(err) in (ValueError, TypeError, KeyError, IndexError, FileNotFoundError, OSError):
        try:
            return type(err)(msg)
        except Exception:  # pragma: no cover - odd constructor
            pass
    return RuntimeError(f"{msg} ({type(err).__name__})")


def _score_part(
    fs, path: str, row_groups: list[int] | None, read_columns: list[str] | None, matrices, scans, kwargs: dict[str, Any]
):
    """One Dask task: read a file (or some of its row groups), score it, return pandas."""
    where = _describe(path, row_groups)
    try:
        pq = _parquet()
        with fs.open(path, "rb") as f:
            pf = pq.ParquetFile(f)
            if row_groups is None:
                table = pf.read(columns=read_columns)
            else:
                table = pf.read_row_groups(row_groups, columns=read_columns)
        out = score_arrow(table, distances=matrices, _scans=scans, workers=1, **kwargs)
        return out.to_pandas()
    except Exception as err:
        raise _with_context(err, where) from err


def _key_of(matrices):
    if matrices is None:
        return None
    if isinstance(matrices, list):
        return [m.key for m in matrices]
    return matrices.key


def _client(client):
    if client is not None:
        return client
    distributed = import_optional("distributed", "dask's client", errors="ignore")
    if distributed is None:
        return None
    try:
        return distributed.default_client()
    except ValueError:  # no client: run on dask's local scheduler
        return None


def score_parquet(
    paths_or_glob,
    *,
    client=None,
    graphs=None,
    distances=None,
    metrics=None,
    threshold: float = 3.0,
    convention="paper",
    columns: Sequence[str] | None = None,
    summary: bool = False,
    split_row_groups: bool | int = False,
    reference: str = "reference",
    query: str = "query",
    env: str = "env",
    scan: str = "scan",
):
    """Scores Parquet files of episodes on Dask; returns a lazy ``dask.dataframe.DataFrame``.

    Parameters
    ----------
    paths_or_glob : str or os.PathLike or sequence of str
        A file, a directory (every ``*.parquet`` below it), a glob, or a list of them; any
        fsspec URL (``s3://...``) the workers can read.
    client : distributed.Client, optional
        The Dask client (default: the current one; without any, dask's local scheduler).
    graphs : GraphSet, optional
        As :func:`score_arrow`.
    distances : array_like or sequence of array_like, optional
        As :func:`score_arrow`. The matrices are scattered to every worker once
        (``client.scatter(..., broadcast=True)``); tasks get their futures.
    metrics : iterable of str, optional
        As :func:`navdtw.evaluate`.
    threshold : float, optional
        Success distance d_th in metres (default 3.0), as :func:`navdtw.evaluate`.
    convention : str or Convention, optional
        As :func:`navdtw.evaluate` (default ``"paper"``).
    columns : sequence of str, optional
        Columns carried to the result (default: every column but the path columns); only these
        and the path / env / scan columns are read.
    summary : bool, optional
        ``True``: compute and return ``{metric: mean over all pairs}`` instead (the means are
        Dask's reduction: equal to ``Scores.summary()`` up to float rounding of the sum order).
    split_row_groups : bool or int, optional
        ``False`` (the default): one task per file; ``True``: one per row group; an int ``k``:
        ``k`` row groups per task.
    reference, query, env, scan : str, optional
        The columns of the reference and query paths, environment indices and scan ids, as
        :func:`score_arrow`.

    Returns
    -------
    dask.dataframe.DataFrame or dict[str, float]
        A lazy frame of the carried columns and one float64 column per metric; with
        ``summary=True``, the means.

    Raises
    ------
    ValueError
        No input path, a bad ``split_row_groups``, both ``graphs`` and ``distances``; the errors
        of :func:`result_schema` (an unknown metric, ...), raised here, before any task runs.
    KeyError
        A path or carried column that the first file's schema does not have.
    FileNotFoundError
        A path, directory or glob without a Parquet file.
    ImportError
        dask, pyarrow or fsspec is not installed.

    Notes
    -----
    The frame's columns and dtypes come from the first file's schema (every file should share
    it). The frame has one partition per task, in file then row-group order, so ``compute()`` lists
    the rows in input order (each partition has its own 0-based index). Each task runs the
    kernels with ``workers=1``: Dask owns the parallelism. An error in a task surfaces through
    ``compute()`` as the same exception type with the file (and row groups) named.
    """
    dask, dd = _dask()
    pq = _parquet()
    _pyarrow()  # fails early with the install hint when pyarrow is missing
    fs, files = _expand(paths_or_glob)

    # Plan on the client from the footers only: the schema (for the frame's meta) and row groups.
    with fs.open(files[0], "rb") as f:
        schema = pq.ParquetFile(f).schema_arrow
    keep = None if columns is None else ([columns] if isinstance(columns, str) else list(columns))
    nodes = _is_node_type(schema.field(reference).type) if reference in schema.names else False
    wanted = wanted_names(metrics, nodes)
    out_schema = result_schema(schema, reference=reference, query=query, metrics=wanted, keep=keep)
    kept = _kept(schema.names, reference, query, keep, wanted)
    read = list(
        dict.fromkeys(kept + [reference, query] + ([c for c in (env, scan) if c in schema.names] if nodes else []))
    )
    meta = out_schema.empty_table().to_pandas()

    tasks: list[tuple[str, list[int] | None]] = []
    if split_row_groups:
        step = 1 if split_row_groups is True else int(split_row_groups)
        if step < 1:
            raise ValueError(f"split_row_groups must be True, False or a positive int, got {split_row_groups}")
        for path in files:
            with fs.open(path, "rb") as f:
                n_groups = pq.ParquetFile(f).metadata.num_row_groups
            for g in range(0, max(n_groups, 1), step):
                tasks.append((path, list(range(g, min(g + step, n_groups))) if n_groups else None))
    else:
        tasks = [(path, None) for path in files]

    scans = None
    matrices = None
    distances = resolve_distances(graphs, distances)
    if graphs is not None:
        scans = list(graphs.scans)
    if distances is not None:
        single = isinstance(distances, np.ndarray) and distances.ndim == 2
        matrices = [distances] if single else list(distances)
        matrices = [np.ascontiguousarray(m, dtype=np.float32) for m in matrices]
        cl = _client(client)
        # Broadcast once per worker, not per task; without a client, one graph key shared by every task.
        matrices = cl.scatter(matrices, broadcast=True) if cl is not None else dask.delayed(matrices, pure=True)

    kwargs = {
        "metrics": wanted,
        "threshold": threshold,
        "convention": convention,
        "reference": reference,
        "query": query,
        "env": env,
        "scan": scan,
        "keep": kept,
    }
    score = dask.delayed(_score_part, pure=True)
    parts = [
        score(
            fs,
            path,
            groups,
            read,
            matrices,
            scans,
            kwargs,
            dask_key_name=f"navdtw-score-{dask.base.tokenize(path, groups, read, kwargs, _key_of(matrices))}",
        )
        for path, groups in tasks
    ]
    ddf = dd.from_delayed(parts, meta=meta, verify_meta=False)
    if summary:
        means = client.compute(ddf[wanted].mean()).result() if client is not None else ddf[wanted].mean().compute()
        return {m: float(means[m]) for m in wanted}
    return ddf
