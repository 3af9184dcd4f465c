"""A plain-Python twin of the without-replacement confidence sequence (cpp/navdtw/sequential.hpp),
written from the definitions: every grid candidate keeps its own two capitals, updated while the
candidate is in; a candidate is ruled out as too low once its K+ reaches 2/alpha or it falls below
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


def naive_path(x: list[float], population: int, alpha: float, grid: int) -> list[tuple[float, float]]:
    """The interval after each value of ``x`` (values in [0, 1]), as (lower, upper)."""
    n_cand = grid + 1
    points = [j / grid for j in range(n_cand)]
    threshold = math.log(2 / alpha)
    up = [0.0] * n_cand
    down = [0.0] * n_cand
    low = [False] * n_cand  # ruled out as too low
    high = [False] * n_cand  # ruled out as too high
    total, var_sum = 0.0, 0.25
    out = []
    for t, v in enumerate(x):
        bet = min(math.sqrt(2 * threshold / ((var_sum / (t + 1)) * (t + 1) * math.log1p(t + 1))), CAP)
        for j in range(n_cand):
            if low[j] or high[j]:
                continue
            mu = min(max((population * points[j] - total) / (population - t), 0.0), 1.0)
            b_up = min(bet, CAP / mu) if mu > 0 else bet
            b_down = min(bet, CAP / (1 - mu)) if mu < 1 else bet
            up[j] += math.log1p(b_up * (v - mu))
            down[j] += math.log1p(-b_down * (v - mu))
        total += v
        mean_hat = (0.5 + total) / (t + 2)
        var_sum += (v - mean_hat) ** 2
        exact_lo = total / population
        exact_hi = (total + population - (t + 1)) / population
        inside = [j for j in range(n_cand) if not (low[j] or high[j])]
        for j in range(n_cand):
            if points[j] < exact_lo or (j in inside and up[j] >= threshold):
                low[j] = True
            if points[j] > exact_hi or (j in inside and down[j] >= threshold):
                high[j] = True
        still = [j for j in range(n_cand) if not (low[j] or high[j])]
        assert still == list(range(still[0], still[-1] + 1)) if still else True, "the candidates in are not one run"
        lows = [j for j in range(n_cand) if low[j]]
        highs = [j for j in range(n_cand) if high[j]]
        grid_lo = points[max(lows)] if lows else 0.0
        grid_hi = points[min(highs)] if highs else 1.0
        lo, hi = max(grid_lo, exact_lo), min(grid_hi, exact_hi)
        empty = any(low[j] and high[j] for j in range(n_cand)) or lo > hi
        out.append((exact_lo, exact_hi) if empty else (lo, hi))
    return out
