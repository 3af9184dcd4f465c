"""Hostile input over the public API: every bad argument gets a specific ValueError / TypeError that
names the argument (and, in a batch, the index of the bad item), and every legal-but-odd input
(float64, small ints, views with odd strides, inf distances, empty batches, duplicates) gives a
documented result. Extends tests/test_engine_errors.py (not repeated here).

The battery is table driven: each row is (id, call, expectation), where the expectation is
``Raises(exception type, regex)`` or ``Same(other call)`` (the same result as a reference call,
e.g. the contiguous copy) or ``Returns(check)``. Rows that could crash or exhaust memory run in a
subprocess (``SUBPROCESS`` table), so a segfault fails the test instead of killing pytest.
"""

from __future__ import annotations

import math
import os
import re
import signal
import subprocess
import sys
import textwrap
import warnings
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pytest

import navdtw
from navdtw import Paths

sys.path.insert(0, os.path.dirname(__file__))
import naive

A = np.array([[0.0, 0.0], [1.0, 0.0], [2.0, 1.0]], np.float32)
B = np.array([[0.0, 1.0], [2.0, 2.0]], np.float32)
A3 = np.array([[0.0, 0.0, 1.0], [1.0, 0.0, 2.0], [2.0, 1.0, 0.5], [4.0, 1.0, 0.0]], np.float32)
M = np.array([[0, 1, 2, 3], [1, 0, 1, 2], [2, 1, 0, 1], [3, 2, 1, 0]], np.float32)
# non-symmetric: cost of (reference node r, query node q) is MA[r, q]
MA = np.array([[0, 5, 9, 1], [2, 0, 7, 3], [4, 6, 0, 8], [1.5, 2.5, 3.5, 0]], np.float32)
MINF = np.where(M == 3, np.inf, M).astype(np.float32)  # 0 <-> 3 unreachable
N0 = np.array([0, 1, 2])
N1 = np.array([3, 2])
N2 = np.array([1, 3, 3, 0, 2])
E2 = Paths(np.zeros((0, 2), np.float32), [0])  # a batch of zero coordinate paths
EN = Paths(np.zeros(0, np.int64), [0])  # a batch of zero node paths


# --------------------------------------------------------------------------------------------
# the table machinery
# --------------------------------------------------------------------------------------------


@dataclass
class Raises:
    exc: type
    match: str


@dataclass
class Same:
    """The call returns the same as ``other()`` (bit for bit; arrays and (value, path) tuples)."""

    other: Callable[[], Any]


@dataclass
class Returns:
    """The call returns a value for which ``check(value)`` is true."""

    check: Callable[[Any], bool]
    what: str = ""


def _equal(a, b) -> bool:
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b, equal_nan=a.dtype.kind == "f")


def run_case(call: Callable[[], Any], expect) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a numpy warning on the way is a failure, not a pass
        if isinstance(expect, Raises):
            with pytest.raises(expect.exc, match=expect.match):
                call()
        elif isinstance(expect, Same):
            got, want = call(), expect.other()
            assert _equal(got, want), f"{got!r} != {want!r}"
        else:
            got = call()
            assert expect.check(got), f"unexpected result {got!r} ({expect.what})"


def table(rows):
    """rows of (id, call, expect[, marks]) -> pytest params."""
    return [pytest.param(r[1], r[2], id=r[0], marks=r[3] if len(r) > 3 else ()) for r in rows]


def _fortran(a):
    return np.asfortranarray(a)


def _rev(a):
    return np.ascontiguousarray(a[::-1])[::-1]  # same values, negative strides


def _padded_cols(a):
    """A view of ``a`` that is a column slice of a wider array (row stride > itemsize * D)."""
    wide = np.zeros((a.shape[0], a.shape[1] + 3), a.dtype)
    wide[:, 1 : 1 + a.shape[1]] = a
    return wide[:, 1 : 1 + a.shape[1]]


def _every_other(a):
    big = np.repeat(a, 2, axis=0)
    return big[::2]  # stride 2 rows, same values as ``a``


# --------------------------------------------------------------------------------------------
# 1. dtypes
# --------------------------------------------------------------------------------------------

