"""DTW, nDTW and SDTW over single pairs and ragged batches: the public face of the C++ engine.

Cost modes
----------
* **Coordinates** (``distances=None``): paths are ``[n, D]`` float arrays (any D >= 1, metres),
  the cost of aligning two points is their Euclidean distance. Values are stored as float32 and a
  distance is computed in float32 (relative error ~6e-8; distances below ~1e-19 m round to 0);
  sums are accumulated in double. Every kernel does this identically, so results are bit-identical
  across kernels, batch sizes and ``workers``. Coordinates beyond +-1e15 m, and paths of more
  than 2**24 dimensions, are refused: within both limits no float32 distance overflows.
* **Nodes** (``distances`` given): paths are 1-D int32/int64 node indices and the cost of
  aligning reference node ``r`` with query node ``q`` is ``distances[r, q]`` (float32, metres;
  ``inf`` marks unreachable pairs and propagates: DTW = inf, nDTW = 0). A non-symmetric matrix
  is used as given: rows are reference nodes, columns query nodes.

Methods
-------
* exact (default): the full O(|R||Q|) recurrence, O(min(|R|, |Q|)) memory.
* ``window=w``: Sakoe-Chiba band of half-width ``w`` points, scaled for unequal lengths. With the
  longer path on the rows (length L) and the shorter on the columns (length S), row ``t`` keeps
  columns ``floor(c) - w .. ceil(c) + w`` where ``c = t (S-1) / (L-1)``: the band follows the
  straight line from the first to the last cell, so the end cell is always reachable, and
  ``w >= max(|R|, |Q|) - 1`` is exact. Band DTW >= exact DTW.
* ``radius=r``: FastDTW (coordinates only) with the rules of the ``fastdtw`` package as VLN-CE
  calls it, ``fastdtw(query, reference, radius=r, dist=euclidean)``. FastDTW >= exact DTW.

Precision
---------
* ``precision="double"`` (default): sums in double, as above; what every metric uses.
* ``precision="single"``: exact and banded DTW with the sums in float32, for bulk work on long
  paths: about 1.5x the throughput of the SIMD kernel (float32 lanes need no conversions). Same
  recurrence and costs; each addition rounds to float32, so results differ from the double ones
  by a relative ~1e-7 per step of the warping path, typically 1e-6 for paths of thousands of
  points (and sums beyond float32's 3.4e38 become inf). Still identical across kernels (SIMD and
  scalar), batch and single calls, and ``workers``. Not for FastDTW (``radius``), prefixes,
  warping paths or the metrics, which sum in double.
"""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Sequence
from typing import Union

import numpy as np

from . import _core
from ._messages import shown
from .paths import Paths, as_path, as_paths, unchecked_paths

__all__ = [
    "dtw",
    "dtw_batch",
    "dtw_matrix",
    "dtw_prefix",
    "ndtw",
    "ndtw_batch",
    "sdtw",
    "sdtw_batch",
    "warping_path",
]

Matrix = np.ndarray
MAX_WORKERS = 4096
# Coordinates are measured in float32, whose largest value is 3.4028e38: a squared difference
# overflows past ~1.8e19 m. Within +-MAX_COORDINATE a difference is at most 2e15 and its square at
# most 4e30 (rounded up by at most 2**-24); D such squares summed left to right in float32 stay
# below D * 4e30 * (1 + 2**-24)**(D + 1), which for D <= MAX_DIMS = 2**24 is 1.83e38: no
# coordinate inside both limits gives an inf distance (nor an inf float32 sum of a path's
# distances, each at most 1.35e19). docs/engine.md, "Definitions".
MAX_COORDINATE = 1e15
MAX_DIMS = 2**24
DistancesArg = Union[None, Matrix, Sequence[Matrix]]


# --------------------------------------------------------------------------------------------
# argument checks shared by every entry point
# --------------------------------------------------------------------------------------------


def resolve_workers(workers: int) -> int:
    """``-1`` = every core this process may use; ``1`` = run in the calling thread."""
    if isinstance(workers, bool) or not isinstance(workers, numbers.Integral):
        raise TypeError(f"workers must be an integer, got {shown(workers)}")
    if workers == -1:
        try:
            return max(1, len(os.sched_getaffinity(0)))
        except AttributeError:  # not on Linux
            return max(1, os.cpu_count() or 1)
    if workers < 1 or workers > MAX_WORKERS:
        raise ValueError(f"workers must be -1 (all cores) or >= 1 (at most {MAX_WORKERS}), got {workers}")
    return int(workers)


