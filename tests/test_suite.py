"""Suite runs (navdtw.suite, ``navdtw suite run``, ``navdtw compare``): a synthetic suite written by
the test (grid scans, a split, agents of known quality), plus the real R2R files when present."""

from __future__ import annotations

import itertools
import json
import math
import re
import sys

import numpy as np
import pytest
from synthetic_suite import (
    AGENTS,
    assert_episodes_read_back,
    continuous_files,
    csv_rows,
    make_world,
    suite_text,
    write_suite,
)

from navdtw import suite as S
from navdtw.cli import main
from navdtw.datasets import r2r

# ------------------------------------------------------------------------------------------
# a synthetic world: two 5 x 5 grid scans (2 m spacing), 40 paths x 3 instructions
# ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """Files of a suite: connectivity, a split, and predictions of agents of known quality
    (:func:`synthetic_suite.make_world`)."""
    return make_world(tmp_path_factory.mktemp("suite"))


@pytest.fixture(scope="module")
def done(world, tmp_path_factory):
    out = tmp_path_factory.mktemp("out")
    results = S.run(write_suite(world, AGENTS), out, progress=False)
    return out, results


# ------------------------------------------------------------------------------------------
# results.json
# ------------------------------------------------------------------------------------------


def test_results_json_shape(done):
    out, results = done
    on_disk = json.loads((out / "results.json").read_text())
    assert on_disk == json.loads(json.dumps(results))
    assert set(on_disk) == {
        "navdtw_version",
        "settings",
        "metrics",
        "datasets",
        "failures",
        "warnings",
        "provenance",
        "outputs",
    }
    assert on_disk["failures"] == [] and on_disk["warnings"] == [] and on_disk["metrics"] is None
    s = on_disk["settings"]
    assert (s["resamples"], s["seed"], s["confidence"]) == (2000, 0, 0.95)
    assert set(on_disk["datasets"]) == {"grid_val", "grid_paper"}
    for name, ds in on_disk["datasets"].items():
        assert set(ds) == {
            "dataset",
            "convention",
            "n",
            "units",
            "threshold",
            "resampling",
            "metrics",
            "agents",
            "baseline",
            "comparisons",
            "reported",
            "evaluator_summaries",
        }
        assert ds["reported"] == {} and ds["metrics"]["sr"]["higher_is_better"] is True
        assert ds["dataset"] == "r2r" and ds["n"] == 120
        assert ds["convention"] == {"grid_val": "r2r", "grid_paper": "paper"}[name]
        assert ds["resampling"] == "path"
        assert list(ds["agents"]) == list(AGENTS)
        metrics = list(ds["agents"]["oracle"])
        assert metrics[:4] == ["pl", "ne", "one", "sr"] and "ndtw" in metrics
        for values in ds["agents"].values():
            assert list(values) == metrics
            for m, v in values.items():
                marked = S.marks.unmarked_reason(S.metric_info(m)) is None  # the metrics that get marks
                keys = {"mean", "ci", "ci_episodes", "left_out", "runs", "runs_sd", "runs_se", "runs_df"}
                assert set(v) == keys | ({"vs_best"} if marked else set())
                if marked:  # the comparisons with the best: p, where the Monte-Carlo error places it, resamples drawn
                    vs = v["vs_best"]
                    assert vs["p_bounds"][0] <= vs["p"] <= vs["p_bounds"][1] <= 1 and vs["resamples"] >= 2000
                assert len(v["ci"]) == 2 and v["left_out"] == 0 and v["ci_episodes"] == v["ci"]
                assert v["runs"] is None and v["runs_sd"] is None and v["runs_se"] is None  # one run per agent
                assert v["ci"][0] <= v["mean"] + 1e-12 and v["mean"] <= v["ci"][1] + 1e-12
        assert set(ds["baseline"]) == set(metrics)
        assert all(set(v) == {"mean"} for v in ds["baseline"].values())
        assert 0.0 <= ds["baseline"]["sr"]["mean"] < 0.5  # random walks rarely succeed
        assert len(ds["comparisons"]) == len(metrics) * 3  # 3 pairs of 3 agents per metric
        for c in ds["comparisons"]:
            assert set(c) == {
                "a",
                "b",
                "metric",
                "diff",
                "ci",
                "dropped",
                "p",
                "p_holm",
                "test",
                "p_method",
                "p_bounds",
                "p_sign",
                "p_improvement",
                "over",
                "df",
            }
            assert c["over"] == "episodes (one run: seed spread not estimated)" and c["df"] is None
            assert set(c["p_improvement"]) == {"value", "ci"} and 0 <= c["p_improvement"]["value"] <= 1
            assert c["test"] == "permutation" and c["dropped"] == 0
            assert c["p_method"] in ("monte carlo", "tail bound") and ds["units"] == 40
            a, b, m = c["a"], c["b"], c["metric"]
            assert c["diff"] == pytest.approx(ds["agents"][a][m]["mean"] - ds["agents"][b][m]["mean"], abs=1e-12)
            if c["p"] is not None:
                assert 0 < c["p"] <= c["p_holm"] <= 1
    # rates are fractions; the oracle follows every reference
    val = on_disk["datasets"]["grid_val"]["agents"]
    assert val["oracle"]["sr"]["mean"] == 1.0 and val["oracle"]["ndtw"]["mean"] == 1.0
    assert val["near_miss"]["sr"]["mean"] == pytest.approx(1.0)  # one 2 m step short: still < 3 m
    assert on_disk["datasets"]["grid_paper"]["agents"]["near_miss"]["sr"]["mean"] == pytest.approx(1 - 15 / 120)


def test_results_show_as_leaderboards_in_notebooks(done):
    # a dict (results.json's content) that Jupyter shows as one HTML table per data set
    _, results = done
    assert isinstance(results, S.SuiteResults) and isinstance(results, dict)
    text = results._repr_html_()
    assert text.count("<table>") == len(results["datasets"]) == 2
    assert all(text.count(f">{agent}</th>") == 2 for agent in AGENTS)


def test_holm_is_applied_per_dataset_and_metric(done):
    from navdtw.stats import holm

    _, results = done
    for ds in results["datasets"].values():
        by_metric: dict[str, list] = {}
        for c in ds["comparisons"]:
            by_metric.setdefault(c["metric"], []).append(c)
        for cs in by_metric.values():
            p = np.array([np.nan if c["p"] is None else c["p"] for c in cs])
            want = holm(p)
            got = np.array([np.nan if c["p_holm"] is None else c["p_holm"] for c in cs])
            np.testing.assert_allclose(got, want, equal_nan=True)


def _expected_marks(ds: dict, alpha: float = 0.05) -> dict[str, tuple[set, set]]:
    out = {}
    for m in ds["agents"]["oracle"]:
        better = S.metric_info(m)["higher_is_better"]
        if better is None or m in ("ad", "md"):  # no direction; an agent that never moves wins AD, MD
            continue
        means = {a: v[m]["mean"] for a, v in ds["agents"].items()}
        top = (max if better else min)(means.values())
        best = {a for a, x in means.items() if x == top}
        # the dagger: the comparisons with the best cannot reject "this agent is the best"
        tied = {a for a, v in ds["agents"].items() if a not in best and v[m]["vs_best"]["p_bounds"][0] >= alpha}
        out[m] = (best, tied)
    return out


def test_leaderboard_marks_follow_the_p_values(done):
    out, results = done
    rows = csv_rows(out / "leaderboard.csv")
    for name, ds in results["datasets"].items():
        expected = _expected_marks(ds)
        for m, (best, tied) in expected.items():
            got_best = {r["agent"] for r in rows if r["dataset"] == name and r["metric"] == m and r["best"] == "1"}
            got_ok = {
                r["agent"]
                for r in rows
                if r["dataset"] == name and r["metric"] == m and r["not_significantly_worse"] == "1"
            }
            assert got_best == best, (name, m)
            assert got_ok == best | tied, (name, m)
        assert "pl" not in expected  # path length has no direction: no marks
        assert not any(r["best"] == "1" for r in rows if r["metric"] in ("pl", "ad", "md"))
    # the known facts: the oracle is best on nDTW; the random walker is significantly worse
    val = results["datasets"]["grid_val"]
    marks = S.leaderboard_marks(val)
    assert marks["ndtw"]["best"] == ["oracle"] and "lost" not in marks["ndtw"]["tied"]
    assert marks["ne"]["best"] == ["oracle"]
    # the near miss differs from the oracle on 15 of 120 episodes (5 of 40 paths): nDTW separates
    # them (every one of those episodes is worse), and SR on grid_val is tied (identical values)
    assert marks["sr"]["best"] == ["oracle", "near_miss"]


def test_leaderboard_files(done):
    out, _ = done
    md = (out / "leaderboard.md").read_text()
    assert "## grid\\_val" in md and "## grid\\_paper" in md and "random walk" in md
    assert "**100.0** [100.0, 100.0]" in md  # the oracle's nDTW: bold, with its interval
    assert S.marks.mark_notes(0.05)["tied"] in md
    rows = csv_rows(out / "leaderboard.csv")
    assert {r["agent"] for r in rows} == {*AGENTS, "random walk"}
    oracle_sr = next(r for r in rows if (r["dataset"], r["agent"], r["metric"]) == ("grid_val", "oracle", "sr"))
    assert float(oracle_sr["mean"]) == 1.0  # fractions in the CSV
    tex = (out / "leaderboard.tex").read_text()
    for needle in (r"\toprule", r"\midrule", r"\bottomrule", r"near\_miss", r"grid\_val", r"\textbf{100.0}", "dagger"):
        assert needle in tex, needle
    assert "near_miss" not in tex.replace(r"near\_miss", "")  # every underscore escaped
    assert tex.count(r"\begin{table*}") == 2


def test_episodes_file(done):
    pa = pytest.importorskip("pyarrow.parquet")
    out, results = done
    table = pa.read_table(out / "episodes.parquet").to_pydict()
    assert len(table["id"]) == 2 * 3 * 120
    assert set(table["dataset"]) == {"grid_val", "grid_paper"} and set(table["agent"]) == set(AGENTS)
    assert {"id", "scan", "sr", "ndtw", "spl"} <= set(table)
    sel = [k for k, (d, a) in enumerate(zip(table["dataset"], table["agent"])) if (d, a) == ("grid_val", "lost")]
    assert np.mean([table["ndtw"][k] for k in sel]) == pytest.approx(
        results["datasets"]["grid_val"]["agents"]["lost"]["ndtw"]["mean"]
    )


def test_episodes_csv_without_pyarrow(world, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow -> ImportError
    S.run(
        write_suite(world, {"oracle": "oracle.json"}, settings="resamples = 200\nbaseline_walks = 0\n"),
        tmp_path,
        progress=False,
        report=False,
    )
    rows = csv_rows(tmp_path / "episodes.csv")
    assert len(rows) == 2 * 120 and rows[0]["agent"] == "oracle" and float(rows[0]["ndtw"]) == 1.0
    assert not (tmp_path / "episodes.parquet").exists()


def test_report_written(done):
    pytest.importorskip("navdtw.report")
    out, _ = done
    text = (out / "report.html").read_text()
    assert "near_miss" in text and "grid_val" in text and "<script" in text


def test_same_numbers_twice(world, done, tmp_path):
    _, results = done
    again = S.run(write_suite(world, AGENTS), tmp_path, progress=False, report=False)
    assert again.pop("outputs")["folder"] == str(tmp_path)  # the one difference: where it was written
    same = {k: v for k, v in results.items() if k != "outputs"}
    assert json.dumps(again, sort_keys=True) == json.dumps(same, sort_keys=True)


# ------------------------------------------------------------------------------------------
# failures, cache, clusters
# ------------------------------------------------------------------------------------------


def test_a_broken_predictions_file_is_listed_and_the_others_are_written(world, tmp_path):
    agents = {"oracle": "oracle.json", "broken": "broken.json", "gap": "missing_one.json"}
    results = S.run(write_suite(world, agents), tmp_path, progress=False, report=False)
    failures = results["failures"]
    assert {(f["agent"], f["dataset"]) for f in failures} == {
        (a, d) for a in ("broken", "gap") for d in ("grid_val", "grid_paper")
    }
    broken = next(f for f in failures if f["agent"] == "broken")
    assert broken["file"].endswith("broken.json") and "broken.json" in broken["error"]
    assert "malformed JSON" in broken["error"]
    gap = next(f for f in failures if f["agent"] == "gap")
    assert "missing_one.json" in gap["error"] and "100_0" in gap["error"]
    on_disk = json.loads((tmp_path / "results.json").read_text())
    assert on_disk["failures"] == failures
    assert list(on_disk["datasets"]["grid_val"]["agents"]) == ["oracle"]
    assert on_disk["datasets"]["grid_val"]["comparisons"] == []
    assert "broken.json" in (tmp_path / "leaderboard.md").read_text()


def test_baseline_is_cached(world, tmp_path, monkeypatch):
    calls = []
    original = r2r.R2RBenchmark.baseline

    def counting(self, *a, **kw):
        calls.append(kw.get("convention"))
        return original(self, *a, **kw)

    monkeypatch.setattr(r2r.R2RBenchmark, "baseline", counting)
    suite = write_suite(world, {"oracle": "oracle.json"}, settings="resamples = 200\nbaseline_walks = 3000\n")
    first = S.run(suite, tmp_path, progress=False, report=False)
    assert sorted(calls) == ["paper", "r2r"]
    assert list((tmp_path / ".cache").glob("baseline-r2r-*.json"))
    second = S.run(suite, tmp_path, progress=False, report=False)
    assert len(calls) == 2  # nothing recomputed
    assert second["datasets"]["grid_val"]["baseline"] == first["datasets"]["grid_val"]["baseline"]
    # a damaged cache file is recomputed and replaced
    for f in (tmp_path / ".cache").glob("baseline-r2r-*.json"):
        f.write_text("{")
    third = S.run(suite, tmp_path, progress=False, report=False)
    assert len(calls) == 4 and third["datasets"] == first["datasets"]
    S.run(suite, tmp_path, progress=False, report=False)
    assert len(calls) == 4
    # another seed is another baseline
    S.run(
        write_suite(world, {"oracle": "oracle.json"}, settings="resamples = 200\nbaseline_walks = 3000\nseed = 1\n"),
        tmp_path,
        progress=False,
        report=False,
    )
    assert len(calls) == 6


def test_baseline_command_and_suite_row_agree(world, tmp_path, capsys):
    """One default everywhere: `navdtw baseline` used the paper convention where score and the
    suite use the data set's own evaluator (NDH random SR 9.84% from the command, 8.3% in the row)."""
    args = [
        "baseline",
        "--split",
        str(world / "data" / "split.json"),
        "--connectivity",
        str(world / "data" / "connectivity"),
    ]
    assert main([*args, "-n", "3000", "--seed", "0", "--out", str(tmp_path / "b"), "--no-progress"]) == 0
    capsys.readouterr()
    command = json.loads((tmp_path / "b" / "baseline.json").read_text())
    suite = write_suite(world, {"oracle": "oracle.json"}, settings="resamples = 100\nbaseline_walks = 3000\n")
    row = S.run(suite, None, progress=False)["datasets"]["grid_val"]["baseline"]
    assert command["convention"] == "r2r"
    assert command["means"] == pytest.approx({m: v["mean"] for m, v in row.items()}, rel=1e-12)