DTYPE_ROWS = [
    # legal: float64 and other real coordinates become float32 (documented); ints are node ids
    (
        "float64 coords == float32",
        lambda: navdtw.dtw(A.astype(np.float64), B.astype(np.float64)),
        Same(lambda: navdtw.dtw(A, B)),
    ),
    (
        "float64 coords batch",
        lambda: navdtw.dtw_batch([A.astype(np.float64)], [B.astype(np.float64)]),
        Same(lambda: navdtw.dtw_batch([A], [B])),
    ),
    ("float16 coords", lambda: navdtw.dtw(A.astype(np.float16), B), Same(lambda: navdtw.dtw(A, B))),
    (
        "int8 coords are coordinates",
        lambda: navdtw.dtw(A.astype(np.int8), B.astype(np.int8)),
        Same(lambda: navdtw.dtw(A, B)),
    ),
    (
        "int8 node ids",
        lambda: navdtw.dtw(N0.astype(np.int8), N1.astype(np.int8), distances=M),
        Same(lambda: navdtw.dtw(N0, N1, distances=M)),
    ),
    (
        "uint16 and int32 node ids mixed",
        lambda: navdtw.dtw(N0.astype(np.uint16), N1.astype(np.int32), distances=M),
        Same(lambda: navdtw.dtw(N0, N1, distances=M)),
    ),
    (
        "uint64 node ids batch",
        lambda: navdtw.dtw_batch([N0.astype(np.uint64)], [N1.astype(np.uint64)], distances=M),
        Same(lambda: navdtw.dtw_batch([N0], [N1], distances=M)),
    ),
    (
        "int matrix",
        lambda: navdtw.dtw(N0, N1, distances=M.astype(np.int64)),
        Same(lambda: navdtw.dtw(N0, N1, distances=M)),
    ),
    (
        "float64 matrix",
        lambda: navdtw.dtw_prefix(N0, N1, distances=M.astype(np.float64)),
        Same(lambda: navdtw.dtw_prefix(N0, N1, distances=M)),
    ),
    (
        "uint8 pairs",
        lambda: navdtw.dtw_batch([A], [B], pairs=np.array([[0, 0]], np.uint8)),
        Same(lambda: navdtw.dtw_batch([A], [B])),
    ),
    (
        "numpy scalar threshold",
        lambda: navdtw.ndtw(A, B, threshold=np.float32(3.0)),
        Same(lambda: navdtw.ndtw(A, B, threshold=3.0)),
    ),
    ("numpy int window", lambda: navdtw.dtw(A, B, window=np.int64(1)), Same(lambda: navdtw.dtw(A, B, window=1))),
    # illegal dtypes, every entry point
    ("bool coords", lambda: navdtw.dtw(A > 0, B), Raises(TypeError, r"^reference: paths must hold .*got dtype bool")),
    (
        "bytes node ids",
        lambda: navdtw.dtw(np.array([b"a"]), N1, distances=M),
        Raises(TypeError, r"^reference: .*dtype \|S1"),
    ),
    (
        "datetime node ids",
        lambda: navdtw.dtw(N0, np.array(["2020-01-01"], "datetime64[D]"), distances=M),
        Raises(TypeError, r"^query: .*datetime64"),
    ),
    (
        "complex batch",
        lambda: navdtw.ndtw_batch([A, A.astype(np.complex64)], [B, B]),
        Raises(TypeError, r"^references: .*complex64"),
    ),
    (
        "complex warping_path",
        lambda: navdtw.warping_path(A, B.astype(complex)),
        Raises(TypeError, r"^query: .*complex128"),
    ),
    (
        "complex dtw_prefix",
        lambda: navdtw.dtw_prefix(A.astype(complex), B),
        Raises(TypeError, r"^reference: .*complex128"),
    ),
    (
        "object dtw_matrix",
        lambda: navdtw.dtw_matrix([A], [np.array([[1.0, None]], dtype=object)]),
        Raises(TypeError, r"^queries\[0\]: ragged or non-numeric"),
    ),
    (
        "string sdtw_batch",
        lambda: navdtw.sdtw_batch([N0], [np.array(["3", "2"])], distances=M),
        Raises(TypeError, r"^queries: .*<U1"),
    ),
    (
        "complex matrix",
        lambda: navdtw.dtw(N0, N1, distances=M.astype(complex)),
        Raises(TypeError, r"^distances must be a real \[V, V\] matrix, got dtype complex128"),
    ),
    (
        "object matrix",
        lambda: navdtw.dtw_batch([N0], [N1], distances=M.astype(object)),
        Raises(TypeError, r"^distances must be a real .*object"),
    ),
    (
        "None in matrix list",
        lambda: navdtw.dtw_batch([N0], [N1], distances=[M, None], env=[0]),
        Raises(TypeError, r"^distances\[1\] must be a real"),
    ),
    (
        "complex env",
        lambda: navdtw.dtw_batch([N0], [N1], distances=[M], env=np.array([0j])),
        Raises(TypeError, r"^env must be an integer array"),
    ),
    (
        "object pairs",
        lambda: navdtw.dtw_batch([A], [B], pairs=np.array([[0, None]], dtype=object)),
        Raises(TypeError, r"^pairs must be an integer array"),
    ),
    (
        "complex Paths values",
        lambda: Paths(A.astype(complex), [0, 3], name="refs"),
        Raises(TypeError, r"^refs: .*complex128"),
    ),
    (
        "object offsets",
        lambda: Paths(A, np.array([0, 3], dtype=object)),
        Raises(ValueError, r"^paths: offsets must be a 1-D integer"),
    ),
    (
        "bool offsets",
        lambda: Paths(A, np.array([False, True])),
        Raises(ValueError, r"^paths: offsets must be a 1-D integer"),
    ),
    ("complex threshold", lambda: navdtw.ndtw(A, B, threshold=3j), Raises(TypeError, r"^threshold must be a number")),
    (
        "numpy bool threshold",
        lambda: navdtw.sdtw(A, B, threshold=np.bool_(True)),
        Raises(TypeError, r"^threshold must be a number"),
    ),
    (
        "evaluate complex queries",
        lambda: navdtw.evaluate([A], [B.astype(complex)]),
        Raises(TypeError, r"^queries: .*complex"),
    ),
    (
        "reward object points",
        lambda: navdtw.NDTWReward([A]).step(np.array([[None, 0]], dtype=object)),
        Raises(ValueError, r"^points must be \[B, D\] = \[1, 2\] coordinates"),
    ),
    (
        "reward float node step",
        lambda: navdtw.NDTWReward([N0], distances=M).step(np.array([1.0])),
        Raises(ValueError, r"^points must be \[B\] = \[1\] integer node ids"),
    ),
    (
        "reward complex references",
        lambda: navdtw.NDTWReward([A.astype(complex)]),
        Raises(TypeError, r"^references: .*complex"),
    ),
]


@pytest.mark.parametrize("call, expect", table(DTYPE_ROWS))
def test_dtypes(call, expect):
    run_case(call, expect)


# --------------------------------------------------------------------------------------------
# 2. ndim and shapes
# --------------------------------------------------------------------------------------------

NDIM_ROWS = [
    ("0-d path", lambda: navdtw.dtw(np.array(5), N1, distances=M), Raises(ValueError, r"^reference: .*got 0-D")),
    ("python int path", lambda: navdtw.ndtw(N0, 2, distances=M), Raises(ValueError, r"^query: .*got 0-D")),
    (
        "4-D path",
        lambda: navdtw.dtw_prefix(A, np.zeros((1, 1, 1, 2), np.float32)),
        Raises(ValueError, r"^query: .*got 4-D"),
    ),
    (
        "3-D path in warping_path",
        lambda: navdtw.warping_path(np.zeros((2, 2, 2), np.float32), B),
        Raises(ValueError, r"^reference: .*got 3-D"),
    ),
    (
        "0-d path in a batch",
        lambda: navdtw.dtw_batch([N0, np.array(5)], [N1, N1], distances=M),
        Raises(TypeError, r"^references\[1\] is a scalar"),
    ),
    (
        "string as a batch",
        lambda: navdtw.dtw_batch("abc", "abc"),
        Raises(TypeError, r"^references must be navdtw.Paths .*got str"),
    ),
    (
        "string in a batch",
        lambda: navdtw.dtw_batch([N0, "abc"], [N1, N1], distances=M),
        Raises(TypeError, r"^references\[1\] is a scalar"),
    ),
    (
        "3-D stack of paths is ambiguous",
        lambda: navdtw.dtw_batch(np.zeros((2, 3, 2), np.float32), [B, B]),
        Raises(TypeError, r"^references: a single array is ambiguous"),
    ),
    (
        "1-D matrix",
        lambda: navdtw.dtw_matrix([N0], [N1], distances=np.ones(16, np.float32)),
        Raises(ValueError, r"^distances must be a square \[V, V\] matrix, got shape \(16,\)"),
    ),
    (
        "0-d matrix",
        lambda: navdtw.dtw_batch([N0], [N1], distances=3.0),
        Raises(ValueError, r"^distances must be a square .*\(\)"),
    ),
    (
        "4-D matrix",
        lambda: navdtw.dtw_batch([N0], [N1], distances=np.ones((1, 1, 4, 4), np.float32)),
        Raises(ValueError, r"^distances must be a square .*\(1, 1, 4, 4\)"),
    ),
    (
        "3-D matrix to a single pair",
        lambda: navdtw.dtw_prefix(N0, N1, distances=np.stack([M, M])),
        Raises(ValueError, r"^single-pair functions take one \[V, V\] distance matrix"),
    ),
    (
        "3-D matrix stack in a batch is a list",
        lambda: navdtw.dtw_batch([N0, N0], [N1, N1], distances=np.stack([M, MA]), env=[0, 1]),
        Same(lambda: navdtw.dtw_batch([N0, N0], [N1, N1], distances=[M, MA], env=[0, 1])),
    ),
    (
        "non-square in a 3-D stack",
        lambda: navdtw.dtw_batch([N0], [N1], distances=np.ones((2, 4, 5), np.float32), env=[1]),
        Raises(ValueError, r"^distances\[0\] must be a square .*\(4, 5\)"),
    ),
    (
        "non-square tall",
        lambda: navdtw.warping_path(N0, N1, distances=np.ones((5, 4), np.float32)),
        Raises(ValueError, r"^distances must be a square .*\(5, 4\)"),
    ),
    (
        "pairs 3 columns",
        lambda: navdtw.dtw_batch([A], [B], pairs=[[0, 0, 0]]),
        Raises(ValueError, r"^pairs must have shape \[B, 2\]"),
    ),
    (
        "env 2-D",
        lambda: navdtw.dtw_batch([N0], [N1], distances=[M, M], env=[[0]]),
        Raises(ValueError, r"^env must have one entry per pair \(1\)"),
    ),
    (
        "offsets 2-D",
        lambda: Paths(A, np.array([[0], [3]])),
        Raises(ValueError, r"^paths: offsets must be a 1-D integer"),
    ),
    (
        "reward points wrong D",
        lambda: navdtw.NDTWReward([A]).step(np.zeros((1, 3))),
        Raises(ValueError, r"^points must be \[B, D\] = \[1, 2\]"),
    ),
    (
        "reward points wrong B",
        lambda: navdtw.NDTWReward([A, A]).step(np.zeros((3, 2))),
        Raises(ValueError, r"^points must be \[B, D\] = \[2, 2\]"),
    ),
    (
        "reward done mask wrong shape",
        lambda: navdtw.NDTWReward([A, A]).done([True]),
        Raises(ValueError, r"^mask must have one entry per episode \(2\)"),
    ),
]


