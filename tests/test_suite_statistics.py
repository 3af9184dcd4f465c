"""The marks and the numbers of a suite run (issue 19, "Marks and statistics"; issue 20's
non-finite policy), on a data-set kind made for the test: per-episode values read from a JSON file
(``{"ids": [...], "values": {metric: [...]}}``), so every value, NaN and infinity is chosen here."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np
import pytest

from navdtw import datasets, registry, stats
from navdtw import suite as S
from navdtw.cli import main


class _Matched:
    def __init__(self, ids, values):
        self.ids, self.values = ids, values
        self.scans = [""] * len(ids)
        self.notes, self.graphs, self.env = (), None, None

    def start_note(self, source):
        return None


class _Bench(datasets.Benchmark):
    n = 0

    def match(self, predictions, *, convention=None, strict=False):
        data = json.loads(Path(predictions).read_text())
        return _Matched([str(i) for i in data["ids"]], data["values"])

    def evaluate(self, matched, **kw):
        return {m: np.array(v, dtype=float) for m, v in matched.values.items()}


TABLE = datasets.DatasetKind("table", "values of a test", (), ("paper",), "paper", lambda: _Bench())


@pytest.fixture(autouse=True)
def table_kind(monkeypatch):
    monkeypatch.setitem(datasets.DATASETS, "table", TABLE)


def _run(tmp_path: Path, agents: dict[str, dict], settings: str = "", out: Path | None = None, **kw):
    """A one-data-set suite of the "table" kind; ``agents``: name -> {"ids", "values"} (values may
    hold NaN and infinities: written as JSON's NaN / Infinity)."""
    lines = ["[datasets.d]", 'dataset = "table"', ""]
    for name, table in agents.items():
        (tmp_path / f"{name}.json").write_text(json.dumps(table))
        lines += [f"[agents.{json.dumps(name)}]", f'd = "{name}.json"', ""]
    (tmp_path / "suite.toml").write_text("\n".join([*lines, "[settings]", "baseline_walks = 0", settings]))
    return S.run(tmp_path / "suite.toml", out, progress=False, **kw)


def _table(values: dict, ids=None) -> dict:
    n = len(next(iter(values.values())))
    return {
        "ids": list(ids if ids is not None else range(n)),
        "values": {m: list(map(float, v)) for m, v in values.items()},
    }


# ------------------------------------------------------------------------------------------
# the dagger with many agents
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("agents", "resamples"), [(33, 10_000), (11, 1_000)])
def test_a_huge_difference_is_marked_with_many_agents(tmp_path, agents, resamples):
    """Issue 19: from 33 agents at 10,000 resamples (11 at 1,000) Holm's smallest adjusted p was
    pairs / (resamples + 1) >= 0.05, and every agent was marked not significantly different from
    the best (seq2seq vs the stop agent: diff 0.60, p_sign 3e-142, p_holm 0.055)."""
    rng = np.random.default_rng(agents)
    n = 783
    tables = {"best": _table({"sr": rng.random(n) < 0.6})}
    tables.update({f"weak{k}": _table({"sr": rng.random(n) < 0.1}) for k in range(agents - 1)})
    ds = _run(tmp_path, tables, f"resamples = {resamples}")["datasets"]["d"]
    marks = S.leaderboard_marks(ds)["sr"]
    assert marks["best"] == ["best"] and marks["tied"] == [] and marks["unresolved"] == []
    against = [c for c in ds["comparisons"] if "best" in (c["a"], c["b"])]
    assert len(against) == agents - 1 and all(c["p_holm"] < 1e-20 and c["p_method"] == "tail bound" for c in against)
    assert len(ds["comparisons"]) / (resamples + 1) >= 0.05  # the old floor of p_holm


def test_a_difference_holm_could_not_decide_is_decided(tmp_path):
    """Issue 19/26: a difference whose exact p-value is ~6e-5 (z = 4) among 33 agents: one of
    10,000 random flips is as extreme (p = 2e-4), and Holm over the 528 pairs (p_holm 0.1) left it
    a "?". The comparisons with the best ask only "could b be the best?": no (no mark, no warning)."""
    n = 400
    a, b = np.zeros(n), np.zeros(n)
    a[:240], b[240:] = 1.0, 1.0  # a wins 240 episodes, b 160: z = 80 / sqrt(400) = 4
    rng = np.random.default_rng(1)
    tables = {"a": _table({"sr": a}), "b": _table({"sr": b})}
    tables.update({f"w{k}": _table({"sr": rng.random(n) < 0.05}) for k in range(31)})
    results = _run(tmp_path, tables, "resamples = 10000")
    ds = results["datasets"]["d"]
    c = next(c for c in ds["comparisons"] if {c["a"], c["b"]} == {"a", "b"})
    assert c["p_method"] == "monte carlo" and c["p"] == pytest.approx(2 / 10001) and c["p_holm"] > 0.05
    assert S.leaderboard_marks(ds)["sr"] == {"best": ["a"], "tied": [], "unresolved": []}
    assert ds["agents"]["b"]["sr"]["vs_best"]["p_bounds"][1] < 0.05
    assert not [w for w in results["warnings"] if w["dataset"] == "d"]


