"""Readers, writers and the split/prediction matcher: synthetic files in tmp_path plus the real
R2R / R4R / R2R-CE / HA-VLN files (skipped without the data)."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest

import navdtw
from navdtw import datasets as ds
from navdtw.graphs import GraphSet, NavGraph, load_connectivity


@pytest.fixture
def graphs():
    # scan "s1": a line a-b-c-d (1 m apart); scan "s2": x-y (2 m)
    g1 = NavGraph([[0, 0, 0], [1, 0, 0], [2, 0, 0], [3, 0, 0]], [[0, 1], [1, 2], [2, 3]], ids=list("abcd"), name="s1")
    g2 = NavGraph([[0, 0, 0], [0, 2, 0]], [[0, 1]], ids=["x", "y"], name="s2")
    return GraphSet([g1, g2])


def split_entries():
    return [
        {
            "path_id": 7,
            "scan": "s1",
            "path": ["a", "b", "c"],
            "heading": 0.5,
            "distance": 2.0,
            "instructions": ["go right", "walk on"],
        },
        {"path_id": 9, "scan": "s2", "path": ["x", "y"], "heading": 1.0, "distance": 2.0, "instructions": ["go up"]},
    ]


def write(tmp_path, name, obj):
    p = tmp_path / name
    p.write_text(json.dumps(obj))
    return p


def preds_entries():
    return [
        {"instr_id": "7_0", "trajectory": [["a", 0.0, 0.0], ["a", 0.5, 0.0], ["b", 0.5, 0.0], ["c", 0.5, 0.0]]},
        {"instr_id": "7_1", "trajectory": [["a", 0.0, 0.0], ["d", 0.0, 0.0]]},
        {"instr_id": "9_0", "trajectory": [["y", 0.0, 0.0]]},
    ]


# --- splits ------------------------------------------------------------------------------------


def test_load_r2r_and_instructions(tmp_path, graphs):
    path = write(tmp_path, "R2R_toy.json", split_entries())
    split = ds.load_r2r(path, graphs=graphs)
    assert [e["path_id"] for e in split] == [7, 9]
    assert split == ds.load_r2r(split_entries())
    ins = ds.instructions(split)
    assert [r["instr_id"] for r in ins] == ["7_0", "7_1", "9_0"]
    assert ins[1]["instruction"] == "walk on" and ins[1]["instruction_index"] == 1
    assert ins[0]["path"] == ["a", "b", "c"] and ins[0]["distance"] == 2.0 and ins[0]["scan"] == "s1"
    assert "instructions" not in ins[0]
    # R4R style: num_instructions, no texts
    r4r = [{"path_id": 0, "scan": "s1", "path": ["a"], "num_instructions": 2, "distance": 0.0}]
    ins4 = ds.instructions(ds.load_r2r(r4r))
    assert [r["instr_id"] for r in ins4] == ["0_0", "0_1"] and "instruction" not in ins4[0]


@pytest.mark.parametrize(
    "index, change, match",
    [
        (1, {"path": []}, r"R2R_bad.json: entry 1 \(path_id 9\): 'path' is empty"),
        (0, {"path": ["a", 3]}, r"entry 0 \(path_id 7\): path\[1\] must be a viewpoint id"),
        (1, {"scan": None}, r"entry 1 \(path_id 9\): 'scan' must be a non-empty string"),
        (1, {"path_id": 7}, r"entry 1 \(path_id 7\): duplicate path_id \(also entry 0\)"),
        (0, {"distance": "far"}, r"entry 0 \(path_id 7\): 'distance' must be a finite number"),
        (0, {"instructions": "go"}, r"entry 0 \(path_id 7\): 'instructions' must be a list of strings"),
    ],
)
def test_load_r2r_errors(tmp_path, index, change, match):
    entries = split_entries()
    entries[index].update(change)
    with pytest.raises(ValueError, match=match):
        ds.load_r2r(write(tmp_path, "R2R_bad.json", entries))


def test_load_r2r_missing_fields(tmp_path):
    entries = split_entries()
    del entries[1]["instructions"]
    with pytest.raises(ValueError, match=r"entry 1 \(path_id 9\): needs 'instructions'"):
        ds.load_r2r(entries)
    entries = split_entries()
    del entries[0]["path_id"]
    with pytest.raises(ValueError, match=r"<input>: entry 0: missing 'path_id'"):
        ds.load_r2r(entries)


def test_load_r2r_graph_checks(graphs):
    entries = split_entries()
    entries[1]["scan"] = "s9"
    with pytest.raises(ValueError, match=r"entry 1 \(path_id 9\): unknown scan 's9'"):
        ds.load_r2r(entries, graphs=graphs)
    entries = split_entries()
    entries[0]["path"] = ["a", "zz"]
    with pytest.raises(ValueError, match=r"entry 0 \(path_id 7\): path\[1\] = 'zz' is not a viewpoint of scan 's1'"):
        ds.load_r2r(entries, graphs=graphs)


def test_malformed_and_truncated_json(tmp_path):
    p = tmp_path / "R2R_broken.json"
    p.write_text('[{"path_id": 1, "scan": "s1",, }]')
    with pytest.raises(ValueError, match=r"R2R_broken.json: malformed JSON at line 1 column \d+"):
        ds.load_r2r(p)
    text = json.dumps(split_entries(), indent=1)
    p.write_text(text[: len(text) // 2])
    with pytest.raises(ValueError, match=r"R2R_broken.json: malformed JSON at line \d+ column \d+"):
        ds.load_r2r(p)
    p.write_text(json.dumps({"not": "a list"}))
    with pytest.raises(ValueError, match=r"R2R_broken\.json: expected a JSON list"):
        ds.load_r2r(p)
    g = tmp_path / "preds.json.gz"
    g.write_bytes(gzip.compress(json.dumps(preds_entries()).encode())[:-12])
    with pytest.raises(ValueError, match=r"preds\.json\.gz: corrupt or truncated gzip"):
        ds.load_predictions(g)
    b = tmp_path / "bin.json"
    b.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(ValueError, match=r"bin\.json: not UTF-8"):
        ds.load_predictions(b)


# --- predictions -------------------------------------------------------------------------------


def test_load_predictions(tmp_path):
    preds = ds.load_predictions(write(tmp_path, "preds.json", preds_entries()))
    assert list(preds) == ["7_0", "7_1", "9_0"]
    assert preds["7_0"] == ["a", "a", "b", "c"]  # kept as written, repeats included
    assert ds.load_predictions([{"instr_id": 5, "trajectory": ["a", "b"]}]) == {"5": ["a", "b"]}


@pytest.mark.parametrize(
    "mutate, match",
    [
        (
            lambda e: e.append({"instr_id": "7_1", "trajectory": [["a", 0, 0]]}),
            r"preds.json: entry 3 \(instr_id 7_1\): duplicate instr_id \(also entry 1\)",
        ),
        (lambda e: e[2].__setitem__("trajectory", []), r"preds.json: entry 2 \(instr_id 9_0\): trajectory is empty"),
        (lambda e: e[0].pop("trajectory"), r"entry 0 \(instr_id 7_0\): 'trajectory' must be a list"),
        (lambda e: e[1]["trajectory"].append([3, 0, 0]), r"entry 1 \(instr_id 7_1\): trajectory\[2\] must be"),
        (lambda e: e[1].pop("instr_id"), r"preds.json: entry 1: 'instr_id' must be a string"),
    ],
)
def test_load_predictions_errors(tmp_path, mutate, match):
    entries = preds_entries()
    mutate(entries)
    with pytest.raises(ValueError, match=match):
        ds.load_predictions(write(tmp_path, "preds.json", entries))


def test_write_predictions_round_trip(tmp_path):
    preds = {"7_0": ["a", "b"], "9_0": ["y"]}
    out = tmp_path / "out.json"
    ds.write_predictions(out, preds)
    data = json.loads(out.read_text())
    assert data == [
        {"instr_id": "7_0", "trajectory": [["a", 0.0, 0.0], ["b", 0.0, 0.0]]},
        {"instr_id": "9_0", "trajectory": [["y", 0.0, 0.0]]},
    ]
    assert ds.load_predictions(out) == preds
    # overwrite with records keeping heading / elevation; gzip by suffix
    ds.write_predictions(out, preds_entries())
    assert json.loads(out.read_text()) == preds_entries()
    gz = tmp_path / "out.json.gz"
    ds.write_predictions(gz, preds)
    assert ds.load_predictions(gz) == preds
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json", "out.json.gz"]  # no temp files left


def test_write_predictions_errors_leave_target_untouched(tmp_path):
    out = tmp_path / "out.json"
    ds.write_predictions(out, {"1_0": ["a"]})
    before = out.read_text()
    with pytest.raises(ValueError, match=r"predictions\[1\] \(2_0\): trajectory is empty"):
        ds.write_predictions(out, {"1_0": ["a"], "2_0": []})
    with pytest.raises(ValueError, match="non-finite"):
        ds.write_predictions(out, {"1_0": [["a", float("nan"), 0.0]]})
    assert out.read_text() == before
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]


# --- matching ----------------------------------------------------------------------------------


def test_match_predictions(graphs):
    ins = ds.instructions(ds.load_r2r(split_entries()))
    m = ds.match_predictions(ins, ds.load_predictions(preds_entries()), graphs)
    assert m.ids == ["7_0", "7_1", "9_0"] and len(m) == 3
    assert m.env.dtype == np.int64 and m.env.tolist() == [0, 0, 1]
    assert [p.tolist() for p in m.references] == [[0, 1, 2], [0, 1, 2], [0, 1]]
    assert [p.tolist() for p in m.queries] == [[0, 1, 2], [0, 3], [1]]  # the turn-in-place repeat is merged
    np.testing.assert_allclose(m.shortest_distance, [2.0, 2.0, 2.0])
    d = navdtw.dtw_batch(m.references, m.queries, distances=m.distances, env=m.env, workers=1)
    np.testing.assert_allclose(d, [0.0, 0.0 + 1.0 + 1.0, 2.0])
    raw = ds.match_predictions(ins, preds_entries(), graphs, collapse_repeats=False)
    assert raw.queries[0].tolist() == [0, 0, 1, 2]
    # integer keys are matched as strings
    assert ds.match_predictions([dict(ins[2], instr_id=5)], {5: ["x"]}, graphs).ids == ["5"]
    # a split of path entries is expanded to instructions
    assert ds.match_predictions(split_entries(), preds_entries(), graphs).ids == m.ids


def test_match_predictions_missing_and_extra(graphs):
    ins = ds.instructions(ds.load_r2r(split_entries()))
    preds = ds.load_predictions(preds_entries())
    del preds["7_1"]
    with pytest.raises(ValueError, match=r"no prediction for instr_id 7_1 \(1 in all\)"):
        ds.match_predictions(ins, preds, graphs)
    preds = ds.load_predictions(preds_entries())
    preds.update({f"99_{k}": ["a"] for k in range(7)})
    with pytest.raises(ValueError, match=r"predictions: entry 3 \(instr_id 99_0\): no such instruction in the split; "
        r"7 predictions have no instruction: 99_0, 99_1, 99_2, 99_3, 99_4, \.\.\. \(7 in all\)"):
        ds.match_predictions(ins, preds, graphs)


def test_match_predictions_bad_entries(graphs):
    ins = ds.instructions(ds.load_r2r(split_entries()))
    preds = ds.load_predictions(preds_entries())
    preds["7_1"] = ["a", "x"]
    with pytest.raises(ValueError, match=r"predictions: entry 1 \(instr_id 7_1\): unknown viewpoint 'x' \(trajectory\[1\]\) in scan 's1'"):
        ds.match_predictions(ins, preds, graphs)
    preds["7_1"] = []
    with pytest.raises(ValueError, match=r"predictions: entry 1 \(instr_id 7_1\): trajectory is empty"):
        ds.match_predictions(ins, preds, graphs)
    bad_scan = [dict(r) for r in ins]
    bad_scan[2]["scan"] = "s7"
    with pytest.raises(ValueError, match=r"entry 2 \(instr_id 9_0, reference\): unknown scan 's7'"):
        ds.match_predictions(bad_scan, ds.load_predictions(preds_entries()), graphs)
    # strict: 9_0 starts at y, its reference at x
    with pytest.raises(ValueError, match=r"predictions: entry 2 \(instr_id 9_0\): trajectory starts at 'y', but the reference starts at 'x'"):
        ds.match_predictions(ins, preds_entries(), graphs, strict=True)


# --- R2R-CE and HA-VLN (synthetic) -------------------------------------------------------------


def test_vlnce_synthetic(tmp_path):
    eps = {
        "episodes": [
            {"episode_id": 3, "scene_id": "mp3d/abc/abc.glb", "reference_path": [[0, 0, 0], [1, 0, 2]]},
        ]
    }
    p = tmp_path / "val.json.gz"
    p.write_bytes(gzip.compress(json.dumps(eps).encode()))
    out = ds.load_vlnce_episodes(p)
    assert out[0]["scan"] == "abc"
    assert out[0]["reference_path"].dtype == np.float64 and out[0]["reference_path"].shape == (2, 3)
    eps["episodes"].append({"episode_id": 4, "reference_path": [[0, 0]]})
    with pytest.raises(ValueError, match=r"val.json: episode 1 \(episode_id 4\): 'reference_path' must be a non-empty"):
        ds.load_vlnce_episodes(write(tmp_path, "val.json", eps))
    eps["episodes"][1] = {"episode_id": 3, "reference_path": [[0, 0, 0]]}
    with pytest.raises(ValueError, match=r"episode 1 \(episode_id 3\): duplicate episode_id"):
        ds.load_vlnce_episodes(eps)
    gt = {"3": {"locations": [[0, 0, 0], [0.25, 0, 0]], "actions": [1, 0], "forward_steps": 1}}
    g = ds.load_vlnce_gt(write(tmp_path, "gt.json", gt))
    assert g["3"]["locations"].shape == (2, 3) and g["3"]["actions"].tolist() == [1, 0] and g["3"]["forward_steps"] == 1
    gt["3"]["locations"] = []
    with pytest.raises(ValueError, match=r"gt.json: entry 0 \(episode_id 3\): 'locations'"):
        ds.load_vlnce_gt(write(tmp_path, "gt.json", gt))


def test_havln_synthetic(tmp_path):
    assert ds.load_havln_collisions({"1": 0, "2": 3}) == {"1": 0, "2": 3}
    with pytest.raises(ValueError, match=r"c.json: entry 1 \(episode_id 2\): collision count must be an integer >= 0"):
        ds.load_havln_collisions(write(tmp_path, "c.json", {"1": 0, "2": -1}))
    with pytest.raises(ValueError, match=r"entry 0 \(episode_id 1\)"):
        ds.load_havln_collisions({"1": 1.5})
    with pytest.raises(ValueError, match=r"entry 0 \(episode_id 1\)"):
        ds.load_havln_collisions({"1": True})


# --- real data ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def real_graphs(connectivity_dir):
    return load_connectivity(connectivity_dir)


@pytest.mark.data
def test_real_r2r_and_r4r(data_dir, real_graphs):
    unseen = ds.load_r2r(data_dir / "r2r" / "R2R_val_unseen.json", graphs=real_graphs)
    assert len(unseen) == 783 and len(ds.instructions(unseen)) == 2349
    seen = ds.load_r2r(data_dir / "r2r" / "R2R_val_seen.json", graphs=real_graphs)
    assert len(seen) == 340
    r4r = ds.load_r2r(data_dir / "r4r_generated" / "R4R_val_seen.paths.json", graphs=real_graphs)
    assert len(r4r) == 115
    ins = ds.instructions(r4r)
    assert len(ins) == sum(e["num_instructions"] for e in r4r)
    r4r_unseen = ds.load_r2r(data_dir / "r4r_generated" / "R4R_val_unseen.paths.json", graphs=real_graphs)
    assert len(r4r_unseen) == 5026


@pytest.mark.data
def test_real_shortest_agent(data_dir, real_graphs):
    ins = ds.instructions(data_dir / "r2r" / "R2R_val_unseen.json")
    preds = ds.load_predictions(data_dir / "matterport3dsimulator" / "web" / "app" / "val_unseen_shortest_agent.json")
    assert len(preds) == 2349
    m = ds.match_predictions(ins, preds, real_graphs, strict=True)
    assert len(m) == 2349
    # the R2R evaluator's numbers for this file: length 9.4797 m, nav_error 0
    lengths = [real_graphs[s].path_length(q) for s, q in zip(m.scans, m.queries)]
    assert np.mean(lengths) == pytest.approx(9.479686302659548, abs=1e-4)
    end = np.array([real_graphs[s].distances[r[-1], q[-1]] for s, r, q in zip(m.scans, m.references, m.queries)])
    assert (end == 0).all()
    assert np.isfinite(m.shortest_distance).all() and (m.shortest_distance > 0).all()


@pytest.mark.data
def test_real_vlnce_and_havln(data_dir):
    base = data_dir / "r2r_vlnce" / "R2R_VLNCE_v1-3_preprocessed" / "val_unseen"
    eps = ds.load_vlnce_episodes(base / "val_unseen.json.gz")
    assert len(eps) == 1839
    gt = ds.load_vlnce_gt(base / "val_unseen_gt.json.gz")
    assert len(gt) == 1839
    for e in eps[:50]:
        loc = gt[str(e["episode_id"])]["locations"]
        np.testing.assert_allclose(e["reference_path"][0], e["start_position"], atol=1e-5)
        assert np.linalg.norm(np.diff(loc, axis=0), axis=1).max() < 0.5
    coll = ds.load_havln_collisions(data_dir / "ha_vln" / "collision_num_val_unseen.json")
    assert len(coll) == 1839 and min(coll.values()) >= 0
    assert set(coll) == {str(e["episode_id"]) for e in eps}