@pytest.mark.parametrize("call, expect", table(NDIM_ROWS))
def test_ndim_and_shapes(call, expect):
    run_case(call, expect)


# --------------------------------------------------------------------------------------------
# 3. non-contiguous and negative-stride views: same result as the contiguous copy
# --------------------------------------------------------------------------------------------

VIEW_ROWS = []
for vname, view in (
    ("reversed", _rev),
    ("fortran", _fortran),
    ("column slice", _padded_cols),
    ("every other row", _every_other),
):
    VIEW_ROWS += [
        (
            f"dtw {vname}",
            lambda v=view: navdtw.dtw(v(A3), v(A3[::-1].copy())),
            Same(lambda: navdtw.dtw(A3, A3[::-1].copy())),
        ),
        (
            f"band {vname}",
            lambda v=view: navdtw.dtw(v(A3), v(A3[:2].copy()), window=0),
            Same(lambda: navdtw.dtw(A3, A3[:2].copy(), window=0)),
        ),
        (
            f"fastdtw {vname}",
            lambda v=view: navdtw.dtw(v(A3), v(A3[1:].copy()), radius=0),
            Same(lambda: navdtw.dtw(A3, A3[1:].copy(), radius=0)),
        ),
        (
            f"warping_path {vname}",
            lambda v=view: navdtw.warping_path(v(A), v(B)),
            Same(lambda: navdtw.warping_path(A, B)),
        ),
        (f"dtw_prefix {vname}", lambda v=view: navdtw.dtw_prefix(v(A), v(B)), Same(lambda: navdtw.dtw_prefix(A, B))),
        (
            f"dtw_batch {vname}",
            lambda v=view: navdtw.dtw_batch([v(A), v(B)], [v(B), v(A)], workers=2),
            Same(lambda: navdtw.dtw_batch([A, B], [B, A], workers=2)),
        ),
        (
            f"sdtw_batch {vname}",
            lambda v=view: navdtw.sdtw_batch([v(A)], [v(B)]),
            Same(lambda: navdtw.sdtw_batch([A], [B])),
        ),
        (
            f"Paths values {vname}",
            lambda v=view: navdtw.dtw_matrix(Paths(v(np.concatenate([A, B])), [0, 3, 5]), [B]),
            Same(lambda: navdtw.dtw_matrix([A, B], [B])),
        ),
        (
            f"matrix {vname}",
            lambda v=view: navdtw.dtw(N2, N0, distances=v(MA)),
            Same(lambda: navdtw.dtw(N2, N0, distances=MA)),
        ),
        (
            f"matrix {vname} warping_path",
            lambda v=view: navdtw.warping_path(N2, N0, distances=v(MA)),
            Same(lambda: navdtw.warping_path(N2, N0, distances=MA)),
        ),
        (
            f"matrix {vname} prefix",
            lambda v=view: navdtw.dtw_prefix(N0, N2, distances=v(MA)),
            Same(lambda: navdtw.dtw_prefix(N0, N2, distances=MA)),
        ),
        (
            f"matrix {vname} batch",
            lambda v=view: navdtw.ndtw_batch([N2], [N0], distances=v(MA)),
            Same(lambda: navdtw.ndtw_batch([N2], [N0], distances=MA)),
        ),
    ]
VIEW_ROWS += [
    (
        "reversed node path",
        lambda: navdtw.dtw(N2[::-1], N0[::-1], distances=MA),
        Same(lambda: navdtw.dtw(N2[::-1].copy(), N0[::-1].copy(), distances=MA)),
    ),
    (
        "strided node path batch",
        lambda: navdtw.dtw_batch([np.repeat(N2, 2)[::2]], [N0], distances=MA),
        Same(lambda: navdtw.dtw_batch([N2], [N0], distances=MA)),
    ),
    (
        "strided node values in Paths",
        lambda: navdtw.dtw_batch(Paths(np.repeat(np.concatenate([N2, N0]), 3)[::3], [0, 5, 8]), [N0, N2], distances=MA),
        Same(lambda: navdtw.dtw_batch([N2, N0], [N0, N2], distances=MA)),
    ),
    (
        "reversed offsets view",
        lambda: navdtw.dtw_batch(Paths(np.concatenate([A, B]), np.array([5, 3, 0])[::-1]), [B, A]),
        Same(lambda: navdtw.dtw_batch([A, B], [B, A])),
    ),
    (
        "transposed matrix is M.T",
        lambda: navdtw.dtw(N2, N0, distances=MA.T),
        Same(lambda: navdtw.dtw(N2, N0, distances=np.ascontiguousarray(MA.T))),
    ),
    (
        "swapped pairs view",
        lambda: navdtw.dtw_batch([A, B], [B], pairs=np.array([[0, 0], [0, 1]])[:, ::-1]),
        Same(lambda: navdtw.dtw_batch([A, B], [B], pairs=[[0, 0], [1, 0]])),
    ),
    (
        "reversed env view",
        lambda: navdtw.dtw_batch([N0, N0], [N1, N1], distances=[M, MA], env=np.array([1, 0])[::-1]),
        Same(lambda: navdtw.dtw_batch([N0, N0], [N1, N1], distances=[M, MA], env=[0, 1])),
    ),
    (
        "reward reversed references",
        lambda: navdtw.NDTWReward([_rev(A)]).step(B[:1][::-1]).copy(),
        Same(lambda: navdtw.NDTWReward([A]).step(B[:1]).copy()),
    ),
    (
        "evaluate strided coordinates",
        lambda: navdtw.evaluate([_every_other(A)], [_padded_cols(B)])["ndtw"],
        Same(lambda: navdtw.evaluate([A], [B])["ndtw"]),
    ),
]


