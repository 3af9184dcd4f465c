"""Pooled ratios scored in several runs (``weights=`` of runs_difference, runs_improvement,
runs_intervals and probability_of_improvement): each run's ratio recomputed, the runs linearized
``u = R_r + w (v - R_r) / mean(w)`` and fed to the runs machinery, checked against plain loops, the
delta method's closed form, and the bootstrap that recomputes the ratio (the limit it tends to)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from navdtw import stats as ns


def ratio_runs(rng, n, runs, p=0.6, shift=0.0):
    """LH-VLN-like runs: the task's subtasks per episode (0 to 5, the same in every run) and each
    run's success rate per episode; each run's success probability moved by a seed offset."""
    w = rng.integers(0, 6, size=n).astype(float)
    q = np.clip(rng.beta(4 * p, 4 * (1 - p), size=n)[:, None] + shift * rng.normal(size=runs), 0, 1)
    ok = rng.binomial(w.astype(int)[:, None], q)
    v = np.divide(ok, w[:, None], out=np.zeros((n, runs)), where=w[:, None] > 0)
    return v, w


def run_ratios(x, w):
    """Reference: each run's pooled ratio, by a loop."""
    out = []
    for r in range(x.shape[1]):
        ww = w if w.ndim == 1 else w[:, r]
        out.append(sum(ww[e] * x[e, r] for e in range(len(x))) / sum(ww))
    return np.array(out)


def linearized(x, w):
    """Reference: each run's values linearized around its ratio, by a loop (every episode has a
    weight in some run)."""
    u = np.empty_like(x)
    for r in range(x.shape[1]):
        ww = w if w.ndim == 1 else w[:, r]
        ratio, mean_w = run_ratios(x[:, [r]], ww)[0], ww.mean()
        for e in range(len(x)):
            u[e, r] = ratio + ww[e] * (x[e, r] - ratio) / mean_w
    return u


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31), st.integers(5, 60), st.integers(1, 4), st.integers(1, 4), st.booleans())
def test_difference_is_the_difference_of_the_mean_run_ratios(seed, n, ra, rb, per_run):
    rng = np.random.default_rng(seed)
    a, w = ratio_runs(rng, n, ra)
    b, _ = ratio_runs(rng, n, rb, p=0.5)
    w[0] = max(w[0], 1.0)  # some weight
    if per_run:  # each run its own weights
        wa = w[:, None] + rng.integers(0, 2, size=(n, ra))
        wb = w[:, None] + rng.integers(0, 2, size=(n, rb))
        got = ns.runs_difference(a, b, weights=(wa, wb))
    else:
        wa, wb = w, w
        got = ns.runs_difference(a, b, weights=w)
    want = run_ratios(a, wa).mean() - run_ratios(b, wb).mean()
    assert got.diff == pytest.approx(want, rel=1e-12, abs=1e-14)
    # the same test as the plain one on the linearized runs (the reference built by loops)
    live = (wa if wa.ndim == 1 else wa.sum(axis=1)) + (wb if wb.ndim == 1 else wb.sum(axis=1)) > 0
    ua = linearized(a[live], wa[live])
    ub = linearized(b[live], wb[live])
    plain = ns.runs_difference(ua, ub)
    for k in ("diff", "se", "df", "p", "lo", "hi"):
        assert getattr(got, k) == pytest.approx(getattr(plain, k), rel=1e-9, abs=1e-12, nan_ok=True), k
    assert got.units == plain.units == int(live.sum())


def test_one_run_is_the_delta_method():
    rng = np.random.default_rng(7)
    a, w = ratio_runs(rng, 300, 1)
    b, _ = ratio_runs(rng, 300, 1, p=0.45)
    got = ns.runs_difference(a, b, weights=w)
    live = w > 0  # the episodes without subtasks count nowhere
    x, y, w = a[live, 0], b[live, 0], w[live]
    n = len(w)
    ra, rb = (w * x).sum() / w.sum(), (w * y).sum() / w.sum()
    d = w * ((x - ra) - (y - rb)) / w.mean()
    assert got.diff == pytest.approx(ra - rb, rel=1e-12)
    assert got.se == pytest.approx(np.sqrt((d**2).sum() / n**2 * n / (n - 1)), rel=1e-12)
    assert got.df == pytest.approx(n - 1) and not got.seeds


