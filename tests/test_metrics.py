"""navdtw.evaluate (every navigation metric, every convention) against the plain per-episode twin
in tests/naive_metrics.py, plus hand-built cases where the conventions differ, the degenerate
inputs documented in navdtw.metrics, the Scores API, and an acceptance run on real R2R data.
"""

from __future__ import annotations

import math

import hypothesis.extra.numpy as hnp
import naive_metrics as nm
import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import shortest_path

import navdtw
from navdtw import METRICS, Paths, evaluate

PROPS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
NODE_CONVENTIONS = ("paper", "r2r", "r4r", "duet")
ALL_CONVENTIONS = (*NODE_CONVENTIONS, "vlnce")
EXACT = ("sr", "osr")


def assert_matches(scores, expected, context="", tol=1e-9):
    """Every metric of ``expected`` (naive) equals the implementation's: sr/osr exactly, the rest
    to rel/abs ``tol`` (inf must meet inf); and nothing is NaN. Coordinate cases use tol=1e-6:
    the twin measures distances by the same float32 rule but sums and averages in its own order
    (and FastDTW's coarse levels differ in rounding)."""
    assert set(scores.keys()) == set(expected), context
    for k, want in expected.items():
        got = scores[k]
        assert got.dtype == np.float64, k
        assert not np.isnan(got).any(), f"{context}: {k} has NaN: {got}"
        assert not np.isnan(want).any(), f"{context}: naive {k} has NaN: {want}"
        if k in EXACT:
            np.testing.assert_array_equal(got, want, err_msg=f"{context}: {k}")
        else:
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=f"{context}: {k}")


# --------------------------------------------------------------------------------------------
# strategies
# --------------------------------------------------------------------------------------------


@st.composite
def graph_distances(draw, max_nodes=7):
    """A random undirected weighted graph (often several components) -> float32 [V, V]
    shortest-path matrix with inf between components."""
    v = draw(st.integers(1, max_nodes))
    weights = draw(
        st.sampled_from(
            [
                st.integers(1, 4).map(float),  # integer weights: exact ties with the threshold
                st.floats(0.0625, 6.0, allow_nan=False, width=32),
            ]
        )
    )
    pairs = [(i, j) for i in range(v) for j in range(i + 1, v)]
    adj = np.zeros((v, v))
    if pairs:
        for i, j in draw(st.lists(st.sampled_from(pairs), unique=True, max_size=len(pairs))):
            adj[i, j] = adj[j, i] = draw(weights)
    d = shortest_path(csr_matrix(adj), directed=False)
    return d.astype(np.float32)


@st.composite
def node_path(draw, v, start=None, max_len=6, within=None):
    """Random node sequence (not necessarily a walk); ``within``: the nodes allowed."""
    pool = list(range(v)) if within is None else [int(x) for x in within]
    nodes = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=max_len))
    if start is not None:
        nodes[0] = start
    # repeated consecutive nodes (an agent turning in place)
    reps = draw(st.lists(st.integers(1, 3), min_size=len(nodes), max_size=len(nodes)))
    if not draw(st.booleans()):
        reps = [1] * len(nodes)
    return np.array([n for n, k in zip(nodes, reps) for _ in range(k)], dtype=np.int64)


@st.composite
def node_episodes(draw):
    mats = draw(st.lists(graph_distances(), min_size=1, max_size=3))
    b = draw(st.integers(1, 5))
    env, refs, qrys = [], [], []
    for _ in range(b):
        k = draw(st.integers(0, len(mats) - 1))
        v = mats[k].shape[0]
        # references stay inside one connected component (finite length, as every real reference);
        # queries may wander anywhere, unreachable nodes included. References of infinite length
        # are covered by test_reference_of_infinite_length_* below.
        start = draw(st.integers(0, v - 1))
        r = draw(node_path(v, start=start, within=np.flatnonzero(np.isfinite(mats[k][start]))))
        same_start = draw(st.booleans())
        q = draw(node_path(v, start=int(r[0]) if same_start else None, max_len=8))
        env.append(k)
        refs.append(r)
        qrys.append(q)
    return mats, np.array(env, dtype=np.int64), refs, qrys


THRESHOLDS = st.one_of(st.sampled_from([3.0, 1.0, 2.0, 0.5]), st.floats(0.125, 10.0, allow_nan=False, width=32))


@st.composite
def extras(draw, b):
    """Optional ``stopped`` mask and ``shortest_distance`` override."""
    stopped = draw(st.none() | st.lists(st.booleans(), min_size=b, max_size=b).map(np.array))
    shortest = draw(
        st.none()
        | st.lists(st.sampled_from([0.0, 1.0, 2.5, 7.0]) | st.floats(0, 20, width=32), min_size=b, max_size=b).map(
            lambda x: np.array(x, np.float64)
        )
    )
    return stopped, shortest


COORD = st.one_of(st.integers(-3, 3).map(float), st.floats(-6, 6, allow_nan=False, width=32))


@st.composite
def coord_episodes(draw):
    dim = draw(st.sampled_from([2, 3]))
    b = draw(st.integers(1, 4))
    refs, qrys = [], []
    for _ in range(b):
        n = draw(st.integers(1, 7))
        m = draw(st.integers(1, 9))
        r = draw(hnp.arrays(np.float32, (n, dim), elements=COORD))
        q = draw(hnp.arrays(np.float32, (m, dim), elements=COORD))
        if draw(st.booleans()):
            q[0] = r[0]
        refs.append(r)
        qrys.append(q)
    return refs, qrys


# --------------------------------------------------------------------------------------------
# every metric, every convention, against the twin
# --------------------------------------------------------------------------------------------


