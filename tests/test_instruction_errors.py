"""Instruction-error metrics: AUC against a brute-force pair count, ATD matching, SR drop."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from navdtw.instruction_errors import atd, auc, sr_drop


def brute_auc(labels, scores):
    """O(n^2): fraction of (positive, negative) pairs ranked correctly, ties counting half."""
    pos = [s for y, s in zip(labels, scores) if y]
    neg = [s for y, s in zip(labels, scores) if not y]
    total = 0.0
    for a in pos:
        for b in neg:
            total += 1.0 if a > b else 0.5 if a == b else 0.0
    return total / (len(pos) * len(neg))


@st.composite
def labelled_scores(draw):
    n = draw(st.integers(2, 40))
    labels = draw(st.lists(st.booleans(), min_size=n, max_size=n).filter(lambda l: 0 < sum(l) < len(l)))
    # A small pool of values makes ties common.
    pool = st.sampled_from([-1.0, 0.0, 0.25, 0.5, 1.0, 3.0]) | st.floats(-1e6, 1e6, allow_nan=False)
    scores = draw(st.lists(pool, min_size=n, max_size=n))
    return labels, scores


@given(labelled_scores())
@settings(max_examples=300, deadline=None)
def test_auc_matches_brute_force(data):
    labels, scores = data
    assert auc(labels, scores) == pytest.approx(brute_auc(labels, scores), abs=1e-12)


def test_auc_known_examples():
    assert auc([0, 0, 1, 1], [0.1, 0.2, 0.3, 0.4]) == 1.0
    assert auc([1, 1, 0, 0], [0.1, 0.2, 0.3, 0.4]) == 0.0
    assert auc([0, 1], [5, 5]) == 0.5
    # The classic sklearn example: 3 of 4 pairs ordered correctly.
    assert auc([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8]) == pytest.approx(0.75)
    # One tie among 2x2 pairs: (1 + 1 + 0.5 + 0) / 4.
    assert auc(np.array([True, True, False, False]), [2, 1, 1, 3]) == pytest.approx(0.375)


@pytest.mark.parametrize(
    "labels, scores, exc, match",
    [
        ([1, 1, 1], [0.1, 0.2, 0.3], ValueError, "both classes"),
        ([0, 0], [0.1, 0.2], ValueError, "both classes"),
        ([], [], ValueError, "both classes"),
        ([0, 1], [0.1], ValueError, "length"),
        ([0, 2], [0.1, 0.2], ValueError, r"labels\[1\]"),
        ([0, 1], [0.1, np.nan], ValueError, r"scores\[1\]"),
        ([0, 1], [[0.1, 0.2]], ValueError, "1-D"),
        (["a", "b"], [0.1, 0.2], TypeError, "labels"),
    ],
)
def test_auc_errors(labels, scores, exc, match):
    with pytest.raises(exc, match=match):
        auc(labels, scores)


def test_atd_single_errors():
    # Episodes with one error each: |4-3| = 1, |5-5| = 0, |0-6| = 6 -> mean 7/3.
    assert atd([[3], [5], [6]], [[4], [5], [0]]) == pytest.approx(7 / 3)
    # A bare integer is one error.
    assert atd([3, 5, 6], [4, 5, 0]) == pytest.approx(7 / 3)


def test_atd_several_errors_sorted_matching():
    true = [[2, 10], [7, 1, 4]]
    pred = [[11, 3], [0, 8, 4]]
    # Sorted pairing: ep0 (2,3),(10,11) -> 1; ep1 (1,0),(4,4),(7,8) -> 2/3.
    assert atd(true, pred) == pytest.approx((1.0 + 2 / 3) / 2)
    # Pairing in the given (index) order would be worse: ep0 (9 + 7) / 2 = 8.
    index_order = np.mean([np.mean(np.abs(np.subtract(p, t))) for t, p in zip(true, pred)])
    assert index_order > atd(true, pred)


def test_atd_sorted_is_optimal_matching():
    rng = np.random.default_rng(0)
    for _ in range(50):
        k = int(rng.integers(1, 6))
        t = rng.integers(0, 30, size=k)
        p = rng.integers(0, 30, size=k)
        best = min(np.mean(np.abs(p[list(perm)] - t)) for perm in itertools.permutations(range(k)))
        assert atd([t], [p]) == pytest.approx(best)


def test_atd_accepts_arrays_and_float_integers():
    assert atd([np.array([1, 5])], [np.array([5.0, 2.0])]) == pytest.approx(0.5)  # (1,2), (5,5)


@pytest.mark.parametrize(
    "true, pred, exc, match",
    [
        ([[1], [2, 3]], [[1], [2]], ValueError, r"episode 1: 2 true .* 1 predicted"),
        ([[1]], [[1], [2]], ValueError, "1 episodes but predicted_positions has 2"),
        ([], [], ValueError, "at least one"),
        ([[1], []], [[1], []], ValueError, "episode 1 has no true error"),
        ([[1], [2]], [[1], [-2]], ValueError, r"predicted_positions\[1\].*non-negative"),
        ([[1.5]], [[1]], ValueError, r"true_positions\[0\].*integers"),
        ([[[1, 2]]], [[[1, 2]]], ValueError, r"true_positions\[0\].*shape"),
        ([["a"]], [[1]], TypeError, r"true_positions\[0\]"),
    ],
)
def test_atd_errors(true, pred, exc, match):
    with pytest.raises(exc, match=match):
        atd(true, pred)


def test_sr_drop():
    assert sr_drop(0.5, 0.4) == pytest.approx(-20.0)
    assert sr_drop(40.0, 50.0) == pytest.approx(25.0)
    assert isinstance(sr_drop(0.5, 0.5), float) and sr_drop(0.5, 0.5) == 0.0
    np.testing.assert_allclose(sr_drop([0.5, 0.25], [0.25, 0.25]), [-50.0, 0.0])


@pytest.mark.parametrize(
    "c, p, match",
    [(0.0, 0.1, "sr_correct is 0"), (-0.1, 0.1, "sr_correct"), (0.5, np.nan, "sr_perturbed")],
)
def test_sr_drop_errors(c, p, match):
    with pytest.raises(ValueError, match=match):
        sr_drop(c, p)
