"""navdtw.datasets.rxrce: RxR-CE episodes by language, VLN-CE's two inference formats, matching,
hostile input, the baseline and suites; the RxR-CE layout built from the real R2R-CE data (languages
assigned) scores every episode exactly as r2r-ce (skipped without the data). The check against
VLN-CE's own fastdtw-based NDTW measure is in tests/test_fastdtw_compat.py."""

from __future__ import annotations

import gzip
import json
import math
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from vlnce_layouts import LANGS, gz, predictions, rxrce_layout

import navdtw
from navdtw.cli import main

EPISODES = [
    {
        "episode_id": k,
        "trajectory_id": k // 2,
        "scene_id": f"mp3d/S{k}/S{k}.glb",
        "reference_path": [[0, 0, 0], [k + 1.0, 0, 0]],
    }
    | ({"info": {"geodesic_distance": k + 1.5}} if k % 3 else {})
    for k in range(6)
]
GT = {str(k): {"locations": [[x * 0.5, 0.0, 0.0] for x in range(2 * k + 3)]} for k in range(6)}


@pytest.fixture
def tiny(tmp_path):
    ep, gt = rxrce_layout(EPISODES, GT, tmp_path)
    episodes = json.loads(gzip.decompress(ep.read_bytes()))["episodes"]
    rng = np.random.default_rng(0)
    paths = {}
    for k, v in GT.items():
        p = np.array(v["locations"])[::2] + rng.normal(0, 0.4, size=(len(v["locations"][::2]), 3)) * [1, 0, 1]
        paths[k] = p.tolist()
    return ep, gt, episodes, predictions(episodes, paths, tmp_path), tmp_path


def open_rxrce(ep, gt, **options):
    return navdtw.datasets.open("rxr-ce", rxrce_episodes=ep, rxrce_gt=gt, **options)


def test_episodes_carry_their_language(tiny):
    ep, *_ = tiny
    eps = navdtw.datasets.load_rxrce_episodes(ep)
    assert [e["language"] for e in eps] == [LANGS[k % 4] for k in range(6)]
    assert [e["episode_id"] for e in eps] == [str(k) for k in range(6)]
    assert eps[0]["reference_path"].shape == (2, 3) and eps[0]["scan"] == "S0"


def test_every_prediction_format_scores_alike_and_as_r2rce(tiny):
    ep, gt, _, preds, _ = tiny
    bench = open_rxrce(ep, gt)
    scores = {name: bench.evaluate(bench.match(f)) for name, f in preds.items()}
    r2rce = navdtw.datasets.open("r2r-ce", vlnce_episodes=ep, vlnce_gt=gt)
    want = r2rce.evaluate(r2rce.match(preds["records"]))
    for name, s in scores.items():
        assert s.convention.name == "vlnce" and s.ids == [str(k) for k in range(6)]
        for k in want:
            np.testing.assert_array_equal(s[k], want[k], err_msg=(name, k))
    s = scores["rxr"]
    assert s.groups["language"] == [LANGS[k % 4] for k in range(6)]
    by = s.summary(by="language")
    assert set(by) == {"all", *LANGS} and by["en-US"]["ndtw"] == pytest.approx(np.mean(s["ndtw"][[0, 4]]))
    # SPL's l: info.geodesic_distance where given, else the straight line; the note counts the others
    matched = bench.match(preds["rxr"])
    assert matched.shortest_distance.tolist() == [1.0, 2.5, 3.5, 4.0, 5.5, 6.5]
    assert matched.notes == (
        "2 of the 6 episodes have no info.geodesic_distance: SPL's l is the straight line from the ground "
        "truth's start to its end (VLN-CE measures the geodesic distance)",
    )


