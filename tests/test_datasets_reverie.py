"""navdtw.datasets.reverie: the REVERIE split, object boxes, predictions, the matcher, the rgs / rgspl
metrics and success given per episode. Synthetic files in tmp_path, and the real REVERIE val splits
(skipped without the data) against a plain-Python twin of the official evaluator written here from
its published rules (YuankaiQi/REVERIE tasks/REVERIE/eval_release.py) and of VLN-DUET's."""

from __future__ import annotations

import gzip
import json
import random
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import navdtw
from navdtw import datasets as ds
from navdtw.datasets import reverie
from navdtw.graphs import GraphSet, NavGraph

# --------------------------------------------------------------------------------------------
# plain twins of the evaluators (graph distances from navdtw, everything else written here)
# --------------------------------------------------------------------------------------------


def visible_sets(boxes: dict) -> dict[str, set]:
    """'<scan>_<vp>' -> ids (str) of the objects with a non-empty visible_pos there."""
    out = {}
    for key, content in boxes.items():
        for _vp, objs in content.items():
            out[key] = {str(o) for o, box in objs.items() if len(box["visible_pos"]) > 0}
    return out


def official_twin(split, visible, dist, results):
    """eval_release.py's score(evalType='whole'): per scored instr_id, the values it averages."""
    gt = {e["id"]: e for e in split}
    expected = {f"{e['id']}_{k}" for e in split for k in range(len(e["instructions"]))}
    out = {}
    for item in results:
        iid = item["instr_id"]
        if iid not in expected:
            continue
        expected.remove(iid)
        parts = iid.split("_")
        e = gt[parts[0] + "_" + parts[1]]
        scan, obj = e["scan"], str(e["objId"])
        traj = [step[0] for step in item["trajectory"]]
        rgs = 1.0 if str(item["predObjId"]) == obj else 0.0
        success = obj in visible.get(scan + "_" + traj[-1], set())
        oracle = any(obj in visible.get(scan + "_" + v, set()) for v in traj)
        length = sum(dist(scan, a, b) for a, b in zip(traj[:-1], traj[1:]))
        sp = dist(scan, e["path"][0], e["path"][-1])
        ratio = sp / max(length, sp)
        out[iid] = {
            "sr": float(success),
            "osr": float(oracle),
            "spl": ratio if success else 0.0,
            "rgs": rgs,
            "rgspl": ratio if rgs else 0.0,
            "pl": length,
        }
    assert not expected
    return out


def duet_twin(split, visible, dist, results):
    """VLN-DUET's REVERIE _eval_item, per entry (nested trajectories, pred_objid may be None)."""
    gt = {f"{e['id']}_{k}": e for e in split for k in range(len(e["instructions"]))}
    out = {}
    for item in results:
        e = gt[item["instr_id"]]
        scan, obj = e["scan"], str(e["objId"])
        path = [vp for segment in item["trajectory"] for vp in segment]  # DUET: sum(trajectory, [])
        goals = {vp for vp in set(e["path"]) | set(path) if obj in visible.get(scan + "_" + vp, set())}
        length = sum(dist(scan, a, b) for a, b in zip(path[:-1], path[1:]))
        gt_len = sum(dist(scan, a, b) for a, b in zip(e["path"][:-1], e["path"][1:]))
        success = float(path[-1] in goals)
        rgs = float(str(item.get("pred_objid")) == obj)
        out[item["instr_id"]] = {
            "sr": success,
            "osr": float(any(v in goals for v in path)),
            "spl": success * gt_len / max(length, gt_len, 0.01),
            "rgs": rgs,
            "rgspl": rgs * gt_len / max(length, gt_len, 0.01),
            "pl": length,
        }
    return out


# --------------------------------------------------------------------------------------------
# synthetic data: scan s1 is a line a-b-c-d (1 m apart), scan s2 is x-y (2 m)
# --------------------------------------------------------------------------------------------


@pytest.fixture
def graphs():
    g1 = NavGraph([[0, 0, 0], [1, 0, 0], [2, 0, 0], [3, 0, 0]], [[0, 1], [1, 2], [2, 3]], ids=list("abcd"), name="s1")
    g2 = NavGraph([[0, 0, 0], [0, 2, 0]], [[0, 1]], ids=["x", "y"], name="s2")
    return GraphSet([g1, g2])