@PROPS
@given(node_episodes(), THRESHOLDS, st.data())
def test_nodes_match_naive_every_convention(case, threshold, data):
    mats, env, refs, qrys = case
    stopped, shortest = data.draw(extras(len(refs)))
    for conv in NODE_CONVENTIONS:
        scores = evaluate(
            refs,
            qrys,
            distances=mats,
            env=env,
            threshold=threshold,
            convention=conv,
            stopped=stopped,
            shortest_distance=shortest,
        )
        want = nm.batch(
            refs,
            qrys,
            matrices=mats,
            env=env,
            rules=nm.RULES[conv],
            threshold=threshold,
            stopped=stopped,
            shortest_distance=shortest,
        )
        assert_matches(scores, want, conv)


@PROPS
@given(node_episodes(), THRESHOLDS, st.sampled_from(["start_goal", "shortest", "reference_length"]), st.booleans())
def test_custom_convention_without_collapse_matches_naive(case, threshold, spl_length, inclusive):
    mats, env, refs, qrys = case
    conv = navdtw.Convention("raw", inclusive, spl_length, collapse_repeats=False)
    scores = evaluate(refs, qrys, distances=mats, env=env, threshold=threshold, convention=conv)
    want = nm.batch(
        refs, qrys, matrices=mats, env=env, threshold=threshold, rules=nm.Rules(inclusive, spl_length, collapse=False)
    )
    assert_matches(scores, want, "raw")


@PROPS
@given(coord_episodes(), THRESHOLDS, st.data())
def test_coordinates_match_naive_every_convention(case, threshold, data):
    refs, qrys = case
    stopped, shortest = data.draw(extras(len(refs)))
    for conv in ALL_CONVENTIONS:
        scores = evaluate(refs, qrys, threshold=threshold, convention=conv, stopped=stopped, shortest_distance=shortest)
        fast = None
        if conv == "vlnce":  # VLN-CE's nDTW: FastDTW radius 1, repeated positions dropped
            fast = [navdtw.dtw(r, np.array(nm.drop_repeated_positions(q)), radius=1) for r, q in zip(refs, qrys)]
        rows = [
            nm.episode(
                r,
                q,
                rules=nm.RULES[conv],
                threshold=threshold,
                stopped=True if stopped is None else bool(stopped[i]),
                shortest_distance=None if shortest is None else shortest[i],
                dtw_value=None if fast is None else fast[i],
            )
            for i, (r, q) in enumerate(zip(refs, qrys))
        ]
        want = {k: np.array([row[k] for row in rows]) for k in rows[0]}
        assert "sed" not in want
        assert_matches(scores, want, conv, tol=1e-6)


@PROPS
@given(node_episodes(), st.sampled_from(NODE_CONVENTIONS))
def test_multi_env_batch_equals_per_env_calls(case, conv):
    mats, env, refs, qrys = case
    together = evaluate(refs, qrys, distances=mats, env=env, convention=conv)
    for k in np.unique(env):
        sel = np.flatnonzero(env == k)
        alone = evaluate([refs[i] for i in sel], [qrys[i] for i in sel], distances=mats[k], convention=conv)
        for m in together:
            np.testing.assert_array_equal(together[m][sel], alone[m], err_msg=m)


@PROPS
@given(node_episodes(), st.sampled_from([1, 2, -1]))
def test_results_do_not_depend_on_workers(case, workers):
    mats, env, refs, qrys = case
    a = evaluate(refs, qrys, distances=mats, env=env, workers=1)
    b = evaluate(refs, qrys, distances=mats, env=env, workers=workers)
    for m in a:
        np.testing.assert_array_equal(a[m], b[m])


def test_naive_twin_hand_computed():
    # line graph 0 -1- 1 -2- 2 (metres)
    d = np.array([[0, 1, 3], [1, 0, 2], [3, 2, 0]], np.float32)
    got = nm.episode([0, 1, 2], [0, 2], matrix=d, rules=nm.RULES["paper"])
    assert got["pl"] == 3.0 and got["ne"] == 0.0 and got["sr"] == 1.0
    assert got["dtw"] == 1.0  # (0,0)=0, (1,0) or (1,1)=1, (2,1)=0
    assert got["ad"] == 0.0 and got["md"] == 0.0
    assert got["sed"] == pytest.approx(1 - 2 / 2)  # edges (0,1),(1,2) vs (0,2): substitute + delete
    pc = (2 + math.exp(-1 / 3)) / 3  # node 1 is 1 m from the query
    assert got["cls"] == pytest.approx(pc * pc)  # PL(R) = PL(Q) = 3: LS = a / PL(Q) = PC
    assert nm.levenshtein("kitten", "sitting") == 3


# --------------------------------------------------------------------------------------------
# the paper's order-sensitivity example (Ilharco et al. 2019)
# --------------------------------------------------------------------------------------------


def test_order_sensitivity_cls_blind_ndtw_not():
    a, b, c = 0, 1, 2
    d = np.array([[0, 2, 2], [2, 0, 2], [2, 2, 0]], np.float32)  # equilateral triangle, 2 m sides
    ref = [a, b, c, a]
    q1, q2 = [a, c, b, a], [a, b, c, a]
    s = evaluate([ref, ref], [q1, q2], distances=d)
    assert s["cls"][0] == s["cls"][1] == 1.0
    assert s["ndtw"][0] < s["ndtw"][1] == 1.0
    assert s["dtw"][1] == 0.0 and s["dtw"][0] > 0.0


# --------------------------------------------------------------------------------------------
# where the conventions differ
# --------------------------------------------------------------------------------------------

# line graph 0 -3- 1 -3- 2
LINE3 = np.array([[0, 3, 6], [3, 0, 3], [6, 3, 0]], np.float32)


