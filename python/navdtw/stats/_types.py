"""What the statistics return: named tuples of arrays (or floats), one per kind of answer."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

__all__ = ["Analysis", "BestTests", "Comparisons", "Intervals", "RunIntervals", "RunsDifference"]


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