def split_entries():
    return [
        {"id": "7_5", "path_id": 7, "scan": "s1", "path": ["a", "b", "c"], "objId": 5, "instructions": ["i0", "i1"]},
        {"id": "7_6", "path_id": 7, "scan": "s1", "path": ["a", "b", "c"], "objId": 6, "instructions": ["j0"]},
        {"id": "9_1", "path_id": 9, "scan": "s2", "path": ["x", "y"], "objId": 1, "instructions": ["k0"]},
    ]


def box(visible: dict) -> dict:
    """{vp: {obj: visible?}} -> the box file content of one viewpoint."""
    return {
        vp: {str(o): {"name": "x", "visible_pos": [3] if v else [], "bbox2d": []} for o, v in objs.items()}
        for vp, objs in visible.items()
    }


def boxes():
    # object 5 visible from c and d, 6 from b (listed but not visible from c), 1 from y
    return {
        "s1_a": box({"a": {9: True}}),
        "s1_b": box({"b": {6: True}}),
        "s1_c": box({"c": {5: True, 6: False}}),
        "s1_d": box({"d": {5: True}}),
        "s2_y": box({"y": {1: True}}),
    }


def write(tmp_path, name, obj):
    p = tmp_path / name
    if name.endswith(".gz"):
        p.write_bytes(gzip.compress(json.dumps(obj).encode()))
    else:
        p.write_text(json.dumps(obj))
    return p


def conn_folder(tmp_path, graphs):
    folder = tmp_path / "conn"
    folder.mkdir()
    for scan in graphs:
        g = graphs[scan]
        n = len(g)
        unob = np.zeros((n, n), dtype=bool)
        unob[g.edges[:, 0], g.edges[:, 1]] = True
        unob |= unob.T
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


def preds():
    return [
        {"instr_id": "7_5_0", "trajectory": [["a", 0, 0], ["b", 0, 0], ["c", 0, 0]], "predObjId": 5},
        {"instr_id": "7_5_1", "trajectory": [["a", 0, 0], ["b", 0, 0], ["b", 1, 0]], "predObjId": "5"},
        {"instr_id": "7_6_0", "trajectory": [["a", 0, 0], ["b", 0, 0], ["c", 0, 0], ["d", 0, 0]], "predObjId": 9},
        {"instr_id": "9_1_0", "trajectory": [["x", 0, 0]], "predObjId": None},
    ]


@pytest.fixture
def bench(tmp_path, graphs):
    return ds.open(
        "reverie",
        split=write(tmp_path, "REVERIE_toy.json", split_entries()),
        connectivity=conn_folder(tmp_path, graphs),
        objects=write(tmp_path, "BBox_toy.json.gz", boxes()),
    )


