"""navdtw.datasets.positions: the reader's forms and checks, the options, every metric against the
plain twin (tests/naive_positions.py), the non-finite policy, the random baseline, the command
line, suites and compare; the real R2R-CE ground truth as positions (skipped without the data)."""

from __future__ import annotations

import gzip
import json
import math
import tempfile
from pathlib import Path

import naive_positions as nv
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import navdtw
from navdtw.baseline import PositionWalker
from navdtw.cli import main
from navdtw.datasets import positions

PROPS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def jsonl(path: Path, records) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def bench_of(refs: Path, **options):
    return navdtw.datasets.open("positions", references=refs, **options)


REFS = [
    {"episode_id": "a", "path": [[0, 0, 0], [4, 0, 0], [4, 0, 4]], "path_id": 7, "scene": "s1"},
    {"episode_id": 12, "path": [[1, 1, 0], [1, 5, 0]], "goal": [1, 6, 0], "geodesic_distance": 6.5, "path_id": 7},
    {"episode_id": "c", "path": [[2, 2, 2]], "geodesic_distance": "Infinity"},
]
PREDS = [
    {"episode_id": "a", "path": [[0, 0, 0], [3, 0, 0], [3, 0, 3]]},
    {"episode_id": "12", "path": [[1, 1, 0], [1, 3, 0], [1, 4, 0]], "distance_to_goal": 2.5},
    {"episode_id": "c", "path": [[2, 2, 2], [2, 2, 3]], "distance_to_goal": "Infinity"},
]


def _json_refs():
    """REFS as JSON would hold them (the string 'Infinity' stands for the JSON token)."""
    return [{k: (math.inf if v == "Infinity" else v) for k, v in r.items()} for r in REFS]


def _json_preds():
    return [{k: (math.inf if v == "Infinity" else v) for k, v in r.items()} for r in PREDS]


@pytest.fixture
def small(tmp_path):
    refs = jsonl(tmp_path / "refs.jsonl", _json_refs())
    preds = jsonl(tmp_path / "preds.jsonl", _json_preds())
    return refs, preds


# --------------------------------------------------------------------------------------------
# reading
# --------------------------------------------------------------------------------------------


def test_every_form_reads_alike(tmp_path):
    want = positions.load_positions(jsonl(tmp_path / "a.jsonl", _json_refs()))
    assert [r["episode_id"] for r in want] == ["a", "12", "c"]
    assert want[0]["path"].dtype == np.float64 and want[0]["path"].shape == (3, 3)
    assert want[1]["goal"].tolist() == [1, 6, 0] and want[1]["geodesic_distance"] == 6.5
    assert want[2]["geodesic_distance"] == math.inf and want[0]["path_id"] == "7" and want[0]["scene"] == "s1"
    as_list = tmp_path / "b.json"
    as_list.write_text(json.dumps(_json_refs()))
    keyed = tmp_path / "c.json"
    keyed.write_text(
        json.dumps({str(r["episode_id"]): {k: v for k, v in r.items() if k != "episode_id"} for r in _json_refs()})
    )
    gz = tmp_path / "d.jsonl.gz"
    gz.write_bytes(gzip.compress((tmp_path / "a.jsonl").read_bytes()))
    for source in (as_list, keyed, gz, _json_refs()):
        got = positions.load_positions(source)
        assert [r["episode_id"] for r in got] == ["a", "12", "c"]
        for g, w in zip(got, want):
            assert set(g) - {"where"} == set(w) - {"where"}
            np.testing.assert_array_equal(g["path"], w["path"])
    bare = tmp_path / "e.json"  # {episode_id: path}
    bare.write_text(json.dumps({"a": [[0, 0], [1, 1]], "7": [[2, 2]]}))
    assert [r["path"].shape for r in positions.load_positions(bare)] == [(2, 2), (1, 2)]
    one = jsonl(tmp_path / "f.jsonl", [_json_refs()[0]])  # one record: a JSON object, not a list
    assert [r["episode_id"] for r in positions.load_positions(one)] == ["a"]
    # the object form an episode a line (VLN-CE's {episode_id: [steps]} appended as it goes), as
    # JSON Lines and as the list watch gives the reader (issue 36 item 7)
    lines = [{"a": [{"position": [0, 0], "stop": False}, {"position": [1, 1], "stop": True}]}, {"7": [[2, 2]]}]
    for source in (jsonl(tmp_path / "g.jsonl", lines), lines):
        got = positions.load_positions(source)
        assert [(r["episode_id"], r["path"].shape) for r in got] == [("a", (2, 2)), ("7", (1, 2))]
        assert got[0]["stop"].called and "stop" not in got[1]


