"""``analyze``: every figure of a data set on one set of bootstrap resamples (one draw of the
clusters): the columns' intervals, the pairs' comparisons and probabilities of improvement, the
groups of runs' intervals and the comparisons with the best; and the public functions that are one
``analyze`` call (:func:`bootstrap_means`, :func:`bootstrap_ci`, :func:`paired_difference`,
:func:`runs_intervals`, :func:`probability_of_improvement`, :func:`compare_with_best`), here
because they call it and the modules below may not import it.

Memory: columns x resamples; the pairs go by chunks (:func:`~navdtw.stats._resampling.chunks`),
never resamples x pairs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ._best import MAX_RESAMPLES, best_tests
from ._paired import joint_columns, paired_columns, permutation_p, sign_p, wins_losses
from ._resampling import (
    MIN_UNITS,
    boot_blocks,
    bootstrap,
    check_options,
    checked_matrix,
    checked_pairs,
    checked_weights,
    chunks,
    intervals,
    jackknife,
    prepare,
)
from ._runs import SeedTerms, group_columns, group_intervals, run_columns
from ._types import Analysis, BestTests, Comparisons, Intervals, RunIntervals

__all__ = [
    "analyze",
    "bootstrap_ci",
    "bootstrap_means",
    "compare_with_best",
    "paired_difference",
    "probability_of_improvement",
    "runs_intervals",
]


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
    weights: Any = None,
    run_weights: Any = None,
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

    ``weights`` makes columns pooled ratios (LH-VLN's ISR: successes over subtasks, each episode's
    rate weighted by its subtasks; the ``weight`` of a :class:`navdtw.registry.Metric`): column j's
    figure is ``sum(w * v) / sum(w)``, and every resample, jackknife replicate and paired statistic
    recomputes that ratio on the units it draws (never a mean of per-episode ratios). A pair of
    columns with the same weights is compared by sign flips of the units' weighted differences,
    which is then exactly a swap of the two ratios' terms; with different weights each flip swaps
    the units' (numerator, denominator) and recomputes both ratios. An episode of weight 0 counts
    nowhere; a unit whose weights are all 0 holds no value.

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
    weights : array_like, optional
        float ``[episodes, k]`` (or ``[episodes]`` for one column), finite and >= 0: each column's
        weights (a column of ones is a plain mean). Default None: every column a plain mean.
        With ``weights`` and ``improvement``, a pair's probability of improvement counts each
        episode by the mean of the two columns' weights (:func:`probability_of_improvement`).
    run_weights : array_like, optional
        float ``[episodes, k2]``, the shape of ``runs``' matrix, finite and >= 0: each run
        column's weights, making its group a pooled ratio (:func:`runs_intervals`). Default None:
        the groups are plain means.

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
        pairs that are not ``(i, j)`` column indices in range, ``runs`` with another number of
        episodes or an empty or out-of-range group, or ``weights`` (or ``run_weights``) of another
        shape or with a negative or non-finite value, or ``run_weights`` without ``runs``.
    """
    check_options(confidence, resamples, method, min_units)
    resamples = int(resamples)
    limit = None if best is None else _best_limit(alpha, resamples, max_resamples)
    m, labels = checked_matrix(matrix, names)
    w = checked_weights(weights, m, labels)
    k = m.shape[1]
    i, j = checked_pairs(pairs, k)
    s = prepare(m, clusters, w)
    # every column that needs the bootstrap, on one set of resamples: the means and the runs (a
    # group without a left-out value is one column, the row mean of its runs: the same bootstrap,
    # as means are linear). Memory: columns x resamples; the pairs go chunk by chunk (_compare).
    blocks, where, rw, wmore = [m], [], None, None
    if runs is not None:
        rm, groups = run_columns(runs, m.shape[0])
        if run_weights is not None:
            rw = checked_weights(run_weights, rm, [f"run column {c}" for c in range(rm.shape[1])])
        more, where, wmore = group_columns(rm, groups, k, rw)
        blocks += more
    elif run_weights is not None:
        raise ValueError("stats: run_weights without runs")
    if len(blocks) > 1:
        whole = None
        if w is not None or wmore is not None:
            rest = wmore if wmore is not None else [np.ones_like(b) for b in blocks[1:]]
            whole = np.hstack([np.ones_like(m) if w is None else w, *rest])
        big = prepare(np.hstack(blocks), clusters, whole)
    else:
        big = s
    boot = bootstrap(big, resamples, seed)
    jack = jackknife(big) if method == "bca" else None

    lo, hi = intervals(
        boot[:k], s.mean[:k], None if jack is None else jack[:k], s.units[:k], confidence, method, min_units
    )
    options = (confidence, method, min_units, resamples, seed, clusters, w)
    comparisons, improved = _compare(m, s, boot, jack, i, j, improvement, options)
    out = Analysis(Intervals(s.mean[:k], lo, hi), comparisons, improvement=improved)
    terms = None
    if runs is not None:
        settings = {"clusters": clusters, "confidence": confidence, "method": method, "min_units": min_units}
        found, terms = group_intervals(rm, groups, where, big, boot, jack, **settings, rw=rw)
        out = out._replace(runs=found)
    if best is not None:
        est, cols, seeds = _figures(s, big, where, out.runs, terms, min_units)
        tests = best_tests(best, est, cols, seeds, boot, big, resamples=resamples, seed=seed, alpha=alpha, limit=limit)
        out = out._replace(best=tests)
    return out


