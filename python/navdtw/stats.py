"""Confidence intervals and paired tests for comparing agents on the same episodes.

Everything here is about *means over episodes* (the number every leaderboard reports), which makes
the bootstrap and the permutation test linear in the data: a bootstrap resample is a vector of
cluster counts ``c`` and its mean is ``(c @ S) / (c @ sizes)`` with ``S`` the per-cluster sums, and a
sign-flip permutation of a paired difference is ``s @ (A_i - A_j) = s @ A_i - s @ A_j``. So one
matrix product per block of resamples serves every column (agents x metrics) at once, and every
pair of columns is a difference of two columns of the result. See docs/statistics.md for the
choices (BCa by default, clusters, Holm, seeds) and the reasons. Memory: resamples x columns;
pairs go by chunks (``_CELLS``, 32 MB), never resamples x pairs. The leaderboards' marks are
:func:`compare_with_best` (multiple comparisons with the best).

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

import functools
from collections.abc import Hashable, Iterator, Sequence
from typing import Any, NamedTuple

import numpy as np
from scipy import optimize, special, stats

from ._messages import shown

__all__ = [
    "BEST_BETA",
    "BLOCK",
    "HETEROGENEITY_ALPHA",
    "MAX_RESAMPLES",
    "MC_CONFIDENCE",
    "MIN_UNITS",
    "Analysis",
    "BestTests",
    "Comparisons",
    "Intervals",
    "RunIntervals",
    "RunsDifference",
    "analyze",
    "bootstrap_ci",
    "bootstrap_means",
    "compare_with_best",
    "holm",
    "monte_carlo_bounds",
    "paired_difference",
    "paired_permutation_test",
    "probability_of_improvement",
    "runs_difference",
    "runs_improvement",
    "runs_intervals",
    "sign_flip_tail_bound",
    "sign_test",
    "sign_tests",
]

BLOCK = 500
"""The number of resamples per block, the unit of random-number generation (each block has its own generator)."""
MAX_RESAMPLES = 100_000
"""The most resamples a comparison with the best draws to resolve a p-value near ``alpha`` (ten
times the default count). They stream in blocks, so memory does not grow with them; time does,
linearly: a few seconds of CPU per data set that needs them (benchmarks/README.md)."""
BEST_BETA = 0.005
"""The level of the first step of the comparisons with the best, which finds the competitors that
could still be as good as the figure tested; alpha / 10 at the default alpha, as Romano, Shaikh
and Wolf (2014) advise."""
MC_CONFIDENCE = 0.99
"""The confidence of the Monte-Carlo bounds of a p-value (:func:`monte_carlo_bounds`)."""
HETEROGENEITY_ALPHA = 0.05
"""The comparisons with the best moderate the seed spreads of a family's agents scored in several
runs toward the family's; an agent whose spread is beyond the family's at this level (F test,
Bonferroni over the family) keeps its own (docs/statistics.md, "Several runs in the marks")."""
MIN_UNITS = 2
"""The default least number of units (clusters, or episodes) with a value for an interval; below it
the interval is NaN. One unit has no spread to resample (its "interval" would be one point)."""
_GROUP = 4  # blocks per matrix product (memory: _GROUP * BLOCK * clusters floats)
_CELLS = 1 << 22  # floats in one chunk of [pairs, resamples] work (32 MB): memory never grows with the pairs

_BOOTSTRAP_STREAM = 0
_PERMUTATION_STREAM = 1
_RUNS_STREAM = 2  # the runs term of the comparisons with the best
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
    se: np.ndarray | None = None  # standard error over episodes and seeds (NaN with one run)
    df: np.ndarray | None = None  # its Student-t degrees of freedom (NaN with one run)


class BestTests(NamedTuple):
    """What :func:`compare_with_best` returns, per figure of one family (arrays of shape ``[k]``):
    ``p``, the p-value of "this one is (one of) the best" (1 for the best mean; NaN for a figure
    without a mean); ``lo, hi``, where p lies given the Monte-Carlo error (the 99% Clopper-Pearson
    interval of its resampled part); ``resamples``, the resamples drawn for it. For the family:
    ``seeds``, how the seeds' terms of agents scored in several runs were estimated
    (``"moderated"``: each agent's run spread moderated toward the family's; ``"per agent"``: each
    its own, with fewer than three such agents or a spread of 0; None: no agent has several runs),
    and ``prior_df``, the degrees of freedom the family's spread adds to each agent's (0 when not
    moderated)."""

    p: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    resamples: np.ndarray
    seeds: str | None = None  # the seeds' terms: "moderated", "per agent", or None (one run each)
    prior_df: float = 0.0  # the degrees of freedom the family's spread adds to each agent's


class Analysis(NamedTuple):
    """What :func:`analyze` returns: every column's interval and every pair's comparison; with
    ``runs=``, the interval over episodes and runs of each group of run columns
    (:func:`runs_intervals`); with ``improvement=``, each pair's probability of improvement
    (:func:`probability_of_improvement`); with ``best=``, each family's comparisons with the best
    (:func:`compare_with_best`). All on the same bootstrap resamples."""

    means: Intervals
    comparisons: Comparisons
    runs: RunIntervals | None = None
    improvement: Intervals | None = None
    best: list[BestTests] | None = None


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


def _draws(seed: int, stream: int, total: int, g: int, draw, first: int = 0) -> Iterator[tuple[int, np.ndarray]]:
    """(first row, [rows, g] matrix) for resamples ``first .. total - 1`` of ``stream``, ``_GROUP``
    blocks at a time (one large matrix product is much cheaper than several small ones). Block k's
    rows come from their own generator ``SeedSequence(seed, spawn_key=(stream, k))``: fixed by seed
    alone, and a prefix of a longer draw, so ``first > 0`` continues a run of ``first`` resamples
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
    numbers."""
    setups = [(s, np.float64)] + ([] if halves is None else [(halves, None)])
    outs = [np.empty((x.sums.shape[0], resamples)) for x, _ in setups]  # [k, resamples]: no transpose after
    for start, blocks in _boot_blocks(setups, 0, resamples, seed):
        for out, block in zip(outs, blocks):
            out[:, start : start + block.shape[1]] = block
    return outs[0] if halves is None else tuple(outs)


def _boot_blocks(setups: Sequence[tuple[_Setup, Any]], first: int, total: int, seed: int) -> Iterator[tuple[int, list]]:
    """The bootstrap means of resamples ``first .. total - 1``, a group of blocks at a time:
    ``(first row, [[k, rows] per setup])``, for ``(setup, dtype)`` pairs (dtype None: float32 where
    that is exact, :func:`_plan`). Only the columns with a left-out value need their own
    denominators. Streaming: memory is one group of resamples, whatever ``total``."""
    plans = [_plan(x, kind) for x, kind in setups]
    for start, c in _draws(seed, _BOOTSTRAP_STREAM, total, setups[0][0].g, _counts, first):
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
    every = np.arange(len(i))
    if 2**s.g <= resamples:
        t = s.sums @ _all_signs(s.g).T
        p = np.empty(len(i))
        for q in _chunks(every, t.shape[1]):
            p[q] = (np.abs(t[i[q]] - t[j[q]]) >= threshold[q]).sum(axis=1) / 2.0**s.g
    else:
        hits = np.zeros(len(i), dtype=np.int64)
        for _, f in _draws(seed, _PERMUTATION_STREAM, resamples, s.g, _signs):
            t = np.ascontiguousarray((f @ s.sums.T).T)
            for q in _chunks(every, t.shape[1]):
                hits[q] += (np.abs(t[i[q]] - t[j[q]]) >= threshold[q]).sum(axis=1)
        p = (hits + 1.0) / (resamples + 1.0)
        for q in _chunks(np.flatnonzero(hits == 0), s.g):
            p[q] = np.minimum(p[q], sign_flip_tail_bound(s.sums[i[q]] - s.sums[j[q]]))
    return np.where(np.minimum(s.units[i], s.units[j]) > 0, p, np.nan)


def _sign_p(wins: np.ndarray, losses: np.ndarray) -> np.ndarray:
    """Two-sided exact binomial p-values (success probability 1/2) for wins vs losses, vectorized;
    equal to ``scipy.stats.binomtest(wins, wins + losses).pvalue`` (the two tails are symmetric)."""
    n = wins + losses
    p = 2.0 * stats.binom.cdf(np.minimum(wins, losses), n, 0.5)
    return np.where(n > 0, np.minimum(p, 1.0), 1.0)


def _wins(s: _Setup, i: np.ndarray, j: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per pair (columns with the same left-out episodes, see :func:`_joint_columns`), the number of
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
    best: Sequence[tuple[Sequence[int], bool]] | None = None,
    alpha: float = 0.05,
    max_resamples: int | None = None,
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
    best : sequence of (sequence of int, bool), optional
        Families for the comparisons with the best (:func:`compare_with_best`): each a list of
        figures and whether higher is better. Figure ``q < k`` is column q of ``matrix``; with
        ``runs``, figure ``k + g`` is group g (its mean over runs, with the runs' term). A figure
        below ``min_units`` units is not tested (NaN), and a family with fewer than two tested
        figures has none. Default None: not computed.
    alpha : float, optional
        The level the comparisons with the best must resolve (default 0.05): where the Monte-Carlo
        error leaves a p-value on either side of it, more resamples are drawn.
    max_resamples : int, optional
        The most resamples a comparison with the best may draw (default ``min(MAX_RESAMPLES, 100 *
        resamples)``, at least ``resamples``).

    Returns
    -------
    Analysis
        ``means`` (:class:`Intervals`, one per column), ``comparisons`` (:class:`Comparisons`, one
        per pair), ``runs`` (:class:`RunIntervals` or None), ``improvement``
        (:class:`Intervals` per pair, or None) and ``best`` (:class:`BestTests` per family, or
        None).

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
    resamples = int(resamples)
    if best is not None:
        if not 0.0 < alpha < 1.0:
            raise ValueError(f"stats: alpha must be in (0, 1), got {alpha}")
        limit = max(resamples, min(MAX_RESAMPLES, 100 * resamples)) if max_resamples is None else max_resamples
        if int(limit) != limit or limit < resamples:
            raise ValueError(f"stats: max_resamples must be an integer >= resamples, got {max_resamples}")
    m, _ = _matrix(matrix, names)
    k = m.shape[1]
    i, j = _pairs(pairs, k)
    s = _setup(m, clusters)
    # every column that needs the bootstrap, on one set of resamples: the means and the runs (a
    # group without a left-out value is one column, the row mean of its runs: the same bootstrap,
    # as means are linear). Memory: columns x resamples; the pairs go chunk by chunk (_compare).
    blocks, width, where = [m], k, []
    if runs is not None:
        rm, _ = _matrix(runs[0], None)
        if rm.shape[0] != m.shape[0]:
            raise ValueError(f"stats: runs has {rm.shape[0]} episodes, the matrix {m.shape[0]}")
        groups = [np.asarray(g, dtype=np.intp) for g in runs[1]]
        for g in groups:
            if len(g) == 0 or g.min() < 0 or g.max() >= rm.shape[1]:
                raise ValueError(f"stats: a group of run columns is empty or out of range 0..{rm.shape[1] - 1}")
        for g in groups:
            block = rm[:, g]
            blocks.append(block.mean(axis=1, keepdims=True) if np.isfinite(block).all() else block)
            where.append(np.arange(width, width + blocks[-1].shape[1]))
            width += blocks[-1].shape[1]
    big = _setup(np.hstack(blocks), clusters) if len(blocks) > 1 else s
    boot = _bootstrap(big, resamples, seed)
    jack = _jackknife(big) if method == "bca" else None

    lo, hi = _intervals(
        boot[:k], s.mean[:k], None if jack is None else jack[:k], s.units[:k], confidence, method, min_units
    )
    out = Analysis(Intervals(s.mean[:k], lo, hi), None)
    options = (confidence, method, min_units, resamples, seed, clusters)
    comparisons, improved = _compare(m, s, boot, jack, i, j, improvement, options)
    out = out._replace(comparisons=comparisons, improvement=improved)
    if runs is not None:
        run_means = [np.array([_finite_mean(rm[:, c]) for c in g]) for g in groups]
        theta = np.array([r.mean() for r in run_means])
        gboot = np.stack([boot[w].mean(axis=0) for w in where]) if groups else np.zeros((0, resamples))
        gjack = None if jack is None or not groups else np.stack([jack[w].mean(axis=0) for w in where])
        units = np.array([big.units[w].min() for w in where], dtype=np.intp)
        elo, ehi = _intervals(gboot, theta, gjack, units, confidence, method, min_units)
        sd = np.array([r.std(ddof=1) if len(r) > 1 else np.nan for r in run_means])
        se, df = np.full(len(groups), np.nan), np.full(len(groups), np.nan)
        # each group's seeds' term (variance, Satterthwaite share) and what it is made of
        gseeds, gshare, gw, gs2 = (np.zeros(len(groups)) for _ in range(4))
        rlo, rhi = elo.copy(), ehi.copy()  # one run: the interval over episodes
        cl = _runs_cluster_plan(clusters, rm.shape[0])
        for q, g in enumerate(groups):
            if len(g) > 1:
                runs_x = rm[:, g]
                f = np.isfinite(runs_x).all(axis=1).astype(np.float64)
                episode, gseeds[q], gshare[q], w, gs2[q] = _agent_terms(np.where(f[:, None] > 0, runs_x, 0.0), f, cl)
                gw[q] = w
                v, used = _episode_variance(episode, f, cl)
                if used >= max(min_units, 2) and np.isfinite(theta[q]):
                    var = v + gseeds[q]
                    se[q] = np.sqrt(var)
                    satt = var**2 / (v**2 / (used - 1.0) + gshare[q]) if var > 0 else np.nan
                    df[q] = _calibrated_df(v, float(w), len(g), satt, confidence)
                    half = special.stdtrit(df[q], 0.5 + confidence / 2.0) * se[q] if se[q] > 0 else 0.0
                    rlo[q], rhi[q] = theta[q] - half, theta[q] + half
                else:
                    rlo[q] = rhi[q] = np.nan
        out = out._replace(runs=RunIntervals(theta, rlo, rhi, elo, ehi, run_means, sd, se, df))
    if best is not None:
        # the figures a family may name: the k columns, then the groups of runs (mean over runs)
        est = s.mean[:k] if runs is None else np.concatenate([s.mean[:k], theta])
        cols = [np.array([q]) for q in range(k)] + where
        # a figure below min_units units has no spread to compare (as it has no interval): untested
        est = np.where(np.array([big.units[c].min() for c in cols]) >= min_units, est, np.nan)
        # the seeds' term of each figure (runs_difference's): its variance and Satterthwaite share
        seeds, share, s2, w, nruns = (np.zeros(len(cols)) for _ in range(5))
        if runs is not None:  # net of the within-run noise the bootstrap's episode term holds
            seeds[k:], share[k:], s2[k:], w[k:] = gseeds, gshare, gs2, gw
            nruns[k:] = [len(g) for g in groups]
        families = []
        for members, higher in best:
            q = np.asarray(members, dtype=np.intp)
            if q.ndim != 1 or (len(q) and (q.min() < 0 or q.max() >= len(cols))):
                raise ValueError(f"stats: a family of best names a figure out of range 0..{len(cols) - 1}")
            sign = 1.0 if higher else -1.0
            rows = np.stack([boot[cols[x]].mean(axis=0) for x in q.tolist()]) if len(q) else np.zeros((0, resamples))
            pool = _family_seeds(seeds[q], share[q], s2[q], w[q], nruns[q], np.isfinite(est[q]))
            family = _BestFamily(sign * est[q], sign * rows, pool, [cols[x] for x in q.tolist()], sign, resamples, seed)
            families.append(family)
        _extend_best(families, big, resamples, seed, alpha, int(limit))
        tests = [f.result() for f in families]
        out = out._replace(best=tests)
    return out


def _chunks(index: np.ndarray, width: int) -> Iterator[np.ndarray]:
    """``index`` in pieces of at most ``_CELLS`` / ``width`` entries: the pairs a chunk of
    [pairs, resamples] arrays can hold in bounded memory."""
    step = max(1, _CELLS // max(int(width), 1))
    for a in range(0, len(index), step):
        yield index[a : a + step]


def _compare(m, s, boot, jack, i, j, improvement, options) -> tuple[Comparisons, Intervals | None]:
    """The pairs' comparisons (and probabilities of improvement), a chunk of pairs at a time, so that
    memory is bounded by the columns x resamples, not the pairs x resamples."""
    confidence, method, min_units, resamples, seed, clusters = options
    n = len(i)
    diff, dlo, dhi, p_perm, p_sign = (np.full(n, np.nan) for _ in range(5))
    whole = np.isfinite(m).all(axis=0)
    plain = whole[i] & whole[j]
    # pairs of columns without a left-out value: a resample's difference is the columns' difference
    for q in _chunks(np.flatnonzero(plain), resamples):
        a, b = i[q], j[q]
        diff[q] = s.mean[a] - s.mean[b]
        djack = None if jack is None else jack[a] - jack[b]
        dlo[q], dhi[q] = _intervals(boot[a] - boot[b], diff[q], djack, s.units[a], confidence, method, min_units)
        p_sign[q] = _sign_p(*_wins(s, a, b))
    p_perm[plain] = _permutation_p(s, i[plain], j[plain], resamples, seed)
    # the others (each compared on the episodes finite in both: two columns of its own) and the
    # improvement indicators: columns of their own, a chunk of pairs at a time, on the same
    # resamples (drawn again: cheap beside the products)
    if improvement is not None:
        higher = np.broadcast_to(np.asarray(improvement, dtype=bool), i.shape)
        x = np.full(n, np.nan), np.full(n, np.nan), np.full(n, np.nan)
    todo = np.arange(n) if improvement is not None else np.flatnonzero(~plain)
    for q in _chunks(todo, 3 * resamples):
        r = q[~plain[q]]
        setups = []
        if len(r):
            ps = _setup(_joint_columns(m, i[r], j[r]), clusters)
            setups.append((ps, np.float64))
        if improvement is not None:
            xs = _setup(_improvement_columns(m, i[q], j[q], higher[q]), clusters)
            setups.append((xs, None))
        outs = [np.empty((u.sums.shape[0], resamples)) for u, _ in setups]
        for start, got in _boot_blocks(setups, 0, resamples, seed):
            for o, g in zip(outs, got):
                o[:, start : start + g.shape[1]] = g
        if len(r):
            pboot = outs.pop(0)
            a, b = np.arange(0, 2 * len(r), 2), np.arange(1, 2 * len(r), 2)
            diff[r] = ps.mean[a] - ps.mean[b]
            pj = _jackknife(ps) if method == "bca" else None
            djack = None if pj is None else pj[a] - pj[b]
            dlo[r], dhi[r] = _intervals(pboot[a] - pboot[b], diff[r], djack, ps.units[a], confidence, method, min_units)
            p_perm[r] = _permutation_p(ps, a, b, resamples, seed)
            p_sign[r] = np.where(ps.units[a] > 0, _sign_p(*_wins(ps, a, b)), np.nan)
        if improvement is not None:
            xj = _jackknife(xs) if method == "bca" else None
            x[0][q] = xs.mean
            x[1][q], x[2][q] = _intervals(outs[0], xs.mean, xj, xs.units, confidence, method, min_units)
    return Comparisons(diff, dlo, dhi, p_perm, p_sign), None if improvement is None else Intervals(*x)


def _joint_columns(m: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """Per pair, columns i and j restricted to the episodes finite in both (the others +inf, left
    out), side by side: [episodes, 2 pairs], so that the pair is compared on the same episodes."""
    out = np.empty((m.shape[0], 2 * len(i)))
    a, b = m[:, i], m[:, j]
    joint = np.isfinite(a) & np.isfinite(b)
    out[:, 0::2] = np.where(joint, a, np.inf)
    out[:, 1::2] = np.where(joint, b, np.inf)
    return out


# ------------------------------------------------------------------------ comparisons with the best


def monte_carlo_bounds(hits: Any, draws: Any, confidence: float = MC_CONFIDENCE) -> tuple[np.ndarray, np.ndarray]:
    """Where a proportion estimated from random draws lies: the two-sided Clopper-Pearson interval
    of ``hits / draws`` (0 below when ``hits = 0``, 1 above when ``hits = draws``), vectorized.

    Parameters
    ----------
    hits, draws : array_like
        Counts (``0 <= hits <= draws``, ``draws >= 1``).
    confidence : float, optional
        The interval's confidence (default :data:`MC_CONFIDENCE`).

    Returns
    -------
    tuple of numpy.ndarray
        ``(lo, hi)``.
    """
    hits, draws = np.asarray(hits, dtype=np.float64), np.asarray(draws, dtype=np.float64)
    tail = (1.0 - confidence) / 2.0
    with np.errstate(invalid="ignore"):
        lo = np.where(hits > 0, special.betaincinv(np.maximum(hits, 1), draws - hits + 1, tail), 0.0)
        hi = np.where(hits < draws, special.betaincinv(hits + 1, np.maximum(draws - hits, 1), 1.0 - tail), 1.0)
    return lo, hi


def _run_draws(scale: np.ndarray, first: int, total: int, seed: int) -> np.ndarray:
    """The seeds' term of resamples ``first .. total - 1`` [k, rows]: per figure, its standard
    error over runs times a standard normal draw (0 for one run). The few runs' wide tails are in
    the observed statistics instead (:class:`_BestFamily`: Student t with Satterthwaite's degrees of
    freedom, mapped to the normal scale), where they belong to one pair, not to a sum of draws."""
    out = np.zeros((len(scale), total - first))
    if not (scale > 0).any():
        return out
    for start, d in _draws(
        seed, _RUNS_STREAM, total, len(scale), lambda rng, rows, g: rng.standard_normal((rows, g)), first
    ):
        out[:, start - first : start - first + len(d)] = (d * scale).T
    return out


def _normal_scores(t: np.ndarray, df: np.ndarray) -> np.ndarray:
    """``t`` statistics with ``df`` degrees of freedom (inf: normal already) as normal scores of the
    same tail probability: ``Phi^-1(F_t(t; df))``, so that a pair with few runs weighs what its own
    Student-t test gives it."""
    out = t.copy()
    few = np.isfinite(df) & np.isfinite(t) & (t != 0)
    if few.any():
        tail = stats.t.logsf(np.abs(t[few]), df[few])
        out[few] = np.sign(t[few]) * _isf_log(tail)
    return out


def _isf_log(log_p: np.ndarray) -> np.ndarray:
    """The normal quantile of upper tail probability ``exp(log_p)``, accurate far in the tail."""
    p = np.exp(log_p)
    z = -special.ndtri(np.maximum(p, np.finfo(np.float64).tiny))
    deep = log_p < -700.0  # below the smallest double: the asymptotic z ~ sqrt(-2 log p)
    z[deep] = np.sqrt(-2.0 * log_p[deep] - np.log(-4.0 * np.pi * log_p[deep]))
    return z


class _Seeds(NamedTuple):
    """The seeds' terms of a family's figures: variance, Satterthwaite share, how they were
    estimated and the prior degrees of freedom of the moderation (:func:`_family_seeds`)."""

    var: np.ndarray
    share: np.ndarray
    how: str | None
    prior_df: float


def _inverse_trigamma(y: float) -> float:
    """x with ``trigamma(x) = y`` (y > 0): trigamma falls from inf to 0 on (0, inf)."""
    return float(np.exp(optimize.brentq(lambda t: special.polygamma(1, np.exp(t)) - y, -30.0, 40.0, xtol=1e-12)))


def _prior(ratio: np.ndarray, nu: np.ndarray) -> tuple[float, float]:
    """Smyth's (2004) moment estimates ``(d0, s0)`` of the scaled inverse chi-square law the
    ``ratio`` (with ``nu`` degrees of freedom each) are drawn around: ``log ratio`` has mean ``log s0
    + digamma(nu / 2) - log(nu / 2) - (digamma(d0 / 2) - log(d0 / 2))`` and variance ``trigamma(nu
    / 2) + trigamma(d0 / 2)``. ``d0`` is capped at ``sum nu``: nothing is known beyond the runs."""
    m = len(ratio)
    e = np.log(ratio) - special.digamma(nu / 2.0) + np.log(nu / 2.0)
    spread = float(np.mean((e - e.mean()) ** 2) * m / (m - 1.0) - np.mean(special.polygamma(1, nu / 2.0)))
    cap = float(nu.sum())
    d0 = cap if spread <= 0 else min(cap, 2.0 * _inverse_trigamma(spread))
    return d0, float(np.exp(e.mean() + special.digamma(d0 / 2.0) - np.log(d0 / 2.0)))


def _family_seeds(seeds, share, s2, w, runs, tested) -> _Seeds:
    """The seeds' terms of a family of comparisons with the best, each agent's run spread moderated
    by the family's (empirical Bayes, Smyth 2004).

    With 3 runs an agent's own seeds' term ``max(0, s2 - w) / R`` has 2 degrees of freedom: an agent
    whose runs spread widely by chance gets a large standard error and t tails so wide that it cannot
    be told apart from the best even 6 standard errors behind (2.6-4.3% of such agents were marked,
    docs/statistics.md). One seed variance pooled over the family fixes that, but an agent near 0%
    success moves less with its seed than one near 50%: pooled, the best agents' terms came out too
    small and a truly best agent kept its mark 92% of the time. So the spreads are compared on the
    scale of each agent's own within-run noise ``w`` (the F ratio ``s2 / w``, which floor and ceiling
    effects move together), and moderated there: the ratios (``nu = R - 1`` degrees of freedom each)
    are taken as drawn around a family value ``s0`` with ``d0`` prior degrees of freedom (a scaled
    inverse chi-square, :func:`_prior`); agent k's becomes ``(d0 s0 + nu_k ratio_k) / (d0 + nu_k)``,
    with ``d0 + nu_k`` degrees of freedom. Ratios that agree give a large ``d0`` and near pooling;
    ratios that differ a small one, and each agent nearer its own.

    An agent whose ratio is beyond what the family's law gives (the F test of ``ratio / s0``, ``(nu,
    d0)`` degrees of freedom, at :data:`HETEROGENEITY_ALPHA` over the family, Bonferroni) keeps its own
    term, and the law is estimated again without it (Phipson et al. 2016 protect hypervariable genes
    alike): moderation would shrink an agent whose seeds truly matter more toward the others. Figures
    with one run, or untested, keep theirs (0), and so does an agent without within-run noise; a run
    spread of 0 (equal run means, which a 0/1 metric gives by chance) is moderated but not used to
    estimate the family's law; with fewer than three agents to estimate it from, each
    agent keeps its own term."""
    several = (runs >= 2) & tested & np.isfinite(s2) & np.isfinite(w)
    how = None if not several.any() else "per agent"
    several &= w > 0  # no within-run noise (every episode of a run the same): its own term
    nu = runs[several] - 1.0
    ratio = s2[several] / w[several]
    fit = ratio > 0  # a spread of 0 (three equal run means, by chance on a 0/1 metric) has no log
    if fit.sum() < 3:
        return _Seeds(seeds, share, how, 0.0)
    d0, s0 = _prior(ratio[fit], nu[fit])
    own = stats.f.sf(ratio / s0, nu, d0) < HETEROGENEITY_ALPHA / len(ratio)
    if (fit & ~own).sum() < 3:
        return _Seeds(seeds, share, "per agent", 0.0)
    if own.any():
        d0, s0 = _prior(ratio[fit & ~own], nu[fit & ~own])
    post = np.where(own, ratio, (d0 * s0 + nu * ratio) / (d0 + nu)) * w[several]
    var, part = seeds.copy(), share.copy()
    var[several] = np.maximum(post - w[several], 0.0) / runs[several]
    part[several] = (post / runs[several]) ** 2 / np.where(own, nu, d0 + nu)
    return _Seeds(var, part, "moderated", d0)


class _BestFamily:
    """The comparisons with the best of one family (higher is better: ``sign`` turns the signs).

    For each figure i, the null "i is (one of) the best": ``mu_i >= mu_j`` for every j. Statistic:
    the largest lead over it, ``L_i = max_j t_ji`` with ``t_ji = (est_j - est_i) / se_ji``. With
    several runs ``t_ji`` is read as Student's t with Satterthwaite's degrees of freedom and
    mapped to the normal score of the same tail (:func:`_normal_scores`). Reference: the joint
    resampling distribution of the centred ``T*_ji = (dev_j - dev_i) / se_ji`` (``dev`` = bootstrap
    mean - estimate, plus a normal draw of each seeds' term), in two steps (Romano, Shaikh and
    Wolf 2014): a 1 - BEST_BETA bound ``c_i`` of ``max_j -T*_ji`` says which j could still be as good
    as i, each j's term shifted by ``min(0, t_ji + c_i)`` (far worse competitors drop out);
    ``p_i = BEST_BETA + P*(max_j (T*_ji + shift_ji) >= L_i)``. By the partitioning principle (exactly
    one figure is the best, up to ties) no multiplicity correction is needed across the i.

    The first ``resamples`` come from the caller's bootstrap (``boot``); :func:`_extend_best`
    streams more for the figures whose p is within Monte-Carlo error of alpha."""

    def __init__(self, est, boot, pool: _Seeds, cols, sign: float, resamples: int, seed: int):
        seeds, share = pool.var, pool.share
        self.size, self.cols, self.sign, self.seed, self.pool = len(est), cols, sign, seed, pool
        self.idx = idx = np.flatnonzero(np.isfinite(est))
        k = len(idx)
        self.hits = np.zeros(k, dtype=np.int64)
        self.n = np.full(k, resamples, dtype=np.int64)
        self.lead = np.full(k, -np.inf)
        if k < 2:
            return
        est, boot, seeds, share = est[idx], boot[idx], seeds[idx], share[idx]
        self.est, self.scale = est, np.sqrt(seeds)
        dev = boot - est[:, None] + _run_draws(self.scale, 0, resamples, seed)
        var = np.empty((k, k))
        for a in range(k):  # the episodes' term of each difference, from the same resamples
            var[:, a] = np.nanvar(boot - boot[a], axis=1)
        se = np.sqrt(var + seeds[:, None] + seeds[None, :])  # [j, i]
        # Satterthwaite's degrees of freedom of each difference: the seeds' terms have runs - 1
        # each, the episodes' (bootstrapped) is taken as known; inf without a seeds' term
        both = share[:, None] + share[None, :]
        with np.errstate(divide="ignore", invalid="ignore"):
            pair_df = np.where(both > 0, se**4 / both, np.inf)
            gap = est[:, None] - est[None, :]
            t = np.where(se > 0, gap / np.where(se > 0, se, 1.0), np.where(gap == 0, 0.0, np.sign(gap) * np.inf))
        t = _normal_scores(t, pair_df)
        np.fill_diagonal(t, -np.inf)
        self.lead = t.max(axis=0)
        self.inv_se = np.where(se > 0, 1.0 / np.where(se > 0, se, 1.0), 0.0)  # se 0: the difference never moves
        rank = int(np.ceil((resamples + 1) * (1.0 - BEST_BETA)))
        self.shift = np.empty((k, k))
        for a in range(k):
            x, bad = self._standardized(dev, a)
            w = np.where(bad, np.inf, -x)
            w[a] = -np.inf
            c = np.partition(w.max(axis=0), rank - 1)[rank - 1] if rank <= resamples else np.inf
            with np.errstate(invalid="ignore"):  # -inf + inf: a competitor infinitely worse (or i itself)
                self.shift[:, a] = np.nan_to_num(np.minimum(0.0, t[:, a] + c), nan=-np.inf)
            if self.lead[a] > 0:
                self.hits[a] = self._hits(x, bad, a)

    def _standardized(self, d: np.ndarray, a: int) -> tuple[np.ndarray, np.ndarray]:
        x = (d - d[a]) * self.inv_se[:, a, None]
        return x, np.isnan(x)  # NaN: a resample without a value (counted against the figure)

    def _hits(self, x: np.ndarray, bad: np.ndarray, a: int) -> int:
        v = np.where(bad, np.inf, x + self.shift[:, a, None])
        v[a] = -np.inf
        return int((v.max(axis=0) >= self.lead[a]).sum())

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        lo, hi = monte_carlo_bounds(self.hits, self.n)
        return np.minimum(1.0, BEST_BETA + lo), np.minimum(1.0, BEST_BETA + hi)

    def undecided(self, alpha: float, limit: int) -> np.ndarray:
        low, high = self.bounds()
        return np.flatnonzero((self.lead > 0) & (low < alpha) & (high >= alpha) & (self.n < limit))

    def count(self, block: np.ndarray, start: int, which: np.ndarray) -> None:
        """Adds the resamples ``start ..`` of ``block`` ([figures, rows], the family's bootstrap
        means in its own order) to the counts of the figures ``which``."""
        d = (
            self.sign * block[self.idx]
            - self.est[:, None]
            + _run_draws(self.scale, start, start + block.shape[1], self.seed)
        )
        for a in which.tolist():
            self.hits[a] += self._hits(*self._standardized(d, a), a)

    def result(self) -> BestTests:
        p, lo, hi = (np.full(self.size, np.nan) for _ in range(3))
        used = np.zeros(self.size, dtype=np.int64)
        if len(self.idx) >= 2:
            low, high = self.bounds()
            top = self.lead <= 0
            p[self.idx] = np.where(top, 1.0, np.minimum(1.0, BEST_BETA + (self.hits + 1.0) / (self.n + 1.0)))
            lo[self.idx] = np.where(top, 1.0, low)
            hi[self.idx] = np.where(top, 1.0, high)
            used[self.idx] = self.n
        return BestTests(p, lo, hi, used, self.pool.how, self.pool.prior_df)


def _extend_best(families: list[_BestFamily], big: _Setup, resamples: int, seed: int, alpha: float, limit: int) -> None:
    """More resamples, ten times more a round up to ``limit``, for the figures whose p-value is
    within Monte-Carlo error of ``alpha``: one stream of draws for all families of the data set,
    the bootstrap means of the columns of the families that need it, block by block."""
    n = resamples
    while True:
        todo = [(f, w) for f in families for w in [f.undecided(alpha, limit)] if len(w)]
        if not todo:
            return
        total = min(limit, 10 * n)
        cols = [c for f, _ in todo for c in f.cols]
        flat = np.concatenate(cols)
        counts = None if big.counts is None else big.counts[flat]
        sub = _Setup(big.sums[flat], counts, big.sizes, big.mean[flat], big.units[flat], big.inv, big.g)
        edges = np.cumsum([0] + [len(c) for c in cols])
        for start, (block,) in _boot_blocks([(sub, np.float64)], n, total, seed):
            means = np.stack([block[a:b].mean(axis=0) for a, b in zip(edges[:-1], edges[1:])])
            at = 0
            for f, which in todo:
                f.count(means[at : at + len(f.cols)], start, which)
                at += len(f.cols)
        for f, which in todo:
            f.n[which] = total
        n = total


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
    one = np.array([0])
    s = _setup(_joint_columns(m, one, one + 1), clusters)
    return float(_permutation_p(s, one, one + 1, int(resamples), seed)[0])


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
    one = np.array([0])
    # _sign_p, not scipy.stats.binomtest: the same p-value, but binomtest's two-sided search over
    # the pmf warns "divide by zero" on a lopsided split of thousands of episodes (scipy 1.9)
    return float(_sign_p(*_wins(_setup(_joint_columns(m, one, one + 1), clusters), one, one + 1))[0])


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
    both = np.arange(0, 2 * len(i), 2)
    return _sign_p(*_wins(_setup(_joint_columns(m, i, j), clusters), both, both + 1))


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


def _agent_terms(x: np.ndarray, f: np.ndarray, cl) -> tuple[np.ndarray, ...]:
    """For an agent's runs ``x`` [..., n, R] (0 where ``f`` [..., n] is 0): its per-episode means over
    runs [..., n], its seeds' term: the variance ``max(0, s2 - w) / R`` [...] and its
    Satterthwaite share ``(s2 / R)**2 / (R - 1)``, ``w`` and ``s2`` [...] (all 0 with one run). ``s2`` is the sample
    variance of the run means; ``w`` the part of it that the episodes' within-run noise explains,
    the two-way (episodes x runs) residual mean square, by cluster, over the episodes: the episode
    term already holds ``w / R`` (each episode's mean over runs carries that noise), so ``s2 - w``
    is the seeds' own variance. The share counts the noise of ``s2`` in full (R - 1 degrees of
    freedom): ``s2 - w`` is as uncertain as ``s2``, and counting only the net term's would make the
    tails too thin where the seeds' variance is near ``w`` (measured in docs/statistics.md)."""
    runs = x.shape[-1]
    episode = x.mean(axis=-1) * f
    if runs < 2:
        zero = np.zeros(f.shape[:-1])
        return episode, zero, zero, zero, zero
    n = f.sum(axis=-1)
    run_means = x.sum(axis=-2) / n[..., None]
    grand = run_means.mean(axis=-1)
    s2 = run_means.var(axis=-1, ddof=1)
    resid = (x - episode[..., None] - run_means[..., None, :] + grand[..., None, None]) * f[..., None]
    e = _by_cluster(resid, *cl, axis=-2)
    g = (_by_cluster(f, *cl, axis=-1) > 0).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        w = (e**2).sum(axis=(-2, -1)) / ((runs - 1.0) * (g - 1.0)) * g / n**2
    return episode, np.maximum(s2 - w, 0.0) / runs, (s2 / runs) ** 2 / (runs - 1.0), w, s2


