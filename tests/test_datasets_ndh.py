"""CVDN/NDH (navdtw.datasets.ndh): the split and results readers, the chosen goal, matching under
the ``ndh`` and ``paper`` conventions, GP, the data set kind and its random baseline.

The real-data tests check the acceptance numbers of issue 13 and compare every episode of the four
``cvdn/results`` files with ``eval_twin`` below: a plain-Python re-implementation of
``mmurray/cvdn`` ``tasks/NDH/eval.py`` written from its rule (docs/metrics.md, CVDN/NDH), using
navdtw's graph distances for the graph part only.
"""

from __future__ import annotations

import heapq
import json
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import navdtw
from navdtw import datasets as ds
from navdtw.baseline import RandomWalker
from navdtw.datasets import ndh
from navdtw.datasets.r2r import random_baseline
from navdtw.graphs import GraphSet, NavGraph

# --------------------------------------------------------------------------------------------
# a small world: scan "s1" is a path a0 - a1 - a2 - a3 - a4 with a branch a1 - a5, plus an
# isolated a6; scan "s2" a triangle b0 - b1 - b2
# --------------------------------------------------------------------------------------------


def _world() -> GraphSet:
    g1 = NavGraph(
        [[0, 0, 0], [1, 0, 0], [2, 0, 0], [3, 0, 0], [4, 0, 0], [1, 2, 0], [9, 9, 0]],
        [[0, 1], [1, 2], [2, 3], [3, 4], [1, 5]],
        ids=[f"a{i}" for i in range(7)],
        name="s1",
    )
    g2 = NavGraph([[0, 0, 0], [3, 0, 0], [0, 4, 0]], [[0, 1], [1, 2], [2, 0]], ids=["b0", "b1", "b2"], name="s2")
    return GraphSet([g1, g2])


WORLD = _world()


def split_entries():
    return [
        {
            "inst_idx": 10,
            "scan": "s1",
            "target": "plant",
            "start_pano": {"pano": "a0", "heading": 0.0, "elevation": 0.0},
            "nav_history": [],
            "dialog_history": [],
            "end_panos": ["a4"],
            "planner_path": ["a0", "a1", "a2"],
            "player_path": ["a0", "a1", "a2", "a3"],  # contains a2 after its start: trusted = player
        },
        {
            "inst_idx": 11,
            "scan": "s1",
            "target": "sofa",
            "start_pano": {"pano": "a2", "heading": 0.0, "elevation": 0.0},
            "nav_history": ["a0", "a1", "a2"],
            "dialog_history": [{"nav_idx": 0, "role": "navigator", "message": "where?"}],
            "end_panos": ["a5", "a4"],
            "planner_path": ["a2", "a1", "a5"],
            "player_path": ["a2", "a3"],  # lacks a5: trusted = planner
        },
        {
            "inst_idx": 12,
            "scan": "s2",
            "target": "bed",
            "start_pano": {"pano": "b0", "heading": 0.0, "elevation": 0.0},
            "end_panos": ["b0", "b2"],
            "planner_path": ["b0"],  # starts in the goal region: l = 0
            "player_path": ["b0", "b1"],
        },
    ]


def preds_entries():
    return [
        {"inst_idx": 12, "trajectory": [["b0", 0.0, 0.0], ["b0", 0.5, 0.0]]},
        {"inst_idx": 10, "trajectory": [["a0", 0, 0], ["a1", 0, 0], ["a2", 0, 0], ["a2", 1, 0], ["a3", 0, 0]]},
        {"inst_idx": 11, "trajectory": [["a2", 0, 0], ["a3", 0, 0]]},
    ]


def write(tmp_path, name, data):
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def conn_folder(tmp_path, graphs):
    """Writes ``graphs`` as Matterport3D connectivity files (pose = identity + position)."""
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


# --------------------------------------------------------------------------------------------
# the evaluator's rule in plain Python (cvdn tasks/NDH/eval.py), written from docs/metrics.md
# --------------------------------------------------------------------------------------------


def twin_path(entry, goal):
    if goal == "trusted" and entry["planner_path"][-1] in entry["player_path"][1:]:
        return entry["player_path"]
    return entry["planner_path"]