def test_the_linearized_se_is_what_the_bootstrap_of_the_ratio_tends_to():
    # many episodes, one run: the bootstrap that recomputes the ratio on each resample against the
    # linearized standard error; the plain mean's is another (the weights vary with the rates)
    rng = np.random.default_rng(20261129)
    n = 3000
    w = rng.integers(1, 9, size=n).astype(float)
    p = np.clip(0.95 - 0.1 * w + 0.1 * rng.normal(size=n), 0, 1)
    a = rng.binomial(w.astype(int), p) / w
    b = rng.binomial(w.astype(int), np.clip(p - 0.05, 0, 1)) / w
    se = ns.runs_difference(a[:, None], b[:, None], weights=w).se
    draws = []
    for _ in range(1500):
        pick = rng.integers(0, n, size=n)
        ww = w[pick]
        draws.append((ww * a[pick]).sum() / ww.sum() - (ww * b[pick]).sum() / ww.sum())
    boot = np.std(draws, ddof=1)
    assert se == pytest.approx(boot, rel=0.06)  # 1,500 draws: the SD within ~2% (1 sigma)
    unweighted = ns.runs_difference(a[:, None], b[:, None]).se
    assert abs(unweighted / boot - 1) > 0.1


def test_weights_of_one_are_the_plain_test():
    rng = np.random.default_rng(3)
    a, b = rng.random((80, 3)), rng.random((80, 2))
    got, plain = ns.runs_difference(a, b, weights=np.ones(80)), ns.runs_difference(a, b)
    for k in ("diff", "se", "df", "p", "lo", "hi"):
        assert getattr(got, k) == pytest.approx(getattr(plain, k), rel=1e-9), k
    got, plain = ns.runs_improvement(a, b, weights=np.ones(80)), ns.runs_improvement(a, b)
    np.testing.assert_allclose(got, plain, rtol=1e-9)


def test_zero_weight_episodes_count_nowhere():
    rng = np.random.default_rng(5)
    a, w = ratio_runs(rng, 70, 3)
    b, _ = ratio_runs(rng, 70, 3, p=0.4)
    w[w == 0] = 1.0
    base = ns.runs_difference(a, b, weights=w)
    more = ns.runs_difference(
        np.vstack([a, rng.random((9, 3))]), np.vstack([b, rng.random((9, 3))]), weights=np.r_[w, np.zeros(9)]
    )
    for k in ("diff", "se", "df", "p", "lo", "hi"):
        assert getattr(more, k) == pytest.approx(getattr(base, k), rel=1e-9), k
    assert more.units == base.units == 70


def test_a_batch_is_its_items():
    rng = np.random.default_rng(9)
    items = [ratio_runs(rng, 40, 3) for _ in range(4)]
    others = [ratio_runs(rng, 40, 2, p=0.5)[0] for _ in range(4)]
    a, b = np.stack([x for x, _ in items]), np.stack(others)
    w = np.stack([np.maximum(w, 1.0) for _, w in items])
    got = ns.runs_difference(a, b, weights=w)
    for q in range(4):
        one = ns.runs_difference(a[q], b[q], weights=w[q])
        assert got.diff[q] == pytest.approx(one.diff, rel=1e-12)
        assert got.se[q] == pytest.approx(one.se, rel=1e-12)
        assert got.df[q] == pytest.approx(one.df, rel=1e-9)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**31), st.integers(3, 40), st.integers(1, 3), st.integers(1, 3))
def test_improvement_counts_each_episode_by_its_weight(seed, n, ra, rb):
    rng = np.random.default_rng(seed)
    a, w = ratio_runs(rng, n, ra)
    b, _ = ratio_runs(rng, n, rb, p=0.5)
    w[0] = max(w[0], 1.0)
    got = ns.runs_improvement(a, b, weights=w)
    # reference: a subtask drawn at random (its episode with probability w / sum(w)); runs a
    # pair at random; a wins 1, ties 1/2
    total = 0.0
    for e in range(n):
        wins = sum(1.0 if x > y else 0.5 if x == y else 0.0 for x in a[e] for y in b[e])
        total += w[e] * wins / (ra * rb)
    assert got.mean == pytest.approx(total / w.sum(), rel=1e-12)
    assert 0.0 <= got.lo <= got.mean <= got.hi <= 1.0 or np.isnan(got.lo)