def test_languages_choose_the_episodes(tiny):
    ep, gt, _, preds, _ = tiny
    every = open_rxrce(ep, gt)
    all_scores = every.evaluate(every.match(preds["rxr"]))
    english = open_rxrce(ep, gt, languages="en")
    assert english.n == 4  # en-US: 0, 4; en-IN: 1, 5
    m = english.match(preds["rxr"])
    assert m.ids == ["0", "1", "4", "5"] and m.groups["language"] == ["en-US", "en-IN", "en-US", "en-IN"]
    assert m.notes[0] == (
        "languages en: 4 of the 6 episodes of val_unseen_guide.json.gz scored; "
        "2 predictions for the other languages left aside"
    )
    s = english.evaluate(m)
    np.testing.assert_array_equal(s["ndtw"], all_scores["ndtw"][[0, 1, 4, 5]])
    hindi = open_rxrce(ep, gt, languages="hi-IN")
    assert hindi.match(preds["r2r"]).ids == ["2"]
    with pytest.raises(ValueError, match=r"--languages: must be one of all, en, en-US"):
        open_rxrce(ep, gt, languages="fr-FR")


def test_an_english_only_agent_is_scored_on_english(tiny, tmp_path):
    ep, gt, episodes, preds, _ = tiny
    lines = [json.loads(x) for x in preds["rxr"].read_text().splitlines()]
    english = {e["instruction"]["instruction_id"] for e in episodes if e["instruction"]["language"].startswith("en")}
    only = tmp_path / "en.jsonl"
    only.write_text("".join(json.dumps(r) + "\n" for r in lines if str(r["instruction_id"]) in english))
    assert len(open_rxrce(ep, gt, languages="en").match(only)) == 4
    with pytest.raises(ValueError, match=r"en\.jsonl: no prediction for episode_id 2, 3 \(2 of the 6 episodes"):
        open_rxrce(ep, gt).match(only)


def test_cluster_of_trajectories_and_baseline(tiny):
    ep, gt, *_ = tiny
    bench = open_rxrce(ep, gt)
    assert bench.cluster_of(["0", "1", "2", "5"]) == ["0", "0", "1", "2"]
    a = bench.baseline(2000, seed=4, progress=False)
    assert a == bench.baseline(2000, seed=4, progress=False, chunk=500)
    assert set(a) == set(navdtw.METRICS) - {"sed"}
    assert navdtw.datasets.DATASETS["rxr-ce"].has_baseline


def _edit(obj, path, value):
    """A copy of ``obj`` with ``value`` at ``path`` (keys and indices); ``value=None`` deletes it."""
    obj = json.loads(json.dumps(obj))
    node = obj
    for key in path[:-1]:
        node = node[key]
    if value is None:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return obj