def eval_twin(split, results, dist, neighbours, goal):
    """Per-episode {inst_idx: {ne, one, gp, pl, sr, osr, spl}} as eval.py scores them (results in
    file order, ids not expected ignored, the first of a duplicate kept, missing ids fail)."""
    gt = {e["inst_idx"]: e for e in split}
    expected = set(gt)
    out = {}
    for item in results:
        if item["inst_idx"] not in expected:
            continue
        expected.remove(item["inst_idx"])
        e = gt[item["inst_idx"]]
        scan = e["scan"]
        path = twin_path(e, goal)
        traj = [step[0] for step in item["trajectory"]]
        start, goal_vp = path[0], path[-1]
        assert traj[0] == start
        final = traj[-1]
        ne = dist(scan, final, goal_vp)
        best, nearest = None, None
        for v in traj:  # the first strictly closest entry
            d = dist(scan, v, goal_vp)
            if best is None or d < best:
                best, nearest = d, v
        one = dist(scan, nearest, goal_vp)
        gp = min(dist(scan, start, x) for x in e["end_panos"]) - min(dist(scan, final, x) for x in e["end_panos"])
        length = 0.0
        for prev, cur in zip(traj, traj[1:]):
            if prev != cur and cur not in neighbours(scan, prev):
                raise KeyError((prev, cur))
            length += dist(scan, prev, cur)
        sp = dist(scan, start, goal_vp)
        if ne >= 3.0:
            spl = 0.0
        elif sp > 0:
            spl = sp / max(length, sp)
        else:
            spl = 1.0 if length == 0 else 0.0
        out[e["inst_idx"]] = {
            "ne": ne,
            "one": one,
            "gp": gp,
            "pl": length,
            "sr": float(ne < 3.0),
            "osr": float(one < 3.0),
            "spl": spl,
        }
    assert not expected
    return out


def graph_lookups(graphs):
    def dist(scan, a, b):
        g = graphs[scan]
        return float(g.distances[g.index[a], g.index[b]])

    def neighbours(scan, v):
        g = graphs[scan]
        return {g.ids[int(j)] for j in g.neighbors(g.index[v])}

    return dist, neighbours


def dijkstra_lookups(graphs):
    """Shortest distances by a small Dijkstra over the edges (float64), independent of navdtw's."""
    cache = {}

    def dist(scan, a, b):
        if (scan, a) not in cache:
            g = graphs[scan]
            adj = {i: [] for i in range(len(g))}
            for i, j in g.edges.tolist():
                w = float(np.linalg.norm(g.positions[i] - g.positions[j]))
                adj[i].append((j, w))
                adj[j].append((i, w))
            best = {g.index[a]: 0.0}
            heap = [(0.0, g.index[a])]
            while heap:
                d, u = heapq.heappop(heap)
                if d > best.get(u, math.inf):
                    continue
                for v, w in adj[u]:
                    if d + w < best.get(v, math.inf):
                        best[v] = d + w
                        heapq.heappush(heap, (d + w, v))
            cache[(scan, a)] = {g.ids[k]: d for k, d in best.items()}
        return cache[(scan, a)].get(b, math.inf)

    return dist


# --------------------------------------------------------------------------------------------
# the chosen path
# --------------------------------------------------------------------------------------------


def test_chosen_path_rule():
    e10, e11, e12 = split_entries()
    assert ndh.chosen_path(e10) == ndh.chosen_path(e10, "planner") == ["a0", "a1", "a2"]
    assert ndh.chosen_path(e10, "trusted") == ["a0", "a1", "a2", "a3"]
    assert ndh.chosen_path(e11, "trusted") == ["a2", "a1", "a5"]  # planner goal not in player_path
    # the planner goal at index 0 of player_path only (a one-node planner path) does not count
    assert ndh.chosen_path(e12, "trusted") == ["b0"]
    e12b = dict(e12, player_path=["b0", "b1", "b0"])
    assert ndh.chosen_path(e12b, "trusted") == ["b0", "b1", "b0"]
    with pytest.raises(ValueError, match="goal must be one of planner, trusted"):
        ndh.chosen_path(e10, "oracle")


# --------------------------------------------------------------------------------------------
# the split reader: one clear error naming the file and entry
# --------------------------------------------------------------------------------------------


