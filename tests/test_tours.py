"""navdtw.tour_ndtw against a twin of IVLN-CE's evaluator (tests/naive_tours.py, written from
habitat_extensions/tour_ndtw.py of jacobkrantz/IVLN-CE) on random tours, its quirks included, and
the corrected convention against per-episode DTWs."""

from __future__ import annotations

import math

import naive
import naive_tours
import numpy as np
import pytest

import navdtw

GRID = 0.5  # positions on a grid: repeated steps and exact ties happen


def random_tour(rng, episodes, max_steps=6, oracle=True, gt_min=1):
    """(agent steps, ground-truth steps) of one tour, as IVLN-CE's files hold them."""
    agent, gt = [], []
    pos = rng.integers(-6, 7, size=3) * GRID
    for e in range(episodes):
        eid = f"ep{e}"
        if oracle and e > 0:  # the oracle carries the agent to this episode's start
            for _ in range(int(rng.integers(0, 3))):
                pos = pos + rng.integers(-1, 2, size=3) * GRID
                agent.append({"episode_id": eid, "phase": "oracle_start", "position": pos.tolist()})
        start = pos.copy()
        g = start.copy()
        for _ in range(int(rng.integers(gt_min, max_steps + 1))):
            gt.append({"episode_id": eid, "phase": "agent", "position": g.tolist()})
            if rng.random() < 0.7:  # the ground truth repeats a position where it turns
                g = g + rng.integers(-2, 3, size=3) * GRID
        for _ in range(int(rng.integers(1, max_steps + 1))):
            agent.append({"episode_id": eid, "phase": "agent", "position": pos.tolist()})
            if rng.random() < 0.7:
                pos = pos + rng.integers(-2, 3, size=3) * GRID
        if oracle and e + 1 < episodes:  # and to its goal
            for _ in range(int(rng.integers(0, 3))):
                pos = pos + rng.integers(-1, 2, size=3) * GRID
                agent.append({"episode_id": eid, "phase": "oracle_goal", "position": pos.tolist()})
    return agent, gt


def arrays(steps):
    return (
        [s["position"] for s in steps],
        [s["episode_id"] for s in steps],
        [s["phase"] for s in steps],
    )


def navdtw_tours(agent_paths, gt_paths, **kw):
    ids = list(agent_paths)
    a = [arrays(agent_paths[t]) for t in ids]
    g = [arrays(gt_paths[t]) for t in ids]
    return navdtw.tour_ndtw(
        [x[0] for x in a],
        [x[1] for x in a],
        [x[0] for x in g],
        [x[1] for x in g],
        agent_phases=[x[2] for x in a],
        gt_phases=[x[2] for x in g],
        tour_ids=ids,
        **kw,
    )


def test_matches_the_evaluator_on_random_tours():
    rng = np.random.default_rng(35)
    agent_paths, gt_paths = {}, {}
    compared = single = no_path = 0
    for t in range(2500):
        k = int(rng.integers(1, 5))
        agent, gt = random_tour(rng, k, gt_min=1 if t % 5 == 0 else 2)
        tid = f"tour{t}"
        try:
            want = naive_tours.tour_scores({tid: agent}, {tid: gt})[tid]
        except naive_tours.NoWarpingPath:
            with pytest.raises(ValueError, match=rf"^tour '{tid}': IVLN-CE's window leaves no warping path"):
                navdtw_tours({tid: agent}, {tid: gt})
            no_path += 1
            continue
        got = navdtw_tours({tid: agent}, {tid: gt})
        assert abs(got.ndtw[0] - want) <= 1e-9
        assert got.weights[0] == k - 1 and got.episodes[0] == k
        agent_paths[tid], gt_paths[tid] = agent, gt
        compared += 1
        single += k == 1
    assert compared >= 1000 and single >= 100 and no_path >= 50
    got = navdtw_tours(agent_paths, gt_paths)
    want = naive_tours.tour_scores(agent_paths, gt_paths)
    assert np.abs(got.ndtw - np.array([want[t] for t in agent_paths])).max() <= 1e-9
    assert abs(got.score - naive_tours.split_score(want, gt_paths)) <= 1e-9
    # the weights leave single-episode tours out: dropping them changes nothing
    multi = [t for t in agent_paths if got.episodes[got.tour_ids.index(t)] > 1]
    part = navdtw_tours({t: agent_paths[t] for t in multi}, {t: gt_paths[t] for t in multi})
    assert abs(part.score - got.score) <= 1e-12


def test_matches_dtw_python_itself():
    dtw = pytest.importorskip("dtw")

    def dtw_python(lm, window):
        try:
            return dtw.dtw(lm, step_pattern="symmetric1", window_type=lambda i, j, query_size, reference_size: window)
        except ValueError as e:
            assert "No warping path found" in str(e)
            raise naive_tours.NoWarpingPath(str(e)) from None

    def float64_cost(a, g):  # the evaluator's own measure: float64 Euclidean
        diff = np.asarray(a, np.float64)[:, None, :] - np.asarray(g, np.float64)[None, :, :]
        return np.sqrt((diff * diff).sum(axis=-1))

    rng = np.random.default_rng(36)
    seen = 0
    for _ in range(300):
        agent, gt = random_tour(rng, int(rng.integers(1, 5)))
        try:
            same = naive_tours.tour_scores({0: agent}, {0: gt}, dtw_fn=lambda lm, w: dtw_python(lm, w).distance)[0]
        except naive_tours.NoWarpingPath:
            continue
        raw = naive_tours.tour_scores(
            {0: agent}, {0: gt}, cost_fn=float64_cost, dtw_fn=lambda lm, w: dtw_python(lm, w).distance
        )[0]
        got = navdtw_tours({0: agent}, {0: gt})
        assert abs(got.ndtw[0] - same) <= 1e-9  # dtw-python on navdtw's float32 costs
        assert abs(got.ndtw[0] - raw) <= 1e-6  # and on float64 costs, as IVLN-CE runs it
        seen += 1
    assert seen >= 100


