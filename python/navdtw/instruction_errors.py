"""Instruction-error detection and localization metrics (R2RIE-CE, Taioli et al.).

* :func:`auc` — detection: area under the ROC curve, positives are instructions with at least one
  error; ties between a positive and a negative score count one half (the Mann-Whitney U statistic
  divided by ``n_pos * n_neg``).
* :func:`atd` — localization: absolute token distance. Per perturbed episode, the mean
  ``|predicted index - true index|`` over its perturbed tokens, with predicted and true positions paired
  in sorted order (the optimal matching on a line); then the mean over episodes. Unit: tokens.
* :func:`sr_drop` — effect of errors on a policy: the relative success-rate change in percent,
  ``100 * (SR_perturbed - SR_correct) / SR_correct`` (negative when errors hurt).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ._messages import shown
from ._typing import ArrayLike

__all__ = ["atd", "auc", "sr_drop"]


def auc(labels: ArrayLike, scores: ArrayLike) -> float:
    """ROC AUC of ``scores`` for binary ``labels``, ties counted half.

    Parameters
    ----------
    labels : array_like
        One per instruction: bool, or 0 / 1 (1 = the instruction contains at least one error).
    scores : array_like
        One finite real per instruction; higher means "more likely to contain an error".

    Returns
    -------
    float
        In [0, 1]: the probability that a random positive scores above a random negative, plus
        half the probability of a tie. Computed in O(n log n) from average ranks.

    Raises
    ------
    ValueError
        On arguments that are not 1-D, unequal lengths, labels other than 0/1, non-finite scores,
        or when only one class is present.
    TypeError
        On labels or scores that are not numbers (booleans as scores included).
    """
    y = np.asarray(labels)
    s = np.asarray(scores)
    if y.ndim != 1 or s.ndim != 1:
        raise ValueError(f"labels and scores must be 1-D; got shapes {y.shape} and {s.shape}")
    if y.shape[0] != s.shape[0]:
        raise ValueError(f"labels and scores differ in length: {y.shape[0]} vs {s.shape[0]}")
    if y.dtype != np.bool_:
        if y.size and y.dtype.kind not in "iuf":
            raise TypeError(f"labels: expected 0/1 or bool, got dtype {y.dtype}")
        bad = ~((y == 0) | (y == 1))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"labels[{i}] = {shown(y[i])}: labels must be 0/1 or bool")
    if s.size and (s.dtype == np.bool_ or s.dtype.kind not in "iuf"):
        raise TypeError(f"scores: expected real numbers, got dtype {s.dtype}")
    s = s.astype(np.float64)
    bad = ~np.isfinite(s)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"scores[{i}] = {shown(s[i])}: scores must be finite")
    pos = y.astype(bool)
    n_pos = int(pos.sum())
    n_neg = int(pos.size - n_pos)
    if n_pos == 0 or n_neg == 0:
        raise ValueError(f"AUC needs both classes; got {n_pos} positive and {n_neg} negative labels")
    from scipy.stats import rankdata  # imported here: scipy.stats takes ~1 s to import

    ranks = rankdata(s, method="average")  # 1-based, ties share their mean rank
    u = float(ranks[pos].sum()) - n_pos * (n_pos + 1) / 2.0
    return u / (n_pos * n_neg)


def _positions(values: Any, name: str, episode: int) -> np.ndarray:
    arr = np.atleast_1d(np.asarray(values))
    if arr.ndim != 1:
        raise ValueError(f"{name}[{episode}]: expected a list of token indices, got shape {arr.shape}")
    if arr.size == 0:
        return np.zeros(0, dtype=np.int64)
    if arr.dtype == np.bool_ or arr.dtype.kind not in "iuf":
        raise TypeError(f"{name}[{episode}]: token indices must be integers, got dtype {arr.dtype}")
    if arr.dtype.kind == "f":
        bad = ~np.isfinite(arr) | (arr != np.floor(arr))
        if bad.any():
            raise ValueError(f"{name}[{episode}]: token indices must be integers, got {arr.tolist()}")
    if (arr < 0).any():
        raise ValueError(f"{name}[{episode}]: token indices must be non-negative, got {arr.tolist()}")
    return arr.astype(np.int64)


def atd(true_positions: Sequence[Any], predicted_positions: Sequence[Any]) -> float:
    """Absolute token distance (tokens), averaged over perturbed episodes.

    Parameters
    ----------
    true_positions : sequence
        One entry per perturbed episode: the token indices of its errors (a list or 1-D array; a
        bare integer means one error).
    predicted_positions : sequence
        Same layout; episode ``i`` must predict exactly as many positions as it has errors.

    Returns
    -------
    float
        ``mean_i mean_k |sort(pred_i)[k] - sort(true_i)[k]|`` (tokens). Sorting both pairs the
        k-th smallest prediction with the k-th smallest true position, the matching that
        minimises the summed distance.

    Raises
    ------
    ValueError
        On different episode counts, an episode whose counts differ or that has no error (it is not a
        perturbed episode), negative or non-integer indices, an entry that is not 1-D, or no
        episodes; the message names the episode.
    TypeError
        On indices that are not numbers, naming the episode; on arguments without a length
        (e.g. generators).
    """
    if len(true_positions) != len(predicted_positions):
        raise ValueError(
            f"true_positions has {len(true_positions)} episodes but predicted_positions has {len(predicted_positions)}"
        )
    n = len(true_positions)
    if n == 0:
        raise ValueError("atd needs at least one perturbed episode")
    trues, preds = [], []
    for i in range(n):
        t = _positions(true_positions[i], "true_positions", i)
        p = _positions(predicted_positions[i], "predicted_positions", i)
        if t.size == 0:
            raise ValueError(f"episode {i} has no true error positions; ATD is over perturbed episodes only")
        if t.size != p.size:
            raise ValueError(
                f"episode {i}: {t.size} true error position(s) but {p.size} predicted; predict one position per error"
            )
        trues.append(t)
        preds.append(p)
    counts = np.fromiter((t.size for t in trues), dtype=np.int64, count=n)
    episode = np.repeat(np.arange(n), counts)
    t_flat = np.concatenate(trues)
    p_flat = np.concatenate(preds)
    # Sort within each episode: lexsort's last key is the primary one, so episodes stay grouped.
    t_sorted = t_flat[np.lexsort((t_flat, episode))]
    p_sorted = p_flat[np.lexsort((p_flat, episode))]
    per_episode = np.bincount(episode, weights=np.abs(p_sorted - t_sorted).astype(np.float64), minlength=n)
    return float(np.mean(per_episode / counts))


def sr_drop(sr_correct: float | ArrayLike, sr_perturbed: float | ArrayLike) -> float | np.ndarray:
    """Relative change of success rate in percent: ``100 * (sr_perturbed - sr_correct) / sr_correct``.

    Both rates in the same unit (fractions or percentages; the ratio does not depend on it).
    Negative values mean errors hurt.

    Parameters
    ----------
    sr_correct : float or array_like
        The success rate with correct instructions, > 0.
    sr_perturbed : float or array_like
        The success rate with perturbed instructions, >= 0; broadcast against ``sr_correct``.

    Returns
    -------
    float or numpy.ndarray
        A float for two scalars, else a float64 array of the broadcast shape.

    Raises
    ------
    ValueError
        If a rate is negative, not finite or not a number, ``sr_correct`` is 0 (the relative
        change is undefined), or the shapes do not broadcast.
    """
    c = np.asarray(sr_correct, dtype=np.float64)
    p = np.asarray(sr_perturbed, dtype=np.float64)
    for name, arr in (("sr_correct", c), ("sr_perturbed", p)):
        if not np.all(np.isfinite(arr)) or np.any(arr < 0):
            raise ValueError(f"{name} must be finite and non-negative, got {arr.tolist()}")
    if np.any(c == 0):
        raise ValueError("sr_correct is 0: the relative SR drop is undefined")
    out = 100.0 * (p - c) / c
    return float(out) if out.ndim == 0 else out