def test_cluster_labels_and_episode_resampling(world, tmp_path):
    class Bench:
        kind = type("K", (), {"name": "r2r"})()

    assert S.cluster_labels(Bench(), ["4332_0", "4332_1", "12_2"]) == ["4332", "4332", "12"]
    Bench.kind.name = "reverie"
    assert S.cluster_labels(Bench(), ["4634_215_0", "4634_215_1"]) == ["4634", "4634"]
    Bench.kind.name = "ndh"
    assert S.cluster_labels(Bench(), ["1", "2"]) is None
    by_episode = S.run(
        write_suite(
            world,
            {"near": "near.json", "oracle": "oracle.json"},
            settings='resamples = 2000\nbaseline_walks = 0\ncluster = "episode"\n',
        ),
        None,
        progress=False,
    )
    by_path = S.run(
        write_suite(
            world, {"near": "near.json", "oracle": "oracle.json"}, settings="resamples = 2000\nbaseline_walks = 0\n"
        ),
        None,
        progress=False,
    )
    e, p = by_episode["datasets"]["grid_paper"], by_path["datasets"]["grid_paper"]
    assert e["resampling"] == "episode" and p["resampling"] == "path"
    assert e["baseline"] == {}
    width = [ds["agents"]["near"]["sr"]["ci"][1] - ds["agents"]["near"]["sr"]["ci"][0] for ds in (e, p)]
    assert width[1] > width[0]  # 3 identical instructions per path: paths are fewer units


