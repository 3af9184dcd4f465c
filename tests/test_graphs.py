"""NavGraph, GraphSet / load_connectivity and DistanceField: synthetic graphs plus the real
Matterport3D connectivity (skipped without the data)."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest

import navdtw
from navdtw.datasets.matterport import load_connectivity, load_navgraph
from navdtw.graphs import DistanceField, GraphSet, NavGraph, UnknownViewpointError


def floyd_warshall(n, edges, weights):
    d = np.full((n, n), np.inf)
    np.fill_diagonal(d, 0.0)
    for (i, j), w in zip(edges, weights):
        d[i, j] = min(d[i, j], w)
        d[j, i] = min(d[j, i], w)
    for k in range(n):
        d = np.minimum(d, d[:, [k]] + d[[k], :])
    return d


@pytest.fixture
def small():
    # a square 0-1-2-3 with a diagonal 0-2, a tail 3-4, and an isolated pair 5-6
    pos = [[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0], [0, 3, 0], [10, 10, 1], [10, 12, 1]]
    edges = [[0, 1], [1, 2], [2, 3], [3, 0], [0, 2], [3, 4], [5, 6], [1, 0]]  # (1, 0) duplicates (0, 1)
    return NavGraph(pos, edges, ids=list("abcdefg"), name="toy")


def test_structure(small):
    g = small
    assert len(g) == g.num_nodes == 7
    assert g.num_edges == 7  # the duplicate is merged
    assert g.edges.tolist() == sorted(g.edges.tolist())
    assert (g.edges[:, 0] < g.edges[:, 1]).all()
    np.testing.assert_allclose(
        g.weights, np.linalg.norm(g.positions[g.edges[:, 0]] - g.positions[g.edges[:, 1]], axis=1)
    )
    assert g.neighbors(0).tolist() == [1, 2, 3]
    assert g.neighbors(4).tolist() == [3]
    assert g.degree.tolist() == [3, 2, 3, 3, 1, 1, 1]
    indptr, indices = g.csr
    assert indptr.dtype == np.int64 and indices.dtype == np.int64
    assert indices[indptr[3] : indptr[4]].tolist() == [0, 2, 4]
    a = g.adjacency
    assert (a != a.T).nnz == 0
    assert g.index["c"] == 2 and g.ids[2] == "c"
    assert "toy" in repr(g)


def test_distances_match_floyd_warshall(small):
    g = small
    d = g.distances
    assert d.dtype == np.float32 and d.shape == (7, 7)
    assert not d.flags.writeable
    with pytest.raises(ValueError):
        d[0, 0] = 1.0
    ref = floyd_warshall(7, g.edges, g.weights)
    np.testing.assert_allclose(d, ref, rtol=1e-6)
    assert np.isinf(d[0, 5]) and np.isinf(d[6, 4])
    assert d is g.distances  # cached


def test_distances_random_graphs():
    rng = np.random.default_rng(0)
    for _ in range(20):
        n = int(rng.integers(1, 15))
        pos = rng.normal(size=(n, 2)) * 3
        m = int(rng.integers(0, 2 * n + 1))
        e = rng.integers(0, n, size=(m, 2))
        e = e[e[:, 0] != e[:, 1]]
        g = NavGraph(pos, e)
        np.testing.assert_allclose(g.distances, floyd_warshall(n, g.edges, g.weights), rtol=1e-5, atol=1e-6)


def test_zero_length_edge_is_an_edge():
    g = NavGraph([[0, 0], [0, 0], [5, 0]], [[0, 1]])
    assert g.distances[0, 1] == 0.0
    assert np.isinf(g.distances[0, 2])
    assert g.shortest_path(0, 1) == [0, 1]


def test_shortest_path(small):
    g = small
    assert g.shortest_path(2, 4) == [2, 3, 4]
    assert g.shortest_path(1, 4) in ([1, 0, 3, 4], [1, 2, 3, 4])  # a tie: both are 4 m
    assert g.shortest_path(2, 2) == [2]
    assert g.path_length(g.shortest_path(1, 4)) == pytest.approx(g.distances[1, 4], rel=1e-6)
    assert g.path_length([0, 2]) == pytest.approx(np.sqrt(2), rel=1e-6)
    assert g.path_length([4]) == 0.0
    assert g.path_length([0, 0, 1, 1]) == pytest.approx(1.0)
    assert np.isinf(g.path_length([0, 5]))
    with pytest.raises(ValueError, match="unreachable"):
        g.shortest_path(0, 6)
    with pytest.raises(IndexError):
        g.shortest_path(0, 7)


def test_encode_decode(small):
    g = small
    idx = g.encode(["a", "d", "e"])
    assert idx.dtype == np.int64 and idx.tolist() == [0, 3, 4]
    assert g.decode(idx) == ["a", "d", "e"]
    assert g.encode(iter(["b"])).tolist() == [1]
    with pytest.raises(ValueError, match=r"scan 'toy': unknown viewpoint 'zz'"):
        g.encode(["a", "zz"])
    with pytest.raises(KeyError):  # also a KeyError
        g.encode(["zz"])
    with pytest.raises(UnknownViewpointError):
        g.encode(["a", 3])
    with pytest.raises(IndexError):
        g.decode([0, 9])


@pytest.mark.parametrize(
    "pos, edges, kwargs, match",
    [
        ([[0, 0]], [[0, 1]], {}, "out of range"),
        ([[0, 0], [1, 0]], [[1, 1]], {}, "self loop"),
        ([[0, 0], [1, 0]], [[0, -1]], {}, "out of range"),
        ([[0, 0, 0, 0]], [], {}, r"\[V, 2\] or \[V, 3\]"),
        ([[0, np.nan]], [], {}, "not finite"),
        ([[0, 0], [1, 0]], [], {"ids": ["a", "a"]}, "appears twice"),
        ([[0, 0], [1, 0]], [], {"ids": ["a"]}, "1 ids for 2 nodes"),
        ([[0, 0], [1, 0]], [[0, 1, 1]], {}, r"\[E, 2\]"),
    ],
)
def test_navgraph_validation(pos, edges, kwargs, match):
    with pytest.raises(ValueError, match=match):
        NavGraph(pos, edges, **kwargs)


# --- synthetic connectivity files -------------------------------------------------------------


def pose_at(x, y, z):
    return [1, 0, 0, x, 0, 1, 0, y, 0, 0, 1, z, 0, 0, 0, 1]


def write_scan(folder, scan, entries):
    path = folder / f"{scan}_connectivity.json"
    path.write_text(json.dumps(entries))
    return path


def toy_entries():
    # four viewpoints; "v2" excluded; v0-v1 listed one way only, v1-v3 both ways, v0-v2 ignored
    pts = [(0, 0, 0), (3, 4, 0), (0, 1, 0), (3, 4, 2)]
    unob = [
        [False, True, True, False],
        [False, False, False, True],
        [True, False, False, False],
        [False, True, False, False],
    ]
    return [
        {
            "image_id": f"v{k}",
            "pose": pose_at(*p),
            "included": k != 2,
            "unobstructed": unob[k],
            "visible": unob[k],
            "height": 1.5,
        }
        for k, p in enumerate(pts)
    ]


def test_load_navgraph(tmp_path):
    path = write_scan(tmp_path, "scanA", toy_entries())
    g = load_navgraph(path)
    assert g.name == "scanA"
    assert g.ids == ["v0", "v1", "v3"]
    assert g.edges.tolist() == [[0, 1], [1, 2]]
    np.testing.assert_allclose(g.weights, [5.0, 2.0])
    assert g.distances[0, 2] == pytest.approx(7.0)
    np.testing.assert_allclose(g.positions[2], [3, 4, 2])


@pytest.mark.parametrize(
    "mutate, match",
    [
        (lambda e: e[1].pop("pose"), r"entry 1: missing field 'pose'"),
        (lambda e: e[2].__setitem__("pose", [0] * 15), r"entry 2: 'pose' must be a list of 16"),
        (lambda e: e[3].__setitem__("unobstructed", [True]), r"entry 3: 'unobstructed' must be a list of 4"),
        (lambda e: e[0].__setitem__("included", "yes"), r"entry 0: 'included'"),
        (lambda e: e[1].__setitem__("image_id", 7), r"entry 1: 'image_id'"),
        (lambda e: e.__setitem__(2, "oops"), r"entry 2: expected an object"),
    ],
)
def test_load_navgraph_errors(tmp_path, mutate, match):
    entries = toy_entries()
    mutate(entries)
    path = write_scan(tmp_path, "bad", entries)
    with pytest.raises(ValueError, match=r"bad_connectivity\.json: " + match):
        load_navgraph(path)


def test_load_navgraph_malformed_json(tmp_path):
    path = tmp_path / "trunc_connectivity.json"
    path.write_text(json.dumps(toy_entries())[:-20])
    with pytest.raises(ValueError, match=r"trunc_connectivity.json: malformed JSON at line 1 column \d+"):
        load_navgraph(path)
    path.write_text("{}")
    with pytest.raises(ValueError, match=r"trunc_connectivity\.json: expected a non-empty JSON list"):
        load_navgraph(path)


@pytest.fixture
def toy_set(tmp_path):
    write_scan(tmp_path, "scanB", toy_entries())
    entries = toy_entries()
    entries[3]["image_id"] = "w"
    write_scan(tmp_path, "scanA", entries)
    return tmp_path


def test_load_connectivity_synthetic(toy_set):
    gs = load_connectivity(toy_set)
    assert gs.scans == ["scanA", "scanB"]  # sorted file order
    assert len(gs) == 2 and "scanA" in gs and "nope" not in gs
    assert gs.env_of("scanB") == 1
    assert isinstance(gs["scanA"], NavGraph)
    assert [d.shape for d in gs.distances] == [(3, 3), (3, 3)]
    gs2 = load_connectivity(toy_set, scans=["scanB", "scanA"])
    assert gs2.scans == ["scanB", "scanA"]
    with pytest.raises(FileNotFoundError, match="'missing'"):
        load_connectivity(toy_set, scans=["scanA", "missing"])
    with pytest.raises(KeyError, match="nope"):
        gs["nope"]
    with pytest.raises(FileNotFoundError):
        load_connectivity(toy_set / "absent")


def test_graphset_encode_decode(toy_set):
    gs = load_connectivity(toy_set)
    env, paths = gs.encode(["scanB", "scanA", "scanB"], [["v0", "v1"], ["w", "v1", "v0"], ["v3"]])
    assert env.tolist() == [1, 0, 1]
    assert isinstance(paths, navdtw.Paths)
    assert paths.values.dtype == np.int64
    assert [p.tolist() for p in paths] == [[0, 1], [2, 1, 0], [2]]
    assert gs.decode(env, paths) == [["v0", "v1"], ["w", "v1", "v0"], ["v3"]]
    env2, _ = gs.encode("scanA", [["w"], ["v0"]])
    assert env2.tolist() == [0, 0]
    with pytest.raises(ValueError, match=r"entry 1: unknown scan 'scanZ'"):
        gs.encode(["scanA", "scanZ"], [["v0"], ["v0"]])
    with pytest.raises(ValueError, match=r"entry 1: unknown viewpoint 'w' in scan 'scanB'"):
        gs.encode(["scanA", "scanB"], [["w"], ["v0", "w"]])
    with pytest.raises(ValueError, match=r"entry 0 \(12_1\): path is empty"):
        gs.encode(["scanA"], [[]], names=["12_1"])
    with pytest.raises(ValueError, match="2 scans for 1 paths"):
        gs.encode(["scanA", "scanB"], [["v0"]])


def test_graphset_scores_in_one_call(toy_set):
    gs = load_connectivity(toy_set)
    env, refs = gs.encode(["scanA", "scanB"], [["v0", "v1", "w"], ["v0", "v1", "v3"]])
    _, qrys = gs.encode(["scanA", "scanB"], [["v0", "w"], ["v0", "v3"]])
    d = navdtw.dtw_batch(refs, qrys, distances=gs.distances, env=env, workers=1)
    for k in range(2):
        m = gs.graphs[int(env[k])].distances
        assert d[k] == pytest.approx(navdtw.dtw(refs[k], qrys[k], distances=m))


def test_graphset_from_graphs():
    a = NavGraph([[0, 0]], [], name="a")
    gs = GraphSet([a, NavGraph([[0, 0]], [], name="b")])
    assert gs.scans == ["a", "b"]
    with pytest.raises(ValueError, match="twice"):
        GraphSet([a, a])
    with pytest.raises(ValueError, match="no scan name"):
        GraphSet([NavGraph([[0, 0]], [])])


# --- DistanceField -----------------------------------------------------------------------------


def wall_grid():
    free = np.ones((7, 7), dtype=bool)
    free[0:6, 3] = False  # a wall in column 3, open only at the bottom row
    return free


def test_from_grid_geodesic_around_wall():
    free = wall_grid()
    f = DistanceField.from_grid(free, cell_size=0.5, origin=(1.0, 2.0))
    assert len(f) == int(free.sum())
    assert f.distances.dtype == np.float32 and not f.distances.flags.writeable
    # cell centres
    left = f.snap(np.array([[1.0 + 0.25, 2.0 + 0.25]]))[0]
    right = f.snap(np.array([[1.0 + 6 * 0.5 + 0.25, 2.0 + 0.25]]))[0]
    np.testing.assert_allclose(f.points[left], [1.25, 2.25])
    np.testing.assert_allclose(f.points[right], [4.25, 2.25])
    euclid = np.linalg.norm(f.points[left] - f.points[right])
    geo = f.distances[left, right]
    assert geo > euclid + 2.0  # must go down to row 6 and back
    # exact: from (r0,c0) to (r0,c6) around the wall end at (6,3), no corner cutting:
    # 5 diagonal-free... checked against an independent Dijkstra on the same grid rules
    ref = grid_bfs_dijkstra(free, 0.5, (0, 0), (0, 6))
    assert geo == pytest.approx(ref, rel=1e-6)
    # open grid: geodesic == octile distance
    g = DistanceField.from_grid(np.ones((4, 5), dtype=bool))
    a, b = g.snap(np.array([[0.5, 0.5], [4.5, 3.5]]))
    assert g.distances[a, b] == pytest.approx(3 * np.sqrt(2) + 1, rel=1e-6)


def grid_bfs_dijkstra(free, cell, start, goal):
    import heapq

    h, w = free.shape
    best = {start: 0.0}
    heap = [(0.0, start)]
    while heap:
        d, (r, c) = heapq.heappop(heap)
        if (r, c) == goal:
            return d
        if d > best[(r, c)]:
            continue
        for dr in (-1, 0, 1):
            for dc in (-1, 0, 1):
                if not (dr or dc):
                    continue
                r2, c2 = r + dr, c + dc
                if not (0 <= r2 < h and 0 <= c2 < w and free[r2, c2]):
                    continue
                if dr and dc and not (free[r + dr, c] and free[r, c + dc]):
                    continue
                nd = d + cell * (np.sqrt(2) if dr and dc else 1.0)
                if nd < best.get((r2, c2), np.inf):
                    best[(r2, c2)] = nd
                    heapq.heappush(heap, (nd, (r2, c2)))
    return np.inf


def test_from_grid_corner_cutting_and_unreachable():
    free = np.array([[True, False], [False, True]])
    f = DistanceField.from_grid(free)
    assert np.isinf(f.distances[0, 1])
    f2 = DistanceField.from_grid(free, corner_cutting=True)
    assert f2.distances[0, 1] == pytest.approx(np.sqrt(2), rel=1e-6)
    with pytest.raises(ValueError, match="no free cell"):
        DistanceField.from_grid(np.zeros((2, 2), dtype=bool))
    with pytest.raises(TypeError, match="bool"):
        DistanceField.from_grid(np.ones((2, 2)))
    with pytest.raises(ValueError, match="max_points"):
        DistanceField.from_grid(np.ones((10, 10), dtype=bool), max_points=50)


def test_snap_is_nearest():
    rng = np.random.default_rng(1)
    pts = rng.uniform(0, 10, size=(40, 3))
    f = DistanceField.from_points(pts, np.zeros((40, 40), dtype=np.float32))
    q = rng.uniform(-1, 11, size=(100, 3))
    brute = np.argmin(np.linalg.norm(q[:, None, :] - pts[None, :, :], axis=2), axis=1)
    got = f.snap(q)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, brute)
    with pytest.raises(ValueError, match=r"\[n, 3\]"):
        f.snap(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="not finite"):
        f.snap(np.array([[0, 0, np.nan]]))


def test_distance_field_validation_and_graph(small):
    with pytest.raises(ValueError, match="3 points"):
        DistanceField.from_points(np.zeros((3, 2)), np.zeros((2, 2)))
    with pytest.raises(ValueError, match="negative"):
        DistanceField.from_points(np.zeros((2, 2)), -np.ones((2, 2)))
    f = DistanceField.from_graph(small)
    assert f.snap(np.array([[0.9, 0.1, 0.0]])).tolist() == [1]
    assert f.distances is small.distances  # read-only input is shared, not copied
    m = np.zeros((2, 2), dtype=np.float32)
    f2 = DistanceField.from_points(np.zeros((2, 1)), m)
    m[0, 1] = 5
    assert f2.distances[0, 1] == 0  # writable input is copied


def test_distance_field_dtw_usage():
    free = wall_grid()
    f = DistanceField.from_grid(free, cell_size=1.0)
    # a reference left of the wall, a query right of it: close in a straight line, far on foot
    ref = np.array([[2.5, 0.5], [2.5, 1.5]])
    query = np.array([[4.5, 0.5], [4.5, 1.5]])
    euc = navdtw.dtw(ref, query)
    geo = navdtw.dtw(f.snap(ref), f.snap(query), distances=f.distances)
    assert euc == pytest.approx(4.0)
    assert geo > 2 * euc


# --- real Matterport3D data ------------------------------------------------------------------


@pytest.fixture(scope="module")
def real_graphs(connectivity_dir):
    t0 = time.perf_counter()
    gs = load_connectivity(connectivity_dir)
    t1 = time.perf_counter()
    _ = gs.distances
    t2 = time.perf_counter()
    print(f"\nload_connectivity: {len(gs)} graphs parsed in {t1 - t0:.3f} s, distances in {t2 - t1:.3f} s")
    return gs


@pytest.mark.data
def test_real_counts(real_graphs, connectivity_dir):
    gs = real_graphs
    assert len(gs) == 90
    assert sorted(gs.scans) == sorted((connectivity_dir / "scans.txt").read_text().split())
    assert sum(g.num_nodes for g in gs.graphs) == 10567
    assert sum(g.num_edges for g in gs.graphs) == 21468


@pytest.mark.data
def test_real_distances(real_graphs):
    for g in real_graphs.graphs:
        d = g.distances
        assert d.shape == (len(g), len(g)) and d.dtype == np.float32
        assert (np.diag(d) == 0).all()
        np.testing.assert_array_equal(d, d.T)
        # an edge's distance never exceeds its weight
        assert (d[g.edges[:, 0], g.edges[:, 1]] <= g.weights.astype(np.float32) + 1e-5).all()


@pytest.mark.data
def test_real_r2r_paths_follow_edges(real_graphs, data_dir):
    split = json.loads((data_dir / "r2r" / "R2R_val_unseen.json").read_text())
    assert len(split) == 783
    for e in split:
        g = real_graphs[e["scan"]]
        nodes = g.encode(e["path"])
        length = 0.0
        for a, b in zip(nodes[:-1], nodes[1:]):
            assert b in g.neighbors(int(a)), (e["path_id"], a, b)
            k = np.flatnonzero((g.edges[:, 0] == min(a, b)) & (g.edges[:, 1] == max(a, b)))
            length += g.weights[k[0]]
        assert length == pytest.approx(e["distance"], abs=5e-3 + 1e-5)  # the file rounds to 0.01 m
        assert g.path_length(nodes) == pytest.approx(length, abs=1e-3)


@pytest.mark.data
def test_real_shortest_path(real_graphs):
    g = real_graphs["8194nk5LbLH"]
    p = g.shortest_path(0, len(g) - 1)
    assert p[0] == 0 and p[-1] == len(g) - 1
    assert g.path_length(p) == pytest.approx(float(g.distances[0, len(g) - 1]), rel=1e-5)


# --- shortest-path tie order: the one implementation SyntheticWorld also uses -------------------


def all_pairs_path(pred, a, b):
    """A path from the all-pairs predecessor matrix (the tie order SyntheticWorld used before it
    delegated to NavGraph.shortest_path)."""
    out = [b]
    while out[-1] != a:
        out.append(int(pred[a, out[-1]]))
    return out[::-1]


@pytest.mark.parametrize("seed", range(4))
def test_shortest_path_tie_order_matches_all_pairs_dijkstra(seed):
    from scipy.sparse.csgraph import dijkstra

    rng = np.random.default_rng(seed)
    # a unit grid with random extra diagonals: many equally short paths
    n = 6
    pos = np.array([[i, j, 0.0] for i in range(n) for j in range(n)])
    edges = [(i * n + j, i * n + j + 1) for i in range(n) for j in range(n - 1)]
    edges += [(i * n + j, (i + 1) * n + j) for i in range(n - 1) for j in range(n)]
    edges = [e for e in edges if rng.random() < 0.9]
    g = NavGraph(pos, edges)
    dist, pred = dijkstra(g.adjacency, directed=False, return_predecessors=True)
    np.testing.assert_array_equal(g.distances, dist.astype(np.float32))
    for a in range(len(g)):
        for b in range(len(g)):
            if np.isfinite(dist[a, b]):
                assert g.shortest_path(a, b) == all_pairs_path(pred, a, b)
            else:
                with pytest.raises(ValueError, match="unreachable"):
                    g.shortest_path(a, b)


def test_resolve_distances(small):
    from navdtw.graphs import resolve_distances

    gs = GraphSet([small])
    assert resolve_distances(None, None) is None
    d = np.zeros((2, 2), dtype=np.float32)
    assert resolve_distances(None, d) is d
    assert resolve_distances(gs, None)[0] is small.distances
    with pytest.raises(ValueError, match="not both"):
        resolve_distances(gs, d)