def test_ne_equal_to_threshold():
    for conv, want in (("paper", 1.0), ("r4r", 1.0), ("r2r", 0.0), ("duet", 0.0)):
        s = evaluate([[0, 1]], [[0]], distances=LINE3, convention=conv)
        assert s["ne"][0] == 3.0
        assert s["sr"][0] == want, conv
        assert s["osr"][0] == want, conv
    r = [np.array([[0.0, 0.0], [3.0, 0.0]])]
    q = [np.array([[0.0, 0.0]])]
    for conv, want in (("paper", 1.0), ("r4r", 1.0), ("r2r", 0.0), ("duet", 0.0), ("vlnce", 0.0)):
        s = evaluate(r, q, convention=conv)
        assert s["ne"][0] == 3.0 and s["sr"][0] == want, conv


# Issue 19: a float64 distance says 1 - 1.77e-12 < 1; the float32 rule (docs/metrics.md) says 1.0.
AT_THRESHOLD = (
    [np.array([[0, 0], [0, 1.77e-12]], np.float32)],
    [np.array([[0, 0], [0, 1]], np.float32)],
)


@PROPS
@given(coord_episodes(), THRESHOLDS)
@example(case=AT_THRESHOLD, threshold=1.0)
def test_success_compares_the_float32_distance(case, threshold):
    """SR and OSR are the convention's comparison of the NE and ONE that navdtw reports, and those
    are the float32-rule distances (the twin's), bit for bit, under every convention."""
    refs, qrys = case
    for conv in ALL_CONVENTIONS:
        s = evaluate(refs, qrys, threshold=threshold, convention=conv, metrics=["ne", "one", "sr", "osr"])
        ne = [nm.euclidean(r[-1], q[-1]) for r, q in zip(refs, qrys)]
        one = [min(nm.euclidean(r[-1], p) for p in q) for r, q in zip(refs, qrys)]
        np.testing.assert_array_equal(s["ne"], ne, err_msg=conv)
        np.testing.assert_array_equal(s["one"], one, err_msg=conv)
        below = np.less_equal if nm.RULES[conv].inclusive else np.less
        np.testing.assert_array_equal(s["sr"], below(ne, threshold), err_msg=conv)
        np.testing.assert_array_equal(s["osr"], below(one, threshold), err_msg=conv)


def test_float32_rule_at_the_threshold():
    """The issue's case by hand: d = 1.0 exactly in float32, so `<` fails and `<=` succeeds."""
    refs, qrys = AT_THRESHOLD
    assert 1.0 - float(refs[0][-1, 1]) < 1.0  # a float64 distance would be below the threshold
    for conv, want in (("r2r", 0.0), ("vlnce", 0.0), ("duet", 0.0), ("paper", 1.0), ("r4r", 1.0), ("ndh", 0.0)):
        s = evaluate(refs, qrys, threshold=1.0, convention=conv)
        assert s["ne"][0] == 1.0 and s["sr"][0] == want, conv
    # REVERIE's success is an input, but a registered metric's distance test is still the
    # convention's: `<`, as its evaluator
    within = navdtw.registry.Metric(
        "within", "WITHIN", lambda c: c.success(c.stat("ne")), rate=True, stats=("ne",), description="ne < d_th"
    )
    with navdtw.registry.registered(within):
        for conv, want in (("reverie", 0.0), ("paper", 1.0)):
            s = evaluate(refs, qrys, threshold=1.0, convention=conv, inputs={"success": [1], "oracle_success": [1]})
            assert s["sr"][0] == 1.0 and s["within"][0] == want, conv


# triangle 0-1 (1 m), 1-2 (1 m), 0-2 (1.5 m)
TRI = np.array([[0, 1, 1.5], [1, 0, 1], [1.5, 1, 0]], np.float32)


def test_reference_not_a_shortest_path_spl_r2r_vs_duet():
    ref, qry = [0, 1, 2], [0, 1, 2]  # reference length 2 m, shortest start-goal 1.5 m
    r2r = evaluate([ref], [qry], distances=TRI, convention="r2r")
    duet = evaluate([ref], [qry], distances=TRI, convention="duet")
    assert r2r["spl"][0] == pytest.approx(1.5 / 2.0, rel=1e-12)
    assert duet["spl"][0] == 1.0
    assert r2r.efficiency()[0] == pytest.approx(0.75)
    # the shortcut query is perfectly efficient under both
    for conv in ("r2r", "duet"):
        assert evaluate([ref], [[0, 2]], distances=TRI, convention=conv)["spl"][0] == 1.0


def test_paper_spl_length_from_query_start():
    d = shortest_path(csr_matrix(np.diag([1.0, 1.0, 1.0], 1)), directed=False).astype(np.float32)  # 0-1-2-3
    ref, qry = [1, 2, 3], [0, 1, 2, 3]  # the query starts one node before the reference
    paper = evaluate([ref], [qry], distances=d, convention="paper")
    r2r = evaluate([ref], [qry], distances=d, convention="r2r")
    assert paper["spl"][0] == 1.0  # l = d(q_1, r_last) = 3 = pl
    assert r2r["spl"][0] == pytest.approx(2.0 / 3.0, rel=1e-12)  # l = d(r_1, r_last) = 2


def test_strict_names_the_episode():
    refs, qrys = [[0, 1], [0, 1]], [[0, 1], [1, 2]]
    evaluate(refs, qrys, distances=LINE3)  # scored as is by default
    with pytest.raises(ValueError, match=r"episode 1 \(b\).*does not start"):
        evaluate(refs, qrys, distances=LINE3, strict=True, ids=["a", "b"])
    with pytest.raises(ValueError, match="episode 1"):
        evaluate(refs, qrys, distances=LINE3, strict=True)
    evaluate(refs, [[0, 1], [0, 2]], distances=LINE3, strict=True)
    r = [np.zeros((2, 2)), np.zeros((2, 2))]
    q = [np.zeros((1, 2)), np.ones((1, 2))]
    with pytest.raises(ValueError, match="episode 1"):
        evaluate(r, q, strict=True)