def check_threshold(threshold: float) -> float:
    """A success threshold d_th: finite and > 0 (metres)."""
    if isinstance(threshold, bool) or not isinstance(threshold, numbers.Real):
        raise TypeError(f"threshold must be a number (metres), got {shown(threshold)}")
    threshold = float(threshold)
    if not (math.isfinite(threshold) and threshold > 0):
        raise ValueError(f"threshold must be finite and > 0, got {threshold}")
    return threshold


def _nonneg_int(value, name: str) -> int:
    if value is None:
        return -1
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be a non-negative integer or None, got {shown(value)}")
    if value < 0:
        raise ValueError(f"{name} must be >= 0, got {value}")
    return int(min(value, 2**62))  # anything wider than the paths is exact anyway


PRECISIONS = ("double", "single")


def method_codes(window, radius, precision="double") -> tuple[int, int, bool]:
    """Internal: (window, radius, single) for the compiled engine, checked; -1 means none."""
    if window is not None and radius is not None:
        raise ValueError("window and radius are mutually exclusive: pick the band (window) or FastDTW (radius)")
    if not isinstance(precision, str) or precision not in PRECISIONS:
        raise ValueError(f"precision must be 'double' or 'single', got {shown(precision)}")
    single = precision == "single"
    if single and radius is not None:
        raise ValueError("precision='single' is for exact and banded DTW; FastDTW (radius=) sums in double")
    return _nonneg_int(window, "window"), _nonneg_int(radius, "radius"), single


def check_matrix(d, name: str = "distances") -> np.ndarray:
    """Validates one distance matrix and returns it as C-contiguous float32.

    Square ``[V, V]``, real, no NaN, no negative entries; ``+inf`` (unreachable) is allowed.
    """
    arr = np.asarray(d)
    if arr.dtype == np.bool_ or arr.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be a real [V, V] matrix, got dtype {arr.dtype}")
    if arr.ndim != 2 or arr.shape[0] != arr.shape[1]:
        raise ValueError(f"{name} must be a square [V, V] matrix, got shape {arr.shape}")
    if arr.shape[0] == 0:
        raise ValueError(f"{name} is empty (0 x 0)")
    if arr.dtype.kind == "f" and arr.dtype != np.float32:
        big = np.isfinite(arr) & (np.abs(arr) > np.finfo(np.float32).max)
        if big.any():
            i, j = np.argwhere(big)[0]
            raise ValueError(f"{name}[{i}, {j}] = {arr[i, j]} is beyond float32 range (use inf for unreachable)")
    arr = np.ascontiguousarray(arr, dtype=np.float32)
    if arr.min() >= 0:  # one pass for the common case: a NaN minimum fails the comparison too
        return arr
    if np.isnan(arr).any():
        i, j = np.argwhere(np.isnan(arr))[0]
        raise ValueError(f"{name}[{i}, {j}] is NaN")
    i, j = np.argwhere(arr < 0)[0]
    raise ValueError(f"{name}[{i}, {j}] = {arr[i, j]} is negative; distances must be >= 0 (inf = unreachable)")


def _is_nested_matrix(d) -> bool:
    """A plain nested list ``[[0, 1], [1, 0]]`` is one matrix, not a sequence of matrices."""
    if not isinstance(d, (list, tuple)) or not d or not isinstance(d[0], (list, tuple)):
        return False
    return not d[0] or not isinstance(d[0][0], (list, tuple, np.ndarray))


def as_matrices(distances) -> list:
    """A single matrix or a sequence of them -> list of checked float32 matrices."""
    if _is_nested_matrix(distances):
        return [check_matrix(distances)]
    if isinstance(distances, np.ndarray) and distances.ndim == 2:
        return [check_matrix(distances)]
    if isinstance(distances, np.ndarray) and distances.ndim == 3:
        return [check_matrix(m, f"distances[{k}]") for k, m in enumerate(distances)]
    if isinstance(distances, (list, tuple)):
        if not distances:
            raise ValueError("distances is an empty sequence")
        return [check_matrix(m, f"distances[{k}]") for k, m in enumerate(distances)]
    return [check_matrix(distances)]


def check_finite(paths: Paths, name: str) -> None:
    """Coordinates must be finite and within +-MAX_COORDINATE metres, with at most MAX_DIMS
    dimensions; names the first bad point."""
    if paths.is_nodes:
        return
    v = paths.values
    _check_dims(v.shape[1], name)
    # The cheap test first, with no temporary array: NaN fails both comparisons, inf the bound.
    if v.size == 0 or (v.max() <= MAX_COORDINATE and v.min() >= -MAX_COORDINATE):
        return
    row = int(np.argmax(~(np.abs(v) <= MAX_COORDINATE).all(axis=1)))  # NaN compares False too
    i = int(np.searchsorted(paths.offsets, row, side="right") - 1)
    raise ValueError(_bad_point(f"{name}[{i}]", row - int(paths.offsets[i]), v[row]))