def test_probability_of_improvement_with_weights_is_the_ratio_of_the_indicators():
    rng = np.random.default_rng(12)
    a, w = ratio_runs(rng, 90, 1)
    b, _ = ratio_runs(rng, 90, 1, p=0.5)
    m = np.column_stack([a[:, 0], b[:, 0]])
    got = ns.probability_of_improvement(m, [(0, 1)], weights=np.column_stack([w, w]), resamples=800, seed=4)
    indicator = np.where(a[:, 0] > b[:, 0], 1.0, np.where(a[:, 0] == b[:, 0], 0.5, 0.0))
    want = ns.bootstrap_ci(indicator, weights=w, resamples=800, seed=4)
    np.testing.assert_allclose([got.mean[0], got.lo[0], got.hi[0]], want, rtol=1e-12)
    assert got.mean[0] == pytest.approx((w * indicator).sum() / w.sum(), rel=1e-12)
    plain = ns.probability_of_improvement(m, [(0, 1)], resamples=800, seed=4)
    assert abs(plain.mean[0] - got.mean[0]) > 1e-3
    # the runs version with one run each: the same figure
    assert ns.runs_improvement(a, b, weights=w).mean == pytest.approx(got.mean[0], rel=1e-12)


def test_runs_intervals_of_a_ratio():
    rng = np.random.default_rng(21)
    x, w = ratio_runs(rng, 120, 3, shift=0.05)
    y, _ = ratio_runs(rng, 120, 1)
    m = np.column_stack([x, y])
    rw = np.repeat(w[:, None], 4, axis=1)
    got = ns.runs_intervals(m, [[0, 1, 2], [3]], weights=rw, resamples=800, method="percentile", seed=2)
    ratios = run_ratios(x, w)
    np.testing.assert_allclose(got.run_means[0], ratios, rtol=1e-12)
    assert got.mean[0] == pytest.approx(ratios.mean(), rel=1e-12)
    # one run: its interval is the ratio's bootstrap interval
    one = ns.bootstrap_ci(y[:, 0], weights=w, resamples=800, method="percentile", seed=2)
    np.testing.assert_allclose([got.mean[1], got.lo[1], got.hi[1]], one, rtol=1e-12)
    # several runs: the plain runs interval of the linearized runs (se and df)
    live = w > 0
    plain = ns.runs_intervals(linearized(x[live], w[live]), [[0, 1, 2]], resamples=200)
    assert got.se[0] == pytest.approx(plain.se[0], rel=1e-9)
    assert got.df[0] == pytest.approx(plain.df[0], rel=1e-9)
    half = got.hi[0] - got.mean[0]
    assert got.mean[0] - got.lo[0] == pytest.approx(half, rel=1e-9)
    # the episode interval: each resample the mean of the runs' ratios (a plain loop's percentile)
    assert got.episode_lo[0] < got.mean[0] < got.episode_hi[0]
    unweighted = ns.runs_intervals(m, [[0, 1, 2], [3]], resamples=800, method="percentile", seed=2)
    assert abs(unweighted.mean[0] - got.mean[0]) > 1e-3


def test_bad_weights_are_named():
    a, b = np.zeros((4, 2)), np.zeros((4, 3))
    with pytest.raises(ValueError, match=r"weights must be one array of shape \(4,\)"):
        ns.runs_difference(a, b, weights=np.ones(5))
    wb = np.ones((4, 3))
    wb[2, 1] = -1.0
    with pytest.raises(ValueError, match=r"weights of b hold -1.0 at episode 2"):
        ns.runs_difference(a, b, weights=(np.ones((4, 2)), wb))
    with pytest.raises(ValueError, match="run_weights without runs"):
        ns.analyze(np.zeros((4, 1)), run_weights=np.ones((4, 1)))