def test_stopped_mask():
    refs, qrys = [[0, 1], [0, 1], [0, 1]], [[0, 1], [0, 1], [0, 2]]
    s = evaluate(refs, qrys, distances=LINE3, stopped=[True, False, True])
    np.testing.assert_array_equal(s["sr"], [1.0, 0.0, 1.0])
    for k in ("spl", "sed", "sdtw"):
        assert s[k][1] == 0.0 and s[k][0] > 0.0, k
    np.testing.assert_array_equal(s["osr"], [1.0, 1.0, 1.0])  # oracle success ignores stop
    full = evaluate(refs, qrys, distances=LINE3)
    for k in ("pl", "ne", "ndtw", "cls", "dtw"):
        np.testing.assert_array_equal(s[k], full[k])
    np.testing.assert_array_equal(s.spl_curve([10.0]), [np.mean(s["spl"])])
    evaluate(refs, qrys, distances=LINE3, stopped=np.array([1, 0, 1]))
    with pytest.raises(ValueError, match="one entry per episode"):
        evaluate(refs, qrys, distances=LINE3, stopped=[True, False])
    with pytest.raises(TypeError):
        evaluate(refs, qrys, distances=LINE3, stopped=[0.5, 1.0, 1.0])
    # integers other than 0 and 1 are not a mask: 2 is not read as "stopped"
    with pytest.raises(TypeError, match="stopped must be a boolean mask"):
        evaluate(refs, qrys, distances=LINE3, stopped=[1, 0, 2])


def test_shortest_distance_overrides_l():
    ref, qry = [0, 1, 2], [0, 1, 2]
    base = evaluate([ref], [qry], distances=TRI, convention="r2r")
    s = evaluate([ref], [qry], distances=TRI, convention="r2r", shortest_distance=[1.0])
    assert base["spl"][0] == pytest.approx(0.75)
    assert s["spl"][0] == pytest.approx(0.5)
    assert evaluate([ref], [qry], distances=TRI, convention="r2r", shortest_distance=[5.0])["spl"][0] == 1.0
    # ignored where the convention's l is not the shortest distance
    assert evaluate([ref], [qry], distances=TRI, convention="duet", shortest_distance=[1.0])["spl"][0] == 1.0
    assert evaluate([ref], [qry], distances=TRI, convention="paper", shortest_distance=[1.0])["spl"][0] == 0.75
    for bad in ([1.0, 2.0], [-1.0], [math.nan]):
        with pytest.raises(ValueError, match="shortest_distance"):
            evaluate([ref], [qry], distances=TRI, convention="r2r", shortest_distance=bad)
    for bad in ([1.0], [[1.0], [2.0]]):  # too few for two episodes; not one number each
        with pytest.raises(ValueError, match=r"shortest_distance must have one entry per episode \(2\)"):
            evaluate([ref] * 2, [qry] * 2, distances=TRI, convention="r2r", shortest_distance=bad)
    # the message names the first bad entry
    for bad, k in (([1.0, -1.0], 1), ([math.nan, 1.0], 0), ([2.0, 0.0, math.nan], 2)):
        with pytest.raises(ValueError, match=rf"^shortest_distance\[{k}\] is negative or NaN$"):
            evaluate([ref] * len(bad), [qry] * len(bad), distances=TRI, convention="r2r", shortest_distance=bad)


def test_metric_subset_and_errors():
    s = evaluate([[0, 1]], [[0, 2]], distances=LINE3, metrics=["ndtw", "SR", "pl"])
    assert s.keys() == ["pl", "sr", "ndtw"]  # canonical order, case-insensitive
    full = evaluate([[0, 1]], [[0, 2]], distances=LINE3)
    assert full.keys() == list(METRICS)
    for k in s:
        np.testing.assert_array_equal(s[k], full[k])
    assert evaluate([[0, 1]], [[0, 2]], distances=LINE3, metrics="cls").keys() == ["cls"]
    with pytest.raises(ValueError, match="unknown metric"):
        evaluate([[0, 1]], [[0, 2]], distances=LINE3, metrics=["ndtw", "bleu"])
    with pytest.raises(KeyError, match="spl"):
        s["spl"]
    coords = [np.zeros((2, 3))]
    assert "sed" not in evaluate(coords, coords)
    with pytest.raises(ValueError, match="sed"):
        evaluate(coords, coords, metrics=["sed"])
    with pytest.raises(ValueError, match="unknown convention"):
        evaluate(coords, coords, convention="habitat")
    with pytest.raises(ValueError, match="vlnce"):
        evaluate([[0, 1]], [[0, 2]], distances=LINE3, convention="vlnce")