def test_load_ndh_reads_and_copies(tmp_path):
    path = write(tmp_path, "NDH_toy.json", split_entries())
    got = ds.load_ndh(path, graphs=WORLD)
    assert [e["inst_idx"] for e in got] == [10, 11, 12]
    assert got[0]["target"] == "plant" and got[1]["dialog_history"][0]["role"] == "navigator"
    raw = split_entries()
    parsed = ndh.load_ndh(raw)
    parsed[0]["planner_path"].append("zz")
    assert raw[0]["planner_path"] == ["a0", "a1", "a2"]


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d.__setitem__(1, "x"), r"NDH_bad.json: entry 1: expected an object, got str"),
        (lambda d: d[1].pop("inst_idx"), r"NDH_bad.json: entry 1: missing 'inst_idx'"),
        (lambda d: d[1].__setitem__("inst_idx", "11"), r"entry 1: 'inst_idx' must be an integer, got '11'"),
        (lambda d: d[1].__setitem__("inst_idx", 10), r"entry 1 \(inst_idx 10\): duplicate inst_idx \(also entry 0\)"),
        (lambda d: d[1].__setitem__("scan", ""), r"entry 1 \(inst_idx 11\): 'scan' must be a non-empty string"),
        (lambda d: d[1].pop("end_panos"), r"entry 1 \(inst_idx 11\): missing 'end_panos'"),
        (lambda d: d[1].__setitem__("end_panos", []), r"entry 1 \(inst_idx 11\): 'end_panos' is empty"),
        (lambda d: d[1].__setitem__("planner_path", "a2"), r"'planner_path' must be a list of viewpoint ids"),
        (lambda d: d[1].__setitem__("player_path", ["a2", 3]), r"player_path\[1\] must be a viewpoint id string"),
        (lambda d: d[1].__setitem__("nav_history", [None]), r"nav_history\[0\] must be a viewpoint id string"),
        (lambda d: d[1].__setitem__("dialog_history", ["hi"]), r"'dialog_history' must be a list of"),
        (lambda d: d[1].__setitem__("target", 3), r"'target' must be a string"),
        (lambda d: d[1].__setitem__("start_pano", "a2"), r"'start_pano' must be an object"),
        (lambda d: d[1]["start_pano"].__setitem__("heading", "n"), r"start_pano\['heading'\] must be a finite"),
    ],
)
def test_load_ndh_malformed_entries(tmp_path, mutate, message):
    data = split_entries()
    mutate(data)
    with pytest.raises(ValueError, match="^NDH_bad.json: .*" + message.split("NDH_bad.json: ")[-1]):
        ndh.load_ndh(write(tmp_path, "NDH_bad.json", data))


def test_load_ndh_file_level_errors(tmp_path):
    with pytest.raises(ValueError, match=r"NDH_obj.json: expected a JSON list of NDH entries, got dict"):
        ndh.load_ndh(write(tmp_path, "NDH_obj.json", {"a": 1}))
    bad = tmp_path / "NDH_trunc.json"
    bad.write_text('[{"inst_idx": 1,')
    with pytest.raises(ValueError, match=r"NDH_trunc.json: malformed JSON at line 1"):
        ndh.load_ndh(bad)
    with pytest.raises(ValueError, match=r"<input>: entry 0: missing 'inst_idx'"):
        ndh.load_ndh([{}])


def test_load_ndh_unknown_viewpoint_and_scan(tmp_path):
    data = split_entries()
    data[2]["end_panos"] = ["b0", "nope"]
    with pytest.raises(
        ValueError,
        match=r"NDH_x.json: entry 2 \(inst_idx 12\): end_panos\[1\] = 'nope' is not a viewpoint of scan 's2'",
    ):
        ndh.load_ndh(write(tmp_path, "NDH_x.json", data), graphs=WORLD)
    data = split_entries()
    data[0]["scan"] = "s9"
    with pytest.raises(ValueError, match=r"NDH_y.json: entry 0 \(inst_idx 10\): unknown scan 's9'"):
        ndh.load_ndh(write(tmp_path, "NDH_y.json", data), graphs=WORLD)
    conn = conn_folder(tmp_path, WORLD)
    with pytest.raises(
        ValueError, match=r"NDH_y.json: entry 0 \(inst_idx 10\): unknown scan 's9' \(no s9_connectivity.json"
    ):
        ndh.load_split_graphs(tmp_path / "NDH_y.json", conn)
    with pytest.raises(ValueError, match=r"NDH_e.json: the split is empty"):
        ndh.load_split_graphs(write(tmp_path, "NDH_e.json", []), conn)


# --------------------------------------------------------------------------------------------
# the predictions reader
# --------------------------------------------------------------------------------------------


def test_load_predictions_ids_and_steps(tmp_path):
    preds = preds_entries()
    preds[0]["inst_idx"] = "12"  # a numeric string is normalised to the int
    preds[2]["trajectory"] = ["a2", "a3"]  # bare viewpoints are steps too
    got = ds.load_ndh_predictions(write(tmp_path, "res.json", preds))
    assert list(got) == [12, 10, 11] and all(isinstance(k, int) for k in got)
    assert got[10] == ["a0", "a1", "a2", "a2", "a3"]  # repeats kept as listed
    assert got[11] == ["a2", "a3"]


