"""navdtw.datasets.rxr: RxR guide annotations, VLN-HAMT / follower predictions, matching, per-language
summaries (Scores.summary(by=...)); synthetic files in tmp_path plus RxR-format files generated from
the real R2R val unseen split and a real R2R agent (skipped without the data)."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest

import navdtw
from navdtw import datasets as ds
from navdtw.datasets import rxr
from navdtw.graphs import GraphSet, NavGraph


@pytest.fixture
def graphs():
    # scan "s1": a line a-b-c-d (1 m apart); scan "s2": x-y (2 m)
    g1 = NavGraph([[0, 0, 0], [1, 0, 0], [2, 0, 0], [3, 0, 0]], [[0, 1], [1, 2], [2, 3]], ids=list("abcd"), name="s1")
    g2 = NavGraph([[0, 0, 0], [0, 2, 0]], [[0, 1]], ids=["x", "y"], name="s2")
    return GraphSet([g1, g2])


def guide_lines():
    common = {"split": "val_unseen", "annotator_id": 3, "heading": 0.5, "edit_distance": 0.1}
    return [
        dict(common, instruction_id=41, path_id=7, scan="s1", path=["a", "b", "c"], language="en-IN", instruction="go"),
        dict(common, instruction_id=42, path_id=7, scan="s1", path=["a", "b", "c"], language="hi-IN", instruction="ja"),
        dict(common, instruction_id=50, path_id=9, scan="s2", path=["x", "y"], language="en-IN", instruction="up"),
    ]


def write_lines(path, lines, *, gz=False):
    text = "".join(json.dumps(x) + "\n" for x in lines)
    if gz:
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)
    return path


HAMT_PREDS = [
    {"instr_id": "7_41", "trajectory": [["a", 0.0, 0.0], ["a", 0.5, 0.0], ["b", 0.5, 0.0], ["c", 0.5, 0.0]]},
    {"instr_id": "7_42", "trajectory": [["a", 0.0, 0.0], ["b", 0.0, 0.0], ["d", 0.0, 0.0]]},
    {"instr_id": "9_50", "trajectory": [["x", 0.0, 0.0]]},
]


# --- guide annotations ---------------------------------------------------------------------------


@pytest.mark.parametrize("gz", [False, True])
def test_load_guide(tmp_path, graphs, gz):
    path = write_lines(tmp_path / ("rxr_val_unseen_guide.jsonl" + (".gz" if gz else "")), guide_lines(), gz=gz)
    recs = ds.load_rxr_guide(path, graphs=graphs)
    assert [r["instr_id"] for r in recs] == ["7_41", "7_42", "9_50"]  # VLN-HAMT: '%d_%d' % (path_id, instruction_id)
    assert [r["language"] for r in recs] == ["en-IN", "hi-IN", "en-IN"]
    assert recs[0]["instruction"] == "go" and recs[0]["annotator_id"] == 3
    assert ds.load_rxr_guide(guide_lines()) == recs  # already parsed lines
    # a test split has no path_id: HAMT's id is str(instruction_id)
    line = {k: v for k, v in guide_lines()[0].items() if k != "path_id"}
    assert rxr.instr_id(line) == "41" and ds.load_rxr_guide([line])[0]["instr_id"] == "41"


def test_guide_line_that_is_not_json(tmp_path):
    path = tmp_path / "rxr_val_unseen_guide.jsonl.gz"
    text = json.dumps(guide_lines()[0]) + "\n\n" + '{"instruction_id": 42, "path_id": 7,\n'
    path.write_bytes(gzip.compress(text.encode()))
    with pytest.raises(ValueError, match=r"rxr_val_unseen_guide\.jsonl\.gz: line 3 is not JSON \(column \d+: "):
        ds.load_rxr_guide(path)


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"instruction_id": "41"}, r"line 2: 'instruction_id' must be an integer"),
        ({"instruction_id": 41}, r"line 2 \(instruction_id 41\): duplicate instruction_id \(also line 1\)"),
        ({"path_id": "7"}, r"line 2 \(instruction_id 42\): 'path_id' must be an integer"),
        ({"scan": ""}, r"'scan' must be a non-empty string"),
        ({"path": []}, r"line 2 \(instruction_id 42\): 'path' is empty"),
        ({"path": ["a", 3]}, r"'path' must be a list of viewpoint ids"),
        ({"language": None}, r"'language' must be a string"),
        ({"heading": float("nan")}, r"'heading' must be a finite number"),
    ],
)
def test_guide_errors(tmp_path, change, match):
    lines = guide_lines()
    lines[1].update(change)
    path = tmp_path / "g.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines))
    with pytest.raises(ValueError, match=r"g\.jsonl: (line 2 \(instruction_id 42\): )?" + match):
        ds.load_rxr_guide(path)


def test_guide_graph_checks(graphs):
    lines = guide_lines()
    lines[2]["path"] = ["x", "z"]
    with pytest.raises(ValueError, match=r"entry 2 \(instruction_id 50\): path\[1\] = 'z' is not a viewpoint of scan"):
        ds.load_rxr_guide(lines, graphs=graphs)
    lines[2]["scan"] = "s9"
    with pytest.raises(ValueError, match=r"unknown scan 's9'"):
        ds.load_rxr_guide(lines, graphs=graphs)
    with pytest.raises(ValueError, match=r"<input>: expected a list of guide annotations"):
        ds.load_rxr_guide({"a": 1})


# --- predictions ---------------------------------------------------------------------------------


def test_load_predictions_both_formats(tmp_path):
    hamt = tmp_path / "submit_val_unseen.json"
    hamt.write_text(json.dumps(HAMT_PREDS))
    got = ds.load_rxr_predictions(hamt)
    assert got == {"7_41": ["a", "a", "b", "c"], "7_42": ["a", "b", "d"], "9_50": ["x"]}
    follower = [
        {"demonstration_id": 1, "instruction_id": 41, "path": ["a", "b", "c"], "metrics": {"ndtw": 1.0}},
        {"demonstration_id": 2, "instruction_id": 50, "path": ["x"]},
    ]
    f = write_lines(tmp_path / "rxr_val_unseen_follower.jsonl.gz", follower, gz=True)
    assert ds.load_rxr_predictions(f) == {"41": ["a", "b", "c"], "50": ["x"]}
    assert ds.load_rxr_predictions(follower) == {"41": ["a", "b", "c"], "50": ["x"]}


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ('{"instruction_id": 41, "path": ["a"]}\nnot json\n', r"f\.jsonl: line 2 is not JSON"),
        ('{"instruction_id": 41, "path": []}\n', r"f\.jsonl: line 1 \(instruction_id 41\): 'path' is empty"),
        ('{"instruction_id": "41", "path": ["a"]}\n', r"line 1: 'instruction_id' must be an integer"),
        ('{"instruction_id": 41, "path": ["a"]}\n{"instruction_id": 41, "path": ["b"]}\n', r"line 2 .*duplicate id"),
        ('{"instr_id": "7_41", "trajectory": []}\n', r"line 1 \(instr_id 7_41\): trajectory is empty"),
        ('{"path": ["a"]}\n', r"line 1: needs 'instr_id' and 'trajectory' \(VLN-HAMT\) or 'instruction_id'"),
        ("[1, 2]\n", r"f\.jsonl: entry 0: expected an object"),
    ],
)
def test_prediction_errors(tmp_path, text, match):
    path = tmp_path / "f.jsonl"
    path.write_text(text)
    with pytest.raises(ValueError, match=match):
        ds.load_rxr_predictions(path)


# --- matching and the benchmark ------------------------------------------------------------------


def test_match_predictions(graphs):
    recs = ds.load_rxr_guide(guide_lines(), graphs=graphs)
    m = rxr.match_predictions(recs, HAMT_PREDS, graphs)
    assert m.ids == ["7_41", "7_42", "9_50"] and m.id_name == "instr_id"
    assert m.groups == {"language": ["en-IN", "hi-IN", "en-IN"]}
    assert [q.tolist() for q in m.queries] == [[0, 1, 2], [0, 1, 3], [0]]
    assert rxr.match_predictions(guide_lines(), HAMT_PREDS, graphs).ids == m.ids  # guide lines are read first
    raw = rxr.match_predictions(recs, HAMT_PREDS, graphs, collapse_repeats=False)
    assert raw.queries[0].tolist() == [0, 0, 1, 2]
    # follower-style keys (instruction_id) find the same instructions
    follower = {"41": ["a", "b", "c"], "42": ["a", "b", "d"], "50": ["x"]}
    assert [q.tolist() for q in rxr.match_predictions(recs, follower, graphs).queries] == [[0, 1, 2], [0, 1, 3], [0]]
    with pytest.raises(ValueError, match=r"predictions: no prediction for instr_id 9_50"):
        rxr.match_predictions(recs, {"41": ["a"], "42": ["a"]}, graphs)
    with pytest.raises(ValueError, match=r"entry 3 \(instr_id 8_1\): no such instruction in the split"):
        rxr.match_predictions(recs, dict(follower, **{"8_1": ["a"]}), graphs)
    with pytest.raises(ValueError, match=r"instruction 7_41 has two predictions \(under 7_41 and 41\)"):
        rxr.match_predictions(recs, {"7_41": ["a"], "41": ["a"]}, graphs)


def test_match_names_the_predictions_file(tmp_path, graphs):
    recs = ds.load_rxr_guide(guide_lines(), graphs=graphs)
    bad = [dict(p) for p in HAMT_PREDS]
    bad[1] = {"instr_id": "7_42", "trajectory": [["a", 0, 0], ["q", 0, 0]]}
    path = tmp_path / "submit_val_unseen.json"
    path.write_text(json.dumps(bad))
    with pytest.raises(ValueError, match=r"submit_val_unseen\.json: entry 1 \(instr_id 7_42\): unknown viewpoint 'q'"):
        rxr.match_predictions(recs, path, graphs)


def write_connectivity(folder, graphs):
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
            pose_list, unobstructed = pose.ravel().tolist(), unob[k].tolist()
            entries.append({"image_id": g.ids[k], "pose": pose_list, "included": True, "unobstructed": unobstructed})
        (folder / f"{scan}_connectivity.json").write_text(json.dumps(entries))


def test_benchmark_scores_by_language(tmp_path, graphs):
    write_connectivity(tmp_path / "conn", graphs)
    guide = write_lines(tmp_path / "rxr_val_unseen_guide.jsonl.gz", guide_lines(), gz=True)
    bench = ds.open("rxr", split=guide, connectivity=tmp_path / "conn")
    assert bench.kind.default_convention == "duet" and bench.kind.id_name == "instr_id" and bench.n == 3
    m = bench.match(HAMT_PREDS)  # duet: raw viewpoints, as VLN-HAMT's cal_dtw
    assert m.queries[0].tolist() == [0, 0, 1, 2]
    assert bench.match(HAMT_PREDS, convention="paper").queries[0].tolist() == [0, 1, 2]
    with pytest.raises(ValueError, match=r"convention 'r2r' does not apply to rxr data"):
        bench.match(HAMT_PREDS, convention="r2r")
    scores = bench.evaluate(m)
    assert scores.groups == {"language": ["en-IN", "hi-IN", "en-IN"]}
    by = scores.summary(by="language")
    assert list(by) == ["all", "en-IN", "hi-IN"]
    assert by["all"] == scores.summary()
    for lang in ("en-IN", "hi-IN"):
        sel = np.array(scores.groups["language"]) == lang
        for k in scores:
            assert by[lang][k] == pytest.approx(float(np.mean(scores[k][sel])), rel=0, abs=0)
    assert by["hi-IN"]["dtw"] == scores["dtw"][1] == 1.0 and by["en-IN"]["dtw"] == (0.0 + 2.0) / 2
    assert bench.paths() == [
        {"path_id": 7, "scan": "s1", "path": ["a", "b", "c"], "num_instructions": 2},
        {"path_id": 9, "scan": "s2", "path": ["x", "y"], "num_instructions": 1},
    ]
    base = bench.baseline(64, seed=1, progress=False, workers=1)
    assert 0.0 <= base["ndtw"] <= 1.0 and set(base) >= {"sr", "spl", "ndtw", "sdtw"}


def test_open_errors(tmp_path, graphs):
    write_connectivity(tmp_path / "conn", graphs)
    lines = guide_lines()
    lines[1]["scan"] = "nowhere"
    guide = write_lines(tmp_path / "g.jsonl", lines)
    with pytest.raises(ValueError, match=r"g\.jsonl: line 2 \(instruction_id 42\): unknown scan 'nowhere'"):
        ds.open("rxr", split=guide, connectivity=tmp_path / "conn")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    with pytest.raises(ValueError, match=r"empty\.jsonl: no guide annotations"):
        ds.open("rxr", split=empty, connectivity=tmp_path / "conn")


# --- Scores.summary(by=...) ----------------------------------------------------------------------


def test_summary_by():
    d = np.array([[0.0, 1.0, 5.0], [1.0, 0.0, 4.0], [5.0, 4.0, 0.0]])
    refs = [[0, 1], [0, 1], [0, 2], [1, 2]]
    qrys = [[0, 1], [0, 2], [0, 2], [1, 0]]
    s = navdtw.evaluate(refs, qrys, distances=d)
    plain = s.summary()
    labels = ["b", "a", "b", "a"]
    by = s.summary(by=labels)
    assert list(by) == ["all", "a", "b"] and by["all"] == plain
    for lab in ("a", "b"):
        sel = np.array(labels) == lab
        assert by[lab] == {k: float(np.mean(s[k][sel])) for k in s}
    pct = s.summary(by=np.array(labels), percent=True)
    assert pct["a"]["sr"] == pytest.approx(100 * by["a"]["sr"]) and pct["a"]["ne"] == by["a"]["ne"]
    assert s.groups == {}
    with pytest.raises(ValueError, match=r"no per-episode column 'language' to group by \(groups: none\)"):
        s.summary(by="language")
    s.groups = {"language": labels}
    assert s.summary(by="language") == by
    with pytest.raises(ValueError, match=r"one label per episode \(4\), got 3"):
        s.summary(by=labels[:3])
    with pytest.raises(ValueError, match=r"a group is called 'all'"):
        s.summary(by=["all", "a", "a", "a"])
    assert s.summary(by=[1, 2, 1, 2])["1"] == s.summary(by=["x", "y", "x", "y"])["x"]  # labels as strings


# --- RxR-format files generated from the real R2R val unseen split --------------------------------

LANGS = ("en-IN", "en-US", "hi-IN", "te-IN")


@pytest.fixture(scope="module")
def generated(data_dir, tmp_path_factory):
    """An RxR guide file for R2R val unseen (same paths; instruction_id = path_id * 10 + k, languages
    cycling) and the real prevalent_r2r agent's predictions in both RxR prediction formats."""
    results = sorted((data_dir / "r2r_results" / "prevalent_r2r").glob("*val_unseen_iter_36000.json"))
    if not results:
        pytest.skip("prevalent_r2r val unseen results not found")
    out = tmp_path_factory.mktemp("rxr")
    split = data_dir / "r2r" / "R2R_val_unseen.json"
    lines, new_id = [], {}
    for rec in ds.instructions(split):
        iid = rec["path_id"] * 10 + rec["instruction_index"]
        new_id[rec["instr_id"]] = (f"{rec['path_id']}_{iid}", iid)
        lines.append(
            {
                "split": "val_unseen",
                "instruction_id": iid,
                "annotator_id": 0,
                "language": LANGS[len(lines) % 4],
                "path_id": rec["path_id"],
                "scan": rec["scan"],
                "path": rec["path"],
                "heading": rec["heading"],
                "instruction": rec["instruction"],
                "edit_distance": 0.0,
            }
        )
    guide = write_lines(out / "rxr_val_unseen_guide.jsonl.gz", lines, gz=True)
    r2r_preds = json.loads(results[0].read_text())
    hamt = [{"instr_id": new_id[p["instr_id"]][0], "trajectory": p["trajectory"]} for p in r2r_preds]
    (out / "submit_val_unseen.json").write_text(json.dumps(hamt))
    follower = [
        {"instruction_id": new_id[p["instr_id"]][1], "path": [s[0] for s in p["trajectory"]]} for p in r2r_preds
    ]
    write_lines(out / "follower.jsonl", follower)
    return {"guide": guide, "split": split, "r2r_preds": results[0], "dir": out, "lines": lines}