def test_scores_api(tmp_path):
    refs = [[0, 1], [0, 1, 2], [0]]
    qrys = [[0, 1], [0, 2], [2]]
    ids = ["1_0", "1_1", "2_0"]
    s = evaluate(refs, qrys, distances=LINE3, ids=ids, convention="r2r")
    assert len(s) == 3 and "ndtw" in s and "bleu" not in s
    summ = s.summary()
    pct = s.summary(percent=True)
    assert list(summ) == list(METRICS)
    for k in METRICS:
        assert summ[k] == pytest.approx(float(np.mean(s[k])), rel=1e-15)
        scale = 100.0 if k in ("sr", "osr", "spl", "sed", "cls", "ndtw", "sdtw") else 1.0
        assert pct[k] == pytest.approx(summ[k] * scale, rel=1e-15), k
    assert pct["pl"] == summ["pl"] and pct["ne"] == summ["ne"] and pct["dtw"] == summ["dtw"]
    assert "r2r" in repr(s)

    d = s.to_dict()
    d["ndtw"][:] = -1
    assert (s["ndtw"] >= 0).all()  # copies

    recs = s.to_records()
    assert [r["id"] for r in recs] == ids
    assert recs[1]["ne"] == pytest.approx(float(s["ne"][1]))
    assert list(recs[0]) == ["id", *list(METRICS)]

    out = tmp_path / "scores.csv"
    assert s.to_csv(out) == out  # a pathlib.Path when writing a file
    text = s.to_csv()
    assert out.read_text() == text
    lines = text.splitlines()
    assert lines[0] == ",".join(["id", *list(METRICS)])
    assert len(lines) == 4 and lines[3].startswith("2_0,")
    no_ids = evaluate(refs, qrys, distances=LINE3)
    assert no_ids.to_csv().splitlines()[0] == ",".join(METRICS)
    assert "id" not in no_ids.to_records()[0]
    with pytest.raises(ValueError, match="ids"):
        evaluate(refs, qrys, distances=LINE3, ids=["a"])

    # Anderson et al.'s auxiliary measures
    eff = s.efficiency()
    l = np.array([3.0, 6.0, 0.0])  # r2r: d(r_1, r_last)
    pl = s["pl"]
    np.testing.assert_allclose(eff, [1.0, 1.0, 1.0])  # third: l = 0 = pl: documented ratio 1
    np.testing.assert_allclose(pl, [3.0, 6.0, 0.0])
    nne = s.normalized_ne()
    np.testing.assert_array_equal(nne[:2], s["ne"][:2] / l[:2])
    assert nne[2] == math.inf  # l = 0 < ne = 6


def test_scores_api_efficiency_single_node():
    s = evaluate([[0]], [[2]], distances=LINE3, convention="r2r")
    assert s["pl"][0] == 0.0
    assert s.efficiency()[0] == 1.0  # l = 0 and pl = 0: documented ratio 1
    assert s.normalized_ne()[0] == math.inf
    same = evaluate([[0]], [[0]], distances=LINE3, convention="r2r")
    assert same.normalized_ne()[0] == 0.0 and same.efficiency()[0] == 1.0


def test_to_pandas():
    pytest.importorskip("pandas")
    s = evaluate([[0, 1]], [[0, 2]], distances=LINE3, ids=["x"])
    df = s.to_pandas()
    assert list(df.columns) == ["id", *list(METRICS)]
    assert df["ndtw"].iloc[0] == s["ndtw"][0]


@PROPS
@given(
    node_episodes(),
    st.sampled_from(NODE_CONVENTIONS),
    st.lists(st.floats(0.05, 12.0, allow_nan=False), min_size=1, max_size=8),
)
def test_spl_curve_monotone_and_consistent(case, conv, taus):
    mats, env, refs, qrys = case
    taus = sorted(taus)
    s = evaluate(refs, qrys, distances=mats, env=env, convention=conv)
    curve = s.spl_curve(taus)
    assert curve.shape == (len(taus),)
    assert not np.isnan(curve).any()
    assert (np.diff(curve) >= 0).all()
    for tau, value in zip(taus, curve):
        direct = evaluate(refs, qrys, distances=mats, env=env, convention=conv, threshold=tau, metrics=["spl"])
        assert value == pytest.approx(float(np.mean(direct["spl"])), rel=1e-12, abs=1e-15)


def test_spl_curve_bad_threshold():
    s = evaluate([[0, 1]], [[0, 2]], distances=LINE3)
    with pytest.raises(ValueError, match="threshold"):
        s.spl_curve([1.0, -1.0])
    with pytest.raises(ValueError, match="threshold"):
        evaluate([[0, 1]], [[0, 2]], distances=LINE3, threshold=0.0)


# --------------------------------------------------------------------------------------------
# degenerate inputs
# --------------------------------------------------------------------------------------------


def test_single_node_reference_and_query():
    for conv in NODE_CONVENTIONS:
        s = evaluate([[1]], [[1]], distances=LINE3, convention=conv)
        want = {
            "pl": 0,
            "ne": 0,
            "one": 0,
            "sr": 1,
            "osr": 1,
            "spl": 1,
            "sed": 1,
            "cls": 1,
            "ad": 0,
            "md": 0,
            "dtw": 0,
            "ndtw": 1,
            "sdtw": 1,
        }
        if conv == "duet":  # DUET / HAMT: l / max(pl, l, 0.01) = 0 / 0.01
            want["spl"] = 0
        assert {k: float(s[k][0]) for k in METRICS} == want, conv
    s = evaluate([[0]], [[1]], distances=LINE3)  # 3 m apart, threshold 3 (paper: <=)
    assert s["sr"][0] == 1.0 and s["sed"][0] == 1.0
    assert s["cls"][0] == pytest.approx(math.exp(-1.0), rel=1e-12)  # PC = e^-1, LS = 1 (both lengths 0)
    assert s["ndtw"][0] == pytest.approx(math.exp(-1.0), rel=1e-12)
    assert s["spl"][0] == 1.0  # l = d(q_1, r_last) = 3, pl = 0


def test_repeated_nodes_are_one_node():
    a = evaluate([[0, 1, 2]], [[0, 1, 2]], distances=LINE3)
    b = evaluate([[0, 0, 1, 1, 1, 2]], [[0, 1, 1, 2, 2, 2]], distances=LINE3)
    for k in METRICS:
        assert a[k][0] == b[k][0], k
    assert b["ndtw"][0] == 1.0 and b["sed"][0] == 1.0 and b["cls"][0] == 1.0
    # single-node after collapsing
    s = evaluate([[2, 2, 2]], [[2, 2]], distances=LINE3)
    assert s["sed"][0] == 1.0 and s["ndtw"][0] == 1.0


