"""Regression tests of the C++ fuzz target's findings (fuzz/README.md, "C++ core"), one block per finding.

Finding 1 (the known one, issue 23): float32 distances overflow. A coordinate difference beyond
~1.8e19 m squares past float32's largest value, so the distance -- and DTW -- became ``inf``
(nDTW 0), a silent wrong number. The engine refuses coordinates beyond +-1e15 m; within that bound
the float32 sum of D squared differences stays finite only while D is below ~8.5e7 (the bound
D * 4e30 * (1 + 2**-24)**(D + 1) < 3.4e38 of docs/engine.md), so paths of more than 2**24
dimensions are refused as well, naming the path.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import navdtw
from navdtw import engine

TOO_MANY = engine.MAX_DIMS + 1


def test_the_limits_are_the_documented_ones():
    assert engine.MAX_COORDINATE == 1e15
    assert engine.MAX_DIMS == 2**24
    # the documented worst case of the float32 sum at both limits is below float32's largest value
    square = float(np.float32(2 * np.float32(engine.MAX_COORDINATE)) ** 2)
    worst = engine.MAX_DIMS * square * (1 + 2.0**-24) ** (engine.MAX_DIMS + 1)
    assert worst < float(np.finfo(np.float32).max)
    assert 2 * engine.MAX_DIMS * square * (1 + 2.0**-24) ** (2 * engine.MAX_DIMS + 1) > float(
        np.finfo(np.float32).max
    )  # the cap is not far below what the bound allows


@pytest.mark.parametrize("dims", [1, 2, 3, 4, 64, 1000])
def test_coordinates_at_the_bound_give_finite_distances(dims):
    lo = np.full((2, dims), -engine.MAX_COORDINATE, np.float32)
    hi = np.full((3, dims), engine.MAX_COORDINATE, np.float32)
    d = np.float32(2 * np.float32(engine.MAX_COORDINATE))
    step = float(np.sqrt(np.cumsum(np.full(dims, d * d, np.float32), dtype=np.float32)[-1]))
    assert math.isfinite(step)
    assert navdtw.dtw(lo, hi) == 3 * step  # 3 steps of the warping path, each one distance
    assert navdtw.dtw(lo, hi, precision="single") == float(np.float32(np.float32(step) * 3))
    got = navdtw.dtw_batch([lo, hi, lo], [hi, lo, lo], workers=2)
    assert got.tolist() == [3 * step, 3 * step, 0.0]


def test_the_most_dimensions_at_the_bound_give_a_finite_distance():
    # 2**24 dimensions (64 MB per point): the float32 sum, left to right as the engine does it
    d = np.float32(2 * np.float32(engine.MAX_COORDINATE))
    want = float(np.sqrt(np.cumsum(np.full(engine.MAX_DIMS, d * d, np.float32), dtype=np.float32)[-1]))
    assert math.isfinite(want)
    a = np.full((1, engine.MAX_DIMS), -engine.MAX_COORDINATE, np.float32)
    b = np.full((1, engine.MAX_DIMS), engine.MAX_COORDINATE, np.float32)
    assert navdtw.dtw(a, b) == want


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda z, w: navdtw.dtw(z, w), r"^reference: coordinates have 16777217 dimensions, more than the 16777216"),
        (lambda z, w: navdtw.ndtw(w, z), r"^reference: coordinates have 16777217 dimensions"),
        (lambda z, w: navdtw.dtw_prefix(z, w), r"^reference: coordinates have 16777217 dimensions"),
        (lambda z, w: navdtw.warping_path(z, w), r"^reference: coordinates have 16777217 dimensions"),
        (lambda z, w: navdtw.dtw_batch([z], [w], workers=2), r"^references: coordinates have 16777217 dimensions"),
        (lambda z, w: navdtw.dtw_matrix([z], [z]), r"^references: coordinates have 16777217 dimensions"),
        (lambda z, w: navdtw.NDTWReward([z]), r"^references: coordinates have 16777217 dimensions"),
    ],
)
def test_more_dimensions_than_the_float32_sum_allows_are_refused(call, message):
    z = np.zeros((1, TOO_MANY), np.float32)
    with pytest.raises(ValueError, match=message) as e:
        call(z, z)
    assert "float32 distances could overflow" in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("big", [1.0000001e15, 2e15, 1.8e19, 1e30, -3e38])
def test_coordinates_beyond_the_bound_are_refused_never_inf(big):
    z = np.zeros((2, 3), np.float32)
    far = np.array([[0.0, 0.0, 0.0], [0.0, big, 0.0]], np.float32)
    for call in (
        lambda: navdtw.dtw(z, far),
        lambda: navdtw.dtw(z, far, radius=1),
        lambda: navdtw.dtw_batch([z, z], [z, far], workers=2),
        lambda: navdtw.ndtw(far, z),
        lambda: navdtw.evaluate([z, z], [z, far]),
    ):
        with pytest.raises(ValueError, match=r"(query|queries\[1\]|reference) has a coordinate beyond \+-1e\+15 m"):
            call()
