"""The resampling engine, the lowest module of :mod:`navdtw.stats`: the input checks, the seeded
blocks of draws, and the cluster bootstrap with its percentile, BCa and jackknife intervals.

A bootstrap resample is a vector of cluster counts ``c``; its mean of a column is ``(c @ S) / (c @
sizes)`` with ``S`` the per-cluster sums (:class:`Setup`), so one matrix product per group of
blocks serves every column at once. The draws come in fixed blocks of :data:`BLOCK` rows, block
``k`` of a stream from its own generator ``SeedSequence(seed, spawn_key=(stream, k))``: the numbers
depend only on the data, the seed, the number of resamples and the clusters.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Sequence
from typing import Any, NamedTuple

import numpy as np
from scipy import special

from .._messages import shown

__all__ = ["BLOCK", "MIN_UNITS"]

BLOCK = 500
"""The number of resamples per block, the unit of random-number generation (each block has its own generator)."""
MIN_UNITS = 2
"""The default least number of units (clusters, or episodes) with a value for an interval; below it
the interval is NaN. One unit has no spread to resample (its "interval" would be one point)."""
_GROUP = 4  # blocks per matrix product (memory: _GROUP * BLOCK * clusters floats)
_CELLS = 1 << 22  # floats in one chunk of [pairs, resamples] work (32 MB): memory never grows with the pairs

#: Internal: the streams of the seeded blocks, one per kind of draw (all here, so that two kinds
#: never share one): the bootstrap's cluster counts, the permutation test's sign flips, and the
#: runs term of the comparisons with the best.
BOOTSTRAP_STREAM = 0
PERMUTATION_STREAM = 1
RUNS_STREAM = 2
_METHODS = ("percentile", "bca")


# ----------------------------------------------------------------------------------------- checks


def checked_matrix(matrix: Any, names: Sequence[str] | None) -> tuple[np.ndarray, list[str]]:
    """Internal: ``(matrix [episodes, k] as floats, a label per column)``, checked: two dimensions (one
    is a column), episodes, as many ``names`` as columns, no NaN (naming the column and episode)."""
    m = np.asarray(matrix, dtype=np.float64)
    if m.ndim == 1:
        m = m[:, None]
    if m.ndim != 2:
        raise ValueError(f"stats: expected a [episodes, columns] matrix, got shape {np.shape(matrix)}")
    n, k = m.shape
    if n == 0:
        raise ValueError("stats: no episodes")
    if names is None:
        labels = [f"column {j}" for j in range(k)]
    else:
        labels = [f"column {name!r}" for name in names]
        if len(labels) != k:
            raise ValueError(f"stats: {len(labels)} names for {k} columns")
    bad = np.isnan(m)
    if bad.any():
        e, j = np.argwhere(bad)[0]
        raise ValueError(f"stats: {labels[j]} is NaN at episode {e}; NaN is not a metric value (fix or drop it)")
    return m, labels


def checked_weights(weights: Any, m: np.ndarray, labels: Sequence[str]) -> np.ndarray | None:
    """Internal: ``weights`` as ``[episodes, k]`` floats matching ``m`` (None: every column a plain
    mean), checked: finite and >= 0 (naming the column and episode). A column of weights all 1 is a
    plain mean."""
    if weights is None:
        return None
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim == 1:
        w = w[:, None]
    if w.shape != m.shape:
        raise ValueError(f"stats: weights must have the matrix's shape {m.shape}, got {np.shape(weights)}")
    bad = ~(np.isfinite(w) & (w >= 0))
    if bad.any():
        e, j = np.argwhere(bad)[0]
        raise ValueError(
            f"stats: {labels[j]} has weight {float(w[e, j])!r} at episode {e}; a weight is finite and >= 0"
        )
    return w


def cluster_index(clusters: Any, n: int) -> tuple[np.ndarray, int]:
    """Internal: cluster labels (any hashable values, e.g. path ids) -> (index in 0..G-1 per
    episode, G)."""
    if clusters is None:
        return np.arange(n), n
    labels = list(clusters)
    if len(labels) != n:
        raise ValueError(f"stats: clusters has {len(labels)} labels for {n} episodes")
    index: dict[Hashable, int] = {}
    try:
        inv = np.fromiter((index.setdefault(c, len(index)) for c in labels), dtype=np.intp, count=n)
    except TypeError as err:
        raise ValueError(f"stats: cluster labels must be hashable ({err})") from None
    return inv, len(index)


def check_options(confidence: float, resamples: int, method: str, min_units: int = MIN_UNITS) -> None:
    """Internal: the options every bootstrap takes, checked (``ValueError`` naming the bad one)."""
    if isinstance(min_units, bool) or int(min_units) != min_units or min_units < 1:
        raise ValueError(f"stats: min_units must be a positive integer, got {min_units}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"stats: confidence must be in (0, 1), got {confidence}")
    if int(resamples) != resamples or resamples < 1:
        raise ValueError(f"stats: resamples must be a positive integer, got {resamples}")
    if method not in _METHODS:
        raise ValueError(f"stats: method must be one of {_METHODS}, got {shown(method)}")


def checked_pairs(pairs: Any, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Internal: ``(i, j)``, the column indices of ``pairs`` (``(i, j)`` pairs of columns of ``k``),
    checked."""
    p = np.asarray(pairs, dtype=np.intp) if len(pairs) else np.zeros((0, 2), dtype=np.intp)
    if p.ndim != 2 or p.shape[1] != 2:
        raise ValueError(f"stats: pairs must be (i, j) column pairs, got shape {p.shape}")
    if p.size and (p.min() < 0 or p.max() >= k):
        raise ValueError(f"stats: pair column index out of range 0..{k - 1}")
    return p[:, 0], p[:, 1]