def _t_test(estimate, v, share, confidence: float, null=0.0):
    """``(se, df, p, half-width)`` of Student's t for ``estimate`` with variance ``v`` and
    Satterthwaite denominator ``share`` (``df = v**2 / share``): the two-sided p-value of
    ``estimate == null`` (the smallest positive double for a nonzero difference with se 0) and
    the interval's half-width at ``confidence``; NaN where ``v`` is."""
    with np.errstate(invalid="ignore", divide="ignore"):
        se = np.sqrt(v)
        df = v**2 / np.where(share > 0, share, np.nan)
        d = np.abs(np.asarray(estimate) - null)
        p = np.where(se > 0, 2.0 * stats.t.sf(d / se, df), np.where(d == 0, 1.0, 0.0))
        p = np.where(np.isnan(se), np.nan, np.clip(p, np.finfo(np.float64).tiny, 1.0))
        half = np.where(se > 0, stats.t.ppf(0.5 + confidence / 2.0, df) * se, 0.0 * se)
    return se, df, p, half


def _calibrated_df(v_ep: float, w: float, runs: int, df: float, confidence: float) -> float:
    """One agent's degrees of freedom: Satterthwaite's ``df`` shrunk by the largest factor in (0, 1]
    for which the interval ``mean +- t(df) se`` covers at least ``confidence`` for *every* seed
    variance, under the normal model with this agent's episode term ``v_ep`` and within-run noise
    ``w`` (:func:`_shrink_table`). Plain Satterthwaite estimates df from the same run means as the
    standard error: a run spread small by chance makes both small, and with 2 degrees of freedom
    that cost 2 points of coverage (7% false alarms at 5%, measured in docs/statistics.md)."""
    if not (w > 0 and np.isfinite(df)):
        return df
    return float(_shrink_factor(np.float64(v_ep), np.float64(w), runs, confidence) * df)