def test_load_predictions_duplicates(tmp_path):
    preds = [*preds_entries(), {"inst_idx": 10, "trajectory": [["a0", 0, 0]]}]
    path = write(tmp_path, "dup.json", preds)
    with pytest.raises(ValueError, match=r"dup.json: entry 3 \(inst_idx 10\): duplicate inst_idx \(also entry 1\)"):
        ndh.load_ndh_predictions(path)
    assert ndh.load_ndh_predictions(path, duplicates="first")[10][-1] == "a3"
    with pytest.raises(ValueError, match="duplicates must be"):
        ndh.load_ndh_predictions(path, duplicates="last")


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("x", r"entry 1: expected an object, got str"),
        ({"trajectory": [["a0", 0, 0]]}, r"entry 1: missing 'inst_idx'"),
        (
            {"inst_idx": "1x", "trajectory": []},
            r"entry 1: 'inst_idx' must be an integer \(or a string of digits\), got '1x'",
        ),
        ({"inst_idx": 1.0, "trajectory": []}, r"entry 1: 'inst_idx' must be an integer"),
        ({"inst_idx": True, "trajectory": []}, r"entry 1: 'inst_idx' must be an integer"),
        ({"inst_idx": 11}, r"entry 1 \(inst_idx 11\): missing 'trajectory'"),
        ({"inst_idx": 11, "trajectory": []}, r"entry 1 \(inst_idx 11\): trajectory is empty"),
        ({"inst_idx": 11, "trajectory": "a2"}, r"entry 1 \(inst_idx 11\): 'trajectory' must be a list"),
        (
            {"inst_idx": 11, "trajectory": [["a2", 0, 0], [3, 0, 0]]},
            r"entry 1 \(inst_idx 11\): trajectory\[1\] must be \[viewpoint, heading",
        ),
    ],
)
def test_load_predictions_malformed(tmp_path, entry, message):
    preds = [preds_entries()[0], entry]
    with pytest.raises(ValueError, match="^bad_res.json: " + message):
        ndh.load_ndh_predictions(write(tmp_path, "bad_res.json", preds))
    with pytest.raises(ValueError, match=r"bad_res.json: expected a JSON list of predictions"):
        ndh.load_ndh_predictions(write(tmp_path, "bad_res.json", {"x": 1}))


# --------------------------------------------------------------------------------------------
# matching and scoring on the small world
# --------------------------------------------------------------------------------------------


def _match(tmp_path, preds, *, goal="planner", convention="ndh", strict=False, name="res.json"):
    return ndh.match_predictions(
        split_entries(), write(tmp_path, name, preds), WORLD, goal=goal, convention=convention, strict=strict
    )


def _scores(m, convention="ndh"):
    return m.evaluate(convention=convention, inputs=dict(m.extra))


@pytest.mark.parametrize("goal", ["planner", "trusted"])
@pytest.mark.parametrize("convention", ["ndh", "paper"])
def test_match_and_scores_equal_the_twin(tmp_path, goal, convention):
    m = _match(tmp_path, preds_entries(), goal=goal, convention=convention)
    assert m.ids == [10, 11, 12] and m.id_name == "inst_idx" and m.scans == ["s1", "s1", "s2"]
    assert WORLD.decode(m.env, m.references) == [ndh.chosen_path(e, goal) for e in split_entries()]
    assert WORLD.decode(m.env, m.queries)[0] == ["a0", "a1", "a2", "a3"]  # repeats collapsed
    s = _scores(m, convention)
    assert "gp" in s and s.metric("gp").unit == "m" and not s.metric("gp").rate
    dist, neighbours = graph_lookups(WORLD)
    twin = eval_twin(split_entries(), preds_entries(), dist, neighbours, goal)
    for k, iid in enumerate(m.ids):
        for key in ("ne", "one", "gp", "pl"):
            assert s[key][k] == pytest.approx(twin[iid][key], abs=1e-9), (iid, key)
        if convention == "ndh":  # the evaluator's comparison and l
            for key in ("sr", "osr", "spl"):
                assert s[key][k] == pytest.approx(twin[iid][key], abs=1e-12), (iid, key)
    # entry 12 starts inside the goal region and does not move: l = 0, SPL 1; GP 0
    assert s["spl"][2] == 1.0 and s["gp"][2] == 0.0
    # inst 10: start a0 is 4 m from the region a4; the agent ends at a3 (1 m): GP = 3
    assert s["gp"][0] == pytest.approx(3.0)


def test_spl_zero_length_rule_agent_moved(tmp_path):
    preds = preds_entries()
    preds[0]["trajectory"] = [["b0", 0, 0], ["b1", 0, 0], ["b0", 0, 0]]  # back at the goal after 6 m
    s = _scores(_match(tmp_path, preds))
    assert s["sr"][2] == 1.0 and s["pl"][2] == pytest.approx(6.0) and s["spl"][2] == 0.0


