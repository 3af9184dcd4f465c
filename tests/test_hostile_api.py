"""Hostile arguments to the public API outside the engine (tests/test_hostile.py covers the
engine): each gets a one-line TypeError / ValueError naming the argument and the value as the
caller wrote it (a numpy scalar as a plain number), and a file write never leaves a partial file."""

from __future__ import annotations

import os
import re

import numpy as np
import pytest

import navdtw
from navdtw import GraphSet, NavGraph
from navdtw.baseline import PositionWalker
from navdtw.registry import Metric


def one_line(exc: pytest.ExceptionInfo) -> str:
    text = str(exc.value)
    assert "\n" not in text, text
    return text


# --------------------------------------------------------------------------------------------
# GraphSet
# --------------------------------------------------------------------------------------------


def _graph(name: str = "s1") -> NavGraph:
    return NavGraph(np.zeros((2, 3)), [(0, 1)], name=name)


@pytest.mark.parametrize("bad", [[1], [_graph(), "s2"], (None,)])
def test_graphset_item_that_is_not_a_graph(bad):
    with pytest.raises(TypeError, match=r"GraphSet: item \d is a \w+, not a NavGraph") as exc:
        GraphSet(bad)
    one_line(exc)


@pytest.mark.parametrize("bad", [1, 2.5, None, "s1", b"s1"])
def test_graphset_argument_that_is_not_a_collection(bad):
    with pytest.raises(TypeError, match=rf"GraphSet: graphs must be .* got {type(bad).__name__}$") as exc:
        GraphSet(bad)
    one_line(exc)


def test_graphset_still_takes_sequences_mappings_and_iterators():
    a, b = _graph("a"), _graph("b")
    for arg in ([a, b], (a, b), iter([a, b]), {"a": a, "b": b}):
        assert GraphSet(arg).scans == ["a", "b"]
    with pytest.raises(TypeError, match=r"item 0 is a int"):
        GraphSet({"a": 1})


# --------------------------------------------------------------------------------------------
# plot_alignment's threshold
# --------------------------------------------------------------------------------------------

REF = np.array([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0]])
QRY = np.array([[0.0, 1.0], [2.0, 1.0]])


@pytest.mark.parametrize(
    ("threshold", "shown"), [(0, "0.0"), (-1.0, "-1.0"), (np.inf, "inf"), (np.nan, "nan"), (np.float64(0), "0.0")]
)
def test_plot_alignment_threshold_must_be_finite_and_positive(threshold, shown):
    from navdtw.plot import plot_alignment

    with pytest.raises(ValueError, match=rf"^threshold must be finite and > 0, got {shown}$") as exc:
        plot_alignment(REF, QRY, threshold=threshold)
    one_line(exc)


@pytest.mark.parametrize("threshold", ["3", None, True])
def test_plot_alignment_threshold_must_be_a_number(threshold):
    from navdtw.plot import plot_alignment

    with pytest.raises(TypeError, match=r"^threshold must be a number \(metres\), got "):
        plot_alignment(REF, QRY, threshold=threshold)


# --------------------------------------------------------------------------------------------
# write_parquet_batch is atomic
# --------------------------------------------------------------------------------------------