@pytest.mark.parametrize("call, expect", table(VIEW_ROWS))
def test_views_match_contiguous(call, expect):
    run_case(call, expect)


# --------------------------------------------------------------------------------------------
# 4. empty paths and empty batches
# --------------------------------------------------------------------------------------------

EMPTY_ROWS = [
    # a batch of zero paths is legal and scores zero pairs
    (
        "dtw_batch of 0 pairs",
        lambda: navdtw.dtw_batch(E2, E2),
        Returns(lambda v: v.shape == (0,) and v.dtype == np.float64),
    ),
    ("ndtw_batch of 0 pairs", lambda: navdtw.ndtw_batch(E2, E2), Returns(lambda v: v.shape == (0,))),
    ("sdtw_batch of 0 node pairs", lambda: navdtw.sdtw_batch(EN, EN, distances=M), Returns(lambda v: v.shape == (0,))),
    ("dtw_matrix 0 x 1", lambda: navdtw.dtw_matrix(E2, [B]), Returns(lambda v: v.shape == (0, 1))),
    ("dtw_matrix 1 x 0", lambda: navdtw.dtw_matrix([N0], EN, distances=M), Returns(lambda v: v.shape == (1, 0))),
    (
        "empty pairs",
        lambda: navdtw.sdtw_batch([A], [B], pairs=np.zeros((0, 2), np.int64)),
        Returns(lambda v: v.shape == (0,)),
    ),
    (
        "empty pairs with empty env",
        lambda: navdtw.dtw_batch(
            [N0], [N1], distances=[M, M], env=np.zeros(0, np.int64), pairs=np.zeros((0, 2), np.int32)
        ),
        Returns(lambda v: v.shape == (0,)),
    ),
    ("evaluate of 0 episodes", lambda: len(navdtw.evaluate(E2, E2)), Returns(lambda v: v == 0)),
    # empty paths and empty lists
    ("empty query list", lambda: navdtw.ndtw_batch([A], []), Raises(ValueError, r"^queries: empty batch")),
    ("empty list for dtw_matrix", lambda: navdtw.dtw_matrix([], [B]), Raises(ValueError, r"^references: empty batch")),
    (
        "empty node path warping_path",
        lambda: navdtw.warping_path(np.array([], np.int64), N1, distances=M),
        Raises(ValueError, r"^reference is empty"),
    ),
    (
        "empty path in pairs batch",
        lambda: navdtw.dtw_batch([A, np.zeros((0, 2))], [B], pairs=[[0, 0]]),
        Raises(ValueError, r"^references\[1\] is empty"),
    ),
    (
        "empty path in evaluate",
        lambda: navdtw.evaluate([A, A], [B, np.zeros((0, 2), np.float32)]),
        Raises(ValueError, r"queries\[1\] is empty"),
    ),
    (
        "empty reference in reward",
        lambda: navdtw.NDTWReward([A, np.zeros((0, 2), np.float32)]),
        Raises(ValueError, r"^references\[1\] is empty"),
    ),
    ("reward of no episodes", lambda: navdtw.NDTWReward(E2), Raises(ValueError, r"^references is empty")),
    (
        "empty env list",
        lambda: navdtw.dtw_batch([N0], [N1], distances=[M, M], env=[]),
        Raises(TypeError, r"^env must be an integer array \[B\], got dtype float64"),
    ),  # np.asarray([]) is float
]


@pytest.mark.parametrize("call, expect", table(EMPTY_ROWS))
def test_empty(call, expect):
    run_case(call, expect)


# --------------------------------------------------------------------------------------------
# 5. NaN and inf; huge finite values
# --------------------------------------------------------------------------------------------

Z1 = np.zeros((1, 2), np.float32)
FAR = np.array([[1e30, 0.0]], np.float32)  # finite; 1e30 m apart


def _close(v, want, rel=1e-6):
    return np.all(np.isclose(np.asarray(v, np.float64), want, rtol=rel, atol=0))