def test_gp_can_be_negative(tmp_path):
    preds = preds_entries()
    preds[1]["trajectory"] = [["a0", 0, 0]]  # stays at a0: GP 0
    preds[2]["trajectory"] = [["a2", 0, 0], ["a3", 0, 0], ["a2", 0, 0], ["a1", 0, 0], ["a0", 0, 0]]
    s = _scores(_match(tmp_path, preds))
    # inst 11: region {a5, a4}: start a2 is 2 m from a4 (and from a5: 1 + 2 = 3), a0 is 1 + 2 = 3 m from a5
    assert s["gp"][0] == 0.0 and s["gp"][1] == pytest.approx(2.0 - 3.0)


def test_gp_needs_its_region_inputs(tmp_path):
    m = _match(tmp_path, preds_entries())
    assert "gp" in m.evaluate(convention="ndh")  # the matched episodes carry the region distances
    plain = navdtw.evaluate(m.references, m.queries, distances=m.distances, env=m.env, convention="ndh")
    assert "gp" not in plain
    assert "gp" not in navdtw.METRICS and "gp" in navdtw.registry.names()


def test_missing_inst_idx_is_an_error_under_every_convention(tmp_path):
    for conv in ("ndh", "paper"):
        with pytest.raises(
            ValueError, match=r"res_m.json: no prediction for inst_idx 11 \(1 in all\); the split has 3"
        ):
            _match(tmp_path, [p for p in preds_entries() if p["inst_idx"] != 11], convention=conv, name="res_m.json")


def test_extra_and_duplicate_ids_ndh_ignores_with_a_warning_paper_refuses(tmp_path):
    preds = [
        *preds_entries(),
        {"inst_idx": 99, "trajectory": [["zz", 0, 0]]},
        {"inst_idx": "10", "trajectory": [["a0", 0, 0]]},
    ]
    with pytest.warns(
        UserWarning,
        match=r"res_x.json: ignored 1 with an inst_idx not in the split \(99 \(1 in all\)\) and 1 repeating an "
        r"earlier inst_idx \(10 \(1 in all\)\), as the ndh evaluator does",
    ) as caught:
        m = _match(tmp_path, preds, name="res_x.json")
    # the warning points at the caller of match_predictions (this file), not into the package
    assert [w.filename for w in caught] == [__file__]
    assert WORLD.decode(m.env, m.queries)[0] == ["a0", "a1", "a2", "a3"]  # the first of inst 10 is scored
    with pytest.raises(ValueError, match=r"res_x.json: entry 3 \(inst_idx 99\): no such inst_idx in the split"):
        _match(tmp_path, preds, convention="paper", name="res_x.json")
    with pytest.raises(ValueError, match=r"res_y.json: entry 3 \(inst_idx 10\): duplicate inst_idx \(also entry 1\)"):
        _match(tmp_path, [p for p in preds if p["inst_idx"] != 99], convention="paper", name="res_y.json")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _match(tmp_path, preds_entries())  # no warning when the file covers the split exactly


def test_non_edge_step_ndh_refuses_paper_scores(tmp_path):
    preds = preds_entries()
    preds[1]["trajectory"] = [["a0", 0, 0], ["a0", 1, 0], ["a2", 0, 0], ["a3", 0, 0]]  # a0 -> a2 skips a1
    msg = (
        r"^res_e.json: entry 1 \(inst_idx 10\): the step trajectory\[1\] -> trajectory\[2\] from 'a0' to 'a2' "
        r"is not a graph edge of scan 's1' \(the ndh convention requires every step to be an edge"
    )
    for goal in ("planner", "trusted"):
        with pytest.raises(ValueError, match=msg):
            _match(tmp_path, preds, goal=goal, name="res_e.json")
    s = _scores(_match(tmp_path, preds, convention="paper", name="res_e.json"), "paper")
    assert s["pl"][0] == pytest.approx(3.0)  # the shortest distance a0 -> a2 (2 m) counted
    # a jump to a viewpoint of another component: not an edge (ndh); inf distances under paper
    preds[1]["trajectory"] = [["a0", 0, 0], ["a6", 0, 0]]
    with pytest.raises(ValueError, match=r"from 'a0' to 'a6' is not a graph edge"):
        _match(tmp_path, preds, name="res_e.json")
    s = _scores(_match(tmp_path, preds, convention="paper", name="res_e.json"), "paper")
    assert s["gp"][0] == -np.inf and s["sr"][0] == 0.0 and not np.isnan(s["gp"]).any()