# ------------------------------------------------------------------------------------------
# suite file errors
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("edit", "needle"),
    [
        (
            lambda t: t.replace('dataset = "r2r"', 'dataset = "r9r"', 1),
            "datasets.grid_val.dataset: unknown data set kind 'r9r'",
        ),
        (
            lambda t: t.replace('split = "data/split.json"', 'split = "data/nope.json"', 1),
            "datasets.grid_val.split: file not found",
        ),
        (
            lambda t: t.replace('connectivity = "data/connectivity"', 'conectivity = "x"', 1),
            "datasets.grid_val.conectivity: unknown key",
        ),
        (lambda t: t.replace('convention = "r2r"', 'convention = "vlnce"', 1), "datasets.grid_val.convention"),
        (lambda t: t.replace("threshold = 1.5", "threshold = -1"), "datasets.grid_paper.threshold"),
        (
            lambda t: t.replace('grid_paper = "runs/oracle.json"', 'grid_test = "runs/oracle.json"'),
            "agents.oracle.grid_test: unknown data set",
        ),
        (
            lambda t: t.replace('grid_val = "runs/oracle.json"', 'grid_val = "runs/none.json"'),
            "agents.oracle.grid_val: predictions file not found",
        ),
        (lambda t: t.replace("resamples = 2000", "resamples = 0"), "settings.resamples"),
        (lambda t: t + "\nbootstraps = 3\n", "settings.bootstraps: unknown setting"),
        (lambda t: t.replace("[settings]", "[setting]"), "unknown table or key 'setting'"),
        (lambda t: t.replace("[datasets.grid_val]", "[datasets.grid_val"), "not valid TOML"),
    ],
)
def test_suite_file_errors_name_the_file_and_key(world, tmp_path, capsys, edit, needle):
    path = world / f"bad_{abs(hash(needle))}.toml"
    path.write_text(edit(suite_text({"oracle": "oracle.json"})))
    with pytest.raises(S.SuiteError) as err:
        S.load_suite(path)
    assert str(err.value).startswith(path.name + ": ") and needle in str(err.value)
    assert main(["suite", "run", str(path), "--out", str(tmp_path / "o"), "--no-progress"]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0] and path.name in lines[0]
    assert not (tmp_path / "o").exists()


