"""Pooled ratios in navdtw.stats (``weights=``): the figure sum(w v) / sum(w), every bootstrap
resample and every paired statistic recomputing the ratio on the units drawn, against plain loops
that resample episodes and recompute the ratio."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from navdtw import stats as ns
from navdtw.stats import _resampling as ns_resampling


def ratio_episodes(n, rng, p=0.6):
    """LH-VLN-like episodes: subtasks per episode (0 to 5) and the episode's success rate."""
    w = rng.integers(0, 6, size=n).astype(float)
    ok = rng.binomial(w.astype(int), p)
    v = np.divide(ok, w, out=np.zeros(n), where=w > 0)
    return v, w


def naive_percentile(v, w, resamples, seed, confidence=0.95):
    """Reference: the engine's own draws (block k from SeedSequence(seed, spawn_key=(0, k)), episodes
    drawn with replacement), the ratio recomputed on each resample, numpy's linear quantiles."""
    n = len(v)
    ratios = []
    for k in range(-(-resamples // ns_resampling.BLOCK)):
        rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(ns_resampling.BOOTSTRAP_STREAM, k)))
        rows = min(ns_resampling.BLOCK, resamples - k * ns_resampling.BLOCK)
        idx = rng.integers(0, n, size=(rows, n))
        for r in range(rows):
            pick = idx[r]
            ratios.append((v[pick] * w[pick]).sum() / w[pick].sum())
    a = (1 - confidence) / 2
    return np.quantile(ratios, [a, 1 - a])


def test_interval_is_the_ratio_recomputed_on_each_resample():
    rng = np.random.default_rng(11)
    v, w = ratio_episodes(150, rng)
    mean, lo, hi = ns.bootstrap_ci(v, weights=w, method="percentile", resamples=1200, seed=3)
    assert mean == pytest.approx((v * w).sum() / w.sum(), rel=1e-14)
    ref = naive_percentile(v, w, 1200, 3)
    assert (lo, hi) == pytest.approx(tuple(ref), rel=1e-12)
    # the mean of the per-episode ratios is another figure, with another interval
    plain = ns.bootstrap_ci(v, method="percentile", resamples=1200, seed=3)
    assert abs(plain[0] - mean) > 1e-3


def test_weights_of_one_are_the_plain_mean():
    rng = np.random.default_rng(2)
    m = rng.random((60, 3))
    for method in ("percentile", "bca"):
        a = ns.analyze(m, [(0, 1), (1, 2)], method=method, resamples=600)
        b = ns.analyze(m, [(0, 1), (1, 2)], method=method, resamples=600, weights=np.ones_like(m))
        for x, y in zip(a.means + a.comparisons, b.means + b.comparisons):
            np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-15)


def test_zero_weight_episodes_count_nowhere_in_the_figure():
    rng = np.random.default_rng(4)
    v, w = ratio_episodes(80, rng)
    v2, w2 = np.r_[v, rng.random(10) * 100], np.r_[w, np.zeros(10)]
    assert ns.bootstrap_ci(v2, weights=w2)[0] == pytest.approx(ns.bootstrap_ci(v, weights=w)[0], rel=1e-14)
    # a unit of weight 0 holds no value: one unit with weight leaves no interval
    _, lo, hi = ns.bootstrap_ci(np.array([0.5, 0.1, 0.9]), weights=np.array([3.0, 0.0, 0.0]))
    assert np.isnan(lo) and np.isnan(hi)


def brute_force_ratio_p(a, b, wa, wb):
    """Reference: every swap of the two agents' (numerator, denominator) per episode, both ratios
    recomputed; p = share of swaps at least as extreme as observed."""
    obs = abs((a * wa).sum() / wa.sum() - (b * wb).sum() / wb.sum())
    hits = 0
    total = 0
    for flips in itertools.product((False, True), repeat=len(a)):
        f = np.array(flips)
        na = np.where(f, b * wb, a * wa).sum()
        da = np.where(f, wb, wa).sum()
        nb = np.where(f, a * wa, b * wb).sum()
        db = np.where(f, wa, wb).sum()
        hits += abs(na / da - nb / db) >= obs - 1e-12
        total += 1
    return hits / total


@pytest.mark.parametrize("same", [True, False])
def test_paired_permutation_is_the_ratio_swap(same):
    rng = np.random.default_rng(5 if same else 6)
    for _ in range(5):
        a, wa = ratio_episodes(11, rng, 0.7)
        b, _ = ratio_episodes(11, rng, 0.4)
        wa = wa + 1  # every episode has a subtask
        wb = wa.copy() if same else wa + rng.integers(0, 3, size=11)
        want = brute_force_ratio_p(a, b, wa, wb)
        res = ns.analyze(np.c_[a, b], [(0, 1)], weights=np.c_[wa, wb], resamples=10_000)  # 2**11 flips: exact
        assert res.comparisons.p_permutation[0] == pytest.approx(want, abs=1e-12)
        assert res.comparisons.diff[0] == pytest.approx((a * wa).sum() / wa.sum() - (b * wb).sum() / wb.sum())
        if same:
            assert ns.paired_permutation_test(a, b, weights=wa) == pytest.approx(want, abs=1e-12)


def test_paired_difference_interval_recomputes_both_ratios():
    rng = np.random.default_rng(9)
    a, w = ratio_episodes(90, rng, 0.7)
    b, _ = ratio_episodes(90, rng, 0.5)
    b = np.where(w > 0, b, 0.0)
    diff, lo, hi = ns.paired_difference(a, b, weights=w, method="percentile", resamples=900, seed=4)
    assert diff == pytest.approx(((a - b) * w).sum() / w.sum(), rel=1e-12)
    ref = naive_percentile(a - b, w, 900, 4)  # same weights: the difference of the ratios is one ratio
    assert (lo, hi) == pytest.approx(tuple(ref), rel=1e-10, abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(3, 40))
def test_percentile_interval_holds_the_ratio(seed, n):
    rng = np.random.default_rng(seed)
    v, w = ratio_episodes(n, rng)
    w[0] += 1
    r = ns.bootstrap_means(np.c_[v, v], weights=np.c_[w, np.ones(n)], method="percentile", resamples=300, seed=seed)
    assert r.mean[0] == pytest.approx((v * w).sum() / w.sum(), rel=1e-12, abs=1e-15)
    assert r.mean[1] == pytest.approx(v.mean(), rel=1e-12, abs=1e-15)
    if np.isfinite(r.lo[0]):
        assert r.lo[0] <= r.mean[0] + 1e-12 and r.mean[0] <= r.hi[0] + 1e-12


@pytest.mark.parametrize(
    ("weights", "match"),
    [
        (-np.ones((5, 1)), r"column 'x' has weight -1.0 at episode 0; a weight is finite and >= 0"),
        (np.full((5, 1), np.nan), r"column 'x' has weight nan at episode 0"),
        (np.ones((4, 1)), r"weights must have the matrix's shape \(5, 1\)"),
    ],
)
def test_bad_weights(weights, match):
    with pytest.raises(ValueError, match=match):
        ns.analyze(np.ones((5, 1)), names=["x"], weights=weights)
