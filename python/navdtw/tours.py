"""Tour nDTW (t-nDTW) of iterative VLN (IVLN, IR2R-CE): one DTW over a whole tour of episodes.

A tour is a run of episodes in one scene; the agent's path and the ground truth are each one list
of steps over the whole tour, every step with its episode id and its phase (``"agent"``, or the
oracle's ``"oracle_goal"`` / ``"oracle_start"`` that carry the agent between episodes). Two
conventions (``docs/metrics.md``, "Tour nDTW (IVLN-CE)"):

``convention="ivln-ce"`` (the default) is IVLN-CE's evaluator as written,
``habitat_extensions/tour_ndtw.py`` of jacobkrantz/IVLN-CE, ``compute_tour_ndtw``:

* the agent's steps drop every step equal to the step before it (position, phase and episode;
  ``novel_only``); the ground truth's do not (its ``novel_only`` result is overwritten on the next
  line);
* oracle-phase steps are left out of both;
* the alignment is dtw-python's ``symmetric1`` with ``window_align_func``: at every episode change
  the agent's last step of the episode is aligned with the ground truth's last step alone, and
  the agent's first step of the next episode with the ground truth's first step alone
  (:func:`navdtw.dtw_anchored` with ``exclusive=True``); where that window leaves no warping
  path the evaluator stops with dtw-python's ``No warping path found``, and so does this function
  (a ``ValueError`` naming the tour);
* ``t-nDTW = exp(-DTW / (|R_tour| * threshold))`` with ``|R_tour|`` the ground truth's
  agent-phase steps;
* the split's score weights each tour by its number of episode changes in the ground truth
  (``compute_episodes_per_tour``), ``k - 1`` for ``k`` episodes: single-episode tours weigh 0, and a
  split of single-episode tours only has no score (the evaluator divides by zero; here ``nan``).

``convention="corrected"``: both paths drop repeated steps, the alignment passes through each
episode's first and last step pairs (:func:`navdtw.dtw_anchored`; the tour's DTW is then the sum of
its episodes' DTWs, and every tour has one), and tours weigh their number of episodes ``k``.

Positions are measured as everywhere in navdtw: float32 coordinates, float32 distances, double
sums (the evaluator measures in float64: values differ by ~1e-7 relative).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ._messages import shown
from .anchored import dtw_anchored_batch
from .engine import MAX_COORDINATE, check_threshold, resolve_workers

__all__ = ["TOUR_CONVENTIONS", "TourScores", "tour_ndtw"]

#: The conventions of :func:`tour_ndtw`.
TOUR_CONVENTIONS = ("ivln-ce", "corrected")

AGENT_PHASE = "agent"


@dataclass(frozen=True)
class TourScores:
    """Per-tour t-nDTW and the split's weighted score (:func:`tour_ndtw`).

    Attributes
    ----------
    tour_ids : list of str
        The tours, in the order given.
    ndtw : numpy.ndarray
        float64 ``[T]``: each tour's t-nDTW.
    dtw : numpy.ndarray
        float64 ``[T]``: each tour's constrained DTW (metres).
    reference_lengths : numpy.ndarray
        int64 ``[T]``: ``|R_tour|``, the ground-truth steps the nDTW divides by.
    episodes : numpy.ndarray
        int64 ``[T]``: each tour's number of episodes ``k``.
    weights : numpy.ndarray
        float64 ``[T]``: each tour's weight in the score (``k - 1`` under ``"ivln-ce"``, ``k`` under
        ``"corrected"``).
    score : float
        ``sum(ndtw * weights / sum(weights))``: the split's t-nDTW in [0, 1]; ``nan`` when the
        weights sum to 0 (every tour a single episode, under ``"ivln-ce"``).
    convention : str
        ``"ivln-ce"`` or ``"corrected"``.
    """

    tour_ids: list
    ndtw: np.ndarray
    dtw: np.ndarray
    reference_lengths: np.ndarray
    episodes: np.ndarray
    weights: np.ndarray
    score: float
    convention: str


def _tour_arrays(positions, episodes, phases, t: int, who: str, name: str):
    pos = np.asarray(positions, dtype=np.float64) if len(positions) else np.zeros((0, 3))
    if pos.ndim != 2 or pos.shape[1] < 1:
        raise ValueError(f"{name}: {who} positions must be [n, D] coordinates, got shape {pos.shape}")
    n = len(pos)
    ep = np.asarray(episodes)
    if ep.shape != (n,):
        raise ValueError(f"{name}: {who} has {n} positions but {ep.shape} episode ids (one per step)")
    if phases is None:
        ph = np.full(n, AGENT_PHASE)
    else:
        ph = np.asarray(phases)
        if ph.shape != (n,):
            raise ValueError(f"{name}: {who} has {n} positions but {ph.shape} phases (one per step)")
    bad = ~(np.abs(pos) <= MAX_COORDINATE).all(axis=1)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name}: {who} step {k} has a non-finite coordinate or one beyond +-1e15 m")
    return pos, ep, ph


def _novel_only(pos: np.ndarray, ep: np.ndarray, ph: np.ndarray) -> np.ndarray:
    """The steps kept by IVLN-CE's ``novel_only``: each step unequal to the step before it."""
    keep = np.ones(len(pos), dtype=bool)
    if len(pos) > 1:
        same = (pos[1:] == pos[:-1]).all(axis=1) & (ep[1:] == ep[:-1]) & (ph[1:] == ph[:-1])
        keep[1:] = ~same
    return keep