NONFINITE_ROWS = [
    # inf in a matrix = unreachable: legal, DTW inf, nDTW 0, SDTW 0, never NaN
    ("inf matrix dtw", lambda: navdtw.dtw(N0, N1, distances=MINF), Returns(lambda v: v == math.inf)),
    ("inf matrix ndtw", lambda: navdtw.ndtw(N0, N1, distances=MINF), Returns(lambda v: v == 0.0)),
    (
        "inf matrix sdtw",
        lambda: navdtw.sdtw(np.array([0]), np.array([3]), distances=MINF, threshold=1e9),
        Returns(lambda v: v == 0.0),
    ),
    (
        "inf matrix batch",
        lambda: navdtw.ndtw_batch([N0, N0], [N1, N0], distances=MINF, workers=2),
        Returns(lambda v: v[0] == 0.0 and v[1] == 1.0),
    ),
    ("inf matrix band", lambda: navdtw.dtw(N0, N1, distances=MINF, window=0), Returns(lambda v: v == math.inf)),
    (
        "inf matrix prefix",
        lambda: navdtw.dtw_prefix(N1, N0, distances=MINF),
        Returns(lambda v: list(v) == [math.inf, math.inf, math.inf]),
    ),
    (
        "inf avoidable by warping",
        lambda: navdtw.dtw(np.array([0, 1, 3]), np.array([0, 2, 3]), distances=MINF),
        Returns(lambda v: v == 1.0 == naive.dtw(naive.node_cost(MINF, [0, 1, 3], [0, 2, 3]))),
    ),
    (
        "inf matrix warping_path",
        lambda: navdtw.warping_path(N0, N1, distances=MINF)[0],
        Returns(lambda v: v == math.inf),
    ),
    (
        "inf everywhere",
        lambda: navdtw.dtw_matrix([N0], [N1], distances=np.full((4, 4), np.inf, np.float32)),
        Returns(lambda v: v.shape == (1, 1) and v[0, 0] == math.inf),
    ),
    (
        "inf matrix evaluate",
        lambda: navdtw.evaluate([np.array([0, 1]), np.array([3])], [np.array([0, 3]), np.array([0])], distances=MINF)[
            "ndtw"
        ],
        Returns(lambda v: v[0] == math.exp(-2.0 / 6.0) and v[1] == 0.0),
    ),
    # -inf and NaN are refused, naming the cell
    (
        "-inf matrix",
        lambda: navdtw.dtw(N0, N1, distances=np.where(M == 3, -np.inf, M)),
        Raises(ValueError, r"^distances\[0, 3\] = -inf is negative"),
    ),
    (
        "NaN in second matrix of a 3-D stack",
        lambda: navdtw.dtw_batch([N0], [N1], distances=np.stack([M, np.where(M == 2, np.nan, M)]), env=[0]),
        Raises(ValueError, r"^distances\[1\]\[0, 2\] is NaN"),
    ),
    (
        "NaN matrix dtw_matrix",
        lambda: navdtw.dtw_matrix([N0], [N1], distances=np.where(M == 1, np.nan, M)),
        Raises(ValueError, r"^distances\[0, 1\] is NaN"),
    ),
    (
        "NaN coordinates evaluate",
        lambda: navdtw.evaluate([A, A], [B, np.array([[0, np.nan]], np.float32)]),
        Raises(ValueError, r"queries\[1\] has a non-finite coordinate at point 0"),
    ),
    (
        "inf coordinates dtw_matrix queries",
        lambda: navdtw.dtw_matrix([A], [B, B, np.array([[0, 0], [np.inf, 0]], np.float32)]),
        Raises(ValueError, r"^queries\[2\] has a non-finite coordinate at point 1"),
    ),
    (
        "NaN reward reference",
        lambda: navdtw.NDTWReward([A, np.array([[np.nan, 0]])]),
        Raises(ValueError, r"^references\[1\] has a non-finite coordinate at point 0"),
    ),
    (
        "inf reward step",
        lambda: navdtw.NDTWReward([A, A]).step(np.array([[0, 0], [np.inf, 0]])),
        Raises(ValueError, r"^points\[1\] is not finite"),
    ),
    (
        "NaN in finished episode ignored",
        lambda: _reward_nan_after_done(),
        Returns(lambda v: v[1] == 0.0 and np.isfinite(v).all()),
    ),
    # huge but finite coordinates: the distance is finite (1e30 m), never inf / 0 nDTW
    # huge but finite coordinates: the engine measures distances in float32, whose squares overflow
    # past ~1.8e19 m, so coordinates beyond +-1e15 m are refused, naming the point (never a silent inf)
    (
        "huge coords dtw",
        lambda: navdtw.dtw(Z1, FAR),
        Raises(ValueError, r"^query has a coordinate beyond \+-1e\+15 m at point 0"),
    ),
    (
        "huge coords ndtw reference",
        lambda: navdtw.ndtw(np.concatenate([Z1, FAR * 3]), FAR),
        Raises(ValueError, r"^reference has a coordinate beyond \+-1e\+15 m at point 1"),
    ),
    (
        "huge coords batch",
        lambda: navdtw.dtw_batch([Z1, Z1], [Z1, FAR], workers=2),
        Raises(ValueError, r"^queries\[1\] has a coordinate beyond \+-1e\+15 m at point 0"),
    ),
    (
        "huge coords prefix",
        lambda: navdtw.dtw_prefix(Z1, np.concatenate([Z1, -FAR])),
        Raises(ValueError, r"^query has a coordinate beyond .* at point 1"),
    ),
    (
        "huge coords warping_path",
        lambda: navdtw.warping_path(FAR, Z1),
        Raises(ValueError, r"^reference has a coordinate beyond"),
    ),
    (
        "huge coords float64",
        lambda: navdtw.dtw(Z1, np.array([[0.0, 1e300]])),
        Raises(ValueError, r"^query has a non-finite coordinate at point 0|^query has a coordinate beyond"),
    ),
    (
        "huge coords evaluate",
        lambda: navdtw.evaluate([A, A], [B, np.array([[0, 2e15]], np.float32)]),
        Raises(ValueError, r"queries\[1\] has a coordinate beyond"),
    ),
    (
        "huge coords reward",
        lambda: navdtw.NDTWReward([A, A]).step(np.array([[0, 0], [0, 1e16]])),
        Raises(ValueError, r"^points\[1\] is not finite or beyond"),
    ),
    (
        "large coords below the limit",
        lambda: navdtw.dtw(Z1, np.array([[1e14, 0]], np.float32)),
        Returns(lambda v: _close(v, 1e14)),
    ),
    # Documented: distances are computed in float32, so below ~1e-19 m they round to 0.
    ("tiny coords", lambda: navdtw.dtw(Z1, np.array([[3e-30, 4e-30]], np.float32)), Returns(lambda v: v == 0.0)),
    (
        "small coords above the underflow",
        lambda: navdtw.dtw(Z1, np.array([[3e-15, 4e-15]], np.float32)),
        Returns(lambda v: _close(v, 5e-15)),
    ),
    (
        "float64 matrix beyond float32",
        lambda: navdtw.dtw(N0, N1, distances=M.astype(np.float64) * 1e39),
        Raises(ValueError, r"^distances\[0, 1\] = 1e\+39 is beyond float32 range"),
    ),
]


def _reward_nan_after_done():
    r = navdtw.NDTWReward([A, A])
    r.step(np.zeros((2, 2)))
    r.done([False, True])
    return r.step(np.array([[1.0, 0.0], [np.nan, np.nan]])).copy()


@pytest.mark.parametrize("call, expect", table(NONFINITE_ROWS))
def test_nonfinite(call, expect):
    run_case(call, expect)


# --------------------------------------------------------------------------------------------
# 6. node ids, matrices (non-symmetric: cost = matrix[reference node, query node])
# --------------------------------------------------------------------------------------------

M10 = np.ones((10, 10), np.float32)

