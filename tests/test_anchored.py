"""Anchored DTW (navdtw.dtw_anchored, dtw_anchored_batch) against its plain twins in tests/naive.py
(a DP over (cell, anchors visited), the recurrence over IVLN-CE's window, and the enumeration of
every warping path), against dtw-python's windowed ``symmetric1`` as IVLN-CE calls it, and across
SIMD kernels, workers and single/batch calls, bit for bit."""

from __future__ import annotations

import contextlib
import math

import hypothesis.extra.numpy as hnp
import naive
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import navdtw

FEW = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SOME = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])

GRID = st.integers(-3, 3).map(float)  # ties and repeated points
COORD = st.floats(-20, 20, allow_nan=False, allow_infinity=False, width=32)


@st.composite
def anchors_for(draw, n, m, exclusive, max_count=4):
    """Monotone anchors of an n x m table; with exclusive, one per reference index."""
    k = draw(st.integers(0, max_count))
    if exclusive:
        rows = sorted(draw(st.lists(st.integers(0, n - 1), min_size=0, max_size=min(k, n), unique=True)))
    else:
        rows = sorted(draw(st.lists(st.integers(0, n - 1), min_size=k, max_size=k)))
    cols = sorted(draw(st.lists(st.integers(0, m - 1), min_size=len(rows), max_size=len(rows))))
    return [(r, c) for r, c in zip(rows, cols)]


@st.composite
def anchored_case(draw, max_len=9, exclusive=None):
    ex = draw(st.booleans()) if exclusive is None else exclusive
    dim = draw(st.sampled_from([1, 2, 3]))
    n = draw(st.integers(1, max_len))
    m = draw(st.integers(1, max_len))
    el = draw(st.sampled_from([GRID, COORD]))
    r = draw(hnp.arrays(np.float32, (n, dim), elements=el))
    q = draw(hnp.arrays(np.float32, (m, dim), elements=el))
    a = draw(anchors_for(n, m, ex))
    w = draw(st.one_of(st.none(), st.integers(0, 3)))
    return r, q, a, ex, w


def twin(cost, anchors, exclusive, window=None):
    if exclusive:
        return naive.dtw_exclusive(cost, anchors, window)
    return naive.dtw_through(cost, anchors, window)


def close(a, b, rel=1e-12):
    if math.isinf(a) or math.isinf(b):
        return a == b
    return math.isclose(a, b, rel_tol=rel, abs_tol=1e-12)


# --------------------------------------------------------------------------------------------
# the twins themselves
# --------------------------------------------------------------------------------------------


def test_twins_hand_computed():
    r = np.array([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0]], np.float32)
    q = np.array([[0.0, 0.0], [2.0, 0.0], [2.0, 0.0]], np.float32)
    cost = naive.euclidean_cost(r, q)
    assert naive.dtw(cost) == 1.0
    # through (1, 2): (0,0) (1,1) (1,2) (2,2) = 0 + 1 + 1 + 0
    assert naive.dtw_through(cost, [(1, 2)]) == 2.0
    # exclusive (1, 2): row 1 is (1, 2) alone: (0,0) (0,1) (1,2) (2,2) = 0 + 2 + 1 + 0
    assert naive.dtw_exclusive(cost, [(1, 2)]) == 3.0
    assert naive.dtw_anchored_brute(cost, [(1, 2)]) == 2.0
    assert naive.dtw_anchored_brute(cost, [(1, 2)], exclusive=True) == 3.0
    # exclusive on the last row away from the end cell: no path
    assert naive.dtw_exclusive(cost, [(2, 0)]) == math.inf


@SOME
@given(case=anchored_case(max_len=5))
def test_twins_agree_with_enumeration(case):
    r, q, a, ex, _ = case
    cost = naive.euclidean_cost(r, q)
    assert close(twin(cost, a, ex), naive.dtw_anchored_brute(cost, a, ex))


# --------------------------------------------------------------------------------------------
# the engine against the twins
# --------------------------------------------------------------------------------------------


