"""navdtw.datasets.shapes: a file given to the wrong data set kind is recognised by its shape, and
the error says what the file is and the command that reads it (issue 28 item 9, issue 27
"Trajectories go to scoring"). Files are written as each project's code writes them: VLN-DUET's
``submit_``/``detail_`` (``json.dump(..., sort_keys=True, indent=4, separators=(',', ': '))``, one
list of viewpoints per step, ``details[vp]["stop_prob"]``), VLN-CE's ``predictions.json``, RxR-CE's
JSON Lines, CityNav's goal-predictor log, R2R and NDH results, per-episode results tables."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from synthetic_suite import make_world

import navdtw
from navdtw.cli import main
from navdtw.datasets import DATASETS, shapes


def _dump(path: Path, data, **kw) -> Path:
    path.write_text(json.dumps(data, **kw))
    return path


def _jsonl(path: Path, rows) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = make_world(tmp_path_factory.mktemp("shapes"))
    split = json.loads((root / "data" / "split.json").read_text())
    oracle = json.loads((root / "runs" / "oracle.json").read_text())
    # VLN-DUET: [[start], [the viewpoints walked to the next chosen node], ...], written as main_nav.py does
    duet = [
        {"instr_id": r["instr_id"], "trajectory": [[r["trajectory"][0][0]], [s[0] for s in r["trajectory"][1:]]]}
        for r in oracle
    ]
    dump = {"sort_keys": True, "indent": 4, "separators": (",", ": ")}
    _dump(root / "submit_val_unseen.json", duet, **dump)
    detail = [{**r, "details": {r["trajectory"][-1][-1]: {"stop_prob": 0.9}}} for r in duet]
    _dump(root / "detail_val_unseen.json", detail, **dump)
    _jsonl(
        root / "results.jsonl",
        [{"episode_id": r["instr_id"], "success": 1.0, "spl": 0.5, "ndtw": 0.7} for r in oracle],
    )
    _dump(root / "ndh.json", [{"inst_idx": 4, "trajectory": [["scanA_00", 0.0, 0.0]]}])
    _dump(root / "val_seen.json", [{"instr_id": f"9{k}_0", "trajectory": [["scanA_00", 0, 0]]} for k in range(4)])
    steps = [{"position": [0.0, 0.0, 0.0], "heading": 0.0, "stop": False}, {"position": [1.0, 0, 0], "stop": True}]
    _dump(root / "predictions.json", {"12": steps, "13": steps})
    _jsonl(root / "rxrce.jsonl", [{"instruction_id": 7, "path": [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]]}] * 1)
    with open(root / "rxrce.jsonl", "a") as f:
        f.write(json.dumps({"instruction_id": 8, "path": [[0.0, 0.0, 0.0]]}) + "\n")
    citynav = {
        "metrics": {"mean_final_pos_to_goal_dist": 40.1, "success_rate_final_pos_to_goal": 0.1},
        "trajectory_logs": {"('birmingham_block_1', 3, 0)": [[1.0, 2.0, 50.0, 0.0], [2.0, 2.0, 50.0, 0.1]]},
        "pred_goal_logs": {"('birmingham_block_1', 3, 0)": [[5.0, 5.0]]},
        "pred_progress_logs": {"('birmingham_block_1', 3, 0)": [0.4]},
    }
    _dump(root / "citynav.json", citynav)
    return root, split


R2R = ["--split", "data/split.json", "--connectivity", "data/connectivity"]


def _run(world, argv, capsys):
    """``navdtw ARGV`` run in the world's folder: (exit status, stderr)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(world[0])
        code = main(argv)
    return code, capsys.readouterr().err.strip()