NODE_ROWS = [
    (
        "int64 id > 2**31 in a 10-node matrix",
        lambda: navdtw.dtw(np.array([0, 2**31 + 5]), np.array([1]), distances=M10),
        Raises(ValueError, r"references\[0\] has node id 2147483653 at position 1, outside \[0, 10\)"),
    ),
    (
        "int64 id 2**32 batch",
        lambda: navdtw.dtw_batch([N0, N0], [N1, np.array([2**32])], distances=M10),
        Raises(ValueError, r"queries\[1\] has node id 4294967296 at position 0"),
    ),
    (
        "int64 min id",
        lambda: navdtw.dtw_prefix(N0, np.array([np.iinfo(np.int64).min]), distances=M),
        Raises(ValueError, r"^query has node id -9223372036854775808 at position 0"),
    ),
    (
        "int32 min id batch",
        lambda: navdtw.ndtw_batch([N0.astype(np.int32)], [np.array([1, -(2**31)], np.int32)], distances=M),
        Raises(ValueError, r"queries\[0\] has node id -2147483648 at position 1"),
    ),
    (
        "uint32 max id",
        lambda: navdtw.dtw(np.array([2**32 - 1], np.uint32), N1, distances=M),
        Raises(ValueError, r"node id 4294967295 at position 0"),
    ),
    (
        "uint64 2**63 id",
        lambda: navdtw.dtw_batch([np.array([2**63], np.uint64)], [N1], distances=M),
        Raises(ValueError, r"^references: node id 9223372036854775808 does not fit int64"),
    ),
    (
        "id == V in dtw_matrix",
        lambda: navdtw.dtw_matrix([N0, np.array([4])], [N1], distances=M),
        Raises(ValueError, r"references\[1\] has node id 4 at position 0, outside \[0, 4\)"),
    ),
    (
        "id out of the env's matrix",
        lambda: navdtw.sdtw_batch([N0, N0], [N1, np.array([2])], distances=[M, M[:2, :2]], env=[0, 1]),
        Raises(ValueError, r"references\[1\] has node id 2 at position 2, outside \[0, 2\) of distances\[1\]"),
    ),
    (
        "evaluate bad id",
        lambda: navdtw.evaluate([N0, N0], [N1, np.array([-3])], distances=M),
        Raises(ValueError, r"queries\[1\] has node id -3"),
    ),
    (
        "reward bad reference id",
        lambda: navdtw.NDTWReward([N0, np.array([0, 2**40])], distances=M),
        Raises(ValueError, r"^references\[1\] has node id 1099511627776 out of range"),
    ),
    (
        "reward bad step id",
        lambda: navdtw.NDTWReward([N0, N0], distances=M).step(np.array([0, 4])),
        Raises(ValueError, r"^points\[1\] = 4 is outside \[0, 4\)"),
    ),
    (
        "negative matrix entry in a list",
        lambda: navdtw.dtw_batch([N0], [N1], distances=[M, np.where(M == 1, -1e-9, M)], env=[0]),
        Raises(ValueError, r"^distances\[1\]\[0, 1\] = .* is negative"),
    ),
    (
        "negative zero is fine",
        lambda: navdtw.dtw(N0, N1, distances=np.where(M == 0, -0.0, M).astype(np.float32)),
        Same(lambda: navdtw.dtw(N0, N1, distances=M)),
    ),
    (
        "1x1 matrix",
        lambda: navdtw.dtw(np.array([0, 0]), np.array([0]), distances=np.array([[2.5]])),
        Returns(lambda v: v == 5.0),
    ),
    (
        "repeated node ids",
        lambda: navdtw.dtw(np.array([1, 1, 1]), np.array([1, 2, 2, 2]), distances=M),
        Returns(lambda v: v == 3.0),
    ),
    # non-symmetric matrices: rows are reference nodes, columns query nodes, everywhere
    (
        "non-symmetric dtw",
        lambda: navdtw.dtw(N2, N0, distances=MA),
        Returns(lambda v: v == naive.dtw(naive.node_cost(MA, N2, N0))),
    ),
    (
        "non-symmetric swap = transpose",
        lambda: navdtw.dtw(N0, N2, distances=MA.T),
        Same(lambda: navdtw.dtw(N2, N0, distances=MA)),
    ),
    (
        "non-symmetric is not symmetric",
        lambda: navdtw.dtw(N0, N2, distances=MA) != navdtw.dtw(N2, N0, distances=MA),
        Returns(lambda v: v),
    ),
    (
        "non-symmetric band",
        lambda: navdtw.dtw(N2, N0, distances=MA, window=0),
        Returns(lambda v: v == naive.dtw_band(naive.node_cost(MA, N2, N0), 0)),
    ),
    (
        "non-symmetric prefix",
        lambda: navdtw.dtw_prefix(N2, N0, distances=MA),
        Returns(lambda v: np.array_equal(v, naive.dtw_prefix(naive.node_cost(MA, N2, N0)))),
    ),
    (
        "non-symmetric warping_path",
        lambda: navdtw.warping_path(N2, N0, distances=MA),
        Returns(
            lambda v: (
                v[0] == naive.path_cost(naive.node_cost(MA, N2, N0), v[1]) == naive.dtw(naive.node_cost(MA, N2, N0))
            )
        ),
    ),
    (
        "non-symmetric batch and matrix",
        lambda: (
            navdtw.dtw_batch([N2, N0], [N0, N2], distances=MA, workers=2),
            navdtw.dtw_matrix([N2, N0], [N0, N2], distances=MA)[[0, 1], [0, 1]],
        ),
        Returns(lambda v: np.array_equal(v[0], v[1]) and v[0][0] == naive.dtw(naive.node_cost(MA, N2, N0))),
    ),
    (
        "non-symmetric sdtw end distance = M[r_last, q_last]",
        lambda: navdtw.sdtw(np.array([3]), np.array([0]), distances=MA, threshold=2.0),
        Returns(lambda v: v == math.exp(-1.5 / 2.0)),
    ),
    (
        "non-symmetric sdtw other way fails",
        lambda: navdtw.sdtw(np.array([0]), np.array([3]), distances=MA, threshold=0.9),
        Returns(lambda v: v == 0.0),
    ),
    (
        "non-symmetric sdtw_batch",
        lambda: navdtw.sdtw_batch(
            [np.array([3]), np.array([0])], [np.array([0]), np.array([3])], distances=MA, threshold=2.0
        ),
        Returns(lambda v: v[0] == math.exp(-1.5 / 2.0) and v[1] == math.exp(-1.0 / 2.0)),
    ),
]


@pytest.mark.parametrize("call, expect", table(NODE_ROWS))
def test_node_ids_and_matrices(call, expect):
    run_case(call, expect)


# --------------------------------------------------------------------------------------------
# 7. offsets, pairs, env, thresholds, window / radius / workers, duplicates
# --------------------------------------------------------------------------------------------

V5 = np.concatenate([A, B])