def _best_limit(alpha: float, resamples: int, max_resamples: int | None) -> int:
    """The most resamples the comparisons with the best may draw, ``alpha`` and ``max_resamples``
    checked."""
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"stats: alpha must be in (0, 1), got {alpha}")
    limit = max(resamples, min(MAX_RESAMPLES, 100 * resamples)) if max_resamples is None else max_resamples
    if int(limit) != limit or limit < resamples:
        raise ValueError(f"stats: max_resamples must be an integer >= resamples, got {max_resamples}")
    return int(limit)


def _figures(s, big, where: list[np.ndarray], runs: RunIntervals | None, terms: SeedTerms | None, min_units: int):
    """``(estimates, columns, seeds' terms)`` of the figures a family of best may name: the ``k``
    columns of the matrix, then the groups of runs (their mean over runs, with their seeds' terms,
    net of the within-run noise the bootstrap's episode term holds). A figure below ``min_units``
    units has no spread to compare (as it has no interval): untested (NaN)."""
    k = len(s.mean)
    est = s.mean if runs is None else np.concatenate([s.mean, runs.mean])
    cols = [np.array([q]) for q in range(k)] + where
    est = np.where(np.array([big.units[c].min() for c in cols]) >= min_units, est, np.nan)
    seeds, share, s2, w, nruns = (np.zeros(len(cols)) for _ in range(5))
    if terms is not None:
        seeds[k:], share[k:], s2[k:], w[k:] = terms.var, terms.share, terms.s2, terms.w
        nruns[k:] = terms.runs
    return est, cols, SeedTerms(seeds, share, w, s2, nruns)