def test_readers(tmp_path, graphs):
    split = reverie.load_reverie(write(tmp_path, "s.json", split_entries()), graphs=graphs)
    assert [e["id"] for e in split] == ["7_5", "7_6", "9_1"]
    recs = reverie.instructions(split)
    assert [r["instr_id"] for r in recs] == ["7_5_0", "7_5_1", "7_6_0", "9_1_0"]
    assert recs[1]["instruction"] == "i1" and recs[1]["instruction_index"] == 1
    objs = reverie.load_objects(write(tmp_path, "b.json.gz", boxes()))
    assert objs.visible("s1", "c") == {"5"} and objs.visible("s1", "a") == {"9"}
    assert objs.visible("s1", "zz") == frozenset() and objs.goals("s1", 5) == ["c", "d"]
    assert sorted(objs.scans) == ["s1", "s2"] and "s3" not in objs
    # the upstream layout: a folder of <scan>_<vp>.json files gives the same sets
    folder = tmp_path / "BBox"
    folder.mkdir()
    for key, content in boxes().items():
        write(folder, f"{key}.json", content)
    again = reverie.load_objects(folder)
    assert {s: again.viewpoints(s) for s in again.scans} == {s: objs.viewpoints(s) for s in objs.scans}
    assert reverie.load_objects(boxes(), scans=["s2"]).scans == ["s2"]
    assert reverie.load_objects(folder, scans=["s2"]).scans == ["s2"]
    # the 2-D boxes are dropped before parsing when they come first (the real file's layout)
    first = {
        k: {vp: {o: {"bbox2d": [[1, 2, 3, 4.5]], **b} for o, b in objs.items()} for vp, objs in c.items()}
        for k, c in boxes().items()
    }
    fast = reverie.load_objects(write(tmp_path, "first.json", first))
    assert {s: fast.viewpoints(s) for s in fast.scans} == {s: objs.viewpoints(s) for s in objs.scans}
    (tmp_path / "broken.json").write_text('{"s1_a": {"a": {"9": {"bbox2d": [[1]], "visible_pos": [')
    with pytest.raises(ValueError, match=r"broken\.json: malformed JSON"):
        reverie.load_objects(tmp_path / "broken.json")
    # both prediction shapes, both object keys
    p = reverie.load_predictions(
        [
            {"instr_id": "7_5_0", "trajectory": [["a", 0, 0], ["b", 1.5, -0.5]], "predObjId": 5.0},
            {"instr_id": "7_5_1", "trajectory": [["a"], ["b", "c"], ["d"]], "pred_objid": None},
            {"instr_id": 3, "trajectory": ["a"]},
        ]
    )
    assert p[0] == ("7_5_0", reverie.Prediction(["a", "b"], "5", "predObjId", 0))
    assert p[1] == ("7_5_1", reverie.Prediction(["a", "b", "c", "d"], None, "pred_objid", 1))
    assert p[2][0] == "3" and p[2][1].object_key == ""


def test_scores_and_conventions(bench):
    assert bench.n == 4 and bench.kind.default_convention == "reverie"
    m = bench.match(preds())
    s = bench.evaluate(m)
    assert s.ids == ["7_5_0", "7_5_1", "7_6_0", "9_1_0"]
    np.testing.assert_array_equal(s["sr"], [1, 0, 0, 0])
    np.testing.assert_array_equal(s["osr"], [1, 0, 1, 0])
    np.testing.assert_array_equal(s["rgs"], [1, 1, 0, 0])
    np.testing.assert_allclose(s["spl"], [1, 0, 0, 0])
    np.testing.assert_allclose(s["rgspl"], [1, 1, 0, 0])
    np.testing.assert_allclose(s["pl"], [2, 1, 3, 0])
    np.testing.assert_allclose(s["sdtw"], s["sr"] * s["ndtw"])
    # duet: l = PL(GT) and the 0.01 floor (one-node trajectory of 9_1: gt_len 2 > 0)
    d = bench.evaluate(bench.match(preds(), convention="duet"), convention="duet")
    np.testing.assert_allclose(d["spl"], [1, 0, 0, 0])
    with pytest.raises(ValueError, match="does not apply"):
        bench.match(preds(), convention="r2r")
    with pytest.raises(ValueError, match="spl_curve"):
        s.spl_curve([1.0, 3.0])


def test_id_rules(bench):
    p = [*preds(), dict(preds()[0], instr_id="99_1_0"), dict(preds()[0], predObjId=7)]
    with pytest.warns(UserWarning, match="2 entries not scored"):
        s = bench.evaluate(bench.match(p))
    assert s["rgs"][0] == 1.0  # the first of the duplicates
    for conv, match in (("duet", "no such instruction"), ("paper", "no such instruction")):
        with pytest.raises(ValueError, match=match):
            bench.match(p, convention=conv)
    with pytest.raises(ValueError, match="duplicate instr_id"):
        bench.match([*preds(), preds()[0]], convention="duet")
    with pytest.raises(ValueError, match=r"no prediction for instr_id 9_1_0 \(1 in all\)"):
        bench.match(preds()[:3])


