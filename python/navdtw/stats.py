"""Confidence intervals and paired tests for comparing agents on the same episodes.

Everything here is about *means over episodes* (the number every leaderboard reports), which makes
the bootstrap and the permutation test linear in the data: a bootstrap resample is a vector of
cluster counts ``c`` and its mean is ``(c @ S) / (c @ sizes)`` with ``S`` the per-cluster sums, and a
sign-flip permutation of a paired difference is ``s @ (A_i - A_j) = s @ A_i - s @ A_j``. So one
matrix product per block of resamples serves every column (agents x metrics) at once, and every
pair of columns is a difference of two columns of the result. See docs/statistics.md for the
choices (BCa by default, clusters, Holm, seeds) and the reasons.

Reproducibility: the resamples are drawn in fixed blocks of :data:`BLOCK` rows, block ``k`` from its
own generator ``SeedSequence(seed, spawn_key=(stream, k))``; the numbers depend only on the data,
``seed``, ``resamples`` and the clusters, never on how the work is split. A column gets the same
resamples whether it is bootstrapped alone (:func:`bootstrap_ci`) or with others
(:func:`bootstrap_means`), so the same interval up to BLAS rounding.

Non-finite values: NaN raises ``ValueError`` naming the column and episode (a NaN is not a score;
:mod:`navdtw.suite` applies its documented policy before calling). An infinite value (+inf or
-inf, e.g. the navigation error to an unreachable goal) is *left out*: a column's mean and interval
are over its finite values, and a pair of columns is compared on the episodes finite in both (the
caller counts what was left out: ``np.isinf``). Intervals need at least ``min_units`` units
(clusters, or episodes) with a value; below that they are NaN (undefined).

Permutation p-values: exact over all sign flips when there are at most ``resamples`` of them, else
Monte Carlo, ``(hits + 1) / (resamples + 1)``. Where no random flip reaches the observed statistic
(``hits == 0``), the p-value is the smaller of ``1 / (resamples + 1)`` and a rigorous upper bound
on the exact permutation p-value (:func:`sign_flip_tail_bound`), so a huge difference is not stuck
at the Monte-Carlo floor ``1 / (resamples + 1)``; the level stays exact (docs/statistics.md).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Sequence
from typing import Any, NamedTuple

import numpy as np
from scipy import special, stats

from ._messages import shown

__all__ = [
    "BLOCK",
    "MIN_UNITS",
    "Analysis",
    "Comparisons",
    "Intervals",
    "RunIntervals",
    "RunsDifference",
    "analyze",
    "bootstrap_ci",
    "bootstrap_means",
    "holm",
    "paired_difference",
    "paired_permutation_test",
    "probability_of_improvement",
    "runs_difference",
    "runs_intervals",
    "sign_flip_tail_bound",
    "sign_test",
    "sign_tests",
]

BLOCK = 500
"""The number of resamples per block, the unit of random-number generation (each block has its own generator)."""
MIN_UNITS = 2
"""The default least number of units (clusters, or episodes) with a value for an interval; below it
the interval is NaN. One unit has no spread to resample (its "interval" would be one point)."""
_GROUP = 4  # blocks per matrix product (memory: _GROUP * BLOCK * clusters floats)

_BOOTSTRAP_STREAM = 0
_PERMUTATION_STREAM = 1
_METHODS = ("percentile", "bca")


class Intervals(NamedTuple):
    """Per-column means and confidence intervals (arrays of shape ``[k]``)."""

    mean: np.ndarray
    lo: np.ndarray
    hi: np.ndarray


class Comparisons(NamedTuple):
    """Per-pair results (arrays of shape ``[pairs]``): ``diff = mean_a - mean_b`` with its paired
    bootstrap interval ``[lo, hi]``, the two-sided sign-flip permutation p-value and the sign test's."""

    diff: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    p_permutation: np.ndarray
    p_sign: np.ndarray


class RunIntervals(NamedTuple):
    """What :func:`runs_intervals` returns, per group of run columns (arrays of shape ``[groups]``,
    and one array of run means per group)."""

    mean: np.ndarray  # mean over runs of the run means
    lo: np.ndarray  # the interval over episodes and runs
    hi: np.ndarray
    episode_lo: np.ndarray  # the interval over episodes alone (the runs as they are)
    episode_hi: np.ndarray
    run_means: list[np.ndarray]
    run_sd: np.ndarray  # standard deviation of the run means (ddof 1)


class Analysis(NamedTuple):
    """What :func:`analyze` returns: every column's interval and every pair's comparison; with
    ``runs=``, the interval over episodes and runs of each group of run columns
    (:func:`runs_intervals`); with ``improvement=``, each pair's probability of improvement
    (:func:`probability_of_improvement`). All on the same bootstrap resamples."""

    means: Intervals
    comparisons: Comparisons
    runs: RunIntervals | None = None
    improvement: Intervals | None = None


# ----------------------------------------------------------------------------------------- checks


def _matrix(matrix: Any, names: Sequence[str] | None) -> tuple[np.ndarray, list[str]]:
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


def _cluster_index(clusters: Any, n: int) -> tuple[np.ndarray, int]:
    """Cluster labels (any hashable values, e.g. path ids) -> (index in 0..G-1 per episode, G)."""
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


def _check(confidence: float, resamples: int, method: str, min_units: int = MIN_UNITS) -> None:
    if isinstance(min_units, bool) or int(min_units) != min_units or min_units < 1:
        raise ValueError(f"stats: min_units must be a positive integer, got {min_units}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"stats: confidence must be in (0, 1), got {confidence}")
    if int(resamples) != resamples or resamples < 1:
        raise ValueError(f"stats: resamples must be a positive integer, got {resamples}")
    if method not in _METHODS:
        raise ValueError(f"stats: method must be one of {_METHODS}, got {shown(method)}")


# --------------------------------------------------------------------------------------- resamples


def _draws(seed: int, stream: int, total: int, g: int, draw) -> Iterator[tuple[int, np.ndarray]]:
    """(first row, [rows, g] matrix) for the ``total`` resamples of ``stream``, ``_GROUP`` blocks at a
    time (one large matrix product is much cheaper than several small ones). Block k's rows come
    from their own generator ``SeedSequence(seed, spawn_key=(stream, k))``: fixed by seed alone."""
    for start in range(0, total, _GROUP * BLOCK):
        rows = min(_GROUP * BLOCK, total - start)
        out = np.empty((rows, g))
        for a in range(0, rows, BLOCK):
            k = (start + a) // BLOCK
            rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(stream, k)))
            out[a : a + BLOCK] = draw(rng, min(BLOCK, rows - a), g)
        yield start, out