def _compare(m, s, boot, jack, i, j, improvement, options) -> tuple[Comparisons, Intervals | None]:
    """The pairs' comparisons (and probabilities of improvement), a chunk of pairs at a time, so that
    memory is bounded by the columns x resamples, not the pairs x resamples."""
    confidence, method, min_units, resamples, seed, clusters, w = options
    n = len(i)
    diff, dlo, dhi, p_perm, p_sign = (np.full(n, np.nan) for _ in range(5))
    whole = np.isfinite(m).all(axis=0)
    plain = whole[i] & whole[j]
    # pairs of columns without a left-out value: a resample's difference is the columns' difference
    for q in chunks(np.flatnonzero(plain), resamples):
        a, b = i[q], j[q]
        diff[q] = s.mean[a] - s.mean[b]
        djack = None if jack is None else jack[a] - jack[b]
        dlo[q], dhi[q] = intervals(boot[a] - boot[b], diff[q], djack, s.units[a], confidence, method, min_units)
        p_sign[q] = sign_p(*wins_losses(s, a, b))
    p_perm[plain] = permutation_p(s, i[plain], j[plain], resamples, seed)
    # the others (each compared on the episodes finite in both: two columns of its own) and the
    # improvement indicators: columns of their own, a chunk of pairs at a time, on the same
    # resamples (drawn again: cheap beside the products)
    if improvement is not None:
        higher = np.broadcast_to(np.asarray(improvement, dtype=bool), i.shape)
        x = np.full(n, np.nan), np.full(n, np.nan), np.full(n, np.nan)
    todo = np.arange(n) if improvement is not None else np.flatnonzero(~plain)
    for q in chunks(todo, 3 * resamples):
        r = q[~plain[q]]
        setups = []
        if len(r):
            pw = None if w is None else joint_columns(w, i[r], j[r], as_is=True)
            ps = prepare(joint_columns(m, i[r], j[r]), clusters, pw)
            setups.append((ps, np.float64))
        if improvement is not None:
            xw = None if w is None else (w[:, i[q]] + w[:, j[q]]) / 2.0  # the pair's weight: a subtask drawn
            xs = prepare(_improvement_columns(m, i[q], j[q], higher[q]), clusters, xw)
            setups.append((xs, None if xw is None else np.float64))  # float32 is exact for halves only
        outs = [np.empty((u.sums.shape[0], resamples)) for u, _ in setups]
        for start, got in boot_blocks(setups, 0, resamples, seed):
            for o, g in zip(outs, got):
                o[:, start : start + g.shape[1]] = g
        if len(r):
            pboot = outs.pop(0)
            a, b = np.arange(0, 2 * len(r), 2), np.arange(1, 2 * len(r), 2)
            diff[r] = ps.mean[a] - ps.mean[b]
            pj = jackknife(ps) if method == "bca" else None
            djack = None if pj is None else pj[a] - pj[b]
            dlo[r], dhi[r] = intervals(pboot[a] - pboot[b], diff[r], djack, ps.units[a], confidence, method, min_units)
            p_perm[r] = permutation_p(ps, a, b, resamples, seed)
            p_sign[r] = np.where(ps.units[a] > 0, sign_p(*wins_losses(ps, a, b)), np.nan)
        if improvement is not None:
            xj = jackknife(xs) if method == "bca" else None
            x[0][q] = xs.mean
            x[1][q], x[2][q] = intervals(outs[0], xs.mean, xj, xs.units, confidence, method, min_units)
    return Comparisons(diff, dlo, dhi, p_perm, p_sign), None if improvement is None else Intervals(*x)


def _improvement_columns(m: np.ndarray, i: np.ndarray, j: np.ndarray, higher_is_better) -> np.ndarray:
    """Per pair, per episode: 1 where column i does better than column j, 0.5 on a tie, 0 where
    worse; +inf (left out) where either is not finite."""
    sign = np.broadcast_to(np.where(np.asarray(higher_is_better, dtype=bool), 1.0, -1.0), i.shape)
    a, b = m[:, i], m[:, j]
    joint = np.isfinite(a) & np.isfinite(b)
    with np.errstate(invalid="ignore"):
        d = np.where(joint, (a - b) * sign, 0.0)
    return np.where(joint, 0.5 + 0.5 * np.sign(d), np.inf)


# ---------------------------------------------------------------------- one analyze call each


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
    weights: Any = None,
) -> Intervals:
    """Mean and bootstrap interval of every column of ``matrix`` [episodes, k], all columns on the
    same resamples (so column j's interval equals ``bootstrap_ci(matrix[:, j])`` with the same seed).
    Infinite values are left out; NaN intervals below ``min_units`` units (:func:`analyze`). With
    ``weights``, a column is the pooled ratio ``sum(w * v) / sum(w)``, recomputed in every resample.

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

    weights : array_like, optional
        float ``[episodes, k]`` (or ``[episodes]``), finite and >= 0: the columns' weights
        (:func:`analyze`); default None: plain means.

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
        weights=weights,
    ).means


def bootstrap_ci(
    values: Any,
    *,
    confidence: float = 0.95,
    resamples: int = 10_000,
    method: str = "bca",
    seed: int = 0,
    clusters: Any = None,
    weights: Any = None,
) -> tuple[float, float, float]:
    """``(mean, lo, hi)``: the mean of ``values`` (one per episode) and its bootstrap confidence
    interval, percentile or BCa; with ``clusters`` (one label per episode, e.g. path ids), whole
    clusters are resampled. Infinite values are left out; with a single unit (one value, or one
    cluster) the interval is undefined: ``lo`` and ``hi`` are NaN. With ``weights`` (one per
    episode), the figure is the pooled ratio ``sum(w * v) / sum(w)`` and each resample recomputes it.

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
    weights : array_like, optional
        float ``[episodes]``, finite and >= 0 (default None: the plain mean).

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
        weights=None if weights is None else np.asarray(weights, dtype=np.float64)[:, None],
    )
    return float(r.mean[0]), float(r.lo[0]), float(r.hi[0])