# (the file made bad: "episodes" / "gt" / "preds_r2r" / "preds_rxr", an edit, the message's pattern)
HOSTILE = [
    ("gt", (("3", "locations"), None), r"val_unseen_guide_gt\.json\.gz: entry 3 \(episode_id 3\): missing 'locations'"),
    (
        "gt",
        (("2", "locations", 1), [0.5, 0.0]),
        r"val_unseen_guide_gt\.json\.gz: entry 2 \(episode_id 2\): 'locations' must be a list of \[x, y, z\] points",
    ),
    (
        "gt",
        (("2", "locations", 1, 1), math.nan),
        r"val_unseen_guide_gt\.json\.gz: entry 2 \(episode_id 2\): 'locations' point 1 is not finite",
    ),
    ("gt", (("2", "locations"), []), r"entry 2 \(episode_id 2\): 'locations' must be a non-empty list"),
    (
        "episodes",
        (("episodes", 4, "instruction", "language"), None),
        r"val_unseen_guide\.json\.gz: episode 4 \(episode_id 4\): 'instruction' has no 'language'",
    ),
    (
        "episodes",
        (("episodes", 5, "episode_id"), "1"),
        r"val_unseen_guide\.json\.gz: episode 5 \(episode_id 1\): duplicate episode_id \(also episode 1\)",
    ),
    (
        "episodes",
        (("episodes", 5, "instruction", "instruction_id"), "5"),
        r"episode 5 \(episode_id 5\): duplicate instruction_id 5 \(also episode 0\)",
    ),
    (
        "episodes",
        (("episodes", 2, "reference_path"), []),
        r"episode 2 \(episode_id 2\): 'reference_path' must be a non-empty list",
    ),
    (
        "preds_r2r",
        (("9",), [{"position": [0, 0, 0]}]),
        r"preds_r2r\.json: entry 6 \(id 9\): no such episode in val_unseen_guide\.json\.gz",
    ),
    (
        "preds_r2r",
        (("4", 0, "position"), [0.0, 0.0]),
        r"preds_r2r\.json: entry 4 \(episode_id 4\): 'path' must be a list of \[x, y, z\] points",
    ),
    (
        "preds_r2r",
        (("4", 1, "position", 2), math.nan),
        r"preds_r2r\.json: entry 4 \(episode_id 4\): 'path' point 1 is not finite",
    ),
    ("preds_r2r", (("4",), []), r"preds_r2r\.json: entry 4 \(episode_id 4\): expected a non-empty list of steps"),
    (
        "preds_rxr",
        ((0, "instruction_id"), 17),
        r"preds_rxr\.jsonl: entry 0 \(instruction_id 17\): no such episode in val_unseen_guide\.json\.gz",
    ),
    (
        "preds_rxr",
        ((1, "instruction_id"), 0),
        r"preds_rxr\.jsonl: line 2 \(id 0\): duplicate id 0 \(also line 1 \(id 0\)\)",
    ),
    ("preds_rxr", ((2, "path"), []), r"preds_rxr\.jsonl: line 3 \(id 2\): expected a non-empty list of steps"),
    (
        "preds_rxr",
        ((2, "path", 0), [1.0, 2.0]),
        r"preds_rxr\.jsonl: line 3 \(id 2\): 'path' must be a list of \[x, y, z\] points",
    ),
]


