"""``_core.PointStepper`` (one episode's streamed nDTW, used by navdtw.habitat's measures) against
the plain recurrence of tests/naive.py and against the batched step it shares its kernel with.

After every point: DTW equals ``naive.dtw`` of the prefix over navdtw's float32 cost rule
(``naive.euclidean_cost(..., dtype=np.float32)``), nDTW its ``exp(-DTW / (|R| d_th))`` to 1e-9,
and DTW, nDTW and the gain equal :class:`navdtw.NDTWReward`'s (``_core.reward_step_points``) bit
for bit. Paths of one point, standing still, references of one and two points, resets between
episodes (same and new references, other lengths and dimensions), and bad input: a clear
ValueError / TypeError, the state unchanged, never a crash.
"""

from __future__ import annotations

import math

import hypothesis.extra.numpy as hnp
import naive
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from navdtw import NDTWReward, _core
from navdtw.engine import MAX_COORDINATE

PROPERTY = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# small integers make ties, repeats and zero costs frequent; floats exercise the general case
GRID = st.integers(-3, 3).map(float)
COORD = st.floats(-50, 50, allow_nan=False, allow_infinity=False)


@st.composite
def path(draw, dim, min_len=1, max_len=12):
    n = draw(st.integers(min_len, max_len))
    kind = draw(st.sampled_from(["grid", "coord", "still"]))
    if kind == "still":  # standing still: one point repeated
        p = draw(hnp.arrays(np.float64, (1, dim), elements=COORD))
        return np.repeat(p, n, axis=0)
    return draw(hnp.arrays(np.float64, (n, dim), elements=GRID if kind == "grid" else COORD))


@st.composite
def episode(draw, dim=None):
    dim = draw(st.integers(1, 3)) if dim is None else dim
    ref_len = draw(st.sampled_from([1, 2, 2, 3, 7, 12]))
    return draw(path(dim, ref_len, ref_len)), draw(path(dim, 1, 15)), draw(st.sampled_from([0.5, 3.0]))


def expected(reference, query, threshold):
    """DTW and nDTW after each point of ``query``, from the plain recurrence, prefix by prefix."""
    cost = naive.euclidean_cost(reference, query, dtype=np.float32)
    dtw = naive.dtw_prefix(cost)
    return dtw, [naive.ndtw(float(d), len(reference), threshold) for d in dtw]


def run(stepper, reference, query, threshold):
    """Steps ``query`` through ``stepper`` and checks every point against the plain recurrence and
    against NDTWReward stepping the same episode as a batch of one."""
    dtw, ndtw = expected(reference, query, threshold)
    batch = NDTWReward([reference], threshold=threshold, workers=1)
    for t, point in enumerate(query):
        got = stepper.step(point.tolist())
        gain = float(batch.step(point[None])[0])
        assert got == stepper.ndtw and stepper.steps == t + 1
        assert math.isclose(stepper.dtw, dtw[t], rel_tol=1e-12, abs_tol=1e-12), (t, stepper.dtw, dtw[t])
        assert abs(stepper.ndtw - ndtw[t]) <= 1e-9, (t, stepper.ndtw, ndtw[t])
        # the batched step: the same kernel and reward rule, so the same bits
        assert (stepper.dtw, stepper.ndtw, stepper.gain) == (batch.dtw[0], batch.ndtw[0], gain)
        if t == 0:
            assert stepper.gain == 0.0  # no previous prefix
        else:
            assert abs(stepper.gain - (ndtw[t] - ndtw[t - 1])) <= 1e-9


@PROPERTY
@given(episode())
def test_stepper_equals_the_plain_recurrence(case):
    reference, query, threshold = case
    stepper = _core.PointStepper(reference, threshold, MAX_COORDINATE)
    assert (stepper.size, stepper.dim, stepper.steps, stepper.threshold) == (
        len(reference),
        reference.shape[1],
        0,
        threshold,
    )
    assert stepper.dtw == math.inf and stepper.ndtw == 0.0 and stepper.gain == 0.0
    run(stepper, reference, query, threshold)