@pytest.mark.parametrize(
    "file, shape",
    [
        ("runs/oracle.json", "r2r-trajectories"),
        ("submit_val_unseen.json", "duet-trajectories"),
        ("detail_val_unseen.json", "duet-trajectories"),
        ("results.jsonl", "results"),
        ("ndh.json", "ndh-trajectories"),
        ("predictions.json", "vlnce-predictions"),
        ("rxrce.jsonl", "rxrce-predictions"),
        ("citynav.json", "citynav-log"),
        ("data/split.json", "r2r-split"),
    ],
)
def test_each_shape_is_recognised(world, file, shape):
    assert shapes.sniff(world[0] / file) is shapes.SHAPES[shape]


def test_unknown_and_unreadable_files_have_no_shape(tmp_path):
    assert shapes.sniff(_dump(tmp_path / "a.json", {"x": [1, "y"]})) is None
    assert shapes.sniff(_dump(tmp_path / "b.json", [1, 2])) is None
    (tmp_path / "c.json").write_text("[{")
    assert shapes.sniff(tmp_path / "c.json") is None
    assert shapes.sniff(tmp_path / "missing.json") is None
    assert shapes.recognise({"sr": 0.5, "spl": 0.4}) is shapes.SHAPES["means"]


def test_every_suggested_command_uses_its_kinds_own_flags():
    for kind, command in shapes.COMMANDS.items():
        words = shlex.split(command.replace("<", "'<").replace(">", ">'"))
        assert words[words.index("--dataset") + 1] == kind
        flags = {w for w in words if w.startswith("--")} - {"--dataset", "--predictions"}
        assert flags <= {o.flag for o in DATASETS[kind].options}, kind
        required = {o.flag for o in DATASETS[kind].options if o.required}
        assert required <= flags, kind
    for shape in shapes.SHAPES.values():
        assert set(shape.kinds) <= set(shapes.COMMANDS) and (shape.kinds or shape.advice)


def test_results_jsonl_given_to_r2r(world, capsys):
    # was: "results.jsonl: malformed JSON at line 2 column 1: Extra data"
    code, err = _run(world, ["score", "--dataset", "r2r", *R2R, "--predictions", "results.jsonl"], capsys)
    assert code == 2
    assert err == (
        "navdtw: error: results.jsonl holds a results table (one row of metrics per episode), not what --dataset "
        "r2r reads; compare it with: navdtw compare results.jsonl --dataset results"
    )


def test_r2r_trajectories_given_to_results(world, capsys):
    # was: "oracle.json: no metric column (...); map one with --column NAME=METRIC"
    code, err = _run(world, ["compare", "runs/oracle.json", "--dataset", "results", "--no-progress"], capsys)
    assert code == 5  # every agent failed: nothing written
    assert "oracle.json holds R2R trajectories" in err and "--column" not in err
    assert "navdtw score --dataset r2r --predictions oracle.json --split R2R_<split>.json --connectivity" in err


def test_ndh_scored_as_r2r(world, capsys):
    # was: "ndh.json: entry 0: 'instr_id' must be a string, got None"
    code, err = _run(world, ["score", "--dataset", "r2r", *R2R, "--predictions", "ndh.json"], capsys)
    assert code == 2 and "'instr_id'" not in err
    assert "ndh.json holds CVDN/NDH trajectories ([{inst_idx, trajectory}]), not what --dataset r2r reads" in err
    assert "navdtw score --dataset ndh --predictions ndh.json --split NDH_<split>.json" in err


def test_predictions_of_another_split(world, capsys):
    # was: "val_seen.json: no prediction for instr_id 100_0, ...; the split has 120 instructions"
    for convention in ("r2r", "paper"):  # the evaluator's id set ignores extra ids; navdtw's refuses them
        code, err = _run(
            world,
            ["score", "--dataset", "r2r", *R2R, "--predictions", "val_seen.json", "--convention", convention],
            capsys,
        )
        assert code == 2
        assert err.startswith(
            "navdtw: error: val_seen.json: none of its 4 instr_ids is in the split: predictions of another split? "
            "(its ids: 90_0, 91_0, 92_0, 93_0 (4 in all); the split's: 100_0, 100_1, 100_2, 101_0, 101_1, … "
            "(120 in all))"
        )
    # some ids in the split: the reader's own message (the missing ones) stands
    root, _ = world
    oracle = json.loads((root / "runs" / "oracle.json").read_text())
    _dump(root / "partial.json", oracle[:3])
    code, err = _run(world, ["score", "--dataset", "r2r", *R2R, "--predictions", "partial.json"], capsys)
    assert "no prediction for instr_id 101_0" in err and "another split" not in err