def test_write_parquet_batch_leaves_no_partial_file(tmp_path, monkeypatch):
    pq = pytest.importorskip("pyarrow.parquet")
    from navdtw.distributed import write_parquet_batch

    refs = [np.array([0, 1, 2]), np.array([3, 4])]
    qrys = [np.array([0, 2]), np.array([3, 3, 4])]
    out = tmp_path / "batch.parquet"
    assert write_parquet_batch(out, refs, qrys, ids=["a", "b"]) == str(out)
    before = out.read_bytes()
    assert pq.read_table(out).column("episode_id").to_pylist() == ["a", "b"]

    real = pq.write_table

    def broken(table, where, **kw):  # writes half a file, then the disk fills up
        real(table, where, **kw)
        with open(where, "r+b") as f:
            f.truncate(os.path.getsize(where) // 2)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(pq, "write_table", broken)
    with pytest.raises(OSError, match=re.escape(f"{out}: cannot write: No space left on device")) as exc:
        write_parquet_batch(out, refs[::-1], qrys[::-1])
    one_line(exc)
    assert out.read_bytes() == before  # the old file, whole
    assert sorted(p.name for p in tmp_path.iterdir()) == ["batch.parquet"]  # no temporary file left

    monkeypatch.setattr(pq, "write_table", real)
    write_parquet_batch(out, refs[::-1], qrys[::-1], ids=["b", "a"])
    assert pq.read_table(out).column("episode_id").to_pylist() == ["b", "a"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["batch.parquet"]
    umask = os.umask(0)
    os.umask(umask)
    assert out.stat().st_mode & 0o777 == 0o666 & ~umask  # as a plain open() would create it


def test_write_parquet_batch_into_a_missing_folder(tmp_path):
    pytest.importorskip("pyarrow.parquet")
    from navdtw.distributed import write_parquet_batch

    out = tmp_path / "missing" / "batch.parquet"
    with pytest.raises(OSError, match=re.escape(str(out))):
        write_parquet_batch(out, [np.array([0, 1])], [np.array([1])])
    assert list(tmp_path.iterdir()) == []


# --------------------------------------------------------------------------------------------
# PositionWalker.walks
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def walker():
    return PositionWalker([np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 2.0]]), np.array([[5.0, 5.0], [6.0, 5.0]])], seed=3)


@pytest.mark.parametrize(
    ("first", "count", "message"),
    [
        (0, 0, "count must be >= 1, got 0"),
        (0, -5, "count must be >= 1, got -5"),
        (-1, 3, "first must be >= 0, got -1"),
        (np.int64(-2), 3, "first must be >= 0, got -2"),
    ],
)
def test_walks_bad_range(walker, first, count, message):
    with pytest.raises(ValueError, match=rf"^PositionWalker.walks: {message}$") as exc:
        walker.walks(first, count)
    one_line(exc)


@pytest.mark.parametrize(
    ("first", "count", "message"),
    [
        (0, 2.5, "count must be an integer, got 2.5"),
        (np.float64(1.0), 2, "first must be an integer, got 1.0"),
        (True, 2, "first must be an integer, got True"),
        ("0", 2, "first must be an integer, got '0'"),
    ],
)
def test_walks_bad_type(walker, first, count, message):
    with pytest.raises(TypeError, match=rf"^PositionWalker.walks: {re.escape(message)}$"):
        walker.walks(first, count)


def test_walks_numpy_integers_are_integers(walker):
    a, ra = walker.walks(np.int64(2), np.int32(3))
    b, rb = walker.walks(2, 3)
    np.testing.assert_array_equal(a.values, b.values)
    np.testing.assert_array_equal(ra, rb)


# --------------------------------------------------------------------------------------------
# Metric(higher_is_better=...), leaderboard_marks(alpha=...)
# --------------------------------------------------------------------------------------------


def _metric(**kw) -> Metric:
    return Metric("hostile_m", "HM", lambda ctx: np.zeros(0), **kw)


@pytest.mark.parametrize(("bad", "shown"), [(1, "1"), (0, "0"), ("yes", "'yes'"), (np.int64(1), "1"), (1.0, "1.0")])
def test_metric_higher_is_better_must_be_a_bool(bad, shown):
    with pytest.raises(
        TypeError, match=rf"^metric 'hostile_m': higher_is_better must be True, False or None, got {shown}$"
    ):
        _metric(higher_is_better=bad)


def test_metric_higher_is_better_takes_bools():
    assert _metric(higher_is_better=True).higher_is_better is True
    assert _metric(higher_is_better=False).higher_is_better is False
    assert _metric().higher_is_better is None
    assert _metric(higher_is_better=np.True_).higher_is_better is True  # a numpy bool is a bool


def _results_dataset() -> dict:
    return {
        "agents": {
            "a": {"sr": {"mean": 0.6, "vs_best": {"p": 1.0, "p_bounds": [1.0, 1.0], "resamples": 100}}},
            "b": {"sr": {"mean": 0.5, "vs_best": {"p": 0.2, "p_bounds": [0.19, 0.21], "resamples": 100}}},
        },
        "comparisons": [],
    }


