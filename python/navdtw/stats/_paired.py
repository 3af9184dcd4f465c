"""Paired tests of two columns on the same episodes (or clusters): the sign-flip permutation test
with its tail bound, the sign test, and Holm's adjustment of a family of p-values.

A sign-flip permutation of a paired difference is ``s @ (A_i - A_j) = s @ A_i - s @ A_j``: one
matrix product per block of flips serves every pair (:func:`permutation_p`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy import special, stats

from ._resampling import (
    PERMUTATION_STREAM,
    Setup,
    all_sign_flips,
    check_options,
    checked_matrix,
    checked_pairs,
    checked_weights,
    chunks,
    draws,
    prepare,
    sign_flips,
)

__all__ = ["holm", "paired_permutation_test", "sign_flip_tail_bound", "sign_test", "sign_tests"]


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


def permutation_p(s: Setup, i: np.ndarray, j: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    """Internal: two-sided sign-flip p-values for the pairs (i, j): exact over all 2**G flips when that
    is at most ``resamples``, else (hits + 1) / (resamples + 1) over random flips, replaced where no
    flip was as extreme (hits == 0) by :func:`sign_flip_tail_bound` when that is smaller. NaN for a pair
    without an episode finite in both."""
    if len(i) == 0:
        return np.zeros(0)
    out = np.full(len(i), np.nan)
    ratio = unequal_denominators(s, i, j)
    if ratio.any():  # pooled ratios of different denominators: the swaps recompute both ratios
        out[ratio] = _ratio_permutation_p(s, i[ratio], j[ratio], resamples, seed)
    if (~ratio).any():
        out[~ratio] = _linear_permutation_p(s, i[~ratio], j[~ratio], resamples, seed)
    return out


def unequal_denominators(s: Setup, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """Internal: per pair, whether its two columns' per-unit denominators differ (pooled ratios whose
    weights differ between the columns); False for plain means and for the same weights, where the
    difference of the ratios is the sum of the units' weighted differences over one denominator."""
    if s.counts is None:
        return np.zeros(len(i), dtype=bool)
    return (s.counts[i] != s.counts[j]).any(axis=1)