def test_suite_from_a_dict(world):
    raw = {
        "datasets": {"d": {"dataset": "r2r", "split": "data/split.json", "connectivity": "data/connectivity"}},
        "agents": {"a": {"d": "runs/oracle.json"}},
    }
    suite = S.load_suite(raw, base=world)
    assert suite.datasets["d"].convention == "r2r" and suite.datasets["d"].threshold == 3.0
    assert suite.settings == S.DEFAULT_SETTINGS
    with pytest.raises(S.SuiteError, match=r"<suite>: no \[agents.NAME\] table"):
        S.load_suite({"datasets": raw["datasets"]}, base=world)


# ------------------------------------------------------------------------------------------
# the command line
# ------------------------------------------------------------------------------------------


def test_cli_suite_run(world, tmp_path, capsys):
    suite = write_suite(world, AGENTS, settings="resamples = 500\nbaseline_walks = 500\n")
    assert main(["suite", "run", str(suite), "--out", str(tmp_path), "--no-progress", "--no-report"]) == 0
    text = capsys.readouterr().out
    assert "grid_val: r2r, convention r2r, 120 episodes" in text and "oracle" in text and "nDTW" in text
    for name in ("leaderboard.md", "leaderboard.csv", "leaderboard.tex", "results.json"):
        assert (tmp_path / name).is_file()
    assert not (tmp_path / "report.html").exists()


