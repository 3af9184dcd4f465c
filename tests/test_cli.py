"""The ``navdtw`` command end to end: demo, score (R2R and R2R-CE), baseline, errors and help."""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
from importlib.util import find_spec
from pathlib import Path

import pytest

from navdtw.cli import main

REPO = Path(__file__).resolve().parents[1]

# ------------------------------------------------------------------------------------------
# a tiny hand-made world: two scans, a split, predictions
# ------------------------------------------------------------------------------------------

# scanA: five viewpoints on a line, 2 m apart; scanB: three viewpoints 1.5 m apart.
SCANS = {
    "scanA": [("a0", 0.0), ("a1", 2.0), ("a2", 4.0), ("a3", 6.0), ("a4", 8.0)],
    "scanB": [("b0", 0.0), ("b1", 1.5), ("b2", 3.0)],
}


def _connectivity(entries):
    n = len(entries)
    out = []
    for i, (vp, x) in enumerate(entries):
        pose = [1.0, 0, 0, x, 0, 1.0, 0, 0.0, 0, 0, 1.0, 1.5, 0, 0, 0, 1.0]
        out.append(
            {
                "image_id": vp,
                "pose": pose,
                "included": True,
                "unobstructed": [abs(i - j) == 1 for j in range(n)],
                "visible": [abs(i - j) == 1 for j in range(n)],
                "height": 1.5,
            }
        )
    return out


SPLIT = [
    {
        "path_id": 1,
        "scan": "scanA",
        "path": ["a0", "a1", "a2"],
        "heading": 0.0,
        "distance": 4.0,
        "instructions": ["walk two steps", "go forward"],
    },
    {
        "path_id": 2,
        "scan": "scanB",
        "path": ["b0", "b1", "b2"],
        "heading": 0.0,
        "distance": 3.0,
        "instructions": ["go to the end"],
    },
]

PREDICTIONS = [
    {"instr_id": "1_0", "trajectory": [["a0", 0.0, 0.0], ["a1", 0.0, 0.0], ["a2", 0.0, 0.0]]},  # exact
    {"instr_id": "1_1", "trajectory": [["a0", 0, 0], ["a1", 0, 0], ["a2", 0, 0], ["a3", 0, 0], ["a4", 0, 0]]},
    {"instr_id": "2_0", "trajectory": [["b0", 0.0, 0.0], ["b0", 1.0, 0.0], ["b1", 1.0, 0.0], ["b2", 1.0, 0.0]]},
]


@pytest.fixture()
def tiny(tmp_path):
    conn = tmp_path / "connectivity"
    conn.mkdir()
    for scan, entries in SCANS.items():
        (conn / f"{scan}_connectivity.json").write_text(json.dumps(_connectivity(entries)))
    split = tmp_path / "split.json"
    split.write_text(json.dumps(SPLIT))
    preds = tmp_path / "results.json"
    preds.write_text(json.dumps(PREDICTIONS))
    return {"conn": conn, "split": split, "preds": preds, "tmp": tmp_path}


def _score_args(t, preds=None, out=None, *extra):
    return [
        "score",
        "--split",
        str(t["split"]),
        "--connectivity",
        str(t["conn"]),
        "--predictions",
        str(preds or t["preds"]),
        "--out",
        str(out or t["tmp"] / "out"),
        "--no-figures",
        *extra,
    ]


def _rows(path):
    return list(csv.DictReader(path.read_text().splitlines()))


def _one_error_line(capsys, *names):
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("navdtw: error: "), err
    assert "Traceback" not in err
    for name in names:
        assert name in lines[0], (name, lines[0])
    return lines[0]


# ------------------------------------------------------------------------------------------
# demo
# ------------------------------------------------------------------------------------------


def test_demo_writes_outputs_and_prints_table(tmp_path, capsys):
    out = tmp_path / "demo"
    assert main(["demo", "--out", str(out), "--pairs", "25"]) == 0
    text = capsys.readouterr().out
    for word in ("identical", "detour", "near_goal", "partial", "random", "all", "nDTW", "SDTW", "SR", "m", "%"):
        assert word in text
    summary = json.loads((out / "summary.json").read_text())
    assert summary["pairs"] == 25 and summary["seed"] == 0
    assert summary["by_kind"]["identical"]["means"]["ndtw"] == pytest.approx(1.0)
    assert summary["by_kind"]["identical"]["means"]["sr"] == 1.0
    assert 0.0 < summary["means"]["ndtw"] < 1.0
    rows = _rows(out / "episodes.csv")
    assert len(rows) == 25 and rows[0]["kind"] == "identical" and float(rows[0]["ndtw"]) == 1.0
    if find_spec("matplotlib") is not None:  # the figures need the plot extra (the core suite runs without)
        for name in ("alignment.png", "pairs_grid.png", "histograms.png"):
            data = (out / name).read_bytes()
            assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
    assert not list(out.glob(".*.tmp"))  # atomic writes leave no temporary files


def test_demo_histograms_count_synthetic_pairs(tmp_path, monkeypatch, capsys):
    """Issue 19: the demo's histograms counted "episodes" of what are synthetic pairs."""
    pytest.importorskip("matplotlib")
    from navdtw import plot

    drawn = []
    real = plot.plot_histograms
    monkeypatch.setattr(plot, "plot_histograms", lambda *a, **k: drawn.append(real(*a, **k)) or drawn[-1])
    assert main(["demo", "--out", str(tmp_path), "--pairs", "10"]) == 0
    capsys.readouterr()
    assert {ax.get_ylabel() for ax in drawn[0].axes if ax.get_title()} == {"synthetic pairs"}


def test_demo_is_deterministic(tmp_path, capsys):
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    assert main(["demo", "--seed", "7", "--pairs", "20", "--out", str(a), "--no-figures"]) == 0
    assert main(["demo", "--seed", "7", "--pairs", "20", "--out", str(b), "--no-figures"]) == 0
    assert main(["demo", "--seed", "8", "--pairs", "20", "--out", str(c), "--no-figures"]) == 0
    capsys.readouterr()
    for name in ("summary.json", "episodes.csv"):
        assert (a / name).read_bytes() == (b / name).read_bytes()
    assert (a / "episodes.csv").read_bytes() != (c / "episodes.csv").read_bytes()
    assert not (a / "alignment.png").exists()