def _ratio_permutation_p(s: Setup, i: np.ndarray, j: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    """Two-sided p-values of pairs of pooled ratios with different denominators: a flip of unit u
    swaps the two columns' (numerator, denominator) there, both ratios are recomputed and the
    statistic is their difference, ``|R_i* - R_j*| >= |R_i - R_j|``. Exact over all 2**G flips when
    that is at most ``resamples``, else (hits + 1) / (resamples + 1) (no tail bound: the statistic
    is not a weighted sum of signs)."""
    n_sum, d_sum = s.sums[i] + s.sums[j], s.counts[i] + s.counts[j]  # [pairs, G]
    n_dif, d_dif = s.sums[i] - s.sums[j], s.counts[i] - s.counts[j]
    big_n, big_d = n_sum.sum(axis=1)[:, None] / 2.0, d_sum.sum(axis=1)[:, None] / 2.0
    with np.errstate(invalid="ignore", divide="ignore"):
        observed = s.sums[i].sum(axis=1) / s.counts[i].sum(axis=1) - s.sums[j].sum(axis=1) / s.counts[j].sum(axis=1)
    scale = (np.abs(s.sums[i]).sum(axis=1) + np.abs(s.sums[j]).sum(axis=1)) / np.maximum(d_sum.sum(axis=1) / 2, 1e-300)
    threshold = (np.abs(observed) - 1e-12 * scale)[:, None]

    def hits_of(flips: np.ndarray) -> np.ndarray:
        fn, fd = (n_dif @ flips.T) / 2.0, (d_dif @ flips.T) / 2.0  # [pairs, rows]
        with np.errstate(invalid="ignore", divide="ignore"):
            t = (big_n + fn) / (big_d + fd) - (big_n - fn) / (big_d - fd)
        return (np.abs(t) >= threshold).sum(axis=1)

    if 2**s.g <= resamples:
        p = hits_of(all_sign_flips(s.g)) / 2.0**s.g
    else:
        hits = np.zeros(len(i), dtype=np.int64)
        for _, f in draws(seed, PERMUTATION_STREAM, resamples, s.g, sign_flips):
            hits += hits_of(f.astype(np.float64))
        p = (hits + 1.0) / (resamples + 1.0)
    return np.where(np.isfinite(observed) & (np.minimum(s.units[i], s.units[j]) > 0), p, np.nan)


def _linear_permutation_p(s: Setup, i: np.ndarray, j: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    """:func:`permutation_p` of pairs whose difference is a sum over units (plain means, or pooled
    ratios over the same denominators)."""
    total, scale = s.sums.sum(axis=1), np.abs(s.sums).sum(axis=1)
    # |T*| >= |T_obs|, up to the rounding of the two dot products (relative to their absolute scale)
    threshold = (np.abs(total[i] - total[j]) - 1e-12 * (scale[i] + scale[j]))[:, None]
    every = np.arange(len(i))
    if 2**s.g <= resamples:
        t = s.sums @ all_sign_flips(s.g).T
        p = np.empty(len(i))
        for q in chunks(every, t.shape[1]):
            p[q] = (np.abs(t[i[q]] - t[j[q]]) >= threshold[q]).sum(axis=1) / 2.0**s.g
    else:
        hits = np.zeros(len(i), dtype=np.int64)
        for _, f in draws(seed, PERMUTATION_STREAM, resamples, s.g, sign_flips):
            t = np.ascontiguousarray((f @ s.sums.T).T)
            for q in chunks(every, t.shape[1]):
                hits[q] += (np.abs(t[i[q]] - t[j[q]]) >= threshold[q]).sum(axis=1)
        p = (hits + 1.0) / (resamples + 1.0)
        for q in chunks(np.flatnonzero(hits == 0), s.g):
            p[q] = np.minimum(p[q], sign_flip_tail_bound(s.sums[i[q]] - s.sums[j[q]]))
    return np.where(np.minimum(s.units[i], s.units[j]) > 0, p, np.nan)


def sign_p(wins: np.ndarray, losses: np.ndarray) -> np.ndarray:
    """Internal: two-sided exact binomial p-values (success probability 1/2) for wins vs losses,
    vectorized; equal to ``scipy.stats.binomtest(wins, wins + losses).pvalue`` (the two tails are
    symmetric)."""
    n = wins + losses
    p = 2.0 * stats.binom.cdf(np.minimum(wins, losses), n, 0.5)
    return np.where(n > 0, np.minimum(p, 1.0), 1.0)


def wins_losses(s: Setup, i: np.ndarray, j: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Internal: per pair (columns with the same left-out episodes, see :func:`joint_columns`), the
    number of episodes (or clusters, by summed difference) where i beats j and where j beats i; a
    left-out episode is neither."""
    d = s.sums[i] - s.sums[j]  # [pairs, G]
    ratio = unequal_denominators(s, i, j)
    if ratio.any():  # pooled ratios of different denominators: each unit's two ratios compared
        a, b, da, db = s.sums[i[ratio]], s.sums[j[ratio]], s.counts[i[ratio]], s.counts[j[ratio]]
        with np.errstate(invalid="ignore", divide="ignore"):
            d[ratio] = np.where((da > 0) & (db > 0), a / da - b / db, 0.0)
    return (d > 0).sum(axis=1), (d < 0).sum(axis=1)


def joint_columns(m: np.ndarray, i: np.ndarray, j: np.ndarray, as_is: bool = False) -> np.ndarray:
    """Internal: per pair, columns i and j restricted to the episodes finite in both (the others +inf,
    left out), side by side: [episodes, 2 pairs], so that the pair is compared on the same episodes.
    With ``as_is`` (the pairs' weights): the columns side by side as they are (the left-out episodes
    are left out by their values)."""
    out = np.empty((m.shape[0], 2 * len(i)))
    a, b = m[:, i], m[:, j]
    if as_is:
        out[:, 0::2], out[:, 1::2] = a, b
        return out
    joint = np.isfinite(a) & np.isfinite(b)
    out[:, 0::2] = np.where(joint, a, np.inf)
    out[:, 1::2] = np.where(joint, b, np.inf)
    return out


def paired_columns(a: Any, b: Any) -> np.ndarray:
    """Internal: ``a`` and ``b`` (paired, one value per episode) as the two columns of a matrix."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.ndim != 1 or a.shape != b.shape:
        raise ValueError(f"stats: a and b must be 1-D and paired (same episodes), got shapes {a.shape} and {b.shape}")
    return np.stack([a, b], axis=1)


def paired_permutation_test(
    a: Any, b: Any, *, resamples: int = 10_000, seed: int = 0, clusters: Any = None, weights: Any = None
) -> float:
    """Two-sided p-value of the paired sign-flip permutation test of ``mean(a) == mean(b)``.

    Under the null each episode's difference ``a - b`` (or each cluster's summed difference) is as
    likely to have either sign; the statistic is ``|sum of differences|``. Exact over all sign
    flips when there are at most ``resamples`` of them; otherwise ``(hits + 1) / (resamples + 1)``
    over random flips, so p is never 0, and where no random flip is as extreme (hits = 0) the
    smaller of that and :func:`sign_flip_tail_bound`. Episodes where a or b is infinite are left
    out; NaN when no episode is finite in both. With ``weights`` (one per episode, the same for
    both), the statistic is the difference of the pooled ratios ``sum(w * a) / sum(w) - sum(w * b) /
    sum(w)``: each episode's weighted difference flips sign.

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
    weights : array_like, optional
        float ``[episodes]``, finite and >= 0, for both (default None: plain means).

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
    check_options(0.95, resamples, "percentile")
    m, labels = checked_matrix(paired_columns(a, b), ["a", "b"])
    one = np.array([0])
    w = None if weights is None else checked_weights(paired_columns(weights, weights), m, labels)
    s = prepare(joint_columns(m, one, one + 1), clusters, w)
    return float(permutation_p(s, one, one + 1, int(resamples), seed)[0])


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
    m, _ = checked_matrix(paired_columns(a, b), ["a", "b"])
    one = np.array([0])
    # sign_p, not scipy.stats.binomtest: the same p-value, but binomtest's two-sided search over
    # the pmf warns "divide by zero" on a lopsided split of thousands of episodes (scipy 1.9)
    return float(sign_p(*wins_losses(prepare(joint_columns(m, one, one + 1), clusters), one, one + 1))[0])


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
    m, _ = checked_matrix(matrix, None)
    i, j = checked_pairs(pairs, m.shape[1])
    both = np.arange(0, 2 * len(i), 2)
    return sign_p(*wins_losses(prepare(joint_columns(m, i, j), clusters), both, both + 1))


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