@PROPERTY
@given(st.data())
def test_reset_between_episodes(data):
    """reset() starts again against the same reference, reset(reference) against a new one (another
    length or dimension too): every episode as from a fresh stepper."""
    reference, query, threshold = data.draw(episode(), label="first")
    stepper = _core.PointStepper(reference.tolist(), threshold, MAX_COORDINATE)
    run(stepper, reference, query, threshold)
    for k in range(data.draw(st.integers(1, 3), label="episodes")):
        if data.draw(st.booleans(), label=f"new reference {k}"):
            reference, query, _ = data.draw(episode(), label=f"episode {k}")
            stepper.reset(reference if data.draw(st.booleans(), label="as array") else reference.tolist())
        else:
            query = data.draw(path(reference.shape[1], 1, 15), label=f"query {k}")
            stepper.reset()
        assert stepper.steps == 0 and stepper.dtw == math.inf and stepper.ndtw == 0.0 and stepper.gain == 0.0
        assert (stepper.size, stepper.dim) == reference.shape
        run(stepper, reference, query, threshold)


def test_one_point_paths_standing_still_and_short_references():
    for reference in ([[1.0, 0.0, 2.0]], [[0.0, 0.0, 0.0], [3.0, 0.0, 4.0]]):
        reference = np.array(reference)
        for query in ([[0.0, 0.0, 0.0]], [[1.0, 1.0, 1.0]] * 6):
            run(_core.PointStepper(reference, 3.0, MAX_COORDINATE), reference, np.array(query), 3.0)
    # one point on the reference's only point: DTW 0, nDTW 1
    s = _core.PointStepper([[1.0, 2.0, 3.0]], 3.0, MAX_COORDINATE)
    assert s.step([1.0, 2.0, 3.0]) == 1.0 and s.dtw == 0.0


def test_references_and_points_of_any_real_kind_give_the_same_values():
    """Lists, tuples, float32 / float64 / int arrays, numpy scalars: the same float32 rounding."""
    ref = np.array([[0.1, 0.2, 0.3], [1.7, -2.2, 0.9], [3.3, 0.0, 1e-3]])
    point = [0.123456789, -1.0, 2.5]
    want = _core.PointStepper(ref, 3.0, MAX_COORDINATE)
    want.step(point)
    for r in (ref.tolist(), tuple(map(tuple, ref.tolist())), ref.astype(np.float32), list(ref)):
        for p in (
            point,
            tuple(point),
            np.array(point),
            np.array(point, dtype=np.float32),
            [np.float64(v) for v in point],
        ):
            s = _core.PointStepper(r, 3.0, MAX_COORDINATE)
            s.step(p)
            assert (s.dtw, s.ndtw) == (want.dtw, want.ndtw)
    ints = _core.PointStepper(np.array([[0, 0], [3, 4]]), 3.0, MAX_COORDINATE)
    assert ints.step([3, 4]) == ints.ndtw and ints.dtw == 5.0


@pytest.mark.parametrize(
    ("point", "exc", "message"),
    [
        ([1.0, 2.0], ValueError, "the point has 2 coordinates, the reference 3"),
        ([1.0, 2.0, 3.0, 4.0], ValueError, "the point has 4 coordinates, the reference 3"),
        ([], ValueError, "the point has 0 coordinates"),
        ([1.0, math.nan, 0.0], ValueError, r"coordinate 1 = nan is not finite or beyond \+-1e\+15"),
        ([math.inf, 0.0, 0.0], ValueError, "coordinate 0 = inf is not finite"),
        ([0.0, 0.0, -1.5e15], ValueError, "coordinate 2 = -1.5e\\+15 is not finite or beyond"),
        (np.array([0.0, np.nan, 0.0], dtype=np.float32), ValueError, "coordinate 1 = nan"),
        (["a", 0.0, 0.0], TypeError, "real number"),
        ([None, 0.0, 0.0], TypeError, "real number"),
        (5.0, TypeError, "a point must be a sequence of numbers"),
        (None, TypeError, "a point must be a sequence of numbers"),
    ],
)
def test_bad_point_is_refused_and_leaves_the_state(point, exc, message):
    reference = np.array([[0.0, 0.0, 0.0], [1.0, 1.0, 1.0], [2.0, 0.0, 2.0]])
    stepper = _core.PointStepper(reference, 3.0, MAX_COORDINATE)
    stepper.step([0.5, 0.5, 0.5])
    before = (stepper.steps, stepper.dtw, stepper.ndtw, stepper.gain)
    with pytest.raises(exc, match=message):
        stepper.step(point)
    assert (stepper.steps, stepper.dtw, stepper.ndtw, stepper.gain) == before
    run_after = _core.PointStepper(reference, 3.0, MAX_COORDINATE)
    run_after.step([0.5, 0.5, 0.5])
    assert stepper.step([1.0, 0.0, 1.0]) == run_after.step([1.0, 0.0, 1.0])  # the column was not touched