@SOME
@given(case=anchored_case())
def test_coordinates_match_twin(case):
    r, q, a, ex, w = case
    got = navdtw.dtw_anchored(r, q, a, exclusive=ex, window=w)
    want = twin(naive.euclidean_cost(r, q, np.float32), a, ex, w)
    if ex:
        assert got == want  # the same recurrence over the same cells: the same bits
    else:
        assert close(got, want)  # stretches joined: rounding may differ by an ulp or so


@SOME
@given(data=st.data())
def test_nodes_match_twin(data):
    v = data.draw(st.integers(1, 6))
    finite = st.floats(0, 9, width=32)
    el = st.one_of(st.floats(0, 50, width=32), st.just(math.inf)) if data.draw(st.booleans()) else finite
    mat = data.draw(hnp.arrays(np.float32, (v, v), elements=el))
    dtype = data.draw(st.sampled_from([np.int32, np.int64]))
    r = data.draw(hnp.arrays(dtype, data.draw(st.integers(1, 8)), elements=st.integers(0, v - 1)))
    q = data.draw(hnp.arrays(dtype, data.draw(st.integers(1, 8)), elements=st.integers(0, v - 1)))
    ex = data.draw(st.booleans())
    a = data.draw(anchors_for(len(r), len(q), ex))
    w = data.draw(st.one_of(st.none(), st.integers(0, 2)))
    got = navdtw.dtw_anchored(r, q, a, distances=mat, exclusive=ex, window=w)
    assert close(got, twin(naive.node_cost(mat, r, q), a, ex, w))


@FEW
@given(case=anchored_case(exclusive=False))
def test_through_splits_at_every_anchor(case):
    # DTW through anchors = sum of the stretches' DTWs - the anchors counted twice
    r, q, a, _, _ = case
    corners = [(0, 0), *a, (len(r) - 1, len(q) - 1)]
    total = 0.0
    for (r0, q0), (r1, q1) in zip(corners, corners[1:]):
        total += navdtw.dtw(r[r0 : r1 + 1], q[q0 : q1 + 1])
    for i, j in a:
        total -= naive.euclidean_cost(r[i : i + 1], q[j : j + 1], np.float32)[0, 0]
    got = navdtw.dtw_anchored(r, q, a)
    assert close(got, total, 1e-9)
    plain = navdtw.dtw(r, q)
    assert got >= plain or close(got, plain)  # >= up to the join's rounding


@FEW
@given(case=anchored_case(exclusive=False))
def test_anchors_on_an_optimal_path_change_nothing(case):
    r, q, _, _, _ = case
    value, path = navdtw.warping_path(r, q)
    every_third = path[::3]
    assert close(navdtw.dtw_anchored(r, q, every_third), value)
    assert close(navdtw.dtw_anchored(r, q, path), value)


def test_no_anchor_is_dtw_and_band_is_per_stretch():
    rng = np.random.default_rng(3)
    r = rng.normal(size=(30, 2)).astype(np.float32)
    q = rng.normal(size=(17, 2)).astype(np.float32)
    assert navdtw.dtw_anchored(r, q, []) == navdtw.dtw(r, q)
    assert navdtw.dtw_anchored(r, q, [], window=2) == navdtw.dtw(r, q, window=2)
    assert navdtw.dtw_anchored(r, q, [], exclusive=True, window=2) == navdtw.dtw(r, q, window=2)
    # a band as wide as the paths is no band
    a = [(5, 3), (20, 10)]
    assert navdtw.dtw_anchored(r, q, a, window=30) == navdtw.dtw_anchored(r, q, a)
    assert navdtw.dtw_anchored(r, q, a, window=30, exclusive=True) == navdtw.dtw_anchored(r, q, a, exclusive=True)
    assert navdtw.dtw_anchored(r, q, a, window=0) >= navdtw.dtw_anchored(r, q, a)