@pytest.mark.data
@pytest.mark.parametrize("convention", ["duet", "paper"])
def test_generated_rxr_scores_as_r2r(generated, connectivity_dir, convention):
    bench = ds.open("rxr", split=generated["guide"], connectivity=connectivity_dir)
    r2r_bench = ds.open("r2r", split=generated["split"], connectivity=connectivity_dir)
    want = r2r_bench.evaluate(r2r_bench.match(generated["r2r_preds"], convention=convention), convention=convention)
    for name in ("submit_val_unseen.json", "follower.jsonl"):
        matched = bench.match(generated["dir"] / name, convention=convention)
        got = bench.evaluate(matched, convention=convention)
        assert len(got) == len(want) == 2349
        assert got.ids == [f"{r['path_id']}_{r['instruction_id']}" for r in generated["lines"]]
        for k in want:
            np.testing.assert_array_equal(got[k], want[k], err_msg=f"{convention} {name} {k}")
        by = got.summary(by="language")
        assert list(by) == ["all", *LANGS] and by["all"] == got.summary()
        lang = np.array([line["language"] for line in generated["lines"]])
        for g in LANGS:
            for k in got:
                assert by[g][k] == float(np.mean(got[k][lang == g]))


@pytest.mark.data
def test_generated_rxr_baseline_is_r2rs(generated, connectivity_dir):
    bench = ds.open("rxr", split=generated["guide"], connectivity=connectivity_dir)
    r2r_bench = ds.open("r2r", split=generated["split"], connectivity=connectivity_dir)
    kw = {"seed": 3, "convention": "paper", "progress": False}
    assert bench.baseline(5000, **kw) == r2r_bench.baseline(5000, **kw)


