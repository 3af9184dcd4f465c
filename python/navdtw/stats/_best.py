"""Multiple comparisons with the best (the leaderboards' marks): for each figure of a family, the
p-value of "this one is (one of) the best", the best chosen by the same data (:func:`best_tests`,
the best step of :func:`~navdtw.stats.analyze`; docs/statistics.md, "The best, chosen honestly").

The first resamples are the caller's bootstrap; more are streamed, block by block, for the figures
whose p-value is within Monte-Carlo error of ``alpha`` (:func:`monte_carlo_bounds`), so memory
does not grow with them. Agents scored in several runs add their seeds' term, moderated toward
their family's (:func:`_family_seeds`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
from scipy import optimize, special, stats

from ._resampling import RUNS_STREAM, Setup, boot_blocks, draws
from ._runs import SeedTerms
from ._types import BestTests

__all__ = ["BEST_BETA", "HETEROGENEITY_ALPHA", "MAX_RESAMPLES", "MC_CONFIDENCE", "monte_carlo_bounds"]

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
    for start, d in draws(
        seed, RUNS_STREAM, total, len(scale), lambda rng, rows, g: rng.standard_normal((rows, g)), first
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


def _extend_best(families: list[_BestFamily], big: Setup, resamples: int, seed: int, alpha: float, limit: int) -> None:
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
        sub = Setup(big.sums[flat], counts, big.sizes, big.mean[flat], big.units[flat], big.inv, big.g)
        edges = np.cumsum([0] + [len(c) for c in cols])
        for start, (block,) in boot_blocks([(sub, np.float64)], n, total, seed):
            means = np.stack([block[a:b].mean(axis=0) for a, b in zip(edges[:-1], edges[1:])])
            at = 0
            for f, which in todo:
                f.count(means[at : at + len(f.cols)], start, which)
                at += len(f.cols)
        for f, which in todo:
            f.n[which] = total
        n = total


def best_tests(
    best: Sequence[tuple[Sequence[int], bool]],
    est: np.ndarray,
    cols: list[np.ndarray],
    terms: SeedTerms,
    boot: np.ndarray,
    big: Setup,
    *,
    resamples: int,
    seed: int,
    alpha: float,
    limit: int,
) -> list[BestTests]:
    """Internal: the best step of ``analyze``: the comparisons with the best of each family of
    ``best`` (figures, and whether higher is better). Figure x has the estimate ``est[x]`` (NaN:
    not tested), the columns ``cols[x]`` of the shared bootstrap ``boot`` (of ``big``'s columns;
    its mean over them) and the seeds' term ``terms[..][x]`` (0 for one run)."""
    families = []
    for members, higher in best:
        q = np.asarray(members, dtype=np.intp)
        if q.ndim != 1 or (len(q) and (q.min() < 0 or q.max() >= len(cols))):
            raise ValueError(f"stats: a family of best names a figure out of range 0..{len(cols) - 1}")
        sign = 1.0 if higher else -1.0
        rows = np.stack([boot[cols[x]].mean(axis=0) for x in q.tolist()]) if len(q) else np.zeros((0, resamples))
        pool = _family_seeds(terms.var[q], terms.share[q], terms.s2[q], terms.w[q], terms.runs[q], np.isfinite(est[q]))
        family = _BestFamily(sign * est[q], sign * rows, pool, [cols[x] for x in q.tolist()], sign, resamples, seed)
        families.append(family)
    _extend_best(families, big, resamples, seed, alpha, limit)
    return [f.result() for f in families]