def _bad_point(where: str, k: int, point: np.ndarray) -> str:
    if not np.isfinite(point).all():
        return f"{where} has a non-finite coordinate at point {k} (NaN, inf, or beyond float32 range)"
    return f"{where} has a coordinate beyond +-{MAX_COORDINATE:g} m at point {k} (float32 distances would overflow)"


def check_nonempty(paths: Paths, name: str) -> None:
    o = paths.offsets  # non-decreasing: a path is empty where two offsets are equal
    if len(o) > 1 and (o[1:] == o[:-1]).any():
        raise ValueError(
            f"{name}[{int(np.argmin(paths.lengths))}] is empty (empty path: every path needs at least one point)"
        )


def _check_dims(dims: int, name: str) -> None:
    if dims > MAX_DIMS:
        raise ValueError(
            f"{name}: coordinates have {dims} dimensions, more than the {MAX_DIMS} (2**24) supported "
            "(float32 distances could overflow)"
        )


def _single_finite(path: np.ndarray, name: str) -> None:
    if path.ndim == 2:
        _check_dims(path.shape[1], name)
    if path.ndim == 2 and not (np.abs(path) <= MAX_COORDINATE).all():
        row = int(np.argmax(~(np.abs(path) <= MAX_COORDINATE).all(axis=1)))
        raise ValueError(_bad_point(name, row, path[row]))


def index_array(a, name: str, shape_hint: str) -> np.ndarray:
    """Internal: an integer array as int64, refusing other dtypes and values beyond int64."""
    arr = np.asarray(a)
    if arr.dtype == np.bool_ or arr.dtype.kind not in "iu":
        raise TypeError(f"{name} must be an integer array {shape_hint}, got dtype {arr.dtype}")
    if arr.dtype.kind == "u" and arr.size and arr.max() > np.uint64(np.iinfo(np.int64).max):  # exact on numpy 1.x
        raise ValueError(f"{name} holds {arr.max()}, beyond the int64 range of indices")
    return arr.astype(np.int64, order="C", copy=False)  # keeps 0-d scalars 0-d