@pytest.mark.data
def test_readme_sample(connectivity_dir):
    """The RxR README's sample guide line (instruction 26) and its follower line, read and scored.

    The README's follower metrics (dtw 1.54617, ndtw 0.902057 = exp(-1.54617 / (5 * 3)), spl
    0.947936, ne 0) come from an unpublished pipeline; over the Matterport3D connectivity graph
    every evaluator's distances give dtw 1.575959, ndtw 0.900267, spl 0.948222 (documented in
    docs/metrics.md): the reader and the nDTW normalisation agree, the distances differ by 2%."""
    if not (connectivity_dir / "2n8kARJN3HM_connectivity.json").is_file():
        pytest.skip("scan 2n8kARJN3HM not in the connectivity folder")
    graphs = navdtw.load_connectivity(connectivity_dir, scans=["2n8kARJN3HM"])
    path = [
        "d38a4c31821c48ac9082d896e628c128",
        "1d6a100cf3d34326936ef7d0a50840d9",
        "87998608d4844fcfaca266bd5aba6516",
        "5248918af65645a28a65f59d3424598a",
        "e0b2917ecb6d4e31846957451348f80a",
    ]
    guide = [
        {
            "path_id": 11,
            "split": "val_seen",
            "scan": "2n8kARJN3HM",
            "heading": 3.105381634905035,
            "path": path,
            "instruction_id": 26,
            "annotator_id": 19,
            "language": "en-IN",
            "instruction": "Okay, now you are in a room facing towards two bathtubs, ...",
            "edit_distance": 0.11137440758293839,
        }
    ]
    follower = [
        {
            "demonstration_id": 26,
            "instruction_id": 26,
            "path": [*path[:2], "d8eb4eab2d3442e1a3a7a74fc810be22", *path[2:]],
        }
    ]
    m = rxr.match_predictions(ds.load_rxr_guide(guide, graphs=graphs), follower, graphs, collapse_repeats=False)
    s = m.evaluate(convention="duet")
    assert m.ids == ["11_26"] and s["ne"][0] == 0.0 and s["sr"][0] == 1.0
    assert s["ndtw"][0] == pytest.approx(np.exp(-s["dtw"][0] / 15.0))
    assert s["dtw"][0] == pytest.approx(1.575959, abs=1e-6) and abs(s["dtw"][0] - 1.54617) < 0.03
    assert s["ndtw"][0] == pytest.approx(0.900267, abs=1e-6) and abs(s["ndtw"][0] - 0.902057) < 0.002
    assert s["spl"][0] == pytest.approx(0.948222, abs=1e-6) and abs(s["spl"][0] - 0.947936) < 0.001
