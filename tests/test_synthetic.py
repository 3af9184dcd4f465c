"""The synthetic grid world: geometry, the edge rule, threshold, and the path generator."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import shortest_path

from navdtw.synthetic import PAIR_KINDS, SyntheticWorld


@pytest.fixture(scope="module")
def world() -> SyntheticWorld:
    return SyntheticWorld.generate(seed=0)


def brute_adjacency(positions: np.ndarray, radius: float) -> np.ndarray:
    n = len(positions)
    adj = np.zeros((n, n), dtype=bool)
    for a in range(n):
        for b in range(a + 1, n):
            if np.sqrt(((positions[a] - positions[b]) ** 2).sum()) <= radius:
                adj[a, b] = adj[b, a] = True
    return adj


def test_nodes_within_jitter(world):
    assert world.positions.shape == (225, 2) and world.positions.dtype == np.float64
    assert world.num_nodes == 225
    for v, (x, y) in enumerate(world.positions):
        i, j = divmod(v, 15)
        assert i - 0.3 <= x <= i + 0.3
        assert j - 0.3 <= y <= j + 0.3


@pytest.mark.parametrize("seed", [0, 7])
def test_edge_rule_exact(seed):
    w = SyntheticWorld.generate(seed=seed)
    adj = brute_adjacency(w.positions, 1.4)
    got = np.zeros_like(adj)
    e = w.edges
    assert e.ndim == 2 and e.shape[1] == 2 and np.issubdtype(e.dtype, np.integer)
    assert (e[:, 0] < e[:, 1]).all()
    assert len({tuple(x) for x in e.tolist()}) == len(e)  # no duplicates
    got[e[:, 0], e[:, 1]] = True
    got[e[:, 1], e[:, 0]] = True
    np.testing.assert_array_equal(got, adj)


def test_threshold(world):
    e = world.edges
    lengths = np.linalg.norm(world.positions[e[:, 0]] - world.positions[e[:, 1]], axis=1)
    assert world.threshold == pytest.approx(1.33 * lengths.mean(), rel=1e-12)
    assert 1.0 < world.threshold < 1.33 * 1.4


def test_distances(world):
    d = world.distances
    assert d.shape == (225, 225) and d.dtype == np.float32
    assert np.all(np.diag(d) == 0)
    np.testing.assert_allclose(d, d.T)
    # An edge is a shortest path between its endpoints (Euclidean weights).
    e = world.edges
    np.testing.assert_allclose(d[e[:, 0], e[:, 1]], world.edge_lengths, rtol=1e-6)
    # Shortest paths have the length the matrix says.
    p = world.shortest_path(0, 224)
    assert p[0] == 0 and p[-1] == 224
    length = np.linalg.norm(np.diff(world.positions[p], axis=0), axis=1).sum()
    assert length == pytest.approx(float(d[0, 224]), rel=1e-6)


def assert_connected(world, path):
    adj = brute_adjacency_cached(world)
    path = np.asarray(path)
    assert path.dtype == np.int64 and path.ndim == 1 and len(path) >= 1
    for a, b in zip(path[:-1], path[1:]):
        assert a == b or adj[a, b], f"{a} -> {b} is not an edge"


_ADJ: dict = {}


def brute_adjacency_cached(world):
    key = id(world)
    if key not in _ADJ:
        _ADJ[key] = brute_adjacency(world.positions, world.radius)
    return _ADJ[key]


def test_random_paths_connected_and_hops(world):
    e = world.edges
    n = world.num_nodes
    adj = coo_matrix((np.ones(len(e)), (e[:, 0], e[:, 1])), shape=(n, n))
    hops = shortest_path(adj, directed=False, unweighted=True)
    rng = np.random.default_rng(3)
    seen_segments = set()
    for _ in range(100):
        path, waypoints = world.random_path(rng, segments=(1, 4), return_waypoints=True)
        assert_connected(world, path)
        seen_segments.add(len(waypoints) - 1)
        assert path[0] == waypoints[0] and path[-1] == waypoints[-1]
        for a, b in zip(waypoints[:-1], waypoints[1:]):
            assert hops[a, b] in (2, 3)
        # the waypoints are visited in order
        at = 0
        for w in waypoints:
            hits = np.flatnonzero(path[at:] == w)
            assert hits.size, f"waypoint {w} missing after position {at}"
            at += int(hits[0])
    assert seen_segments == {1, 2, 3, 4}
    p = world.random_path(rng, segments=2, start=5)
    assert p[0] == 5


def test_determinism(world):
    again = SyntheticWorld.generate(seed=0)
    np.testing.assert_array_equal(world.positions, again.positions)
    np.testing.assert_array_equal(world.edges, again.edges)
    other = SyntheticWorld.generate(seed=1)
    assert not np.array_equal(world.positions, other.positions)

    np.testing.assert_array_equal(world.random_path(11), world.random_path(11))
    r1, q1 = world.sample_pairs(20, seed=4)
    r2, q2 = again.sample_pairs(20, seed=4)
    for a, b in zip(r1 + q1, r2 + q2):
        np.testing.assert_array_equal(a, b)
    r3, _ = world.sample_pairs(20, seed=5)
    assert any(len(a) != len(b) or not np.array_equal(a, b) for a, b in zip(r1, r3))


def test_sample_pairs_kinds(world):
    refs, queries = world.sample_pairs(50, seed=2, segments=(1, 3))
    assert len(refs) == len(queries) == 50
    for i, (r, q) in enumerate(zip(refs, queries)):
        assert_connected(world, r)
        assert_connected(world, q)
        kind = PAIR_KINDS[i % len(PAIR_KINDS)]
        if kind == "identical":
            np.testing.assert_array_equal(q, r)
        elif kind == "detour":
            assert q[0] == r[0] and q[-1] == r[-1] and len(q) > len(r)
        elif kind == "near_goal":
            assert q[0] == r[0] and world.hops[q[-1], r[-1]] in (1, 2)
        elif kind == "partial":
            np.testing.assert_array_equal(q, r[: len(q)])
            assert len(q) < len(r)


def test_errors():
    with pytest.raises(ValueError, match="size"):
        SyntheticWorld.generate(size=1)
    with pytest.raises(ValueError, match="jitter"):
        SyntheticWorld.generate(jitter=-0.1)
    with pytest.raises(ValueError, match="radius"):
        SyntheticWorld.generate(radius=0)
    with pytest.raises(ValueError, match="no edges"):
        SyntheticWorld.generate(radius=0.01)
    w = SyntheticWorld.generate(seed=0, size=5)
    with pytest.raises(ValueError, match="segments"):
        w.random_path(0, segments=0)
    with pytest.raises(TypeError, match="segments"):
        w.random_path(0, segments="x")
    with pytest.raises(ValueError, match="start"):
        w.random_path(0, start=25)
    with pytest.raises(ValueError, match="n:"):
        w.sample_pairs(-1)


def test_graph_attribute(world):
    pytest.importorskip("navdtw.graphs")
    g = world.graph
    np.testing.assert_allclose(np.asarray(g.distances), world.distances, rtol=1e-6)


def test_the_world_is_its_graph(world):
    g = world.graph
    assert world.distances is g.distances
    for node in (0, 17, 224):
        np.testing.assert_array_equal(world.neighbors(node), g.neighbors(node))
    assert world.shortest_path(0, 224).tolist() == g.shortest_path(0, 224)
    assert world.shortest_path(5, 5).tolist() == [5]