# --------------------------------------------------------------------------------------- resamples


def draws(seed: int, stream: int, total: int, g: int, draw, first: int = 0) -> Iterator[tuple[int, np.ndarray]]:
    """Internal: (first row, [rows, g] matrix) for resamples ``first .. total - 1`` of ``stream``,
    ``_GROUP`` blocks at a time (one large matrix product is much cheaper than several small ones).
    Block k's rows come from their own generator ``SeedSequence(seed, spawn_key=(stream, k))``: fixed by
    seed alone, and a prefix of a longer draw, so ``first > 0`` continues a run of ``first`` resamples
    (the block holding row ``first`` is drawn again and its earlier rows dropped)."""
    k0 = first // BLOCK
    for start in range(k0 * BLOCK, total, _GROUP * BLOCK):
        rows = min(_GROUP * BLOCK, total - start)
        out = np.empty((rows, g))
        for a in range(0, rows, BLOCK):
            k = (start + a) // BLOCK
            rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(stream, k)))
            out[a : a + BLOCK] = draw(rng, min(BLOCK, rows - a), g)
        skip = max(first - start, 0)
        yield start + skip, out[skip:]


def _counts(rng: np.random.Generator, rows: int, g: int) -> np.ndarray:
    """``rows`` bootstrap resamples of ``g`` clusters as a [rows, g] matrix of counts."""
    idx = rng.integers(0, g, size=(rows, g))
    out = np.empty((rows, g), dtype=np.intp)
    for r in range(rows):  # one short bincount per row beats one long one (cache)
        out[r] = np.bincount(idx[r], minlength=g)
    return out