def test_cli_suite_run_with_a_failure_exits_1(world, tmp_path, capsys):
    suite = write_suite(world, {"oracle": "oracle.json", "broken": "broken.json"}, settings="resamples = 200\n")
    assert main(["suite", "run", str(suite), "--out", str(tmp_path), "--no-progress", "--no-report"]) == 1
    captured = capsys.readouterr()
    assert "failed: broken on grid_val: broken.json: malformed JSON" in captured.err
    assert json.loads((tmp_path / "results.json").read_text())["failures"]


def test_cli_suite_missing_file_and_out_is_input(world, tmp_path, capsys):
    assert main(["suite", "run", str(tmp_path / "none.toml"), "--no-progress"]) == 2
    assert "none.toml: no such file" in capsys.readouterr().err
    suite = write_suite(world, {"oracle": "oracle.json"})
    assert main(["suite", "run", str(suite), "--out", str(world / "data" / "split.json"), "--no-progress"]) == 2


def test_cli_compare(world, tmp_path, capsys):
    runs = world / "runs"
    args = [
        "compare",
        str(runs / "oracle.json"),
        str(runs / "near.json"),
        str(runs / "lost.json"),
        "--dataset",
        "r2r",
        "--split",
        str(world / "data" / "split.json"),
        "--connectivity",
        str(world / "data" / "connectivity"),
        "--resamples",
        "500",
        "--no-progress",
    ]
    assert main(args) == 0
    text = capsys.readouterr().out
    lines = text.splitlines()
    assert lines[0].startswith("r2r: r2r, convention r2r, 120 episodes")
    assert any(line.startswith("oracle ") for line in lines) and any(line.startswith("lost ") for line in lines)
    assert "*" in text
    assert main([*args, "--convention", "paper", "--out", str(tmp_path)]) == 0
    results = json.loads((tmp_path / "results.json").read_text())
    assert results["datasets"]["r2r"]["convention"] == "paper"
    assert list(results["datasets"]["r2r"]["agents"]) == ["oracle", "near", "lost"]


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        (["--dataset", "r9r"], "--dataset r9r: unknown data set"),
        (["--split", "nope.json"], "--split: file not found: nope.json"),  # Option.check, as Python and suites
        (["--vlnce-gt", "x"], "does not take --vlnce-gt"),
        (["--convention", "vlnce"], "convention 'vlnce' does not apply"),
    ],
)
def test_cli_compare_errors(world, capsys, change, needle):
    args = [
        "compare",
        str(world / "runs" / "oracle.json"),
        "--dataset",
        "r2r",
        "--split",
        str(world / "data" / "split.json"),
        "--connectivity",
        str(world / "data" / "connectivity"),
        "--resamples",
        "100",
        "--no-progress",
    ]
    for k in range(0, len(change), 2):
        if change[k] in args:
            args[args.index(change[k]) + 1] = change[k + 1]
        else:
            args += change[k : k + 2]
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and needle in err[0]


