"""HA-VLN metrics: hand-computed examples, the shipped baseline files, and input validation."""

from __future__ import annotations

import json

import numpy as np
import pytest

from navdtw import humanaware
from navdtw.datasets import load_havln_collisions
from navdtw.humanaware import baseline_for, evaluate


def test_hand_computed_example():
    # ep0: success, no collisions                  -> TCR 0, CR 0, SR 1
    # ep1: success, 3 collisions vs baseline 1     -> TCR 2, CR 1, SR 0
    # ep2: success, 1 collision vs baseline 4      -> TCR clipped to 0, CR 0, SR 1
    # ep3: failure, 2 collisions vs baseline 2     -> TCR 0, CR 0, SR 0
    # ep4: success, 1 collision vs baseline 0      -> TCR 1, CR 1, SR 0
    r = evaluate(
        success=[1, True, 1.0, 0, 1],
        collision_count=[0, 3, 1, 2, 1],
        baseline_collision_count=[0, 1, 4, 2.0, 0],
        distance_to_goal=[0.5, 1.0, 2.5, 7.0, 0.0],
    )
    assert len(r) == 5
    np.testing.assert_array_equal(r.adjusted_collision_count, [0, 2, 0, 0, 1])
    np.testing.assert_array_equal(r.collision_indicator, [0, 1, 0, 0, 1])
    np.testing.assert_array_equal(r.strict_success, [1, 0, 1, 0, 0])
    np.testing.assert_array_equal(r.success, [1, 1, 1, 0, 1])
    np.testing.assert_array_equal(r.goal_distance, [0.5, 1.0, 2.5, 7.0, 0.0])
    np.testing.assert_array_equal(r.baseline_collision_count, [0, 1, 4, 2, 0])
    s = r.summary()
    assert list(s) == ["sr", "tcr", "cr", "ne"]  # lowercase, as every navdtw summary
    assert s["sr"] == pytest.approx(2 / 5)
    assert s["tcr"] == pytest.approx(3 / 5)
    assert s["cr"] == pytest.approx(2 / 5)
    assert s["ne"] == pytest.approx(11.0 / 5)
    assert all(isinstance(v, float) for v in s.values())
    assert r.summary(keys="havln") == {"SR": s["sr"], "TCR": s["tcr"], "CR": s["cr"], "NE": s["ne"]}


def test_tcr_clips_at_zero_and_cr_caps_at_one():
    r = evaluate([1, 1], [0, 10], [5, 0], [0.0, 0.0])
    assert r.adjusted_collision_count.tolist() == [0, 10]
    assert r.collision_indicator.tolist() == [0, 1]
    assert r.strict_success.tolist() == [1, 0]


def test_dtypes_and_records():
    r = evaluate(np.array([True, False]), np.array([2, 0], dtype=np.uint8), [1, 0], [1, 2])
    for name in humanaware.HumanAwareResult.FIELDS:
        arr = getattr(r, name)
        assert isinstance(arr, np.ndarray) and arr.shape == (2,)
    assert r.goal_distance.dtype == np.float64
    assert r.adjusted_collision_count.dtype == np.int64
    recs = r.to_records()
    assert recs == [
        {
            "success": 1,
            "goal_distance": 1.0,
            "collision_count": 2,
            "baseline_collision_count": 1,
            "adjusted_collision_count": 1,
            "collision_indicator": 1,
            "strict_success": 0,
        },
        {
            "success": 0,
            "goal_distance": 2.0,
            "collision_count": 0,
            "baseline_collision_count": 0,
            "adjusted_collision_count": 0,
            "collision_indicator": 0,
            "strict_success": 0,
        },
    ]
    assert type(recs[0]["success"]) is int and type(recs[0]["goal_distance"]) is float
    json.dumps(recs)  # plain Python values


def test_empty_summary_is_nan_without_warnings():
    r = evaluate([], [], [], [])
    assert len(r) == 0 and r.to_records() == []
    assert all(np.isnan(v) for v in r.summary().values())


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"success": [1, 2]}, r"success\[1\]"),
        ({"success": [1, np.nan]}, r"success\[1\]"),
        ({"collision_count": [0, -1]}, r"collision_count\[1\].*non-negative integer"),
        ({"collision_count": [0, 1.5]}, r"collision_count\[1\]"),
        ({"baseline_collision_count": [np.inf, 0]}, r"baseline_collision_count\[0\]"),
        ({"baseline_collision_count": [0, -3]}, r"baseline_collision_count\[1\]"),
        # uint64 beyond int64: numpy 1.x compared it with 2**63 - 1 in float64 and let 2**63 through
        ({"collision_count": np.array([0, 2**63], np.uint64)}, r"collision_count\[1\].*too large"),
        ({"distance_to_goal": [1.0, np.nan]}, r"distance_to_goal\[1\]"),
        ({"distance_to_goal": [-0.1, 1.0]}, r"distance_to_goal\[0\]"),
        ({"distance_to_goal": [1.0, 2.0, 3.0]}, r"lengths.*distance_to_goal=3"),
        ({"success": [[1, 0]]}, r"success.*1-D"),
    ],
)
def test_bad_inputs(kwargs, match):
    args = {
        "success": [1, 0],
        "collision_count": [0, 0],
        "baseline_collision_count": [0, 0],
        "distance_to_goal": [1.0, 2.0],
    }
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        evaluate(**args)