def test_other_split_in_the_continuous_kinds(tmp_path):
    refs = _jsonl(tmp_path / "refs.jsonl", [{"episode_id": k, "path": [[0, 0, 0], [1, 0, 0]]} for k in range(3)])
    preds = _jsonl(tmp_path / "seen.jsonl", [{"episode_id": k + 10, "path": [[0, 0, 0]]} for k in range(3)])
    bench = navdtw.datasets.open("positions", references=refs)
    with pytest.raises(ValueError, match=r"^seen.jsonl: none of its 3 episode_ids is in refs.jsonl: predictions of"):
        bench.match(preds)


def test_vlnce_predictions_and_rxrce_lines_given_to_results(world, capsys):
    code, err = _run(world, ["compare", "predictions.json", "--dataset", "results", "--no-progress"], capsys)
    assert code == 5  # every agent failed: nothing written
    assert "predictions.json holds VLN-CE predictions" in err
    assert "navdtw score --dataset r2r-ce --predictions predictions.json --vlnce-episodes <split>.json.gz" in err
    code, err = _run(world, ["compare", "rxrce.jsonl", "--dataset", "results", "--no-progress"], capsys)
    assert code == 5
    assert "rxrce.jsonl holds RxR-CE predictions" in err and "--dataset rxr-ce --predictions rxrce.jsonl" in err


def test_duet_files_given_to_results_and_scored_as_r2r(world, capsys):
    code, err = _run(world, ["compare", "detail_val_unseen.json", "--dataset", "results", "--no-progress"], capsys)
    assert code == 5
    assert "detail_val_unseen.json holds VLN-DUET trajectories" in err and "--dataset r2r" in err
    # scored by the r2r kind with DUET's convention: the steps' viewpoint lists concatenated, as its
    # evaluator does (sum(trajectory, [])); the same numbers as the R2R file of the same paths
    root, _ = world
    bench = navdtw.datasets.open("r2r", split=root / "data" / "split.json", connectivity=root / "data" / "connectivity")
    for name in ("submit_val_unseen.json", "detail_val_unseen.json"):
        duet = bench.evaluate(bench.match(root / name, convention="duet"), convention="duet")
        same = bench.evaluate(bench.match(root / "runs" / "oracle.json", convention="duet"), convention="duet")
        for m in ("pl", "ne", "sr", "spl", "ndtw"):
            assert duet[m].tolist() == same[m].tolist(), (name, m)
        assert duet["sr"].mean() == 1.0  # the oracle: every path walked to its end


def test_citynav_log_is_refused_saying_what_it_is(world, capsys):
    for argv in (
        ["compare", "citynav.json", "--dataset", "results", "--no-progress"],
        ["score", "--dataset", "r2r", *R2R, "--predictions", "citynav.json"],
    ):
        _, err = _run(world, argv, capsys)
        (line,) = [x for x in err.splitlines() if "citynav.json" in x]  # one line (compare adds its own after it)
        assert "citynav.json holds a CityNav goal-predictor log" in line and "no CityNav kind" in line


def test_files_of_the_right_shape_keep_the_readers_message(world, tmp_path):
    root, _ = world
    bench = navdtw.datasets.open("r2r", split=root / "data" / "split.json", connectivity=root / "data" / "connectivity")
    oracle = json.loads((root / "runs" / "oracle.json").read_text())
    oracle[0]["trajectory"][1][0] = "nowhere"
    bad = _dump(tmp_path / "bad.json", oracle)
    with pytest.raises(ValueError, match=r"^bad.json: entry 0 \(instr_id 100_0\): unknown viewpoint 'nowhere'"):
        bench.match(bad, convention="paper")


