"""navdtw.datasets.havln: the one HA-VLN collision reader and its rule."""

from __future__ import annotations

import json

import pytest

from navdtw import datasets as ds
from navdtw import humanaware


def write(tmp_path, name, obj):
    p = tmp_path / name
    p.write_text(json.dumps(obj))
    return p


def test_havln_synthetic(tmp_path):
    assert ds.load_havln_collisions({"1": 0, "2": 3}) == {"1": 0, "2": 3}
    with pytest.raises(ValueError, match=r"c.json: entry 1 \(episode_id 2\): collision count must be an integer >= 0"):
        ds.load_havln_collisions(write(tmp_path, "c.json", {"1": 0, "2": -1}))
    with pytest.raises(ValueError, match=r"entry 0 \(episode_id 1\)"):
        ds.load_havln_collisions({"1": 1.5})
    with pytest.raises(ValueError, match=r"entry 0 \(episode_id 1\)"):
        ds.load_havln_collisions({"1": True})


@pytest.mark.parametrize("value, count", [(0, 0), (3, 3), (3.0, 3), (0.0, 0), (1e3, 1000)])
def test_integral_counts_are_counts(value, count):
    got = ds.load_havln_collisions({"e": value})
    assert got == {"e": count} and type(got["e"]) is int


@pytest.mark.parametrize("value", [3.5, -1, -3.0, True, False, float("nan"), float("inf"), "3", None, [3]])
def test_everything_else_is_refused(tmp_path, value):
    p = tmp_path / "collision_num_val_unseen.json"
    p.write_text(json.dumps({"a": 0, "b": value}))  # json writes NaN / Infinity as Python reads them
    with pytest.raises(ValueError, match=r"^collision_num_val_unseen\.json: entry 1 \(episode_id b\): collision count"):
        ds.load_havln_collisions(p)


def test_one_reader():
    with pytest.raises(AttributeError, match=r"load_baseline_collisions moved to the readers"):
        humanaware.load_baseline_collisions  # noqa: B018
    with pytest.raises(ValueError, match=r"<input>: expected an object keyed by episode id"):
        ds.load_havln_collisions([1, 2])


@pytest.mark.data
def test_real_havln(data_dir):
    coll = ds.load_havln_collisions(data_dir / "ha_vln" / "collision_num_val_unseen.json")
    eps = ds.load_vlnce_episodes(
        data_dir / "r2r_vlnce" / "R2R_VLNCE_v1-3_preprocessed" / "val_unseen" / "val_unseen.json.gz"
    )
    assert len(coll) == 1839 and min(coll.values()) >= 0
    assert set(coll) == {str(e["episode_id"]) for e in eps}