def test_unreachable_nodes():
    d = np.array([[0, 1, np.inf], [1, 0, np.inf], [np.inf, np.inf, 0]], np.float32)
    refs = [[0, 1], [0, 1], [0, 2], [2]]
    qrys = [[2], [0, 2, 1], [0, 1], [0, 1]]
    for conv in NODE_CONVENTIONS:
        s = evaluate(refs, qrys, distances=d, convention=conv)
        for k in METRICS:
            assert not np.isnan(s[k]).any(), (conv, k)
        # query stranded in another component
        assert s["ne"][0] == math.inf and s["sr"][0] == 0 and s["osr"][0] == 0
        assert s["ndtw"][0] == 0 and s["sdtw"][0] == 0 and s["spl"][0] == 0 and s["sed"][0] == 0
        assert s["dtw"][0] == math.inf and s["cls"][0] == 0
        assert s["ad"][0] == math.inf and s["md"][0] == math.inf
        # query passing through an unreachable node but ending at the goal
        assert s["pl"][1] == math.inf and s["ne"][1] == 0 and s["sr"][1] == 1
        assert s["spl"][1] == 0 and s["cls"][1] == 0 and s["ndtw"][1] == 0 and s["sdtw"][1] == 0
        # reference crossing components (l = inf): never NaN
        assert s["ne"][2] == math.inf and s["sr"][2] == 0
        assert s["ne"][3] == math.inf and s["spl"][3] == 0
    want = nm.batch(refs, qrys, matrix=d, rules=nm.RULES["r2r"])
    assert_matches(evaluate(refs, qrys, distances=d, convention="r2r"), want, "r2r")


def test_mixed_path_kinds_message():
    with pytest.raises(ValueError, match="both be node paths"):
        evaluate([[0], [1]], [np.zeros((1, 2)), np.zeros((1, 2))], distances=LINE3)


# Two nodes in different components: a reference 0 -> 1 has infinite length.
SPLIT2 = np.array([[0, np.inf], [np.inf, 0]], np.float32)
SPLIT3 = np.array([[0, np.inf, np.inf], [np.inf, 0, np.inf], [np.inf, np.inf, 0]], np.float32)


@pytest.mark.parametrize(
    "refs, qrys, dist",
    [
        ([[0, 1]], [[0, 1]], SPLIT2),  # inf - inf
        ([[0, 1]], [[2]], SPLIT3),
    ],  # pc = 0: 0 * inf
    ids=["subtract", "multiply"],
)
def test_reference_of_infinite_length_no_warning(refs, qrys, dist):
    s = evaluate(refs, qrys, distances=dist)
    assert s["cls"][0] == 0.0


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
def test_reference_of_infinite_length_cls_documented_zero():
    s = evaluate([[0, 1]], [[0, 1]], distances=SPLIT2)
    assert s["pl"][0] == math.inf
    assert s["cls"][0] == 0.0  # docstring: "cls falls to 0 where the query's length is infinite"


def test_empty_inputs_raise():
    with pytest.raises(ValueError, match="empty"):
        evaluate([], [], distances=LINE3)
    with pytest.raises(ValueError, match=r"queries\[1\] is empty"):
        evaluate(Paths.from_list([[0], [1]]), Paths(np.array([0]), np.array([0, 1, 1])), distances=LINE3)
    with pytest.raises(ValueError, match=r"references\[0\] is empty"):
        evaluate(Paths(np.zeros(0, np.int64), np.array([0, 0])), [[1]], distances=LINE3)
    with pytest.raises(ValueError, match="differ in length"):
        evaluate([[0], [1]], [[1]], distances=LINE3)
    with pytest.raises(ValueError):
        evaluate([[0], [1]], [np.zeros((1, 2)), np.zeros((1, 2))], distances=LINE3)
    with pytest.raises(ValueError, match="node"):
        evaluate([[0], [1]], [[0], [1]])  # node paths without distances
    with pytest.raises(ValueError, match="node id 5"):
        evaluate([[0, 5]], [[0]], distances=LINE3)


# --------------------------------------------------------------------------------------------
# real data
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def r2r_unseen(data_dir, connectivity_dir):
    from navdtw import datasets

    split = datasets.load_r2r(data_dir / "r2r" / "R2R_val_unseen.json")
    scans = sorted({e["scan"] for e in split})
    graphs = navdtw.load_connectivity(connectivity_dir, scans)
    records = datasets.instructions(split)
    preds = datasets.load_predictions(
        data_dir / "matterport3dsimulator" / "web" / "app" / "val_unseen_shortest_agent.json"
    )
    matched = datasets.match_predictions(records, preds, graphs, strict=True)
    return graphs, matched


@pytest.mark.data
def test_acceptance_shortest_agent_r2r(r2r_unseen):
    graphs, matched = r2r_unseen
    assert len(matched) == 2349
    s = evaluate(
        matched.references,
        matched.queries,
        graphs=graphs,
        env=matched.env,
        convention="r2r",
        shortest_distance=matched.shortest_distance,
        ids=matched.ids,
        strict=True,
    )
    summ = s.summary()
    assert summ["sr"] == 1.0
    # distances are float32: the summed steps and the start-goal distance round differently
    # (0.99999998807); the R2R evaluator, in float64, prints 1.0
    assert summ["spl"] == pytest.approx(1.0, abs=1e-6)
    assert (s["spl"] > 1 - 1e-6).all() and (s["spl"] <= 1.0).all()
    assert summ["ne"] == 0.0
    assert summ["pl"] == pytest.approx(9.479686302659548, abs=1e-4)
    # distances= gives the same numbers as graphs=
    s2 = evaluate(
        matched.references,
        matched.queries,
        distances=matched.distances,
        env=matched.env,
        convention="r2r",
        shortest_distance=matched.shortest_distance,
    )
    for k in METRICS:
        np.testing.assert_array_equal(s[k], s2[k])
    for k in METRICS:
        assert not np.isnan(s[k]).any(), k