def _match_node_dtypes(r: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if r.dtype != q.dtype:
        return r.astype(np.int64), q.astype(np.int64)
    return r, q


def _check_mode(refs_nodes: bool, qry_nodes: bool, has_distances: bool) -> None:
    if refs_nodes != qry_nodes:
        raise ValueError("references and queries must both be node paths (1-D) or both coordinates ([n, D])")
    if refs_nodes and not has_distances:
        raise ValueError("node-index paths need distances= (a [V, V] matrix, or a list of them with env=)")
    if not refs_nodes and has_distances:
        raise ValueError("distances= is for node-index paths; coordinate paths use Euclidean cost")


# --------------------------------------------------------------------------------------------
# single pairs
# --------------------------------------------------------------------------------------------


def checked_pair(reference, query, distances):
    """Internal: one pair's (reference, query, matrix or None), checked as every single-pair call does."""
    r = as_path(reference, "reference")
    q = as_path(query, "query")
    _check_mode(r.ndim == 1, q.ndim == 1, distances is not None)
    if r.ndim == 2:
        if r.shape[1] != q.shape[1]:
            raise ValueError(f"reference has {r.shape[1]} dimensions but query has {q.shape[1]}")
        _single_finite(r, "reference")
        _single_finite(q, "query")
        return r, q, None
    r, q = _match_node_dtypes(r, q)
    if _is_nested_matrix(distances):
        return r, q, check_matrix(distances)
    if isinstance(distances, (list, tuple)) or (isinstance(distances, np.ndarray) and distances.ndim != 2):
        raise ValueError("single-pair functions take one [V, V] distance matrix")
    return r, q, check_matrix(distances)


def dtw(
    reference,
    query,
    *,
    distances: Matrix | None = None,
    window: int | None = None,
    radius: int | None = None,
    precision: str = "double",
) -> float:
    """DTW(R, Q): the minimum, over warpings, of the summed distances (metres).

    Parameters
    ----------
    reference, query : array_like
        Two paths of the same kind, each of at least one point: node paths (1-D integer node
        ids, with ``distances``) or coordinate paths (``[n, D]`` metres, Euclidean cost; stored
        as float32).
    distances : array_like or None, optional
        For node paths, one ``[V, V]`` matrix of node-to-node distances (metres; ``inf`` =
        unreachable); rows are reference nodes, columns query nodes. ``None`` (the default) for
        coordinate paths.
    window : int or None, optional
        Sakoe-Chiba band half-width in points, >= 0 (see the module docs).
    radius : int or None, optional
        FastDTW radius, >= 0 (coordinates only; see the module docs). Neither ``window`` nor
        ``radius``: exact DTW.
    precision : str, optional
        ``"double"`` (the default) or ``"single"`` (float32 sums, exact and banded DTW only; see
        the module docs).

    Returns
    -------
    float
        DTW in metres; ``inf`` when a needed node pair is unreachable.

    Raises
    ------
    TypeError
        A path, matrix or option of the wrong type: a 1-D float path, a :class:`Paths` batch, a
        non-numeric matrix, a ``window`` or ``radius`` that is not an integer.
    ValueError
        An empty path, paths of different kinds or dimensions, node paths without
        ``distances`` (or coordinates with them), a node id outside the matrix, a non-finite
        coordinate or one beyond +-1e15 m, more than 2**24 dimensions, a matrix that is not
        square or holds a negative or NaN entry (or a sequence of matrices), a negative
        ``window`` or ``radius``, both of them, ``radius`` on node paths, an unknown
        ``precision``, ``precision="single"`` with ``radius``.
    """
    r, q, m = checked_pair(reference, query, distances)
    return _dtw_checked(r, q, m, window, radius, precision)


def _dtw_checked(r: np.ndarray, q: np.ndarray, m: np.ndarray | None, window, radius, precision) -> float:
    """DTW of one pair already checked by checked_pair."""
    w, rad, _ = method_codes(window, radius, precision)
    ro = np.array([0, len(r)], dtype=np.int64)
    qo = np.array([0, len(q)], dtype=np.int64)
    if m is None:
        out = _core.dtw_points(r, ro, q, qo, window=w, radius=rad, workers=1, precision=precision)
    else:
        if rad >= 0:
            raise ValueError("radius (FastDTW) needs coordinate paths: node paths cannot be averaged")
        out = _core.dtw_nodes(r, ro, q, qo, [m], window=w, workers=1, precision=precision)
    return float(out[0])


def ndtw_value(d, ref_len, threshold: float) -> np.ndarray:
    """Internal (for navdtw's modules): nDTW = exp(-DTW / (|R| d_th)), 0 where DTW is inf, element
    by element; the one place the formula is computed on the Python side (metrics, plots, the CLI).
    No checks: ``threshold`` must already be valid (:func:`check_threshold`)."""
    return np.exp(-np.asarray(d, dtype=np.float64) / (np.asarray(ref_len, dtype=np.float64) * threshold))


def ndtw(
    reference,
    query,
    *,
    threshold: float = 3.0,
    distances: Matrix | None = None,
    window: int | None = None,
    radius: int | None = None,
    precision: str = "double",
) -> float:
    """nDTW = ``exp(-DTW(R, Q) / (|R| * threshold))``, in (0, 1]; 0 when DTW is inf.

    Parameters
    ----------
    reference, query : array_like
        Two node paths (with ``distances``) or two coordinate paths, as :func:`dtw`.
    threshold : float, optional
        The success distance d_th in metres (3.0, the default, for R2R, R4R, RxR and R2R-CE);
        finite and > 0.
    distances : array_like or None, optional
        One ``[V, V]`` distance matrix for node paths, as :func:`dtw`.
    window : int or None, optional
        Sakoe-Chiba band half-width, as :func:`dtw`.
    radius : int or None, optional
        FastDTW radius (coordinates only), as :func:`dtw`.
    precision : str, optional
        ``"double"`` or ``"single"``, as :func:`dtw`.

    Returns
    -------
    float
        nDTW in (0, 1]; 0.0 when a needed node pair is unreachable.

    Raises
    ------
    TypeError
        As :func:`dtw`; also a ``threshold`` that is not a number.
    ValueError
        As :func:`dtw`; also a ``threshold`` that is not finite and > 0.
    """
    threshold = check_threshold(threshold)
    d = dtw(reference, query, distances=distances, window=window, radius=radius, precision=precision)
    return float(ndtw_value(d, len(reference), threshold))


def _end_distance(r_last, q_last, m) -> float:
    if m is None:
        return float(np.linalg.norm(np.asarray(q_last, np.float64) - np.asarray(r_last, np.float64)))
    return float(m[int(r_last), int(q_last)])


def _within(d, threshold: float, inclusive: bool):
    """Success: ``d <= threshold`` (the paper's Table 3) or ``d < threshold`` (``inclusive=False``)."""
    if not isinstance(inclusive, (bool, np.bool_)):
        raise TypeError(f"inclusive must be True or False, got {shown(inclusive)}")
    return d <= threshold if inclusive else d < threshold


def sdtw(
    reference,
    query,
    *,
    threshold: float = 3.0,
    inclusive: bool = True,
    distances: Matrix | None = None,
    window: int | None = None,
    radius: int | None = None,
    precision: str = "double",
) -> float:
    """SDTW = SR * nDTW with SR = 1 if d(q_last, r_last) <= threshold else 0.

    Parameters
    ----------
    reference, query : array_like
        Two node paths (with ``distances``) or two coordinate paths, as :func:`dtw`.
    threshold : float, optional
        The success distance d_th in metres (default 3.0); finite and > 0.
    inclusive : bool, optional
        Success is ``<=`` (the default: the nDTW paper's Table 3, as
        ``evaluate(convention="paper")``); ``False`` counts success with ``<`` as the R2R /
        VLN-DUET / VLN-CE evaluators do.
    distances : array_like or None, optional
        One ``[V, V]`` distance matrix for node paths, as :func:`dtw`; the end distance
        d(q_last, r_last) is read from it too.
    window : int or None, optional
        Sakoe-Chiba band half-width, as :func:`dtw`.
    radius : int or None, optional
        FastDTW radius (coordinates only), as :func:`dtw`.
    precision : str, optional
        ``"double"`` or ``"single"``, as :func:`dtw`.

    Returns
    -------
    float
        SDTW in [0, 1]: nDTW when the query ends within ``threshold`` of the reference's end,
        else 0.0.

    Raises
    ------
    TypeError
        As :func:`dtw`; also a ``threshold`` that is not a number, an ``inclusive`` that is not
        a bool.
    ValueError
        As :func:`dtw` (the options are checked even when the episode failed); also a
        ``threshold`` that is not finite and > 0.
    """
    threshold = check_threshold(threshold)
    r, q, m = checked_pair(reference, query, distances)
    method_codes(window, radius, precision)  # bad options are an error even when the episode failed
    if not _within(_end_distance(r[-1], q[-1], m), threshold, inclusive):
        return 0.0
    return float(ndtw_value(_dtw_checked(r, q, m, window, radius, precision), len(r), threshold))


def warping_path(reference, query, *, distances: Matrix | None = None) -> tuple[float, np.ndarray]:
    """The exact DTW value and its optimal alignment.

    Ties prefer the diagonal step, then advancing the reference. Memory is one byte per DP cell
    (refused beyond 2**32 cells).

    Parameters
    ----------
    reference, query : array_like
        Two node paths (with ``distances``) or two coordinate paths, as :func:`dtw`.
    distances : array_like or None, optional
        One ``[V, V]`` distance matrix for node paths, as :func:`dtw`.

    Returns
    -------
    dtw : float
        The exact DTW (metres), as :func:`dtw`.
    path : numpy.ndarray
        int64 ``[K, 2]`` rows of (reference index, query index), from (0, 0) to
        ``(|R|-1, |Q|-1)``.

    Raises
    ------
    TypeError
        A path or matrix of the wrong type, as :func:`dtw`.
    ValueError
        The path and matrix errors of :func:`dtw`; also paths whose DP table exceeds 2**32
        cells.
    """
    r, q, m = checked_pair(reference, query, distances)
    if m is None:
        value, path = _core.warping_path_points(r, q)
    else:
        value, path = _core.warping_path_nodes(r, q, m)
    return float(value), path


def dtw_prefix(reference, query, *, distances: Matrix | None = None) -> np.ndarray:
    """DTW(R, q_1..q_j) for every prefix length j of the query, in one ``O(|R||Q|)`` pass.

    ``dtw_prefix(R, Q)[-1] == dtw(R, Q)``. Useful for per-step rewards and partial trajectories.

    Parameters
    ----------
    reference, query : array_like
        Two node paths (with ``distances``) or two coordinate paths, as :func:`dtw`.
    distances : array_like or None, optional
        One ``[V, V]`` distance matrix for node paths, as :func:`dtw`.

    Returns
    -------
    numpy.ndarray
        float64 ``[|Q|]``: entry ``j - 1`` is the exact DTW of the reference against the query's
        first ``j`` points (metres).

    Raises
    ------
    TypeError
        A path or matrix of the wrong type, as :func:`dtw`.
    ValueError
        The path and matrix errors of :func:`dtw`.
    """
    r, q, m = checked_pair(reference, query, distances)
    if m is None:
        return _core.prefix_points(r, q)
    return _core.prefix_nodes(r, q, m)


# --------------------------------------------------------------------------------------------
# batches
# --------------------------------------------------------------------------------------------


class Batch:
    """Internal (for navdtw's modules): the validated inputs of a batch call, shared by
    dtw/ndtw/sdtw_batch, dtw_matrix, :func:`navdtw.evaluate` and the random baselines.

    Arguments as :func:`dtw_batch` (``all_pairs=True``: every reference with every query, as
    :func:`dtw_matrix`). Raises ``ValueError`` / ``TypeError`` as the public batch functions do.
    """

    def __init__(self, references, queries, distances, env, pairs, all_pairs=False):
        self.refs = as_paths(references, "references")
        self.qrys = as_paths(queries, "queries")
        _check_mode(self.refs.is_nodes, self.qrys.is_nodes, distances is not None)
        check_nonempty(self.refs, "references")
        check_nonempty(self.qrys, "queries")
        if not self.refs.is_nodes:
            if self.refs.dim != self.qrys.dim:
                raise ValueError(f"references are {self.refs.dim}-D but queries are {self.qrys.dim}-D")
            check_finite(self.refs, "references")
            check_finite(self.qrys, "queries")
            self.matrices = None
            if env is not None:
                raise ValueError("env= selects distance matrices; coordinate paths have none")
        else:
            rv, qv = _match_node_dtypes(self.refs.values, self.qrys.values)
            self.refs = unchecked_paths(rv, self.refs.offsets)
            self.qrys = unchecked_paths(qv, self.qrys.offsets)
            self.matrices = as_matrices(distances)
        self.pairs = None
        self.all_pairs = all_pairs
        nr, nq = len(self.refs), len(self.qrys)
        if pairs is not None:
            p = index_array(pairs, "pairs", "[B, 2]")
            if p.ndim != 2 or p.shape[1] != 2:
                raise ValueError(f"pairs must have shape [B, 2] (reference index, query index), got {p.shape}")
            for col, n, what, many in ((0, nr, "reference", "references"), (1, nq, "query", "queries")):
                if len(p) and (p[:, col].min() < 0 or p[:, col].max() >= n):  # reductions, no temporaries
                    b = int(np.argmax((p[:, col] < 0) | (p[:, col] >= n)))
                    shown_pair = (int(p[b, 0]), int(p[b, 1]))
                    raise ValueError(f"pairs[{b}] = {shown_pair}: {what} index out of range for {n} {many}")
            self.pairs = p
            self.size = len(p)
        elif all_pairs:
            self.size = nr * nq
        else:
            if nr != nq:
                raise ValueError(
                    f"references ({nr}) and queries ({nq}) differ in length; pass pairs= to choose pairs, "
                    "or use dtw_matrix for all pairs"
                )
            self.size = nr
        self.env = None
        if self.matrices is not None:
            if env is None:
                if len(self.matrices) > 1:
                    raise ValueError("a sequence of distance matrices needs env= (one environment index per pair)")
            else:
                e = index_array(env, "env", "[B]")
                if e.ndim == 0:
                    e = np.full(self.size, int(e), dtype=np.int64)
                if e.shape != (self.size,):
                    raise ValueError(f"env must have one entry per pair ({self.size}), got shape {e.shape}")
                if len(e) and (e.min() < 0 or e.max() >= len(self.matrices)):  # reductions, no temporaries
                    b = int(np.argmax((e < 0) | (e >= len(self.matrices))))
                    raise ValueError(f"env[{b}] = {e[b]} is out of range for {len(self.matrices)} distance matrices")
                self.env = e

    def ref_index(self) -> np.ndarray:
        nr, nq = len(self.refs), len(self.qrys)
        if self.pairs is not None:
            return self.pairs[:, 0]
        if self.all_pairs:
            return np.repeat(np.arange(nr, dtype=np.int64), nq)
        return np.arange(nr, dtype=np.int64)

    def qry_index(self) -> np.ndarray:
        nr, nq = len(self.refs), len(self.qrys)
        if self.pairs is not None:
            return self.pairs[:, 1]
        if self.all_pairs:
            return np.tile(np.arange(nq, dtype=np.int64), nr)
        return np.arange(nq, dtype=np.int64)

    def dtw(self, window, radius, workers, precision="double") -> np.ndarray:
        w, rad, _ = method_codes(window, radius, precision)
        workers = resolve_workers(workers)
        r, q = self.refs, self.qrys
        if self.matrices is None:
            return _core.dtw_points(
                r.values,
                r.offsets,
                q.values,
                q.offsets,
                pairs=self.pairs,
                all_pairs=self.all_pairs,
                window=w,
                radius=rad,
                workers=workers,
                precision=precision,
            )
        if rad >= 0:
            raise ValueError("radius (FastDTW) needs coordinate paths: node paths cannot be averaged")
        return _core.dtw_nodes(
            r.values,
            r.offsets,
            q.values,
            q.offsets,
            self.matrices,
            env=self.env,
            pairs=self.pairs,
            all_pairs=self.all_pairs,
            window=w,
            workers=workers,
            precision=precision,
        )

    def end_distances(self) -> np.ndarray:
        """d(q_last, r_last) for every pair (metres)."""
        r_last = self.refs.last()[self.ref_index()]
        q_last = self.qrys.last()[self.qry_index()]
        if self.matrices is None:
            diff = q_last.astype(np.float64) - r_last.astype(np.float64)
            return np.sqrt(np.einsum("ij,ij->i", diff, diff))
        if len(self.matrices) == 1:
            return self.matrices[0][r_last, q_last].astype(np.float64)
        out = np.empty(self.size, dtype=np.float64)
        for k, m in enumerate(self.matrices):
            sel = self.env == k
            out[sel] = m[r_last[sel], q_last[sel]]
        return out


def dtw_batch(
    references,
    queries,
    *,
    distances: DistancesArg = None,
    env=None,
    pairs=None,
    window: int | None = None,
    radius: int | None = None,
    workers: int = -1,
    precision: str = "double",
) -> np.ndarray:
    """DTW of many pairs in one call (float64 ``[B]``, metres).

    Parameters
    ----------
    references, queries : Paths or sequence of array_like
        :class:`navdtw.Paths` or lists of paths, all node ids or all ``[n, D]`` coordinates, each
        of at least one point.
    distances : array_like or sequence of array_like, optional
        One ``[V, V]`` matrix or a sequence of them (node paths); ``None`` (the default) for
        coordinates.
    env : array_like, optional
        With a sequence of matrices, ``[B]`` ints (or one int for all) naming the matrix of each
        pair, so a split spanning many scans scores in one call.
    pairs : array_like, optional
        ``[B, 2]`` int rows of (reference index, query index); default element-wise (reference i
        with query i). One reference can serve many queries without copies.
    window : int or None, optional
        Sakoe-Chiba band half-width, as :func:`dtw`.
    radius : int or None, optional
        FastDTW radius (coordinates only), as :func:`dtw`.
    workers : int, optional
        Threads: -1 (the default) = all cores, 1 = the calling thread; results are identical for
        every value.
    precision : str, optional
        ``"double"`` or ``"single"``, as :func:`dtw`.

    Returns
    -------
    numpy.ndarray
        float64 ``[B]``, one DTW per pair (metres).

    Raises
    ------
    TypeError
        As :func:`dtw`; also a single array or a string given as a batch, ``pairs`` or ``env``
        that are not integers, ``workers`` that is not an integer.
    ValueError
        As :func:`dtw`, naming the path or pair index; also an empty batch, unequal batch
        lengths without ``pairs``, an index out of range in ``pairs`` or ``env``, several
        matrices without ``env``, ``env`` with coordinates, ``workers`` other than -1 or 1 to
        4096.
    """
    return Batch(references, queries, distances, env, pairs).dtw(window, radius, workers, precision)


def ndtw_batch(
    references,
    queries,
    *,
    threshold: float = 3.0,
    distances: DistancesArg = None,
    env=None,
    pairs=None,
    window: int | None = None,
    radius: int | None = None,
    workers: int = -1,
    precision: str = "double",
) -> np.ndarray:
    """nDTW of many pairs: ``exp(-DTW / (|R| * threshold))``.

    Parameters
    ----------
    references, queries : Paths or sequence of array_like
        The batch, as :func:`dtw_batch`.
    threshold : float, optional
        The success distance d_th in metres (default 3.0); finite and > 0.
    distances : array_like or sequence of array_like, optional
        One ``[V, V]`` matrix or a sequence of them (node paths), as :func:`dtw_batch`.
    env : array_like, optional
        The matrix of each pair, as :func:`dtw_batch`.
    pairs : array_like, optional
        ``[B, 2]`` (reference index, query index) rows, as :func:`dtw_batch`.
    window : int or None, optional
        Sakoe-Chiba band half-width, as :func:`dtw`.
    radius : int or None, optional
        FastDTW radius (coordinates only), as :func:`dtw`.
    workers : int, optional
        Threads (-1 = all cores), as :func:`dtw_batch`.
    precision : str, optional
        ``"double"`` or ``"single"``, as :func:`dtw`.

    Returns
    -------
    numpy.ndarray
        float64 ``[B]``, one nDTW per pair, in [0, 1] (0 where DTW is inf).

    Raises
    ------
    TypeError
        As :func:`dtw_batch`; also a ``threshold`` that is not a number.
    ValueError
        As :func:`dtw_batch`; also a ``threshold`` that is not finite and > 0.
    """
    threshold = check_threshold(threshold)
    batch = Batch(references, queries, distances, env, pairs)
    d = batch.dtw(window, radius, workers, precision)
    return ndtw_value(d, batch.refs.lengths[batch.ref_index()], threshold)


def sdtw_batch(
    references,
    queries,
    *,
    threshold: float = 3.0,
    inclusive: bool = True,
    distances: DistancesArg = None,
    env=None,
    pairs=None,
    window: int | None = None,
    radius: int | None = None,
    workers: int = -1,
    precision: str = "double",
) -> np.ndarray:
    """SDTW of many pairs: nDTW where d(q_last, r_last) <= threshold, else 0.

    Parameters
    ----------
    references, queries : Paths or sequence of array_like
        The batch, as :func:`dtw_batch`.
    threshold : float, optional
        The success distance d_th in metres (default 3.0); finite and > 0.
    inclusive : bool, optional
        Success is ``<=`` (the default) or, with ``False``, ``<``; as :func:`sdtw`.
    distances : array_like or sequence of array_like, optional
        One ``[V, V]`` matrix or a sequence of them (node paths), as :func:`dtw_batch`.
    env : array_like, optional
        The matrix of each pair, as :func:`dtw_batch`.
    pairs : array_like, optional
        ``[B, 2]`` (reference index, query index) rows, as :func:`dtw_batch`.
    window : int or None, optional
        Sakoe-Chiba band half-width, as :func:`dtw`.
    radius : int or None, optional
        FastDTW radius (coordinates only), as :func:`dtw`.
    workers : int, optional
        Threads (-1 = all cores), as :func:`dtw_batch`.
    precision : str, optional
        ``"double"`` or ``"single"``, as :func:`dtw`.

    Returns
    -------
    numpy.ndarray
        float64 ``[B]``, one SDTW per pair, in [0, 1].

    Raises
    ------
    TypeError
        As :func:`dtw_batch`; also a ``threshold`` that is not a number, an ``inclusive`` that
        is not a bool.
    ValueError
        As :func:`dtw_batch`; also a ``threshold`` that is not finite and > 0.
    """
    threshold = check_threshold(threshold)
    _within(0.0, threshold, inclusive)
    batch = Batch(references, queries, distances, env, pairs)
    d = batch.dtw(window, radius, workers, precision)
    value = ndtw_value(d, batch.refs.lengths[batch.ref_index()], threshold)
    return np.where(_within(batch.end_distances(), threshold, inclusive), value, 0.0)


def dtw_matrix(
    references,
    queries,
    *,
    distances: Matrix | None = None,
    window: int | None = None,
    radius: int | None = None,
    workers: int = -1,
    precision: str = "double",
) -> np.ndarray:
    """DTW of every reference against every query.

    All pairs share one cost: Euclidean for coordinates, or the single ``distances`` matrix.

    Parameters
    ----------
    references, queries : Paths or sequence of array_like
        The two batches (any lengths), as :func:`dtw_batch`.
    distances : array_like or None, optional
        One ``[V, V]`` matrix for node paths (not a sequence: every pair shares it); ``None``
        (the default) for coordinates.
    window : int or None, optional
        Sakoe-Chiba band half-width, as :func:`dtw`.
    radius : int or None, optional
        FastDTW radius (coordinates only), as :func:`dtw`.
    workers : int, optional
        Threads (-1 = all cores), as :func:`dtw_batch`.
    precision : str, optional
        ``"double"`` or ``"single"``, as :func:`dtw`.

    Returns
    -------
    numpy.ndarray
        float64 ``[len(references), len(queries)]``: entry ``[i, j]`` is the DTW of reference
        ``i`` and query ``j`` (metres).

    Raises
    ------
    TypeError
        As :func:`dtw_batch`.
    ValueError
        As :func:`dtw_batch`; also a sequence of distance matrices.
    """
    if isinstance(distances, (list, tuple)) and not _is_nested_matrix(distances):
        raise ValueError("dtw_matrix takes one [V, V] distance matrix (all pairs share an environment)")
    batch = Batch(references, queries, distances, None, None, all_pairs=True)
    return batch.dtw(window, radius, workers, precision).reshape(len(batch.refs), len(batch.qrys))
