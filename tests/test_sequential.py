"""Confidence sequences for sampling without replacement (navdtw.sequential, cpp/navdtw/sequential.hpp)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from naive_sequential import naive_path

from navdtw import sequential as Q


@st.composite
def populations(draw):
    n = draw(st.integers(1, 40))
    kind = draw(st.sampled_from(["binary", "real", "mixed"]))
    if kind == "binary":
        vals = draw(st.lists(st.sampled_from([0.0, 1.0]), min_size=n, max_size=n))
    elif kind == "real":
        vals = draw(st.lists(st.floats(0, 1), min_size=n, max_size=n))
    else:
        vals = draw(st.lists(st.sampled_from([0.0, 1.0, 0.25, 0.5, 0.9]), min_size=n, max_size=n))
    t = draw(st.integers(1, n))
    return vals[:t], n


@settings(max_examples=150, deadline=None)
@given(populations(), st.sampled_from([0.01, 0.05, 0.2, 0.5]), st.integers(2, 60))
def test_engine_matches_the_plain_twin(pop, alpha, grid):
    x, n = pop
    lo, hi = Q.confidence_path(x, n, alpha=alpha, grid=grid)
    want = naive_path(x, n, alpha, grid)
    assert lo.tolist() == pytest.approx([w[0] for w in want], abs=1e-12)
    assert hi.tolist() == pytest.approx([w[1] for w in want], abs=1e-12)


def test_engine_matches_the_twin_on_a_long_binary_order():
    rng = np.random.default_rng(7)
    pop = (rng.random(400) < 0.3).astype(float)
    lo, hi = Q.confidence_path(pop, 400, alpha=0.05, grid=200)
    want = naive_path(pop.tolist(), 400, 0.05, 200)
    assert lo.tolist() == pytest.approx([w[0] for w in want], abs=1e-12)
    assert hi.tolist() == pytest.approx([w[1] for w in want], abs=1e-12)
    assert hi[99] - lo[99] < 0.5 and hi[-1] == lo[-1] == pytest.approx(pop.mean())


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(-1, 1), min_size=1, max_size=60), st.integers(0, 30))
def test_the_interval_shrinks_to_the_exact_mean_and_is_nested(vals, extra):
    lo, hi = Q.confidence_path(vals, len(vals), bounds=(-1, 1))
    assert lo[-1] == pytest.approx(np.mean(vals), abs=1e-9) and hi[-1] == pytest.approx(np.mean(vals), abs=1e-9)
    assert np.all(np.diff(lo) >= -1e-12) and np.all(np.diff(hi) <= 1e-12)  # a running intersection
    assert np.all(lo <= hi)
    # fewer values than the split: never the exact mean unless the rest cannot move it
    lo2, hi2 = Q.confidence_path(vals, len(vals) + extra, bounds=(-1, 1))
    assert np.all(lo2 <= hi2) and (extra == 0 or hi2[-1] - lo2[-1] > 0)


def test_live_updates_equal_the_path_and_the_units():
    rng = np.random.default_rng(3)
    vals = rng.uniform(-2, 3, size=300)
    lo, hi = Q.confidence_path(vals, 500, bounds=(-2, 3), alpha=0.1, grid=500)
    cs = Q.ConfidenceSequence(500, bounds=(-2, 3), alpha=0.1, grid=500)
    assert cs.interval() == (-2.0, 3.0, 0, 500) and math.isnan(cs.mean)
    for k, v in enumerate(vals[:100]):
        cs.update(v)
        assert cs.interval()[:2] == (lo[k], hi[k])
    cs.extend(vals[100:])
    iv = cs.interval()
    assert (iv.lower, iv.upper, iv.count) == (lo[-1], hi[-1], 300)
    assert iv.width == pytest.approx(hi[-1] - lo[-1]) and cs.mean == pytest.approx(vals.mean())
    assert "300/500 episodes" in repr(cs)


def test_bad_input_is_refused_with_one_line():
    with pytest.raises(ValueError, match=r"value 1.5 \(position 2\) is outside the bounds \[0, 1\]"):
        Q.confidence_path([0, 1, 1.5], 10)
    with pytest.raises(ValueError, match="outside the bounds"):
        Q.confidence_path([0, float("nan")], 10)
    with pytest.raises(ValueError, match="3 values for a split of 2 episodes"):
        Q.confidence_path([0, 1, 1], 2)
    cs = Q.ConfidenceSequence(2)
    cs.extend([1, 0])
    with pytest.raises(ValueError, match="3 values for a split of 2 episodes"):
        cs.update(1)
    for kw in ({"alpha": 0}, {"alpha": 1.0}, {"grid": 1}, {"grid": True}, {"bounds": (1, 1)}, {"bounds": (0, np.inf)}):
        with pytest.raises(ValueError, match="must be"):
            Q.ConfidenceSequence(5, **kw)
    with pytest.raises(ValueError, match="population must be an integer >= 1"):
        Q.ConfidenceSequence(0)


def test_paired_bounds_and_elimination():
    assert Q.paired_bounds((0, 1)) == (-1, 1)
    assert Q.paired_bounds((0.5, 3)) == (-2.5, 2.5)
    arms = {"a": (0.50, 0.60), "b": (0.40, 0.49), "c": (0.45, 0.55)}
    assert Q.eliminated(arms) == {"b"}
    assert Q.eliminated({}) == set()
    with pytest.raises(ValueError, match="'a' has lower"):
        Q.eliminated({"a": (1, 0)})


def test_time_uniform_coverage_ci_sized():
    """A CI-sized version of docs/stopping.md's coverage table: 300 random orders of a 600-episode
    split; the sequence ever excludes the true split mean in at most 5% of them (betting sequences
    are conservative: a broken update, e.g. a bet on the wrong side, fails this at once)."""
    rng = np.random.default_rng(20261128)
    pop = (rng.random(600) < 0.42).astype(float)
    truth = pop.mean()
    misses = 0
    for _ in range(300):
        lo, hi = Q.confidence_path(pop[rng.permutation(600)], 600, alpha=0.05)
        misses += bool(np.any((lo > truth + 1e-12) | (hi < truth - 1e-12)))
    assert misses <= 15
    # and it is informative: halfway through, the interval is far narrower than the bounds
    assert hi[299] - lo[299] < 0.2


@pytest.mark.data
def test_real_agents_ci_sized(data_dir):
    """A CI-sized version of docs/stopping.md's savings table on the real R2R agents: the paired
    SR difference of prevalent and its '_add' variant (11 points) is decided, with the right sign,
    at a median under 1/8 of the 2,349 episodes; the sequence rarely misses the true difference."""
    import navdtw

    bench = navdtw.datasets.open(
        "r2r",
        split=data_dir / "r2r" / "R2R_val_unseen.json",
        connectivity=data_dir / "matterport3dsimulator" / "connectivity",
    )
    res = data_dir / "r2r_results" / "prevalent_r2r"
    sr = [
        np.asarray(bench.evaluate(bench.match(res / f, convention="r2r"), convention="r2r")["sr"])
        for f in (
            "seq2seq_teacher_imagenet_val_unseen_iter_36000.json",
            "seq2seq_teacher_imagenet_val_unseen_iter_36000_add.json",
        )
    ]
    d = sr[0] - sr[1]
    n, truth = d.size, d.mean()
    assert n == 2349 and truth > 0.1
    rng = np.random.default_rng(29)
    times, misses = [], 0
    for _ in range(40):
        lo, hi = Q.confidence_path(d[rng.permutation(n)], n, bounds=(-1, 1))
        misses += bool(np.any((lo > truth + 1e-12) | (hi < truth - 1e-12)))
        assert not np.any(hi < 0)  # never decided the wrong way
        times.append(int(np.flatnonzero(lo > 0)[0]) + 1)
    assert misses <= 4 and np.median(times) < n / 8