@pytest.mark.data
def test_real_multi_scan_batch_equals_per_scan(r2r_unseen):
    graphs, matched = r2r_unseen
    # queries: the references of other instructions on the same scan, reversed (non-trivial scores)
    refs = list(matched.references)
    env = matched.env
    qrys = []
    for i in range(len(refs)):
        same = np.flatnonzero(env == env[i])
        j = same[(np.searchsorted(same, i) + 7) % len(same)]
        qrys.append(refs[j][::-1].copy())
    assert len(np.unique(env)) >= 5
    together = evaluate(refs, qrys, graphs=graphs, env=env, convention="r2r")
    assert 0.0 < together.summary()["ndtw"] < 1.0
    for k in np.unique(env):
        sel = np.flatnonzero(env == k)
        alone = evaluate(
            [refs[i] for i in sel], [qrys[i] for i in sel], distances=graphs.graphs[int(k)].distances, convention="r2r"
        )
        for m in METRICS:
            np.testing.assert_array_equal(together[m][sel], alone[m], err_msg=m)
    # spot check against the twin
    pick = np.arange(0, len(refs), 97)
    want = nm.batch(
        [refs[i] for i in pick],
        [qrys[i] for i in pick],
        matrices=graphs.distances,
        env=env[pick],
        rules=nm.RULES["r2r"],
    )
    assert_matches(
        evaluate([refs[i] for i in pick], [qrys[i] for i in pick], graphs=graphs, env=env[pick], convention="r2r"),
        want,
        "real",
    )


def test_first_start_mismatch_is_the_strict_check():
    from navdtw.paths import Paths, first_start_mismatch

    refs = Paths.from_list([np.array([0, 1]), np.array([2, 3]), np.array([1])])
    assert first_start_mismatch(refs, refs) == -1
    qrys = Paths.from_list([np.array([0, 1]), np.array([3, 3]), np.array([2])])
    assert first_start_mismatch(refs, qrys) == 1
    d = np.abs(np.subtract.outer(np.arange(4.0), np.arange(4.0)))
    with pytest.raises(ValueError, match=r"episode 1 \(b\): the query does not start"):
        navdtw.evaluate(refs, qrys, distances=d, strict=True, ids=["a", "b", "c"])
    pts = Paths.from_list([np.zeros((2, 3)), np.ones((1, 3))])
    moved = Paths.from_list([np.zeros((2, 3)), np.ones((1, 3)) + 1e-3])
    assert first_start_mismatch(pts, pts) == -1 and first_start_mismatch(pts, moved) == 1


def test_per_episode_inputs_come_in_pairs_and_are_checked():
    # LINE3: nodes 0, 1, 2 at 0, 3 and 6 m; the query stops at node 1, 3 m from the goal
    refs, qrys = [[0, 1, 2], [0, 1, 2]], [[0, 1], [0, 1, 2]]
    plain = evaluate(refs, qrys, distances=LINE3, convention="r2r")
    assert plain["ne"].tolist() == [3.0, 0.0] and plain["sr"].tolist() == [0.0, 1.0]  # r2r: 3.0 m is not < 3.0 m
    # the given distances replace NE and ONE, and the success tests on them
    s = evaluate(
        refs,
        qrys,
        distances=LINE3,
        convention="r2r",
        inputs={"distance_to_goal": [2.0, 3.0], "oracle_distance_to_goal": [2.0, 1.0]},
    )
    assert s["ne"].tolist() == [2.0, 3.0] and s["one"].tolist() == [2.0, 1.0]
    assert s["sr"].tolist() == [1.0, 0.0] and s["osr"].tolist() == [1.0, 1.0]
    # given success flags replace the distance tests; the goal distances alone leave them
    flags = evaluate(refs, qrys, distances=LINE3, inputs={"success": [0, 1], "oracle_success": [1, 1]})
    assert flags["sr"].tolist() == [0.0, 1.0] and flags["osr"].tolist() == [1.0, 1.0]
    for only in ({"success": [1, 1]}, {"oracle_success": [1, 1]}):
        with pytest.raises(ValueError, match=r"replace the distance tests together; got only \['"):
            evaluate(refs, qrys, distances=LINE3, inputs=only)
    # the oracle distance is the least along the path: it may equal the final one, never exceed it
    with pytest.raises(
        ValueError, match=r"^inputs\['oracle_distance_to_goal'\]\[1\] exceeds inputs\['distance_to_goal'\]"
    ):
        evaluate(
            refs, qrys, distances=LINE3, inputs={"distance_to_goal": [1.0, 2.0], "oracle_distance_to_goal": [1.0, 2.5]}
        )


def test_normalized_ne_is_infinite_for_any_positive_ne_when_l_is_zero():
    # the reference starts at its goal (l = 0): 0.5 m, 2 m and 0 m from it
    ref = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 0.0]], np.float32)
    qrys = [np.array([[0.0, 0.0], [0.5, 0.0]]), np.array([[0.0, 0.0], [2.0, 0.0]]), np.array([[0.0, 0.0]])]
    s = evaluate([ref] * 3, qrys, convention="r2r")
    assert s["ne"].tolist() == [0.5, 2.0, 0.0]
    assert s.normalized_ne().tolist() == [math.inf, math.inf, 0.0]


def test_summary_groups_and_its_table_show_rates_in_percent():
    refs, qrys = [[0, 1, 2], [0, 1, 2]], [[0, 1], [0, 1, 2]]
    s = evaluate(refs, qrys, distances=LINE3, convention="r2r", metrics=["ne", "sr"])
    summary = s.summary()
    assert summary == {"ne": 1.5, "sr": 0.5}
    html = summary._repr_html_()
    assert "50.00" in html and "1.50" in html and "150.00" not in html  # SR in percent, NE in metres
    assert ">%<" in html and ">m<" in html
    assert s.summary(percent=True) == {"ne": 1.5, "sr": 50.0}
    assert "50.00" in s.summary(percent=True)._repr_html_()  # already percent: not x100 again
    # keyword-only: s.summary(True) must not silently mean percent (seed 20261129's survivor)
    with pytest.raises(TypeError):
        s.summary(True)
    by = {"all": {"ne": 1.5, "sr": 0.5}, "a": {"ne": 0.0, "sr": 1.0}, "b": {"ne": 3.0, "sr": 0.0}}
    assert s.summary(by=["b", "a"]) == by
    with pytest.raises(ValueError, match=r"no per-episode column 'language' to group by \(groups: none\)"):
        s.summary(by="language")