def test_a_p_value_at_alpha_gets_a_question_mark(tmp_path):
    """Issue 26/28.11: "?" only where the answer is the Monte-Carlo error's after every resample
    navdtw draws (here 100 x 20), and the advice follows from the count used. a wins 45 episodes,
    b 30 of 200: "b is the best" has p 0.048, within Monte-Carlo error of 0.05 at 2,000 resamples."""
    n = 200
    a, b = np.zeros(n), np.zeros(n)
    a[:45], b[45:75] = 1.0, 1.0
    out = tmp_path / "out"
    results = _run(tmp_path, {"a": _table({"sr": a}), "b": _table({"sr": b})}, "resamples = 20", out=out, report=False)
    ds = results["datasets"]["d"]
    vs = ds["agents"]["b"]["sr"]["vs_best"]
    assert vs["resamples"] == 2000 and vs["p_bounds"][0] < 0.05 <= vs["p_bounds"][1]
    assert S.leaderboard_marks(ds)["sr"] == {"best": ["a"], "tied": [], "unresolved": ["b"]}
    warning = next(w["message"] for w in results["warnings"] if w["dataset"] == "d")
    assert warning.startswith("sr: whether b (p in [") and "after 2000 resamples) could be the best, as a is" in warning
    assert warning.endswith("no mark is given; resamples = 200 (now 20) lets navdtw draw up to 20000 where needed")
    assert "?" in S.format_leaderboard(results).splitlines()[4]  # b's row
    rows = list(csv.DictReader(io.StringIO((out / "leaderboard.csv").read_text())))
    b_sr = next(r for r in rows if r["agent"] == "b")
    assert (b_sr["not_significantly_worse"], b_sr["unresolved"]) == ("0", "1")
    assert "$^{?}$" in (out / "leaderboard.tex").read_text()
    # at the default count the same data decide (and the advice is never "fewer than used")
    ds = _run(tmp_path, {"a": _table({"sr": a}), "b": _table({"sr": b})})["datasets"]["d"]
    assert S.leaderboard_marks(ds)["sr"]["unresolved"] == []


# ------------------------------------------------------------------------------------------
# marks need two agents; metrics an agent wins by not moving
# ------------------------------------------------------------------------------------------


def test_a_lone_agent_is_nobodys_best(tmp_path):
    ds = _run(tmp_path, {"only": _table({"sr": [0, 1] * 10})}, "resamples = 100")["datasets"]["d"]
    assert S.leaderboard_marks(ds) == {}
    assert "No marks on SR: fewer than two agents measured." in S.format_leaderboard(
        {"settings": {**S.DEFAULT_SETTINGS}, "datasets": {"d": ds}}
    )


def test_the_two_agents_sentence_only_under_a_table_that_needs_it(tmp_path):
    # was printed under every table, of 2-4 agents too
    rng = np.random.default_rng(5)
    for k in (2, 4):
        agents = {f"a{j}": _table({"sr": rng.integers(0, 2, 30)}) for j in range(k)}
        (tmp_path / str(k)).mkdir()
        text = S.format_leaderboard(_run(tmp_path / str(k), agents, "resamples = 100"))
        assert "fewer than two agents" not in text
    # one of two agents without a metric: that metric has fewer than two agents
    agents = {"a": _table({"sr": [0, 1] * 10, "spl": [0, 1] * 10}), "b": _table({"sr": [1, 1] * 10})}
    (tmp_path / "m").mkdir()
    # ...and the sentence names it (SR has both agents)
    assert "No marks on SPL: fewer than two agents measured." in S.format_leaderboard(
        _run(tmp_path / "m", agents, "resamples = 100")
    )