def test_exclusive_edges():
    r = np.arange(4, dtype=np.float32).reshape(-1, 1)
    q = np.arange(5, dtype=np.float32).reshape(-1, 1)
    # last reference row anchored away from the end cell: no path
    assert navdtw.dtw_anchored(r, q, [(3, 2)], exclusive=True) == math.inf
    # two adjacent rows anchored two columns apart: no step joins them
    assert navdtw.dtw_anchored(r, q, [(1, 1), (2, 3)], exclusive=True) == math.inf
    assert navdtw.dtw_anchored(r, q, [(1, 1), (2, 3)]) < math.inf  # through: the path runs along row 1
    # row 0 keeps (0, 0): an anchor (0, 1) allows (0,0)->(1,1) too, as dtw-python's seeded start
    cost = naive.euclidean_cost(r, q, np.float32)
    assert navdtw.dtw_anchored(r, q, [(0, 1)], exclusive=True) == naive.dtw_exclusive(cost, [(0, 1)])
    assert navdtw.dtw_anchored(r, q, [(0, 3)], exclusive=True) == naive.dtw_exclusive(cost, [(0, 3)])


# --------------------------------------------------------------------------------------------
# dtw-python (IVLN-CE's DTW) with IVLN-CE's window
# --------------------------------------------------------------------------------------------


def ivln_window(iw, jw, query_size, reference_size, alignments):
    """Written from habitat_extensions/tour_ndtw.py (jacobkrantz/IVLN-CE), window_align_func:
    for each alignment (i, j) (query index, reference index) column j keeps row i alone."""
    window = np.ones((query_size, reference_size), dtype=bool)
    for i, j in alignments:
        window[:, j] = False
        window[i, j] = True
    return window


@SOME
@given(case=anchored_case(exclusive=True, max_len=10))
def test_exclusive_matches_dtw_python_symmetric1(case):
    dtw = pytest.importorskip("dtw")
    r, q, a, _, _ = case
    alignments = [(j, i) for i, j in a]  # dtw-python's x is the query (rows), y the reference
    got = navdtw.dtw_anchored(r, q, a, exclusive=True)
    for lm, rel in ((naive.euclidean_cost(r, q, np.float32).T, 0.0), (None, 1e-6)):
        try:
            if lm is None:  # the points themselves, float64 Euclidean as IVLN-CE calls it
                res = dtw.dtw(
                    q.astype(np.float64),
                    r.astype(np.float64),
                    step_pattern="symmetric1",
                    window_type=ivln_window,
                    window_args={"alignments": alignments},
                )
            else:  # the engine's float32 costs as a local cost matrix: the same bits
                res = dtw.dtw(
                    lm, step_pattern="symmetric1", window_type=ivln_window, window_args={"alignments": alignments}
                )
            want = res.distance
        except ValueError as e:
            assert "No warping path found" in str(e)
            want = math.inf
        if rel == 0.0:
            assert got == want
        else:
            assert close(got, want, rel)


# --------------------------------------------------------------------------------------------
# batches, kernels, workers
# --------------------------------------------------------------------------------------------

LANE_KERNELS = [k for k in navdtw._core.simd_kernels() if k != "portable"]


@contextlib.contextmanager
def simd(kernel):
    before = navdtw._core.build_info()["simd_choice"]
    navdtw._core.set_simd(kernel)
    try:
        yield
    finally:
        navdtw._core.set_simd(before)


def random_tours(seed, count, dim=3):
    rng = np.random.default_rng(seed)
    refs, qrys, anchors = [], [], []
    for _ in range(count):
        n, m = int(rng.integers(1, 60)), int(rng.integers(1, 60))
        refs.append(rng.normal(size=(n, dim)).astype(np.float32))
        qrys.append(rng.normal(size=(m, dim)).astype(np.float32))
        k = int(rng.integers(0, 5))
        anchors.append(np.stack([np.sort(rng.integers(0, n, k)), np.sort(rng.integers(0, m, k))], axis=1))
    return refs, qrys, anchors