def test_the_coordinate_limit_is_inclusive():
    s = _core.PointStepper([[0.0, 0.0]], 3.0, MAX_COORDINATE)
    s.step([MAX_COORDINATE, -MAX_COORDINATE])  # accepted, as navdtw.engine accepts it
    with pytest.raises(ValueError, match="not finite or beyond"):
        s.step([np.nextafter(MAX_COORDINATE, math.inf), 0.0])


@pytest.mark.parametrize(
    ("reference", "exc", "message"),
    [
        ([], ValueError, r"non-empty \[n, D\]"),
        ([[]], ValueError, r"non-empty \[n, D\]"),
        (np.zeros((0, 3)), ValueError, r"non-empty \[n, D\]"),
        (np.zeros(3), ValueError, r"non-empty \[n, D\]"),
        (np.zeros((2, 3, 1)), ValueError, r"non-empty \[n, D\]"),
        ([[0.0, 0.0, 0.0], [1.0, 1.0]], ValueError, "point 1 has 2 coordinates, its point 0 3"),
        ([[0.0, 0.0, math.nan]], ValueError, "point 0 has a coordinate that is not finite"),
        ([[0.0, 0.0], [0.0, -math.inf]], ValueError, "point 1 has a coordinate that is not finite"),
        (np.array([[0.0, 2e15]]), ValueError, r"beyond \+-1e\+15"),
        ([[0.0, "a"]], TypeError, "real number"),
        (np.array([["a", "b"]]), TypeError, "an array of real numbers"),
        (np.array([[1.0, None]], dtype=object), TypeError, "an array of real numbers"),
        ([1.0, 2.0], TypeError, "each point of the reference must be a sequence of numbers"),
        (3.0, TypeError, "the reference must be a sequence of points"),
        (None, TypeError, "the reference must be a sequence of points"),
    ],
)
def test_bad_reference_is_refused(reference, exc, message):
    with pytest.raises(exc, match=message):
        _core.PointStepper(reference, 3.0, MAX_COORDINATE)
    stepper = _core.PointStepper([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]], 3.0, MAX_COORDINATE)
    stepper.step([0.5, 0.0, 0.0])
    before = (stepper.size, stepper.dim, stepper.steps, stepper.dtw, stepper.ndtw)
    if reference is not None:  # reset(None) starts again against the same reference
        with pytest.raises(exc, match=message):
            stepper.reset(reference)
        assert (stepper.size, stepper.dim, stepper.steps, stepper.dtw, stepper.ndtw) == before


@pytest.mark.parametrize("threshold", [0.0, -1.0, math.nan, math.inf])
def test_bad_threshold_and_limit(threshold):
    with pytest.raises(ValueError, match="threshold must be finite and > 0"):
        _core.PointStepper([[0.0, 0.0]], threshold, MAX_COORDINATE)
    with pytest.raises(ValueError, match="limit must be > 0"):
        _core.PointStepper([[0.0, 0.0]], 3.0, -threshold if threshold > 0 else threshold)


def test_long_episode_keeps_the_column_exact():
    """500 points against 120: the streamed column equals the batched step at every point (the
    benchmark's largest workload)."""
    rng = np.random.default_rng(3)
    reference = np.cumsum(rng.normal(0, 0.5, (120, 3)), axis=0)
    query = np.cumsum(rng.normal(0, 0.25, (500, 3)), axis=0).astype(np.float32)
    stepper = _core.PointStepper(reference, 3.0, MAX_COORDINATE)
    batch = NDTWReward([reference], threshold=3.0, workers=1)
    for point in query:
        stepper.step(point.tolist())
        batch.step(point[None])
        assert (stepper.dtw, stepper.ndtw) == (batch.dtw[0], batch.ndtw[0])
    assert math.isclose(stepper.dtw, naive.dtw(naive.euclidean_cost(reference, query, dtype=np.float32)), rel_tol=1e-12)
