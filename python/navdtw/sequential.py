"""Confidence sequences for the mean of a split evaluated in a random order (stopping early).

An evaluation that runs over a split's episodes in a uniformly random order (``navdtw order``) is
sampling *without replacement* from a finite population: the split. After ``t`` of its ``N``
episodes, :class:`ConfidenceSequence` gives an interval for the mean over the *whole split* that
holds, with probability at least ``1 - alpha``, at every ``t`` at once: a user may look after every
episode and stop whenever the answer is known, and the guarantee still holds. At ``t = N`` the
interval is the split's exact mean.

The method is testing by betting with the without-replacement correction (Waudby-Smith & Ramdas,
2020 and 2023), each side's capital the average of four gamblers' (the predictable plug-in bet
and three tuned to 40, 160 and 640 episodes), so that large gaps are decided within a few
episodes and small ones are not slowed; the per-episode update runs in the compiled core
(``cpp/navdtw/sequential.hpp`` explains it). Values must lie in known bounds (SR in [0, 1], nDTW
in [0, 1]; a paired difference of such a metric in [-1, 1], :func:`paired_bounds`); the candidate
means are a grid of ``grid + 1`` points over the bounds and the interval is rounded outwards to it.
docs/stopping.md shows the measured coverage and savings.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import NamedTuple

import numpy as np

from . import _core

__all__ = [
    "DEFAULT_GRID",
    "ConfidenceSequence",
    "Interval",
    "confidence_path",
    "eliminated",
    "paired_bounds",
]

#: Candidate means per confidence sequence, minus one (the interval is rounded outwards to this
#: grid: 1/2000 of the bounds' range, 0.0005 for SR and 0.001 for a paired difference of SR).
DEFAULT_GRID = 2000


class Interval(NamedTuple):
    """A confidence sequence's interval for the split mean after ``count`` episodes."""

    lower: float
    upper: float
    count: int  #: episodes seen
    population: int  #: episodes in the split

    @property
    def width(self) -> float:
        """``upper - lower``."""
        return self.upper - self.lower


def _check_bounds(bounds: tuple[float, float]) -> tuple[float, float]:
    lo, hi = (float(b) for b in bounds)
    if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
        raise ValueError(f"bounds must be finite with lower < upper, not {bounds!r}")
    return lo, hi


def _check_settings(population: int, alpha: float, grid: int) -> None:
    if isinstance(population, bool) or not isinstance(population, (int, np.integer)) or population < 1:
        raise ValueError(f"population must be an integer >= 1, not {population!r}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), not {alpha!r}")
    if isinstance(grid, bool) or not isinstance(grid, (int, np.integer)) or not 2 <= grid <= 2**24:
        raise ValueError(f"grid must be an integer in [2, 2**24], not {grid!r}")


def _scaled(values: Iterable[float], lo: float, hi: float) -> np.ndarray:
    x = np.asarray(values, dtype=np.float64).ravel()
    bad = np.flatnonzero(~((x >= lo) & (x <= hi)))
    if bad.size:
        raise ValueError(f"value {float(x[bad[0]])!r} (position {bad[0]}) is outside the bounds [{lo:g}, {hi:g}]")
    return np.clip((x - lo) / (hi - lo), 0.0, 1.0)