def test_object_keys(bench):
    # a missing key: an error naming the entry under reverie / paper, RGS 0 under duet
    p = preds()
    del p[2]["predObjId"]
    with pytest.raises(ValueError, match=r"<input>: entry 2 \(instr_id 7_6_0\): no 'predObjId'"):
        bench.match(p)
    d = bench.evaluate(bench.match(p, convention="duet"), convention="duet")
    np.testing.assert_array_equal(d["rgs"], [1, 1, 0, 0])
    # DUET's own results: pred_objid and nested viewpoint lists
    duet = [
        {"instr_id": e["instr_id"], "trajectory": [[s[0]] for s in e["trajectory"]], "pred_objid": e["predObjId"]}
        for e in preds()
    ]
    d2 = bench.evaluate(bench.match(duet, convention="duet"), convention="duet")
    for k in d2:
        np.testing.assert_allclose(d2[k], bench.evaluate(bench.match(preds(), convention="duet"), convention="duet")[k])
    # navigation only: no entry has an object key -> no rgs / rgspl, success still scored
    nav = [{k: v for k, v in e.items() if k != "predObjId"} for e in preds()]
    navigation = bench.match(nav)
    s = bench.evaluate(navigation)
    assert "rgs" not in s and "rgspl" not in s and s["sr"][0] == 1.0
    # and it says so: the note is on the navigation-only run, and on no other
    assert navigation.notes == (
        "<input>: no entry has a 'predObjId' (or 'pred_objid'): scored navigation-only, without RGS and RGSPL",
    )
    assert bench.match(preds()).notes == ()


@pytest.mark.parametrize(
    "value",
    [[5], {"id": 5}, 5.5, True, float("nan")],
)
def test_malformed_object_ids(bench, value):
    p = preds()
    p[1]["predObjId"] = value
    with pytest.raises(ValueError, match=r"<input>: entry 1 \(instr_id 7_5_1\): 'predObjId' must be an object id"):
        bench.match(p)


def test_bad_predictions(bench, tmp_path):
    p = preds()
    p[0]["trajectory"][1] = ["zz", 0, 0]
    f = write(tmp_path, "agent.json", p)
    with pytest.raises(ValueError, match=r"agent.json: entry 0 \(instr_id 7_5_0\): viewpoint 'zz' .* not in scan 's1'"):
        bench.match(f)
    p = preds()
    p[3]["trajectory"] = []
    with pytest.raises(ValueError, match=r"entry 3 \(instr_id 9_1_0\): trajectory is empty"):
        bench.match(p)
    p = preds()
    p[0]["predObjId"], p[0]["pred_objid"] = 5, 6
    with pytest.raises(ValueError, match="differ"):
        bench.match(p)
    p = preds()
    p[1]["trajectory"] = [["b", 0, 0], ["c", 0, 0]]
    with pytest.raises(ValueError, match=r"entry 1 \(instr_id 7_5_1\): trajectory starts at 'b'.*\(strict\)"):
        bench.match(p, strict=True)
    p = preds()
    p[0]["trajectory"] = [["b", 0, 0], ["c", 0, 0]]  # the first entry too
    with pytest.raises(ValueError, match=r"entry 0 \(instr_id 7_5_0\): trajectory starts at 'b'.*\(strict\)"):
        bench.match(p, strict=True)


def test_match_predictions_expands_a_split_of_paths(graphs):
    objects = reverie.load_objects(boxes())
    by_path = reverie.match_predictions(split_entries(), preds(), graphs, objects)
    by_instruction = reverie.match_predictions(reverie.instructions(split_entries()), preds(), graphs, objects)
    assert by_path.ids == by_instruction.ids == ["7_5_0", "7_5_1", "7_6_0", "9_1_0"]
    assert [q.tolist() for q in by_path.queries] == [q.tolist() for q in by_instruction.queries]
    assert by_path.extra["object_found"].tolist() == [True, True, False, False]


def test_match_predictions_refuses_a_split_listing_an_instruction_twice(graphs):
    # a list of records is not read through load_reverie, so the matcher checks the ids itself:
    # 9_1 listed twice would otherwise be scored twice (SR 1/3 of 3 instead of 1/4 of 4 episodes)
    objects = reverie.load_objects(boxes())
    once = reverie.match_predictions(split_entries(), preds(), graphs, objects)
    assert len(once) == 4
    twice = split_entries() + split_entries()[2:]
    with pytest.raises(ValueError, match=r"^match_predictions: the split has duplicate instruction ids$"):
        reverie.match_predictions(twice, preds(), graphs, objects)
    with pytest.raises(ValueError, match="duplicate instruction ids"):
        reverie.match_predictions(reverie.instructions(twice), preds(), graphs, objects)


