"""LH-VLN's metrics (navdtw.subtasks) against a twin of its evaluator (tests/naive_lhvln.py, from
utils/metrics.py of HCPLab-SYSU/LH-VLN, NavigationMetrics) on random episodes, its edge cases
included: episodes without subtasks, subtasks of zero ground-truth steps, path_step 0, zero
lengths in TAR."""

from __future__ import annotations

import math

import naive_lhvln
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import navdtw
from navdtw.subtasks import LHVLN_METRICS, lhvln_episodes, lhvln_metrics


def random_episode(rng) -> dict:
    n = int(rng.choice([0, 1, 2, 3, 4, 5], p=[0.08, 0.2, 0.2, 0.2, 0.16, 0.16]))
    subs = [int(x) for x in rng.integers(0, 2, n)]
    steps = [int(x) for x in rng.integers(0, 40, n)]
    if n and rng.random() < 0.1:
        steps[int(rng.integers(0, n))] = 0  # a zero-length subtask
    if n and sum(steps) == 0:
        steps[0] = 1  # the evaluator divides by zero there (tested on its own)
    gt = [float(x) for x in np.round(rng.uniform(0, 12, n), 2)]
    err = [float(x) for x in np.round(rng.uniform(0, 8, n), 2)]
    for j in range(n):
        r = rng.random()
        if r < 0.08:
            gt[j] = 0.0  # no reference path
        elif r < 0.14:
            gt[j] = err[j] = 0.0  # a perfect match
        elif r < 0.2:
            err[j] = float(rng.uniform(0, 1))  # within a metre: max(e - 1, 0) = 0
    p = 0 if rng.random() < 0.1 else int(rng.integers(1, 200))
    return {
        "success": bool(all(subs)) if n else bool(rng.random() < 0.5),
        "gt_step": sum(steps),
        "path_step": p,
        "oracle_success": bool(rng.random() < 0.6),
        "navigation_error": float(rng.uniform(0, 10)),
        "subtask_successes": subs,
        "subtask_path_step": steps,
        "gt_length": gt,
        "error_length": err,
    }


def evaluator(records) -> dict:
    ev = naive_lhvln.Evaluator()
    for r in records:
        ev.add_sample(**r)
    return {LHVLN_METRICS[k]: v for k, v in ev.compute().items()}


def test_matches_the_evaluator_on_random_episodes():
    rng = np.random.default_rng(20261207)
    records = [random_episode(rng) for _ in range(1500)]
    kinds = {
        "no subtask": sum(not r["subtask_successes"] for r in records),
        "zero-length subtask": sum(0 in r["subtask_path_step"] for r in records),
        "path_step 0": sum(r["path_step"] == 0 for r in records),
        "gt 0 < e": sum(g == 0 < e for r in records for g, e in zip(r["gt_length"], r["error_length"])),
        "e = g = 0": sum(g == e == 0 for r in records for g, e in zip(r["gt_length"], r["error_length"])),
    }
    assert min(kinds.values()) >= 50, kinds
    got, want = lhvln_metrics(records), evaluator(records)
    for m in want:
        assert abs(got[m] - want[m]) <= 1e-9, m
    # and on many small splits: the aggregation, not only its mean, agrees
    for k in range(200):
        part = records[k * 7 : k * 7 + int(rng.integers(1, 8))]
        got, want = lhvln_metrics(part), evaluator(part)
        assert all(abs(got[m] - want[m]) <= 1e-9 for m in want), (k, got, want)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 12))
def test_any_split_matches(seed, n):
    rng = np.random.default_rng(seed)
    records = [random_episode(rng) for _ in range(n)]
    got, want = lhvln_metrics(records), evaluator(records)
    assert all(abs(got[m] - want[m]) <= 1e-9 for m in want)