def test_cli_compare_duplicate_stems(world, tmp_path, capsys):
    other = tmp_path / "copy" / "oracle.json"
    other.parent.mkdir()
    other.write_text((world / "runs" / "oracle.json").read_text())
    r2r = ["--split", str(world / "data" / "split.json"), "--connectivity", str(world / "data" / "connectivity")]
    mine = str(world / "runs" / "oracle.json")
    opts = ["--dataset", "r2r", *r2r, "--no-progress", "--resamples", "200"]
    assert main(["compare", mine, str(other), *opts]) == 0  # one stem: named by the folders that differ
    out = capsys.readouterr().out
    assert "\nruns " in out and "\ncopy " in out
    assert main(["compare", mine, mine, *opts]) == 2
    err = capsys.readouterr().err
    assert "would both be named 'oracle'; name each agent: NAME=FILE (positional) or --runs NAME=FILE" in err
    assert main(["compare", f"a={mine}", f"b={mine}", *opts]) == 0  # named positionally
    assert "\na " in capsys.readouterr().out
    runs = ["--runs", f"mine={world / 'runs' / 'oracle.json'}", "--runs", f"copy={other}"]
    assert main(["compare", *runs, "--dataset", "r2r", *r2r, "--no-progress", "--resamples", "200"]) == 0
    assert "copy" in capsys.readouterr().out


# ------------------------------------------------------------------------------------------
# the real R2R val unseen split (skipped without the data)
# ------------------------------------------------------------------------------------------


def _perturbed(entries, rng, drop: float):
    """A copy of an R2R results file whose trajectories lose their last viewpoint with probability ``drop``."""
    out = []
    for e in entries:
        traj = e["trajectory"]
        if len(traj) > 1 and rng.random() < drop:
            traj = traj[:-1]
        out.append({"instr_id": e["instr_id"], "trajectory": traj})
    return out


