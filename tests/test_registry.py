"""The metric registry (navdtw.registry) and the public API's one-rule-each decisions: a toy metric
added through the registry reaches evaluate, summary(), the CLI table and episodes.csv; the success
boundary of every entry point; nested-list matrices; empty paths; the docs' generated table."""

from __future__ import annotations

import csv
import math
import re
from pathlib import Path

import numpy as np
import pytest

import navdtw
from navdtw import _core, registry
from navdtw.cli import format_table, main
from navdtw.graphs import GraphSet, NavGraph
from navdtw.registry import Metric

REPO = Path(__file__).resolve().parents[1]

# A 4 x 4 grid graph with 1 m edges: shortest distances are Manhattan distances, exact in float32.
GRID = np.array([[abs(a // 4 - b // 4) + abs(a % 4 - b % 4) for b in range(16)] for a in range(16)], np.float32)
REF = np.array([0, 1, 2, 3])  # along row 0 to node 3 = (0, 3)
AT = np.array([0, 4, 5])  # ends at node 5 = (1, 1): exactly 3.0 m from node 3
assert GRID[3, 5] == 3.0


def _toy(**kw) -> Metric:
    """A toy metric from the C++ statistics: the length ratio PL(Q) / PL(R)."""
    kw.setdefault("description", "toy: PL(Q) / PL(R)")
    return Metric(
        "toy",
        "TOY",
        lambda c: registry.safe_ratio(c.stat("pl_query"), c.stat("pl_reference"), both_zero=1.0),
        stats=("pl_query", "pl_reference"),
        **kw,
    )


# --------------------------------------------------------------------------------------------
# registry
# --------------------------------------------------------------------------------------------


def test_builtin_records_match_engine_and_metrics():
    assert registry.builtin_names() == registry.names()
    # navdtw.METRICS: the built-in metrics every pair of paths gets (no extra per-episode inputs)
    # (and no conventions of their own: softspl is computed by default under habitat's ObjectNav ones only)
    got = tuple(m for m in registry.builtin_names() if not (registry.get(m).inputs or registry.get(m).conventions))
    assert got == navdtw.METRICS
    goat = {"task_success", "composite_success", "partial_success", "composite_spl", "composite_softspl"}
    goat |= {f"{m}_success" for m in ("object", "image", "description")}
    outcomes = {"collision_rate", "fall_rate", "stuck_rate"}
    lhvln = {"isr", "subtasks", "csr", "cgt", "tar", "tar_subtasks"}  # LH-VLN's, from its records
    assert (
        set(registry.builtin_names()) - set(navdtw.METRICS)
        == {"gp", "rgs", "rgspl", "softspl", *lhvln} | goat | outcomes
    )
    assert set(_core.STATS) >= {s for m in registry.metrics() for s in m.stats}
    rates = {m.name for m in registry.metrics() if m.rate}
    want = {"sr", "osr", "spl", "sed", "cls", "ndtw", "sdtw", "rgs", "rgspl", "isr", "csr", "cgt", "tar", "softspl"}
    assert rates == want | goat | outcomes
    # the pooled ratios name their weights, which are metrics of their own
    weighted = {m.name: m.weight for m in registry.metrics() if m.weight is not None}
    assert weighted == {"isr": "subtasks", "tar": "tar_subtasks"}
    assert all(w in registry.names() for w in weighted.values())
    metres = {m.name for m in registry.metrics() if m.unit == "m"}
    assert metres == {"pl", "ne", "one", "ad", "md", "dtw", "gp"}
    assert registry.get("pl").higher_is_better is None
    assert registry.get("ndtw").label == "nDTW" and registry.get("ne").header == "NE (m)"


def test_toy_metric_reaches_evaluate_summary_table_and_csv(tmp_path, capsys):
    s0 = navdtw.evaluate([REF, REF], [AT, REF], distances=GRID)
    assert "toy" not in s0
    with registry.registered(_toy(unit="x")):
        s = navdtw.evaluate([REF, REF], [AT, REF], distances=GRID)
        assert s.keys() == [*navdtw.METRICS, "toy"]
        np.testing.assert_array_equal(s["toy"], [2.0 / 3.0, 1.0])
        for k in navdtw.METRICS:
            assert np.array_equal(s[k], s0[k])
        assert s.summary()["toy"] == pytest.approx(5.0 / 6.0)
        assert s.to_csv().splitlines()[0].endswith(",sdtw,toy")
        table = format_table([("run", 2, s.summary())], label="agent")
        head, units = table.splitlines()[:2]
        assert head.split()[-1] == "TOY" and units.split()[-1] == "x"
        # the command's table and episodes.csv
        assert main(["demo", "--pairs", "10", "--out", str(tmp_path / "demo"), "--no-figures"]) == 0
        out = capsys.readouterr().out
        assert "TOY" in out.splitlines()[4]
        with open(tmp_path / "demo" / "episodes.csv") as f:
            rows = list(csv.DictReader(f))
        assert len(rows) == 10 and "toy" in rows[0] and float(rows[0]["toy"]) > 0
    assert "toy" not in registry.names()  # gone after the block


def test_metric_with_extra_inputs():
    found = np.array([True, False])
    rgs = Metric(
        "rgs_toy",
        "RGS",
        lambda c: c.input("found").astype(np.float64),
        rate=True,
        higher_is_better=True,
        inputs=("found",),
        description="toy remote grounding success",
    )
    rgspl = Metric(
        "rgspl_toy",
        "RGSPL",
        lambda c: c.input("found") * c.spl_ratio,
        rate=True,
        higher_is_better=True,
        inputs=("found",),
        stats=("pl_query",),
    )
    with registry.registered(rgs, rgspl):
        plain = navdtw.evaluate([REF, REF], [AT, REF], distances=GRID)
        assert "rgs_toy" not in plain  # inputs absent: skipped by default
        with pytest.raises(ValueError, match=r"needs the per-episode input\(s\) \['found'\]"):
            navdtw.evaluate([REF, REF], [AT, REF], distances=GRID, metrics=["rgs_toy"])
        s = navdtw.evaluate([REF, REF], [AT, REF], distances=GRID, inputs={"found": found})
        np.testing.assert_array_equal(s["rgs_toy"], [1.0, 0.0])
        assert s["rgspl_toy"][0] == pytest.approx(3.0 / 3.0 * 1.0)  # l = d(q_1, r_last) = 3, PL(Q) = 3
        assert s.summary(percent=True)["rgs_toy"] == 50.0
        with pytest.raises(ValueError, match="one entry per episode"):
            navdtw.evaluate([REF, REF], [AT, REF], distances=GRID, inputs={"found": found[:1]})
        with pytest.raises(ValueError, match="no registered metric uses the input 'fuond'"):
            navdtw.evaluate([REF, REF], [AT, REF], distances=GRID, inputs={"fuond": found})


def test_a_single_string_is_one_name():
    # stats="ne" is the statistic "ne", not the letters "n" and "e"; inputs="found" likewise
    found = np.array([True, False])
    toy = Metric("ne_toy", "NE", lambda c: c.stat("ne") * c.input("found"), stats="ne", inputs="found")
    assert toy.stats == ("ne",) and toy.inputs == ("found",)
    with registry.registered(toy):
        s = navdtw.evaluate([REF, REF], [AT, REF], distances=GRID, inputs={"found": found}, metrics=["ne_toy", "ne"])
    np.testing.assert_array_equal(s["ne_toy"], s["ne"] * found)


@pytest.mark.parametrize("episodes", [1, 3])
def test_a_metric_sees_the_batch_size(episodes):
    # ctx.size is B, the second axis of the engine's [len(STATS), B] statistics, for one episode too
    seen = Metric("batch_toy", "B", lambda c: np.full(c.size, float(c.size)), description="toy: the batch size")
    with registry.registered(seen):
        s = navdtw.evaluate([REF] * episodes, [AT] * episodes, distances=GRID, metrics=["batch_toy"])
    assert s["batch_toy"].tolist() == [float(episodes)] * episodes


def test_register_errors():
    with pytest.raises(ValueError, match="already registered"):
        registry.register_metric(registry.get("ndtw"))
    with pytest.raises(ValueError, match="built-in"):
        registry.unregister_metric("ndtw")
    with pytest.raises(ValueError, match="does not compute"):
        Metric("bad", "BAD", lambda c: c.stat("nope"), stats=("nope",))
    with pytest.raises(ValueError, match="lowercase identifier"):
        Metric("Bad", "BAD", lambda c: c.sr)
    # not an identifier, though lowercase: each test of the name on its own (seed 20261129's survivor)
    for name in ("my-metric", "1st", "", "sr at 3m"):
        with pytest.raises(ValueError, match=f"lowercase identifier, got {name!r}"):
            Metric(name, "BAD", lambda c: c.sr)
    with pytest.raises(ValueError, match="lowercase identifier, got 5"):
        Metric(5, "BAD", lambda c: c.sr)
    registry.register_metric(_toy())
    try:
        assert "toy" in navdtw.evaluate([REF], [REF], distances=GRID)
    finally:
        registry.unregister_metric("toy")
    with pytest.raises(KeyError):
        registry.unregister_metric("toy")


def test_docs_table_is_generated_from_the_registry():
    doc = REPO / "docs" / "metrics.md"
    if not doc.is_file():
        pytest.skip("docs/metrics.md is not written yet")
    text = doc.read_text(encoding="utf-8")
    m = re.search(r"<!-- metrics-table:start -->\n(.*?)<!-- metrics-table:end -->", text, re.S)
    assert m, "docs/metrics.md needs the <!-- metrics-table:start/end --> markers"
    assert m.group(1).strip() == registry.markdown_table().strip(), "paste navdtw.registry.markdown_table()"


def test_generated_tables():
    md = registry.markdown_table().splitlines()
    assert len(md) == 2 + len(registry.names()) and md[2].startswith("| `pl` | PL | m |")
    assert "sdtw" in navdtw.metrics.__doc__ and "{metrics_table}" not in navdtw.metrics.__doc__
    assert "ndtw" in registry.help_text()


# --------------------------------------------------------------------------------------------
# the success boundary: a query ending exactly 3.0 m from the reference end
# --------------------------------------------------------------------------------------------


def test_boundary_sdtw_single_and_batch():
    nd = navdtw.ndtw(REF, AT, distances=GRID)
    assert 0 < nd < 1
    assert navdtw.sdtw(REF, AT, distances=GRID) == nd  # the paper's Table 3: <=
    assert navdtw.sdtw(REF, AT, distances=GRID, inclusive=False) == 0.0
    assert navdtw.sdtw_batch([REF], [AT], distances=GRID)[0] == nd
    assert navdtw.sdtw_batch([REF], [AT], distances=GRID, inclusive=False)[0] == 0.0
    # coordinates: (0, 0) -> (3, 0) is exactly 3.0 in float32
    r, q = np.array([[0.0, 0.0]], np.float32), np.array([[3.0, 0.0]], np.float32)
    assert navdtw.sdtw(r, q) == navdtw.ndtw(r, q) > 0
    assert navdtw.sdtw(r, q, inclusive=False) == 0.0
    with pytest.raises(TypeError, match="inclusive"):
        navdtw.sdtw(r, q, inclusive="yes")


@pytest.mark.parametrize(("convention", "inside"), [("paper", 1.0), ("r4r", 1.0), ("r2r", 0.0), ("duet", 0.0)])
def test_boundary_evaluate_node_conventions(convention, inside):
    s = navdtw.evaluate([REF], [AT], distances=GRID, convention=convention)
    assert s["ne"][0] == 3.0
    assert s["sr"][0] == inside and s["osr"][0] == inside
    assert s["sdtw"][0] == inside * s["ndtw"][0]
    assert s.spl_curve([3.0])[0] == s["spl"].mean()


def test_boundary_evaluate_vlnce():
    r = [np.array([[0.0, 0.0, 0.0], [0.0, 0.0, 1.0]], np.float32)]
    q = [np.array([[0.0, 0.0, 0.0], [3.0, 0.0, 1.0]], np.float32)]
    assert navdtw.evaluate(r, q, convention="vlnce")["sr"][0] == 0.0
    assert navdtw.evaluate(r, q, convention="paper")["sr"][0] == 1.0


@pytest.mark.parametrize(("convention", "inside"), [("paper", 1.0), ("r4r", 1.0), ("r2r", 0.0), ("duet", 0.0)])
def test_boundary_random_baseline(convention, inside):
    # c's only neighbour is a, exactly 3.0 m from the goal g: every one-step walk ends at the boundary
    graph = NavGraph([[0.0, 0.0], [1.0, 0.0], [4.0, 0.0]], [[0, 1], [1, 2]], ids=["c", "a", "g"], name="s")
    split = [{"path_id": 1, "scan": "s", "path": ["c", "g"], "instructions": ["x"]}]
    got = navdtw.random_baseline(split, GraphSet([graph]), n=4, convention=convention, progress=False)
    assert got["ne"] == 3.0 and got["sr"] == inside


def test_boundary_reward_done():
    # the terminal bonus 1 - d / d_th is 0 at the boundary whichever comparison counts success
    r = [np.array([[0.0, 0.0]], np.float32)] * 2
    reward = navdtw.NDTWReward(r, success_reward=1.0)
    reward.step(np.array([[3.0, 0.0], [1.5, 0.0]], np.float32))
    np.testing.assert_array_equal(reward.done(np.array([True, True])), [0.0, 0.5])


# --------------------------------------------------------------------------------------------
# one rule each
# --------------------------------------------------------------------------------------------


def test_threshold_is_keyword_only():
    with pytest.raises(TypeError):
        navdtw.ndtw(REF, AT, 3.0, distances=GRID)
    with pytest.raises(TypeError):
        navdtw.sdtw(REF, AT, 3.0, distances=GRID)
    assert navdtw.ndtw(REF, AT, threshold=3.0, distances=GRID) == navdtw.ndtw(REF, AT, distances=GRID)


def test_workers_default_everywhere():
    import inspect

    from navdtw import distributed

    fns = [navdtw.evaluate, navdtw.dtw_batch, navdtw.ndtw_batch, navdtw.sdtw_batch, navdtw.dtw_matrix]
    fns += [navdtw.random_baseline, navdtw.NDTWReward.__init__, distributed.score_arrow]
    for fn in fns:
        assert inspect.signature(fn).parameters["workers"].default == -1, fn


def test_spl_curve_is_a_method_only():
    assert not hasattr(navdtw, "spl_curve")
    assert callable(navdtw.Scores.spl_curve)


def test_to_csv_returns_path_or_text(tmp_path):
    s = navdtw.evaluate([REF], [AT], distances=GRID, ids=["a"])
    out = s.to_csv(tmp_path / "e.csv")
    assert isinstance(out, Path) and out == tmp_path / "e.csv"
    assert out.read_text() == s.to_csv()
    assert s.to_csv(columns={"pair": [7]}).splitlines()[1].startswith("7,")


def test_nested_list_distance_matrix():
    assert navdtw.dtw([0, 1], [0, 1], distances=[[0, 1], [1, 0]]) == 0.0
    assert navdtw.dtw([0], [1], distances=[[0, 2], [2, 0]]) == 2.0
    assert navdtw.dtw_batch([[0, 1]], [[1]], distances=[[0, 1], [1, 0]])[0] == 1.0
    assert navdtw.dtw_matrix([[0]], [[1]], distances=[[0, 1], [1, 0]])[0, 0] == 1.0
    s = navdtw.evaluate([[0, 1]], [[0, 1]], distances=[[0, 1], [1, 0]])
    assert s["ndtw"][0] == 1.0
    with pytest.raises(ValueError, match="square"):
        navdtw.dtw([0], [0], distances=[[0, 1, 2], [1, 0, 1]])
    with pytest.raises(ValueError, match="negative"):
        navdtw.dtw([0], [1], distances=[[0, -1], [1, 0]])
    with pytest.raises(ValueError, match="NaN"):
        navdtw.dtw([0], [1], distances=[[0, math.nan], [1, 0]])


def test_empty_path_says_so():
    with pytest.raises(ValueError, match=r"^reference is empty \(empty path"):
        navdtw.dtw([], [0, 1], distances=GRID)
    with pytest.raises(ValueError, match=r"^query is empty \(empty path"):
        navdtw.ndtw([0, 1], [], distances=GRID)
    with pytest.raises(ValueError, match=r"queries\[1\] is empty \(empty path"):
        navdtw.dtw_batch([[0], [1]], [[0], []], distances=GRID)


def test_havln_summary_keys():
    r = navdtw.humanaware.evaluate([1, 0], [0, 2], [0, 0], [1.0, 4.0])
    assert list(r.summary()) == ["sr", "tcr", "cr", "ne"]
    assert list(r.summary(keys="havln")) == ["SR", "TCR", "CR", "NE"]


def test_goal_distance_inputs_replace_ne_and_one():
    """``distance_to_goal`` / ``oracle_distance_to_goal`` (a goal that is not the reference's last
    point, or a simulator's geodesic distance) replace NE and ONE, and every success test follows."""
    refs = [np.array([[0.0, 0.0], [4.0, 0.0]]), np.array([[0.0, 0.0], [0.0, 4.0]])]
    qrys = [np.array([[0.0, 0.0], [4.0, 0.0]]), np.array([[0.0, 0.0], [0.0, 1.0]])]
    plain = navdtw.evaluate(refs, qrys, convention="r2r")
    assert plain["sr"].tolist() == [1.0, 0.0]
    given = {"distance_to_goal": [np.inf, 2.0], "oracle_distance_to_goal": [1.0, 2.0]}
    s = navdtw.evaluate(refs, qrys, convention="r2r", inputs=given)
    assert s["ne"].tolist() == [np.inf, 2.0] and s["one"].tolist() == [1.0, 2.0]
    assert s["sr"].tolist() == [0.0, 1.0] and s["osr"].tolist() == [1.0, 1.0]
    assert s["spl"][0] == 0.0 and s["spl"][1] == pytest.approx(1.0)  # l = 4 m, PL = 1 m: capped at 1
    assert s["sdtw"].tolist() == (s["sr"] * s["ndtw"]).tolist()
    for k in ("pl", "cls", "ad", "md", "dtw", "ndtw"):  # path fidelity is about the reference, unchanged
        assert s[k].tolist() == plain[k].tolist(), k
    assert s.spl_curve([0.5, 3.0]).tolist() == [0.0, 0.5]
    for k in s:
        assert not np.isnan(s[k]).any(), k


@pytest.mark.parametrize(
    "inputs, match",
    [
        ({"distance_to_goal": [1.0]}, r"replace NE and ONE together; got only \['distance_to_goal'\]"),
        ({"distance_to_goal": [np.nan], "oracle_distance_to_goal": [1.0]}, r"\['distance_to_goal'\]\[0\] = nan"),
        ({"distance_to_goal": [1.0], "oracle_distance_to_goal": [-1.0]}, r"a distance must be >= 0"),
        ({"distance_to_goal": [1.0], "oracle_distance_to_goal": [2.0]}, r"exceeds inputs\['distance_to_goal'\]"),
        ({"distance_to_goal": ["a"], "oracle_distance_to_goal": [1.0]}, r"one distance \(metres\) per episode"),
        ({"distance_to_goal": [[1.0]], "oracle_distance_to_goal": [1.0]}, r"one distance \(metres\) per episode"),
    ],
)
def test_goal_distance_inputs_are_checked(inputs, match):
    with pytest.raises(ValueError, match=match):
        navdtw.evaluate([np.zeros((1, 2))], [np.ones((1, 2))], inputs=inputs)


# --------------------------------------------------------------------------------------------
# the registry's helpers, number by number (mutation testing, docs/development.md)
# --------------------------------------------------------------------------------------------


def test_goal_progress_is_start_minus_final_and_zero_only_where_both_are_infinite():
    start = [5.0, 2.0, np.inf, np.inf, 3.0, 0.0]
    final = [2.0, 5.0, np.inf, 1.0, np.inf, 0.0]
    np.testing.assert_array_equal(registry.goal_progress(start, final), [3.0, -3.0, 0.0, np.inf, -np.inf, 0.0])


def test_get_refuses_unknown_and_unhashable_names_with_the_list():
    for bad in ("nope", ["ndtw"], {"ndtw": 1}):
        with pytest.raises(KeyError, match=r"unknown metric .*; choose from \('pl', 'ne',"):
            registry.get(bad)


def test_nonfinite_policy_names_the_first_bad_episode_and_counts_them():
    with pytest.raises(ValueError, match=r"^x: episode b: ndtw is NaN \(2 episode\(s\)\); a NaN is not a score"):
        registry.nonfinite_policy({"ndtw": [0.5, np.nan, np.nan]}, ids=["a", "b", "c"], source="x")
    with pytest.raises(ValueError, match=r"^x: episode c: spl is NaN while sr is 1 \(1 episode\(s\)\)"):
        registry.nonfinite_policy({"sr": [0.0, 0.0, 1.0], "spl": [np.nan, 0.5, np.nan]}, ids="abc", source="x")
    out = registry.nonfinite_policy({"sr": [0.0, 1.0], "spl": [np.nan, 0.5]}, ids="ab", source="x")
    assert out["spl"].tolist() == [0.0, 0.5] and out["sr"].tolist() == [0.0, 1.0]


def test_nonfinite_policy_lets_only_distances_be_infinite():
    out = registry.nonfinite_policy({"ne": [1.0, np.inf], "dtw": [np.inf, 2.0]}, ids=[0, 1], source="x")
    assert out["ne"].tolist() == [1.0, np.inf] and out["dtw"].tolist() == [np.inf, 2.0]
    with pytest.raises(ValueError, match=r"^x: episode 1: sr is inf; only distances \(metres\) may be infinite"):
        registry.nonfinite_policy({"sr": [1.0, np.inf]}, ids=[0, 1], source="x")
    # a registered metric that is not a rate, in another unit than metres, may not be infinite either
    with registry.registered(_toy(unit="x")):
        assert not registry.get("toy").rate
        with pytest.raises(ValueError, match=r"^x: episode 0: toy is -inf; only distances"):
            registry.nonfinite_policy({"toy": [-np.inf, 1.0]}, ids=[0, 1], source="x")
    # one the registry does not know keeps its infinite values (the statistics count them)
    assert registry.nonfinite_policy({"other": [np.inf]}, ids=[0], source="x")["other"].tolist() == [np.inf]


def test_data_set_metrics_from_their_inputs():
    # a detour of 5 m to a goal 3 m away: SPL's ratio l / max(pl, l) = 3 / 5 under every convention
    detour = np.array([0, 4, 5, 6, 7, 3])
    given = {
        "object_found": [1, 1, 0],
        "region_start_distance": [3.0, 3.0, np.inf],
        "region_final_distance": [0.5, 4.0, np.inf],
    }
    s = navdtw.evaluate([REF, REF, REF], [detour, REF, detour], distances=GRID, inputs=given)
    assert s["pl"].tolist() == [5.0, 3.0, 5.0]
    assert s["rgs"].tolist() == [1.0, 1.0, 0.0]
    assert s["rgspl"].tolist() == pytest.approx([0.6, 1.0, 0.0], abs=1e-15)
    assert s["gp"].tolist() == [2.5, -1.0, 0.0]


def test_weight_names_another_column():
    with pytest.raises(ValueError, match=r"metric 'x': weight must name another metric's column, got 'x'"):
        registry.Metric("x", "X", lambda c: c.sr, weight="x")
    with pytest.raises(ValueError, match=r"weight must name another metric's column, got 'a b'"):
        registry.Metric("x", "X", lambda c: c.sr, weight="a b")
    # Scores.summary pools a weighted metric; without its weight column it is the plain mean
    rec = registry.Metric("x", "X", lambda c: c.sr, weight="w")
    w = registry.Metric("w", "W", lambda c: c.sr)
    conv = navdtw.CONVENTIONS["r2r"]
    s = navdtw.Scores({"x": np.array([1.0, 0.0, 0.5]), "w": np.array([3.0, 1.0, 0.0])}, threshold=3.0,
                      convention=conv, records={"x": rec, "w": w})  # fmt: skip
    assert s.summary()["x"] == pytest.approx(0.75) and s.summary()["w"] == pytest.approx(4 / 3)
    assert s.summary(by=["a", "a", "b"])["b"]["x"] != s.summary(by=["a", "a", "b"])["b"]["x"]  # NaN: no weight
    alone = navdtw.Scores({"x": np.array([1.0, 0.0, 0.5])}, threshold=3.0, convention=conv, records={"x": rec})
    assert alone.summary()["x"] == pytest.approx(0.5)
