"""navdtw.random_baseline and navdtw.baseline.RandomWalker: determinism, the walk distribution
(checked statistically with scipy.stats chi-square tests at a fixed seed), agreement with
navdtw.evaluate on the same walks, a real-data run against the paper's random row, input errors.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from scipy import stats

import navdtw
from navdtw.baseline import RandomWalker
from navdtw.graphs import GraphSet, NavGraph

P_MIN = 1e-3

# --------------------------------------------------------------------------------------------
# a small synthetic world: two scans, one with an isolated node
# --------------------------------------------------------------------------------------------


def _graph_a() -> NavGraph:
    # 0 - 1 - 2 - 3, 1 - 4, 2 - 4, 4 - 5 ; node 6 isolated
    pos = [[0, 0], [1, 0], [2, 0], [3, 0], [1.5, 1], [1.5, 2.5], [9, 9]]
    edges = [[0, 1], [1, 2], [2, 3], [1, 4], [2, 4], [4, 5]]
    return NavGraph(pos, edges, ids=[f"a{i}" for i in range(7)], name="scanA")


def _graph_b() -> NavGraph:
    # a star around 0 plus a ring 1-2-3-4-1
    pos = [[0, 0, 0], [1, 0, 0], [0, 1, 0], [-1, 0, 0], [0, -1, 0]]
    edges = [[0, 1], [0, 2], [0, 3], [0, 4], [1, 2], [2, 3], [3, 4], [4, 1]]
    return NavGraph(pos, edges, ids=[f"b{i}" for i in range(5)], name="scanB")


GRAPHS = GraphSet([_graph_a(), _graph_b()])

SPLIT = [
    {"path_id": 1, "scan": "scanA", "path": ["a0", "a1", "a2", "a3"], "instructions": ["x"]},
    {"path_id": 2, "scan": "scanB", "path": ["b0", "b1"], "instructions": ["x", "y"]},
    {"path_id": 3, "scan": "scanA", "path": ["a5", "a4", "a2", "a1", "a0"], "instructions": ["x"]},
    {"path_id": 4, "scan": "scanA", "path": ["a6"], "instructions": ["x"]},  # isolated start
    {"path_id": 5, "scan": "scanB", "path": ["b3", "b4", "b1", "b2"], "instructions": ["x"]},
    {"path_id": 6, "scan": "scanB", "path": ["b2", "b0", "b4"], "instructions": ["x"]},
]


def _walker(seed=0):
    env, refs = GRAPHS.encode([e["scan"] for e in SPLIT], [e["path"] for e in SPLIT])
    return RandomWalker(GRAPHS.graphs, refs, env, seed=seed), refs, env


# --------------------------------------------------------------------------------------------
# determinism
# --------------------------------------------------------------------------------------------


def _run(**kw):
    kw.setdefault("progress", False)
    return navdtw.random_baseline(SPLIT, GRAPHS, **kw)


def test_same_seed_bit_identical_any_workers_and_chunk():
    base = _run(n=20_000, seed=7, workers=1, chunk=250_000)
    assert list(base) == list(navdtw.METRICS)
    for workers in (1, 2, -1):
        for chunk in (1, 999, 8192, 8193, 20_000, 10**6):
            if chunk == 1 and workers != 1:
                continue  # 20,000 one-walk chunks: slow and adds nothing over workers=1
            got = (
                _run(n=20_000, seed=7, workers=workers, chunk=chunk)
                if chunk > 1
                else _run(n=3000, seed=7, workers=1, chunk=1)
            )
            want = base if chunk > 1 else _run(n=3000, seed=7, workers=2, chunk=3000)
            assert got == want, (workers, chunk)  # dict equality: bit-identical floats


def test_different_seed_differs():
    a = _run(n=5000, seed=0)
    b = _run(n=5000, seed=1)
    assert a != b
    assert a["ndtw"] != b["ndtw"]
    assert _run(n=5000, seed=2**64 - 1) == _run(n=5000, seed=np.uint64(2**64 - 1))


def test_walker_deterministic_and_prefix_stable():
    w, _, _ = _walker(seed=3)
    p1, r1 = w.walks(0, 1000, workers=1)
    p2, r2 = w.walks(0, 1000, workers=2)
    np.testing.assert_array_equal(p1.values, p2.values)
    np.testing.assert_array_equal(p1.offsets, p2.offsets)
    np.testing.assert_array_equal(r1, r2)
    # walk w depends only on (seed, w): a later window reproduces the same walks
    p3, r3 = w.walks(500, 500)
    for k in range(500):
        np.testing.assert_array_equal(p3[k], p1[500 + k])
    np.testing.assert_array_equal(r3, r1[500:])
    other, _ = _walker(seed=4)[0].walks(0, 1000)
    assert not (len(other.values) == len(p1.values) and np.array_equal(other.values, p1.values))


def test_baseline_equals_evaluate_on_the_same_walks():
    """random_baseline's means = evaluate's means over the walks RandomWalker makes."""
    n = 6000
    for conv in ("paper", "r2r", "duet"):
        got = _run(n=n, seed=11, convention=conv, chunk=2500)
        w, refs, env = _walker(seed=11)
        walks, ref_of = w.walks(0, n)
        s = navdtw.evaluate(refs.take(ref_of), walks, distances=GRAPHS.distances, env=env[ref_of], convention=conv)
        for k, v in s.summary().items():
            assert got[k] == pytest.approx(v, rel=1e-12, abs=1e-12), (conv, k)


def test_metrics_subset():
    got = _run(n=2000, seed=5, metrics=["ndtw", "sr"])
    assert list(got) == ["sr", "ndtw"]
    full = _run(n=2000, seed=5)
    assert got["sr"] == full["sr"] and got["ndtw"] == full["ndtw"]


# --------------------------------------------------------------------------------------------
# the walk distribution
# --------------------------------------------------------------------------------------------

N_WALKS = 60_000


@pytest.fixture(scope="module")
def walks():
    w, refs, env = _walker(seed=2024)
    paths, ref_of = w.walks(0, N_WALKS, workers=2)
    return w, refs, env, paths, ref_of


def test_walks_start_at_reference_start(walks):
    _, refs, _env, paths, ref_of = walks
    np.testing.assert_array_equal(ref_of, np.arange(N_WALKS) % len(SPLIT))  # walk w serves w mod |split|
    np.testing.assert_array_equal(paths.first(), refs.first()[ref_of])
    assert paths.values.dtype.kind == "i"


def test_consecutive_nodes_are_neighbours(walks):
    _, _refs, env, paths, ref_of = walks
    graphs = GRAPHS.graphs
    stuck_moves = 0
    for k in range(len(paths)):
        g = graphs[int(env[ref_of[k]])]
        p = paths[k]
        assert p.min() >= 0 and p.max() < g.num_nodes
        ip, ix = g.csr
        for a, b in zip(p[:-1].tolist(), p[1:].tolist()):
            nb = ix[ip[a] : ip[a + 1]]
            if len(nb) == 0:
                assert a == b
                stuck_moves += 1
            else:
                assert a != b and b in nb, (k, a, b)
    assert stuck_moves > 0  # the isolated start was exercised


def test_step_counts_follow_the_split(walks):
    w, refs, _, paths, _ = walks
    steps = paths.lengths - 1
    sample = refs.lengths - 1
    np.testing.assert_array_equal(w.step_counts, sample)
    values, counts = np.unique(sample, return_counts=True)
    assert set(np.unique(steps)) <= set(values)
    observed = np.array([(steps == v).sum() for v in values], dtype=np.float64)
    expected = counts / counts.sum() * len(steps)
    assert stats.chisquare(observed, expected).pvalue > P_MIN
    # independent of the reference served: the counts of walks serving reference 0 follow it too
    mine = steps[np.arange(len(steps)) % len(SPLIT) == 0]
    observed0 = np.array([(mine == v).sum() for v in values], dtype=np.float64)
    assert stats.chisquare(observed0, counts / counts.sum() * len(mine)).pvalue > P_MIN


def test_neighbour_choice_uniform(walks):
    _, _, env, paths, ref_of = walks
    moves = [Counter() for _ in GRAPHS.graphs]
    for k in range(len(paths)):
        p = paths[k].tolist()
        c = moves[int(env[ref_of[k]])]
        c.update(zip(p[:-1], p[1:]))
    checked = 0
    for g, c in zip(GRAPHS.graphs, moves):
        for a in range(g.num_nodes):
            nb = g.neighbors(a).tolist()
            if len(nb) < 2:
                continue
            observed = np.array([c[(a, b)] for b in nb], dtype=np.float64)
            assert observed.sum() > 500, (g.name, a)
            assert sum(v for (x, _), v in c.items() if x == a) == observed.sum()  # no other moves
            assert stats.chisquare(observed).pvalue > P_MIN, (g.name, a, observed)
            checked += 1
    assert checked >= 8


def test_walker_without_repeats_in_references():
    """Step counts are taken from the collapsed references in random_baseline."""
    split = [dict(SPLIT[0], path=["a0", "a0", "a1", "a1", "a2"]), *SPLIT[1:]]
    a = navdtw.random_baseline(split, GRAPHS, n=3000, seed=1, progress=False)
    b = navdtw.random_baseline(
        [dict(SPLIT[0], path=["a0", "a1", "a2"]), *SPLIT[1:]], GRAPHS, n=3000, seed=1, progress=False
    )
    assert a == b


# --------------------------------------------------------------------------------------------
# input errors
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [0, -1, 1.5, True, "10"])
def test_bad_n(n):
    with pytest.raises(ValueError, match="n must be"):
        navdtw.random_baseline(SPLIT, GRAPHS, n=n, progress=False)


@pytest.mark.parametrize("seed", [-1, 2**64, 1.0, True, "0", None])
def test_bad_seed(seed):
    with pytest.raises(ValueError, match="seed"):
        navdtw.random_baseline(SPLIT, GRAPHS, n=10, seed=seed, progress=False)
    _, refs, env = _walker()
    with pytest.raises(ValueError, match="seed"):
        RandomWalker(GRAPHS.graphs, refs, env, seed=seed)


@pytest.mark.parametrize("chunk", [0, -5, 2.0, False, None])
def test_bad_chunk(chunk):
    with pytest.raises(ValueError, match="chunk"):
        navdtw.random_baseline(SPLIT, GRAPHS, n=10, chunk=chunk, progress=False)


def test_bad_convention_threshold_split():
    with pytest.raises(ValueError, match="unknown convention"):
        navdtw.random_baseline(SPLIT, GRAPHS, n=10, convention="habitat", progress=False)
    with pytest.raises(ValueError, match="threshold"):
        navdtw.random_baseline(SPLIT, GRAPHS, n=10, threshold=-1.0, progress=False)
    with pytest.raises(ValueError, match="unknown metric"):
        navdtw.random_baseline(SPLIT, GRAPHS, n=10, metrics=["bleu"], progress=False)
    with pytest.raises(ValueError, match="unknown scan"):
        navdtw.random_baseline([dict(SPLIT[0], scan="nowhere")], GRAPHS, n=10, progress=False)
    with pytest.raises(ValueError, match="not a viewpoint"):
        navdtw.random_baseline([dict(SPLIT[0], path=["a0", "zz"])], GRAPHS, n=10, progress=False)


# --------------------------------------------------------------------------------------------
# real data: the paper's random row (Ilharco et al. 2019, Table 2: SR 5.1, nDTW 27.9)
# --------------------------------------------------------------------------------------------


@pytest.mark.data
def test_real_r2r_val_unseen(data_dir, connectivity_dir):
    split = navdtw.datasets.load_r2r(data_dir / "r2r" / "R2R_val_unseen.json")
    graphs = navdtw.load_connectivity(connectivity_dir, sorted({e["scan"] for e in split}))
    got = navdtw.random_baseline(split, graphs, n=20_000, seed=0, progress=False)
    assert 0.03 <= got["sr"] <= 0.08, got
    assert 0.25 <= got["ndtw"] <= 0.31, got
    assert got["sdtw"] <= got["sr"] and got["spl"] <= got["sr"]
    assert all(np.isfinite(v) for k, v in got.items() if k not in ("ne", "one", "dtw", "ad", "md")), got
    # from the file name too
    again = navdtw.random_baseline(
        data_dir / "r2r" / "R2R_val_unseen.json", graphs, n=20_000, seed=0, progress=False, chunk=7000
    )
    assert again == got
