"""Confidence intervals and paired tests for comparing agents on the same episodes.

Everything here is about *means over episodes* (the number every leaderboard reports), which makes
the bootstrap and the permutation test linear in the data: a bootstrap resample is a vector of
cluster counts ``c`` and its mean is ``(c @ S) / (c @ sizes)`` with ``S`` the per-cluster sums, and a
sign-flip permutation of a paired difference is ``s @ (A_i - A_j) = s @ A_i - s @ A_j``. So one
matrix product per block of resamples serves every column (agents x metrics) at once, and every
pair of columns is a difference of two columns of the result. See docs/statistics.md for the
choices (BCa by default, clusters, Holm, seeds) and the reasons. Memory: resamples x columns;
pairs go by chunks (32 MB), never resamples x pairs. The leaderboards' marks are
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

One private module per concern (docs/design.md), each importing only those above it in this list;
this package's namespace is their public names, re-exported:

* ``_types``: the result types (:class:`Intervals`, :class:`Comparisons`, :class:`RunIntervals`,
  :class:`BestTests`, :class:`Analysis`, :class:`RunsDifference`);
* ``_resampling``: the resampling engine: input checks, the seeded blocks of draws, the cluster
  bootstrap and its percentile, BCa and jackknife intervals;
* ``_paired``: the paired tests (sign-flip permutation, sign test) and :func:`holm`;
* ``_runs``: several runs (seeds): :func:`runs_difference`, :func:`runs_improvement`, each group's
  interval over episodes and seeds, the calibration of their degrees of freedom;
* ``_best``: the comparisons with the best (the leaderboards' marks);
* ``_analysis``: :func:`analyze`, every figure on one set of resamples, and the functions that are
  one call of it (:func:`bootstrap_means`, :func:`runs_intervals`, :func:`compare_with_best`, ...).
"""

from __future__ import annotations

from ._analysis import (
    analyze,
    bootstrap_ci,
    bootstrap_means,
    compare_with_best,
    paired_difference,
    probability_of_improvement,
    runs_intervals,
)
from ._best import BEST_BETA, HETEROGENEITY_ALPHA, MAX_RESAMPLES, MC_CONFIDENCE, monte_carlo_bounds
from ._paired import holm, paired_permutation_test, sign_flip_tail_bound, sign_test, sign_tests
from ._resampling import BLOCK, MIN_UNITS
from ._runs import runs_difference, runs_improvement
from ._types import Analysis, BestTests, Comparisons, Intervals, RunIntervals, RunsDifference

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