def paired_difference(
    a: Any,
    b: Any,
    *,
    confidence: float = 0.95,
    resamples: int = 10_000,
    method: str = "bca",
    seed: int = 0,
    clusters: Any = None,
    weights: Any = None,
) -> tuple[float, float, float]:
    """``(diff, lo, hi)``: ``mean(a) - mean(b)`` over the same episodes and its paired bootstrap
    interval (each resample takes the same episodes, or clusters, for both). Episodes where a or b
    is infinite are left out; the interval is NaN with a single unit. With ``weights`` (one per
    episode, the same for both: ISR's subtasks), the difference of the pooled ratios, each resample
    recomputing both.

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
    weights : array_like, optional
        float ``[episodes]``, finite and >= 0, for both columns (default None: plain means).

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
        paired_columns(a, b),
        [(0, 1)],
        confidence=confidence,
        resamples=resamples,
        method=method,
        seed=seed,
        clusters=clusters,
        names=["a", "b"],
        weights=None if weights is None else np.repeat(np.asarray(weights, dtype=np.float64)[:, None], 2, axis=1),
    ).comparisons
    return float(r.diff[0]), float(r.lo[0]), float(r.hi[0])


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
    weights: Any = None,
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

    With ``weights`` (one per episode and run column), a group is a pooled ratio (LH-VLN's ISR):
    each run's figure is ``sum(w * v) / sum(w)``, recomputed in every resample; ``mean`` is their
    mean over runs; the interval over episodes and seeds is the one above on the runs linearized,
    ``u = R_r + w (v - R_r) / mean(w)`` (:func:`runs_difference`; docs/statistics.md, "Pooled
    ratios").

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
    weights : array_like, optional
        float ``[episodes, k]``, the matrix's shape, finite and >= 0: each run column's weights
        (default None: plain means).

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
    m, _ = checked_matrix(matrix, names)
    return analyze(
        m[:, :1],
        confidence=confidence,
        resamples=resamples,
        method=method,
        seed=seed,
        clusters=clusters,
        min_units=min_units,
        runs=(m, groups),
        run_weights=weights,
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
    weights: Any = None,
) -> Intervals:
    """For each ``(i, j)`` of ``pairs``: the probability that column i does better than column j on
    a random episode, ties counting half (rliable's "probability of improvement", Agarwal et al.
    2021), over the episodes finite in both; with its bootstrap interval over episodes (or the
    ``clusters``), on the draws of :func:`analyze` (the same resamples as the means).

    ``higher_is_better``: per pair (or one for all), True when the larger value is better, False
    when the smaller is (a distance); 0.5 means the two are as often ahead.

    With ``weights`` (pooled ratios: ISR's subtasks), the probability that column i does better on
    a *subtask* drawn at random: each episode's comparison counted by its weight (the mean of the
    two columns' weights, the task's when they agree), ``sum(w * p_e) / sum(w)``, recomputed in
    every resample. A ratio is a figure over its weight units, so an episode of five subtasks
    weighs five times one of one here as in the ratio (docs/statistics.md, "Pooled ratios").

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
    weights : array_like, optional
        float ``[episodes, k]``, finite and >= 0: the columns' weights (:func:`analyze`); default
        None: every episode counts once.

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
        weights=weights,
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
    m, _ = checked_matrix(matrix, None)
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