def test_pooled_ratios_are_not_means_of_episodes():
    long = {"success": 0, "gt_step": 9, "path_step": 9, "oracle_success": 0, "navigation_error": 1.0,
                "subtask_successes": [1, 1, 1, 1, 0], "subtask_path_step": [1] * 5, "gt_length": [1.0] * 5,
                "error_length": [0.0, 0.0, 0.0, 0.0, 5.0]}  # fmt: skip
    short = dict(long, subtask_successes=[0], subtask_path_step=[1], gt_length=[2.0], error_length=[3.0])
    e = lhvln_episodes([long, short])
    assert e["isr"].tolist() == [0.8, 0.0] and e["subtasks"].tolist() == [5.0, 1.0]
    m = lhvln_metrics([long, short])
    assert m["isr"] == pytest.approx(4 / 6) and m["isr"] != pytest.approx(e["isr"].mean())
    assert m["tar"] == pytest.approx((4 * 1.0 + 0.2 + (1 - 2 / 3)) / 6)
    # the registry's records say so: Scores.summary pools them
    scores = navdtw.Scores(
        {k: e[k] for k in ("isr", "subtasks", "tar", "tar_subtasks", "csr")}, threshold=3.0,
        convention=navdtw.CONVENTIONS["r2r"],
    )  # fmt: skip
    summary = scores.summary()
    assert summary["isr"] == pytest.approx(m["isr"]) and summary["tar"] == pytest.approx(m["tar"])
    assert summary["csr"] == pytest.approx(e["csr"].mean())


def test_edge_cases_one_by_one():
    base = {"success": 1, "gt_step": 10, "path_step": 0, "oracle_success": 1, "navigation_error": 0.0,
                "subtask_successes": [], "subtask_path_step": [], "gt_length": [], "error_length": []}  # fmt: skip
    m = lhvln_metrics([base])
    assert m["spl"] == 0.0  # path_step 0: the p > 0 guard
    assert m["isr"] == 0.0 and m["tar"] == 0.0 and m["csr"] == 0.0 and m["cgt"] == 0.0  # no subtask
    assert m == evaluator([base])
    assert lhvln_metrics([]) == evaluator([]) == dict.fromkeys(LHVLN_METRICS.values(), 0)
    zero = dict(base, subtask_successes=[1, 0], subtask_path_step=[0, 0], gt_length=[0.0], error_length=[0.0])
    assert math.isnan(lhvln_metrics([zero])["cgt"])  # the evaluator divides by zero
    with pytest.raises(ZeroDivisionError):
        evaluator([zero])
    assert lhvln_metrics([zero])["tar"] == 1.0


@pytest.mark.parametrize(
    ("edit", "pattern"),
    [
        ({"gt_step": None}, r"^record 0: 'gt_step' must be a number, got None"),
        ({"subtask_successes": 1}, r"^record 0: 'subtask_successes' must be a list"),
        ({"subtask_path_step": [1]}, r"^record 0: 'subtask_path_step' has 1 values, 'subtask_successes' 2"),
        ({"error_length": [1.0]}, r"^record 0: 'error_length' has 1 values, 'gt_length' 2"),
        ({"gt_length": [1.0, "a"]}, r"^record 0: 'gt_length' must be a number, got 'a'"),
    ],
)
def test_bad_records_name_the_record(edit, pattern):
    rec = {
        "success": 1,
        "gt_step": 10,
        "path_step": 5,
        "oracle_success": 1,
        "navigation_error": 0.0,
        "subtask_successes": [1, 0],
        "subtask_path_step": [4, 6],
        "gt_length": [1.0, 2.0],
        "error_length": [0.0, 1.0],
    }
    with pytest.raises(ValueError, match=pattern):
        lhvln_episodes([{**rec, **edit}])
    with pytest.raises(ValueError, match=r"^record 0: missing 'gt_length', 'error_length'"):
        lhvln_episodes([{k: v for k, v in rec.items() if k not in ("gt_length", "error_length")}])


# --------------------------------------------------------------------------------------------
# LH-VLN's records read by navdtw compare --dataset results (layout lh-vln)
# --------------------------------------------------------------------------------------------