def test_wrong_start_ndh_refuses_paper_scores_strict_refuses(tmp_path):
    preds = preds_entries()
    preds[2]["trajectory"] = [["a1", 0, 0], ["a2", 0, 0], ["a3", 0, 0]]  # inst 11 starts at a2
    with pytest.raises(
        ValueError,
        match=r"^res_s.json: entry 2 \(inst_idx 11\): trajectory starts at 'a1', but its path starts at 'a2' "
        r"\(the ndh convention requires the path's start\)",
    ):
        _match(tmp_path, preds, name="res_s.json")
    s = _scores(_match(tmp_path, preds, convention="paper", name="res_s.json"), "paper")
    assert s["pl"][1] == pytest.approx(2.0)
    with pytest.raises(ValueError, match=r"entry 2 \(inst_idx 11\): trajectory starts at 'a1'.*strict=True"):
        _match(tmp_path, preds, convention="paper", strict=True, name="res_s.json")


def test_unknown_viewpoint_names_file_entry_and_viewpoint(tmp_path):
    preds = preds_entries()
    preds[2]["trajectory"] = [["a2", 0, 0], ["b1", 0, 0]]  # b1 is in the other scan
    for conv in ("ndh", "paper"):
        with pytest.raises(
            ValueError,
            match=r"^res_u.json: entry 2 \(inst_idx 11\): unknown viewpoint 'b1' \(trajectory\[1\]\) in scan 's1'",
        ):
            _match(tmp_path, preds, convention=conv, name="res_u.json")


def test_mapping_predictions_and_conventions(tmp_path):
    preds = {str(p["inst_idx"]): [s[0] for s in p["trajectory"]] for p in preds_entries()}
    m = ndh.match_predictions(split_entries(), preds, WORLD)
    assert m.ids == [10, 11, 12]
    with pytest.raises(ValueError, match=r"predictions: inst_idx 10 appears twice"):
        ndh.match_predictions(split_entries(), {**preds, 10: ["a0"]}, WORLD)
    with pytest.raises(ValueError, match=r"convention 'r2r' does not apply to NDH data"):
        ndh.match_predictions(split_entries(), preds, WORLD, convention="r2r")


# --------------------------------------------------------------------------------------------
# GP: a hypothesis twin (random graphs, regions and trajectories; plain Dijkstra)
# --------------------------------------------------------------------------------------------


@st.composite
def _ndh_world(draw):
    n = draw(st.integers(2, 9))
    pos = draw(st.lists(st.tuples(*[st.integers(-5, 5)] * 3), min_size=n, max_size=n))
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n) if pos[i] != pos[j]]
    edges = draw(st.lists(st.sampled_from(pairs), unique=True, max_size=len(pairs))) if pairs else []
    graph = NavGraph(
        np.array(pos, float), np.array(edges, int).reshape(-1, 2), ids=[f"v{i}" for i in range(n)], name="h"
    )
    node = st.integers(0, n - 1).map(lambda i: f"v{i}")
    m = draw(st.integers(1, 4))
    entries, preds = [], []
    for k in range(m):
        planner = draw(st.lists(node, min_size=1, max_size=4))
        entries.append(
            {
                "inst_idx": k,
                "scan": "h",
                "end_panos": draw(st.lists(node, min_size=1, max_size=4)),
                "planner_path": planner,
                "player_path": [planner[0], *draw(st.lists(node, max_size=4))],
            }
        )
        preds.append(
            {"inst_idx": k, "trajectory": [[planner[0], 0, 0], *[[v, 0, 0] for v in draw(st.lists(node, max_size=5))]]}
        )
    return GraphSet([graph]), entries, preds


@settings(max_examples=150, deadline=None)
@given(_ndh_world(), st.sampled_from(["planner", "trusted"]))
def test_gp_hypothesis_twin(world, goal):
    graphs, entries, preds = world
    m = ndh.match_predictions(entries, preds, graphs, goal=goal, convention="paper")
    s = m.evaluate(convention="paper", inputs=dict(m.extra), metrics=["gp", "ne"])
    dist = dijkstra_lookups(graphs)
    for k, (e, p) in enumerate(zip(entries, preds)):
        start, final = ndh.chosen_path(e, goal)[0], p["trajectory"][-1][0]
        a = min(dist("h", start, x) for x in e["end_panos"])
        b = min(dist("h", final, x) for x in e["end_panos"])
        want = 0.0 if math.isinf(a) and math.isinf(b) else a - b
        assert s["gp"][k] == pytest.approx(want, abs=1e-5), (k, a, b)
        assert not math.isnan(s["gp"][k])


# --------------------------------------------------------------------------------------------
# the data set kind, the Benchmark and its random baseline
# --------------------------------------------------------------------------------------------


def test_kind_record():
    kind = ds.DATASETS["ndh"]
    assert kind is ndh.NDH and kind.id_name == "inst_idx" and kind.default_convention == "ndh"
    assert kind.conventions == ("ndh", "paper")
    goal = {o.name: o for o in kind.options}["goal"]
    assert goal.kind == "choice" and goal.choices == ("planner", "trusted") and goal.default == "planner"
    assert not goal.required and goal.flag == "--goal"
    assert navdtw.CONVENTIONS["ndh"].checks == ("start", "edges") and navdtw.CONVENTIONS["paper"].checks == ()


