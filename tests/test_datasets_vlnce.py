"""navdtw.datasets.vlnce: R2R-CE episodes, ground truth, continuous predictions and their matcher;
synthetic files in tmp_path plus the real R2R-CE files (skipped without the data)."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest

import navdtw
from navdtw import datasets as ds
from navdtw.datasets import vlnce


def write(tmp_path, name, obj):
    p = tmp_path / name
    p.write_text(json.dumps(obj))
    return p


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


EPISODES = {
    "episodes": [
        {
            "episode_id": 1,
            "scene_id": "mp3d/A/A.glb",
            "info": {"geodesic_distance": 4.5},
            "reference_path": [[0, 0, 0], [4, 0, 0]],
            "instruction": {"instruction_id": 11, "instruction_text": "go"},
        },
        {"episode_id": 2, "scene_id": "mp3d/B/B.glb", "reference_path": [[0, 0, 0], [0, 0, 2]]},
    ]
}
GT = {
    "1": {"locations": [[0, 0, 0], [2, 0, 0], [4, 0, 0]]},
    "2": {"locations": [[0, 0, 0], [0, 0, 1], [0, 0, 2]]},
}


@pytest.fixture
def ce(tmp_path):
    return write(tmp_path, "val.json", EPISODES), write(tmp_path, "val_gt.json", GT)


def test_load_predictions_formats(tmp_path):
    a = vlnce.load_predictions(write(tmp_path, "a.json", {"1": [{"position": [0, 0, 0]}, {"position": [1, 0, 0]}]}))
    b = vlnce.load_predictions(write(tmp_path, "b.json", [{"episode_id": 1, "path": [[0, 0, 0], [1, 0, 0]]}]))
    lines = tmp_path / "c.jsonl"
    lines.write_text(
        '{"instruction_id": 1, "path": [[0, 0, 0], [1, 0, 0]]}\n\n{"episode_id": 2, "path": [[1, 1, 1]]}\n'
    )
    c = vlnce.load_predictions(lines)
    gz = tmp_path / "d.json.gz"
    gz.write_bytes(gzip.compress(json.dumps({"1": [[0, 0, 0], [1, 0, 0]]}).encode()))
    d = vlnce.load_predictions(gz)
    for got in (a, b, c, d):
        np.testing.assert_array_equal(got["1"], [[0, 0, 0], [1, 0, 0]])
        assert got["1"].dtype == np.float64
    assert list(c) == ["1", "2"]
    assert ds.load_vlnce_predictions is vlnce.load_predictions


def test_vlnce_own_form_one_episode_a_line(tmp_path):
    """VLN-CE's inference form (``vlnce_baselines/common/base_il_trainer.py``, ``inference``:
    ``json.dump(episode_predictions)``, ``{episode_id: [get_info() per step: {"position",
    "heading", "stop"}]}``) written one episode per line, as an evaluator appending as it goes
    does; read as JSON Lines and as the JSON list watch gives the reader (issue 36 item 7)."""
    steps = {
        "7": [{"position": [0, 0, 0], "heading": 0.1, "stop": False}, {"position": [1, 0, 0], "stop": True}],
        "8": [{"position": [2, 0, 0], "heading": 0.0, "stop": False}],
    }
    lines = tmp_path / "preds.jsonl"
    lines.write_text("".join(json.dumps({k: v}) + "\n" for k, v in steps.items()))
    listed = write(tmp_path, "list.json", [{k: v} for k, v in steps.items()])
    whole = write(tmp_path, "whole.json", steps)
    got = [vlnce.read_predictions(p) for p in (lines, listed, whole)]
    for paths, keys, stops in got:
        assert list(paths) == ["7", "8"] and keys == {}
        np.testing.assert_array_equal(paths["7"], [[0, 0, 0], [1, 0, 0]])
        assert stops == got[2][2] and stops["7"].called and not stops["8"].called
    # mixed with records, a line per episode either way; a duplicate across the forms named
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text(json.dumps({"7": steps["7"]}) + "\n" + json.dumps({"episode_id": 8, "path": [[2, 0, 0]]}) + "\n")
    assert list(vlnce.load_predictions(mixed)) == ["7", "8"]
    mixed.write_text(json.dumps({"7": steps["7"]}) + "\n" + json.dumps({"episode_id": 7, "path": [[2, 0, 0]]}) + "\n")
    with pytest.raises(ValueError, match=r"mixed\.jsonl: line 2 \(id 7\): duplicate id 7 \(also line 1"):
        vlnce.load_predictions(mixed)


@pytest.mark.parametrize(
    "text, match",
    [
        ('{"1": [[0, 0, 0]],', r"p\.json: malformed JSON at line 1"),
        ('{"episode_id": 1, "path": [[0, 0, 0]]}\n{"episode_id": 2, "path": [[0, 0, 0]', r"p\.json: line 2: malformed"),
        (
            '[{"episode_id": 1, "path": [[0, 0, 0]]}, {"episode_id": 1, "path": [[1, 0, 0]]}]',
            r"entry 1 .*duplicate id 1",
        ),
        ('[{"path": [[0, 0, 0]]}]', r"p\.json: entry 0: needs 'episode_id' or 'instruction_id'"),
        ('[{"1": 3}]', r"p\.json: entry 0: needs 'episode_id' or 'instruction_id' and 'path', or VLN-CE's"),
        ('{"1": [{"position": [0, 0, 0]}]}\n{"1": [[1, 0, 0]]}', r"line 2 \(episode_id 1\): duplicate id 1"),
        ('[{"episode_id": 3}]', r"p\.json: entry 0 \(id 3\): missing 'path'"),
        ('{"1": []}', r"p\.json: entry 0 \(episode_id 1\): expected a non-empty list of steps"),
        ('{"1": [{"heading": 0}]}', r"entry 0 \(episode_id 1\): step 0 has no 'position'"),
        ('{"1": [[0, 0]]}', r"entry 0 \(episode_id 1\): 'path' must be a non-empty list of \[x, y, z\]"),
        ("3", r"p\.json: expected an object keyed by episode id"),
    ],
)
def test_load_predictions_errors(tmp_path, text, match):
    p = tmp_path / "p.json"
    p.write_text(text)
    with pytest.raises(ValueError, match=match):
        vlnce.load_predictions(p)


def test_match_predictions(tmp_path, ce):
    ep, gt = ce
    # keyed by instruction id (11) for episode 1 and by episode id for episode 2
    preds = write(tmp_path, "preds.json", {"11": [[0, 0, 0], [4, 0, 0]], "2": [[0, 0, 0], [0, 0, 1]]})
    m = vlnce.load_matched(ep, gt, preds)
    assert isinstance(m, ds.MatchedEpisodes) and m.id_name == "episode_id"
    assert m.ids == ["1", "2"] and m.scans == ["A", "B"] and m.env is None and m.distances is None
    assert not m.references.is_nodes and [len(p) for p in m.references] == [3, 3]
    # SPL's l: the episode's geodesic distance, else the straight line from the gt's start to its end
    np.testing.assert_array_equal(m.shortest_distance, [4.5, 2.0])
    s = m.evaluate(threshold=3.0, convention="vlnce")
    direct = navdtw.evaluate(
        [np.array(GT[i]["locations"], dtype=np.float64) for i in ("1", "2")],
        [np.array([[0, 0, 0], [4, 0, 0]], dtype=np.float64), np.array([[0, 0, 0], [0, 0, 1]], dtype=np.float64)],
        threshold=3.0,
        convention="vlnce",
        shortest_distance=[4.5, 2.0],
    )
    for k in s:
        np.testing.assert_array_equal(s[k], direct[k])


@pytest.mark.parametrize(
    "preds, match",
    [
        (
            {"1": [[0, 0, 0]], "2": [[0, 0, 0]], "9": [[0, 0, 0]]},
            r"preds\.json: entry 2 \(id 9\): no such episode in val\.json",
        ),
        ({"1": [[0, 0, 0]], "11": [[0, 0, 0]]}, r"preds\.json: entry 1 \(id 11\): a second prediction for episode 1"),
        ({"1": [[0, 0, 0]]}, r"preds\.json: no prediction for episode_id 2 \(1 of the 2 episodes of val\.json\)"),
    ],
)
def test_match_predictions_errors(tmp_path, ce, preds, match):
    ep, gt = ce
    with pytest.raises(ValueError, match=match):
        vlnce.load_matched(ep, gt, write(tmp_path, "preds.json", preds))


def test_match_predictions_missing_gt(tmp_path, ce):
    ep, _ = ce
    gt = write(tmp_path, "val_gt.json", {"1": GT["1"]})
    preds = write(tmp_path, "preds.json", {"1": [[0, 0, 0]], "2": [[0, 0, 0]]})
    with pytest.raises(ValueError, match=r"val_gt\.json: no ground truth for episode_id 2 \(1 of the 2 episodes"):
        vlnce.load_matched(ep, gt, preds)
    with pytest.raises(ValueError, match=r"val\.json: no episodes"):
        vlnce.load_matched(write(tmp_path, "val.json", {"episodes": []}), gt, preds)


def test_conventions():
    assert vlnce.DEFAULT_CONVENTION in vlnce.CONVENTIONS
    assert set(vlnce.CONVENTIONS) <= set(navdtw.CONVENTIONS)


# --- real data ---------------------------------------------------------------------------------


@pytest.mark.data
def test_real_vlnce(data_dir):
    base = data_dir / "r2r_vlnce" / "R2R_VLNCE_v1-3_preprocessed" / "val_unseen"
    eps = ds.load_vlnce_episodes(base / "val_unseen.json.gz")
    assert len(eps) == 1839
    gt = ds.load_vlnce_gt(base / "val_unseen_gt.json.gz")
    assert len(gt) == 1839
    for e in eps[:50]:
        loc = gt[str(e["episode_id"])]["locations"]
        np.testing.assert_allclose(e["reference_path"][0], e["start_position"], atol=1e-5)
        assert np.linalg.norm(np.diff(loc, axis=0), axis=1).max() < 0.5
    preds = {k: v["locations"] for k, v in list(gt.items())}
    m = vlnce.match_predictions(eps, gt, preds)
    assert len(m) == 1839 and np.isfinite(m.shortest_distance).all()


def test_instruction_ids_are_not_taken_for_episode_ids(tmp_path):
    """VLN-CE's rxr inference format keys records by instruction_id, and instruction ids can be
    other episodes' ids (RxR-CE: episode "1" has instruction "0"): a record's instruction_id must
    find the episode with that instruction, never the episode with that id."""
    eps = {
        "episodes": [
            {"episode_id": 1, "reference_path": [[0, 0, 0], [4, 0, 0]], "instruction": {"instruction_id": 2}},
            {"episode_id": 2, "reference_path": [[0, 0, 0], [0, 0, 2]], "instruction": {"instruction_id": 1}},
        ]
    }
    ep, gt = write(tmp_path, "val.json", eps), write(tmp_path, "val_gt.json", GT)
    by_episode = write(tmp_path, "a.json", {"1": GT["1"]["locations"], "2": GT["2"]["locations"]})
    by_instruction = tmp_path / "b.jsonl"
    by_instruction.write_text(
        json.dumps({"instruction_id": 2, "path": GT["1"]["locations"]})
        + "\n"
        + json.dumps({"instruction_id": 1, "path": GT["2"]["locations"]})
        + "\n"
    )
    a = vlnce.load_matched(ep, gt, by_episode).evaluate(convention="vlnce")
    b = vlnce.load_matched(ep, gt, by_instruction).evaluate(convention="vlnce")
    assert a["ndtw"].tolist() == b["ndtw"].tolist() == [1.0, 1.0]
    # an instruction id that no episode has is named as one
    bad = tmp_path / "c.jsonl"
    bad.write_text(by_instruction.read_text() + json.dumps({"instruction_id": 7, "path": [[0, 0, 0]]}) + "\n")
    with pytest.raises(ValueError, match=r"c\.jsonl: entry 2 \(instruction_id 7\): no such episode in val\.json"):
        vlnce.load_matched(ep, gt, bad)
    # a dict keeps the old rule (episode ids first) unless id_keys says how each id was written
    preds, keys, _ = vlnce.read_predictions(by_instruction)
    assert keys == {"2": "instruction_id", "1": "instruction_id"}
    swapped = vlnce.match_predictions(ds.load_vlnce_episodes(ep), ds.load_vlnce_gt(gt), preds).evaluate()
    assert swapped["ndtw"].tolist() != [1.0, 1.0]
    right = vlnce.match_predictions(ds.load_vlnce_episodes(ep), ds.load_vlnce_gt(gt), preds, id_keys=keys)
    assert right.evaluate()["ndtw"].tolist() == [1.0, 1.0]


def test_r2rce_random_baseline(ce):
    bench = navdtw.datasets.open("r2r-ce", vlnce_episodes=ce[0], vlnce_gt=ce[1])
    a = bench.baseline(2000, seed=1, progress=False)
    assert a == bench.baseline(2000, seed=1, progress=False, chunk=700)
    assert 0.0 <= a["sr"] <= a["osr"] <= 1.0 and a["ndtw"] < 1.0 and "sed" not in a
    assert navdtw.datasets.DATASETS["r2r-ce"].has_baseline


def test_an_episode_that_never_stops_has_no_success_under_vlnce(tmp_path, ce):
    """VLN-CE's r2r inference format writes the env's is_stop_called after every step; its Success
    measure needs the stop (habitat's Success: is_stop_called and distance < SUCCESS_DISTANCE).
    Both episodes end at their goal; episode 2's agent ran out of steps without stopping."""
    ep, gt = ce

    def steps(points, stop_at):
        return [{"position": p, "heading": 0.0, "stop": j == stop_at} for j, p in enumerate(points)]

    flags = {"1": steps([[0, 0, 0], [2, 0, 0], [4, 0, 0]], 2), "2": steps([[0, 0, 0], [0, 0, 1], [0, 0, 2]], None)}
    preds = write(tmp_path, "predictions.json", flags)
    bench = navdtw.datasets.open("r2r-ce", vlnce_episodes=ep, vlnce_gt=gt)
    matched = bench.match(preds)
    s = bench.evaluate(matched)
    assert s["ne"].tolist() == [0.0, 0.0] and s["sr"].tolist() == [1.0, 0.0]  # was [1.0, 1.0]
    assert s["spl"][1] == 0.0 and s["sdtw"][1] == 0.0 and s["ndtw"][1] == 1.0 and s["osr"][1] == 1.0
    assert matched.notes == (
        "predictions.json: 1 of 2 episodes never issued stop (no step with stop true): no success, as VLN-CE's "
        "Success measure requires it: episode_id 2 (1 in all)",
    )
    # navdtw's paper definitions have no stop: every episode counts, the note says so
    paper = bench.match(preds, convention="paper")
    assert paper.stopped is None and bench.evaluate(paper, convention="paper")["sr"].tolist() == [1.0, 1.0]
    assert "counted as stopped (paper judges the final position" in paper.notes[0]
    # steps after a stop are not the agent's path (VLN-CE writes none): left out, counted
    flags["1"] = [*flags["1"], {"position": [9, 0, 0], "heading": 0.0, "stop": False}]
    cut = bench.match(write(tmp_path, "more.json", flags))
    assert len(cut.queries[0]) == 3 and "more.json: 1 points after a stop left out" in cut.notes[0]
    # a stop flag that is not a boolean is malformed
    flags["1"][0]["stop"] = "no"
    with pytest.raises(ValueError, match=r"bad.json: entry 0 \(episode_id 1\): step 0: 'stop' must be true or false"):
        bench.match(write(tmp_path, "bad.json", flags))
    # files without stop flags (VLN-CE's rxr format, records): every episode counts as stopped
    records = write(tmp_path, "records.json", [{"episode_id": k, "path": GT[k]["locations"]} for k in ("1", "2")])
    plain = bench.match(records)
    assert plain.stopped is None and bench.evaluate(plain)["sr"].tolist() == [1.0, 1.0]