@pytest.mark.parametrize(("alpha", "shown"), [(2, "2"), (0, "0"), (1.0, "1.0"), (-0.05, "-0.05"), (np.nan, "nan")])
def test_leaderboard_marks_alpha_in_open_unit_interval(alpha, shown):
    from navdtw import suite

    for call in (
        lambda: suite.leaderboard_marks(_results_dataset(), alpha),
        lambda: suite.leaderboard_marks(_results_dataset(), alpha, metrics={}),
    ):
        with pytest.raises(ValueError, match=rf"^leaderboard_marks: alpha must be in \(0, 1\), got {shown}$") as exc:
            call()
        one_line(exc)


@pytest.mark.parametrize("alpha", ["0.05", None, True])
def test_leaderboard_marks_alpha_is_a_number(alpha):
    from navdtw import suite

    with pytest.raises(TypeError, match=r"^leaderboard_marks: alpha must be a number in \(0, 1\), got "):
        suite.leaderboard_marks(_results_dataset(), alpha)


def test_leaderboard_marks_good_alpha():
    from navdtw import suite

    ds = _results_dataset()
    assert suite.leaderboard_marks(ds, 0.05)["sr"] == {"best": ["a"], "tied": ["b"], "unresolved": []}
    assert suite.leaderboard_marks(ds, np.float64(0.25))["sr"] == {"best": ["a"], "tied": [], "unresolved": []}


# --------------------------------------------------------------------------------------------
# messages show numbers as numbers
# --------------------------------------------------------------------------------------------

M = np.array([[0, 1, 2], [1, 0, 1], [2, 1, 0]], np.float32)


@pytest.mark.parametrize(
    ("call", "exc", "message"),
    [
        (
            lambda: navdtw.dtw_batch([[0, 1]], [[1, 2]], distances=M, pairs=np.array([[0, 5]])),
            ValueError,
            "pairs[0] = (0, 5): query index out of range for 1 queries",
        ),
        (
            lambda: navdtw.dtw_batch([[0, 1]], [[1, 2]], distances=M, pairs=np.array([[3, 0]])),
            ValueError,
            "pairs[0] = (3, 0): reference index out of range for 1 references",
        ),
        (lambda: navdtw.dtw([0, 1], [1, 0], distances=M, window=np.float64(2)), TypeError, "got 2.0"),
        (lambda: navdtw.ndtw([0, 1], [1, 0], distances=M, threshold=np.str_("3")), TypeError, "got '3'"),
        (lambda: PositionWalker([np.zeros((2, 2))], seed=np.int64(-1)), ValueError, "got -1"),
        (lambda: navdtw.instruction_errors.auc([0, 1, 1], [0.1, np.nan, 0.3]), ValueError, "scores[1] = nan"),
        (lambda: navdtw.instruction_errors.auc(np.array([0, 2]), [0.1, 0.3]), ValueError, "labels[1] = 2:"),
        (
            lambda: navdtw.humanaware.evaluate([1, 0], [np.int64(-1), 2], [0, 0], [1.0, 2.0]),
            ValueError,
            "collision_count[0] = -1:",
        ),
        (lambda: navdtw.humanaware.evaluate([1, 2], [0, 0], [0, 0], [1.0, 2.0]), ValueError, "success[1] = 2:"),
        (lambda: navdtw.Paths(np.zeros((3, 2), np.float32), [0, 1, 3])[np.float64(1)], TypeError, "got 1.0"),
        (lambda: navdtw.stats.bootstrap_ci([1.0, 2.0], method=np.str_("x")), ValueError, "got 'x'"),
        (lambda: navdtw.sdtw([0, 1], [1, 0], distances=M, inclusive=np.int64(1)), TypeError, "got 1"),
        (lambda: navdtw.humanaware.evaluate([1, 0], [0, 0], [0, 0], [1.0, -2.0]), ValueError, "[1] = -2.0:"),
    ],
)
def test_messages_show_plain_numbers(call, exc, message):
    with pytest.raises(exc) as info:
        call()
    text = one_line(info)
    assert message in text
    assert "np." not in text and "querys" not in text