def test_records_read_by_compare_as_the_evaluator_computes(tmp_path, capsys):
    import json

    import eval_writers

    from navdtw.cli import main
    from navdtw.datasets.results import load_results

    rng = np.random.default_rng(20261208)
    mine, calls = eval_writers.lhvln(tmp_path, eval_writers.lhvln_results(rng, 400))
    table = load_results(mine)
    assert table.layout == "lh-vln" and len(table) == 400
    want = evaluator(calls)
    summary = table.evaluate().summary()
    for m, v in want.items():
        assert abs(summary[m] - v) <= 1e-9, m
    other_dir = tmp_path / "other"
    other_dir.mkdir()
    other, other_calls = eval_writers.lhvln(other_dir, eval_writers.lhvln_results(np.random.default_rng(3), 400))
    out = tmp_path / "cmp"
    assert main(["compare", str(mine), str(other), "--dataset", "results", "--resamples", "500", "--out", str(out),
                 "--no-progress"]) == 0  # fmt: skip
    result = json.loads((out / "results.json").read_text())["datasets"]["results"]
    assert result["metrics"]["isr"]["weight"] == "subtasks" and result["metrics"]["tar"]["weight"] == "tar_subtasks"
    assert "weight" not in result["metrics"]["csr"]
    # the weights are not metrics: in results.json as the ratios' weight, not columns of the tables
    # (new-user pass F6: were shown as "subtasks" and "TAR subtasks", "No marks ... (no direction)")
    printed = capsys.readouterr().out
    header = next(line for line in printed.splitlines() if line.startswith("agent "))
    assert "ISR" in header and "TAR" in header and "subtasks" not in header and "No marks on subtasks" not in printed
    for name in ("leaderboard.md", "leaderboard.csv", "leaderboard.tex", "report.html"):
        assert "TAR subtasks" not in (out / name).read_text(), name
    assert list(result["agents"]) == [tmp_path.name, "other"]  # agents named by their folders
    for got, c in zip(result["agents"].values(), (calls, other_calls)):
        ev = evaluator(c)
        for m in ("isr", "tar", "csr", "cgt", "sr", "spl", "ne", "osr"):
            assert abs(got[m]["mean"] - ev[m]) <= 1e-9, m
            lo, hi = got[m]["ci"]
            assert lo <= ev[m] <= hi
    # the pooled ISR differs from the mean of the episodes' rates on these runs
    e = lhvln_episodes(calls)
    assert abs(e["isr"].mean() - want["isr"]) > 1e-3


def test_a_table_without_the_weights_says_its_mean_is_plain(tmp_path):
    import json

    from navdtw.datasets.results import load_results

    path = tmp_path / "isr.jsonl"
    path.write_text("".join(json.dumps({"episode_id": k, "isr": v}) + "\n" for k, v in enumerate([1.0, 0.5, 0.0])))
    t = load_results(path)
    assert t.evaluate().summary()["isr"] == pytest.approx(0.5)
    assert any("'isr' is a pooled ratio weighted by 'subtasks', which the table lacks" in n for n in t.notes)
    path.write_text(
        "".join(
            json.dumps({"episode_id": k, "isr": v, "subtasks": w}) + "\n"
            for k, (v, w) in enumerate([(1.0, 4), (0.5, 2), (0.0, 2)])
        )
    )
    t = load_results(path)
    assert t.evaluate().summary()["isr"] == pytest.approx(5 / 8)
    assert not any("pooled ratio" in n for n in t.notes)


def lhvln_runs(folder, rng, base, runs, p):
    """``runs`` runs of one agent on the tasks ``base`` (the same subtasks in each): each run draws
    its own successes and errors, with a seed offset; returns the files and each run's add_sample
    arguments."""
    files, calls = [], []
    for r in range(runs):
        q = float(np.clip(p + rng.normal(0, 0.05), 0, 1))
        results = [
            {
                **t,
                "successes": [bool(x) for x in rng.random(len(t["gt_step"])) < q],
                "navigation_errors": [round(float(x), 2) for x in rng.uniform(0, 6, len(t["gt_step"]))],
            }
            for t in base
        ]
        sub = folder / f"run{r}"
        sub.mkdir(parents=True)
        import eval_writers

        path, c = eval_writers.lhvln(sub, results)
        files.append(path)
        calls.append(c)
    return files, calls