def test_a_shape_read_by_several_kinds_is_left_to_each(world):
    root, _ = world
    oracle = root / "runs" / "oracle.json"
    for kind in ("r2r", "r4r", "rxr", "reverie"):  # REVERIE's object id is optional: R2R's shape is REVERIE's too
        assert shapes.explain(oracle, kind) is None
    assert shapes.explain(oracle, "ndh").startswith("oracle.json holds R2R trajectories")
    assert shapes.explain(root / "predictions.json", "positions") is None  # VLN-CE steps: read by positions too
    assert shapes.explain(root / "results.jsonl", "results") is None


def test_other_split_in_r2r_ce(tmp_path):
    episodes = {"episodes": [{"episode_id": k, "reference_path": [[0, 0, 0], [1, 0, 0]]} for k in (1, 2)]}
    gt = {str(k): {"locations": [[0, 0, 0], [1, 0, 0]]} for k in (1, 2)}
    ep, g = _dump(tmp_path / "val_unseen.json", episodes), _dump(tmp_path / "val_unseen_gt.json", gt)
    bench = navdtw.datasets.open("r2r-ce", vlnce_episodes=ep, vlnce_gt=g)
    seen = _dump(tmp_path / "val_seen.json", {"7": [{"position": [0, 0, 0], "stop": True}]})
    # was: "val_seen.json: entry 0 (id 7): no such episode in val_unseen.json"
    with pytest.raises(ValueError, match=r"^val_seen.json: none of its 1 id is in val_unseen.json: predictions of"):
        bench.match(seen)


@pytest.mark.parametrize(
    "data, shape",
    [
        ({"12": {"success": 1.0, "spl": 0.5}, "13": {"success": 0.0, "spl": 0.0}}, "results"),  # keyed by episode
        ({"12": [[0, 0, 0], [1, 0, 0]]}, "positions"),
        ({"12": {"path": [[0, 0], [1, 0]]}}, "positions"),
        ({"12": {"locations": [[0, 0, 0]], "actions": [1, 0]}}, "vlnce-gt"),
        ({"episodes": [{"episode_id": 1}]}, "vlnce-episodes"),
        ({"sr": 0.55, "spl": 0.5, "length": 1839}, "means"),
        ({"episode_id": 3, "success": 1.0}, "results"),  # JSON Lines of one record
        ([{"instruction_id": 3, "path": ["vp1", "vp2"]}], "rxr-follower"),
        # a guide annotation: a reference path with its instruction (the split's own line), not a follower's
        (
            [{"instruction_id": 3, "path_id": 7, "scan": "s1", "path": ["vp1", "vp2"], "instruction": "go"}],
            "rxr-guide",
        ),
        ([{"instr_id": "1_0", "trajectory": [["a", 0, 0]], "pred_objid": None}], "reverie-trajectories"),
        # DUET's lists are known by a step of two viewpoints, which not every row has
        (
            [{"instr_id": "1_0", "trajectory": [["a"]]}, {"instr_id": "2_0", "trajectory": [["a"], ["b", "c"]]}],
            "duet-trajectories",
        ),
    ],
)
def test_recognise_each_form(data, shape):
    assert shapes.recognise(data) is shapes.SHAPES[shape]


def test_a_summary_line_after_the_rows_does_not_hide_them(tmp_path):
    """StreamVLN appends a summary object without a newline: the rows before it decide."""
    rows = "".join(json.dumps({"episode_id": k, "success": 1.0}) + "\n" for k in range(3))
    (tmp_path / "result.json").write_text(rows + '{"sucs_all": NaN, "length": 3}{"x": 1')
    assert shapes.sniff(tmp_path / "result.json") is shapes.SHAPES["results"]


