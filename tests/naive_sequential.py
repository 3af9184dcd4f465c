"""A plain-Python twin of the without-replacement confidence sequence (cpp/navdtw/sequential.hpp),
written from the definitions: every grid candidate keeps, per side, one capital per bet (the
uncapped predictable plug-in and the plug-ins tuned to 40, 160 and 640 episodes, each truncated
to c / mu), updated while the candidate is in; a side's capital is their average with weights
1/2, 1/6, 1/6, 1/6. A candidate is ruled out as too low once its K+ reaches 2/alpha or it falls below
the deterministic range, as too high once its K- does or it rises above it, and a ruled-out
candidate stays out (the running intersection; its capitals are no longer updated). The
interval's ends are the highest candidate ruled out as too low and the lowest ruled out as too
high, intersected with the deterministic range; when nothing is left (a candidate ruled out both
ways, or the ends crossed: the rare error event), the deterministic range. The engine scans only
the candidates still in and relies on their forming one run (a prefix is out as too low, a suffix
as too high); the twin checks that, and computes the ends from every candidate.
"""

from __future__ import annotations

import math

CAP = 0.75
TARGETS = (40.0, 160.0, 640.0)
WEIGHTS = (1.0 / 2.0, 1.0 / 6.0, 1.0 / 6.0, 1.0 / 6.0)


def _bets(threshold: float, variance: float, t: float) -> list[float]:
    return [math.sqrt(2 * threshold / (variance * t * math.log1p(t)))] + [
        math.sqrt(2 * threshold / (variance * n)) for n in TARGETS
    ]


def _average(capitals: list[float]) -> float:
    total = 0.0
    for w, k in zip(WEIGHTS, capitals, strict=True):
        total += w * k
    return total


def naive_path(x: list[float], population: int, alpha: float, grid: int) -> list[tuple[float, float]]:
    """The interval after each value of ``x`` (values in [0, 1]), as (lower, upper)."""
    return naive_path_emptied(x, population, alpha, grid)[0]


def naive_path_emptied(
    x: list[float], population: int, alpha: float, grid: int
) -> tuple[list[tuple[float, float]], int]:
    """:func:`naive_path` and the count after which no mean was left (0: never): the interval
    between the highest candidate ruled out as too low and the lowest ruled out as too high does
    not meet the deterministic range."""
    emptied = 0
    n_cand = grid + 1
    points = [j / grid for j in range(n_cand)]
    threshold = math.log(2 / alpha)  # the bets' log(2/alpha); a capital is ruled out at 2/alpha
    up = [[1.0] * len(WEIGHTS) for _ in range(n_cand)]
    down = [[1.0] * len(WEIGHTS) for _ in range(n_cand)]
    low = [False] * n_cand  # ruled out as too low
    high = [False] * n_cand  # ruled out as too high
    total, var_sum = 0.0, 0.25
    out = []
    for t, v in enumerate(x):
        bets = _bets(threshold, var_sum / (t + 1), t + 1.0)
        for j in range(n_cand):
            if low[j] or high[j]:
                continue
            mu = min(max((population * points[j] - total) / (population - t), 0.0), 1.0)
            up_cap = CAP / mu if mu > 0 else math.inf
            down_cap = CAP / (1 - mu) if mu < 1 else math.inf
            for k, bet in enumerate(bets):
                up[j][k] *= 1 + min(bet, up_cap) * (v - mu)
                down[j][k] *= 1 - min(bet, down_cap) * (v - mu)
        total += v
        mean_hat = (0.5 + total) / (t + 2)
        var_sum += (v - mean_hat) ** 2
        exact_lo = total / population
        exact_hi = (total + (population - (t + 1))) / population  # as the engine rounds it
        inside = [j for j in range(n_cand) if not (low[j] or high[j])]
        for j in range(n_cand):
            if points[j] < exact_lo or (j in inside and _average(up[j]) >= 2 / alpha):
                low[j] = True
            if points[j] > exact_hi or (j in inside and _average(down[j]) >= 2 / alpha):
                high[j] = True
        still = [j for j in range(n_cand) if not (low[j] or high[j])]
        assert still == list(range(still[0], still[-1] + 1)) if still else True, "the candidates in are not one run"
        lows = [j for j in range(n_cand) if low[j]]
        highs = [j for j in range(n_cand) if high[j]]
        grid_lo = points[max(lows)] if lows else 0.0
        grid_hi = points[min(highs)] if highs else 1.0
        lo, hi = max(grid_lo, exact_lo), min(grid_hi, exact_hi)
        emptied = emptied or (t + 1 if lo > hi else 0)
        empty = any(low[j] and high[j] for j in range(n_cand)) or lo > hi
        out.append((exact_lo, exact_hi) if empty else (lo, hi))
    return out, emptied


def naive_repeats(groups: list, counts: dict, threshold: float, stakes: tuple[float, ...]) -> int:
    """The count at which the test of the groups' order fires (0: never), from its definition: before
    each value after the first, ``q`` = (episodes of the previous value's group still to come) /
    (episodes still to come); each gambler's capital is multiplied by ``1 + (w / q) (repeat - q)``
    (not at all when ``q`` is 0 or 1); fired when the gamblers' mean reaches ``threshold``
    (``1 / alpha``)."""
    left = dict(counts)
    remaining = sum(counts.values())
    capital = [1.0] * len(stakes)
    for t, g in enumerate(groups):
        if t:
            prev = groups[t - 1]
            q = left[prev] / remaining
            if 0 < q < 1:
                repeat = 1.0 if g == prev else 0.0
                capital = [c * (1 + (w / q) * (repeat - q)) for c, w in zip(capital, stakes)]
            if sum(capital) / len(capital) >= threshold:
                return t + 1
        left[g] -= 1
        remaining -= 1
    return 0


def naive_crossings(x: list[float], population: int, alpha: float, m: float) -> tuple[bool, bool]:
    """Whether the averaged capitals K+ and K- at one candidate mean ``m`` (any number in [0, 1],
    not a grid point) ever reach 2/alpha along ``x``: at the true split mean, the events whose
    probabilities Ville's inequality bounds by alpha/2 each."""
    threshold = math.log(2 / alpha)
    up = [1.0] * len(WEIGHTS)
    down = [1.0] * len(WEIGHTS)
    total, var_sum = 0.0, 0.25
    up_hit = down_hit = False
    for t, v in enumerate(x):
        bets = _bets(threshold, var_sum / (t + 1), t + 1.0)
        mu = min(max((population * m - total) / (population - t), 0.0), 1.0)
        up_cap = CAP / mu if mu > 0 else math.inf
        down_cap = CAP / (1 - mu) if mu < 1 else math.inf
        for k, bet in enumerate(bets):
            up[k] *= 1 + min(bet, up_cap) * (v - mu)
            down[k] *= 1 - min(bet, down_cap) * (v - mu)
        up_hit = up_hit or _average(up) >= 2 / alpha
        down_hit = down_hit or _average(down) >= 2 / alpha
        total += v
        var_sum += (v - (0.5 + total) / (t + 2)) ** 2
    return up_hit, down_hit