def test_bad_split_and_boxes(tmp_path, graphs):
    conn = conn_folder(tmp_path, graphs)
    split = write(tmp_path, "REVERIE_toy.json", split_entries())

    def open_with(split=split, objects=None):
        return ds.open("reverie", split=split, connectivity=conn, objects=objects or write(tmp_path, "b.json", boxes()))

    # a box file without the viewpoints of a scan the split needs
    no_s2 = {k: v for k, v in boxes().items() if not k.startswith("s2")}
    with pytest.raises(
        ValueError, match=r"b2.json: no viewpoint of scan 's2', which REVERIE_toy.json: entry 2 \(id 9_1\)"
    ):
        open_with(objects=write(tmp_path, "b2.json", no_s2))
    # a target the boxes never show in its scan (6 is listed at c but not visible there: fine,
    # it is visible from b; 8 is listed nowhere)
    bad = split_entries()
    bad[1]["objId"] = 8
    with pytest.raises(
        ValueError, match=r"REVERIE_bad.json: entry 1 \(id 7_6\): target object 8 is visible from no viewpoint"
    ):
        open_with(split=write(tmp_path, "REVERIE_bad.json", bad))
    for change, match in (
        (lambda e: e.pop("objId"), r"entry 0 \(id 7_5\): missing 'objId'"),
        (lambda e: e.update(objId=[1]), r"entry 0 \(id 7_5\): 'objId' must be an object id"),
        (lambda e: e.update(path=["a", "q"]), r"entry 0 \(id 7_5\): path\[1\] = 'q' is not a viewpoint of scan 's1'"),
        (lambda e: e.update(instructions=[]), r"entry 0 \(id 7_5\): 'instructions' must be a non-empty list"),
        (lambda e: e.update(id=5), r"entry 0: 'id' must be a non-empty string"),
    ):
        bad = split_entries()
        change(bad[0])
        with pytest.raises(ValueError, match=r"REVERIE_x.json: " + match):
            open_with(split=write(tmp_path, "REVERIE_x.json", bad))
    dup = split_entries()
    dup[1]["id"] = "7_5"
    with pytest.raises(ValueError, match=r"entry 1 \(id 7_5\): duplicate id \(also entry 0\)"):
        reverie.load_reverie(dup)
    with pytest.raises(ValueError, match=r"b3.json: s1_a: 'visible_pos' must be a list|b3.json: s1_a: object 9"):
        bad_box = boxes()
        bad_box["s1_a"]["a"]["9"]["visible_pos"] = 3
        open_with(objects=write(tmp_path, "b3.json", bad_box))
    with pytest.raises(ValueError, match=r"b4.json: s1-a: key must be '<scan>_<viewpoint>'"):
        open_with(objects=write(tmp_path, "b4.json", {"s1-a": boxes()["s1_a"]}))
    with pytest.raises(FileNotFoundError, match="--objects: file or folder not found"):
        open_with(objects=tmp_path / "nothing.json")


def test_baseline(bench):
    base = bench.baseline(2000, seed=1, progress=False)
    assert "rgs" not in base and "rgspl" not in base
    assert 0 < base["sr"] < base["osr"] < 1
    assert base == bench.baseline(2000, seed=1, progress=False, chunk=300)
    # the walks' success is visibility, not distance: scan s2's target is seen from y only
    assert set(base) >= {"sr", "osr", "spl", "ndtw", "sdtw", "cls", "ne", "pl"}


# --------------------------------------------------------------------------------------------
# success given per episode, the duet floor, rgs / rgspl twins
# --------------------------------------------------------------------------------------------


def test_success_inputs_replace_the_distance_test():
    D = np.array([[0.0, 1.0], [1.0, 0.0]])
    refs, qrys = [[0, 1], [0, 1]], [[0, 1], [0]]
    s = navdtw.evaluate(refs, qrys, distances=D, inputs={"success": [False, True], "oracle_success": [1, 1]})
    np.testing.assert_array_equal(s["sr"], [0, 1])
    np.testing.assert_array_equal(s["osr"], [1, 1])
    np.testing.assert_array_equal(s["spl"], [0, 1])  # second: l = d(q_1, r_last) = 1, pl = 0
    stopped = navdtw.evaluate(
        refs, qrys, distances=D, stopped=[True, False], inputs={"success": [1, 1], "oracle_success": [1, 1]}
    )
    np.testing.assert_array_equal(stopped["sr"], [1, 0])
    with pytest.raises(ValueError, match="together"):
        navdtw.evaluate(refs, qrys, distances=D, inputs={"success": [1, 1]})
    with pytest.raises(ValueError, match="0/1"):
        navdtw.evaluate(refs, qrys, distances=D, inputs={"success": [2, 1], "oracle_success": [1, 1]})
    with pytest.raises(ValueError, match="convention 'reverie' has no distance test"):
        navdtw.evaluate(refs, qrys, distances=D, convention="reverie")