class ConfidenceSequence:
    """A confidence sequence for the mean of a finite split whose values arrive in a random order.

    Parameters
    ----------
    population : int
        ``N``, the number of episodes in the split (every one of them will arrive at most once).
    bounds : tuple of float
        ``(lower, upper)``: every value lies in them (``(0, 1)`` for SR, SPL, nDTW; see
        :func:`paired_bounds` for a paired difference).
    alpha : float
        The error: with probability at least ``1 - alpha`` the interval holds the split mean at
        every number of episodes at once.
    grid : int
        Candidate means: ``grid + 1`` evenly spaced points over the bounds.

    Raises
    ------
    ValueError
        Bounds, ``population``, ``alpha`` or ``grid`` out of range.

    Notes
    -----
    Valid only when the order is uniformly random and fixed before the values are seen (a
    ``navdtw order`` file), and the values are taken in that order (the longest complete prefix).
    """

    def __init__(
        self,
        population: int,
        *,
        bounds: tuple[float, float] = (0.0, 1.0),
        alpha: float = 0.05,
        grid: int = DEFAULT_GRID,
    ) -> None:
        self.bounds = _check_bounds(bounds)
        _check_settings(population, alpha, grid)
        self.population = int(population)
        self.alpha = float(alpha)
        self.grid = int(grid)
        self._cs = _core.WorConfidenceSequence(self.population, self.alpha, self.grid)

    @property
    def count(self) -> int:
        """Values seen so far."""
        return int(self._cs.count)

    @property
    def mean(self) -> float:
        """The mean of the values seen so far (NaN before the first)."""
        n = self.count
        lo, hi = self.bounds
        return lo + (hi - lo) * self._cs.sum / n if n else float("nan")

    def update(self, value: float) -> None:
        """Takes the next value of the order.

        Parameters
        ----------
        value : float
            The next episode's value, within the bounds.

        Raises
        ------
        ValueError
            The value is outside the bounds (or NaN), or all ``population`` values were given.
        """
        self.extend([value])

    def extend(self, values: Iterable[float]) -> None:
        """Takes the next values of the order.

        Parameters
        ----------
        values : array_like of float
            The next episodes' values, in order, within the bounds.

        Raises
        ------
        ValueError
            A value is outside the bounds (or NaN), or there are more values than the split holds.
        """
        x = _scaled(values, *self.bounds)
        if x.size > self.population - self.count:
            raise ValueError(f"{self.count + x.size} values for a split of {self.population} episodes")
        self._cs.extend(x)

    def interval(self) -> Interval:
        """The interval now (the bounds before the first value).

        Returns
        -------
        Interval
            ``(lower, upper, count, population)`` in the values' units.
        """
        a, b = self._cs.interval()
        lo, hi = self.bounds
        return Interval(lo + (hi - lo) * a, lo + (hi - lo) * b, self.count, self.population)

    def __repr__(self) -> str:
        iv = self.interval()
        return (
            f"ConfidenceSequence({iv.count}/{iv.population} episodes, [{iv.lower:.4f}, {iv.upper:.4f}], "
            f"alpha={self.alpha:g})"
        )


def confidence_path(
    values: Iterable[float],
    population: int,
    *,
    bounds: tuple[float, float] = (0.0, 1.0),
    alpha: float = 0.05,
    grid: int = DEFAULT_GRID,
) -> tuple[np.ndarray, np.ndarray]:
    """The confidence sequence's interval after each value (a whole path at once, for simulations).

    Parameters
    ----------
    values : array_like of float
        The first ``t <= population`` values of the order.
    population : int
        The split's size ``N``.
    bounds : tuple of float
        ``(lower, upper)`` bounds of every value.
    alpha : float
        The error (simultaneous over all ``t``).
    grid : int
        Candidate means: ``grid + 1`` points over the bounds.

    Returns
    -------
    tuple of numpy.ndarray
        ``(lower, upper)``, each of length ``t``: the interval after 1, 2, ..., t values. The same
        numbers :class:`ConfidenceSequence` gives value by value.

    Raises
    ------
    ValueError
        A value outside the bounds, more values than ``population``, or a setting out of range.
    """
    lo, hi = _check_bounds(bounds)
    _check_settings(population, alpha, grid)
    x = _scaled(values, lo, hi)
    if x.size > population:
        raise ValueError(f"{x.size} values for a split of {population} episodes")
    a, b = _core.wor_confidence_path(x, population=int(population), alpha=float(alpha), grid=int(grid))
    return lo + (hi - lo) * a, lo + (hi - lo) * b


def paired_bounds(bounds: tuple[float, float]) -> tuple[float, float]:
    """The bounds of a per-episode difference of two values in ``bounds``.

    Parameters
    ----------
    bounds : tuple of float
        ``(lower, upper)`` of the metric.

    Returns
    -------
    tuple of float
        ``(lower - upper, upper - lower)``.

    Raises
    ------
    ValueError
        The bounds are not finite with ``lower < upper``.
    """
    lo, hi = _check_bounds(bounds)
    return lo - hi, hi - lo


def eliminated(intervals: Mapping[str, tuple[float, float]]) -> set[str]:
    """The arms (checkpoints) whose upper bound is below another arm's lower bound.

    Parameters
    ----------
    intervals : Mapping[str, tuple[float, float]]
        Each arm's interval for its split mean (higher is better), each at its own error share.

    Returns
    -------
    set of str
        The arms that cannot be the best: when every interval holds its mean, the best arm is never
        among them.

    Raises
    ------
    ValueError
        An interval with ``lower > upper``.
    """
    for name, (lo, hi) in intervals.items():
        if lo > hi:
            raise ValueError(f"interval of {name!r} has lower {lo} > upper {hi}")
    best_lower = max((lo for lo, _ in intervals.values()), default=-np.inf)
    return {name for name, (_, hi) in intervals.items() if hi < best_lower}