@pytest.mark.data
@pytest.mark.slow
def test_real_r2r_and_ndh_suite(data_dir, tmp_path):
    results_dir = data_dir / "r2r_results"
    ndh = data_dir / "cvdn" / "results"
    agent = json.loads(
        (results_dir / "prevalent_r2r" / "seq2seq_teacher_imagenet_val_unseen_iter_36000.json").read_text()
    )
    rng = np.random.default_rng(0)
    (tmp_path / "worse.json").write_text(json.dumps(_perturbed(agent, rng, 0.3)))
    suite = tmp_path / "suite.toml"
    suite.write_text(
        f"""
[datasets.r2r_val_unseen]
dataset = "r2r"
split = "{data_dir / "r2r" / "R2R_val_unseen.json"}"
connectivity = "{data_dir / "matterport3dsimulator" / "connectivity"}"

[agents.prevalent]
r2r_val_unseen = "{results_dir / "prevalent_r2r" / "seq2seq_teacher_imagenet_val_unseen_iter_36000.json"}"
[agents.prevalent_worse]
r2r_val_unseen = "worse.json"
[agents.stop]
r2r_val_unseen = "{results_dir / "rpl2024_group9" / "val_unseen_stop_agent.json"}"

[datasets.ndh_val_unseen]
dataset = "ndh"
split = "{data_dir / "cvdn" / "NDH_val_unseen.json"}"
connectivity = "{data_dir / "matterport3dsimulator" / "connectivity"}"

[agents.ndh_early]
ndh_val_unseen = "{ndh / "val-seq2seq-all-trusted_path-40-sample-imagenet_val_unseen_iter_100.json"}"
[agents.ndh_late]
ndh_val_unseen = "{ndh / "val-seq2seq-all-trusted_path-80-sample-imagenet_val_unseen_iter_19900.json"}"

[settings]
resamples = 2000
baseline_walks = 5000
"""
    )
    results = S.run(suite, tmp_path / "out", progress=False)
    ds = results["datasets"]["r2r_val_unseen"]
    assert ds["n"] == 2349 and results["failures"] == []
    assert ds["agents"]["prevalent"]["sr"]["mean"] == pytest.approx(0.60, abs=0.02)
    assert ds["agents"]["stop"]["sr"]["mean"] < 0.05
    marks = S.leaderboard_marks(ds)
    assert marks["sr"]["best"] == ["prevalent"] and "stop" not in marks["sr"]["tied"]
    sr = next(c for c in ds["comparisons"] if c["metric"] == "sr" and {c["a"], c["b"]} == {"prevalent", "stop"})
    assert sr["p_holm"] < 0.01 and sr["ci"][0] > 0.4
    assert 0 < ds["baseline"]["sr"]["mean"] < 0.1
    assert (tmp_path / "out" / "report.html").exists() == _has_report()
    assert math.isfinite(ds["agents"]["prevalent"]["ne"]["mean"])
    # NDH: dialogs are independent episodes; GP (metres, higher is better) is compared too
    nd = results["datasets"]["ndh_val_unseen"]
    assert nd["n"] == 907 and nd["resampling"] == "episode" and list(nd["agents"]) == ["ndh_early", "ndh_late"]
    assert nd["agents"]["ndh_late"]["gp"]["mean"] > nd["agents"]["ndh_early"]["gp"]["mean"]
    assert S.leaderboard_marks(nd)["gp"]["best"] == ["ndh_late"]
    assert "gp" in nd["baseline"] and len(nd["comparisons"]) == len(nd["agents"]["ndh_late"])
    name = "episodes.parquet" if (tmp_path / "out" / "episodes.parquet").exists() else "episodes.csv"
    assert_episodes_read_back(tmp_path / "out" / name, results)  # R2R and NDH, agents of real evaluators


def _has_report() -> bool:
    try:
        import navdtw.report  # noqa: F401
    except ImportError:
        return False
    return True


def test_pairs_are_all_pairs(done):
    _, results = done
    ds = results["datasets"]["grid_val"]
    pairs = {(c["a"], c["b"]) for c in ds["comparisons"]}
    assert pairs == set(itertools.combinations(AGENTS, 2))