def test_benchmark_open_match_evaluate(tmp_path):
    conn = conn_folder(tmp_path, WORLD)
    split = write(tmp_path, "NDH_toy.json", split_entries())
    res = write(tmp_path, "res.json", preds_entries())
    bench = ds.open("ndh", split=str(split), connectivity=str(conn))
    assert bench.goal == "planner" and bench.n == 3 and bench.inputs["goal"] == "planner"
    trusted = ds.open("ndh", split=str(split), connectivity=str(conn), goal="trusted")
    s_p = bench.evaluate(bench.match(res))
    s_t = trusted.evaluate(trusted.match(res))
    assert s_p.convention.name == "ndh" and list(s_p.ids) == [10, 11, 12]
    np.testing.assert_array_equal(s_p["gp"], s_t["gp"])  # GP does not depend on the goal
    assert s_p["ne"][0] == pytest.approx(1.0) and s_t["ne"][0] == 0.0  # planner goal a2, trusted a3
    m = ndh.load_matched(split, conn, res, goal="trusted")
    for k in s_t:
        np.testing.assert_array_equal(trusted.evaluate(m)[k], s_t[k])
    assert bench.evaluate(bench.match(res, convention="paper"), convention="paper").convention.name == "paper"
    with pytest.raises(ValueError, match="--goal: must be one of planner, trusted"):
        ds.open("ndh", split=str(split), connectivity=str(conn), goal="oracle")
    with pytest.raises(ValueError, match="convention 'duet' does not apply to ndh data"):
        bench.match(res, convention="duet")
    assert list(bench.evaluate(bench.match(res), metrics=["gp"])) == ["gp"]


def _walk_twin(bench, n, seed):
    """The baseline's walks regenerated, with GP per walk from a plain Dijkstra."""
    env, refs = bench.graphs.encode([e["scan"] for e in bench.entries], bench.paths)
    walks, ref_of = RandomWalker(bench.graphs.graphs, refs, env, seed=seed).walks(0, n)
    dist = dijkstra_lookups(bench.graphs)
    gps = []
    for w, r in zip(walks, ref_of):
        e = bench.entries[int(r)]
        g = bench.graphs[e["scan"]]
        start, final = bench.paths[int(r)][0], g.ids[int(w[-1])]
        gps.append(
            min(dist(e["scan"], start, x) for x in e["end_panos"])
            - min(dist(e["scan"], final, x) for x in e["end_panos"])
        )
    return np.array(gps)


@pytest.mark.parametrize("goal", ["planner", "trusted"])
def test_baseline_gp_and_other_metrics(tmp_path, goal):
    conn = conn_folder(tmp_path, WORLD)
    split = write(tmp_path, "NDH_toy.json", split_entries()[:2])  # scan s1 only
    bench = ds.open("ndh", split=str(split), connectivity=str(conn), goal=goal)
    got = bench.baseline(5000, seed=3, progress=False)
    assert list(got) == [*navdtw.METRICS, "gp"]
    assert got["gp"] == pytest.approx(float(np.mean(_walk_twin(bench, 5000, 3))), abs=1e-9)
    # the hook adds gp and changes nothing else: the other means equal random_baseline's, bit for bit
    plain = random_baseline(
        [
            {"path_id": e["inst_idx"], "scan": e["scan"], "path": p, "num_instructions": 1}
            for e, p in zip(bench.entries, bench.paths)
        ],
        bench.graphs,
        5000,
        seed=3,
        convention="ndh",
        progress=False,
    )
    assert {k: v for k, v in got.items() if k != "gp"} == plain
    assert bench.baseline(5000, seed=3, progress=False, chunk=777, workers=1) == got  # chunk-independent
    assert bench.baseline(5000, seed=3, progress=False, metrics=["sr"]) == {"sr": got["sr"]}
    assert bench.baseline(5000, seed=3, progress=False, metrics=["gp"]) == {"gp": got["gp"]}


# --------------------------------------------------------------------------------------------
# the real data: acceptance numbers and per-episode agreement with the evaluator's rule
# --------------------------------------------------------------------------------------------

RESULTS = {
    "iter_19900": ("val-seq2seq-all-trusted_path-80-sample-imagenet_val_unseen_iter_19900.json", "unseen"),
    "unseen_iter_100": ("val-seq2seq-all-trusted_path-40-sample-imagenet_val_unseen_iter_100.json", "unseen"),
    "seen_iter_100": ("val-seq2seq-all-trusted_path-40-sample-imagenet_val_seen_iter_100.json", "seen"),
    "baseline_sample": ("baseline_sample.json", "unseen"),
}