def test_staying_at_the_start_wins_no_mark(tmp_path):
    """The agent that never moves has AD = MD = 0 m: it would be "best"."""
    rng = np.random.default_rng(2)
    n = 50
    stay = _table({"sr": np.zeros(n), "ad": np.zeros(n), "md": np.zeros(n)})
    moving = _table({"sr": rng.random(n) < 0.5, "ad": rng.random(n), "md": 2 * rng.random(n)})
    ds = _run(tmp_path, {"stay": stay, "moving": moving}, "resamples = 200")["datasets"]["d"]
    marks = S.leaderboard_marks(ds)
    assert set(marks) == {"sr"} and marks["sr"]["best"] == ["moving"]
    assert registry.get("ad").staying_wins and registry.get("md").staying_wins
    text = S.format_leaderboard({"settings": {**S.DEFAULT_SETTINGS}, "datasets": {"d": ds}})
    assert "No marks on AD, MD: an agent that never leaves the start scores 0 m there" in text


# ------------------------------------------------------------------------------------------
# non-finite values
# ------------------------------------------------------------------------------------------


def test_a_nan_fails_its_column_only(tmp_path):
    """Issue 19: one NaN in one agent's column removed the whole data set from results.json and
    every table. Now: that (agent, metric) fails, naming the file, episode and column; SPL's NaN
    where SR is 0 is SPL's own value, 0."""
    rng = np.random.default_rng(3)
    n = 40
    sr = (rng.random(n) < 0.5).astype(float)
    spl = np.where(sr == 1, 0.8, np.nan)  # an evaluator that logs SPL = NaN where it failed
    ndtw = rng.random(n)
    ndtw[7] = np.nan
    tables = {
        "a": _table({"sr": sr, "spl": spl, "ndtw": ndtw}, ids=[f"ep{k}" for k in range(n)]),
        "b": _table(
            {"sr": rng.random(n) < 0.5, "spl": rng.random(n), "ndtw": rng.random(n)}, ids=[f"ep{k}" for k in range(n)]
        ),
        "c": _table(
            {"sr": rng.random(n) < 0.5, "spl": rng.random(n), "ndtw": rng.random(n)}, ids=[f"ep{k}" for k in range(n)]
        ),
    }
    results = _run(tmp_path, tables, "resamples = 200")
    ds = results["datasets"]["d"]
    assert [(f["agent"], f["metric"]) for f in results["failures"]] == [("a", "ndtw")]
    assert results["failures"][0]["error"].startswith("a.json: episode ep7: ndtw is NaN")
    assert set(ds["agents"]["a"]) == {"sr", "spl"} and set(ds["agents"]["b"]) == {"sr", "spl", "ndtw"}
    assert ds["agents"]["a"]["spl"]["mean"] == pytest.approx(0.8 * sr.mean())  # NaN -> 0 where SR = 0
    assert {(c["a"], c["b"]) for c in ds["comparisons"] if c["metric"] == "ndtw"} == {("b", "c")}
    with pytest.raises(ValueError, match=r"x: episode 1: spl is NaN while sr is 1"):
        registry.nonfinite_policy({"sr": [0.0, 1.0], "spl": [np.nan, np.nan]}, ids=[0, 1], source="x")
    with pytest.raises(ValueError, match=r"x: episode 0: sr is inf; only distances"):
        registry.nonfinite_policy({"sr": [np.inf]}, ids=[0], source="x")


def test_infinite_distances_are_left_out_and_counted_everywhere(tmp_path):
    """Issue 20: an unreachable goal (NE = inf) is left out of NE's mean and interval, the count is
    shown beside the mean in every output, and a pair is compared on the episodes finite for both."""
    rng = np.random.default_rng(4)
    n = 60
    ne_a, ne_b = rng.lognormal(size=n), rng.lognormal(size=n) + 0.5
    ne_a[[3, 17, 41]] = np.inf
    ne_b[[17, 50]] = np.inf
    tables = {"a": _table({"ne": ne_a, "sr": ne_a < 3}), "b": _table({"ne": ne_b, "sr": ne_b < 3})}
    out = tmp_path / "out"
    results = _run(tmp_path, tables, "resamples = 500", out=out)
    ds = results["datasets"]["d"]
    a, b = ds["agents"]["a"]["ne"], ds["agents"]["b"]["ne"]
    assert (a["left_out"], b["left_out"]) == (3, 2)  # by hand
    assert a["mean"] == pytest.approx(ne_a[np.isfinite(ne_a)].mean()) and None not in a["ci"]
    c = next(c for c in ds["comparisons"] if c["metric"] == "ne")
    both = np.isfinite(ne_a) & np.isfinite(ne_b)
    assert c["dropped"] == 4 and c["diff"] == pytest.approx(ne_a[both].mean() - ne_b[both].mean())
    assert ds["agents"]["a"]["sr"]["left_out"] == 0
    assert "(3 unreachable left out)" in (out / "leaderboard.md").read_text()
    assert "1.94 (3 out)" in S.format_leaderboard(results).replace("*", "").replace(
        "†", " "
    ) or "(3 out)" in S.format_leaderboard(results)
    assert "(3 out)" in (out / "leaderboard.tex").read_text()
    rows = list(csv.DictReader(io.StringIO((out / "leaderboard.csv").read_text())))
    assert next(r for r in rows if (r["agent"], r["metric"]) == ("a", "ne"))["left_out"] == "3"
    board = json.loads((out / "report.html").read_text().split('id="navdtw-data">', 1)[1].split("</script>", 1)[0])[
        "datasets"
    ][0]["board"]
    assert board["a"]["ne"][3] == 3