# Each: (file contents as text, the message's pattern). The message names the file and the entry.
BAD_FILES = [
    ('{"episode_id": 1}\n', r"x\.jsonl: line 1 \(episode_id 1\): missing 'path'"),
    ('{"episode_id": 1, "path": []}\n', r"x\.jsonl: line 1 \(episode_id 1\): 'path' is empty"),
    (
        '{"episode_id": 1, "path": [[0, 0, 0]]}\n{"episode_id": 2, "path": [[0, 0]]}\n',
        r"line 2 \(episode_id 2\): 'path' has 2-D points; the file's points are 3-D \(line 1\)",
    ),
    ('{"episode_id": 1, "path": [[0, NaN, 0]]}\n', r"line 1 \(episode_id 1\): 'path' point 0 is not finite"),
    ('{"episode_id": 1, "path": [[0, 0, 0], [Infinity, 0, 0]]}\n', r"'path' point 1 is not finite"),
    ('{"episode_id": 1, "path": [[0, 0, 1e300]]}\n', r"'path' point 0 has a coordinate beyond"),
    (
        '{"episode_id": 1, "path": [[0, 0, 0], [0, 0]]}\n',
        r"line 1 \(episode_id 1\): 'path' must be a list of \[x, y\] or \[x, y, z\] points: "
        r"point 1 has 2 coordinates, point 0 has 3",
    ),
    ('{"episode_id": 1, "path": [[0, 0, 0, 0]]}\n', r"'path' must be a list of \[x, y\] or \[x, y, z\] points"),
    ('{"episode_id": 1, "path": [["a", 0]]}\n', r"'path' must be a list of"),
    ('{"episode_id": 1, "path": "0 0"}\n', r"'path' is a str, not a list of points"),
    (
        '{"episode_id": 1, "path": [[0, 0]]}\n{"episode_id": "1", "path": [[0, 0]]}\n',
        r"line 2 \(episode_id 1\): duplicate episode_id \(also line 1\)",
    ),
    ('{"episode_id": 1.5, "path": [[0, 0]]}\n', r"line 1: 'episode_id' must be a string or an integer, got 1\.5"),
    ('{"path": [[0, 0]]}\n', r"line 1: 'episode_id' must be a string or an integer, got None"),
    ('{"episode_id": 1, "path": [[0, 0]], "geodesic_distance": -1}\n', r"'geodesic_distance' must be a distance >= 0"),
    (
        '{"episode_id": 1, "path": [[0, 0]], "geodesic_distance": NaN}\n',
        r"'geodesic_distance' must be a distance >= 0 .*got nan",
    ),
    ('{"episode_id": 1, "path": [[0, 0]], "distance_to_goal": true}\n', r"'distance_to_goal' must be a distance"),
    ('{"episode_id": 1, "path": [[0, 0]], "goal": [0, 0, 0]}\n', r"'goal' has 3 coordinates, the path's points 2"),
    ('{"episode_id": 1, "path": [[0, 0]], "goal": [NaN, 0]}\n', r"'goal' is not finite"),
    ('{"episode_id": 1, "path": [[0, 0]], "goal": 5}\n', r"'goal' must be a point \[x, y\] or \[x, y, z\], got 5"),
    ('{"episode_id": 1, "path": [[0, 0]], "scene": 3}\n', r"'scene' must be a string"),
    ('{"episode_id": 1, "path": [[0, 0]]}\n{"episode_id": 2, "path": [[0, 0]\n', r"x\.jsonl: line 2: malformed JSON"),
    ("[1, 2]", r"x\.jsonl: entry 0: expected an object with 'episode_id' and 'path', got int"),
    ("3", r"x\.jsonl: expected JSON Lines of records"),
    ("", r"x\.jsonl: malformed JSON"),
    ("[]", r"x\.jsonl: no records"),
    ('{"1": {"episode_id": 2, "path": [[0, 0]]}}', r"entry 0 \(key 1\): 'episode_id' 2 differs"),
]


@pytest.mark.parametrize("text, pattern", BAD_FILES, ids=[p[:40] for _, p in BAD_FILES])
def test_malformed_files_name_the_file_and_entry(tmp_path, text, pattern):
    bad = tmp_path / "x.jsonl"
    bad.write_text(text)
    with pytest.raises(ValueError, match=pattern):
        positions.load_positions(bad)


# --------------------------------------------------------------------------------------------
# matching and the command line on hostile input
# --------------------------------------------------------------------------------------------

GOOD_REFS = [{"episode_id": 1, "path": [[0, 0, 0], [1, 0, 0]]}, {"episode_id": 2, "path": [[0, 0, 0], [0, 0, 1]]}]
GOOD_PREDS = [{"episode_id": 1, "path": [[0, 0, 0]]}, {"episode_id": 2, "path": [[0, 0, 1]]}]

