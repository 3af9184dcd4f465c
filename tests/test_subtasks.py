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


def test_records_read_by_compare_as_the_evaluator_computes(tmp_path):
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