def test_demo_default_out_is_in_current_folder(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["demo", "--pairs", "5", "--no-figures"]) == 0
    assert (tmp_path / "navdtw_demo" / "summary.json").is_file()


def test_python_dash_m_navdtw_demo(tmp_path):
    out = tmp_path / "demo"
    proc = subprocess.run(
        [sys.executable, "-m", "navdtw", "demo", "--pairs", "10", "--out", str(out), "--no-figures"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "identical" in proc.stdout and "nDTW" in proc.stdout
    assert json.loads((out / "summary.json").read_text())["pairs"] == 10


# ------------------------------------------------------------------------------------------
# score: R2R on the tiny world
# ------------------------------------------------------------------------------------------


def test_score_tiny_r2r(tiny, capsys):
    out = tiny["tmp"] / "out"
    assert main(_score_args(tiny, None, out, "--convention", "r2r")) == 0
    text = capsys.readouterr().out
    assert "66.67" in text and "results.json" in text
    summary = json.loads((out / "summary.json").read_text())
    assert summary["n"] == 3 and summary["convention"] == "r2r" and summary["threshold"] == 3.0
    assert summary["inputs"]["predictions"] == str(tiny["preds"].resolve())
    m = summary["means"]
    assert m["sr"] == pytest.approx(2 / 3)
    assert m["spl"] == pytest.approx(2 / 3)
    assert m["ne"] == pytest.approx(4 / 3)  # 0, 4 m, 0
    rows = _rows(out / "episodes.csv")
    assert [r["instr_id"] for r in rows] == ["1_0", "1_1", "2_0"]
    assert [r["scan"] for r in rows] == ["scanA", "scanA", "scanB"]
    assert [float(r["sr"]) for r in rows] == [1.0, 0.0, 1.0]
    assert float(rows[2]["ndtw"]) == 1.0  # the repeated viewpoint (turning in place) costs nothing
    assert float(rows[1]["pl"]) == pytest.approx(8.0)


def test_score_default_convention_is_r2r_and_figures(tiny, capsys):
    pytest.importorskip("matplotlib", reason="the figures need the plot extra")
    out = tiny["tmp"] / "figs"
    args = [a for a in _score_args(tiny, None, out) if a != "--no-figures"]
    assert main(args) == 0
    capsys.readouterr()
    assert json.loads((out / "summary.json").read_text())["convention"] == "r2r"
    assert (out / "histograms.png").read_bytes()[:4] == b"\x89PNG"


def test_score_threshold_changes_success(tiny, capsys):
    out = tiny["tmp"] / "t"
    assert main(_score_args(tiny, None, out, "--threshold", "5")) == 0
    capsys.readouterr()
    assert json.loads((out / "summary.json").read_text())["means"]["sr"] == 1.0


def test_score_strict_start(tiny, capsys):
    preds = tiny["tmp"] / "late.json"
    bad = [dict(p) for p in PREDICTIONS]
    bad[1] = {"instr_id": "1_1", "trajectory": [["a1", 0, 0], ["a2", 0, 0]]}
    preds.write_text(json.dumps(bad))
    assert main(_score_args(tiny, preds, None)) == 0  # not strict: scored as is
    capsys.readouterr()
    assert main(_score_args(tiny, preds, tiny["tmp"] / "s", "--strict")) == 2
    _one_error_line(capsys, "late.json", "entry 1", "1_1", "starts at 'a1'", "(strict)")


def test_score_subprocess(tiny):
    proc = subprocess.run(
        [sys.executable, "-m", "navdtw", *_score_args(tiny)], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert "SPL" in proc.stdout and "Rates in percent" in proc.stdout


# ------------------------------------------------------------------------------------------
# score: R2R-CE
# ------------------------------------------------------------------------------------------


@pytest.fixture()
def tiny_ce(tmp_path):
    episodes = {
        "episodes": [
            {
                "episode_id": 1,
                "scene_id": "mp3d/scanA/scanA.glb",
                "info": {"geodesic_distance": 4.0},
                "reference_path": [[0, 0, 0], [4, 0, 0]],
                "instruction": {"instruction_text": "go"},
            },
            {
                "episode_id": 2,
                "scene_id": "mp3d/scanB/scanB.glb",
                "reference_path": [[0, 0, 0], [0, 0, 2]],
                "instruction": {"instruction_text": "go"},
            },
        ]
    }
    gt = {
        "1": {
            "locations": [[0, 0, 0], [1, 0, 0], [2, 0, 0], [3, 0, 0], [4, 0, 0]],
            "actions": [1, 1, 1, 1, 0],
            "forward_steps": 4,
        },
        "2": {"locations": [[0, 0, 0], [0, 0, 1], [0, 0, 2]], "actions": [1, 1, 0], "forward_steps": 2},
    }
    ep = tmp_path / "val.json"
    ep.write_text(json.dumps(episodes))
    gtf = tmp_path / "val_gt.json"
    gtf.write_text(json.dumps(gt))
    return {"ep": ep, "gt": gtf, "tmp": tmp_path, "gt_data": gt}


def _ce_args(t, preds, out, *extra):
    return [
        "score",
        "--vlnce-episodes",
        str(t["ep"]),
        "--vlnce-gt",
        str(t["gt"]),
        "--predictions",
        str(preds),
        "--out",
        str(out),
        "--no-figures",
        *extra,
    ]


def test_score_vlnce_both_prediction_formats(tiny_ce, capsys):
    t = tiny_ce
    as_dict = t["tmp"] / "preds.json"
    as_dict.write_text(
        json.dumps({k: [{"position": p, "heading": 0.0} for p in v["locations"]] for k, v in t["gt_data"].items()})
    )
    as_lines = t["tmp"] / "preds.jsonl"
    as_lines.write_text(
        "\n".join(json.dumps({"episode_id": int(k), "path": v["locations"]}) for k, v in t["gt_data"].items()) + "\n"
    )
    results = []
    for preds in (as_dict, as_lines):
        out = t["tmp"] / ("out_" + preds.suffix[1:])
        assert main(_ce_args(t, preds, out, "--convention", "vlnce")) == 0
        summary = json.loads((out / "summary.json").read_text())
        assert summary["convention"] == "vlnce" and summary["n"] == 2
        rows = _rows(out / "episodes.csv")
        assert [r["episode_id"] for r in rows] == ["1", "2"]
        results.append(summary["means"])
    capsys.readouterr()
    assert results[0] == results[1]
    assert results[0]["sr"] == 1.0 and results[0]["ndtw"] == pytest.approx(1.0)
    assert results[0]["spl"] == pytest.approx(1.0)  # l = 4.0 (geodesic) and 2.0 (start-goal), PL equal


def test_score_vlnce_geodesic_distance_is_spl_length(tiny_ce, capsys):
    t = tiny_ce
    preds = t["tmp"] / "p.jsonl"
    # episode 1 walks 8 m (there and back and there again) to the goal: SPL = 4 / 8
    walk = [[0, 0, 0], [4, 0, 0], [2, 0, 0], [4, 0, 0]]
    preds.write_text(
        json.dumps({"episode_id": 1, "path": walk})
        + "\n"
        + json.dumps({"episode_id": 2, "path": t["gt_data"]["2"]["locations"]})
        + "\n"
    )
    out = t["tmp"] / "o"
    assert main(_ce_args(t, preds, out)) == 0
    capsys.readouterr()
    rows = _rows(out / "episodes.csv")
    assert float(rows[0]["spl"]) == pytest.approx(0.5)


def test_score_vlnce_errors(tiny_ce, capsys):
    t = tiny_ce
    missing = t["tmp"] / "one.jsonl"
    missing.write_text(json.dumps({"episode_id": 1, "path": [[0, 0, 0]]}) + "\n")
    assert main(_ce_args(t, missing, t["tmp"] / "o")) == 2
    _one_error_line(capsys, "one.jsonl", "no prediction for episode_id 2")
    broken = t["tmp"] / "broken.jsonl"
    broken.write_text(json.dumps({"episode_id": 1, "path": [[0, 0, 0]]}) + "\n" + '{"episode_id": 2, "pa\n')
    assert main(_ce_args(t, broken, t["tmp"] / "o")) == 2
    _one_error_line(capsys, "broken.jsonl", "line 2")
    badpts = t["tmp"] / "bad.json"
    badpts.write_text(json.dumps({"1": [{"position": [0, 0]}], "2": [{"position": [0, 0, 0]}]}))
    assert main(_ce_args(t, badpts, t["tmp"] / "o")) == 2
    _one_error_line(capsys, "bad.json", "episode_id 1")


# ------------------------------------------------------------------------------------------
# baseline
# ------------------------------------------------------------------------------------------


def test_baseline_tiny(tiny, capsys):
    out1, out2 = tiny["tmp"] / "b1", tiny["tmp"] / "b2"
    base = [
        "baseline",
        "--split",
        str(tiny["split"]),
        "--connectivity",
        str(tiny["conn"]),
        "-n",
        "500",
        "--seed",
        "3",
        "--no-progress",
    ]
    assert main([*base, "--out", str(out1)]) == 0
    text = capsys.readouterr().out
    assert "random (navdtw, seed 3)" in text and "nDTW" in text
    assert "(baseline.json: rates as fractions)" in text and "summary.json" not in text
    assert main([*base, "--out", str(out2), "--workers", "1"]) == 0
    capsys.readouterr()
    r1 = json.loads((out1 / "baseline.json").read_text())
    r2 = json.loads((out2 / "baseline.json").read_text())
    assert (
        r1["n"] == 500
        and r1["seed"] == 3
        and r1["convention"] == "r2r"  # the data set's own evaluator, as score and suite runs
        and r1["episodes"] == 3
        and r1["dataset"] == "r2r"
    )
    assert r1["means"] == r2["means"]
    assert 0.0 <= r1["means"]["sr"] <= 1.0 and 0.0 < r1["means"]["ndtw"] <= 1.0


@pytest.mark.parametrize(
    "bad",
    [
        ["-n", "0"],
        ["-n", "many"],
        ["--threshold", "-1"],
        ["--threshold", "nan"],
        ["--seed", "-2"],
        ["--workers", "0"],
        ["--workers", "-2"],
        ["--workers", "5000"],  # the engine's cap (engine.MAX_WORKERS)
        ["--threshold", "inf"],
        ["--convention", "nope"],
    ],
)
def test_baseline_bad_numbers(tiny, capsys, bad):
    args = [
        "baseline",
        "--split",
        str(tiny["split"]),
        "--connectivity",
        str(tiny["conn"]),
        "--out",
        str(tiny["tmp"] / "b"),
        *bad,
    ]
    assert main(args) == 2
    _one_error_line(capsys, bad[0])


# ------------------------------------------------------------------------------------------
# user mistakes: one line on stderr, exit status 2, no traceback
# ------------------------------------------------------------------------------------------


def test_malformed_predictions_json(tiny, capsys):
    bad = tiny["tmp"] / "malformed.json"
    bad.write_text('[{"instr_id": "1_0", "trajectory": [["a0", 0, 0]]},, ]')
    assert main(_score_args(tiny, bad)) == 2
    _one_error_line(capsys, "malformed.json", "line 1")


def test_truncated_predictions_json(tiny, capsys):
    bad = tiny["tmp"] / "truncated.json"
    text = json.dumps(PREDICTIONS)
    bad.write_text(text[: len(text) // 2])
    assert main(_score_args(tiny, bad)) == 2
    _one_error_line(capsys, "truncated.json")


def test_truncated_split(tiny, capsys):
    text = tiny["split"].read_text()
    tiny["split"].write_text(text[:-20])
    assert main(_score_args(tiny)) == 2
    _one_error_line(capsys, "split.json")


def test_missing_predictions_file(tiny, capsys):
    assert main(_score_args(tiny, tiny["tmp"] / "nowhere.json")) == 2
    _one_error_line(capsys, "nowhere.json", "no such file")


def test_missing_connectivity_folder(tiny, capsys):
    args = _score_args(tiny)
    args[args.index("--connectivity") + 1] = str(tiny["tmp"] / "noconn")
    assert main(args) == 2
    _one_error_line(capsys, "noconn")


def test_folder_for_a_file_and_file_for_a_folder(tiny, capsys):
    """A folder given where a file goes (and the other way round) is said so, not "not found"."""
    args = _score_args(tiny)
    split, conn = args[args.index("--split") + 1], args[args.index("--connectivity") + 1]
    args[args.index("--split") + 1] = conn
    assert main(args) == 2
    assert _one_error_line(capsys).endswith(f"--split: {conn} is a folder, not a file")
    args[args.index("--split") + 1], args[args.index("--connectivity") + 1] = split, split
    assert main(args) == 2
    assert _one_error_line(capsys).endswith(f"--connectivity: {split} is a file, not a folder")


@pytest.mark.parametrize(
    ("typo", "says"),
    [
        ("--predicitons", "unknown option --predicitons (did you mean --predictions?) (see 'navdtw score --help')"),
        ("--datset", "unknown option --datset (did you mean --dataset?) (see 'navdtw score --help')"),
        ("--resamples", "unknown option --resamples (see 'navdtw score --help')"),
    ],
)
def test_misspelt_option_is_named(tiny, capsys, typo, says):
    """A misspelt option is named with the closest real one and the subcommand's --help, not
    reported as the option it hides being missing (--predicitons), nor with the top-level --help."""
    args = _score_args(tiny)
    if typo == "--predicitons":
        args[args.index("--predictions")] = typo
    else:
        args += [typo, "10"]
    assert main(args) == 2
    assert _one_error_line(capsys).endswith(says)


def test_closed_pipe_does_not_stop_the_command(tiny, monkeypatch, capsys):
    """`navdtw score ... | head`: standard output closed under the table (BrokenPipeError on write)
    is not an error; the command still writes its files and exits 0 (it said "Broken pipe" with
    status 2 before)."""

    class ClosedPipe:
        def write(self, text):
            raise BrokenPipeError(32, "Broken pipe")

        def flush(self):
            raise BrokenPipeError(32, "Broken pipe")

        def fileno(self):
            raise ValueError("no descriptor")

    monkeypatch.setattr(sys, "stdout", ClosedPipe())
    assert main(_score_args(tiny)) == 0
    assert (tiny["tmp"] / "out" / "summary.json").is_file()
    assert capsys.readouterr().err == ""
    assert isinstance(sys.stdout, ClosedPipe)  # main puts standard output back


def test_metrics_any_case_and_a_typo_named(tiny, capsys):
    """--metrics takes the registry's names in any case (SR, nDTW: as papers write them), and a
    typo gets the closest name."""
    base = ["compare", str(tiny["preds"]), "--dataset", "r2r", "--split", str(tiny["split"])]
    base += ["--connectivity", str(tiny["conn"]), "--no-progress", "--resamples", "50", "--baseline-walks", "0"]
    assert main([*base, "--metrics", "SR,nDTW"]) == 0
    header = capsys.readouterr().out.splitlines()[1].split()
    assert header[1:] == ["SR\u2191", "(%)", "nDTW\u2191", "(%)"]
    assert main([*base, "--metrics", "sr,ndwt"]) == 2
    assert "--metrics: unknown metric 'ndwt' (did you mean ndtw?); known: pl, ne," in _one_error_line(capsys)


def test_interrupt_while_parsing_is_one_line(monkeypatch, capsys):
    """Ctrl-C while the command line is parsed (a subcommand's options import what they need)
    exits with status 130 and one line, no traceback."""
    import argparse

    def interrupted(self, args=None, namespace=None):
        raise KeyboardInterrupt

    monkeypatch.setattr(argparse.ArgumentParser, "parse_known_args", interrupted)
    assert main(["info"]) == 130
    assert capsys.readouterr().err == "navdtw: interrupted\n"


def test_unknown_viewpoint(tiny, capsys):
    bad = tiny["tmp"] / "results_badvp.json"
    preds = [dict(p) for p in PREDICTIONS]
    preds[2] = {"instr_id": "2_0", "trajectory": [["b0", 0, 0], ["abc", 0, 0]]}
    bad.write_text(json.dumps(preds))
    assert main(_score_args(tiny, bad)) == 2
    line = _one_error_line(capsys, "results_badvp.json", "entry 2", "instr_id 2_0", "'abc'")
    assert "unknown viewpoint" in line


def test_unknown_viewpoint_in_split(tiny, capsys):
    split = json.loads(tiny["split"].read_text())
    split[1]["path"][1] = "zzz"
    tiny["split"].write_text(json.dumps(split))
    assert main(_score_args(tiny)) == 2
    _one_error_line(capsys, "split.json", "entry 1", "'zzz'")


def test_unknown_scan_in_split(tiny, capsys):
    split = json.loads(tiny["split"].read_text())
    split[1]["scan"] = "scanZ"
    tiny["split"].write_text(json.dumps(split))
    assert main(_score_args(tiny)) == 2
    _one_error_line(capsys, "split.json", "entry 1", "scanZ")


def test_missing_predictions(tiny, capsys):
    bad = tiny["tmp"] / "partial.json"
    bad.write_text(json.dumps(PREDICTIONS[:2]))
    assert main(_score_args(tiny, bad)) == 2
    _one_error_line(capsys, "partial.json", "2_0")


def test_extra_prediction(tiny, capsys):
    bad = tiny["tmp"] / "extra.json"
    bad.write_text(json.dumps([*PREDICTIONS, {"instr_id": "9_0", "trajectory": [["a0", 0, 0]]}]))
    assert main([*_score_args(tiny, bad), "--convention", "paper"]) == 2
    _one_error_line(capsys, "extra.json", "entry 3", "9_0")
    # the R2R evaluator ignores ids it does not score; its convention does too, and says so
    assert main([*_score_args(tiny, bad), "--convention", "r2r", "--out", str(tiny["tmp"] / "o")]) == 0
    out = capsys.readouterr().out
    assert "note:" in out and "9_0" in out
    summary = json.loads((tiny["tmp"] / "o" / "summary.json").read_text())
    assert any("9_0" in n for n in summary["notes"])


def test_empty_trajectory(tiny, capsys):
    bad = tiny["tmp"] / "empty.json"
    preds = [dict(p) for p in PREDICTIONS]
    preds[0] = {"instr_id": "1_0", "trajectory": []}
    bad.write_text(json.dumps(preds))
    assert main(_score_args(tiny, bad)) == 2
    _one_error_line(capsys, "empty.json", "entry 0", "1_0")


def test_out_equal_to_an_input(tiny, capsys):
    assert main(_score_args(tiny, None, tiny["preds"])) == 2
    _one_error_line(capsys, "--out", "results.json")
    assert json.loads(tiny["preds"].read_text()) == PREDICTIONS  # untouched


def test_out_would_overwrite_an_input(tiny, capsys):
    # predictions named summary.json inside the output folder
    folder = tiny["tmp"] / "runs"
    folder.mkdir()
    preds = folder / "summary.json"
    preds.write_text(json.dumps(PREDICTIONS))
    assert main(_score_args(tiny, preds, folder)) == 2
    _one_error_line(capsys, "summary.json", "overwrite")
    assert json.loads(preds.read_text()) == PREDICTIONS
    args = [
        "baseline",
        "--split",
        str(tiny["split"]),
        "--connectivity",
        str(tiny["conn"]),
        "-n",
        "10",
        "--out",
        str(tiny["split"]),
    ]
    assert main(args) == 2
    _one_error_line(capsys, "split.json")


def test_mixing_r2r_and_vlnce_inputs(tiny, capsys):
    assert main([*_score_args(tiny), "--vlnce-gt", str(tiny["preds"])]) == 2
    _one_error_line(capsys, "--vlnce")
    assert main([*_score_args(tiny), "--convention", "vlnce"]) == 2
    _one_error_line(capsys, "vlnce")


def test_errors_in_a_subprocess_have_no_traceback(tiny):
    bad = tiny["tmp"] / "results.json"
    bad.write_text('[{"instr_id": "1_0", "traj')
    proc = subprocess.run(
        [sys.executable, "-m", "navdtw", *_score_args(tiny, bad)], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert proc.stderr.startswith("navdtw: error: results.json")


def test_no_command_and_unknown_option(capsys):
    assert main([]) == 2
    _one_error_line(capsys)
    assert main(["demo", "--bogus"]) == 2
    _one_error_line(capsys, "--bogus")


# ------------------------------------------------------------------------------------------
# help and version
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("command", [[], ["demo"], ["score"], ["baseline"]])
def test_help_shows_an_example(command, capsys):
    assert main([*command, "--help"]) == 0
    out = capsys.readouterr().out
    assert "Example" in out
    assert "navdtw" in out


@pytest.mark.parametrize("command", ["info", "demo", "score", "baseline", "suite", "compare", "order", "watch"])
def test_each_command_help_lists_its_own_exit_statuses(command, capsys):
    # the epilog of every command listed every status, watch's decisions under score (issue 36 item 13)
    from navdtw.cli._status import COMMAND_STATUS, EXIT_STATUS

    assert main([*(["suite", "run"] if command == "suite" else [command]), "--help"]) == 0
    tail = capsys.readouterr().out.split("\nExit status:\n", 1)[1]
    listed = [int(code) for code in re.findall(r"^  (\d+) +\S", tail, re.M)]
    assert listed == list(COMMAND_STATUS[command])
    assert EXIT_STATUS[listed[-1]].split()[0] in tail.splitlines()[-1]
    # status 2 in the command's own words: a suite file only where one is read (new-user F8)
    assert ("a bad suite file" in " ".join(tail.split())) == (command == "suite")


@pytest.mark.parametrize(("command", "name"), [(["compare"], "compare"), (["suite", "run"], "suite run")])
def test_the_exit_statuses_of_several_commands_are_worded_for_the_one_asked(command, name, capsys):
    assert main([*command, "--help"]) == 0
    tail = " ".join(capsys.readouterr().out.split("\nExit status:\n", 1)[1].split())
    assert "suite run or compare" not in tail
    assert f"1 {name}: " in tail and f"5 {name}: every agent failed" in tail


def test_the_docs_table_of_exit_statuses_by_command_is_the_commands():
    from navdtw.cli._status import COMMAND_STATUS

    def codes(text: str) -> list[int]:
        out = []
        for part in text.split(","):
            low, _, high = part.strip().partition("-")
            out += range(int(low), int(high or low) + 1)
        return out

    page = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    table = page.split("| command | exit statuses |", 1)[1].split("\n\n", 1)[0]
    rows = re.findall(r"^\| (.+?) \| ([\d, -]+) \|$", table, re.M)
    documented = {name.strip("` ").split()[0]: codes(statuses) for names, statuses in rows for name in names.split(",")}
    assert documented == {name: list(codes_) for name, codes_ in COMMAND_STATUS.items()}


def test_version(capsys):
    import navdtw

    assert main(["--version"]) == 0
    assert navdtw.__version__ in capsys.readouterr().out


# ------------------------------------------------------------------------------------------
# real data
# ------------------------------------------------------------------------------------------


@pytest.mark.data
def test_score_real_shortest_agent(data_dir, connectivity_dir, tmp_path, capsys):
    preds = data_dir / "matterport3dsimulator" / "web" / "app" / "val_unseen_shortest_agent.json"
    split = data_dir / "r2r" / "R2R_val_unseen.json"
    out = tmp_path / "out"
    assert (
        main(
            [
                "score",
                "--split",
                str(split),
                "--connectivity",
                str(connectivity_dir),
                "--predictions",
                str(preds),
                "--convention",
                "r2r",
                "--out",
                str(out),
                "--no-figures",
            ]
        )
        == 0
    )
    text = capsys.readouterr().out
    row = next(line for line in text.splitlines() if line.startswith("val_unseen_shortest_agent.json")).split()
    header = next(line for line in text.splitlines() if line.startswith("predictions")).split()
    values = dict(zip(header, row))
    assert values["SR"] == "100.00" and values["SPL"] == "100.00"
    assert values["n"] == "2349"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["n"] == 2349
    assert summary["means"]["sr"] == 1.0
    assert summary["means"]["spl"] == pytest.approx(1.0, abs=1e-6)
    assert summary["means"]["ne"] == 0.0
    assert summary["means"]["pl"] == pytest.approx(9.4797, abs=1e-3)  # the R2R evaluator's length


@pytest.mark.data
def test_score_real_vlnce_gt_as_predictions(data_dir, tmp_path, capsys):
    import gzip

    folder = data_dir / "r2r_vlnce" / "R2R_VLNCE_v1-3_preprocessed" / "val_unseen"
    gt = json.loads(gzip.decompress((folder / "val_unseen_gt.json.gz").read_bytes()))
    preds = tmp_path / "preds.json"
    preds.write_text(json.dumps({k: [{"position": p} for p in v["locations"]] for k, v in gt.items()}))
    out = tmp_path / "out"
    assert (
        main(
            [
                "score",
                "--vlnce-episodes",
                str(folder / "val_unseen.json.gz"),
                "--vlnce-gt",
                str(folder / "val_unseen_gt.json.gz"),
                "--predictions",
                str(preds),
                "--convention",
                "vlnce",
                "--out",
                str(out),
                "--no-figures",
            ]
        )
        == 0
    )
    capsys.readouterr()
    summary = json.loads((out / "summary.json").read_text())
    assert summary["n"] == 1839
    assert summary["means"]["sr"] == 1.0 and summary["means"]["ndtw"] == pytest.approx(1.0)


def test_info_and_show_config(capsys):
    import navdtw

    assert main(["info"]) == 0
    out = capsys.readouterr().out
    assert "SIMD kernel in use" in out and navdtw.__version__ in out
    c = navdtw.show_config()
    kernels = c["engine"]["simd_kernels"]
    assert f"SIMD kernels this CPU runs: {', '.join(kernels)}" in capsys.readouterr().out
    assert c["engine"]["simd_kernel"] in kernels and kernels[-1] == "portable"
    before = c["engine"]["simd_choice"]
    try:
        navdtw._core.set_simd(False)
        assert navdtw.show_config()["engine"]["simd_kernel"] == "portable"
        assert "SIMD kernel in use: portable (forced by set_simd or NAVDTW_SIMD)" in capsys.readouterr().out
        navdtw._core.set_simd(kernels[0])
        assert navdtw.show_config()["engine"]["simd_kernel"] == kernels[0]
        assert f"SIMD kernel in use: {kernels[0]} (forced by" in capsys.readouterr().out
    finally:
        navdtw._core.set_simd(before)


# ---- the benchmark suite's data sets through the command line (real data; skipped without it) ----


def test_score_reverie_and_ndh_real(data_dir, connectivity_dir, tmp_path, capsys):
    split = json.loads((data_dir / "reverie" / "REVERIE_val_seen.json").read_text())
    gt = [
        {"instr_id": f"{e['id']}_{k}", "trajectory": [[v, 0, 0] for v in e["path"]], "predObjId": e["objId"]}
        for e in split
        for k in range(len(e["instructions"]))
    ]
    preds = tmp_path / "gt.json"
    preds.write_text(json.dumps(gt))
    reverie = ["--dataset", "reverie", "--split", str(data_dir / "reverie" / "REVERIE_val_seen.json")]
    reverie += [
        "--connectivity",
        str(connectivity_dir),
        "--objects",
        str(data_dir / "reverie" / "BBox_val_scans.json.gz"),
    ]
    out = tmp_path / "rv"
    assert main(["score", *reverie, "--predictions", str(preds), "--out", str(out), "--no-figures"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["dataset"] == "reverie" and summary["convention"] == "reverie"
    assert summary["means"]["sr"] == summary["means"]["rgs"] == 1.0
    assert summary["means"]["spl"] == pytest.approx(1.0, abs=1e-6)  # float32 graph distances
    with open(out / "episodes.csv") as f:
        header = next(csv.reader(f))
    assert header[0] == "instr_id" and {"rgs", "rgspl"} <= set(header)

    # a missing predObjId is the official evaluator's error: one line naming the file and entry, exit 2
    del gt[3]["predObjId"]
    preds.write_text(json.dumps(gt))
    capsys.readouterr()
    assert main(["score", *reverie, "--predictions", str(preds), "--out", str(tmp_path / "rv2")]) == 2
    _one_error_line(capsys, "gt.json", gt[3]["instr_id"])

    ndh = ["--dataset", "ndh", "--split", str(data_dir / "cvdn" / "NDH_val_unseen.json")]
    ndh += ["--connectivity", str(connectivity_dir), "--goal", "trusted"]
    results = sorted((data_dir / "cvdn" / "results").glob("*iter_19900.json"))[0]
    out = tmp_path / "ndh"
    assert main(["score", *ndh, "--predictions", str(results), "--out", str(out), "--no-figures"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["means"]["gp"] == pytest.approx(1.878040, abs=1e-6)
    assert summary["means"]["sr"] == pytest.approx(0.230430, abs=1e-6)
    with open(out / "episodes.csv") as f:
        assert next(csv.reader(f))[:2] == ["inst_idx", "scan"]

    # a step that is not a graph edge: the ndh convention refuses it as cvdn's eval.py does
    entries = json.loads(results.read_text())
    entries[0]["trajectory"].append(list(entries[-1]["trajectory"][-1]))
    bad = tmp_path / "jump.json"
    bad.write_text(json.dumps(entries))
    capsys.readouterr()
    assert main(["score", *ndh, "--predictions", str(bad), "--out", str(tmp_path / "ndh2")]) == 2
    _one_error_line(capsys, "jump.json", str(entries[0]["inst_idx"]))


def test_dataset_options_are_checked(tiny, capsys):
    args = _score_args(tiny)
    assert main([*args, "--objects", str(tiny["split"])]) == 2
    _one_error_line(capsys, "--objects does not apply to --dataset r2r")
    assert main(["score", "--dataset", "ndh", "--split", str(tiny["split"]), "--predictions", str(tiny["preds"])]) == 2
    _one_error_line(capsys, "--connectivity is required for --dataset ndh")
    assert main([*args, "--convention", "reverie"]) == 2
    _one_error_line(capsys, "convention 'reverie' does not apply to r2r")


# ---- the README's commands for the continuous kinds, run as written ----


def _readme_command(flag: str) -> list[str]:
    import re
    import shlex

    from conftest import REPO

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    (command,) = [c for c in re.findall(r"```bash\n(.*?)```", readme, re.S) if flag in c]
    words = shlex.split(command.strip())
    assert words[0] == "navdtw"
    return words[1:]


def test_readme_rxrce_command_runs(tmp_path, monkeypatch, capsys):
    import gzip

    from vlnce_layouts import predictions, rxrce_layout

    monkeypatch.chdir(tmp_path)
    episodes = [
        {"episode_id": k, "reference_path": [[0, 0, 0], [k + 1.0, 0, 0]], "info": {"geodesic_distance": k + 1.0}}
        for k in range(8)
    ]
    gt = {str(k): {"locations": [[x * 0.25, 0.0, 0.0] for x in range(4 * k + 5)]} for k in range(8)}
    ep, _ = rxrce_layout(episodes, gt, tmp_path)
    written = json.loads(gzip.decompress(ep.read_bytes()))["episodes"]
    predictions(written, {k: v["locations"][::2] for k, v in gt.items()}, tmp_path)
    (tmp_path / "preds_rxr.jsonl").rename(tmp_path / "predictions.jsonl")
    assert main(_readme_command("--dataset rxr-ce")) == 0
    out = capsys.readouterr().out
    assert "RxR-CE, 4 episodes, convention 'vlnce'" in out and "language en-US" in out
    summary = json.loads((tmp_path / "navdtw_scores" / "summary.json").read_text())
    assert summary["means"]["sr"] == 1.0 and set(summary["means_by_language"]) == {"en-US", "en-IN"}


def test_readme_positions_command_runs(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    refs = [{"episode_id": k, "path": [[0, 0, 50], [100.0 * (k + 1), 0, 50]]} for k in range(3)]
    preds = [{"episode_id": k, "path": [[0, 0, 50], [100.0 * (k + 1) - 15, 5, 50]]} for k in range(3)]
    (tmp_path / "refs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in refs))
    (tmp_path / "preds.jsonl").write_text("".join(json.dumps(p) + "\n" for p in preds))
    assert main(_readme_command("--dataset positions")) == 0
    assert "positions, 3 episodes" in capsys.readouterr().out
    summary = json.loads((tmp_path / "navdtw_scores" / "summary.json").read_text())
    assert summary["threshold"] == 20.0 and summary["means"]["sr"] == 1.0


def test_percent_flags_each_say_what_they_do(capsys):
    # --percent had the help of --percent-columns ("... all of them; or the named ones")
    assert main(["compare", "--help"]) == 0
    lines = " ".join(capsys.readouterr().out.split())
    assert "--percent every rate column is in percent" in lines
    assert "--percent-columns NAME,... these rate columns are in percent (spl,ndtw)" in lines


def test_help_names_every_kind_score_reads(capsys):
    # the line lacked RxR-CE and positions; it is read from the registry now (navdtw score --help: the
    # summary of navdtw --help names no kind, which would import numpy)
    from navdtw.datasets import DATASETS

    assert main(["score", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())  # argparse wraps the line
    line = text.split("every navigation metric on ", 1)[1].split(" (--dataset)", 1)[0]
    listed = line.replace(" or ", ", ").split(", ")
    assert listed == [k.title for k in DATASETS.values() if not k.reads_scores]


# ------------------------------------------------------------------------------------------
# output folders: a user's files are never replaced (issue 28 item 1, every command with --out)
# ------------------------------------------------------------------------------------------


def _command(kind, t, out):
    if kind == "demo":
        return ["demo", "--pairs", "20", "--out", str(out), "--no-figures"], "summary.json"
    if kind == "score":
        return _score_args(t, None, out), "episodes.csv"
    base = ["baseline", "--split", str(t["split"]), "--connectivity", str(t["conn"]), "-n", "200", "--no-progress"]
    return [*base, "--out", str(out)], "baseline.json"


@pytest.mark.parametrize("kind", ["demo", "score", "baseline"])
def test_an_output_folder_never_replaces_a_users_file(tiny, capsys, kind):
    out = tiny["tmp"] / kind
    out.mkdir()
    args, name = _command(kind, tiny, out)
    (out / name).write_text("mine\n")
    assert main(args) == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{out / name}: not written by navdtw" in err[0] and "--force" in err[0], err
    assert (out / name).read_text() == "mine\n" and sorted(p.name for p in out.iterdir()) == [name]
    # a rerun over navdtw's own outputs needs no --force; an edited output is the user's again
    assert main([*args, "--force"]) == 0
    first = (out / name).read_bytes()
    assert main(args) == 0 and (out / name).read_bytes() == first
    manifest = json.loads((out / ".navdtw-outputs.json").read_text())["files"]
    assert name in manifest and not [p for p in out.iterdir() if p.name.startswith(".navdtw-stage")]
    (out / name).write_bytes(first + b"\n")
    capsys.readouterr()
    assert main(args) == 3
    assert f"{out / name}: changed since navdtw wrote it" in capsys.readouterr().err


@pytest.mark.parametrize("kind", ["demo", "score", "baseline"])
def test_an_output_folder_never_replaces_a_read_only_file(tiny, capsys, kind):
    out = tiny["tmp"] / kind
    args, name = _command(kind, tiny, out)
    assert main(args) == 0
    (out / name).chmod(0o444)
    before = (out / name).read_bytes()
    capsys.readouterr()
    for extra in ([], ["--force"]):
        assert main([*args, *extra]) == 3
        err = capsys.readouterr().err
        assert f"{out / name}: cannot replace: it is read-only (mode 0444)" in err, err
        assert (out / name).read_bytes() == before and (out / name).stat().st_mode & 0o777 == 0o444


def test_an_output_folder_switches_in_one_step(tiny, capsys, monkeypatch):
    """A rename failing half-way through a demo's switch leaves the earlier run's files whole."""
    import os

    out = tiny["tmp"] / "demo"
    args, _ = _command("demo", tiny, out)
    assert main([*args[:-1], "--seed", "1"]) == 0  # with figures when matplotlib is there
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    real = os.replace

    def replace(src, dst):
        if str(dst).endswith("episodes.csv"):
            raise OSError(28, "No space left on device")
        return real(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    assert main([*args, "--seed", "2"]) == 3
    assert "episodes.csv: cannot write: No space left on device" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_a_file_given_to_the_wrong_option_is_named(tiny, capsys):
    """A data set file that fails to read and has the shape of another option's file (an agent's
    trajectories or results as the split, VLN-CE's ground truth as its episodes, a split as
    positions references) is named for what it is and where it goes, in one line."""
    args = _score_args(tiny)
    args[args.index("--split") + 1] = str(tiny["preds"])
    assert main(args) == 2
    line = _one_error_line(capsys)
    assert line.startswith("navdtw: error: --split results.json holds R2R trajectories ([{instr_id, trajectory")
    assert line.endswith(
        "a JSON list of {path_id, scan, path, instructions, ...}; an agent's output: give it as --predictions"
    )
    tmp = tiny["tmp"]
    (tmp / "gt.json").write_text(json.dumps({"1": {"locations": [[0, 0, 0]], "actions": [0], "forward_steps": 1}}))
    (tmp / "episodes.json").write_text(json.dumps({"episodes": [{"episode_id": 1}]}))
    ce = [
        "score",
        "--dataset",
        "r2r-ce",
        "--vlnce-episodes",
        str(tmp / "gt.json"),
        "--vlnce-gt",
        str(tmp / "episodes.json"),
    ]
    assert main([*ce, "--predictions", str(tiny["preds"]), "--out", str(tmp / "o")]) == 2
    assert _one_error_line(capsys).endswith(
        "--vlnce-episodes gt.json holds VLN-CE ground truth ({episode_id: {locations, actions, forward_steps}}), not "
        "R2R-CE episodes ({split}.json.gz); give it as --vlnce-gt (--rxrce-gt for RxR-CE)"
    )
    pos = ["score", "--dataset", "positions", "--references", str(tiny["split"]), "--predictions", str(tiny["preds"])]
    assert main([*pos, "--out", str(tmp / "o")]) == 2
    line = _one_error_line(capsys)
    assert "--references split.json holds an R2R-format split" in line and line.endswith("give it as --split")


def _tables(tmp: Path) -> list[str]:
    """Two agents' results tables (sr, ndtw and a column of their own, tcr) on 12 episodes."""
    files = []
    for name, shift in (("mine", 0), ("base", 1)):
        rows = [{"episode_id": i, "sr": (i + shift) % 2, "ndtw": 0.5, "tcr": 0.25} for i in range(12)]
        path = tmp / f"{name}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        files.append(str(path))
    return files


def test_metrics_of_results_tables_unknown_is_named(tmp_path, capsys):
    """issue 36 item 8: on results tables a chosen metric must be the registry's or a column of the
    tables read: a typo is an error naming it and the closest name (it was dropped silently, or
    failed with "need at least one array to concatenate"); a column of the tables is chosen."""
    base = ["compare", *_tables(tmp_path), "--dataset", "results", "--no-progress", "--resamples", "50"]
    for chosen in ("sr,ndwt", "ndwt"):
        assert main([*base, "--metrics", chosen]) == 2
        line = _one_error_line(capsys, "unknown metric 'ndwt' (did you mean ndtw?)", "known: pl, ne,", "tcr")
        assert "concatenate" not in line
    assert main([*base, "--metrics", "sr,tcrr"]) == 2
    _one_error_line(capsys, "unknown metric 'tcrr' (did you mean tcr?)")
    assert main([*base, "--metrics", "sr,tcr"]) == 0
    out = capsys.readouterr().out
    assert "tcr" in out.lower() and "nDTW" not in out


@pytest.mark.parametrize("kind", ["demo", "score", "baseline"])
def test_an_unwritable_output_folder_fails_before_the_work(tiny, capsys, monkeypatch, kind):
    """issue 36 item 10: an output folder that cannot be written fails with one line before any
    work (nothing scored, no table printed), as a suite run does; root ignores permissions, so a
    read-only folder is simulated."""
    import errno
    import os
    import tempfile

    out = tiny["tmp"] / "ro"
    out.mkdir()
    real = tempfile.mkstemp

    def mkstemp(*args, **kw):
        if Path(kw.get("dir", "")) == out:
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(out / "x.tmp"))
        return real(*args, **kw)

    monkeypatch.setattr(tempfile, "mkstemp", mkstemp)
    args, _ = _command(kind, tiny, out)
    assert main(args) == 3
    captured = capsys.readouterr()
    assert captured.out == ""  # no work done, no table printed
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and f"{out}: cannot write into the output folder: Read-only file system" in err[0], err
    assert list(out.iterdir()) == []