def test_inputs_of_the_wrong_length_or_shape_are_refused():
    refs, qrys = [[0, 1, 2], [0, 1, 2]], [[0, 1], [0, 1, 2]]
    for short in ([1.0], np.array([1.0])):
        with pytest.raises(ValueError, match=r"inputs\['distance_to_goal'\] must have one entry per episode \(2\)"):
            evaluate(
                refs, qrys, distances=LINE3, inputs={"distance_to_goal": short, "oracle_distance_to_goal": [1.0, 1.0]}
            )
    column = [[1.0], [2.0]]  # two entries, but not one number each
    with pytest.raises(ValueError, match=r"inputs\['distance_to_goal'\] must be one distance \(metres\) per episode"):
        evaluate(
            refs, qrys, distances=LINE3, inputs={"distance_to_goal": column, "oracle_distance_to_goal": [1.0, 1.0]}
        )


def test_to_csv_writes_the_file_and_takes_columns_by_keyword(tmp_path):
    s = evaluate([[0, 1, 2]], [[0, 1]], distances=LINE3, convention="r2r", metrics=["ne", "sr"], ids=["7_0"])
    out = s.to_csv(path=tmp_path / "sub" / "episodes.csv", columns={"split": ["val"]})
    assert out == tmp_path / "sub" / "episodes.csv"
    assert out.read_text() == "split,ne,sr\nval,3.0,0.0\n"  # the columns lead instead of id
    assert s.to_csv() == "id,ne,sr\n7_0,3.0,0.0\n"
    with pytest.raises(TypeError):
        s.to_csv(None, {"split": ["val"]})  # columns is keyword-only


def test_columns_of_another_length_or_a_metric_name_are_refused():
    s = evaluate([[0, 1, 2]] * 2, [[0, 1], [0, 1, 2]], distances=LINE3, convention="r2r", metrics=["ne", "sr"])
    assert s.to_records(columns={"split": ["a", "b"]}) == [
        {"split": "a", "ne": 3.0, "sr": 0.0},
        {"split": "b", "ne": 0.0, "sr": 1.0},
    ]
    # one entry short would drop an episode, one too many would be cut: both refused, in both outputs
    for values in (["a"], ["a", "b", "c"]):
        message = rf"^column 'split' has {len(values)} entries for 2 episodes$"
        with pytest.raises(ValueError, match=message):
            s.to_records(columns={"split": values})
        with pytest.raises(ValueError, match=message):
            s.to_csv(columns={"split": values})
    # a column named as a metric would write the header twice
    with pytest.raises(ValueError, match=r"^column 'ne' has the name of a metric$"):
        s.to_csv(columns={"ne": [1, 2]})


def test_summary_shows_fractions_in_percent_unless_told_they_already_are():
    from navdtw.metrics import Summary

    records = {"sr": navdtw.registry.get("sr"), "ne": navdtw.registry.get("ne")}
    html = Summary({"sr": 0.5, "ne": 1.5}, records=records)._repr_html_()  # percent=False by default
    assert "50.00" in html and "1.50" in html and "0.50" not in html
    html = Summary({"sr": 50.0}, records=records, percent=True)._repr_html_()
    assert "50.00" in html and "5000.00" not in html
    with pytest.raises(TypeError):
        Summary({"sr": 0.5}, records)  # records and percent are keyword-only


def test_conventions_are_frozen_and_hashable():
    import dataclasses

    r2r = navdtw.CONVENTIONS["r2r"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        r2r.success_inclusive = True
    assert not r2r.success_inclusive
    # hashable and equal by value: usable as a key (e.g. a cache of matched episodes per convention)
    same = navdtw.Convention("r2r", False, "shortest", source="Matterport3DSimulator tasks/R2R/eval.py")
    assert {r2r: 1}[same] == 1 and hash(same) == hash(r2r)


def test_convention_refuses_an_unknown_spl_length():
    with pytest.raises(ValueError, match=r"^convention 'mine': spl_length must be one of start_goal, shortest, "):
        navdtw.Convention("mine", True, "shortst")


def test_duet_spl_floor():
    # DUET / HAMT divide by max(pl, l, 0.01): a 0.5 m episode walked exactly keeps SPL 1 (not 0.5 / 1.01),
    # and l = 0 with pl = 0.005 m gives 0 / 0.01
    ref = np.array([[0.0, 0.0], [0.5, 0.0]], np.float32)
    stay = np.array([[0.0, 0.0], [0.005, 0.0], [0.0, 0.0]], np.float32)
    s = evaluate([ref, stay[:1]], [ref, stay], convention="duet", metrics=["pl", "sr", "spl"])
    assert s["pl"].tolist() == [0.5, pytest.approx(0.01)] and s["sr"].tolist() == [1.0, 1.0]
    assert s["spl"][0] == 1.0 and s["spl"][1] == 0.0
    assert s.efficiency()[0] == 1.0


def test_reverie_convention_requires_the_success_inputs():
    refs, qrys = [[0, 1, 2]], [[0, 1, 2]]
    with pytest.raises(ValueError, match=r"success"):
        evaluate(refs, qrys, distances=LINE3, convention="reverie")
    s = evaluate(refs, qrys, distances=LINE3, convention="reverie", inputs={"success": [0], "oracle_success": [1]})
    assert s["ne"][0] == 0.0 and s["sr"][0] == 0.0 and s["osr"][0] == 1.0  # the inputs, not the distance test
