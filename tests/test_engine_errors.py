"""Bad input gets a clear ValueError / TypeError that names the argument (and, in a batch, the index
of the bad path); the low-level ``navdtw._core`` entry points raise instead of crashing."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import navdtw
from navdtw import Paths, _core

A = np.array([[0.0, 0.0], [1.0, 0.0], [2.0, 1.0]], np.float32)
B = np.array([[0.0, 1.0], [2.0, 2.0]], np.float32)
M = np.array([[0, 1, 2, 3], [1, 0, 1, 2], [2, 1, 0, 1], [3, 2, 1, 0]], np.float32)
N0 = np.array([0, 1, 2])
N1 = np.array([3, 2])
EMPTY2 = np.zeros((0, 2), np.float32)


def _off(*lengths):
    return np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)


# --------------------------------------------------------------------------------------------
# empty paths, shapes, dimensions
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fn", [navdtw.dtw, navdtw.ndtw, navdtw.sdtw, navdtw.warping_path, navdtw.dtw_prefix])
def test_empty_single_path(fn):
    with pytest.raises(ValueError, match=r"^reference is empty"):
        fn(EMPTY2, B)
    with pytest.raises(ValueError, match=r"^query is empty"):
        fn(A, EMPTY2)
    with pytest.raises(ValueError, match=r"^query is empty"):
        fn(N0, np.array([], np.int64), distances=M)


@pytest.mark.parametrize("fn", [navdtw.dtw_batch, navdtw.ndtw_batch, navdtw.sdtw_batch, navdtw.dtw_matrix])
def test_empty_path_in_batch_names_index(fn):
    with pytest.raises(ValueError, match=r"queries\[3\] is empty"):
        fn([A] * 5, [B, B, B, EMPTY2, B])
    with pytest.raises(ValueError, match=r"references\[1\] is empty"):
        fn([A, EMPTY2], [B, B])
    with pytest.raises(ValueError, match=r"queries\[2\] is empty"):
        fn([N0] * 3, [N1, N1, np.array([], np.int64)], distances=M)


def test_empty_batch():
    with pytest.raises(ValueError, match=r"references: empty batch"):
        navdtw.dtw_batch([], [B])


def test_empty_path_via_offsets():
    refs = Paths(np.concatenate([A, A]), [0, 3, 3, 6])
    with pytest.raises(ValueError, match=r"references\[1\] is empty"):
        navdtw.dtw_batch(refs, [B, B, B])


def test_wrong_ndim():
    with pytest.raises(ValueError, match=r"reference: .*got 3-D"):
        navdtw.dtw(np.zeros((2, 2, 2), np.float32), B)
    with pytest.raises(ValueError, match=r"query: .*got 3-D"):
        navdtw.dtw(A, np.zeros((2, 2, 2), np.float32))
    with pytest.raises(ValueError, match=r"queries: .*got 3-D"):
        navdtw.dtw_batch([A], [np.zeros((2, 2, 2), np.float32)])
    with pytest.raises(ValueError, match=r"reference: coordinates must have at least one dimension"):
        navdtw.dtw(np.zeros((3, 0), np.float32), np.zeros((3, 0), np.float32))


def test_mismatched_dimensions():
    with pytest.raises(ValueError, match=r"reference has 2 dimensions but query has 3"):
        navdtw.dtw(A, np.zeros((4, 3), np.float32))
    with pytest.raises(ValueError, match=r"reference has 2 dimensions but query has 3"):
        navdtw.warping_path(A, np.zeros((4, 3), np.float32))
    with pytest.raises(ValueError, match=r"references are 2-D but queries are 3-D"):
        navdtw.dtw_batch([A], [np.zeros((4, 3), np.float32)])
    with pytest.raises(ValueError, match=r"queries\[1\] has 3 dimensions but queries\[0\] has 2"):
        navdtw.dtw_batch([A, A], [B, np.zeros((4, 3), np.float32)])


def test_mixed_modes():
    with pytest.raises(ValueError, match=r"both be node paths .* or both coordinates"):
        navdtw.dtw(N0, B, distances=M)
    with pytest.raises(ValueError, match=r"node-index paths need distances="):
        navdtw.dtw(N0, N1)
    with pytest.raises(ValueError, match=r"node-index paths need distances="):
        navdtw.dtw_batch([N0], [N1])
    with pytest.raises(ValueError, match=r"distances= is for node-index paths"):
        navdtw.dtw(A, B, distances=M)
    with pytest.raises(ValueError, match=r"references: mixes node paths"):
        navdtw.dtw_batch([N0, A], [N1, N1], distances=M)
    with pytest.raises(ValueError, match=r"env= selects distance matrices"):
        navdtw.dtw_batch([A], [B], env=[0])


# --------------------------------------------------------------------------------------------
# non-finite coordinates
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_nonfinite_coordinates(bad):
    q = np.array([[0.0, 0.0], [1.0, 1.0], [2.0, bad]], np.float32)
    with pytest.raises(ValueError, match=r"^query has a non-finite coordinate at point 2"):
        navdtw.dtw(A, q)
    with pytest.raises(ValueError, match=r"^reference has a non-finite coordinate at point 2"):
        navdtw.ndtw(q, A)
    with pytest.raises(ValueError, match=r"^query has a non-finite coordinate at point 2"):
        navdtw.warping_path(A, q)
    with pytest.raises(ValueError, match=r"^query has a non-finite coordinate at point 2"):
        navdtw.dtw_prefix(A, q)
    with pytest.raises(ValueError, match=r"queries\[2\] has a non-finite coordinate at point 2"):
        navdtw.dtw_batch([A, A, A], [B, B, q])
    with pytest.raises(ValueError, match=r"references\[1\] has a non-finite coordinate at point 2"):
        navdtw.sdtw_batch([A, q], [B, B])
    with pytest.raises(ValueError, match=r"references\[1\] has a non-finite coordinate at point 2"):
        navdtw.dtw_matrix([A, q], [B])


def test_float64_overflowing_float32_is_rejected():
    # 1e39 is finite in float64 but inf once stored as float32 (numpy warns about the cast; see
    # test_float64_overflow_without_warning for that part)
    q = np.array([[0.0, 0.0], [1e39, 0.0]], np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.raises(ValueError, match=r"query has a non-finite coordinate at point 1"):
            navdtw.dtw(A, q)
        with pytest.raises(ValueError, match=r"queries\[0\] has a non-finite coordinate at point 1"):
            navdtw.dtw_batch([A], [q])


def test_float64_overflow_without_warning():
    q = np.array([[0.0, 0.0], [1e39, 0.0]], np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=r"query has a non-finite coordinate at point 1"):
            navdtw.dtw(A, q)


# --------------------------------------------------------------------------------------------
# node ids
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [-1, 4, 10**9])
def test_bad_node_ids_single(bad):
    q = np.array([0, bad, 1])
    with pytest.raises(ValueError, match=rf"queries\[0\] has node id {bad} at position 1, outside \[0, 4\)"):
        navdtw.dtw(N0, q, distances=M)
    with pytest.raises(ValueError, match=rf"references\[0\] has node id {bad} at position 1"):
        navdtw.ndtw(q, N0, distances=M)
    with pytest.raises(ValueError, match=rf"node id {bad} at position 1"):
        navdtw.sdtw(N0, q, distances=M)
    with pytest.raises(ValueError, match=rf"^query has node id {bad} at position 1, outside \[0, 4\)"):
        navdtw.warping_path(N0, q, distances=M)
    with pytest.raises(ValueError, match=rf"^reference has node id {bad} at position 1"):
        navdtw.dtw_prefix(q, N0, distances=M)


@pytest.mark.parametrize("fn", [navdtw.dtw_batch, navdtw.ndtw_batch, navdtw.sdtw_batch])
@pytest.mark.parametrize("bad", [-1, 4])
def test_bad_node_ids_batch(fn, bad):
    q = np.array([1, 1, bad])
    with pytest.raises(ValueError, match=rf"queries\[2\] has node id {bad} at position 2"):
        fn([N0] * 3, [N1, N1, q], distances=M)
    with pytest.raises(ValueError, match=rf"references\[1\] has node id {bad} at position 2"):
        fn([N0, q], [N1, N1], distances=M)
    # with env, the message names the matrix whose range was exceeded
    small = M[:2, :2].copy()
    with pytest.raises(
        ValueError, match=r"queries\[1\] has node id 3 at position 0, outside \[0, 2\) of distances\[1\]"
    ):
        fn([N0, np.array([0])], [N1, N1], distances=[M, small], env=[0, 1])


def test_bad_node_ids_matrix_and_int32():
    with pytest.raises(ValueError, match=r"queries\[1\] has node id 9"):
        navdtw.dtw_matrix([N0], [N1, np.array([9])], distances=M)
    with pytest.raises(ValueError, match=r"node id -5"):
        navdtw.dtw(N0.astype(np.int32), np.array([-5], np.int32), distances=M)


def test_uint64_node_id_too_large():
    with pytest.raises(ValueError, match=r"reference: node id 18446744073709551615 does not fit int64"):
        navdtw.dtw(np.array([2**64 - 1], np.uint64), N1, distances=M)


# --------------------------------------------------------------------------------------------
# distance matrices, env
# --------------------------------------------------------------------------------------------


def test_bad_distance_matrix():
    with pytest.raises(ValueError, match=r"distances must be a square \[V, V\] matrix, got shape \(2, 3\)"):
        navdtw.dtw(N0, N1, distances=np.ones((2, 3), np.float32))
    with pytest.raises(ValueError, match=r"distances must be a square"):
        navdtw.dtw_batch([N0], [N1], distances=np.ones(4, np.float32))
    neg = M.copy()
    neg[1, 2] = -0.5
    with pytest.raises(ValueError, match=r"distances\[1, 2\] = -0.5 is negative"):
        navdtw.dtw(N0, N1, distances=neg)
    nan = M.copy()
    nan[3, 0] = np.nan
    with pytest.raises(ValueError, match=r"distances\[3, 0\] is NaN"):
        navdtw.dtw_batch([N0], [N1], distances=nan)
    with pytest.raises(ValueError, match=r"distances\[1\]\[3, 0\] is NaN"):
        navdtw.dtw_batch([N0], [N1], distances=[M, nan], env=[0])
    with pytest.raises(ValueError, match=r"distances\[1\] must be a square"):
        navdtw.dtw_batch([N0], [N1], distances=[M, np.ones((4, 3))], env=[0])
    with pytest.raises(ValueError, match=r"distances is empty"):
        navdtw.dtw(N0, N1, distances=np.zeros((0, 0), np.float32))
    with pytest.raises(ValueError, match=r"distances is an empty sequence"):
        navdtw.dtw_batch([N0], [N1], distances=[])
    with pytest.raises(TypeError, match=r"distances must be a real \[V, V\] matrix, got dtype bool"):
        navdtw.dtw(N0, N1, distances=M > 1)
    with pytest.raises(TypeError, match=r"distances must be a real"):
        navdtw.dtw(N0, N1, distances=M.astype(str))
    with pytest.raises(ValueError, match=r"single-pair functions take one \[V, V\] distance matrix"):
        navdtw.dtw(N0, N1, distances=[M, M])
    with pytest.raises(ValueError, match=r"dtw_matrix takes one \[V, V\] distance matrix"):
        navdtw.dtw_matrix([N0], [N1], distances=[M])


def test_bad_env():
    refs, qrys = [N0] * 3, [N1] * 3
    with pytest.raises(ValueError, match=r"env\[2\] = 3 is out of range for 3 distance matrices"):
        navdtw.dtw_batch(refs, qrys, distances=[M, M, M], env=[0, 1, 3])
    with pytest.raises(ValueError, match=r"env\[1\] = -1 is out of range"):
        navdtw.ndtw_batch(refs, qrys, distances=[M, M], env=[0, -1, 0])
    with pytest.raises(ValueError, match=r"env must have one entry per pair \(3\), got shape \(2,\)"):
        navdtw.dtw_batch(refs, qrys, distances=[M, M], env=[0, 1])
    with pytest.raises(ValueError, match=r"env must have one entry per pair \(2\)"):
        navdtw.dtw_batch(refs, qrys, distances=[M, M], env=[0, 1, 1], pairs=[[0, 0], [1, 2]])
    with pytest.raises(ValueError, match=r"env must have one entry per pair"):
        navdtw.dtw_batch(refs, qrys, distances=[M, M], env=[[0, 1, 1]])
    with pytest.raises(ValueError, match=r"a sequence of distance matrices needs env="):
        navdtw.sdtw_batch(refs, qrys, distances=[M, M])
    with pytest.raises(TypeError, match=r"env must be an integer array"):
        navdtw.dtw_batch(refs, qrys, distances=[M, M], env=[0.0, 1.0, 0.0])


# --------------------------------------------------------------------------------------------
# threshold, window, radius, workers
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("threshold", [0.0, -1.0, float("nan"), float("inf"), -float("inf")])
def test_bad_threshold(threshold):
    for call in (
        lambda: navdtw.ndtw(A, B, threshold=threshold),
        lambda: navdtw.sdtw(A, B, threshold=threshold),
        lambda: navdtw.ndtw_batch([A], [B], threshold=threshold),
        lambda: navdtw.sdtw_batch([A], [B], threshold=threshold),
    ):
        with pytest.raises(ValueError, match=r"threshold must be finite and > 0"):
            call()


@pytest.mark.parametrize("threshold", ["3", None, True, [3.0]])
def test_threshold_type(threshold):
    with pytest.raises(TypeError, match=r"threshold must be a number"):
        navdtw.ndtw(A, B, threshold=threshold)
    with pytest.raises(TypeError, match=r"threshold must be a number"):
        navdtw.sdtw_batch([A], [B], threshold=threshold)


def test_bad_window_and_radius():
    with pytest.raises(ValueError, match=r"window must be >= 0, got -1"):
        navdtw.dtw(A, B, window=-1)
    with pytest.raises(ValueError, match=r"window must be >= 0"):
        navdtw.dtw_batch([A], [B], window=-3)
    with pytest.raises(ValueError, match=r"radius must be >= 0, got -2"):
        navdtw.ndtw(A, B, radius=-2)
    with pytest.raises(ValueError, match=r"radius must be >= 0"):
        navdtw.dtw_matrix([A], [B], radius=-1)
    with pytest.raises(ValueError, match=r"window and radius are mutually exclusive"):
        navdtw.dtw(A, B, window=1, radius=1)
    with pytest.raises(ValueError, match=r"window and radius are mutually exclusive"):
        navdtw.sdtw_batch([A], [B], window=0, radius=0)
    with pytest.raises(ValueError, match=r"radius \(FastDTW\) needs coordinate paths"):
        navdtw.dtw(N0, N1, distances=M, radius=1)
    with pytest.raises(ValueError, match=r"radius \(FastDTW\) needs coordinate paths"):
        navdtw.dtw_batch([N0], [N1], distances=M, radius=0)
    for bad in (1.0, "2", True):
        with pytest.raises(TypeError, match=r"window must be a non-negative integer or None"):
            navdtw.dtw(A, B, window=bad)
        with pytest.raises(TypeError, match=r"radius must be a non-negative integer or None"):
            navdtw.dtw(A, B, radius=bad)


@pytest.mark.parametrize("workers", [0, -2])
def test_bad_workers_value(workers):
    with pytest.raises(ValueError, match=r"workers must be -1 \(all cores\) or >= 1"):
        navdtw.dtw_batch([A], [B], workers=workers)


@pytest.mark.parametrize("workers", [1.5, "2", None, True])
def test_bad_workers_type(workers):
    with pytest.raises(TypeError, match=r"workers must be an integer"):
        navdtw.dtw_matrix([A], [B], workers=workers)


# --------------------------------------------------------------------------------------------
# dtypes
# --------------------------------------------------------------------------------------------


def test_bad_dtypes():
    with pytest.raises(TypeError, match=r"reference: paths must hold integer node ids .*got dtype bool"):
        navdtw.dtw(np.array([True, False]), N1, distances=M)
    with pytest.raises(TypeError, match=r"reference: ragged or non-numeric path"):
        navdtw.dtw(np.array([[0.0, 1.0], None], dtype=object), B)
    with pytest.raises(TypeError, match=r"query: paths must hold .*got dtype <U"):
        navdtw.dtw(N0, np.array(["a", "b"]), distances=M)
    with pytest.raises(TypeError, match=r"reference: paths must hold .*complex"):
        navdtw.dtw(np.ones((2, 2), np.complex64), B)
    with pytest.raises(TypeError, match=r"references\[1\]: ragged or non-numeric"):
        navdtw.dtw_batch([A, np.array([[0.0, 1.0], [None, 2.0]], dtype=object)], [B, B])
    with pytest.raises(TypeError, match=r"queries: paths must hold .*got dtype bool"):
        navdtw.dtw_batch([N0], [np.array([True])], distances=M)
    with pytest.raises(TypeError, match=r"references: paths must hold .*got dtype <U"):
        navdtw.dtw_batch([np.array(["x"])], [N1], distances=M)


def test_one_d_float_path_is_ambiguous():
    with pytest.raises(TypeError, match=r"reference: a 1-D float array is ambiguous"):
        navdtw.dtw(np.array([1.0, 2.0]), np.array([1.0]))
    with pytest.raises(TypeError, match=r"query: a 1-D float array is ambiguous"):
        navdtw.dtw(N0, np.array([1.0]), distances=M)
    with pytest.raises(TypeError, match=r"queries: a 1-D float array is ambiguous"):
        navdtw.dtw_batch([N0], [np.array([1.0])], distances=M)


def test_batch_arguments_that_are_not_batches():
    with pytest.raises(TypeError, match=r"references: a single array is ambiguous for a batch"):
        navdtw.dtw_batch(A, [B])
    with pytest.raises(TypeError, match=r"queries must be navdtw.Paths or a sequence of paths"):
        navdtw.dtw_batch([A], 3)
    with pytest.raises(TypeError, match=r"reference must be a single path"):
        navdtw.dtw(Paths.from_list([A]), B)


# --------------------------------------------------------------------------------------------
# pairs, offsets, lengths
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fn", [navdtw.dtw_batch, navdtw.ndtw_batch, navdtw.sdtw_batch])
def test_bad_pairs(fn):
    refs, qrys = [A, A], [B, B, B]
    with pytest.raises(ValueError, match=r"pairs\[1\] = .*query index out of range for 3"):
        fn(refs, qrys, pairs=[[0, 0], [1, 3]])
    with pytest.raises(ValueError, match=r"pairs\[2\] = .*reference index out of range for 2 references"):
        fn(refs, qrys, pairs=[[0, 0], [1, 1], [-1, 0]])
    with pytest.raises(ValueError, match=r"pairs must have shape \[B, 2\].*got \(2,\)"):
        fn(refs, qrys, pairs=[0, 0])
    with pytest.raises(ValueError, match=r"pairs must have shape \[B, 2\].*got \(1, 3\)"):
        fn(refs, qrys, pairs=[[0, 0, 0]])
    with pytest.raises(ValueError, match=r"pairs must have shape \[B, 2\]"):
        fn(refs, qrys, pairs=np.zeros((2, 2, 2), np.int64))
    with pytest.raises(TypeError, match=r"pairs must be an integer array \[B, 2\], got dtype float64"):
        fn(refs, qrys, pairs=[[0.0, 0.0]])
    with pytest.raises(TypeError, match=r"pairs must be an integer array"):
        fn(refs, qrys, pairs=np.array([[True, False]]))


def test_bad_offsets():
    values = np.concatenate([A, B])
    with pytest.raises(ValueError, match=r"paths: offsets\[0\] must be 0, got 1"):
        Paths(values, [1, 3, 5])
    with pytest.raises(ValueError, match=r"paths: offsets must not decrease \(offsets\[2\] < offsets\[1\]\)"):
        Paths(values, [0, 4, 3, 5])
    with pytest.raises(ValueError, match=r"paths: offsets\[-1\] = 4 but values has 5 rows"):
        Paths(values, [0, 3, 4])
    with pytest.raises(ValueError, match=r"paths: offsets\[-1\] = 7 but values has 5 rows"):
        Paths(values, [0, 3, 7])
    with pytest.raises(ValueError, match=r"offsets must be a 1-D integer array with at least one element"):
        Paths(values, [])
    with pytest.raises(ValueError, match=r"offsets must be a 1-D integer array"):
        Paths(values, [0.0, 5.0])
    with pytest.raises(ValueError, match=r"offsets must be a 1-D integer array"):
        Paths(values, [[0, 5]])
    with pytest.raises(ValueError, match=r"refs: offsets\[0\] must be 0"):
        Paths(values, [2, 5], name="refs")


@pytest.mark.parametrize("fn", [navdtw.dtw_batch, navdtw.ndtw_batch, navdtw.sdtw_batch])
def test_mismatched_lengths_elementwise(fn):
    with pytest.raises(ValueError, match=r"references \(3\) and queries \(2\) differ in length"):
        fn([A, A, A], [B, B])
    with pytest.raises(ValueError, match=r"references \(1\) and queries \(2\) differ in length"):
        fn([N0], [N1, N1], distances=M)


# --------------------------------------------------------------------------------------------
# the low-level _core entry points: raise, never crash
# --------------------------------------------------------------------------------------------


def test_core_bad_offsets():
    with pytest.raises(ValueError, match=r"references: offsets\[-1\] = 100 but there are 3 values"):
        _core.dtw_points(A, np.array([0, 100], np.int64), B, _off(2))
    with pytest.raises(ValueError, match=r"queries: offsets decrease at path 0"):
        _core.dtw_points(A, _off(3), B, np.array([0, -5, 2], np.int64))
    with pytest.raises(ValueError, match=r"references: offsets\[0\] must be 0"):
        _core.dtw_points(A, np.array([1, 3], np.int64), B, _off(2))
    with pytest.raises(ValueError, match=r"offsets must be 1-D with at least one element"):
        _core.dtw_points(A, np.zeros(0, np.int64), B, _off(2))
    with pytest.raises(ValueError, match=r"queries: offsets\[-1\]"):
        _core.dtw_nodes(N0, _off(3), N1, np.array([0, 9], np.int64), [M])
    with pytest.raises(ValueError, match=r"pair 1: references\[1\] is empty"):
        _core.dtw_points(A, np.array([0, 3, 3], np.int64), np.concatenate([B, B]), _off(2, 2))


def test_core_bad_pairs_and_ids():
    with pytest.raises(ValueError, match=r"pair 1: queries index 5 is out of range for 1 queries"):
        _core.dtw_points(A, _off(3), B, _off(2), pairs=np.array([[0, 0], [0, 5]], np.int64))
    with pytest.raises(ValueError, match=r"pair 0: references index -1 is out of range"):
        _core.dtw_points(A, _off(3), B, _off(2), pairs=np.array([[-1, 0]], np.int64))
    with pytest.raises(ValueError, match=r"pairs must have shape \[B, 2\]"):
        _core.dtw_points(A, _off(3), B, _off(2), pairs=np.zeros((2, 3), np.int64))
    with pytest.raises(ValueError, match=r"pairs and all_pairs are mutually exclusive"):
        _core.dtw_points(A, _off(3), B, _off(2), pairs=np.zeros((1, 2), np.int64), all_pairs=True)
    with pytest.raises(ValueError, match=r"same length for element-wise pairs"):
        _core.dtw_points(A, _off(1, 2), B, _off(2))
    with pytest.raises(ValueError, match=r"window and radius are mutually exclusive"):
        _core.dtw_points(A, _off(3), B, _off(2), window=1, radius=1)
    with pytest.raises(ValueError, match=r"different dimensions"):
        _core.dtw_points(A, _off(3), np.zeros((2, 3), np.float32), _off(2))
    with pytest.raises(ValueError, match=r"pair 0: references\[0\] has node id 7 at position 1"):
        _core.dtw_nodes(np.array([0, 7, 1], np.int64), _off(3), N1, _off(2), [M])
    with pytest.raises(ValueError, match=r"pair 0: queries\[0\] has node id -1 at position 0"):
        _core.dtw_nodes(N0, _off(3), np.array([-1], np.int64), _off(1), [M])
    with pytest.raises(ValueError, match=r"env\[0\] = 7 is out of range for 1 distance matrices"):
        _core.dtw_nodes(N0, _off(3), N1, _off(2), [M], env=np.array([7], np.int64))
    with pytest.raises(ValueError, match=r"env must have one entry per pair"):
        _core.dtw_nodes(N0, _off(3), N1, _off(2), [M], env=np.array([0, 0], np.int64))
    with pytest.raises(ValueError, match=r"several distance matrices need env="):
        _core.dtw_nodes(N0, _off(3), N1, _off(2), [M, M])
    with pytest.raises(ValueError, match=r"distances is empty"):
        _core.dtw_nodes(N0, _off(3), N1, _off(2), [])
    with pytest.raises(ValueError, match=r"distances\[0\] must be a square"):
        _core.dtw_nodes(N0, _off(3), N1, _off(2), [np.ones((2, 3), np.float32)])
    with pytest.raises(TypeError, match=r"node paths must both be int32 or both int64"):
        _core.dtw_nodes(N0.astype(np.int32), _off(3), N1, _off(2), [M])
    with pytest.raises(ValueError, match=r"reference has node id -1 at position 1"):
        _core.warping_path_nodes(np.array([0, -1], np.int64), N1, M)
    with pytest.raises(ValueError, match=r"query has node id 4 at position 0"):
        _core.prefix_nodes(N0.astype(np.int32), np.array([4], np.int32), M)
    with pytest.raises(ValueError, match=r"reference must be a non-empty \[n, D\] array"):
        _core.warping_path_points(EMPTY2, B)
    with pytest.raises(ValueError, match=r"query must be a non-empty \[n, D\] array"):
        _core.prefix_points(A, EMPTY2)


def test_core_rejects_unsafe_dtype_casts():
    # float64 values are not silently narrowed by the binding: that is the Python layer's job
    with pytest.raises(TypeError):
        _core.dtw_points(A.astype(np.float64), _off(3), B, _off(2))
    with pytest.raises(TypeError):
        _core.dtw_points(A, _off(3).astype(np.float64), B, _off(2))


def _run_isolated(code: str) -> subprocess.CompletedProcess:
    prelude = "import numpy as np\nfrom navdtw import _core\n"
    return subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(code)], capture_output=True, text=True, timeout=120
    )


DANGEROUS = {
    "offsets_past_values": """
        a = np.zeros((3, 2), np.float32)
        _core.dtw_points(a, np.array([0, 10**12], np.int64), a, np.array([0, 3], np.int64))
    """,
    "offsets_negative_middle": """
        a = np.zeros((3, 2), np.float32)
        _core.dtw_points(a, np.array([0, -10**12, 3], np.int64), a, np.array([0, 1, 3], np.int64))
    """,
    "pair_index_huge_multithreaded": """
        a = np.zeros((600, 3), np.float32)
        o = np.arange(0, 601, 6, dtype=np.int64)
        p = np.zeros((20000, 2), np.int64)
        p[17321, 1] = 10**15
        _core.dtw_points(a, o, a, o, pairs=p, workers=3)
    """,
    "pair_index_negative_multithreaded": """
        a = np.zeros((600, 3), np.float32)
        o = np.arange(0, 601, 6, dtype=np.int64)
        p = np.zeros((20000, 2), np.int64)
        p[9999, 0] = -(2**62)
        _core.dtw_points(a, o, a, o, pairs=p, workers=2, radius=1)
    """,
    "node_id_huge_multithreaded": """
        m = np.ones((5, 5), np.float32)
        v = np.zeros(3000, np.int64)
        v[2999] = 2**62
        o = np.arange(0, 3001, 3, dtype=np.int64)
        _core.dtw_nodes(v, o, v, o, [m], workers=3)
    """,
    "node_id_negative_int32": """
        m = np.ones((5, 5), np.float32)
        v = np.zeros(30, np.int32)
        v[17] = -2**31
        o = np.arange(0, 31, 3, dtype=np.int64)
        _core.dtw_nodes(v, o, v, o, [m], workers=2, window=1)
    """,
    "env_huge": """
        m = np.ones((5, 5), np.float32)
        v = np.zeros(6, np.int64)
        o = np.arange(0, 7, 3, dtype=np.int64)
        _core.dtw_nodes(v, o, v, o, [m, m], env=np.array([0, 2**62], np.int64), workers=2)
    """,
    "warping_path_node_out_of_range": """
        m = np.ones((5, 5), np.float32)
        _core.warping_path_nodes(np.array([0, 2**40], np.int64), np.array([1], np.int64), m)
    """,
    "prefix_node_out_of_range": """
        m = np.ones((5, 5), np.float32)
        _core.prefix_nodes(np.array([0], np.int32), np.array([1, 2**31 - 1], np.int32), m)
    """,
    "node_set_non_contiguous": """
        m = np.ones((5, 5), np.float32)
        v = np.zeros(12, np.int64)[::2]
        _core.dtw_nodes(v, np.array([0, 6], np.int64), v, np.array([0, 6], np.int64), [m])
    """,
}


@pytest.mark.parametrize("name", sorted(DANGEROUS))
def test_core_dangerous_inputs_raise_in_subprocess(name):
    proc = _run_isolated(DANGEROUS[name])
    assert proc.returncode == 1, f"returncode {proc.returncode} (negative = killed by a signal)\n{proc.stderr}"
    assert "Traceback (most recent call last)" in proc.stderr
    assert "ValueError" in proc.stderr