def test_duet_floor():
    D = np.zeros((1, 1))
    assert navdtw.evaluate([[0]], [[0]], distances=D, convention="duet")["spl"][0] == 0.0
    assert navdtw.evaluate([[0]], [[0]], distances=D, convention="paper")["spl"][0] == 1.0


@st.composite
def episodes(draw):
    n = draw(st.integers(2, 6))
    pts = np.array(draw(st.lists(st.tuples(st.integers(0, 9), st.integers(0, 9)), min_size=n, max_size=n)), float)
    D = np.linalg.norm(pts[:, None] - pts[None], axis=-1)  # a metric: shortest paths of the complete graph
    b = draw(st.integers(1, 5))
    path = st.lists(st.integers(0, n - 1), min_size=1, max_size=6)
    refs = [draw(path) for _ in range(b)]
    qrys = [draw(path) for _ in range(b)]
    found = draw(st.lists(st.booleans(), min_size=b, max_size=b))
    return D, refs, qrys, found


def _length(D, p):
    return float(sum(D[a, b] for a, b in zip(p[:-1], p[1:])))


@settings(max_examples=80, deadline=None)
@given(episodes(), st.sampled_from(["paper", "r2r", "duet", "reverie"]))
def test_rgs_rgspl_twin(ep, conv):
    D, refs, qrys, found = ep
    inputs = {"object_found": found, "success": found[::-1], "oracle_success": [True] * len(found)}
    s = navdtw.evaluate(refs, qrys, distances=D, convention=conv, inputs=inputs)
    for i, (r, q, f) in enumerate(zip(refs, qrys, found)):
        pl = _length(D, q)
        if conv == "duet":
            ratio = _length(D, r) / max(pl, _length(D, r), 0.01)
        else:
            ell = D[q[0], r[-1]] if conv == "paper" else D[r[0], r[-1]]
            ratio = 1.0 if ell == 0 and pl == 0 else ell / max(pl, ell)
        assert s["rgs"][i] == float(f)
        assert s["rgspl"][i] == pytest.approx(float(f) * ratio, abs=1e-5)
        assert s["spl"][i] == pytest.approx(float(found[::-1][i]) * ratio, abs=1e-5)
        assert s["sdtw"][i] == pytest.approx(float(found[::-1][i]) * s["ndtw"][i])


# --------------------------------------------------------------------------------------------
# the real REVERIE val splits (acceptance numbers of issue 13)
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def real(data_dir):
    folder = data_dir / "reverie"
    conn = data_dir / "matterport3dsimulator" / "connectivity"
    boxes_raw = json.loads(gzip.decompress((folder / "BBox_val_scans.json.gz").read_bytes()))
    visible = visible_sets(boxes_raw)
    objects = reverie.load_objects(folder / "BBox_val_scans.json.gz")
    out = {}
    for split in ("val_seen", "val_unseen"):
        path = folder / f"REVERIE_{split}.json"
        kind = ds.DATASETS["reverie"]
        bench = kind.opener(split=path, connectivity=conn, objects=objects)
        bench.kind = kind
        out[split] = (bench, json.loads(path.read_text()))
    return out, visible


def gt_predictions(split):
    return [
        {"instr_id": f"{e['id']}_{k}", "trajectory": [[vp, 0.0, 0.0] for vp in e["path"]], "predObjId": e["objId"]}
        for e in split
        for k in range(len(e["instructions"]))
    ]


def distance_fn(graphs):
    def d(scan, a, b):
        g = graphs[scan]
        return float(g.distances[g.index[a], g.index[b]])

    return d


