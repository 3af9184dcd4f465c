"""navdtw.datasets.r2r: R2R / R4R splits, predictions, the matcher; synthetic files in tmp_path plus
the real R2R / R4R files (skipped without the data)."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest

import navdtw
from navdtw import datasets as ds
from navdtw.datasets import _common, r2r
from navdtw.datasets.matterport import load_connectivity
from navdtw.graphs import GraphSet, NavGraph


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
    with pytest.raises(
        ValueError,
        match=r"predictions: entry 3 \(instr_id 99_0\): no such instruction in the split; "
        r"7 predictions have no instruction: 99_0, 99_1, 99_2, 99_3, 99_4, … \(7 in all\)",
    ):
        ds.match_predictions(ins, preds, graphs)
    # one such prediction: named once, without a list of one
    preds = ds.load_predictions(preds_entries())
    preds["99_0"] = ["a"]
    with pytest.raises(ValueError, match=r"^predictions: entry 3 \(instr_id 99_0\): no such instruction in the split$"):
        ds.match_predictions(ins, preds, graphs)


def test_match_predictions_bad_entries(graphs):
    ins = ds.instructions(ds.load_r2r(split_entries()))
    preds = ds.load_predictions(preds_entries())
    preds["7_1"] = ["a", "x"]
    with pytest.raises(
        ValueError,
        match=r"predictions: entry 1 \(instr_id 7_1\): unknown viewpoint 'x' \(trajectory\[1\]\) in scan 's1'",
    ):
        ds.match_predictions(ins, preds, graphs)
    preds["7_1"] = []
    with pytest.raises(ValueError, match=r"predictions: entry 1 \(instr_id 7_1\): trajectory is empty"):
        ds.match_predictions(ins, preds, graphs)
    bad_scan = [dict(r) for r in ins]
    bad_scan[2]["scan"] = "s7"
    with pytest.raises(ValueError, match=r"entry 2 \(instr_id 9_0, reference\): unknown scan 's7'"):
        ds.match_predictions(bad_scan, ds.load_predictions(preds_entries()), graphs)
    # strict: 9_0 starts at y, its reference at x
    with pytest.raises(
        ValueError,
        match=r"predictions: entry 2 \(instr_id 9_0\): trajectory starts at 'y', but the reference starts at 'x'",
    ):
        ds.match_predictions(ins, preds_entries(), graphs, strict=True)


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


# --- the CLI's one-call reader -----------------------------------------------------------------


def conn_folder(tmp_path, graphs):
    """Writes the graphs of ``graphs`` as Matterport3D connectivity files (pose = identity + position)."""
    folder = tmp_path / "conn"
    folder.mkdir()
    for scan in graphs:
        g = graphs[scan]
        n = len(g)
        unob = np.zeros((n, n), dtype=bool)
        unob[g.edges[:, 0], g.edges[:, 1]] = True
        entries = []
        for k in range(n):
            pose = np.eye(4)
            pose[:3, 3] = g.positions[k]
            entries.append(
                {
                    "image_id": g.ids[k],
                    "pose": pose.ravel().tolist(),
                    "included": True,
                    "unobstructed": unob[k].tolist(),
                }
            )
        (folder / f"{scan}_connectivity.json").write_text(json.dumps(entries))
    return folder


def test_load_split_graphs_and_load_matched(tmp_path, graphs):
    conn = conn_folder(tmp_path, graphs)
    split = write(tmp_path, "R2R_toy.json", split_entries()[::-1])  # s2 first
    entries, gs = r2r.load_split_graphs(split, conn)
    assert gs.scans == ["s2", "s1"] and [e["path_id"] for e in entries] == [9, 7]
    preds = write(tmp_path, "results.json", preds_entries())
    m = r2r.load_matched(split, conn, preds)
    assert isinstance(m, ds.MatchedEpisodes) and m.id_name == "instr_id" and m.extra == {}
    assert m.ids == ["9_0", "7_0", "7_1"] and m.env.tolist() == [0, 1, 1]
    ref = ds.match_predictions(ds.instructions(entries), ds.load_predictions(preds), gs)
    a, b = m.evaluate(threshold=3.0, convention="r2r"), ref.evaluate(threshold=3.0, convention="r2r")
    for k in a:
        np.testing.assert_array_equal(a[k], b[k])
    direct = navdtw.evaluate(
        m.references,
        m.queries,
        distances=m.distances,
        env=m.env,
        shortest_distance=m.shortest_distance,
        convention="r2r",
    )
    np.testing.assert_array_equal(a["spl"], direct["spl"])
    # strict names the predictions file and entry
    with pytest.raises(ValueError, match=r"results\.json: entry 2 \(instr_id 9_0\): trajectory starts at 'y'"):
        r2r.load_matched(split, conn, preds, strict=True)


def test_load_split_graphs_errors(tmp_path, graphs):
    conn = conn_folder(tmp_path, graphs)
    entries = split_entries()
    entries[1]["scan"] = "s9"
    with pytest.raises(ValueError, match=r"R2R_toy\.json: entry 1 \(path_id 9\): unknown scan 's9' \(no s9_conn"):
        r2r.load_split_graphs(write(tmp_path, "R2R_toy.json", entries), conn)
    entries = split_entries()
    entries[1]["path"] = ["x", "q"]
    with pytest.raises(ValueError, match=r"R2R_toy\.json: entry 1 \(path_id 9\): path\[1\] = 'q' is not a viewpoint"):
        r2r.load_split_graphs(write(tmp_path, "R2R_toy.json", entries), conn)
    with pytest.raises(ValueError, match=r"R2R_toy\.json: the split is empty"):
        r2r.load_split_graphs(write(tmp_path, "R2R_toy.json", []), conn)
    with pytest.raises(FileNotFoundError, match="connectivity folder"):
        r2r.load_split_graphs(split_entries(), tmp_path / "nowhere")


def test_match_predictions_names_the_file_entry(tmp_path, graphs):
    ins = ds.instructions(ds.load_r2r(split_entries()))
    entries = preds_entries()
    entries[2]["trajectory"] = [["x", 0, 0], ["zz", 0, 0]]
    path = write(tmp_path, "results.json", entries)
    with pytest.raises(
        ValueError, match=r"results\.json: entry 2 \(instr_id 9_0\): unknown viewpoint 'zz' \(trajectory"
    ):
        ds.match_predictions(ins, path, graphs)
    with pytest.raises(ValueError, match=r"results\.json: no prediction for instr_id 9_0 \(1 in all\)"):
        ds.match_predictions(ins, write(tmp_path, "results.json", preds_entries()[:2]), graphs)


def test_module_layout_and_old_names():
    assert r2r.DEFAULT_CONVENTION in r2r.CONVENTIONS
    assert set(r2r.CONVENTIONS) <= set(navdtw.CONVENTIONS)
    for name in ("load_r2r", "instructions", "load_predictions", "write_predictions", "match_predictions"):
        assert getattr(ds, name) is getattr(r2r, name)
    for private in ("read_json", "read_text", "points_array"):  # 0.1's helpers: removed, nothing was released
        assert not hasattr(ds, private) and hasattr(_common, private)
    with pytest.raises(AttributeError):
        ds.no_such_reader  # noqa: B018