# (which file is bad, its records, the message's pattern); the other file is GOOD_*.
HOSTILE = [
    (
        "refs",
        [{"episode_id": 1, "path": [[0, 0, 0]]}, {"episode_id": 2}],
        r"refs\.jsonl: line 2 \(episode_id 2\): missing 'path'",
    ),
    (
        "refs",
        [{"episode_id": 1, "path": [[0, 0, 0]]}, {"episode_id": 2, "path": [[0, 0]]}],
        r"refs\.jsonl: line 2 \(episode_id 2\): 'path' has 2-D points",
    ),
    (
        "refs",
        [{"episode_id": 1, "path": [[0, 0, math.nan]]}, GOOD_REFS[1]],
        r"refs\.jsonl: line 1 \(episode_id 1\): 'path' point 0 is not finite",
    ),
    ("refs", [GOOD_REFS[0], GOOD_REFS[0]], r"refs\.jsonl: line 2 \(episode_id 1\): duplicate episode_id"),
    ("refs", [GOOD_REFS[0], {"episode_id": 2, "path": []}], r"refs\.jsonl: line 2 \(episode_id 2\): 'path' is empty"),
    (
        "preds",
        [*GOOD_PREDS, {"episode_id": 9, "path": [[0, 0, 0]]}],
        r"preds\.jsonl: line 3 \(episode_id 9\): no such episode in refs\.jsonl",
    ),
    (
        "preds",
        [GOOD_PREDS[0], GOOD_PREDS[0], GOOD_PREDS[1]],
        r"preds\.jsonl: line 2 \(episode_id 1\): duplicate episode_id",
    ),
    (
        "preds",
        [GOOD_PREDS[0]],
        r"preds\.jsonl: no prediction for episode_id 2 \(1 in all\) of the 2 episodes of refs\.jsonl",
    ),
    (
        "preds",
        [{"episode_id": 1, "path": [[0, 0]]}, {"episode_id": 2, "path": [[0, 1]]}],
        r"preds\.jsonl: line 1 \(episode_id 1\): 2-D points; the references \(refs\.jsonl\) are 3-D",
    ),
    (
        "preds",
        [GOOD_PREDS[0], {"episode_id": 2, "path": [[0, 0, 0], [0, 0, 0], [math.nan, 0, 0]]}],
        r"preds\.jsonl: line 2 \(episode_id 2\): 'path' point 2 is not finite",
    ),
    (
        "preds",
        [GOOD_PREDS[0], {"episode_id": 2, "path": []}],
        r"preds\.jsonl: line 2 \(episode_id 2\): 'path' is empty",
    ),
    (
        "preds",
        [GOOD_PREDS[0], {"episode_id": 2, "path": [[0, 0, 0]], "distance_to_goal": -0.5}],
        r"preds\.jsonl: line 2 \(episode_id 2\): 'distance_to_goal' must be a distance >= 0",
    ),
]