@pytest.mark.parametrize("which, edit, pattern", HOSTILE, ids=[h[2][:60] for h in HOSTILE])
def test_hostile_inputs_one_line_exit_2(tiny, tmp_path, capsys, which, edit, pattern):
    ep, gt, _, preds, folder = tiny
    files = {"episodes": ep, "gt": gt, "preds_r2r": preds["r2r"], "preds_rxr": preds["rxr"]}
    target = files[which]
    if which == "preds_rxr":
        rows = [json.loads(x) for x in target.read_text().splitlines()]
        rows = _edit(rows, *edit)
        target.write_text("".join(json.dumps(r) + "\n" for r in rows))
    elif which == "preds_r2r":
        target.write_text(json.dumps(_edit(json.loads(target.read_text()), *edit)))
    else:
        gz(target, _edit(json.loads(gzip.decompress(target.read_bytes())), *edit))
    pred = preds["rxr"] if which != "preds_r2r" else preds["r2r"]
    with pytest.raises(ValueError, match=pattern):
        open_rxrce(ep, gt).match(pred)
    args = ["score", "--rxrce-episodes", str(ep), "--rxrce-gt", str(gt), "--predictions", str(pred)]
    assert main([*args, "--out", str(folder / "out"), "--no-figures"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("navdtw: error: ") and "Traceback" not in err[0], err
    assert target.name in err[0], err


def test_score_command_reports_languages(tiny, capsys):
    ep, gt, _, preds, folder = tiny
    out = folder / "out"
    args = ["score", "--rxrce-episodes", str(ep), "--rxrce-gt", str(gt), "--predictions", str(preds["rxr"])]
    assert main([*args, "--out", str(out), "--no-figures"]) == 0
    text = capsys.readouterr().out
    assert "RxR-CE, 6 episodes, convention 'vlnce'" in text and "  language hi-IN" in text
    summary = json.loads((out / "summary.json").read_text())
    assert summary["dataset"] == "rxr-ce" and set(summary["means_by_language"]) == set(LANGS)
    assert summary["inputs"]["languages"] == "all"
    header = (out / "episodes.csv").read_text().splitlines()[0]
    assert header.startswith("episode_id,scan,language,pl,")


def test_suite_takes_rxrce(tiny):
    ep, gt, _, preds, folder = tiny
    suite_file = folder / "suite.toml"
    suite_file.write_text(
        f'[datasets.rxrce_unseen]\ndataset = "rxr-ce"\nrxrce_episodes = "{ep.name}"\nrxrce_gt = "{gt.name}"\n'
        f'languages = "en"\n[agents.a]\nrxrce_unseen = "{preds["rxr"].name}"\n'
        f'[agents.b]\nrxrce_unseen = "{preds["r2r"].name}"\n'
        "[settings]\nresamples = 200\nbaseline_walks = 300\n"
    )
    results = navdtw.suite.run(suite_file, folder / "suite_out", progress=False, report=False)
    assert results["failures"] == []
    ds = results["datasets"]["rxrce_unseen"]
    assert ds["n"] == 4 and ds["agents"]["a"]["ndtw"]["mean"] == ds["agents"]["b"]["ndtw"]["mean"]


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(st.data())
def test_random_episodes_score_as_r2rce(tmp_path, data):
    """Random episodes, ground truths and predictions (with repeated positions): the RxR-CE layout
    and the R2R-CE files score every episode identically, under both conventions."""
    n = data.draw(st.integers(1, 6))
    coord = st.floats(-30, 30, allow_nan=False, width=32)
    point = st.lists(coord, min_size=3, max_size=3)
    eps, gt, paths = [], {}, {}
    for k in range(n):
        loc = data.draw(st.lists(point, min_size=1, max_size=12))
        e = {"episode_id": k + 10, "reference_path": [loc[0], loc[-1]]}
        if data.draw(st.booleans()):
            e["info"] = {"geodesic_distance": data.draw(st.floats(0, 50))}
        eps.append(e)
        gt[str(k + 10)] = {"locations": loc}
        path = data.draw(st.lists(point, min_size=1, max_size=12))
        paths[str(k + 10)] = path + [path[-1]] * data.draw(st.integers(0, 2))
    folder = Path(tempfile.mkdtemp(dir=tmp_path))
    ep_file, gt_file = rxrce_layout(eps, gt, folder)
    episodes = json.loads(gzip.decompress(ep_file.read_bytes()))["episodes"]
    preds = predictions(episodes, paths, folder)
    r2r_files = gz(folder / "r2r.json.gz", {"episodes": eps}), gz(folder / "r2r_gt.json.gz", gt)
    r2rce = navdtw.datasets.open("r2r-ce", vlnce_episodes=r2r_files[0], vlnce_gt=r2r_files[1])
    bench = open_rxrce(ep_file, gt_file)
    for convention in ("vlnce", "paper"):
        want = r2rce.evaluate(r2rce.match(preds["records"]), convention=convention)
        for name in ("rxr", "r2r"):
            got = bench.evaluate(bench.match(preds[name], convention=convention), convention=convention)
            for k in want:
                np.testing.assert_array_equal(got[k], want[k], err_msg=(convention, name, k))


# --------------------------------------------------------------------------------------------
# real data: the RxR-CE layout built from R2R-CE val_unseen
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def real_layout(data_dir, tmp_path_factory):
    base = data_dir / "r2r_vlnce" / "R2R_VLNCE_v1-3_preprocessed" / "val_unseen"
    if not base.is_dir():
        pytest.skip(f"{base} not found")
    raw = json.loads(gzip.decompress((base / "val_unseen.json.gz").read_bytes()))["episodes"]
    gt = json.loads(gzip.decompress((base / "val_unseen_gt.json.gz").read_bytes()))
    folder = tmp_path_factory.mktemp("rxrce")
    ep, gtf = rxrce_layout(raw, gt, folder)
    episodes = json.loads(gzip.decompress(ep.read_bytes()))["episodes"]
    rng = np.random.default_rng(21)
    paths = {}
    for k, e in enumerate(raw):
        loc = np.array(gt[str(e["episode_id"])]["locations"])
        kind = k % 4
        if kind == 0:  # noisy, with the agent turning in place (repeated positions)
            q = loc + rng.normal(0, 0.3, size=loc.shape) * [1, 0, 1]
            q = np.repeat(q, rng.integers(1, 3, size=len(q)), axis=0)
        elif kind == 1:  # stops early
            q = loc[: int(rng.integers(1, len(loc) + 1))]
        elif kind == 2:  # subsampled
            q = loc[:: int(rng.integers(2, 5))]
        else:  # another episode's ground truth
            q = np.array(gt[str(raw[(k * 7) % len(raw)]["episode_id"])]["locations"])
        paths[str(e["episode_id"])] = q.tolist()
    return {
        "r2rce": (base / "val_unseen.json.gz", base / "val_unseen_gt.json.gz"),
        "rxrce": (ep, gtf),
        "preds": predictions(episodes, paths, folder),
        "paths": paths,
        "episodes": episodes,
    }


@pytest.mark.data
@pytest.mark.parametrize("convention", ["vlnce", "paper"])
def test_real_layout_scores_every_episode_as_r2rce(real_layout, convention):
    r2rce = navdtw.datasets.open("r2r-ce", vlnce_episodes=real_layout["r2rce"][0], vlnce_gt=real_layout["r2rce"][1])
    want = r2rce.evaluate(r2rce.match(real_layout["preds"]["r2r"], convention=convention), convention=convention)
    bench = open_rxrce(*real_layout["rxrce"])
    assert bench.n == 1839
    for name in ("rxr", "r2r", "records"):
        got = bench.evaluate(bench.match(real_layout["preds"][name], convention=convention), convention=convention)
        assert got.ids == want.ids
        for k in want:
            np.testing.assert_array_equal(got[k], want[k], err_msg=(name, k))
    by = got.summary(by="language")
    assert {k: len(v) for k, v in by.items()} and set(by) == {"all", *LANGS}
    assert 0.3 < by["all"]["ndtw"] < 0.9


@pytest.mark.data
def test_real_layout_ground_truth_scores_one(real_layout, tmp_path):
    episodes = real_layout["episodes"]
    gt = json.loads(gzip.decompress(real_layout["rxrce"][1].read_bytes()))
    preds = predictions(episodes, {k: v["locations"] for k, v in gt.items()}, tmp_path)
    bench = open_rxrce(*real_layout["rxrce"])
    means = bench.evaluate(bench.match(preds["rxr"])).summary(by="language")
    for lang in ("all", *LANGS):
        assert means[lang]["sr"] == 1.0 and means[lang]["ndtw"] == 1.0, lang


def test_results_tables_on_the_rxrce_split(tmp_path):
    """A results table of a VLN-CE RxR evaluation checked against the RxR-CE episodes
    (``dataset_kind="rxr-ce"``): the languages come from the split, and a table keyed by
    ``instruction_id`` finds the episodes with those instructions, not those with those ids."""
    episodes = [{"episode_id": k, "reference_path": [[0, 0, 0], [1.0, 0, 0]]} for k in range(4)]
    ep, _ = rxrce_layout(episodes, {str(k): {"locations": [[0, 0, 0]]} for k in range(4)}, tmp_path)
    bench = navdtw.datasets.open("results", split=ep, dataset_kind="rxr-ce")
    # rxrce_layout: episode k has instruction 3 - k; success only for instruction 0 (episode "3")
    by_instruction = bench.match([{"instruction_id": i, "success": float(i == 0)} for i in range(4)])
    by_episode = bench.match([{"episode_id": str(k), "success": float(k == 3)} for k in range(4)])
    for table in (by_instruction, by_episode):
        assert table.ids == ["0", "1", "2", "3"] and table.groups["language"] == list(LANGS)
        assert table.evaluate()["sr"].tolist() == [0.0, 0.0, 0.0, 1.0]
    with pytest.raises(ValueError, match=r"instruction_id 9 \(1 in all\): not episodes of val_unseen_guide\.json\.gz"):
        bench.match([{"instruction_id": 9, "success": 1.0}])