@pytest.mark.parametrize("kernel", LANE_KERNELS or [pytest.param("none", marks=pytest.mark.skip("no SIMD kernel"))])
def test_simd_kernels_bit_identical(kernel):
    refs, qrys, anchors = random_tours(11, 300)
    with simd(kernel):
        fast = navdtw.dtw_anchored_batch(refs, qrys, anchors)
    with simd("portable"):
        slow = navdtw.dtw_anchored_batch(refs, qrys, anchors)
    assert fast.tobytes() == slow.tobytes()
    single = [navdtw.dtw_anchored(r, q, a) for r, q, a in zip(refs, qrys, anchors)]
    assert slow.tolist() == single


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("window", [None, 3])
def test_workers_and_pairs(exclusive, window):
    refs, qrys, anchors = random_tours(12, 200)
    if exclusive:  # one anchor per reference index
        anchors = [a[np.r_[True, np.diff(a[:, 0]) > 0]] if len(a) else a for a in anchors]
    one = navdtw.dtw_anchored_batch(refs, qrys, anchors, exclusive=exclusive, window=window, workers=1)
    many = navdtw.dtw_anchored_batch(refs, qrys, anchors, exclusive=exclusive, window=window, workers=4)
    assert one.tobytes() == many.tobytes()
    # explicit pairs: each reference with its own query, reversed
    pairs = np.stack([np.arange(200)[::-1], np.arange(200)[::-1]], axis=1)
    rev = navdtw.dtw_anchored_batch(refs, qrys, anchors[::-1], pairs=pairs, exclusive=exclusive, window=window)
    assert rev[::-1].tobytes() == one.tobytes()


def test_packed_anchors_are_the_list_s():
    refs, qrys, anchors = random_tours(13, 150)
    values = np.concatenate(anchors)
    offsets = np.r_[0, np.cumsum([len(a) for a in anchors])]
    for exclusive in (False, True):
        listed = anchors
        if exclusive:  # one anchor per reference index
            listed = [a[np.r_[True, np.diff(a[:, 0]) > 0]] if len(a) else a for a in anchors]
        v = np.concatenate(listed)
        o = np.r_[0, np.cumsum([len(a) for a in listed])]
        want = navdtw.dtw_anchored_batch(refs, qrys, listed, exclusive=exclusive)
        got = navdtw.dtw_anchored_batch(refs, qrys, (v, o.astype(np.int32)), exclusive=exclusive)
        assert got.tobytes() == want.tobytes()
    r = np.zeros((3, 2), np.float32)
    with pytest.raises(ValueError, match=r"^anchors offsets has 3 entries but the batch has 150 pairs"):
        navdtw.dtw_anchored_batch(refs, qrys, (values, offsets[:3]))
    with pytest.raises(ValueError, match=r"^anchors offsets must start at 0, not decrease and end at the"):
        navdtw.dtw_anchored_batch(refs, qrys, (values, offsets - 1))
    with pytest.raises(ValueError, match=r"^anchors values must have shape \[A, 2\]"):
        navdtw.dtw_anchored_batch([r, r], [r, r], (np.zeros((1, 3), np.int64), np.array([0, 1, 1])))
    with pytest.raises(TypeError, match=r"^anchors values must be an integer array"):
        navdtw.dtw_anchored_batch([r, r], [r, r], (np.zeros((1, 2)), np.array([0, 1, 1])))
    # a pair's anchors out of range are named as in the list form
    with pytest.raises(ValueError, match=r"^anchors\[1\]\[0\] = \(0, 9\) is out of range"):
        navdtw.dtw_anchored_batch([r, r], [r, r], (np.array([[0, 9]]), np.array([0, 0, 1])))