# ------------------------------------------------------------------------------------------
# few units; agents on different episodes
# ------------------------------------------------------------------------------------------


def test_intervals_are_undefined_below_min_units(tmp_path):
    """Issue 19: n = 1 gave a "95% CI" [x, x] and a paired interval that excluded 0 with p = 1."""
    tables = {"a": _table({"sr": [1.0]}), "b": _table({"sr": [0.0]})}
    results = _run(tmp_path, tables, "resamples = 100")
    ds = results["datasets"]["d"]
    assert ds["agents"]["a"]["sr"] == {
        "mean": 1.0,
        "ci": [None, None],
        "ci_episodes": [None, None],
        "left_out": 0,
        "runs": None,
        "runs_sd": None,
        "runs_se": None,
        "runs_df": None,
        "vs_best": {"p": None, "p_bounds": [None, None], "resamples": 0},  # not tested: one episode
    }
    assert S.leaderboard_marks(ds) == {}
    c = ds["comparisons"][0]
    assert c["ci"] == [None, None] and c["p"] == 1.0
    assert "n/a interval: fewer than 10 paths or episodes (min_units)" in S.format_leaderboard(results)
    nine = {k: _table({"sr": np.arange(9) % 2 == (k == "a")}) for k in ("a", "b")}
    assert _run(tmp_path, nine, "resamples = 100")["datasets"]["d"]["agents"]["a"]["sr"]["ci"] == [None, None]
    ds = _run(tmp_path, nine, "resamples = 100\nmin_units = 9")["datasets"]["d"]
    assert None not in ds["agents"]["a"]["sr"]["ci"]


def test_agents_on_different_episodes_fail_unless_asked(tmp_path, capsys):
    """Issue 19: agents covering different episodes were silently cut to the shared subset."""
    rng = np.random.default_rng(5)
    full = _table({"sr": rng.random(100) < 0.5}, ids=[f"e{k}" for k in range(100)])
    gap = _table({"sr": rng.random(95) < 0.5}, ids=[f"e{k}" for k in range(100) if k not in (3, 7, 8, 20, 99)])
    results = _run(tmp_path, {"full": full, "full2": full, "gap": gap}, "resamples = 100")
    assert [f["agent"] for f in results["failures"]] == ["gap"]
    msg = results["failures"][0]["error"]
    assert msg.startswith("gap.json: covers 95 of the 100 episodes the agents of d have; missing e3, e7, e8, e20, e99")
    assert 'episodes = "shared"' in msg and results["datasets"]["d"]["n"] == 100
    shared = _run(tmp_path, {"full": full, "gap": gap}, 'resamples = 100\nepisodes = "shared"')
    assert shared["failures"] == [] and shared["datasets"]["d"]["n"] == 95
    assert (
        shared["warnings"][0]["agent"] == "full"
        and "5 of its 100 episodes are not compared" in shared["warnings"][0]["message"]
    )
    assert main(["suite", "run", str(tmp_path / "suite.toml"), "--out", str(tmp_path / "o"), "--no-progress"]) == 0
    (tmp_path / "suite.toml").write_text((tmp_path / "suite.toml").read_text().replace('episodes = "shared"', ""))
    assert main(["suite", "run", str(tmp_path / "suite.toml"), "--out", str(tmp_path / "o"), "--no-progress"]) == 1
    assert (
        main(
            [
                "suite",
                "run",
                str(tmp_path / "suite.toml"),
                "--out",
                str(tmp_path / "o"),
                "--no-progress",
                "--shared-episodes",
            ]
        )
        == 0
    )
    capsys.readouterr()