ARG_ROWS = [
    (
        "offsets claim 2**40 points",
        lambda: Paths(V5, np.array([0, 3, 2**40])),
        Raises(ValueError, r"^paths: offsets\[-1\] = 1099511627776 but values has 5 rows"),
    ),
    (
        "offsets claim 2**40 points, then shrink",
        lambda: Paths(V5, np.array([0, 2**40, 5])),
        Raises(ValueError, r"^paths: offsets must not decrease \(offsets\[2\] < offsets\[1\]\)"),
    ),
    (
        "offsets uint64 max",
        lambda: Paths(V5, np.array([0, 2**64 - 1], np.uint64)),
        Raises(ValueError, r"^paths: offsets"),
    ),
    (
        "offsets int64 max",
        lambda: Paths(V5, np.array([0, 2**63 - 1])),
        Raises(ValueError, r"^paths: offsets\[-1\] = 9223372036854775807"),
    ),
    (
        "offsets negative start",
        lambda: Paths(V5, [-5, 5]),
        Raises(ValueError, r"^paths: offsets\[0\] must be 0, got -5"),
    ),
    (
        "offsets end short",
        lambda: Paths(V5, [0, 2, 4], name="queries"),
        Raises(ValueError, r"^queries: offsets\[-1\] = 4 but values has 5"),
    ),
    (
        "offsets non-monotonic middle",
        lambda: Paths(V5, [0, 3, 1, 5]),
        Raises(ValueError, r"offsets\[2\] < offsets\[1\]"),
    ),
    (
        "pairs 2**40",
        lambda: navdtw.dtw_batch([A], [B], pairs=[[0, 0], [0, 2**40]]),
        Raises(ValueError, r"^pairs\[1\] = .*query index out of range for 1"),
    ),
    (
        "pairs 2**31 reference",
        lambda: navdtw.ndtw_batch([A], [B], pairs=np.array([[2**31, 0]])),
        Raises(ValueError, r"^pairs\[0\] = .*reference index out of range for 1 reference"),
    ),
    (
        "pairs int32 min",
        lambda: navdtw.sdtw_batch([A], [B], pairs=np.array([[0, 0], [0, 0], [-(2**31), 0]], np.int32)),
        Raises(ValueError, r"^pairs\[2\]"),
    ),
    (
        "pairs uint64 max",
        lambda: navdtw.dtw_batch([A], [B], pairs=np.array([[0, 2**64 - 1]], np.uint64)),
        Raises(ValueError, r"^pairs holds 18446744073709551615, beyond the int64 range"),
    ),
    (
        "pairs uint64 2**63",  # numpy 1.x compared it with 2**63 - 1 in float64 and let it through
        lambda: navdtw.dtw_batch([A], [B], pairs=np.array([[0, 2**63]], np.uint64)),
        Raises(ValueError, r"^pairs holds 9223372036854775808, beyond the int64 range"),
    ),
    (
        "env uint64 max",
        lambda: navdtw.dtw_batch([N0], [N1], distances=[M], env=np.array([2**64 - 1], np.uint64)),
        Raises(ValueError, r"^env holds 18446744073709551615, beyond the int64 range"),
    ),
    (
        "env scalar broadcasts",
        lambda: navdtw.dtw_batch([N0, N0], [N1, N1], distances=[M, MA], env=1),
        Same(lambda: navdtw.dtw_batch([N0, N0], [N1, N1], distances=[M, MA], env=[1, 1])),
    ),
    (
        "env scalar out of range",
        lambda: navdtw.dtw_batch([N0, N0], [N1, N1], distances=[M, MA], env=2),
        Raises(ValueError, r"^env\[0\] = 2 is out of range for 2 distance matrices"),
    ),
    (
        "env with one matrix",
        lambda: navdtw.dtw_batch([N0], [N1], distances=M, env=[1]),
        Raises(ValueError, r"^env\[0\] = 1 is out of range for 1"),
    ),
    (
        "env 2**40",
        lambda: navdtw.evaluate([N0, N0], [N1, N1], distances=[M, M], env=[0, 2**40]),
        Raises(ValueError, r"^env\[1\] = 1099511627776 is out of range"),
    ),
    (
        "env wrong length with pairs",
        lambda: navdtw.dtw_batch([N0], [N1, N0], distances=[M, M], pairs=[[0, 1]], env=[0, 0]),
        Raises(ValueError, r"^env must have one entry per pair \(1\)"),
    ),
    (
        "threshold 0 evaluate",
        lambda: navdtw.evaluate([A], [B], threshold=0),
        Raises(ValueError, r"^threshold must be finite and > 0"),
    ),
    (
        "threshold -3 reward",
        lambda: navdtw.NDTWReward([A], threshold=-3),
        Raises(ValueError, r"^threshold must be finite and > 0"),
    ),
    (
        "threshold -0.0",
        lambda: navdtw.ndtw(A, B, threshold=-0.0),
        Raises(ValueError, r"^threshold must be finite and > 0"),
    ),
    ("threshold tiny subnormal is legal", lambda: navdtw.ndtw(A, A, threshold=5e-324), Returns(lambda v: v == 1.0)),
    (
        "threshold 0 random_baseline",
        lambda: navdtw.random_baseline([], None, threshold=0),
        Raises(ValueError, r"^threshold must be finite"),
    ),
    (
        "n 0 random_baseline",
        lambda: navdtw.random_baseline([], None, n=0),
        Raises(ValueError, r"^n must be a positive integer, got 0"),
    ),
    (
        "n -1 random_baseline",
        lambda: navdtw.random_baseline([], None, n=-1),
        Raises(ValueError, r"^n must be a positive integer"),
    ),
    (
        "chunk 0 random_baseline",
        lambda: navdtw.random_baseline([], None, chunk=0),
        Raises(ValueError, r"^chunk must be a positive integer"),
    ),
    (
        "graphs None random_baseline",
        lambda: navdtw.random_baseline([], None, n=1),
        Raises(TypeError, r"^graphs must be a navdtw.GraphSet"),
    ),
    (
        "seed -1 random_baseline",
        lambda: navdtw.random_baseline([], None, n=1, seed=-1),
        Raises(ValueError, r"^seed must be an integer in \[0, 2\*\*64\)"),
    ),
    (
        "success_reward negative",
        lambda: navdtw.NDTWReward([A], success_reward=-1),
        Raises(ValueError, r"^success_reward must be"),
    ),
    ("window 2**62 is exact", lambda: navdtw.dtw(A, B, window=2**62), Same(lambda: navdtw.dtw(A, B))),
    (
        "radius 2**62 is exact",
        lambda: navdtw.dtw_batch([A], [B], radius=2**62),
        Same(lambda: navdtw.dtw_batch([A], [B])),
    ),
    ("window 2**70 is exact", lambda: navdtw.dtw(A, B, window=2**70), Same(lambda: navdtw.dtw(A, B))),
    (
        "radius 2**70 batch",
        lambda: navdtw.dtw_batch([A], [B], radius=2**70),
        Same(lambda: navdtw.dtw_batch([A], [B], radius=2**62)),
    ),
    (
        "workers 2**31",
        lambda: navdtw.dtw_batch([A], [B], workers=2**31),
        Raises(ValueError, r"^workers must be -1 \(all cores\) or .*4096.*got 2147483648"),
    ),
    (
        "workers 10000",
        lambda: navdtw.evaluate([A], [B], workers=10000),
        Raises(ValueError, r"^workers must be -1 \(all cores\) or .*4096.*got 10000"),
    ),
    (
        "workers 4096 is fine",
        lambda: navdtw.dtw_batch([A, B] * 3, [B, A] * 3, workers=4096),
        Same(lambda: navdtw.dtw_batch([A, B] * 3, [B, A] * 3, workers=1)),
    ),
    # duplicates
    (
        "duplicated pairs",
        lambda: navdtw.dtw_batch([A, B], [B], pairs=[[1, 0], [1, 0], [0, 0], [1, 0]], workers=2),
        Returns(lambda v: v[0] == v[1] == v[3] == navdtw.dtw(B, B) and v[2] == navdtw.dtw(A, B)),
    ),
    (
        "same Paths object twice",
        lambda: (lambda P: navdtw.dtw_matrix(P, P))(Paths.from_list([A, B])),
        Returns(lambda v: v[0, 0] == 0 and v[1, 1] == 0 and v[0, 1] == v[1, 0]),
    ),
    (
        "duplicated episode ids in evaluate",
        lambda: len(navdtw.evaluate([A, A], [B, B], ids=["x", "x"])),
        Returns(lambda v: v == 2),
    ),
    (
        "ids length mismatch",
        lambda: navdtw.evaluate([A, A], [B, B], ids=["x"]),
        Raises(ValueError, r"^ids has 1 entries for 2 episodes"),
    ),
    (
        "reward reset duplicated indices",
        lambda: navdtw.NDTWReward([A, A]).reset([1, 1], references=[B, A]),
        Raises(ValueError, r"^reset: episode 1 is given twice"),
    ),
    (
        "reward reset duplicated indices without references",
        lambda: navdtw.NDTWReward([A, A]).reset([1, 1, -1]),
        Returns(lambda v: v is None),
    ),  # restarting an episode twice is harmless
    (
        "Paths negative index out of range",
        lambda: Paths.from_list([A, B, A])[-4],
        Raises(IndexError, r"^path index -4 out of range for 3 paths"),
    ),
    ("Paths bool index", lambda: Paths.from_list([A, B])[True], Raises(TypeError, r"^Paths index must be an integer")),
    ("Paths.take of a float index", lambda: Paths.from_list([A, B]).take([0.5]), Raises(TypeError, r"integer")),
    ("Paths slice past the end", lambda: len(Paths.from_list([A, B])[5:9]), Returns(lambda v: v == 0)),
    (
        "Paths slice with step",
        lambda: navdtw.dtw_batch(Paths.from_list([A, B, A])[::-2], [A, A]),
        Same(lambda: navdtw.dtw_batch([A, A], [A, A])),
    ),
    ("evaluate ids not a sequence", lambda: navdtw.evaluate([A], [B], ids=5), Raises(TypeError, r"^ids")),
    (
        "evaluate shortest_distance wrong length, paper convention",
        lambda: navdtw.evaluate([A], [B], shortest_distance=[1.0, 2.0]),
        Raises(ValueError, r"^shortest_distance must have one entry per episode \(1\)"),
    ),
    (
        "evaluate shortest_distance wrong length, vlnce",
        lambda: navdtw.evaluate([A], [B], shortest_distance=[1.0, 2.0], convention="vlnce"),
        Raises(ValueError, r"^shortest_distance must have one entry per episode \(1\)"),
    ),
    (
        "evaluate shortest_distance NaN",
        lambda: navdtw.evaluate([A], [B], shortest_distance=[np.nan], convention="vlnce"),
        Raises(ValueError, r"^shortest_distance\[0\] is negative or NaN"),
    ),
    (
        "evaluate stopped floats",
        lambda: navdtw.evaluate([A], [B], stopped=[0.5]),
        Raises(TypeError, r"^stopped must be a boolean mask"),
    ),
    (
        "reward reset out of range",
        lambda: navdtw.NDTWReward([A, A]).reset([2]),
        Raises(IndexError, r"^reset: episode index out of range"),
    ),
]


