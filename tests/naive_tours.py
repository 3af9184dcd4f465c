"""A plain-Python twin of IVLN-CE's tour nDTW, written from its evaluator's logic, not copied:
``habitat_extensions/tour_ndtw.py`` of jacobkrantz/IVLN-CE (``compute_tour_ndtw``, ``novel_only``,
``alignments_from_paths``, ``extract_ep_order``, ``window_align_func``, ``compute_episodes_per_tour``,
``aggregate_scores``), on the files' own shape: per tour a list of steps ``{"episode_id", "phase",
"position"}``.

The DTW is dtw-python's ``symmetric1`` over a boolean window as its ``_globalCostMatrix`` runs it:
the cost matrix is NaN everywhere but the seeded start cell ``cm[0, 0] = lm[0, 0]``, cells outside
the window are skipped (stay NaN), every other cell is ``lm + min`` of its non-NaN predecessors,
and a NaN end cell is ``No warping path found``. ``dtw_fn`` may replace it (dtw-python itself).
The local costs come from ``cost_fn(agent_positions, gt_positions)`` (rows agent, columns ground
truth): by default navdtw's float32 Euclidean distance, vectorised.
"""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np


class NoWarpingPath(ValueError):
    """dtw-python's ``No warping path found compatible with the local constraints``."""


def float32_cost(agent: list, gt: list) -> np.ndarray:
    """navdtw's cost: float32 points, float32 differences, squares summed left to right in float32,
    one float32 sqrt (numpy's elementwise float32 operations round each step the same way)."""
    a = np.asarray(agent, dtype=np.float32)
    g = np.asarray(gt, dtype=np.float32)
    diff = a[:, None, :] - g[None, :, :]
    s = diff[..., 0] * diff[..., 0]
    for k in range(1, a.shape[1]):
        s = s + diff[..., k] * diff[..., k]
    return np.sqrt(s).astype(np.float64)


def windowed_symmetric1(lm: np.ndarray, window: np.ndarray) -> float:
    n, m = lm.shape
    cm = np.full((n, m), math.nan)
    cm[0, 0] = lm[0, 0]
    for i in range(n):
        for j in range(m):
            if not window[i, j] or not math.isnan(cm[i, j]):
                continue
            best = math.nan
            for pi, pj in ((i - 1, j - 1), (i, j - 1), (i - 1, j)):
                if pi >= 0 and pj >= 0 and not math.isnan(cm[pi, pj]):
                    best = cm[pi, pj] if math.isnan(best) else min(best, cm[pi, pj])
            if not math.isnan(best):
                cm[i, j] = lm[i, j] + best
    if math.isnan(cm[n - 1, m - 1]):
        raise NoWarpingPath("No warping path found compatible with the local constraints")
    return float(cm[n - 1, m - 1])


def episodes_per_tour(tours: dict) -> dict:
    """Per tour: how often the episode id changes from one step to the next (all phases)."""
    out: dict = defaultdict(int)
    for tour_id, steps in tours.items():
        for prev, cur in zip(steps, steps[1:]):
            if cur["episode_id"] != prev["episode_id"]:
                out[tour_id] += 1
    return out


def drop_repeats(steps: list) -> list:
    """Steps that differ from the step right before them (the first step always)."""
    return [s for k, s in enumerate(steps) if k == 0 or s != steps[k - 1]]


def episode_order(steps: list) -> list:
    order = []
    for s in steps:
        if not order or order[-1] != s["episode_id"]:
            order.append(s["episode_id"])
    return order


def change_points(steps: list) -> list:
    """For each episode change: the step before it (stopping) and the step at it (starting)."""
    points = []
    for k in range(1, len(steps)):
        if steps[k]["episode_id"] != steps[k - 1]["episode_id"]:
            points += [k - 1, k]
    return points


def tour_scores(agent_paths: dict, gt_paths: dict, success_distance=3.0, cost_fn=float32_cost, dtw_fn=None) -> dict:
    """Per tour, t-nDTW as IVLN-CE's evaluator computes it."""
    if set(agent_paths) != set(gt_paths):
        raise ValueError("tours are different")
    scores = {}
    for tour_id, agent in agent_paths.items():
        agent = [s for s in drop_repeats(agent) if s["phase"] == "agent"]
        gt = [s for s in gt_paths[tour_id] if s["phase"] == "agent"]  # the ground truth keeps repeats
        if episode_order(agent) != episode_order(gt):
            raise AssertionError("agent and GT episode orders do not match.")
        alignments = list(zip(change_points(agent), change_points(gt)))  # (agent index, gt index)
        ap = [s["position"] for s in agent]
        gtp = [s["position"] for s in gt]
        lm = cost_fn(ap, gtp)
        window = np.ones(lm.shape, dtype=bool)
        for i, j in alignments:  # column j keeps row i alone; a later alignment on j wins
            window[:, j] = False
            window[i, j] = True
        d = (dtw_fn or windowed_symmetric1)(lm, window)
        scores[tour_id] = math.exp(-d / (len(gtp) * success_distance))
    return scores


def split_score(scores: dict, gt_paths: dict) -> float:
    """The split's t-nDTW: tours weighted by their episode changes in the ground truth."""
    weights = episodes_per_tour(gt_paths)
    total = sum(weights.values())
    split = 0.0
    for tour_id, v in scores.items():
        split += v * (weights[tour_id] / total)  # ZeroDivisionError with single-episode tours only
    return split