@pytest.mark.parametrize(
    "split, reverie_spl, n",
    [("val_seen", 1.0, 1423), ("val_unseen", 0.999364, 3521)],
)
def test_real_acceptance(real, split, reverie_spl, n):
    (benches, _visible) = real
    bench, raw = benches[split]
    assert bench.n == n
    s = bench.evaluate(bench.match(gt_predictions(raw))).summary()
    assert s["sr"] == s["osr"] == s["rgs"] == 1.0
    assert s["spl"] == pytest.approx(reverie_spl, abs=5e-7)
    assert s["rgspl"] == pytest.approx(reverie_spl, abs=5e-7)
    assert s["ndtw"] == 1.0 and s["ne"] == 0.0
    d = bench.evaluate(bench.match(gt_predictions(raw), convention="duet"), convention="duet").summary()
    assert d["spl"] == d["rgspl"] == 1.0


def perturb(raw, graphs, objects, seed):
    """GT predictions, randomly truncated, extended along graph edges, given wrong object ids."""
    rng = random.Random(seed)
    out = []
    for p, e in zip(gt_predictions(raw), [x for x in raw for _ in x["instructions"]]):
        g = graphs[e["scan"]]
        vps = list(e["path"])
        r = rng.random()
        if r < 0.3:
            vps = vps[: rng.randint(1, len(vps))]
        elif r < 0.6:
            for _ in range(rng.randint(1, 4)):
                nb = g.neighbors(g.index[vps[-1]])
                if len(nb):
                    vps.append(g.ids[int(rng.choice(list(nb)))])
        elif r < 0.7:
            vps = [vps[0]] + [v for v in vps[1:] for _ in range(rng.randint(1, 3))]  # repeats
        steps = [[v, rng.random(), 0.0] for v in vps]
        obj = p["predObjId"]
        if rng.random() < 0.3:
            seen = sorted({o for vp, objs in objects.viewpoints(e["scan"]).items() for o in objs})
            obj = rng.choice([rng.choice(seen), "abc", 100000, None])
        out.append({"instr_id": p["instr_id"], "trajectory": steps, "predObjId": obj})
    rng.shuffle(out)
    return out


@pytest.mark.parametrize("split", ["val_seen", "val_unseen"])
def test_real_per_episode_agreement(real, split):
    benches, visible = real
    bench, raw = benches[split]
    d = distance_fn(bench.graphs)
    results = perturb(raw, bench.graphs, bench.objects, seed=13)
    results += [dict(results[0], predObjId="wrong"), {"instr_id": "1_2_3", "trajectory": [["x", 0, 0]], "predObjId": 1}]
    want = official_twin(raw, visible, d, results)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        s = bench.evaluate(bench.match(results))
    for key in ("sr", "osr", "spl", "rgs", "rgspl", "pl"):
        got = dict(zip(s.ids, s[key]))
        np.testing.assert_allclose([got[i] for i in want], [want[i][key] for i in want], atol=1e-6, err_msg=key)
    means = s.summary()
    for key in ("sr", "osr", "rgs"):
        assert 0.3 < means[key] < 0.95, key
    np.testing.assert_allclose(s["sdtw"], s["sr"] * s["ndtw"])

    # VLN-DUET: nested viewpoint lists, pred_objid (None included)
    duet = []
    for item in results[:-2]:
        vps = [st[0] for st in item["trajectory"]]
        duet.append(
            {
                "instr_id": item["instr_id"],
                "trajectory": [vps[:1]] + [[v] for v in vps[1:]],
                "pred_objid": item["predObjId"],
            }
        )
    want = duet_twin(raw, visible, d, duet)
    s = bench.evaluate(bench.match(duet, convention="duet"), convention="duet")
    for key in ("sr", "osr", "spl", "rgs", "rgspl", "pl"):
        got = dict(zip(s.ids, s[key]))
        np.testing.assert_allclose([got[i] for i in want], [want[i][key] for i in want], atol=1e-6, err_msg=key)


def test_real_baseline(real):
    benches, _ = real
    bench, _ = benches["val_unseen"]
    base = bench.baseline(20_000, seed=0, progress=False)
    assert 0 < base["sr"] < base["osr"] < 0.5 and "rgs" not in base