def sign_flips(rng: np.random.Generator, rows: int, g: int) -> np.ndarray:
    """Internal: ``rows`` random sign vectors of length ``g`` (+-1), one random bit each."""
    bits = np.unpackbits(np.frombuffer(rng.bytes((rows * g + 7) // 8), dtype=np.uint8), count=rows * g)
    return bits.reshape(rows, g).astype(np.int8) * 2 - 1


def all_sign_flips(g: int) -> np.ndarray:
    """Internal: all 2**g sign vectors (for the exact permutation test on few clusters)."""
    bits = (np.arange(2**g)[:, None] >> np.arange(g)) & 1
    return bits.astype(np.float64) * 2.0 - 1.0


# ------------------------------------------------------------------------------------- intervals


def _quantiles(boot: np.ndarray, q: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Quantile ``q[..., j]`` of the first ``valid[j]`` values of each row ``boot[j]`` ([k, B]; the
    others are +inf, empty resamples), numpy's 'linear' rule; partitions row by row around the few
    order statistics needed instead of sorting."""
    b = valid[None, :].astype(np.float64)
    h = np.clip(q, 0.0, 1.0) * (b - 1)  # [m, k]
    lo = np.floor(h).astype(np.intp)
    hi = np.minimum(lo + 1, valid[None, :] - 1)
    out = np.empty(h.shape)
    for j in range(boot.shape[0]):
        kth = np.unique(np.concatenate([lo[:, j], hi[:, j]]))
        row = np.partition(boot[j], kth)
        x0, x1 = row[lo[:, j]], row[hi[:, j]]
        out[:, j] = x0 + (x1 - x0) * (h[:, j] - lo[:, j])
    return out


def _interval(
    boot: np.ndarray, theta: np.ndarray, jack: np.ndarray | None, confidence: float, method: str
) -> tuple[np.ndarray, np.ndarray]:
    """Percentile or BCa interval for each row of ``boot`` [k, B] (estimates ``theta`` [k],
    leave-one-cluster-out jackknife ``jack`` [k, G] for BCa). NaN resamples (a resample without a
    finite value of that row's column) are left out of the row's distribution."""
    alpha = (1.0 - confidence) / 2.0
    k, b = boot.shape
    empty = np.isnan(boot)
    if empty.any():  # rare: only columns with left-out values can draw a resample with none
        boot = np.where(empty, np.inf, boot)
        valid = b - empty.sum(axis=1)
    else:
        valid = np.full(k, b)
    q = np.repeat(np.array([[alpha], [1.0 - alpha]]), k, axis=1)
    if method == "bca" and jack is not None:
        # bias correction from the mid-rank of theta in its bootstrap distribution (ties count half)
        below = (boot < theta[:, None]).sum(axis=1) + 0.5 * (boot == theta[:, None]).sum(axis=1)
        z0 = special.ndtri(np.clip(below / valid, 0.5 / valid, 1.0 - 0.5 / valid))
        dev = jack.mean(axis=1, keepdims=True) - jack
        top = np.abs(dev).max(axis=1, keepdims=True)
        dev = np.divide(dev, top, out=np.zeros_like(dev), where=top > 0)  # scale-free; avoids under/overflow
        den = (dev**2).sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            accel = np.where(den > 0, (dev**3).sum(axis=1) / (6.0 * den**1.5), 0.0)
        z = special.ndtri(np.array([alpha, 1.0 - alpha]))[:, None]
        q = special.ndtr(z0 + (z0 + z) / (1.0 - accel * (z0 + z)))
    lo, hi = _quantiles(boot, q, valid)
    return lo, hi


class Setup(NamedTuple):
    """Internal: the columns of a matrix as the bootstrap reads them (:func:`prepare`): per-cluster
    sums, and counts where values are left out."""

    sums: np.ndarray  # [k, G] per-column, per-cluster sums of the finite values
    counts: np.ndarray | None  # [k, G] finite values per column and cluster; None when all are finite
    sizes: np.ndarray  # [G] episodes per cluster
    mean: np.ndarray  # [k] mean of the finite values (NaN where there is none)
    units: np.ndarray  # [k] clusters with at least one finite value
    inv: np.ndarray  # [n] cluster of each episode
    g: int


def _cluster_sums(x: np.ndarray, inv: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """[n, k] -> [k, G]: sums over the episodes of each cluster (every cluster is non-empty)."""
    order = np.argsort(inv, kind="stable")
    starts = np.concatenate([[0], np.cumsum(sizes[:-1])]).astype(np.intp)
    return np.ascontiguousarray(np.add.reduceat(x[order], starts, axis=0).T)


def prepare(m: np.ndarray, clusters: Any, weights: np.ndarray | None = None) -> Setup:
    """Internal: the :class:`Setup` of ``m`` [episodes, k] (from :func:`checked_matrix`) with
    ``clusters`` (one label per episode, checked here; None: every episode its own); infinite values
    are left out. With ``weights`` (from :func:`checked_weights`) each column is a pooled ratio: its
    sums are of ``w * v`` and its counts of ``w``, so every mean below (the estimate, each
    resample's, the jackknife's) is ``sum(w * v) / sum(w)`` recomputed on the units drawn."""
    n, k = m.shape
    inv, g = cluster_index(clusters, n)
    sizes = np.bincount(inv, minlength=g).astype(np.float64)
    finite = np.isfinite(m)
    if weights is not None:
        w = np.where(finite, weights, 0.0)
        work, f = np.where(finite, m, 0.0) * w, w
        if clusters is None:
            sums, counts = np.ascontiguousarray(work.T), np.ascontiguousarray(f.T)
        else:
            sums, counts = _cluster_sums(work, inv, sizes), _cluster_sums(f, inv, sizes)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = sums.sum(axis=1) / counts.sum(axis=1)
        return Setup(sums, counts, sizes, mean, (counts > 0).sum(axis=1), inv, g)
    if finite.all():
        sums = np.ascontiguousarray(m.T) if clusters is None else _cluster_sums(m, inv, sizes)
        return Setup(sums, None, sizes, sums.sum(axis=1) / n, np.full(k, g), inv, g)
    work = np.where(finite, m, 0.0)
    f = finite.astype(np.float64)
    if clusters is None:
        sums, counts = np.ascontiguousarray(work.T), np.ascontiguousarray(f.T)
    else:
        sums, counts = _cluster_sums(work, inv, sizes), _cluster_sums(f, inv, sizes)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = sums.sum(axis=1) / counts.sum(axis=1)
    return Setup(sums, counts, sizes, mean, (counts > 0).sum(axis=1), inv, g)


def jackknife(s: Setup) -> np.ndarray | None:
    """Internal: leave-one-cluster-out means [k, G]; None with a single cluster (BCa falls back to
    percentile)."""
    if s.g < 2:
        return None
    total = s.sums.sum(axis=1, keepdims=True)
    if s.counts is None:
        return (total - s.sums) / (s.sizes.sum() - s.sizes)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (total - s.sums) / (s.counts.sum(axis=1, keepdims=True) - s.counts)


def bootstrap(s: Setup, resamples: int, seed: int, halves: Setup | None = None):
    """Internal: bootstrap means [k, resamples]: clusters resampled with replacement, episodes kept
    together (NaN for a resample that holds no finite value of a column). With ``halves`` (columns whose
    values are multiples of 1/2: the improvement indicators), also theirs on the same resamples,
    ``(boot, boot_halves)``: their sums times the resample counts are integers and half integers below
    2**23, which float32 holds exactly, so single precision (twice as fast) gives the same numbers."""
    setups = [(s, np.float64)] + ([] if halves is None else [(halves, None)])
    outs = [np.empty((x.sums.shape[0], resamples)) for x, _ in setups]  # [k, resamples]: no transpose after
    for start, blocks in boot_blocks(setups, 0, resamples, seed):
        for out, block in zip(outs, blocks):
            out[:, start : start + block.shape[1]] = block
    return outs[0] if halves is None else tuple(outs)


def boot_blocks(setups: Sequence[tuple[Setup, Any]], first: int, total: int, seed: int) -> Iterator[tuple[int, list]]:
    """Internal: the bootstrap means of resamples ``first .. total - 1``, a group of blocks at a time:
    ``(first row, [[k, rows] per setup])``, for ``(setup, dtype)`` pairs (dtype None: float32 where that
    is exact, :func:`_plan`). Only the columns with a left-out value need their own denominators.
    Streaming: memory is one group of resamples, whatever ``total``."""
    plans = [_plan(x, kind) for x, kind in setups]
    for start, c in draws(seed, BOOTSTRAP_STREAM, total, setups[0][0].g, _counts, first):
        blocks = []
        for sums, sizes, partial, dens, kind in plans:
            ct = c.T if kind is np.float64 else c.T.astype(kind)  # [G, rows]
            cols = (sums @ ct).astype(np.float64, copy=False)
            cols /= sizes @ ct
            if len(partial):
                with np.errstate(invalid="ignore", divide="ignore"):
                    cols[partial] = (sums[partial] @ ct).astype(np.float64) / (dens @ ct)
            blocks.append(cols)
        yield start, blocks


def _plan(s: Setup, kind):
    """``(sums [k, G], sizes [G], partial columns, their counts [p, G], dtype)`` of a bootstrap:
    ``kind`` None chooses float32 where it is exact (values that are multiples of 1/2)."""
    if kind is None:
        top = float(np.abs(s.sums).max(initial=0.0)) + float(s.sizes.max(initial=0.0))
        kind = np.float32 if 2.0 * top * s.sizes.sum() < 2.0**23 else np.float64
    partial = np.zeros(0, dtype=np.intp) if s.counts is None else np.flatnonzero((s.counts != s.sizes).any(axis=1))
    dens = np.zeros((0, s.g)) if s.counts is None else s.counts[partial]
    return (
        np.ascontiguousarray(s.sums, dtype=kind),
        s.sizes.astype(kind),
        partial,
        np.ascontiguousarray(dens, dtype=kind),
        kind,
    )


def intervals(
    boot: np.ndarray,
    theta: np.ndarray,
    jack: np.ndarray | None,
    units: np.ndarray,
    confidence: float,
    method: str,
    min_units: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Internal: :func:`_interval` of the rows with at least ``min_units`` units (and a finite
    estimate); NaN for the others (undefined)."""
    lo, hi = np.full(len(theta), np.nan), np.full(len(theta), np.nan)
    ok = (units >= max(min_units, 1)) & np.isfinite(theta)
    if ok.any():
        rows = np.flatnonzero(ok)
        lo[rows], hi[rows] = _interval(
            boot[rows], theta[rows], None if jack is None else jack[rows], confidence, method
        )
    return lo, hi


def chunks(index: np.ndarray, width: int) -> Iterator[np.ndarray]:
    """Internal: ``index`` in pieces of at most ``_CELLS`` / ``width`` entries: the pairs a chunk of
    [pairs, resamples] arrays can hold in bounded memory."""
    step = max(1, _CELLS // max(int(width), 1))
    for a in range(0, len(index), step):
        yield index[a : a + step]