def test_several_runs_get_the_ratio_s_interval_and_pair_test(tmp_path):
    """An LH-VLN run with several runs: ISR and TAR get their interval over episodes and seeds (each
    run's ratio, linearized) and their runs-aware pair test, with the figures of stats called on the
    same runs; the probability of improvement counts each episode by its subtasks."""
    import json

    import eval_writers

    from navdtw import stats
    from navdtw.cli import main

    rng = np.random.default_rng(20261129)
    base = eval_writers.lhvln_results(rng, 300)
    a_files, a_calls = lhvln_runs(tmp_path / "a", rng, base, 3, 0.6)
    b_files, b_calls = lhvln_runs(tmp_path / "b", rng, base, 3, 0.5)
    out = tmp_path / "cmp"
    argv = ["compare", "--runs", "A=" + ",".join(map(str, a_files)), "--runs", "B=" + ",".join(map(str, b_files)),
            "--dataset", "results", "--resamples", "400", "--out", str(out), "--no-progress"]  # fmt: skip
    assert main(argv) == 0
    result = json.loads((out / "results.json").read_text())["datasets"]["results"]
    assert not result.get("failures")
    agents = {"A": a_calls, "B": b_calls}
    for m, w in (("isr", "subtasks"), ("tar", "tar_subtasks")):
        per_run = {name: np.array([evaluator(c)[m] for c in calls]) for name, calls in agents.items()}
        x = {name: np.column_stack([lhvln_episodes(c)[m] for c in calls]) for name, calls in agents.items()}
        weight = lhvln_episodes(a_calls[0])[w]
        for name in ("A", "B"):
            got = result["agents"][name][m]
            assert got["runs"] == pytest.approx(list(per_run[name]), abs=1e-9), m  # each run as its evaluator
            assert got["mean"] == pytest.approx(per_run[name].mean(), abs=1e-9)
            assert got["runs_se"] is not None and got["runs_df"] is not None
            lo, hi = got["ci"]
            assert lo < got["mean"] < hi
            want = stats.runs_intervals(x[name], [[0, 1, 2]], weights=np.column_stack([weight] * 3), resamples=50)
            assert got["runs_se"] == pytest.approx(float(want.se[0]), rel=1e-9)
        entry = next(c for c in result["comparisons"] if c["metric"] == m)
        assert entry["test"] == "runs t" and entry["over"].startswith("episodes and seeds")
        want = stats.runs_difference(x[entry["a"]], x[entry["b"]], weights=weight)
        assert entry["diff"] == pytest.approx(per_run[entry["a"]].mean() - per_run[entry["b"]].mean(), abs=1e-9)
        assert entry["p"] == pytest.approx(want.p, rel=1e-9) and entry["df"] == pytest.approx(want.df, rel=1e-9)
        # the probability of improvement: a subtask drawn at random, a run of each at random
        xa, xb = x[entry["a"]], x[entry["b"]]
        wins = (0.5 + 0.5 * np.sign(xa[:, :, None] - xb[:, None, :])).mean(axis=(1, 2))
        assert entry["p_improvement"]["value"] == pytest.approx((weight * wins).sum() / weight.sum(), abs=1e-12)


def test_an_agent_without_the_weight_column_fails_on_the_ratio_and_says_why(tmp_path):
    """One agent's table lacks ISR's weight (subtasks): its ISR would be the rows' plain mean, another
    figure under the same name; it fails for that agent, naming the agent, the file and the column,
    and the other metrics go on."""
    import json

    from navdtw.cli import main

    rng = np.random.default_rng(35)
    w = rng.integers(1, 6, 80)
    ok = rng.binomial(w, 0.6)
    rows = [{"episode_id": k, "isr": float(ok[k] / w[k]), "subtasks": int(w[k]), "sr": float(ok[k] == w[k])}
            for k in range(80)]  # fmt: skip
    good, bare = tmp_path / "good.jsonl", tmp_path / "bare.jsonl"
    good.write_text("".join(json.dumps(r) + "\n" for r in rows))
    bare.write_text("".join(json.dumps({k: v for k, v in r.items() if k != "subtasks"}) + "\n" for r in rows))
    out = tmp_path / "out"
    argv = ["compare", str(good), str(bare), "--dataset", "results", "--resamples", "200", "--out", str(out),
            "--no-progress"]  # fmt: skip
    main(argv)
    doc = json.loads((out / "results.json").read_text())
    result = doc["datasets"]["results"]
    assert result["agents"]["good"]["isr"]["mean"] == pytest.approx(ok.sum() / w.sum(), rel=1e-12)
    assert "isr" not in result["agents"]["bare"]  # never its plain mean under the name isr
    assert result["agents"]["bare"]["sr"]["mean"] == pytest.approx(np.mean(ok == w), rel=1e-12)
    failures = [f for f in doc["failures"] if f["metric"] == "isr"]
    assert len(failures) == 1 and failures[0]["agent"] == "bare" and failures[0]["file"].endswith("bare.jsonl")
    assert (
        "bare's bare.jsonl has 'isr', a pooled ratio weighted by 'subtasks', but no 'subtasks' column"
        in (failures[0]["error"])
    )
    assert not any(c["metric"] == "isr" for c in result["comparisons"])