def test_single_episode_tours_only_have_no_split_score():
    rng = np.random.default_rng(2)
    agent, gt = random_tour(rng, 1)
    got = navdtw_tours({"a": agent}, {"a": gt})
    assert math.isnan(got.score) and got.weights.tolist() == [0.0]
    with pytest.raises(ZeroDivisionError):
        naive_tours.split_score(naive_tours.tour_scores({"a": agent}, {"a": gt}), {"a": gt})
    fixed = navdtw_tours({"a": agent}, {"a": gt}, convention="corrected")
    assert fixed.weights.tolist() == [1.0] and fixed.score == fixed.ndtw[0]


def test_corrected_is_the_sum_of_episode_dtws():
    rng = np.random.default_rng(4)
    for _ in range(200):
        k = int(rng.integers(1, 5))
        agent, gt = random_tour(rng, k, gt_min=1)
        got = navdtw_tours({0: agent}, {0: gt}, convention="corrected")
        # written from the definition: repeated steps dropped on both sides, oracle steps left
        # out, each episode's DTW, summed; |R_tour| the ground truth's steps left; weight k
        a = [s for s in naive_tours.drop_repeats(agent) if s["phase"] == "agent"]
        g = [s for s in naive_tours.drop_repeats(gt) if s["phase"] == "agent"]
        total = 0.0
        for e in naive_tours.episode_order(g):
            ap = [s["position"] for s in a if s["episode_id"] == e]
            gp = [s["position"] for s in g if s["episode_id"] == e]
            total += naive.dtw(naive.euclidean_cost(gp, ap, np.float32))
        assert math.isclose(got.dtw[0], total, rel_tol=1e-12, abs_tol=1e-12)
        assert abs(got.ndtw[0] - math.exp(-total / (len(g) * 3.0))) <= 1e-12
        assert got.weights[0] == k and got.reference_lengths[0] == len(g)


def test_quirks_one_by_one():
    p = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [2.0, 0.0, 0.0]]
    eps = ["a", "a", "a", "a"]
    # the agent's repeated step is dropped, the ground truth's is not: same positions, DTW > 0
    s = navdtw.tour_ndtw([p], [eps], [p], [eps])
    assert s.dtw[0] == 0.0 and s.reference_lengths[0] == 4  # |R_tour| counts the repeat
    s = navdtw.tour_ndtw([p], [eps], [p], [eps], convention="corrected")
    assert s.dtw[0] == 0.0 and s.reference_lengths[0] == 3
    s = navdtw.tour_ndtw([p[:2] + p[3:]], [eps[:3]], [p], [eps])
    assert s.dtw[0] == 0.0
    s = navdtw.tour_ndtw([p], [eps], [p[:2] + p[3:]], [eps[:3]])
    assert s.dtw[0] == 0.0  # the agent's repeat is dropped before the DTW
    # oracle steps are left out
    phases = [["agent"] * 4 + ["oracle_goal"]]
    s = navdtw.tour_ndtw([[*p, [9.0, 9.0, 9.0]]], [[*eps, "a"]], [p], [eps], agent_phases=phases)
    assert s.dtw[0] == 0.0


def test_errors_name_the_tour():
    p = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]]
    with pytest.raises(ValueError, match=r"^tour 'x': the agent's episode order \['a', 'b'\] differs from"):
        navdtw.tour_ndtw([p], [["a", "b"]], [p], [["b", "a"]], tour_ids=["x"])
    with pytest.raises(ValueError, match=r"^tour '0': the agent has no agent-phase step"):
        navdtw.tour_ndtw([p], [["a", "a"]], [p], [["a", "a"]], agent_phases=[["oracle_goal"] * 2])
    with pytest.raises(ValueError, match=r"^tour '0': the ground truth has 2 positions but \(3,\) episode ids"):
        navdtw.tour_ndtw([p], [["a", "a"]], [p], [["a", "a", "a"]])
    with pytest.raises(ValueError, match=r"^gt_positions has 2 tours but agent_positions has 1"):
        navdtw.tour_ndtw([p], [["a", "a"]], [p, p], [["a", "a"]])
    with pytest.raises(ValueError, match=r"^tour '0': the agent step 1 has a non-finite coordinate"):
        navdtw.tour_ndtw([[[0.0, 0.0, 0.0], [math.nan, 0.0, 0.0]]], [["a", "a"]], [p], [["a", "a"]])
    with pytest.raises(ValueError, match=r"^convention must be one of ivln-ce, corrected"):
        navdtw.tour_ndtw([p], [["a", "a"]], [p], [["a", "a"]], convention="ivln")
    with pytest.raises(TypeError, match=r"^agent_positions must be a sequence"):
        navdtw.tour_ndtw(3, [], [], [])