#: Means from issue 13 / the evaluators note: the iteration 19,900 rows come from the unmodified
#: evaluator; the others from the note's re-implementation of its rule.
EXPECTED = {
    ("iter_19900", "trusted"): {
        "gp": 1.878040,
        "sr": 0.230430,
        "ne": 9.269382,
        "osr": 0.384785,
        "spl": 0.200066,
        "pl": 9.571991,
    },
    ("iter_19900", "planner"): {
        "gp": 1.878040,
        "sr": 0.274531,
        "ne": 7.659925,
        "osr": 0.484013,
        "spl": 0.236250,
        "pl": 9.571991,
    },
    ("seen_iter_100", "planner"): {"gp": 0.663645, "sr": 0.172775, "ne": 9.086430},
    ("seen_iter_100", "trusted"): {"gp": 0.663645, "sr": 0.159686, "ne": 10.459741},
    ("unseen_iter_100", "planner"): {"gp": 0.396490, "sr": 0.167585, "ne": 9.298362},
    ("unseen_iter_100", "trusted"): {"gp": 0.396490, "sr": 0.142227, "ne": 11.008166},
    ("baseline_sample", "planner"): {"gp": 1.517657, "sr": 0.224917, "ne": 7.430087, "spl": 0.139108},
    ("baseline_sample", "trusted"): {"gp": 1.517657, "sr": 0.156560, "ne": 9.344706, "spl": 0.098404},
}


@pytest.fixture(scope="module")
def real(data_dir, connectivity_dir):
    cvdn = data_dir / "cvdn"
    if not (cvdn / "NDH_val_unseen.json").is_file():
        pytest.skip("cvdn data not found")
    benches = {}
    for split in ("seen", "unseen"):
        for goal in ("planner", "trusted"):
            benches[split, goal] = ds.open(
                "ndh", split=str(cvdn / f"NDH_val_{split}.json"), connectivity=str(connectivity_dir), goal=goal
            )
    return cvdn, benches


def test_real_acceptance_iter_19900(real):
    cvdn, benches = real
    res = cvdn / "results" / RESULTS["iter_19900"][0]
    assert "iter_19900" in res.name
    for goal in ("trusted", "planner"):
        bench = benches["unseen", goal]
        means = bench.evaluate(bench.match(res)).summary()
        for key, want in EXPECTED["iter_19900", goal].items():
            assert means[key] == pytest.approx(want, abs=1e-6), (goal, key)


@pytest.mark.parametrize("name", list(RESULTS))
@pytest.mark.parametrize("goal", ["planner", "trusted"])
def test_real_per_episode_twin(real, name, goal):
    cvdn, benches = real
    fname, split = RESULTS[name]
    bench = benches[split, goal]
    res = cvdn / "results" / fname
    s = bench.evaluate(bench.match(res))
    results = json.loads(res.read_text())
    dist, neighbours = graph_lookups(bench.graphs)
    twin = eval_twin(bench.entries, results, dist, neighbours, goal)
    assert len(s) == len(twin) == bench.n
    for key in ("ne", "one", "gp", "pl", "sr", "osr", "spl"):
        want = np.array([twin[i][key] for i in s.ids])
        np.testing.assert_allclose(s[key], want, rtol=0, atol=1e-6, err_msg=f"{name} {goal} {key}")
    means = s.summary()
    for key, want in EXPECTED[name, goal].items():
        assert means[key] == pytest.approx(want, abs=1e-6), (name, goal, key)
    assert np.isfinite(s["ndtw"]).all() and np.isfinite(s["cls"]).all()


def test_real_baseline_sample_repeats_collapsed(real):
    cvdn, benches = real
    bench = benches["unseen", "planner"]
    m = bench.match(cvdn / "results" / "baseline_sample.json")
    raw = ndh.load_ndh_predictions(cvdn / "results" / "baseline_sample.json")
    assert int(m.queries.lengths.sum()) < sum(len(v) for v in raw.values())  # 41,320 repeats merged
    assert (m.queries.values[1:] != m.queries.values[:-1])[
        np.diff(np.repeat(np.arange(len(m)), m.queries.lengths)) == 0
    ].all()


def test_real_baseline_gp_twin(real):
    _, benches = real
    bench = benches["unseen", "trusted"]
    got = bench.baseline(3000, seed=11, progress=False)
    assert got["gp"] == pytest.approx(float(np.mean(_walk_twin(bench, 3000, 11))), abs=1e-6)
    assert 0.0 <= got["sr"] <= 1.0 and got["spl"] <= got["sr"]
