"""The ``ivln-ce`` data set kind: IVLN-CE's agent path and ground-truth tours read as
``scripts/t-ndtw.py`` of jacobkrantz/IVLN-CE reads them (files written as its trainer writes them,
tests/eval_writers.py), scored per tour and for the split against the evaluator's twin
(tests/naive_tours.py)."""

from __future__ import annotations

import csv
import json
import math

import eval_writers
import naive_tours
import numpy as np
import pytest
from test_tours import random_tour

import navdtw
from navdtw.cli import main
from navdtw.datasets import ivlnce


def _split(seed: int, n: int, *, k_max: int = 4):
    """A split of random tours that the evaluator scores (no tour without a warping path)."""
    rng = np.random.default_rng(seed)
    agent, gt = {}, {}
    while len(agent) < n:
        tid = str(len(agent) + 100)
        a, g = random_tour(rng, int(rng.integers(1, k_max + 1)), gt_min=2)
        try:
            naive_tours.tour_scores({tid: a}, {tid: g})
        except naive_tours.NoWarpingPath:
            continue
        agent[tid], gt[tid] = a, g
    return agent, gt


@pytest.fixture
def files(tmp_path):
    agent, gt = _split(35, 60)
    _, other_gt = _split(36, 5)
    return (agent, gt, *eval_writers.ivlnce_dtw_data(tmp_path, agent, {"val_unseen": gt, "val_seen": other_gt}))


def test_score_matches_the_evaluator(files, tmp_path, capsys):
    agent, gt, agent_file, gt_file = files
    out = tmp_path / "out"
    assert main(["score", "--dataset", "ivln-ce", "--predictions", str(agent_file), "--tours", str(gt_file),
                 "--out", str(out), "--no-figures"]) == 0  # fmt: skip
    want = naive_tours.tour_scores(agent, gt)
    split = naive_tours.split_score(want, gt)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["dataset"] == "ivln-ce" and summary["convention"] == "ivln-ce" and summary["n"] == len(gt)
    assert abs(summary["means"]["tndtw"] - split) <= 1e-9
    assert summary["means"]["tndtw"] != pytest.approx(np.mean(list(want.values())), abs=1e-6)  # weighted
    with open(out / "episodes.csv") as f:
        rows = list(csv.DictReader(f))
    assert [r["tour_id"] for r in rows] == list(gt)
    for r in rows:
        assert abs(float(r["tndtw"]) - want[r["tour_id"]]) <= 1e-9
        assert float(r["tour_weight"]) == naive_tours.episodes_per_tour({0: gt[r["tour_id"]]})[0]
    assert "IVLN-CE" in capsys.readouterr().out


def test_corrected_convention_and_split_name(files, tmp_path):
    agent, gt, agent_file, gt_file = files
    bench = navdtw.datasets.open("ivln-ce", tours=gt_file)
    matched = bench.match(agent_file, convention="ivln-ce-corrected")
    scores = bench.evaluate(matched, convention="ivln-ce-corrected", threshold=2.0)
    ids = list(gt)
    direct = navdtw.tour_ndtw(
        *[[[s[k] for s in steps[t]] for t in ids] for steps in (agent,) for k in ("position", "episode_id")],
        *[[[s[k] for s in steps[t]] for t in ids] for steps in (gt,) for k in ("position", "episode_id")],
        agent_phases=[[s["phase"] for s in agent[t]] for t in ids],
        gt_phases=[[s["phase"] for s in gt[t]] for t in ids],
        convention="corrected",
        threshold=2.0,
    )
    assert np.array_equal(scores["tndtw"], direct.ndtw) and np.array_equal(scores["tour_weight"], direct.weights)
    assert abs(scores.summary()["tndtw"] - direct.score) <= 1e-12
    assert scores.convention.name == "ivln-ce-corrected"
    # another split of the same file: the agent's tours are not its tours
    seen = navdtw.datasets.open("ivln-ce", tours=gt_file, split_name="val_seen")
    assert seen.n == 5
    with pytest.raises(ValueError, match=r"^dtw_data_ckpt_12_val_unseen.json: tours not in gt_ndtw.json's split "
                       r"val_seen: 105, .*\(55 in all\).*'tours are different'"):  # fmt: skip
        seen.match(agent_file)


def test_single_episode_tours_weigh_nothing_under_ivln_ce(tmp_path):
    rng = np.random.default_rng(7)
    agent, gt = {}, {}
    while len(agent) < 3:
        a, g = random_tour(rng, 1 if len(agent) < 2 else 3, gt_min=2)
        try:
            naive_tours.tour_scores({0: a}, {0: g})
        except naive_tours.NoWarpingPath:
            continue
        agent[str(len(agent))], gt[str(len(gt))] = a, g
    agent_file, gt_file = eval_writers.ivlnce_dtw_data(tmp_path, agent, {"val_unseen": gt})
    bench = navdtw.datasets.open("ivln-ce", tours=gt_file)
    scores = bench.evaluate(bench.match(agent_file))
    assert scores["tour_weight"].tolist() == [0.0, 0.0, 2.0]
    assert scores.summary()["tndtw"] == pytest.approx(scores["tndtw"][2], abs=1e-15)