def test_continuous_dataset_suite(tmp_path):
    """An R2R-CE data set: coordinates, the random walks over each reference's extent, paths grouped
    by trajectory_id."""
    continuous_files(tmp_path)
    (tmp_path / "suite.toml").write_text(
        '[datasets.ce]\ndataset = "r2r-ce"\nvlnce_episodes = "val.json"\nvlnce_gt = "val_gt.json"\n'
        '[agents.exact]\nce = "exact.json"\n[agents.stay]\nce = "stay.json"\n[settings]\nresamples = 500\n'
        "baseline_walks = 3000\n"
    )
    results = S.run(tmp_path / "suite.toml", tmp_path / "out", progress=False)
    ds = results["datasets"]["ce"]
    assert results["failures"] == [] and ds["n"] == 30 and ds["convention"] == "vlnce"
    assert ds["resampling"] == "path"
    assert 0.0 < ds["baseline"]["ndtw"]["mean"] < ds["agents"]["exact"]["ndtw"]["mean"] == 1.0
    assert ds["agents"]["exact"]["sr"]["mean"] == 1.0 and ds["agents"]["stay"]["pl"]["mean"] == 0.0
    assert S.leaderboard_marks(ds)["ndtw"] == {"best": ["exact"], "tied": [], "unresolved": []}


def test_marks_agree_with_the_report(done):
    """report.html's marks are the suite's (one leaderboard_marks: the report's own, with other
    arguments, is gone)."""
    report = pytest.importorskip("navdtw.report")
    out, results = done
    assert not hasattr(report, "leaderboard_marks")
    page = (out / "report.html").read_text(encoding="utf-8")
    embedded = re.search(r'<script type="application/json" id="navdtw-data">(.*?)</script>', page, re.S)
    shown = {d["name"]: d["marks"] for d in json.loads(embedded.group(1))["datasets"]}
    assert shown and shown == {name: S.leaderboard_marks(ds) for name, ds in results["datasets"].items()}


def test_progress_bar_with_tqdm(world, tmp_path, capsys):
    pytest.importorskip("tqdm")
    S.run(write_suite(world, {"oracle": "oracle.json"}, settings="resamples = 100\nbaseline_walks = 0\n"), None)
    assert "suite" in capsys.readouterr().err
    S.run(
        write_suite(world, {"oracle": "oracle.json"}, settings="resamples = 100\nbaseline_walks = 0\n"),
        None,
        progress=False,
    )
    assert capsys.readouterr().err == ""


def test_a_dataset_that_cannot_be_opened_fails_its_agents_only(world, tmp_path):
    (tmp_path / "bad_split.json").write_text("[{")
    text = suite_text({"oracle": "oracle.json"}, settings="resamples = 100\nbaseline_walks = 0\n")
    text = text.replace('split = "data/split.json"', f'split = "{tmp_path / "bad_split.json"}"', 1)
    suite = world / "bad_split_suite.toml"
    suite.write_text(text)
    results = S.run(suite, tmp_path / "out", progress=False)
    assert list(results["datasets"]) == ["grid_paper"]
    failed = [(f["agent"], f["dataset"]) for f in results["failures"]]
    assert failed == [(None, "grid_val"), ("oracle", "grid_val")]
    assert all("bad_split.json: malformed JSON" in f["error"] for f in results["failures"])
    assert (tmp_path / "out" / "leaderboard.md").is_file()


def test_every_agent_failing_on_a_dataset(world, tmp_path):
    """No leaderboard of a baseline row alone: nothing is written, the failures say why."""
    suite = write_suite(world, {"broken": "broken.json"}, settings="resamples = 100\nbaseline_walks = 500\n")
    results = S.run(suite, tmp_path / "out", progress=False)
    assert results["datasets"] == {} and results["outputs"] is None
    assert len(results["failures"]) == 2
    assert [p for p in (tmp_path / "out").rglob("*") if p.is_file() and ".cache" not in p.parts] == []


def test_suite_paths_expand_environment_variables(tmp_path, monkeypatch):
    from navdtw.suite import SuiteError, load_suite

    monkeypatch.delenv("NAVDTW_SUITE_TEST_DIR", raising=False)
    raw = {
        "datasets": {"d": {"dataset": "r2r", "split": "${NAVDTW_SUITE_TEST_DIR}/s.json", "connectivity": "c"}},
        "agents": {"a": {"d": "p.json"}},
    }
    with pytest.raises(SuiteError, match=r"datasets\.d\.split: environment variable NAVDTW_SUITE_TEST_DIR is not set"):
        load_suite(raw, base=tmp_path)
    monkeypatch.setenv("NAVDTW_SUITE_TEST_DIR", str(tmp_path / "nowhere"))
    with pytest.raises(SuiteError, match="not found: " + str(tmp_path / "nowhere")):
        load_suite(raw, base=tmp_path)