def test_non_numeric_input():
    with pytest.raises(TypeError, match="collision_count"):
        evaluate([1], ["a"], [0], [0.0])


def test_load_and_align(tmp_path):
    p = tmp_path / "c.json"
    p.write_text(json.dumps({"1": 0, "2": 3, "10": 1}))
    table = load_havln_collisions(p)
    assert table == {"1": 0, "2": 3, "10": 1}
    got = baseline_for([10, "2", 1], table)
    assert got.dtype == np.int64 and got.tolist() == [1, 3, 0]
    with pytest.raises(ValueError, match=r"'7'.*2 missing"):
        baseline_for([1, 7, 8], table)


@pytest.mark.parametrize(
    "text, match",
    [
        ('{"1": 0,', "malformed JSON at line 1"),
        ("[1, 2]", "expected an object keyed by episode id"),
        ('{"1": -1}', r"entry 0 \(episode_id 1\): collision count must be an integer >= 0, got -1"),
        ('{"2": 0, "1": 0.5}', r"entry 1 \(episode_id 1\): .* got 0\.5"),
        ('{"1": 3.5}', r"entry 0 \(episode_id 1\): .* got 3\.5"),
        ('{"1": -3.0}', r"entry 0 \(episode_id 1\): .* got -3\.0"),
        ('{"1": "3"}', r"entry 0 \(episode_id 1\): .* got '3'"),
        ('{"1": true}', r"entry 0 \(episode_id 1\): .* got True"),
        ('{"1": NaN}', r"entry 0 \(episode_id 1\): .* got nan"),
        ('{"1": Infinity}', r"entry 0 \(episode_id 1\): .* got inf"),
        ('{"1": null}', r"entry 0 \(episode_id 1\): .* got None"),
    ],
)
def test_load_malformed(tmp_path, text, match):
    p = tmp_path / "bad.json"
    p.write_text(text)
    with pytest.raises(ValueError, match=match) as info:
        load_havln_collisions(p)
    assert str(info.value).startswith("bad.json: ")


def test_one_collision_reader_one_rule(tmp_path):
    # humanaware's reader is the datasets one: a count written as an integral float is that count
    with pytest.raises(AttributeError, match=r"in 0\.2: use navdtw\.datasets\.load_havln_collisions"):
        humanaware.load_baseline_collisions  # noqa: B018
    p = tmp_path / "c.json"
    p.write_text('{"1": 3.0, "2": 0, "3": 0.0, "4": 12}')
    table = load_havln_collisions(p)
    assert table == {"1": 3, "2": 0, "3": 0, "4": 12}
    assert all(type(v) is int for v in table.values())
    assert list(table) == ["1", "2", "3", "4"]  # file order


@pytest.mark.data
def test_shipped_baseline_files(data_dir):
    folder = data_dir / "ha_vln"
    unseen_path = folder / "collision_num_val_unseen.json"
    if not unseen_path.exists():
        pytest.skip("HA-VLN collision files not present")
    unseen = load_havln_collisions(unseen_path)
    assert len(unseen) == 1839
    assert all(isinstance(k, str) and isinstance(v, int) and v >= 0 for k, v in unseen.items())
    seen_path = folder / "collision_num_val_seen.json"
    if seen_path.exists():
        assert len(load_havln_collisions(seen_path)) > 0
    ids = list(unseen)[:50]
    base = baseline_for(ids, unseen)
    # An agent that collides exactly as often as the baseline is never penalised.
    r = evaluate(np.ones(len(ids)), base, base, np.zeros(len(ids)))
    assert r.summary() == {"sr": 1.0, "tcr": 0.0, "cr": 0.0, "ne": 0.0}
    assert r.summary(keys="havln") == {"SR": 1.0, "TCR": 0.0, "CR": 0.0, "NE": 0.0}
    with pytest.raises(ValueError, match="keys"):
        r.summary(keys="HAVLN")
