"""Slow plain-Python twins of the engine, written from the definitions, not from the C++.

Everything here works on an explicit cost matrix ``cost[i, j] = d(r_i, q_j)`` (float64, rows =
reference points, columns = query points) and fills the DP table cell by cell in Python:

    C[0][0] = 0,  C[i][0] = C[0][j] = inf,
    C[i][j] = cost[i-1, j-1] + min(C[i-1][j], C[i][j-1], C[i-1][j-1])      (1-based i, j)

so the only shared assumption with the engine is the recurrence of docs/metrics.md. Costs may be
``inf`` (unreachable node pairs): inf propagates and the result is inf, never NaN.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from fractions import Fraction

import numpy as np

INF = math.inf

Cell = tuple[int, int]


# --------------------------------------------------------------------------------------------
# costs
# --------------------------------------------------------------------------------------------


def euclidean_cost(reference, query, dtype=np.float64) -> np.ndarray:
    """cost[i, j] = ||r_i - q_j||_2 for coordinate paths ``[n, D]`` / ``[m, D]`` (float64 result).

    The paths are first rounded to float32 (the engine's storage type). ``dtype`` is the arithmetic
    of the distance itself: float64 (the mathematical value, up to one rounding), or float32, the
    engine's documented cost for float32 points: differences, squares and their left-to-right sum
    in float32, then one correctly rounded float32 sqrt.
    """
    r = np.asarray(reference, dtype=np.float32)
    q = np.asarray(query, dtype=np.float32)
    assert r.ndim == 2 and q.ndim == 2 and r.shape[1] == q.shape[1]
    r = r.astype(dtype)
    q = q.astype(dtype)
    out = np.empty((len(r), len(q)), dtype=np.float64)
    for i in range(len(r)):
        for j in range(len(q)):
            s = dtype(0.0)
            for k in range(r.shape[1]):
                diff = dtype(r[i, k] - q[j, k])
                s = dtype(s + dtype(diff * diff))
            out[i, j] = float(np.sqrt(s))
    return out


def node_cost(matrix, reference, query) -> np.ndarray:
    """cost[i, j] = matrix[r_i, q_j]: rows of the matrix are reference nodes, columns query nodes.

    The matrix is rounded to float32 first (the engine stores distance matrices as float32).
    """
    m = np.asarray(matrix, dtype=np.float32).astype(np.float64)
    r = [int(v) for v in np.asarray(reference).ravel()]
    q = [int(v) for v in np.asarray(query).ravel()]
    out = np.empty((len(r), len(q)), dtype=np.float64)
    for i, a in enumerate(r):
        for j, b in enumerate(q):
            out[i, j] = m[a, b]
    return out


# --------------------------------------------------------------------------------------------
# DP
# --------------------------------------------------------------------------------------------


def dtw_table(cost: np.ndarray, cells: set[Cell] | None = None, sums=float) -> list:
    """The full (n+1) x (m+1) DP table as nested Python lists; ``cells`` (0-based (i, j) pairs)
    restricts the recurrence to those cells, every other cell stays inf. ``sums``: the type each
    addition rounds to, ``float`` (double) or ``np.float32`` (the engine's precision="single")."""
    n, m = cost.shape
    C = [[sums(INF)] * (m + 1) for _ in range(n + 1)]
    C[0][0] = sums(0.0)
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            if cells is not None and (i - 1, j - 1) not in cells:
                continue
            best = min(C[i - 1][j], C[i][j - 1], C[i - 1][j - 1])
            C[i][j] = sums(sums(cost[i - 1, j - 1]) + best)
    return C


def dtw(cost: np.ndarray, sums=float) -> float:
    """Exact DTW over a cost matrix (sums in double, or in float32 with ``sums=np.float32``)."""
    n, m = cost.shape
    return float(dtw_table(cost, sums=sums)[n][m])


def band_cells(n: int, m: int, window: int) -> set[Cell]:
    """The cells (reference index, query index) of the Sakoe-Chiba band of half-width ``window``.

    The longer sequence (length L) goes on the rows and the shorter (length S) on the columns
    (the reference on the rows when both are equal); row t keeps the columns
    floor(c) - w .. ceil(c) + w, clipped to [0, S), with c = t (S - 1) / (L - 1) (exact rational
    arithmetic). Swapping the two paths gives the transposed cell set, so band DTW is symmetric.
    """
    assert window >= 0
    ref_on_rows = n >= m
    L, S = (n, m) if ref_on_rows else (m, n)
    cells: set[Cell] = set()
    for t in range(L):
        if L == 1:
            lo, hi = 0, S - 1
        else:
            c = Fraction(t * (S - 1), L - 1)
            lo = max(0, math.floor(c) - window)
            hi = min(S - 1, math.ceil(c) + window)
        for s in range(lo, hi + 1):
            cells.add((t, s) if ref_on_rows else (s, t))
    return cells


def dtw_band(cost: np.ndarray, window: int, sums=float) -> float:
    """Band DTW: the same recurrence with every cell outside :func:`band_cells` excluded."""
    n, m = cost.shape
    return float(dtw_table(cost, band_cells(n, m, window), sums=sums)[n][m])


def dtw_prefix(cost: np.ndarray) -> np.ndarray:
    """DTW(R, q_1..q_j) for j = 1..m, each computed from scratch on the truncated query."""
    _n, m = cost.shape
    return np.array([dtw(cost[:, :j]) for j in range(1, m + 1)], dtype=np.float64)


def path_cost(cost: np.ndarray, path: Iterable[Cell]) -> float:
    """Sum of the costs along an alignment, in path order."""
    total = 0.0
    for i, j in path:
        total += float(cost[int(i), int(j)])
    return total


def is_valid_warping_path(path, n: int, m: int) -> bool:
    """Starts at (0, 0), ends at (n-1, m-1), every step in {(1, 0), (0, 1), (1, 1)}."""
    p = np.asarray(path)
    if p.ndim != 2 or p.shape[1] != 2 or len(p) == 0:
        return False
    if tuple(p[0]) != (0, 0) or tuple(p[-1]) != (n - 1, m - 1):
        return False
    steps = {tuple(int(v) for v in s) for s in np.diff(p, axis=0)}
    return steps <= {(1, 0), (0, 1), (1, 1)}


# --------------------------------------------------------------------------------------------
# scores
# --------------------------------------------------------------------------------------------


def ndtw(dtw_value: float, ref_len: int, threshold: float = 3.0) -> float:
    """nDTW = exp(-DTW / (|R| * d_th)); 0 for an infinite DTW."""
    return math.exp(-dtw_value / (ref_len * threshold))


def success(end_distance: float, threshold: float = 3.0, inclusive: bool = True) -> float:
    """SR = 1 if d(q_last, r_last) <= d_th (the paper's Table 3; < with inclusive=False) else 0."""
    return 1.0 if (end_distance <= threshold if inclusive else end_distance < threshold) else 0.0


def sdtw(dtw_value: float, ref_len: int, end_distance: float, threshold: float = 3.0) -> float:
    """SDTW = SR * nDTW."""
    return success(end_distance, threshold) * ndtw(dtw_value, ref_len, threshold)


def end_distance(cost: np.ndarray) -> float:
    """d(q_last, r_last) read from the cost matrix."""
    return float(cost[-1, -1])


# --------------------------------------------------------------------------------------------
# anchored DTW (navdtw.dtw_anchored)
# --------------------------------------------------------------------------------------------


def _stretch_band(corners: list[Cell], window: int | None) -> set[Cell] | None:
    """The union of the Sakoe-Chiba bands of the stretches between consecutive corners (each
    band scaled to its stretch, as :func:`band_cells`); None without a window."""
    if window is None:
        return None
    cells: set[Cell] = {corners[0]}  # a 1 x 1 table has one corner and no stretch
    for (r0, q0), (r1, q1) in zip(corners, corners[1:]):
        cells |= {(r0 + i, q0 + j) for i, j in band_cells(r1 - r0 + 1, q1 - q0 + 1, window)}
    return cells


def dtw_through(cost: np.ndarray, anchors, window: int | None = None) -> float:
    """DTW over warping paths that visit every anchor (``(i, j)`` cells, in path order).

    A plain DP whose state is the cell and how many anchors the path has visited: a cell may be
    entered with ``k`` anchors visited only if anchor ``k`` (the next one) is still reachable from
    it, i.e. lies at or after it in both indices; entering an anchor's cell counts it (and any
    repeat of it). Only paths that visited all anchors end the table. No splitting into stretches.
    With ``window``, only the cells of the stretches' bands (:func:`_stretch_band`) are used.
    """
    n, m = cost.shape
    anchors = [(int(a), int(b)) for a, b in anchors]
    K = len(anchors)
    corners = [(0, 0), *anchors, (n - 1, m - 1)]
    corners = [c for k, c in enumerate(corners) if k == 0 or c != corners[k - 1]]
    band = _stretch_band(corners, window)

    def visit(k: int, cell: Cell) -> int:
        while k < K and anchors[k] == cell:
            k += 1
        return k

    # best[k][i][j]: cheapest path ending at (i, j) having visited k anchors
    best = [[[INF] * m for _ in range(n)] for _ in range(K + 1)]
    for i in range(n):
        for j in range(m):
            if band is not None and (i, j) not in band:
                continue
            c = float(cost[i, j])
            if i == 0 and j == 0:
                starts = [(0, 0.0)]
            else:
                starts = []
                for pi, pj in ((i - 1, j), (i, j - 1), (i - 1, j - 1)):
                    if pi < 0 or pj < 0:
                        continue
                    for k in range(K + 1):
                        if best[k][pi][pj] < INF:
                            starts.append((k, best[k][pi][pj]))
            for k, v in starts:
                if k < K and not (i <= anchors[k][0] and j <= anchors[k][1]):
                    continue  # anchor k can no longer be reached: this path skipped it
                k2 = visit(k, (i, j))
                best[k2][i][j] = min(best[k2][i][j], c + v)
    return float(best[K][n - 1][m - 1])


def exclusive_cells(n: int, m: int, anchors, window: int | None = None) -> set[Cell]:
    """The cells IVLN-CE's window (habitat_extensions/tour_ndtw.py, window_align_func) keeps, in
    (reference index, query index): for each anchor ``(i, j)`` every other cell of reference row
    ``i`` is removed (later anchors on a row win, as the evaluator's loop overwrites), then the
    start cell (0, 0) is kept anyway (dtw-python seeds it). With ``window``: also only the cells
    of the bands of the stretches between (0, 0), the anchors of rows > 0 and the end cell,
    anchor cells kept."""
    cells = {(i, j) for i in range(n) for j in range(m)}
    for i, j in anchors:
        cells -= {(int(i), s) for s in range(m) if s != int(j)}
    corners = [(0, 0), *[(int(i), int(j)) for i, j in anchors if int(i) > 0], (n - 1, m - 1)]
    band = _stretch_band(corners, window)
    if band is not None:
        cells &= band | {(int(i), int(j)) for i, j in anchors}
    cells.add((0, 0))
    return cells


def dtw_exclusive(cost: np.ndarray, anchors, window: int | None = None) -> float:
    """The plain recurrence of :func:`dtw_table` over :func:`exclusive_cells`."""
    n, m = cost.shape
    return float(dtw_table(cost, exclusive_cells(n, m, anchors, window))[n][m])


def warping_paths(n: int, m: int):
    """Every warping path of an n x m table, as tuples of cells (small tables only)."""

    def extend(path):
        i, j = path[-1]
        if (i, j) == (n - 1, m - 1):
            yield tuple(path)
            return
        for di, dj in ((1, 0), (0, 1), (1, 1)):
            if i + di < n and j + dj < m:
                yield from extend([*path, (i + di, j + dj)])

    yield from extend([(0, 0)])


def dtw_anchored_brute(cost: np.ndarray, anchors, exclusive: bool = False) -> float:
    """The anchored DTW by enumeration of every warping path: through, the cheapest path that
    contains every anchor; exclusive, the cheapest path inside :func:`exclusive_cells`."""
    n, m = cost.shape
    anchors = [(int(a), int(b)) for a, b in anchors]
    keep = exclusive_cells(n, m, anchors) if exclusive else None
    best = INF
    for p in warping_paths(n, m):
        if exclusive and not set(p) <= keep:
            continue
        if not exclusive and not set(anchors) <= set(p):
            continue
        best = min(best, path_cost(cost, p))
    return best