@pytest.mark.parametrize("which, records, pattern", HOSTILE, ids=[h[2][:50] for h in HOSTILE])
def test_hostile_inputs_one_line_exit_2(tmp_path, capsys, which, records, pattern):
    refs = jsonl(tmp_path / "refs.jsonl", records if which == "refs" else GOOD_REFS)
    preds = jsonl(tmp_path / "preds.jsonl", records if which == "preds" else GOOD_PREDS)
    with pytest.raises(ValueError, match=pattern):
        bench_of(refs).match(preds)
    args = ["score", "--dataset", "positions", "--references", str(refs), "--predictions", str(preds)]
    assert main([*args, "--out", str(tmp_path / "out"), "--no-figures"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("navdtw: error: ") and "Traceback" not in err[0], err
    assert any(f in err[0] for f in ("refs.jsonl", "preds.jsonl")), err


def test_options_are_checked(tmp_path):
    flat = jsonl(tmp_path / "flat.jsonl", [{"episode_id": 1, "path": [[0, 0], [1, 1]]}])
    with pytest.raises(ValueError, match=r"--dims xz needs 3-D points; flat\.jsonl has 2-D points"):
        bench_of(flat, dims="xz")
    with pytest.raises(ValueError, match=r"--distance: must be one of euclidean, geodesic"):
        bench_of(flat, distance="manhattan")
    with pytest.raises(ValueError, match=r"convention 'paper' does not apply to positions"):
        bench_of(flat).match(flat, convention="paper")


# --------------------------------------------------------------------------------------------
# scores: the twin, the policy, the options
# --------------------------------------------------------------------------------------------


def _twin_options(convention: str) -> dict:
    return {"inclusive": convention == "r4r", "fast": convention == "vlnce"}


def assert_twin(scores, want, tol=1e-9):
    assert set(scores.keys()) == set(want), (scores.keys(), want.keys())
    for k in want:
        got = scores[k]
        assert not np.isnan(got).any(), k
        np.testing.assert_allclose(got, want[k], rtol=tol, atol=tol, err_msg=k)


@pytest.mark.parametrize("distance", ["euclidean", "geodesic"])
@pytest.mark.parametrize("convention", ["r2r", "r4r", "vlnce"])
def test_small_case_matches_twin(small, distance, convention):
    refs, preds = small
    bench = bench_of(refs, distance=distance)
    scores = bench.evaluate(bench.match(preds, convention=convention), convention=convention, threshold=3.0)
    assert list(scores.keys()) == [
        "pl",
        "ne",
        "one",
        "sr",
        "osr",
        "spl",
        "cls",
        "ad",
        "md",
        "dtw",
        "ndtw",
        "sdtw",
        "gp",
    ]
    want = nv.batch(_json_refs(), _json_preds(), distance=distance, threshold=3.0, **_twin_options(convention))
    assert_twin(scores, want)


def test_goal_and_geodesic_rules_by_hand(small):
    refs, preds = small
    e = bench_of(refs).evaluate(bench_of(refs).match(preds))
    g = bench_of(refs, distance="geodesic")
    s = g.evaluate(g.match(preds))
    # episode "12": the goal [1, 6, 0] is not the path's end; the agent stops at [1, 4, 0]
    assert e["ne"][1] == 2.0 and e["one"][1] == 2.0 and e["sr"][1] == 1.0
    assert s["ne"][1] == 2.5 and s["one"][1] == 2.0  # the given geodesic NE; ONE = min(ONE, NE)
    # SPL's l: the straight line from the start to the goal (5 m), or the given geodesic 6.5 m
    assert e["spl"][1] == 5.0 / 5.0 and s["spl"][1] == 6.5 / 6.5
    assert e["gp"][1] == 5.0 - 2.0 and s["gp"][1] == 6.5 - 2.5
    # episode "c": the goal is unreachable (Infinity): NE inf, no success, SPL 0, never NaN
    assert s["ne"][2] == math.inf and s["sr"][2] == 0.0 and s["spl"][2] == 0.0 and s["sdtw"][2] == 0.0
    assert s["gp"][2] == 0.0  # l and NE both infinite
    assert e["ne"][2] == 1.0 and e["sr"][2] == 1.0  # straight lines only by default
    for k in s:
        assert not np.isnan(s[k]).any(), k


def test_dims_select_coordinates(tmp_path):
    rng = np.random.default_rng(3)
    refs3 = [{"episode_id": k, "path": rng.normal(size=(5, 3)).tolist()} for k in range(6)]
    preds3 = [{"episode_id": k, "path": rng.normal(size=(4, 3)).tolist()} for k in range(6)]
    for dims, axes in (("xy", [0, 1]), ("xz", [0, 2]), ("yz", [1, 2])):
        refs2 = [{"episode_id": r["episode_id"], "path": np.array(r["path"])[:, axes].tolist()} for r in refs3]
        preds2 = [{"episode_id": r["episode_id"], "path": np.array(r["path"])[:, axes].tolist()} for r in preds3]
        b3 = bench_of(jsonl(tmp_path / "r3.jsonl", refs3), dims=dims)
        b2 = bench_of(jsonl(tmp_path / "r2.jsonl", refs2))
        s3 = b3.evaluate(b3.match(jsonl(tmp_path / "p3.jsonl", preds3)))
        s2 = b2.evaluate(b2.match(jsonl(tmp_path / "p2.jsonl", preds2)))
        for k in s2:
            np.testing.assert_array_equal(s3[k], s2[k], err_msg=(dims, k))
        assert_twin(s3, nv.batch(refs3, preds3, dims=tuple(axes)))


def test_notes_say_which_distances_were_used(small):
    refs, preds = small
    assert "geodesic_distance for 2 episodes: not used" in bench_of(refs).match(preds).notes[0]
    notes = bench_of(refs, distance="geodesic").match(preds).notes
    assert "geodesic_distance for 2 of 3 episodes" in notes[0] and "distance_to_goal for 2 of 3" in notes[1]


def test_cluster_of_path_ids(small, tmp_path):
    refs, _ = small
    assert bench_of(refs).cluster_of(["a", "12", "c"]) is None  # "c" has no path_id
    with_ids = jsonl(tmp_path / "ids.jsonl", [{**r, "path_id": str(k // 2)} for k, r in enumerate(_json_refs())])
    assert bench_of(with_ids).cluster_of(["a", "12", "c"]) == ["0", "0", "1"]


# --------------------------------------------------------------------------------------------
# property tests
# --------------------------------------------------------------------------------------------

COORD = st.floats(-40, 40, allow_nan=False, allow_infinity=False)
DISTANCE = st.one_of(st.floats(0, 60, allow_nan=False), st.just(math.inf), st.just(0.0))


@st.composite
def episodes(draw):
    """(references, predictions) records: 2-D or 3-D, optional goals and geodesic values."""
    dim = draw(st.sampled_from([2, 3]))
    point = st.lists(COORD, min_size=dim, max_size=dim)
    n = draw(st.integers(1, 5))
    refs, preds = [], []
    for k in range(n):
        ref = {"episode_id": f"e{k}", "path": draw(st.lists(point, min_size=1, max_size=7))}
        if draw(st.booleans()):
            ref["goal"] = draw(point)
        if draw(st.booleans()):
            ref["geodesic_distance"] = draw(DISTANCE)
        path = draw(st.lists(point, min_size=1, max_size=7))
        if draw(st.booleans()):  # an agent that stays: repeated positions
            path = path + [path[-1]] * draw(st.integers(1, 2))
        pred = {"episode_id": f"e{k}", "path": path}
        if draw(st.booleans()):
            pred["distance_to_goal"] = draw(DISTANCE)
        refs.append(ref)
        preds.append(pred)
    order = draw(st.permutations(range(n)))
    return refs, [preds[i] for i in order]  # predictions in any order


@PROPS
@given(
    episodes(),
    st.sampled_from(["euclidean", "geodesic"]),
    st.sampled_from(["r2r", "r4r"]),
    st.sampled_from([0.5, 3.0, 20.0]),
)
def test_every_metric_matches_the_twin(case, distance, convention, threshold):
    refs, preds = case
    with tempfile.TemporaryDirectory() as tmp:
        r = jsonl(Path(tmp) / "refs.jsonl", refs)
        p = Path(tmp) / "preds.json"
        p.write_text(json.dumps(preds))
        bench = bench_of(r, distance=distance)
        if (
            distance == "geodesic"
            and not any("geodesic_distance" in x for x in refs + preds)
            and not any("distance_to_goal" in x for x in preds)
        ):  # nothing geodesic given: refused, not straight lines under the name
            with pytest.raises(ValueError, match="no geodesic distance to use"):
                bench.match(p, convention=convention)
            return
        scores = bench.evaluate(bench.match(p, convention=convention), convention=convention, threshold=threshold)
    by_id = {q["episode_id"]: q for q in preds}
    want = nv.batch(
        refs,
        [by_id[x["episode_id"]] for x in refs],
        distance=distance,
        threshold=threshold,
        **_twin_options(convention),
    )
    assert_twin(scores, want)


@PROPS
@given(episodes(), st.integers(-20, 20), st.integers(-20, 20))
def test_a_flat_third_coordinate_changes_nothing(case, a, b):
    """A 2-D file and the same points with a constant third coordinate score identically
    (integer offsets keep every float32 difference exact)."""
    refs, preds = case
    if len(refs[0]["path"][0]) != 2:
        refs = [
            {**r, "path": [p[:2] for p in r["path"]], **({"goal": r["goal"][:2]} if "goal" in r else {})} for r in refs
        ]
        preds = [{**q, "path": [p[:2] for p in q["path"]]} for q in preds]

    def lift(rec, z):
        out = {**rec, "path": [[*p, z] for p in rec["path"]]}
        if "goal" in rec:
            out["goal"] = [*rec["goal"], z]
        return out

    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        flat = bench_of(jsonl(t / "r2.jsonl", refs))
        lifted = bench_of(jsonl(t / "r3.jsonl", [lift(r, a) for r in refs]))
        s2 = flat.evaluate(flat.match(jsonl(t / "p2.jsonl", preds)))
        s3 = lifted.evaluate(lifted.match(jsonl(t / "p3.jsonl", [lift(q, a) for q in preds])))
        projected = bench_of(jsonl(t / "r3b.jsonl", [lift(r, b) for r in refs]), dims="xy")
        sp = projected.evaluate(projected.match(jsonl(t / "p3b.jsonl", [lift(q, -b) for q in preds])))
    for k in s2:
        np.testing.assert_array_equal(s2[k], s3[k], err_msg=k)
        np.testing.assert_array_equal(s2[k], sp[k], err_msg=k)


# --------------------------------------------------------------------------------------------
# the random baseline
# --------------------------------------------------------------------------------------------


def test_walks_stay_in_the_reference_extent():
    rng = np.random.default_rng(1)
    refs = [np.cumsum(rng.normal(size=(int(rng.integers(2, 30)), 3)) * [1.0, 0.0, 2.0], axis=0) for _ in range(20)]
    refs.append(np.array([[1.0, 2.0, 3.0]]))  # one point: the walk stays there
    walker = PositionWalker(refs, seed=5)
    walks, ref_of = walker.walks(0, 3 * PositionWalker.BLOCK + 17)
    assert (ref_of == np.arange(len(ref_of)) % len(refs)).all()
    for w, k in zip(list(walks)[:500], ref_of[:500]):
        r = refs[k].astype(np.float32)
        w = w.astype(np.float64)
        assert len(w) == len(r) and np.array_equal(w[0], r[0])
        assert (w >= r.min(axis=0) - 1e-4).all() and (w <= r.max(axis=0) + 1e-4).all()
        assert np.allclose(w[:, 1], r[0, 1])  # a flat reference gives a flat walk
        if len(r) > 1:  # a step is never longer than the reference's mean step (reflection only shortens)
            mean_step = np.linalg.norm(np.diff(refs[k], axis=0), axis=1).mean()
            assert np.linalg.norm(np.diff(w, axis=0), axis=1).max() <= mean_step * (1 + 1e-5)
    # a walk does not depend on which chunk produced it
    again, _ = walker.walks(2 * PositionWalker.BLOCK - 3, 10)
    for j in range(10):
        np.testing.assert_array_equal(again[j], walks[2 * PositionWalker.BLOCK - 3 + j])
    other, _ = PositionWalker(refs, seed=6).walks(0, 5)
    assert not all(np.array_equal(a, b) for a, b in zip(other, walks))


@settings(max_examples=300, deadline=None)
@given(st.floats(-1e3, 1e3), st.floats(1e-3, 50))
def test_reflection_is_a_mirror_at_both_faces(u, width):
    from navdtw.baseline import _reflect

    def fold(x):
        return float(_reflect(np.array([[x]]), np.array([[width]]))[0, 0])

    r = fold(u)
    tol = 1e-9 * max(1.0, abs(u))
    assert -tol <= r <= width + tol
    if 0 <= u <= width:
        assert r == pytest.approx(u, abs=tol)
    assert fold(-u) == pytest.approx(r, abs=tol)  # the mirror at the low face
    assert fold(2 * width - u) == pytest.approx(r, abs=2 * tol + 1e-9 * width)  # and at the high face
    assert fold(0.0 * u) == 0.0


def test_baseline_is_reproducible_and_measured_to_the_goal(small):
    refs, _ = small
    bench = bench_of(refs)
    a = bench.baseline(3000, seed=2, progress=False)
    b = bench.baseline(3000, seed=2, progress=False, chunk=1000)
    assert a == b and set(a) == {"pl", "ne", "one", "sr", "osr", "spl", "cls", "ad", "md", "dtw", "ndtw", "sdtw", "gp"}
    assert bench.baseline(3000, seed=3, progress=False) != a
    # episode "12" walks stay on the segment x = 1, y in [1, 5]: the goal (y = 6) is at least 1 m away
    walker = PositionWalker(bench.references, seed=2)
    walks, ref_of = walker.walks(0, 300)
    inputs = bench.goal_inputs(walks, ref_of)
    ne = inputs["distance_to_goal"][ref_of == 1]
    assert (ne >= 1.0 - 1e-6).all() and (ne <= 5.0 + 1e-6).all()
    assert navdtw.datasets.DATASETS["positions"].has_baseline


# --------------------------------------------------------------------------------------------
# command line, suites, compare
# --------------------------------------------------------------------------------------------


def test_score_command(small, tmp_path, capsys):
    refs, preds = small
    out = tmp_path / "out"
    assert (
        main(
            [
                "score",
                "--references",
                str(refs),
                "--predictions",
                str(preds),
                "--distance",
                "geodesic",
                "--threshold",
                "20",
                "--out",
                str(out),
                "--no-figures",
            ]
        )
        == 0
    )
    text = capsys.readouterr().out
    assert "positions, 3 episodes, navdtw's positions definitions with the rules of convention 'r2r'" in text
    assert "threshold 20 m, distance geodesic, dims all." in text and "note: --distance geodesic" in text
    summary = json.loads((out / "summary.json").read_text())
    assert summary["dataset"] == "positions" and summary["threshold"] == 20.0
    assert summary["means"]["ne"] is None  # an unreachable goal: not finite
    assert summary["inputs"]["distance"] == "geodesic" and summary["inputs"]["dims"] == "all"
    rows = (out / "episodes.csv").read_text().splitlines()
    assert rows[0].startswith("episode_id,scan,pl,ne") and rows[3].split(",")[3] == "inf"


def test_the_header_names_the_definitions_and_settings_used(small, tmp_path, capsys):
    """The score header named R2R's evaluator for positions as if its graph-based scores were
    computed: it names navdtw's positions definitions, the convention whose rules they follow, and
    the distance and coordinates used."""
    refs, preds = small
    args = ["score", "--references", str(refs), "--predictions", str(preds), "--no-figures"]
    assert main([*args, "--convention", "vlnce", "--dims", "xy", "--out", str(tmp_path / "a")]) == 0
    head = capsys.readouterr().out.splitlines()[0]
    assert "navdtw's positions definitions with the rules of convention 'vlnce' (VLN-CE" in head
    assert head.endswith("threshold 3 m, distance euclidean, dims xy. Rates in percent, distances in metres")
    assert "tasks/R2R/eval.py" not in head


def test_geodesic_distances_asked_of_files_without_them_are_refused(small, tmp_path, capsys):
    """--distance geodesic where neither file gives a geodesic value exited 0 with straight lines
    and a note: it fails, naming what to give and where; one file giving them is enough (UAV-ON's
    references give SPL's l, its predictions no distance_to_goal)."""
    refs, preds = small
    bare_refs = jsonl(
        tmp_path / "bare_refs.jsonl", [{k: v for k, v in r.items() if k != "geodesic_distance"} for r in _json_refs()]
    )
    bare_preds = jsonl(
        tmp_path / "bare_preds.jsonl", [{k: v for k, v in r.items() if k != "distance_to_goal"} for r in _json_preds()]
    )
    args = ["score", "--distance", "geodesic", "--no-figures"]
    out = tmp_path / "out"
    assert main([*args, "--references", str(bare_refs), "--predictions", str(bare_preds), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert (
        "--distance geodesic: bare_refs.jsonl gives no geodesic_distance and bare_preds.jsonl no distance_to_goal"
        in err
    )
    assert '"geodesic_distance"' in err and '"distance_to_goal"' in err and "--distance euclidean" in err
    assert not (out / "summary.json").exists()
    for r, p in ((refs, bare_preds), (bare_refs, preds)):
        assert (
            main([*args, "--references", str(r), "--predictions", str(p), "--out", str(tmp_path / r.stem / p.stem)])
            == 0
        )
    with pytest.raises(ValueError, match="no geodesic distance to use"):
        bench_of(bare_refs, distance="geodesic").match(bare_preds)


def test_suite_and_compare_take_positions(small, tmp_path):
    refs, preds = small
    shifted = jsonl(
        tmp_path / "shifted.jsonl", [{**p, "path": (np.array(p["path"]) + 0.5).tolist()} for p in _json_preds()]
    )
    suite_file = tmp_path / "suite.toml"
    suite_file.write_text(
        f'[datasets.drone]\ndataset = "positions"\nreferences = "{refs.name}"\n'
        'distance = "geodesic"\nthreshold = 20.0\n'
        f'[agents.a]\ndrone = "{preds.name}"\n[agents.b]\ndrone = "{shifted.name}"\n'
        "[settings]\nresamples = 200\nbaseline_walks = 500\n"
    )
    results = navdtw.suite.run(suite_file, tmp_path / "suite_out", progress=False, report=False)
    assert results["failures"] == []
    # the notes name the suite file's key, not the command line's flag (which said --distance geodesic)
    notes = [w["message"] for w in results["warnings"] if w.get("dataset") == "drone"]
    assert any(n.startswith("distance = \"geodesic\": SPL's l is refs.jsonl's geodesic_distance") for n in notes)
    assert not any("--distance" in n for n in notes)
    ds = results["datasets"]["drone"]
    assert ds["n"] == 3 and set(ds["agents"]) >= {"a", "b"}
    out = tmp_path / "cmp"
    args = ["compare", str(preds), str(shifted), "--dataset", "positions", "--references", str(refs), "--dims", "xz"]
    assert main([*args, "--resamples", "200", "--out", str(out), "--no-progress"]) == 0
    assert (out / "results.json").is_file()


# --------------------------------------------------------------------------------------------
# real data: the R2R-CE ground truth as positions
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def r2rce_positions(data_dir, tmp_path_factory):
    base = data_dir / "r2r_vlnce" / "R2R_VLNCE_v1-3_preprocessed" / "val_unseen"
    if not base.is_dir():
        pytest.skip(f"{base} not found")
    episodes = json.loads(gzip.decompress((base / "val_unseen.json.gz").read_bytes()))["episodes"]
    gt = json.loads(gzip.decompress((base / "val_unseen_gt.json.gz").read_bytes()))
    refs = [
        {
            "episode_id": e["episode_id"],
            "path": gt[str(e["episode_id"])]["locations"],
            "geodesic_distance": e["info"]["geodesic_distance"],
            "path_id": e["trajectory_id"],
        }
        for e in episodes
    ]
    shift = np.array([0.8, 0.0, -0.5])
    shifted = [{"episode_id": r["episode_id"], "path": (np.array(r["path"]) + shift).tolist()} for r in refs]
    folder = tmp_path_factory.mktemp("positions")
    return {
        "refs": jsonl(folder / "refs.jsonl", refs),
        "same": jsonl(folder / "same.jsonl", [{"episode_id": r["episode_id"], "path": r["path"]} for r in refs]),
        "shifted": jsonl(folder / "shifted.jsonl", shifted),
        "records": (refs, shifted),
    }


@pytest.mark.data
@pytest.mark.parametrize("options", [{}, {"distance": "geodesic", "dims": "xz"}])
def test_r2rce_ground_truth_against_itself(r2rce_positions, options):
    bench = bench_of(r2rce_positions["refs"], **options)
    scores = bench.evaluate(bench.match(r2rce_positions["same"]))
    means = scores.summary()
    assert len(scores) == 1839 and means["sr"] == 1.0 and means["ndtw"] == 1.0 and means["osr"] == 1.0
    assert means["ne"] == 0.0 and means["dtw"] == 0.0 and means["cls"] == pytest.approx(1.0)


@pytest.mark.data
@pytest.mark.parametrize("options", [{}, {"distance": "geodesic"}])
def test_r2rce_shifted_copy_matches_the_twin(r2rce_positions, options):
    """Every 6th episode (307 of 1,839) against the plain twin, to 1e-9: every metric."""
    bench = bench_of(r2rce_positions["refs"], **options)
    scores = bench.evaluate(bench.match(r2rce_positions["shifted"]))
    refs, shifted = r2rce_positions["records"]
    pick = list(range(0, len(refs), 6))
    want = nv.batch([refs[i] for i in pick], [shifted[i] for i in pick], **options)
    got = {k: scores[k][pick] for k in scores}
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-9, atol=1e-9, err_msg=k)
    assert 0.5 < scores.summary()["ndtw"] < 0.95  # the shift is felt


def test_stop_flags_end_the_path_at_the_first_stop(tmp_path):
    """VLN-CE's r2r steps ({position, heading, stop}): the path ends at its first stop, the note
    counts the points after it; the scores are those of the cut path given as bare points."""
    refs = jsonl(tmp_path / "refs.jsonl", [{"episode_id": 1, "path": [[0, 0, 0], [2, 0, 0], [4, 0, 0]]}])
    steps = [
        {"position": [0, 0, 0], "heading": 0.0, "stop": False},
        {"position": [2, 0, 0], "heading": 0.0, "stop": False},
        {"position": [3, 0, 0], "heading": 0.0, "stop": True},
        {"position": [9, 0, 0], "heading": 0.0, "stop": False},
        {"position": [9, 9, 0], "heading": 0.0, "stop": True},
    ]
    flagged = tmp_path / "predictions.json"
    flagged.write_text(json.dumps({"1": steps}))
    cut = jsonl(tmp_path / "cut.jsonl", [{"episode_id": 1, "path": [[0, 0, 0], [2, 0, 0], [3, 0, 0]]}])
    bench = bench_of(refs)
    matched = bench.match(flagged)
    assert matched.queries[0].tolist() == [[0, 0, 0], [2, 0, 0], [3, 0, 0]]
    assert any("1 of 1 paths end at their first stop flag; 2 points after a stop left out" in n for n in matched.notes)
    a, b = bench.evaluate(matched), bench.evaluate(bench.match(cut))
    for m in ("pl", "ne", "sr", "ndtw"):
        assert a[m][0] == b[m][0]
    assert a["pl"][0] == 3.0 and a["ne"][0] == pytest.approx(1.0)  # not 9 m away: the points after the stop are out
    # steps without a stop: the whole path, no note; a bad flag or a step without a position: one line
    (tmp_path / "nostop.json").write_text(json.dumps({"1": [{"position": [0, 0, 0]}, {"position": [4, 0, 0]}]}))
    m2 = bench.match(tmp_path / "nostop.json")
    assert len(m2.queries[0]) == 2 and not any("stop" in n for n in m2.notes)
    (tmp_path / "bad.json").write_text(json.dumps({"1": [{"position": [0, 0, 0], "stop": "yes"}]}))
    with pytest.raises(ValueError, match=r"bad.json: entry 0 \(episode_id 1\): 'path' step 0: 'stop' must be true"):
        bench.match(tmp_path / "bad.json")
    (tmp_path / "nopos.json").write_text(json.dumps({"1": [{"position": [0, 0, 0]}, {"heading": 0}]}))
    with pytest.raises(ValueError, match=r"'path' step 1 has no 'position'"):
        bench.match(tmp_path / "nopos.json")


def test_stop_flags_without_a_stop_fail_under_vlnce_only(tmp_path):
    """A path of steps that carry stop flags but never stop: under `vlnce` no success (VLN-CE's
    Success measure requires the stop, as the R2R-CE kind does), with a note naming the episode;
    under `r2r` and `r4r` the final position is judged, as their evaluators do, and a note counts
    it. Episodes of bare points (no flags) count as stopped under every convention."""
    refs = jsonl(
        tmp_path / "refs.jsonl",
        [{"episode_id": e, "path": [[0, 0, 0], [2, 0, 0], [4, 0, 0]]} for e in ("a", "b", "c")],
    )
    never = [{"position": [0, 0, 0], "stop": False}, {"position": [4, 0, 0], "stop": False}]
    stops = [{"position": [0, 0, 0], "stop": False}, {"position": [4, 0, 0], "stop": True}]
    preds = tmp_path / "predictions.json"
    preds.write_text(json.dumps({"a": never, "b": stops, "c": [[0, 0, 0], [4, 0, 0]]}))
    bench = bench_of(refs)
    for convention, sr in (("vlnce", [0.0, 1.0, 1.0]), ("r2r", [1.0, 1.0, 1.0]), ("r4r", [1.0, 1.0, 1.0])):
        matched = bench.match(preds, convention=convention)
        scores = bench.evaluate(matched, convention=convention)
        assert scores["sr"].tolist() == sr, convention
        assert scores["ne"].tolist() == [0.0, 0.0, 0.0]  # the path is whole: no stop cut it
        (note,) = [n for n in matched.notes if "never issued stop" in n]
        assert note.startswith("predictions.json: 1 of 3 episodes never issued stop")
        assert note.endswith("episode_id a (1 in all)")
        assert ("no success" in note) == (convention == "vlnce")
    assert scores["sdtw"][0] == scores["ndtw"][0] > 0  # r4r: SDTW follows SR
    assert bench.evaluate(bench.match(preds, convention="vlnce"), convention="vlnce")["sdtw"][0] == 0.0


def test_a_misspelt_key_is_refused_and_other_keys_are_noted(tmp_path, capsys):
    """New-user F5: ``"collision": true`` (the key is ``collided``) used to score SR 100% under
    uav-on without a word. A key that looks like a misspelt known one is an error naming the file,
    the entry, the key and the closest known key; a key of its own (``scene_id``, ``instruction``)
    is read past, and a note names it."""
    refs = jsonl(tmp_path / "refs.jsonl", [{"episode_id": k, "path": [[0, 0, 0], [0, 0, 30]]} for k in range(4)])
    near = [{"episode_id": k, "path": [[0, 0, 0], [0, 0, 29]]} for k in range(4)]
    args = ["score", "--dataset", "positions", "--references", str(refs), "--no-figures", "--convention", "uav-on"]
    for key, known in (("collision", "collided"), ("Collided", "collided"), ("subtask", "subtasks"),
                       ("distance_to_gaol", "distance_to_goal"), ("Fail-Reason", "fail_reason")):  # fmt: skip
        preds = jsonl(tmp_path / "preds.jsonl", [near[0], {**near[1], key: True}, near[2], near[3]])
        capsys.readouterr()
        assert main([*args, "--predictions", str(preds), "--out", str(tmp_path / key)]) == 2, key
        err = capsys.readouterr().err
        assert f"preds.jsonl: line 2 (episode_id 1): unknown key '{key}' (did you mean '{known}'?)" in err, err
        assert len(err.strip().splitlines()) == 1 and not (tmp_path / key / "summary.json").exists()
    extra = [{**p, "scene_id": "s1", "instruction": "fly up"} for p in near[:2]] + near[2:]
    preds = jsonl(tmp_path / "preds.jsonl", [{**p, "collided": k == 3} for k, p in enumerate(extra)])
    capsys.readouterr()
    assert main([*args, "--predictions", str(preds), "--out", str(tmp_path / "ok")]) == 0
    out = capsys.readouterr().out
    assert "preds.jsonl: keys not read by navdtw, ignored: 'scene_id' (2 of 4), 'instruction' (2 of 4)" in out
    summary = json.loads((tmp_path / "ok" / "summary.json").read_text())
    assert summary["means"]["sr"] == 0.75 and summary["means"]["collision_rate"] == 0.25
    # the references' own keys: a typo refused there too, with the references file named
    jsonl(tmp_path / "refs.jsonl", [{"episode_id": 0, "path": [[0, 0, 0], [1, 0, 0]], "geodesic_distanc": 1.0}])
    with pytest.raises(ValueError, match=r"refs.jsonl: line 1 \(episode_id 0\): unknown key 'geodesic_distanc' "):
        positions.load_positions(tmp_path / "refs.jsonl")