def test_other_split_in_a_results_table_with_its_split(world, tmp_path):
    root, _ = world
    bench = navdtw.datasets.open("results", split=root / "data" / "split.json", dataset_kind="r2r")
    seen = _jsonl(tmp_path / "seen.jsonl", [{"instr_id": f"9{k}_0", "success": 1.0} for k in range(3)])
    # was: "seen.jsonl: instr_id 90_0, 91_0, 92_0 (3 in all): not episodes of split.json"
    with pytest.raises(ValueError, match=r"^seen.jsonl: none of its 3 instr_ids is in split.json: predictions of"):
        bench.match(seen)


def test_a_duet_detail_file_that_reads_as_a_table_is_still_refused(tmp_path, capsys):
    """Two episodes that end at the same viewpoint: every row has the column details.c.stop_prob,
    which read as a metric; compare printed a leaderboard of it."""
    rows = [
        {"instr_id": f"{k}_0", "trajectory": [["a"], ["b", "c"]], "details": {"c": {"stop_prob": 0.9 - k / 10}}}
        for k in range(2)
    ]
    path = _dump(tmp_path / "detail_val_unseen.json", rows, sort_keys=True, indent=4, separators=(",", ": "))
    with pytest.raises(ValueError, match=r"^detail_val_unseen.json holds VLN-DUET trajectories"):
        navdtw.datasets.load_results(path)
    # a table with a registry metric beside a trajectory (AerialVLN writes both) is a results table
    table = [{"episode_id": k, "trajectory": [[0.0, 0.0, 0.0, 0.0]], "success": 1.0} for k in range(2)]
    assert navdtw.datasets.load_results(_dump(tmp_path / "aerial.json", table)).values["sr"].tolist() == [1.0, 1.0]


def test_compare_without_dataset_takes_the_kind_the_files_name(world, tmp_path, capsys):
    # issue 36's answer: was "the following arguments are required: --dataset" for every file
    (tmp_path / "copy.jsonl").write_text((world[0] / "results.jsonl").read_text())
    argv = ["compare", "a=results.jsonl", f"b={tmp_path / 'copy.jsonl'}", "--no-progress"]
    code, err = _run(world, argv, capsys)
    assert code == 0
    assert err.splitlines()[0] == "navdtw: reading as --dataset results (every file is a results table)"
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "part.csv").write_text("episode_id,success\n1,1\n2,0\n")
    code, err = _run(world, ["compare", f"r={folder}", "--no-progress"], capsys)
    assert code == 0 and err.splitlines()[0] == (
        "navdtw: reading as --dataset results (run is a folder of one run's results)"
    )


@pytest.mark.parametrize(
    "files, why",
    [
        (["runs/oracle.json"], "oracle.json holds R2R trajectories"),  # r2r, r4r, rxr or reverie: ambiguous
        (["results.jsonl", "runs/oracle.json"], "the agents' files are of different shapes"),
        (["predictions.json"], "which --dataset r2r-ce, rxr-ce or positions reads"),
        (["citynav.json"], "which no data set kind reads"),
    ],
)
def test_compare_without_dataset_still_asks_when_the_shape_names_no_one_kind(world, files, why, capsys):
    code, err = _run(world, ["compare", *files, "--no-progress"], capsys)
    assert code == 2
    assert err.startswith("navdtw: error: compare: --dataset is required: ") and why in err
    assert "reading as" not in err


def test_kind_of_files_names_a_kind_only_for_a_shape_one_kind_reads(world):
    root = world[0]
    assert shapes.kind_of_files([root / "ndh.json"]) == ("ndh", "ndh.json is CVDN/NDH trajectories")
    assert shapes.kind_of_files([root / "runs" / "oracle.json"])[0] is None
    assert shapes.kind_of_files([root / "results.jsonl", root / "ndh.json"])[0] is None