def test_the_family_is_the_agents_with_the_metric(tmp_path):
    """One family of comparisons with the best per (data set, metric): the agents that have the
    metric (an agent that failed a column is left out of that column's family only)."""
    rng = np.random.default_rng(8)
    n = 60
    ndtw = rng.random(n)
    ndtw[5] = np.nan  # fails a's nDTW column
    tables = {
        "a": _table({"sr": rng.random(n) < 0.5, "ndtw": ndtw}),
        "b": _table({"sr": rng.random(n) < 0.5, "ndtw": rng.random(n)}),
        "c": _table({"sr": rng.random(n) < 0.5, "ndtw": rng.random(n)}),
    }
    ds = _run(tmp_path, tables, "resamples = 300")["datasets"]["d"]
    assert "ndtw" not in ds["agents"]["a"]
    for m, who in (("sr", "abc"), ("ndtw", "bc")):
        matrix = np.column_stack([tables[a]["values"][m] for a in who])
        want = stats.compare_with_best(matrix, resamples=300, seed=0)
        got = [ds["agents"][a][m]["vs_best"]["p"] for a in who]
        np.testing.assert_allclose(got, want.p, rtol=1e-12)


def test_p_bounds_are_clopper_pearson():
    """Where the exact p-value lies given the random flips: scipy's exact binomial interval."""
    from scipy import stats

    from navdtw.suite.analysis import P_BOUNDS_CONFIDENCE, p_bounds

    resamples = 10_000
    hits = np.array([0, 1, 5, 10, 100, 9_999, 10_000])
    p = (hits + 1.0) / (resamples + 1.0)
    lo, hi = p_bounds(p, np.full(len(p), "monte carlo", dtype=object), resamples)
    for h, a, b in zip(hits.tolist(), lo, hi):
        ci = stats.binomtest(h, resamples).proportion_ci(P_BOUNDS_CONFIDENCE, method="exact")
        assert (a, b) == pytest.approx((ci.low, ci.high), rel=1e-9, abs=1e-15)
    lo, hi = p_bounds(np.array([0.3, 1e-9]), np.array(["exact", "tail bound"], dtype=object), resamples)
    assert lo.tolist() == [0.3, 0.0] and hi.tolist() == [0.3, 1e-9]


def test_unreachable_goals_of_navdtws_own_scoring(tmp_path, capsys):
    """The same policy for what navdtw scores itself: a trajectory that ends on a viewpoint with no
    path to the goal has NE, PL, AD, MD, DTW = inf; they are left out and counted, not an infinite
    mean (ONE stays finite: the trajectory passed the goal)."""
    from synthetic_suite import make_world, suite_text, trajectory

    root = make_world(tmp_path / "w")
    conn = root / "data" / "connectivity" / "scanA_connectivity.json"
    nodes = json.loads(conn.read_text())
    for node in nodes:
        node["unobstructed"].append(False)
        node["visible"].append(False)
    pose = [1.0, 0, 0, 30.0, 0, 1.0, 0, 30.0, 0, 0, 1.0, 1.5, 0, 0, 0, 1.0]
    nodes.append({"image_id": "scanA_iso", "pose": pose, "included": True, "unobstructed": [False] * (len(nodes) + 1)})
    nodes[-1]["visible"] = nodes[-1]["unobstructed"]
    conn.write_text(json.dumps(nodes))
    preds = json.loads((root / "runs" / "oracle.json").read_text())
    astray = [k for k, p in enumerate(preds) if p["trajectory"][0][0].startswith("scanA")][:3]
    for k in astray:  # the oracle's path, then a step to a viewpoint nothing connects to
        preds[k]["trajectory"] = preds[k]["trajectory"] + trajectory(["scanA_iso"])
    (root / "runs" / "iso.json").write_text(json.dumps(preds))
    (root / "s.toml").write_text(
        suite_text({"oracle": "oracle.json", "iso": "iso.json"}, "resamples = 200\nbaseline_walks = 0\n")
    )
    ds = S.run(root / "s.toml", None, progress=False)["datasets"]["grid_val"]
    left = {m: v["left_out"] for m, v in ds["agents"]["iso"].items() if v["left_out"]}
    assert left == {"pl": 3, "ne": 3, "ad": 3, "md": 3, "dtw": 3}
    assert ds["agents"]["iso"]["ne"]["mean"] == 0.0 and ds["agents"]["iso"]["sr"]["mean"] == pytest.approx(117 / 120)
    assert {c["metric"]: c["dropped"] for c in ds["comparisons"] if c["dropped"]} == left
    # navdtw score keeps the evaluators' mean (inf) and says so
    args = [
        "score",
        "--split",
        str(root / "data" / "split.json"),
        "--connectivity",
        str(root / "data" / "connectivity"),
    ]
    assert (
        main([*args, "--predictions", str(root / "runs" / "iso.json"), "--out", str(tmp_path / "s"), "--no-figures"])
        == 0
    )
    assert "iso.json: unreachable goals: PL inf on 3 episode(s), NE inf on 3 episode(s)" in capsys.readouterr().err