def test_nodes_batch_with_environments():
    rng = np.random.default_rng(5)
    mats = [rng.uniform(0, 9, size=(6, 6)).astype(np.float32) for _ in range(3)]
    refs = [rng.integers(0, 6, int(rng.integers(1, 9))) for _ in range(50)]
    qrys = [rng.integers(0, 6, int(rng.integers(1, 9))) for _ in range(50)]
    anchors = [[(len(r) // 2, len(q) // 2)] for r, q in zip(refs, qrys)]
    env = rng.integers(0, 3, 50)
    got = navdtw.dtw_anchored_batch(refs, qrys, anchors, distances=mats, env=env)
    for k in range(50):
        want = navdtw.dtw_anchored(refs[k], qrys[k], anchors[k], distances=mats[env[k]])
        assert got[k] == want


# --------------------------------------------------------------------------------------------
# errors
# --------------------------------------------------------------------------------------------


def test_bad_anchors_are_named():
    r = np.zeros((3, 2), np.float32)
    q = np.zeros((4, 2), np.float32)
    with pytest.raises(ValueError, match=r"^anchors\[1\] = \(3, 0\) is out of range: the reference has 3 points"):
        navdtw.dtw_anchored(r, q, [(0, 0), (3, 0)])
    with pytest.raises(ValueError, match=r"^anchors\[0\] = \(-1, 2\) is out of range"):
        navdtw.dtw_anchored(r, q, [(-1, 2)])
    with pytest.raises(ValueError, match=r"^anchors\[1\] = \(1, 1\) comes after \(2, 0\).*not monotone"):
        navdtw.dtw_anchored(r, q, [(2, 0), (1, 1)])
    with pytest.raises(ValueError, match=r"^anchors\[1\] = \(1, 3\) repeats reference index 1"):
        navdtw.dtw_anchored(r, q, [(1, 1), (1, 3)], exclusive=True)
    assert navdtw.dtw_anchored(r, q, [(1, 1), (1, 3)]) < math.inf  # through: a row may hold several
    with pytest.raises(ValueError, match=r"^anchors must have shape \[k, 2\]"):
        navdtw.dtw_anchored(r, q, [1, 2, 3])
    with pytest.raises(TypeError, match=r"^anchors must be an integer array"):
        navdtw.dtw_anchored(r, q, [(0.5, 1.0)])
    with pytest.raises(TypeError, match=r"^exclusive must be True or False"):
        navdtw.dtw_anchored(r, q, [], exclusive="yes")
    with pytest.raises(ValueError, match=r"^anchors\[1\]\[0\] = \(0, 9\) is out of range: the reference has 3 "):
        navdtw.dtw_anchored_batch([r, r], [q, q], [[], [(0, 9)]])
    with pytest.raises(ValueError, match=r"^anchors has 1 entries but the batch has 2 pairs"):
        navdtw.dtw_anchored_batch([r, r], [q, q], [[]])
    with pytest.raises(TypeError, match=r"^anchors must be a sequence"):
        navdtw.dtw_anchored_batch([r, r], [q, q], 3)
    with pytest.raises(ValueError, match=r"^anchors\[1\] must have shape \[k, 2\]"):
        navdtw.dtw_anchored_batch([r, r], [q, q], [[], [(1, 2, 3)]])


def test_core_refuses_inconsistent_anchor_arrays():
    # a direct call into the compiled core cannot make it read outside the arrays
    core = navdtw._core
    v = np.zeros((5, 2), np.float32)
    o = np.array([0, 2, 5], np.int64)
    good = np.array([[1, 1]], np.int64)
    with pytest.raises(ValueError, match=r"anchors: offsets must have one entry per pair plus one \(3\)"):
        core.dtw_anchored_points(v, o, v, o, good, np.array([0, 1], np.int64))
    with pytest.raises(ValueError, match=r"anchors: offsets\[-1\] = 2 but there are 1 anchors"):
        core.dtw_anchored_points(v, o, v, o, good, np.array([0, 1, 2], np.int64))
    with pytest.raises(ValueError, match=r"anchors: offsets decrease at pair 1"):
        core.dtw_anchored_points(v, o, v, o, np.zeros((1, 2), np.int64), np.array([0, 2, 1], np.int64))
    with pytest.raises(ValueError, match=r"anchors: values must have shape \[A, 2\]"):
        core.dtw_anchored_points(v, o, v, o, np.zeros((1, 3), np.int64), np.array([0, 1, 1], np.int64))
    big = np.array([[2**62, 0]], np.int64)
    for ex in (False, True):
        with pytest.raises(ValueError, match=r"anchors\[0\]\[0\] = \(4611686018427387904, 0\) is out of range"):
            core.dtw_anchored_points(v, o, v, o, big, np.array([0, 1, 1], np.int64), exclusive=ex)
        with pytest.raises(ValueError, match=r"anchors\[1\]\[0\] = \(3, 0\) is out of range"):
            core.dtw_anchored_nodes(
                np.zeros(5, np.int64),
                o,
                np.zeros(5, np.int64),
                o,
                [np.zeros((1, 1), np.float32)],
                np.array([[3, 0]], np.int64),
                np.array([0, 0, 1], np.int64),
                exclusive=ex,
            )