def _counts(rng: np.random.Generator, rows: int, g: int) -> np.ndarray:
    """``rows`` bootstrap resamples of ``g`` clusters as a [rows, g] matrix of counts."""
    idx = rng.integers(0, g, size=(rows, g))
    out = np.empty((rows, g), dtype=np.intp)
    for r in range(rows):  # one short bincount per row beats one long one (cache)
        out[r] = np.bincount(idx[r], minlength=g)
    return out


def _signs(rng: np.random.Generator, rows: int, g: int) -> np.ndarray:
    """``rows`` random sign vectors of length ``g`` (+-1), one random bit each."""
    bits = np.unpackbits(np.frombuffer(rng.bytes((rows * g + 7) // 8), dtype=np.uint8), count=rows * g)
    return bits.reshape(rows, g).astype(np.int8) * 2 - 1


def _all_signs(g: int) -> np.ndarray:
    """All 2**g sign vectors (for the exact permutation test on few clusters)."""
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


class _Setup(NamedTuple):
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


def _setup(m: np.ndarray, clusters: Any) -> _Setup:
    n, k = m.shape
    inv, g = _cluster_index(clusters, n)
    sizes = np.bincount(inv, minlength=g).astype(np.float64)
    finite = np.isfinite(m)
    if finite.all():
        sums = np.ascontiguousarray(m.T) if clusters is None else _cluster_sums(m, inv, sizes)
        return _Setup(sums, None, sizes, sums.sum(axis=1) / n, np.full(k, g), inv, g)
    work = np.where(finite, m, 0.0)
    f = finite.astype(np.float64)
    if clusters is None:
        sums, counts = np.ascontiguousarray(work.T), np.ascontiguousarray(f.T)
    else:
        sums, counts = _cluster_sums(work, inv, sizes), _cluster_sums(f, inv, sizes)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = sums.sum(axis=1) / counts.sum(axis=1)
    return _Setup(sums, counts, sizes, mean, (counts > 0).sum(axis=1), inv, g)


def _jackknife(s: _Setup) -> np.ndarray | None:
    """Leave-one-cluster-out means [k, G]; None with a single cluster (BCa falls back to percentile)."""
    if s.g < 2:
        return None
    total = s.sums.sum(axis=1, keepdims=True)
    if s.counts is None:
        return (total - s.sums) / (s.sizes.sum() - s.sizes)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (total - s.sums) / (s.counts.sum(axis=1, keepdims=True) - s.counts)


def _bootstrap(s: _Setup, resamples: int, seed: int, halves: _Setup | None = None):
    """Bootstrap means [k, resamples]: clusters resampled with replacement, episodes kept together
    (NaN for a resample that holds no finite value of a column). With ``halves`` (columns whose
    values are multiples of 1/2: the improvement indicators), also theirs on the same resamples,
    ``(boot, boot_halves)``: their sums times the resample counts are integers and half integers
    below 2**23, which float32 holds exactly, so single precision (twice as fast) gives the same
    numbers. Only the columns with a left-out value need their own denominators."""
    plans = [_plan(s, np.float64)] + ([] if halves is None else [_plan(halves, None)])
    outs = [np.empty((p[0].shape[0], resamples)) for p in plans]  # [k, resamples]: no transpose after
    for start, c in _draws(seed, _BOOTSTRAP_STREAM, resamples, s.g, _counts):
        stop = start + len(c)
        for out, (sums, sizes, partial, dens, kind) in zip(outs, plans):
            ct = c.T.astype(kind)  # [G, rows]
            cols = out[:, start:stop]
            cols[...] = sums @ ct
            cols /= sizes @ ct
            if len(partial):
                with np.errstate(invalid="ignore", divide="ignore"):
                    cols[partial] = (sums[partial] @ ct).astype(np.float64) / (dens @ ct)
    return outs[0] if halves is None else tuple(outs)


def _plan(s: _Setup, kind):
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


def _intervals(
    boot: np.ndarray,
    theta: np.ndarray,
    jack: np.ndarray | None,
    units: np.ndarray,
    confidence: float,
    method: str,
    min_units: int,
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_interval` of the rows with at least ``min_units`` units (and a finite estimate); NaN
    for the others (undefined)."""
    lo, hi = np.full(len(theta), np.nan), np.full(len(theta), np.nan)
    ok = (units >= max(min_units, 1)) & np.isfinite(theta)
    if ok.any():
        rows = np.flatnonzero(ok)
        lo[rows], hi[rows] = _interval(
            boot[rows], theta[rows], None if jack is None else jack[rows], confidence, method
        )
    return lo, hi


# --------------------------------------------------------------------------------------- analysis


def _pairs(pairs: Any, k: int) -> tuple[np.ndarray, np.ndarray]:
    p = np.asarray(pairs, dtype=np.intp) if len(pairs) else np.zeros((0, 2), dtype=np.intp)
    if p.ndim != 2 or p.shape[1] != 2:
        raise ValueError(f"stats: pairs must be (i, j) column pairs, got shape {p.shape}")
    if p.size and (p.min() < 0 or p.max() >= k):
        raise ValueError(f"stats: pair column index out of range 0..{k - 1}")
    return p[:, 0], p[:, 1]


def _paired_columns(m: np.ndarray, i: np.ndarray, j: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``m`` with two more columns per pair that touches a left-out (infinite) value: both columns
    restricted to the episodes finite in both (the others set to inf, i.e. left out), so that the
    pair is compared on the same episodes; and the pairs re-pointed at them."""
    whole = np.isfinite(m).all(axis=0)
    need = np.flatnonzero(~(whole[i] & whole[j]))
    if not len(need):
        return m, i, j
    extra = np.empty((m.shape[0], 2 * len(need)))
    for r, q in enumerate(need.tolist()):
        joint = np.isfinite(m[:, i[q]]) & np.isfinite(m[:, j[q]])
        extra[:, 2 * r] = np.where(joint, m[:, i[q]], np.inf)
        extra[:, 2 * r + 1] = np.where(joint, m[:, j[q]], np.inf)
    i, j = i.copy(), j.copy()
    i[need] = m.shape[1] + 2 * np.arange(len(need))
    j[need] = i[need] + 1
    return np.hstack([m, extra]), i, j


def sign_flip_tail_bound(d: Any) -> np.ndarray:
    """A rigorous upper bound on the two-sided exact p-value of the sign-flip test of each row of
    ``d`` ([pairs, units] of per-unit differences; or one row): ``P(|sum s_u d_u| >= |sum d_u|)``
    over uniformly random signs ``s`` is at most ``2 c Phi(-|sum d| / ||d||)`` with
    ``c = 1 / (4 Phi(-sqrt 2)) ~ 3.178``, the optimal constant of Bentkus and Dzindzalieta (2015,
    Bernoulli 21(2), "A tight Gaussian bound for weighted sums of Rademacher random variables").
    Capped at 1; never below the smallest positive double (p is never 0).

    Parameters
    ----------
    d : array_like
        float ``[pairs, units]`` per-unit differences, or one row ``[units]``.

    Returns
    -------
    numpy.ndarray
        float ``[pairs]``: the bounds, in (0, 1].
    """
    d = np.atleast_2d(np.asarray(d, dtype=np.float64))
    top = np.abs(d).max(axis=1, keepdims=True) if d.size else np.ones((len(d), 1))
    d = np.divide(d, top, out=np.zeros_like(d), where=top > 0)  # scale-free: no under/overflow in d**2
    t = np.abs(d.sum(axis=1))
    sigma = np.sqrt((d**2).sum(axis=1))
    # |T*| >= |T_obs| up to rounding: the bound of a slightly smaller statistic (conservative)
    t = np.maximum(t - 1e-12 * np.abs(d).sum(axis=1), 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(sigma > 0, t / sigma, 0.0)
    log_p = np.log(2.0 * _BD_CONSTANT) + special.log_ndtr(-z)
    return np.clip(np.exp(log_p), np.finfo(np.float64).tiny, 1.0)


_BD_CONSTANT = 1.0 / (4.0 * special.ndtr(-np.sqrt(2.0)))  # ~3.178


def _permutation_p(s: _Setup, i: np.ndarray, j: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    """Two-sided sign-flip p-values for the pairs (i, j): exact over all 2**G flips when that is at
    most ``resamples``, else (hits + 1) / (resamples + 1) over random flips, replaced where no flip
    was as extreme (hits == 0) by :func:`sign_flip_tail_bound` when that is smaller. NaN for a pair
    without an episode finite in both."""
    if len(i) == 0:
        return np.zeros(0)
    total, scale = s.sums.sum(axis=1), np.abs(s.sums).sum(axis=1)
    # |T*| >= |T_obs|, up to the rounding of the two dot products (relative to their absolute scale)
    threshold = (np.abs(total[i] - total[j]) - 1e-12 * (scale[i] + scale[j]))[:, None]
    if 2**s.g <= resamples:
        t = s.sums @ _all_signs(s.g).T
        p = (np.abs(t[i] - t[j]) >= threshold).sum(axis=1) / 2.0**s.g
    else:
        hits = np.zeros(len(i), dtype=np.int64)
        for _, f in _draws(seed, _PERMUTATION_STREAM, resamples, s.g, _signs):
            t = np.ascontiguousarray((f @ s.sums.T).T)
            hits += (np.abs(t[i] - t[j]) >= threshold).sum(axis=1)
        p = (hits + 1.0) / (resamples + 1.0)
        floor = np.flatnonzero(hits == 0)
        if len(floor):
            bound = sign_flip_tail_bound(s.sums[i[floor]] - s.sums[j[floor]])
            p[floor] = np.minimum(p[floor], bound)
    return np.where(np.minimum(s.units[i], s.units[j]) > 0, p, np.nan)


def _sign_p(wins: np.ndarray, losses: np.ndarray) -> np.ndarray:
    """Two-sided exact binomial p-values (success probability 1/2) for wins vs losses, vectorized;
    equal to ``scipy.stats.binomtest(wins, wins + losses).pvalue`` (the two tails are symmetric)."""
    n = wins + losses
    p = 2.0 * stats.binom.cdf(np.minimum(wins, losses), n, 0.5)
    return np.where(n > 0, np.minimum(p, 1.0), 1.0)


def _wins(s: _Setup, i: np.ndarray, j: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per pair (columns with the same left-out episodes, see :func:`_paired_columns`), the number of
    episodes (or clusters, by summed difference) where i beats j and where j beats i; a left-out
    episode is neither."""
    d = s.sums[i] - s.sums[j]  # [pairs, G]
    return (d > 0).sum(axis=1), (d < 0).sum(axis=1)


def analyze(
    matrix: Any,
    pairs: Sequence[tuple[int, int]] = (),
    *,
    confidence: float = 0.95,
    resamples: int = 10_000,
    method: str = "bca",
    seed: int = 0,
    clusters: Any = None,
    names: Sequence[str] | None = None,
    min_units: int = MIN_UNITS,
    runs: tuple[Any, Sequence[Sequence[int]]] | None = None,
    improvement: Any = None,
) -> Analysis:
    """Means with bootstrap intervals for every column of ``matrix`` [episodes, k] and, for each
    ``(i, j)`` in ``pairs``, the paired comparison of column i with column j (same episodes).

    ``runs = (run_matrix, groups)``: also the interval over episodes and runs of each group of
    columns of ``run_matrix`` [episodes, k2] (one group per agent and metric, one column per run;
    :func:`runs_intervals`). ``improvement`` (True / False per pair, or one for all: whether higher
    is better): also each pair's probability of improvement (:func:`probability_of_improvement`).
    Everything shares one set of bootstrap resamples (one draw of the clusters).

    All columns share the same bootstrap resamples and all pairs the same sign flips, so a whole
    suite (agents x metrics as columns) costs two matrix products per block of resamples.
    ``clusters`` (one label per episode, e.g. the path id) switches to the cluster bootstrap and
    cluster-level sign flips and sign test; ``names`` label the columns in error messages.

    Infinite values are left out: of a column's mean and interval, and of a pair's comparison (on
    the episodes finite in both; its ``diff`` is then the difference of the means over those
    episodes). Intervals of columns and pairs with fewer than ``min_units`` units (clusters, or
    episodes) holding a value are NaN. A NaN value raises ``ValueError``.

    Parameters
    ----------
    matrix : array_like
        float ``[episodes, k]`` (a 1-D array is one column): one column per agent and metric.
    pairs : sequence of (int, int), optional
        Column pairs ``(i, j)`` to compare (default none).
    confidence : float, optional
        Confidence level of the intervals, in (0, 1) (default 0.95).
    resamples : int, optional
        Bootstrap resamples (and random sign flips), a positive integer (default 10 000).
    method : str, optional
        The bootstrap interval: ``"bca"`` (default) or ``"percentile"`` (BCa falls back to
        percentile with a single cluster).
    seed : int, optional
        Seed of the resamples (default 0): the numbers depend only on the data, ``seed``,
        ``resamples`` and the clusters.
    clusters : sequence, optional
        One label per episode (e.g. the path id): whole clusters are resampled (and sign-flipped)
        together. Default: every episode its own cluster.
    names : sequence of str, optional
        A label per column, used in error messages.
    min_units : int, optional
        Least number of units (clusters, or episodes) with a value for an interval (default
        :data:`MIN_UNITS`); below it the interval is NaN.
    runs : (array_like, sequence of sequence of int), optional
        ``(run_matrix, groups)``: a float ``[episodes, k2]`` matrix of run columns and the
        columns of each group (:func:`runs_intervals`).
    improvement : bool or sequence of bool, optional
        Whether higher is better, per pair or one for all: also each pair's probability of
        improvement. Default None: not computed.

    Returns
    -------
    Analysis
        ``means`` (:class:`Intervals`, one per column), ``comparisons`` (:class:`Comparisons`, one
        per pair), ``runs`` (:class:`RunIntervals` or None) and ``improvement``
        (:class:`Intervals` per pair, or None).

    Raises
    ------
    ValueError
        ``confidence`` outside (0, 1), ``resamples`` or ``min_units`` not a positive integer, an
        unknown ``method``, a matrix that is not 2-D or has no episodes, a NaN value (naming the column
        and episode), ``names`` or ``clusters`` of the wrong length, unhashable cluster labels,
        pairs that are not ``(i, j)`` column indices in range, or ``runs`` with another number of
        episodes or an empty or out-of-range group.
    """
    _check(confidence, resamples, method, min_units)
    m, _ = _matrix(matrix, names)
    k = m.shape[1]
    i, j = _pairs(pairs, k)
    x = None if improvement is None else _improvement_columns(m, i, j, improvement)
    m, i, j = _paired_columns(m, i, j)
    s = _setup(m, clusters)
    # every column that needs the bootstrap, on one set of resamples: the means and pairs, the
    # runs (a group without a left-out value is one column, the row mean of its runs: the same
    # bootstrap, as means are linear), the improvement indicators
    blocks, width = [m], m.shape[1]
    if runs is not None:
        rm, _ = _matrix(runs[0], None)
        if rm.shape[0] != m.shape[0]:
            raise ValueError(f"stats: runs has {rm.shape[0]} episodes, the matrix {m.shape[0]}")
        groups = [np.asarray(g, dtype=np.intp) for g in runs[1]]
        for g in groups:
            if len(g) == 0 or g.min() < 0 or g.max() >= rm.shape[1]:
                raise ValueError(f"stats: a group of run columns is empty or out of range 0..{rm.shape[1] - 1}")
        where, cols = [], []
        for g in groups:
            block = rm[:, g]
            if np.isfinite(block).all():
                cols.append(block.mean(axis=1, keepdims=True))
            else:
                cols.append(block)
            where.append(np.arange(width, width + cols[-1].shape[1]))
            width += cols[-1].shape[1]
        blocks += cols
    big = _setup(np.hstack(blocks), clusters) if len(blocks) > 1 else s
    if x is None:
        boot = _bootstrap(big, int(resamples), seed)
    else:
        xs = _setup(x, clusters)
        boot, xboot = _bootstrap(big, int(resamples), seed, halves=xs)
    jack = _jackknife(big) if method == "bca" else None

    lo, hi = _intervals(
        boot[:k], s.mean[:k], None if jack is None else jack[:k], s.units[:k], confidence, method, min_units
    )
    means = Intervals(s.mean[:k], lo, hi)

    diff = s.mean[i] - s.mean[j]
    djack = None if jack is None else jack[i] - jack[j]
    dlo, dhi = _intervals(boot[i] - boot[j], diff, djack, s.units[i], confidence, method, min_units)
    p_perm = _permutation_p(s, i, j, int(resamples), seed)
    p_sign = np.where(s.units[i] > 0, _sign_p(*_wins(s, i, j)), np.nan)
    out = Analysis(means, Comparisons(diff, dlo, dhi, p_perm, p_sign))
    if runs is not None:
        run_means = [np.array([_finite_mean(rm[:, c]) for c in g]) for g in groups]
        theta = np.array([r.mean() for r in run_means])
        gboot = np.stack([boot[w].mean(axis=0) for w in where]) if groups else np.zeros((0, int(resamples)))
        gjack = None if jack is None or not groups else np.stack([jack[w].mean(axis=0) for w in where])
        units = np.array([big.units[w].min() for w in where], dtype=np.intp)
        elo, ehi = _intervals(gboot, theta, gjack, units, confidence, method, min_units)
        count = np.array([len(g) for g in groups])
        sd = np.array([r.std(ddof=1) if len(r) > 1 else 0.0 for r in run_means])
        t = np.where(count > 1, stats.t.ppf(0.5 + confidence / 2.0, np.maximum(count - 1, 1)), 0.0)
        half = t * sd / np.sqrt(np.maximum(count, 1))
        rlo = theta - np.sqrt((theta - elo) ** 2 + half**2)
        rhi = theta + np.sqrt((ehi - theta) ** 2 + half**2)
        out = out._replace(runs=RunIntervals(theta, rlo, rhi, elo, ehi, run_means, np.where(count > 1, sd, np.nan)))
    if x is not None:
        xjack = _jackknife(xs) if method == "bca" else None
        xlo, xhi = _intervals(xboot, xs.mean, xjack, xs.units, confidence, method, min_units)
        out = out._replace(improvement=Intervals(xs.mean, xlo, xhi))
    return out


def _finite_mean(v: np.ndarray) -> float:
    f = v[np.isfinite(v)]
    return float(f.mean()) if len(f) else float("nan")


def _improvement_columns(m: np.ndarray, i: np.ndarray, j: np.ndarray, higher_is_better) -> np.ndarray:
    """Per pair, per episode: 1 where column i does better than column j, 0.5 on a tie, 0 where
    worse; +inf (left out) where either is not finite."""
    sign = np.broadcast_to(np.where(np.asarray(higher_is_better, dtype=bool), 1.0, -1.0), i.shape)
    a, b = m[:, i], m[:, j]
    joint = np.isfinite(a) & np.isfinite(b)
    with np.errstate(invalid="ignore"):
        d = np.where(joint, (a - b) * sign, 0.0)
    return np.where(joint, 0.5 + 0.5 * np.sign(d), np.inf)


# ------------------------------------------------------------------------------------ conveniences


def bootstrap_means(
    matrix: Any,
    *,
    confidence: float = 0.95,
    resamples: int = 10_000,
    method: str = "bca",
    seed: int = 0,
    clusters: Any = None,
    names: Sequence[str] | None = None,
    min_units: int = MIN_UNITS,
) -> Intervals:
    """Mean and bootstrap interval of every column of ``matrix`` [episodes, k], all columns on the
    same resamples (so column j's interval equals ``bootstrap_ci(matrix[:, j])`` with the same seed).
    Infinite values are left out; NaN intervals below ``min_units`` units (:func:`analyze`).

    Parameters
    ----------
    matrix : array_like
        float ``[episodes, k]`` (a 1-D array is one column).
    confidence : float, optional
        Confidence level of the intervals, in (0, 1) (default 0.95).
    resamples : int, optional
        Bootstrap resamples (and random sign flips), a positive integer (default 10 000).
    method : str, optional
        The bootstrap interval: ``"bca"`` (default) or ``"percentile"`` (BCa falls back to
        percentile with a single cluster).
    seed : int, optional
        Seed of the resamples (default 0): the numbers depend only on the data, ``seed``,
        ``resamples`` and the clusters.
    clusters : sequence, optional
        One label per episode (e.g. the path id): whole clusters are resampled (and sign-flipped)
        together. Default: every episode its own cluster.
    names : sequence of str, optional
        A label per column, used in error messages.
    min_units : int, optional
        Least number of units (clusters, or episodes) with a value for an interval (default
        :data:`MIN_UNITS`); below it the interval is NaN.

    Returns
    -------
    Intervals
        ``mean``, ``lo``, ``hi``: arrays of shape ``[k]`` (``lo``, ``hi`` NaN where undefined).

    Raises
    ------
    ValueError
        As :func:`analyze`: a bad option, a matrix that is not 2-D or empty, a NaN value, or bad
        ``names`` or ``clusters``.
    """
    return analyze(
        matrix,
        confidence=confidence,
        resamples=resamples,
        method=method,
        seed=seed,
        clusters=clusters,
        names=names,
        min_units=min_units,
    ).means


def bootstrap_ci(
    values: Any,
    *,
    confidence: float = 0.95,
    resamples: int = 10_000,
    method: str = "bca",
    seed: int = 0,
    clusters: Any = None,
) -> tuple[float, float, float]:
    """``(mean, lo, hi)``: the mean of ``values`` (one per episode) and its bootstrap confidence
    interval, percentile or BCa; with ``clusters`` (one label per episode, e.g. path ids), whole
    clusters are resampled. Infinite values are left out; with a single unit (one value, or one
    cluster) the interval is undefined: ``lo`` and ``hi`` are NaN.

    Parameters
    ----------
    values : array_like
        float ``[episodes]``, one value per episode.
    confidence : float, optional
        Confidence level of the intervals, in (0, 1) (default 0.95).
    resamples : int, optional
        Bootstrap resamples (and random sign flips), a positive integer (default 10 000).
    method : str, optional
        The bootstrap interval: ``"bca"`` (default) or ``"percentile"`` (BCa falls back to
        percentile with a single cluster).
    seed : int, optional
        Seed of the resamples (default 0): the numbers depend only on the data, ``seed``,
        ``resamples`` and the clusters.
    clusters : sequence, optional
        One label per episode (e.g. the path id): whole clusters are resampled (and sign-flipped)
        together. Default: every episode its own cluster.

    Returns
    -------
    tuple of float
        ``(mean, lo, hi)``.

    Raises
    ------
    ValueError
        ``values`` not one-dimensional or empty, a NaN value, a bad option or bad ``clusters``
        (:func:`analyze`).
    """
    v = np.asarray(values, dtype=np.float64)
    if v.ndim != 1:
        raise ValueError(f"stats: values must be one-dimensional, got shape {v.shape}")
    r = bootstrap_means(
        v[:, None],
        confidence=confidence,
        resamples=resamples,
        method=method,
        seed=seed,
        clusters=clusters,
        names=["values"],
    )
    return float(r.mean[0]), float(r.lo[0]), float(r.hi[0])


def _two(a: Any, b: Any) -> np.ndarray:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.ndim != 1 or a.shape != b.shape:
        raise ValueError(f"stats: a and b must be 1-D and paired (same episodes), got shapes {a.shape} and {b.shape}")
    return np.stack([a, b], axis=1)


def paired_difference(
    a: Any,
    b: Any,
    *,
    confidence: float = 0.95,
    resamples: int = 10_000,
    method: str = "bca",
    seed: int = 0,
    clusters: Any = None,
) -> tuple[float, float, float]:
    """``(diff, lo, hi)``: ``mean(a) - mean(b)`` over the same episodes and its paired bootstrap
    interval (each resample takes the same episodes, or clusters, for both). Episodes where a or b
    is infinite are left out; the interval is NaN with a single unit.

    Parameters
    ----------
    a, b : array_like
        float ``[episodes]`` each, paired: entry e of both is episode e.
    confidence : float, optional
        Confidence level of the intervals, in (0, 1) (default 0.95).
    resamples : int, optional
        Bootstrap resamples (and random sign flips), a positive integer (default 10 000).
    method : str, optional
        The bootstrap interval: ``"bca"`` (default) or ``"percentile"`` (BCa falls back to
        percentile with a single cluster).
    seed : int, optional
        Seed of the resamples (default 0): the numbers depend only on the data, ``seed``,
        ``resamples`` and the clusters.
    clusters : sequence, optional
        One label per episode (e.g. the path id): whole clusters are resampled (and sign-flipped)
        together. Default: every episode its own cluster.

    Returns
    -------
    tuple of float
        ``(diff, lo, hi)``.

    Raises
    ------
    ValueError
        ``a`` and ``b`` not 1-D of the same length, no episodes, a NaN value, a bad option or bad
        ``clusters``.
    """
    r = analyze(
        _two(a, b),
        [(0, 1)],
        confidence=confidence,
        resamples=resamples,
        method=method,
        seed=seed,
        clusters=clusters,
        names=["a", "b"],
    ).comparisons
    return float(r.diff[0]), float(r.lo[0]), float(r.hi[0])


def paired_permutation_test(a: Any, b: Any, *, resamples: int = 10_000, seed: int = 0, clusters: Any = None) -> float:
    """Two-sided p-value of the paired sign-flip permutation test of ``mean(a) == mean(b)``.

    Under the null each episode's difference ``a - b`` (or each cluster's summed difference) is as
    likely to have either sign; the statistic is ``|sum of differences|``. Exact over all sign
    flips when there are at most ``resamples`` of them; otherwise ``(hits + 1) / (resamples + 1)``
    over random flips, so p is never 0, and where no random flip is as extreme (hits = 0) the
    smaller of that and :func:`sign_flip_tail_bound`. Episodes where a or b is infinite are left
    out; NaN when no episode is finite in both.

    Parameters
    ----------
    a, b : array_like
        float ``[episodes]`` each, paired: entry e of both is episode e.
    resamples : int, optional
        Random sign flips when there are more than that many (default 10 000), a positive integer.
    seed : int, optional
        Seed of the random sign flips (default 0).
    clusters : sequence, optional
        One label per episode: each cluster's summed difference is flipped as one unit.

    Returns
    -------
    float
        The p-value, in (0, 1] (NaN when no episode is finite in both).

    Raises
    ------
    ValueError
        ``a`` and ``b`` not 1-D of the same length, no episodes, a NaN value, ``resamples`` not a
        positive integer, or bad ``clusters``.
    """
    _check(0.95, resamples, "percentile")
    m, _ = _matrix(_two(a, b), ["a", "b"])
    m, i, j = _paired_columns(m, np.array([0]), np.array([1]))
    return float(_permutation_p(_setup(m, clusters), i, j, int(resamples), seed)[0])


def sign_test(a: Any, b: Any, *, clusters: Any = None) -> float:
    """Two-sided sign test (the exact binomial test, as ``scipy.stats.binomtest``, on the non-tied
    pairs): how often a beats b against how often b beats a, episodes (or clusters, by summed
    difference) as the unit.
    1.0 when every pair is tied. Episodes where a or b is infinite are left out.

    Parameters
    ----------
    a, b : array_like
        float ``[episodes]`` each, paired: entry e of both is episode e.
    clusters : sequence, optional
        One label per episode: clusters are the units, compared by summed difference.

    Returns
    -------
    float
        The p-value, in (0, 1].

    Raises
    ------
    ValueError
        ``a`` and ``b`` not 1-D of the same length, no episodes, a NaN value, or bad ``clusters``.
    """
    m, _ = _matrix(_two(a, b), ["a", "b"])
    m, i, j = _paired_columns(m, np.array([0]), np.array([1]))
    # _sign_p, not scipy.stats.binomtest: the same p-value, but binomtest's two-sided search over
    # the pmf warns "divide by zero" on a lopsided split of thousands of episodes (scipy 1.9)
    return float(_sign_p(*_wins(_setup(m, clusters), i, j))[0])


def sign_tests(matrix: Any, pairs: Sequence[tuple[int, int]], *, clusters: Any = None) -> np.ndarray:
    """:func:`sign_test` for each ``(i, j)`` in ``pairs`` of columns of ``matrix``, vectorized.

    Parameters
    ----------
    matrix : array_like
        float ``[episodes, k]``.
    pairs : sequence of (int, int)
        Column pairs ``(i, j)``.
    clusters : sequence, optional
        One label per episode: clusters are the units, compared by summed difference.

    Returns
    -------
    numpy.ndarray
        float ``[pairs]``: the two-sided p-values.

    Raises
    ------
    ValueError
        A matrix that is not 2-D or has no episodes, a NaN value, pairs that are not column
        indices in range, or bad ``clusters``.
    """
    m, _ = _matrix(matrix, None)
    i, j = _pairs(pairs, m.shape[1])
    m, i, j = _paired_columns(m, i, j)
    return _sign_p(*_wins(_setup(m, clusters), i, j))


def holm(pvalues: Any) -> np.ndarray:
    """Holm-Bonferroni step-down adjusted p-values (same shape): the i-th smallest of m becomes
    ``max over j <= i of min(1, (m - j + 1) * p_(j))``. Reject where adjusted < alpha controls the
    family-wise error at alpha. NaN entries (tests not run) stay NaN and are not counted in m.

    Parameters
    ----------
    pvalues : array_like
        float p-values of any shape, in [0, 1] or NaN.

    Returns
    -------
    numpy.ndarray
        The adjusted p-values, same shape.

    Raises
    ------
    ValueError
        A p-value outside [0, 1].
    """
    p = np.asarray(pvalues, dtype=np.float64)
    flat = p.ravel()
    keep = ~np.isnan(flat)
    q = flat[keep]
    if ((q < 0) | (q > 1)).any():
        raise ValueError("holm: p-values must lie in [0, 1]")
    order = np.argsort(q, kind="stable")
    m = len(q)
    adjusted = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * q[order]))
    out = np.full(flat.shape, np.nan)
    sub = np.empty(m)
    sub[order] = adjusted
    out[keep] = sub
    return out.reshape(p.shape)


# ------------------------------------------------------------------------------ several runs


class RunsDifference(NamedTuple):
    """What :func:`runs_difference` returns (floats, or arrays of the batch shape): the difference
    of the two agents' means over episodes and runs, its standard error, the degrees of freedom of
    the Student-t reference, the two-sided p-value, the interval, whether the seeds' term is in
    (both agents have two runs or more) and the number of units (clusters, or episodes) used."""

    diff: Any
    se: Any
    df: Any
    p: Any
    lo: Any
    hi: Any
    seeds: bool
    units: Any


def _by_cluster(x: np.ndarray, order: np.ndarray | None, starts: np.ndarray | None, axis: int) -> np.ndarray:
    """Sums over the episodes of each cluster along ``axis`` (the identity without clusters)."""
    if order is None:
        return x
    return np.add.reduceat(np.take(x, order, axis=axis), starts, axis=axis)


def _episode_variance(u: np.ndarray, f: np.ndarray, cl) -> tuple[np.ndarray, np.ndarray]:
    """``(variance of the mean of u, units)``: the cluster-robust (sandwich) variance over the units
    of the mean of ``u`` [..., n] over the episodes with weight ``f`` = 1 (``u`` is 0 elsewhere),
    ``G / (G - 1) * sum_g (U_g - n_g mean)**2 / n**2``; NaN below two units."""
    n = f.sum(axis=-1)
    mean = u.sum(axis=-1) / n
    big_u, k = _by_cluster(u, *cl, axis=-1), _by_cluster(f, *cl, axis=-1)
    g = (k > 0).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        v = ((big_u - k * mean[..., None]) ** 2).sum(axis=-1) / n**2 * g / (g - 1.0)
    return np.where(g >= 2, v, np.nan), g


def _run_terms(x: np.ndarray, f: np.ndarray, cl) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For an agent's runs ``x`` [..., n, R] (0 where ``f`` [..., n] is 0): the per-episode means over
    runs [..., n], the sample variance of the run means ``s2`` [...] (ddof 1) and ``w`` [...], the
    part of ``s2`` that the within-run noise of the episodes explains: the two-way (episodes x runs)
    residual mean square, by cluster, over the episodes. ``s2 - w`` estimates the seeds' own
    variance; ``w / R`` is already in the episode term (each episode's mean over runs carries it)."""
    runs = x.shape[-1]
    n = f.sum(axis=-1)
    episode = x.mean(axis=-1) * f
    run_means = x.sum(axis=-2) / n[..., None]
    grand = run_means.mean(axis=-1)
    s2 = run_means.var(axis=-1, ddof=1)
    resid = (x - episode[..., None] - run_means[..., None, :] + grand[..., None, None]) * f[..., None]
    e = _by_cluster(resid, *cl, axis=-2)
    g = (_by_cluster(f, *cl, axis=-1) > 0).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        w = (e**2).sum(axis=(-2, -1)) / ((runs - 1.0) * (g - 1.0)) * g / n**2
    return episode, s2, w


def _runs_cluster_plan(clusters: Any, n: int):
    if clusters is None:
        return None, None
    inv, _ = _cluster_index(clusters, n)
    order = np.argsort(inv, kind="stable")
    sizes = np.bincount(inv)
    return order, np.concatenate([[0], np.cumsum(sizes[:-1])]).astype(np.intp)


def _seeds_term(s2: np.ndarray, w: np.ndarray, runs: int) -> tuple[np.ndarray, np.ndarray]:
    """(variance, its Satterthwaite share ``(s2 / R)**2 / (R - 1)``) of the seeds' term of one agent:
    ``max(0, s2 - w) / R``; the share counts the noise of ``s2`` in full (R - 1 degrees of freedom),
    since ``s2 - w`` is exactly as uncertain as ``s2``."""
    return np.maximum(s2 - w, 0.0) / runs, (s2 / runs) ** 2 / (runs - 1.0)


def runs_difference(a: Any, b: Any, *, clusters: Any = None, confidence: float = 0.95) -> RunsDifference:
    """Compare two agents scored in several runs (seeds) on the same episodes: the difference of
    their expected scores over episodes *and* seeds, its standard error, a Student-t test and
    interval.

    ``a`` is ``[episodes, runs_a]`` (or ``[..., episodes, runs_a]``, a batch), ``b`` is
    ``[episodes, runs_b]``: entry ``[e, r]`` is run r's score on episode e. Runs are not paired
    (run k of a and run k of b are unrelated seeds); episodes are. The model reasoned with, per
    agent: ``x[e, r] = mu + d_e + b_r + eps[e, r]`` (episode difficulty, seed offset, noise). The
    estimate is ``mean(a) - mean(b)`` over the episodes finite in every run of both (infinite values
    are left out, as everywhere; NaN raises). Its variance is the sum of

    * the **episode term**: the cluster-robust variance of the mean of the per-episode differences
      of the means over runs (``clusters``: one label per episode, e.g. the path id; the units are
      the clusters, as in the cluster bootstrap), and
    * the **seeds' term** of each agent with two runs or more: ``max(0, s2 - w) / R``, where
      ``s2`` is the variance of the agent's run means and ``w`` the part of it that the episodes'
      within-run noise explains (the two-way residual mean square over ``n``), which the episode
      term already holds: counting ``s2 / R`` whole would count that noise twice.

    The reference is Student's t with Satterthwaite's degrees of freedom, where each seeds' term
    has ``R - 1``: with 3 runs they are few and the tails wide where the seeds matter, many where
    the episodes dominate. When either agent has a single run the seeds' spread cannot be
    estimated: the result is the episodes-only comparison (the paired t over the units, ``units -
    1`` degrees of freedom) and ``seeds`` is False; say "one run: seed spread not estimated".
    Measured (type-I error, power, coverage): docs/statistics.md, "Several runs".

    Parameters
    ----------
    a, b : array_like
        float ``[episodes, runs]`` each (the same episodes, any numbers of runs), or with the same
        leading batch shape ``[..., episodes, runs]``.
    clusters : sequence, optional
        One label per episode: the units of the episode term. Default: every episode its own.
    confidence : float, optional
        Confidence level of the interval, in (0, 1) (default 0.95).

    Returns
    -------
    RunsDifference
        ``diff``, ``se``, ``df``, ``p``, ``lo``, ``hi`` (floats, or arrays of the batch shape),
        ``seeds`` (bool) and ``units``. Below two units everything but ``diff`` is NaN. A
        difference with a standard error of 0 has ``p`` equal to the smallest positive double (or
        1 when the difference is 0 too).

    Raises
    ------
    ValueError
        Arrays of other shapes, no episodes, a NaN value, bad ``clusters`` or ``confidence``.
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"stats: confidence must be in (0, 1), got {confidence}")
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.ndim < 2 or a.ndim != b.ndim or a.shape[:-1] != b.shape[:-1] or 0 in a.shape or 0 in b.shape:
        raise ValueError(
            f"stats: a and b must be [..., episodes, runs] on the same episodes, got shapes {a.shape} and {b.shape}"
        )
    for name, x in (("a", a), ("b", b)):
        if np.isnan(x).any():
            where = np.argwhere(np.isnan(x))[0]
            raise ValueError(f"stats: {name} is NaN at episode {where[-2]}, run {where[-1]}; NaN is not a score")
    cl = _runs_cluster_plan(clusters, a.shape[-2])
    f = (np.isfinite(a).all(axis=-1) & np.isfinite(b).all(axis=-1)).astype(np.float64)
    a, b = np.where(f[..., None] > 0, a, 0.0), np.where(f[..., None] > 0, b, 0.0)
    ra, rb = a.shape[-1], b.shape[-1]
    seeds = ra > 1 and rb > 1
    if seeds:
        ea, s2a, wa = _run_terms(a, f, cl)
        eb, s2b, wb = _run_terms(b, f, cl)
    else:
        ea, eb = a.mean(axis=-1) * f, b.mean(axis=-1) * f
    with np.errstate(invalid="ignore", divide="ignore"):
        diff = (ea - eb).sum(axis=-1) / f.sum(axis=-1)
        v, units = _episode_variance(ea - eb, f, cl)
        share = v**2 / (units - 1.0)
        if seeds:
            (va, sa), (vb, sb) = _seeds_term(s2a, wa, ra), _seeds_term(s2b, wb, rb)
            v, share = v + va + vb, share + sa + sb
        se = np.sqrt(v)
        df = np.where(share > 0, v**2 / np.where(share > 0, share, 1.0), units - 1.0)
        t = np.abs(diff) / se
        p = np.where(se > 0, 2.0 * stats.t.sf(t, df), np.where(diff == 0, 1.0, 0.0))
        p = np.where(np.isnan(se), np.nan, np.clip(p, np.finfo(np.float64).tiny, 1.0))
        half = stats.t.ppf(0.5 + confidence / 2.0, df) * se
    out = RunsDifference(diff, se, df, p, diff - half, diff + half, seeds, units)
    if a.ndim == 2:
        out = out._replace(**{k: float(getattr(out, k)) for k in ("diff", "se", "df", "p", "lo", "hi")})
        out = out._replace(units=int(units))
    return out


def runs_intervals(
    matrix: Any,
    groups: Sequence[Sequence[int]],
    *,
    confidence: float = 0.95,
    resamples: int = 10_000,
    method: str = "bca",
    seed: int = 0,
    clusters: Any = None,
    names: Sequence[str] | None = None,
    min_units: int = MIN_UNITS,
) -> RunIntervals:
    """The figure of an agent scored in several runs (seeds) on the same episodes, and its interval.

    ``matrix`` [episodes, k] holds one column per run; each of ``groups`` lists the columns of one
    (agent, metric), its runs. Per group:

    * ``mean``: the mean over runs of the run means (each over its finite values: infinite
      distances are left out, as everywhere);
    * ``episode_lo, episode_hi``: the bootstrap interval over episodes (or clusters, ``clusters``)
      of that mean, the runs held as they are: every resample takes the same clusters for every
      run (the draws of :func:`analyze`, so with one run it is that column's interval);
    * ``run_sd``: the standard deviation of the run means; the runs' term of the interval is the
      Student-t half-width ``t(R - 1) run_sd / sqrt(R)``;
    * ``lo, hi``: the two combined, each side's half-width ``sqrt(episode_half**2 + runs_half**2)``.

    Why not a bootstrap over the runs too (a two-level bootstrap): with three or five runs, a
    bootstrap over runs cannot see the run-to-run spread (it shrinks its variance by ``(R - 1) /
    R`` and has normal tails where Student's t with ``R - 1`` degrees of freedom is 2.2 times wider
    at R = 3); its coverage falls to 85% where the run effect matters (docs/statistics.md, "Several
    runs"). The t term is exact for normal run effects; the episode term is the bootstrap's. With
    one run per group the interval is the episode interval. NaN intervals below ``min_units``
    units, or with a run mean that is NaN (a run without a finite value).

    Parameters
    ----------
    matrix : array_like
        float ``[episodes, k]``, one column per run.
    groups : sequence of sequence of int
        The run columns of each group (one group per agent and metric).
    confidence : float, optional
        Confidence level of the intervals, in (0, 1) (default 0.95).
    resamples : int, optional
        Bootstrap resamples (and random sign flips), a positive integer (default 10 000).
    method : str, optional
        The bootstrap interval: ``"bca"`` (default) or ``"percentile"`` (BCa falls back to
        percentile with a single cluster).
    seed : int, optional
        Seed of the resamples (default 0): the numbers depend only on the data, ``seed``,
        ``resamples`` and the clusters.
    clusters : sequence, optional
        One label per episode (e.g. the path id): whole clusters are resampled (and sign-flipped)
        together. Default: every episode its own cluster.
    names : sequence of str, optional
        A label per column, used in error messages.
    min_units : int, optional
        Least number of units (clusters, or episodes) with a value for an interval (default
        :data:`MIN_UNITS`); below it the interval is NaN.

    Returns
    -------
    RunIntervals
        Per group: ``mean``, ``lo``, ``hi``, ``episode_lo``, ``episode_hi``, ``run_means`` and
        ``run_sd`` (NaN with a single run).

    Raises
    ------
    ValueError
        A bad option, a matrix that is not 2-D or has no episodes, a NaN value, bad ``names`` or
        ``clusters``, or a group that is empty or names a column out of range.
    """
    m, _ = _matrix(matrix, names)
    return analyze(
        m[:, :1],
        confidence=confidence,
        resamples=resamples,
        method=method,
        seed=seed,
        clusters=clusters,
        min_units=min_units,
        runs=(m, groups),
    ).runs


def probability_of_improvement(
    matrix: Any,
    pairs: Sequence[tuple[int, int]],
    *,
    higher_is_better: Any = True,
    confidence: float = 0.95,
    resamples: int = 10_000,
    method: str = "bca",
    seed: int = 0,
    clusters: Any = None,
    min_units: int = MIN_UNITS,
) -> Intervals:
    """For each ``(i, j)`` of ``pairs``: the probability that column i does better than column j on
    a random episode, ties counting half (rliable's "probability of improvement", Agarwal et al.
    2021), over the episodes finite in both; with its bootstrap interval over episodes (or the
    ``clusters``), on the draws of :func:`analyze` (the same resamples as the means).

    ``higher_is_better``: per pair (or one for all), True when the larger value is better, False
    when the smaller is (a distance); 0.5 means the two are as often ahead.

    Parameters
    ----------
    matrix : array_like
        float ``[episodes, k]``.
    pairs : sequence of (int, int)
        Column pairs ``(i, j)``: the probability that i does better than j.
    higher_is_better : bool or sequence of bool, optional
        Per pair, or one for all (default True).
    confidence : float, optional
        Confidence level of the intervals, in (0, 1) (default 0.95).
    resamples : int, optional
        Bootstrap resamples (and random sign flips), a positive integer (default 10 000).
    method : str, optional
        The bootstrap interval: ``"bca"`` (default) or ``"percentile"`` (BCa falls back to
        percentile with a single cluster).
    seed : int, optional
        Seed of the resamples (default 0): the numbers depend only on the data, ``seed``,
        ``resamples`` and the clusters.
    clusters : sequence, optional
        One label per episode (e.g. the path id): whole clusters are resampled (and sign-flipped)
        together. Default: every episode its own cluster.
    min_units : int, optional
        Least number of units (clusters, or episodes) with a value for an interval (default
        :data:`MIN_UNITS`); below it the interval is NaN.

    Returns
    -------
    Intervals
        Per pair: the probability (``mean``) and its interval (``lo``, ``hi``).

    Raises
    ------
    ValueError
        As :func:`analyze`: a bad option, a matrix that is not 2-D or empty, a NaN value, pairs
        out of range, or bad ``clusters``.
    """
    if not len(pairs):
        empty = np.zeros(0)
        return Intervals(empty, empty, empty)
    return analyze(
        matrix,
        pairs,
        confidence=confidence,
        resamples=resamples,
        method=method,
        seed=seed,
        clusters=clusters,
        min_units=min_units,
        improvement=higher_is_better,
    ).improvement