def _changes(ep: np.ndarray) -> np.ndarray:
    """Indices i >= 1 where the episode id differs from the step before."""
    return np.flatnonzero(ep[1:] != ep[:-1]) + 1 if len(ep) > 1 else np.zeros(0, dtype=np.int64)


def _order(ep: np.ndarray) -> list:
    """The episodes in the order the steps visit them, each run once (``extract_ep_order``)."""
    return [ep[0].item() if hasattr(ep[0], "item") else ep[0]] + [
        v.item() if hasattr(v, "item") else v for v in ep[_changes(ep)]
    ]


def _as_tours(value, name: str, count: int | None) -> list:
    if isinstance(value, (str, bytes)) or not isinstance(value, (Sequence, np.ndarray)):
        raise TypeError(f"{name} must be a sequence with one entry per tour, got {shown(value)}")
    if count is not None and len(value) != count:
        raise ValueError(f"{name} has {len(value)} tours but agent_positions has {count}")
    return list(value)


def tour_ndtw(
    agent_positions,
    agent_episodes,
    gt_positions,
    gt_episodes,
    *,
    agent_phases=None,
    gt_phases=None,
    tour_ids=None,
    threshold: float = 3.0,
    convention: str = "ivln-ce",
    workers: int = -1,
) -> TourScores:
    """Tour nDTW of every tour of a split, and the split's weighted score.

    Every argument but the options holds one entry per tour, in the same order: the agent's and
    the ground truth's steps over the whole tour, as ``scripts/t-ndtw.py`` of jacobkrantz/IVLN-CE
    reads them from ``agent_path.json`` and the ground-truth file (each step a ``position``, an
    ``episode_id`` and a ``phase``).

    Parameters
    ----------
    agent_positions, gt_positions : sequence of array_like
        Per tour, ``[n, D]`` positions in metres (D = 3 in IVLN-CE), one per step.
    agent_episodes, gt_episodes : sequence of array_like
        Per tour, ``[n]`` episode ids (strings or integers), one per step.
    agent_phases, gt_phases : sequence of array_like, optional
        Per tour, ``[n]`` phases (``"agent"``, ``"oracle_goal"``, ``"oracle_start"``); only
        ``"agent"`` steps are scored. ``None`` (the default): every step is an agent step.
    tour_ids : sequence of str, optional
        Names of the tours for the result and the error messages; default ``"0"``, ``"1"``, ...
    threshold : float, optional
        The success distance d_th in metres (IVLN-CE's ``--success-distance``, default 3.0).
    convention : str, optional
        ``"ivln-ce"`` (the default): IVLN-CE's evaluator as written, its quirks included;
        ``"corrected"``: the definition it means (module docs).
    workers : int, optional
        Threads (-1 = all cores), as :func:`navdtw.dtw_batch`.

    Returns
    -------
    TourScores
        Per-tour t-nDTW, DTW, ``|R_tour|``, episodes and weights, and the split's score.

    Raises
    ------
    TypeError
        Arguments that are not sequences of per-tour arrays, a ``threshold`` that is not a number.
    ValueError
        Naming the tour: arguments of unequal numbers of tours or steps, a non-finite position, a
        tour without agent-phase steps, agent and ground-truth episode orders that differ (the
        evaluator's assertion), and under ``"ivln-ce"`` a tour whose window leaves no warping path
        (where the evaluator stops with dtw-python's error); also an unknown ``convention``.

    Examples
    --------
    >>> import navdtw
    >>> gt = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [5.0, 0.0, 0.0], [6.0, 0.0, 0.0]]
    >>> agent = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [5.0, 0.0, 0.0], [6.0, 0.0, 0.0]]
    >>> eps, agent_eps = ["a", "a", "b", "b"], ["a", "a", "a", "b", "b"]
    >>> s = navdtw.tour_ndtw([agent], [agent_eps], [gt], [eps])
    >>> float(s.dtw[0]), int(s.weights[0]), float(s.score)  # the repeated step is dropped
    (0.0, 1, 1.0)
    """
    if not isinstance(convention, str) or convention not in TOUR_CONVENTIONS:
        raise ValueError(f"convention must be one of {', '.join(TOUR_CONVENTIONS)}, got {shown(convention)}")
    threshold = check_threshold(threshold)
    workers = resolve_workers(workers)
    agent_positions = _as_tours(agent_positions, "agent_positions", None)
    T = len(agent_positions)
    agent_episodes = _as_tours(agent_episodes, "agent_episodes", T)
    gt_positions = _as_tours(gt_positions, "gt_positions", T)
    gt_episodes = _as_tours(gt_episodes, "gt_episodes", T)
    agent_phases = [None] * T if agent_phases is None else _as_tours(agent_phases, "agent_phases", T)
    gt_phases = [None] * T if gt_phases is None else _as_tours(gt_phases, "gt_phases", T)
    ids = [str(t) for t in range(T)] if tour_ids is None else [str(t) for t in _as_tours(tour_ids, "tour_ids", T)]
    ivln = convention == "ivln-ce"

    refs, qrys, anchors = [], [], []
    ref_len = np.zeros(T, dtype=np.int64)
    episodes = np.zeros(T, dtype=np.int64)
    weights = np.zeros(T, dtype=np.float64)
    for t in range(T):
        name = f"tour {ids[t]!r}"
        apos, aep, aph = _tour_arrays(agent_positions[t], agent_episodes[t], agent_phases[t], t, "the agent", name)
        gpos, gep, gph = _tour_arrays(gt_positions[t], gt_episodes[t], gt_phases[t], t, "the ground truth", name)
        # compute_episodes_per_tour: episode changes over the ground truth's steps, every phase
        changes = len(_changes(gep))
        a_keep = _novel_only(apos, aep, aph) & (aph == AGENT_PHASE)
        g_keep = (gph == AGENT_PHASE) & (True if ivln else _novel_only(gpos, gep, gph))
        apos, aep = apos[a_keep], aep[a_keep]
        gpos, gep = gpos[g_keep], gep[g_keep]
        for who, p in (("the agent", apos), ("the ground truth", gpos)):
            if len(p) == 0:
                raise ValueError(f"{name}: {who} has no agent-phase step")
        a_order, g_order = _order(aep), _order(gep)
        if a_order != g_order:
            raise ValueError(
                f"{name}: the agent's episode order {a_order} differs from the ground truth's {g_order} "
                "(IVLN-CE's evaluator: 'agent and GT episode orders do not match.')"
            )
        # alignment points: at each episode change, (last step, last step) and (first, first)
        ac, gc = _changes(aep), _changes(gep)
        pairs = np.empty((2 * len(gc), 2), dtype=np.int64)  # (ground-truth index, agent index)
        pairs[0::2, 0], pairs[0::2, 1] = gc - 1, ac - 1
        pairs[1::2, 0], pairs[1::2, 1] = gc, ac
        if ivln and len(pairs):
            # window_align_func's loop: a later alignment on the same ground-truth step wins
            last = np.r_[pairs[1:, 0] != pairs[:-1, 0], True]
            pairs = pairs[last]
        refs.append(gpos.astype(np.float32))
        qrys.append(apos.astype(np.float32))
        anchors.append(pairs)
        ref_len[t] = len(gpos)
        episodes[t] = len(g_order)
        weights[t] = changes if ivln else len(g_order)

    d = dtw_anchored_batch(refs, qrys, anchors, exclusive=ivln, workers=workers) if T else np.zeros(0)
    if ivln and np.isinf(d).any():
        t = int(np.flatnonzero(np.isinf(d))[0])
        raise ValueError(
            f"tour {ids[t]!r}: IVLN-CE's window leaves no warping path (an episode whose ground truth has one "
            "step, or two against more agent steps, can align with no agent step but its anchor), where its "
            "evaluator stops with dtw-python's 'No warping path found compatible with the local constraints'; "
            "convention='corrected' scores it"
        )
    values = np.exp(-d / (ref_len.astype(np.float64) * threshold))
    total = float(weights.sum())
    if total == 0:
        score = math.nan
    else:
        # aggregate_scores: sum of t-nDTW * (weight / total), tour by tour
        score = 0.0
        for v, w in zip(values.tolist(), weights.tolist()):
            score += v * (w / total)
    return TourScores(
        tour_ids=ids,
        ndtw=values,
        dtw=np.asarray(d, dtype=np.float64),
        reference_lengths=ref_len,
        episodes=episodes,
        weights=weights,
        score=score,
        convention=convention,
    )