@pytest.mark.parametrize(
    ("edit", "pattern"),
    [
        (lambda a, g: a.pop(next(iter(a))), r"^dtw_data_ckpt_12_val_unseen.json: no path for tours of gt_ndtw.json's "),
        (lambda a, g: a["100"][0].pop("phase"), r"^dtw_data_ckpt_12_val_unseen.json: tour 100 step 0: missing 'phase'"),
        (lambda a, g: a["101"][0].update(position=[0, 1]), r"tour 101 step 0: 'position' must be \[x, y, z\]"),
        (lambda a, g: a["101"][0].update(position=[0, 1e300 * 10, 0]), r"tour 101 step 0: 'position' is not finite"),
        (lambda a, g: g["102"].clear(), r"^gt_ndtw.json: split val_unseen: tour 102: expected a non-empty list"),
        (lambda a, g: [s.update(phase="oracle_goal") for s in g["102"]], r"tour 102: no step of phase 'agent'"),
    ],
)
def test_bad_input_names_the_file_and_entry(tmp_path, capsys, edit, pattern):
    agent, gt = _split(11, 3)
    agent_file, gt_file = eval_writers.ivlnce_dtw_data(tmp_path, agent, {"val_unseen": gt})
    agent, gt = json.loads(agent_file.read_text()), json.loads(gt_file.read_text())
    edit(agent, gt["val_unseen"])
    agent_file.write_text(json.dumps(agent))
    gt_file.write_text(json.dumps(gt))
    args = ["score", "--dataset", "ivln-ce", "--predictions", str(agent_file), "--tours", str(gt_file)]
    assert main([*args, "--out", str(tmp_path / "out"), "--no-figures"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    with pytest.raises(ValueError, match=pattern):
        bench = ivlnce.IvlnceBenchmark(gt_file)
        bench.kind = ivlnce.IVLN_CE
        bench.evaluate(bench.match(agent_file))


def test_missing_split_and_misplaced_files(files, tmp_path):
    _, _, agent_file, gt_file = files
    with pytest.raises(ValueError, match=r"^gt_ndtw.json: no split test \(it holds val_unseen, val_seen\)"):
        navdtw.datasets.open("ivln-ce", tours=gt_file, split_name="test")
    # the ground truth given as the predictions, and the agent's path as the tours
    bench = navdtw.datasets.open("ivln-ce", tours=gt_file)
    with pytest.raises(ValueError, match=r"holds IVLN-CE ground-truth tours .* give it as --tours"):
        bench.match(gt_file)
    message = r"^--tours dtw_data_ckpt_12_val_unseen.json holds IVLN-CE tours .*give it as --predictions"
    with pytest.raises(ValueError, match=message):
        navdtw.datasets.open("ivln-ce", tours=agent_file)
    # IVLN-CE's tours given to another kind are named for what they are
    pos = navdtw.datasets.open("positions", references=_positions(tmp_path))
    with pytest.raises(ValueError, match=r"holds IVLN-CE tours .*navdtw score --dataset ivln-ce"):
        pos.match(agent_file)
    assert navdtw.datasets.shapes.sniff(agent_file).name == "ivlnce-tours"
    assert navdtw.datasets.shapes.sniff(gt_file).name == "ivlnce-gt"


def _positions(tmp_path):
    path = tmp_path / "refs.json"
    path.write_text(json.dumps([{"episode_id": "100", "path": [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]]}]))
    return path


def test_no_warping_path_is_the_evaluators_error(tmp_path):
    rng = np.random.default_rng(3)
    while True:
        a, g = random_tour(rng, 3, gt_min=1)
        try:
            naive_tours.tour_scores({0: a}, {0: g})
        except naive_tours.NoWarpingPath:
            break
    agent_file, gt_file = eval_writers.ivlnce_dtw_data(tmp_path, {"t": a}, {"val_unseen": {"t": g}})
    bench = navdtw.datasets.open("ivln-ce", tours=gt_file)
    matched = bench.match(agent_file)
    with pytest.raises(ValueError, match=r"^tour 't': IVLN-CE's window leaves no warping path"):
        bench.evaluate(matched)
    fixed = bench.evaluate(matched, convention="ivln-ce-corrected")
    assert math.isfinite(fixed.summary()["tndtw"])


def test_suite_weighs_tours_as_the_evaluator(tmp_path):
    agent, gt = _split(37, 30)
    moved = {t: [{**s, "position": [x + 0.4 for x in s["position"]]} for s in steps] for t, steps in agent.items()}
    (tmp_path / "b").mkdir()
    first, gt_file = eval_writers.ivlnce_dtw_data(tmp_path, agent, {"val_unseen": gt})
    second, _ = eval_writers.ivlnce_dtw_data(tmp_path / "b", moved, {"val_unseen": gt})
    suite = tmp_path / "suite.toml"
    suite.write_text(
        f'[settings]\nresamples = 300\n\n[datasets.ivln]\ndataset = "ivln-ce"\ntours = "{gt_file}"\n\n'
        f'[agents.first]\nivln = "{first}"\n[agents.second]\nivln = "{second}"\n'
    )
    navdtw.suite.run(suite, tmp_path / "out", progress=False, report=False)
    result = json.loads((tmp_path / "out" / "results.json").read_text())["datasets"]["ivln"]
    # the tables count and resample tours (a row is a tour), not "episodes"
    caption = (tmp_path / "out" / "leaderboard.md").read_text()
    assert "ivln: ivln-ce, convention ivln-ce, 30 tours; means with" in caption
    assert "(300 resamples by tours)" in caption and "episodes" not in caption.split("resamples by")[0]
    assert result["metrics"]["tndtw"]["weight"] == "tour_weight"
    assert "tour weight" not in caption and "t-nDTW" in caption  # a weight, not a metric (new-user pass F6)
    for name, steps in (("first", agent), ("second", moved)):
        want = naive_tours.split_score(naive_tours.tour_scores(steps, gt), gt)
        got = result["agents"][name]["tndtw"]
        assert abs(got["mean"] - want) <= 1e-9
        assert got["ci"][0] <= want <= got["ci"][1]


def test_command_line_takes_both_conventions_and_shows_the_tours(files, tmp_path, capsys):
    agent, gt, agent_file, gt_file = files
    out = tmp_path / "corrected"
    assert main(["score", "--predictions", str(agent_file), "--tours", str(gt_file), "--convention",
                 "ivln-ce-corrected", "--out", str(out), "--no-figures"]) == 0  # fmt: skip
    printed = capsys.readouterr().out
    assert "IVLN-CE, 60 tours, convention 'ivln-ce-corrected'" in printed and "t-nDTW" in printed
    summary = json.loads((out / "summary.json").read_text())
    assert summary["dataset"] == "ivln-ce" and summary["convention"] == "ivln-ce-corrected"
    ids = list(gt)
    direct = navdtw.tour_ndtw(
        [[s["position"] for s in agent[t]] for t in ids],
        [[s["episode_id"] for s in agent[t]] for t in ids],
        [[s["position"] for s in gt[t]] for t in ids],
        [[s["episode_id"] for s in gt[t]] for t in ids],
        agent_phases=[[s["phase"] for s in agent[t]] for t in ids],
        gt_phases=[[s["phase"] for s in gt[t]] for t in ids],
        convention="corrected",
    )
    assert abs(summary["means"]["tndtw"] - direct.score) <= 1e-12
    assert main(["score", "--predictions", str(agent_file), "--tours", str(gt_file), "--convention", "r2r",
                 "--out", str(tmp_path / "r2r"), "--no-figures"]) == 2  # fmt: skip
    assert "convention 'r2r' does not apply to ivln-ce data" in capsys.readouterr().err


def test_score_draws_the_tours_histograms(files, tmp_path, capsys):
    """The command's default (figures on) draws what the kind has: t-nDTW and the tour DTW (none of
    the usual nDTW, SPL, NE... panels exists for tours), with t-nDTW's dashed mean at the split's
    weighted figure, not the tours' plain mean."""
    pytest.importorskip("matplotlib")
    from navdtw import plot

    *_, agent_file, gt_file = files
    out = tmp_path / "out"
    assert main(["score", "--dataset", "ivln-ce", "--predictions", str(agent_file), "--tours", str(gt_file),
                 "--out", str(out)]) == 0  # fmt: skip
    assert (out / "histograms.png").stat().st_size > 0
    capsys.readouterr()
    bench = navdtw.datasets.open("ivln-ce", tours=gt_file)
    scores = bench.evaluate(bench.match(agent_file))
    fig = plot.plot_histograms(scores, ["tndtw", "tour_dtw"], percent=False)
    titles = [ax.get_title() for ax in fig.axes if ax.axison]
    assert titles == ["t-nDTW", "tour DTW (m)"]
    mean_line = fig.axes[0].lines[0].get_xdata()[0]
    assert abs(mean_line - scores.summary()["tndtw"]) <= 1e-12
    assert abs(mean_line - float(np.mean(scores["tndtw"]))) > 1e-6