@pytest.mark.parametrize("call, expect", table(ARG_ROWS))
def test_arguments(call, expect):
    run_case(call, expect)


# --------------------------------------------------------------------------------------------
# 8. crash-prone and memory-hungry inputs, each in its own process
# --------------------------------------------------------------------------------------------

# Never let a case eat the machine: a 3 GiB address-space limit where the OS has one (`resource`
# is POSIX-only; macOS may refuse RLIMIT_AS). Under ASan (tools/sanitize.sh) the limit would
# break the sanitizer's shadow memory. The expected errors do not depend on the limit.
_LIMIT_AS = (
    ""
    if "asan" in os.environ.get("LD_PRELOAD", "")
    else """
try:
    import resource
    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
except (ImportError, AttributeError, ValueError, OSError):
    pass
"""
)

SUBPROCESS = {
    # name: (code, expected exception name, regex on its message)
    "warping_path 100k x 100k points": (
        """
        z = np.zeros((100_000, 2), np.float32)
        navdtw.warping_path(z, z)
    """,
        "ValueError",
        r"a warping path of 100000 x 100000 points .* over the 4 GiB limit",
    ),
    "warping_path 100k x 100k nodes": (
        """
        z = np.zeros(100_000, np.int64)
        navdtw.warping_path(z, z, distances=np.zeros((1, 1), np.float32))
    """,
        "ValueError",
        r"100000 x 100000 points .* 4 GiB",
    ),
    "warping_path 65537 x 65537 (just over 2**32)": (
        """
        z = np.zeros((65_537, 1), np.float32)
        navdtw.warping_path(z, z)
    """,
        "ValueError",
        r"65537 x 65537 points",
    ),
    "dtw_matrix of 2**40 outputs (points)": (
        """
        n = 1 << 20
        P = navdtw.Paths(np.zeros((n, 2), np.float32), np.arange(n + 1))
        navdtw.dtw_matrix(P, P, workers=1)
    """,
        "MemoryError|ValueError",
        r"(8\.00 TiB|1099511627776)",
    ),
    "dtw_matrix of 2**40 outputs (nodes)": (
        """
        n = 1 << 20
        P = navdtw.Paths(np.zeros(n, np.int64), np.arange(n + 1))
        navdtw.dtw_matrix(P, P, distances=np.zeros((1, 1), np.float32), workers=2)
    """,
        "MemoryError|ValueError",
        r"(8\.00 TiB|1099511627776)",
    ),
    "pairs far out of range, 4 threads": (
        """
        a = np.zeros((600, 3), np.float32)
        P = navdtw.Paths(a, np.arange(0, 601, 6))
        p = np.zeros((20000, 2), np.int64)
        p[17321, 1] = 2**62
        navdtw.dtw_batch(P, P, pairs=p, workers=4)
    """,
        "ValueError",
        r"^pairs\[17321\] = .*query index out of range for 100",
    ),
    "node id 2**62 deep in a threaded batch": (
        """
        v = np.zeros(3000, np.int64); v[2999] = 2**62
        P = navdtw.Paths(v, np.arange(0, 3001, 3))
        navdtw.sdtw_batch(P, P, distances=np.ones((5, 5), np.float32), workers=3)
    """,
        "ValueError",
        r"references\[999\] has node id 4611686018427387904 at position 2",
    ),
    "int32 min node id, band, threads": (
        """
        v = np.zeros(30, np.int32); v[17] = -2**31
        P = navdtw.Paths(v, np.arange(0, 31, 3))
        navdtw.dtw_batch(P, P, distances=np.ones((5, 5), np.float32), window=1, workers=2)
    """,
        "ValueError",
        r"references\[5\] has node id -2147483648 at position 2",
    ),
    "zero-stride huge coordinate path": (
        """
        big = np.lib.stride_tricks.as_strided(np.zeros(2, np.float32), shape=(10**6, 2), strides=(0, 4))
        print(navdtw.dtw(big[:2000], big[:3]), navdtw.dtw_prefix(big[:5], big[:1000])[-1])
        navdtw.warping_path(big, big)
    """,
        "ValueError",
        r"1000000 x 1000000 points",
    ),
    "reward step after hostile reset": (
        """
        r = navdtw.NDTWReward([np.array([0, 1, 2])], distances=np.ones((3, 3), np.float32))
        r.step(np.array([0]))
        try:
            r.reset([0], references=[np.array([5])])
        except ValueError as e:
            print("reset refused:", e)
        r.step(np.array([7]))
    """,
        "ValueError",
        r"points\[0\] = 7 is outside \[0, 3\)",
    ),
}


def _run(code: str) -> subprocess.CompletedProcess:
    prelude = "import numpy as np\nimport navdtw\n" + textwrap.dedent(_LIMIT_AS)
    return subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(code)], capture_output=True, text=True, timeout=300
    )


@pytest.mark.parametrize("name", sorted(SUBPROCESS))
def test_isolated(name):
    code, exc, match = SUBPROCESS[name]
    proc = _run(code)
    assert proc.returncode >= 0, f"killed by signal {signal.Signals(-proc.returncode).name}\n{proc.stderr[-3000:]}"
    assert proc.returncode == 1, f"returncode {proc.returncode}\n{proc.stdout}\n{proc.stderr[-3000:]}"
    last = proc.stderr.strip().splitlines()[-1]
    name_, _, message = last.partition(": ")
    assert name_.rsplit(".", 1)[-1].lstrip("_").replace("Array", "") in exc.split("|"), last
    assert re.search(match, message), last


def test_battery_size():
    """The battery: every table row plus the isolated cases (reported by the hardening issue)."""
    rows = DTYPE_ROWS + NDIM_ROWS + VIEW_ROWS + EMPTY_ROWS + NONFINITE_ROWS + NODE_ROWS + ARG_ROWS
    assert len(rows) + len(SUBPROCESS) >= 244
