"""Internal to :mod:`navdtw.distributed`: the engine-neutral core, an Arrow batch in, its scores
out (:func:`score_arrow`, :func:`result_schema`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ..graphs import resolve_distances
from ..metrics import evaluate, wanted_names
from ._arrow import first_null, is_node_type, paths_from_arrow, pyarrow_module

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow as pa


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
    pa = pyarrow_module()
    for col in (reference, query):
        if col not in schema.names:
            raise KeyError(f"no column {col!r} (columns: {', '.join(schema.names)})")
    nodes = is_node_type(schema.field(reference).type)
    wanted = wanted_names(metrics, nodes)
    kept = kept_columns(schema.names, reference, query, keep, wanted)
    return pa.schema([schema.field(c) for c in kept] + [pa.field(m, pa.float64()) for m in wanted])


def kept_columns(names, reference, query, keep, wanted) -> list[str]:
    """Internal: the input columns carried to the result (``keep``, else all but the paths),
    checked against the metric columns ``wanted``."""
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
    pa = pyarrow_module()
    if not nodes:
        return None  # coordinates have no distance matrices; such columns are only carried
    names = table.schema.names
    if env in names:
        col = table.column(env)
        if not pa.types.is_integer(col.type):
            raise TypeError(f"column {env!r} must hold integer environment indices, got {col.type}")
        if col.null_count:
            raise ValueError(f"{env}[{first_null(col)}] is null")
        return np.asarray(col.to_numpy()).astype(np.int64, copy=False)
    if scan in names:
        if scans is None:
            raise ValueError(f"column {scan!r} names scans: give graphs= (a navdtw.GraphSet) to resolve them")
        col = table.column(scan)
        if col.null_count:
            raise ValueError(f"{scan}[{first_null(col)}] is null")
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
    pa = pyarrow_module()
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
    nodes = is_node_type(table.schema.field(reference).type)
    wanted = wanted_names(metrics, nodes)
    kept = kept_columns(table.schema.names, reference, query, keep, wanted)
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