def _shrink_factor(known, w, runs: int, confidence: float) -> np.ndarray:
    """The factor of :func:`_calibrated_df` for an agent with ``runs`` runs, within-run noise ``w``
    and a known part ``known`` of the variance (its episode term, which holds ``w / R``; for a pair,
    also the other agent's seeds' term), vectorized; 1 where ``w`` is 0 or NaN."""
    grid, factor = _shrink_table(runs, confidence)
    with np.errstate(invalid="ignore", divide="ignore"):
        c = np.maximum(known * runs / w - 1.0, 0.0)  # the known part net of the within-run noise, in w / R
    # the factor falls with c: the grid point at or above c is the conservative choice
    at = np.minimum(np.searchsorted(grid, np.nan_to_num(c, nan=0.0)), len(grid) - 1)
    return np.where(np.asarray(w) > 0, factor[at], 1.0)


@functools.lru_cache(maxsize=32)
def _shrink_table(runs: int, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """``(c grid, factor)``: for an agent's episode term net of its within-run noise, ``c`` (in
    units of ``w / R``), the largest factor of Satterthwaite's df for which the coverage of the
    interval is at least ``confidence`` at every seed variance ``rho >= w``. The coverage is exact
    under the normal model: the run means' variance is ``rho chi2(R - 1) / (R - 1)``, independent
    of the mean; quadrature over 200 quantiles of chi2(R - 1) and 40 seed variances up to
    ``1e5 w``; bisection to 1e-3. The episode term's own degrees of freedom are taken as
    infinite (more units only widen the interval)."""
    k = runs - 1.0
    alpha = 1.0 - confidence
    u = stats.chi2.ppf((np.arange(200) + 0.5) / 200, k) / k
    rho = np.concatenate([[1.0], np.geomspace(1.01, 1e5, 39)])[:, None]
    s2 = rho * u[None, :]
    grid = np.concatenate([[0.0], np.geomspace(0.01, 1e4, 36)])
    factor = np.ones(len(grid))
    for q, c in enumerate(grid):
        v = c + np.maximum(s2, 1.0)
        satterthwaite = v**2 / (s2**2 / k)
        ratio = np.sqrt(v / (c + rho))

        def covered(lam: float, satterthwaite=satterthwaite, ratio=ratio) -> bool:
            t = special.stdtrit(np.maximum(lam * satterthwaite, 1e-3), 1.0 - alpha / 2.0)
            return bool((2.0 * special.ndtr(-t * ratio)).mean(axis=1).max() <= alpha)

        if not covered(1.0):
            lo, hi = 0.0, 1.0
            while hi - lo > 1e-3:
                mid = (lo + hi) / 2.0
                lo, hi = (mid, hi) if covered(mid) else (lo, mid)
            factor[q] = lo
    return grid, np.minimum.accumulate(factor)


def _with_seeds(v, share, a, b, confidence: float):
    """``(variance, Satterthwaite denominator)`` of a comparison of two agents scored in several
    runs: the episode term ``v`` (and its ``share``) plus each agent's seeds' term, ``a`` and ``b``
    being ``(variance, share, w, s2, runs)`` (:func:`_agent_terms`).

    Each seeds' share's degrees of freedom are shrunk as one agent's are (:func:`_calibrated_df`:
    so that the interval covers at every seed variance, given the episode term), by as much as that
    agent's runs carry the seeds' shares, ``f' = 1 - (1 - f) max(0, (s_a - s_b) / (s_a + s_b))``.
    Where one agent's few runs carry the variance the pair is one agent's case, and plain
    Satterthwaite rejected up to 8% at 5%; where both carry it, two terms' df are better behaved,
    and shrinking both in full cost most of the power (a 5-point gap, 3 runs each, sigma 0.03:
    9% against 22%; docs/statistics.md). Without within-run noise (every episode of a run scoring
    the same) the test is Welch's on the run means, exact then: no shrink (rounding's ``w`` is not
    noise)."""
    (va, sa, wa, s2a, ra), (vb, sb, wb, s2b, rb) = a, b
    fa = np.where(wa > 1e-12 * s2a, _shrink_factor(v, wa, ra, confidence), 1.0)
    fb = np.where(wb > 1e-12 * s2b, _shrink_factor(v, wb, rb, confidence), 1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        lead = np.nan_to_num((sa - sb) / (sa + sb))  # +1: a's runs carry it all; -1: b's
    fa, fb = 1.0 - (1.0 - fa) * np.maximum(lead, 0.0), 1.0 - (1.0 - fb) * np.maximum(-lead, 0.0)
    return v + va + vb, share + sa / fa + sb / fb


def _runs_cluster_plan(clusters: Any, n: int):
    if clusters is None:
        return None, None
    inv, _ = _cluster_index(clusters, n)
    order = np.argsort(inv, kind="stable")
    sizes = np.bincount(inv)
    return order, np.concatenate([[0], np.cumsum(sizes[:-1])]).astype(np.intp)


def _runs_input(a: Any, b: Any, clusters: Any, confidence: float):
    """``(a, b, f, clusters plan)``: the checked ``[..., episodes, runs]`` arrays with 0 where ``f``
    (the episodes finite in every run of both) is 0."""
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
    return a, b, f, cl


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
    a, b, f, cl = _runs_input(a, b, clusters, confidence)
    seeds = a.shape[-1] > 1 and b.shape[-1] > 1
    (ea, va, sa, wa, s2a), (eb, vb, sb, wb, s2b) = _agent_terms(a, f, cl), _agent_terms(b, f, cl)
    with np.errstate(invalid="ignore", divide="ignore"):
        diff = (ea - eb).sum(axis=-1) / f.sum(axis=-1)
        v, units = _episode_variance(ea - eb, f, cl)
    share = v**2 / (units - 1.0)
    if seeds:  # a single run on either side: the episodes-only comparison
        v, share = _with_seeds(v, share, (va, sa, wa, s2a, a.shape[-1]), (vb, sb, wb, s2b, b.shape[-1]), confidence)
    se, df, p, half = _t_test(diff, v, share, confidence)
    out = RunsDifference(diff, se, df, p, diff - half, diff + half, seeds, units)
    if a.ndim == 2:
        out = out._replace(**{k: float(getattr(out, k)) for k in ("diff", "se", "df", "p", "lo", "hi")})
        out = out._replace(units=int(units))
    return out


def runs_improvement(
    a: Any, b: Any, *, higher_is_better: bool = True, clusters: Any = None, confidence: float = 0.95
) -> Intervals:
    """rliable's probability of improvement of agent a over agent b scored in several runs (seeds)
    on the same episodes, with an interval over episodes and seeds.

    Per episode, the average over all pairs of a run of a and a run of b of ``1[a better] + 0.5 *
    1[tie]``; then the mean over the episodes finite in every run of both (Agarwal et al. 2021,
    ``rliable.metrics.probability_of_improvement`` with the episodes as its tasks; checked against
    it in the tests). With one run each it is :func:`probability_of_improvement`'s value.

    The interval is Student's t around it with :func:`runs_difference`'s variance, applied to the
    U-statistic's projections: the episode term is the cluster-robust variance of the per-episode
    probabilities; each agent's seeds' term comes from its runs' own win rates (run r of a against
    all runs of b, and the converse), less their within-run noise. Clipped to [0, 1]. With a single
    run on either side the seeds' spread is not estimated: the interval is over episodes only.

    Parameters
    ----------
    a, b : array_like
        float ``[episodes, runs]`` each (the same episodes), or with the same leading batch shape.
    higher_is_better : bool, optional
        True (default) when the larger value is better, False when the smaller is (a distance).
    clusters : sequence, optional
        One label per episode: the units of the episode term. Default: every episode its own.
    confidence : float, optional
        Confidence level of the interval, in (0, 1) (default 0.95).

    Returns
    -------
    Intervals
        ``mean`` (the probability), ``lo``, ``hi``: floats, or arrays of the batch shape (NaN below
        two units).

    Raises
    ------
    ValueError
        As :func:`runs_difference`.
    """
    a, b, f, cl = _runs_input(a, b, clusters, confidence)
    sign = 1.0 if higher_is_better else -1.0
    kernel = 0.5 + 0.5 * np.sign((a[..., :, None] - b[..., None, :]) * sign)  # [..., n, Ra, Rb]
    kernel *= f[..., None, None]
    ha, hb = kernel.mean(axis=-1), kernel.mean(axis=-2)  # each run's win rates: [..., n, Ra], [..., n, Rb]
    episode = ha.mean(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        value = episode.sum(axis=-1) / f.sum(axis=-1)
        v, units = _episode_variance(episode, f, cl)
    share = v**2 / (units - 1.0)
    if a.shape[-1] > 1 and b.shape[-1] > 1:
        (_, *ta), (_, *tb) = _agent_terms(ha, f, cl), _agent_terms(hb, f, cl)
        v, share = _with_seeds(v, share, (*ta, a.shape[-1]), (*tb, b.shape[-1]), confidence)
    _, _, _, half = _t_test(value, v, share, confidence)
    out = Intervals(value, np.clip(value - half, 0.0, 1.0), np.clip(value + half, 0.0, 1.0))
    return Intervals(*(float(x) for x in out)) if a.ndim == 2 else out


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
    * ``run_sd``: the standard deviation of the run means;
    * ``se``, ``df``, ``lo``, ``hi``: with two runs or more, the standard error over episodes *and*
      seeds and Student's t interval ``mean +- t(df) se``, as :func:`runs_difference` computes it
      for one agent: the episode term (the cluster-robust variance of the per-episode means over
      runs, on the episodes finite in every run) plus the seeds' term ``max(0, s2 - w) / R`` (the
      run means' variance less the within-run noise the episode term already holds), with
      Satterthwaite's degrees of freedom shrunk so that the interval covers at every seed
      variance under the normal model (docs/statistics.md; plain Satterthwaite covered 93%
      with 3 runs). With one run, ``lo, hi`` are the episode interval and
      ``se``, ``df`` NaN: seed spread is not estimated.

    Why not the episode interval widened by a t term on the run means' whole spread (the rule
    before 0.2): that counts the episodes' within-run noise twice and puts all of it under the t
    tail of ``R - 1`` degrees of freedom, so with 3 runs the interval was wider than a single run's
    (99% coverage at no seed effect; a 3-point error in a reported figure flagged 61% of the time
    against 76% with one run). Nor a bootstrap over the runs too: with 3 or 5 runs it cannot see
    the run-to-run spread (docs/statistics.md, "Several runs"). NaN intervals below ``min_units``
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
        Per group: ``mean``, ``lo``, ``hi``, ``episode_lo``, ``episode_hi``, ``run_means``,
        ``run_sd``, ``se`` and ``df`` (the last three NaN with a single run).

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


def compare_with_best(
    matrix: Any,
    *,
    higher_is_better: bool = True,
    alpha: float = 0.05,
    resamples: int = 10_000,
    seed: int = 0,
    clusters: Any = None,
    runs: Sequence[Sequence[int]] | None = None,
    max_resamples: int | None = None,
) -> BestTests:
    """Multiple comparisons with the best: for each agent, the p-value of "this agent is (one of)
    the best", the best being unknown and chosen by the same data.

    The leaderboards' dagger: an agent whose ``p >= alpha`` cannot be told apart from the best. The
    truly best agent gets ``p < alpha`` with probability at most ``alpha`` whatever the number of
    agents (Hsu 1984's multiple comparisons with the best, by the partitioning principle; each
    agent tested against the largest standardized lead over it, the competitors that are far
    worse dropped in a first step at level :data:`BEST_BETA`, Romano, Shaikh and Wolf 2014). The
    reference is the joint cluster bootstrap of all agents (pairing and clusters kept) plus, for
    agents scored in several runs, a Student t draw of each agent's runs term (seeds are not
    shared). Where the Monte-Carlo error leaves ``p`` on both sides of ``alpha``, more resamples
    are streamed, up to ``max_resamples`` (docs/statistics.md, "The best, chosen honestly").

    Parameters
    ----------
    matrix : array_like
        float ``[episodes, k]``: one column per agent (with ``runs``: one column per run).
    higher_is_better : bool, optional
        The direction of the metric (default True).
    alpha : float, optional
        The level the p-values must resolve, in (0, 1) (default 0.05).
    resamples : int, optional
        Bootstrap resamples, a positive integer (default 10 000).
    seed : int, optional
        Seed of the resamples (default 0).
    clusters : sequence, optional
        One label per episode (e.g. the path id): whole clusters are resampled together.
    runs : sequence of sequence of int, optional
        The run columns of each agent: agent g is the mean over runs of columns ``runs[g]``.
        Default: each column is one agent, one run.
    max_resamples : int, optional
        The most resamples drawn to resolve a p-value (default ``min(MAX_RESAMPLES, 100 *
        resamples)``).

    Returns
    -------
    BestTests
        Per agent: ``p``, its Monte-Carlo bounds ``lo, hi`` and the ``resamples`` drawn.

    Raises
    ------
    ValueError
        As :func:`analyze`: a bad option, a matrix that is not 2-D or empty, a NaN value, bad
        ``clusters`` or ``runs``.
    """
    m, _ = _matrix(matrix, None)
    k = m.shape[1]
    figures = list(range(k)) if runs is None else [1 + g for g in range(len(runs))]
    res = analyze(
        m if runs is None else m[:, :1],
        resamples=resamples,
        method="percentile",
        seed=seed,
        clusters=clusters,
        runs=None if runs is None else (m, runs),
        best=[(figures, bool(higher_is_better))],
        alpha=alpha,
        max_resamples=max_resamples,
    )
    return res.best[0]
