"""A plain-Python twin of the without-replacement confidence sequence (cpp/navdtw/sequential.hpp),
written from the definitions: every grid candidate's capital is updated at every step (no active
set), and a candidate counts as excluded once either capital has reached 2/alpha or it has left the
deterministic range; the interval's ends are the highest excluded candidate below and the lowest
above. So it checks the engine's shortcut (only the candidates still inside are updated, the
excluded ones form a prefix and a suffix) as well as its arithmetic.
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
    out_low = [False] * n_cand  # ruled out as too low (K+ or below the deterministic range)
    out_high = [False] * n_cand
    total, var_sum = 0.0, 0.25
    out = []
    for t, v in enumerate(x):
        bet = min(math.sqrt(2 * threshold / ((var_sum / (t + 1)) * (t + 1) * math.log1p(t + 1))), CAP)
        for j in range(n_cand):
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
        for j in range(n_cand):
            if up[j] >= threshold or points[j] < exact_lo:
                out_low[j] = True
            if down[j] >= threshold or points[j] > exact_hi:
                out_high[j] = True
        # A candidate ruled out from both sides counts where the engine's scan from below reaches it.
        low = [j for j in range(n_cand) if out_low[j]]
        first = 0
        while first < n_cand and out_low[first]:
            first += 1
        last = grid
        while last >= first and out_high[last]:
            last -= 1
        assert all(j < first for j in low) or first > last, "the candidates ruled out as too low are not a prefix"
        grid_lo = points[first - 1] if first > 0 else 0.0
        grid_hi = points[last + 1] if last < grid else 1.0
        lo, hi = max(grid_lo, exact_lo), min(grid_hi, exact_hi)
        out.append((lo, hi) if lo <= hi else (exact_lo, exact_hi))
    return out
