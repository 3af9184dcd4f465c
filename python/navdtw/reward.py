"""nDTW as a reinforcement-learning reward, streamed over a batch of environments.

Ilharco et al. (2019) train their best agent with the reward
``nDTW(q_1..q_{t+1}, R) - nDTW(q_1..q_t, R)`` at every step. The DTW recurrence needs only the
last DP column to extend a query by one point, so :class:`NDTWReward` keeps one column of |R|
doubles per episode and a step costs O(|R|): one C++ call updates the whole batch in place, with
the GIL released and no allocation. Recomputing the full DTW every step costs O(|R| t) instead.

Example (a vectorized environment with B parallel episodes)::

    reward = navdtw.NDTWReward(reference_paths, threshold=3.0)   # coordinates, metres
    reward.step(start_positions)                                  # first point: reward 0
    while True:
        positions, stopped = env.step(actions)
        r = reward.step(positions)                                # [B] nDTW gains
        r += reward.done(stopped)                                 # optional success bonus
"""

from __future__ import annotations

import numpy as np

from . import _core
from ._messages import shown
from .engine import MAX_COORDINATE, as_matrices, check_finite, check_threshold, resolve_workers
from .paths import Paths, as_paths, unchecked_paths

__all__ = ["NDTWReward"]


class NDTWReward:
    """Streaming nDTW reward for B episodes at once.

    Parameters
    ----------
    references : Paths or sequence of array_like
        One non-empty reference path per episode (:class:`navdtw.Paths` or a list): coordinates
        ``[n, D]`` (Euclidean, metres) or node ids (with ``distances``).
    threshold : float, optional
        Success distance d_th in metres (default 3.0); nDTW = ``exp(-DTW / (|R| d_th))``.
    distances : array_like or sequence of array_like, optional
        Node mode: a ``[V, V]`` matrix, or a list of them with ``env``.
    env : array_like, optional
        With a list of matrices, ``[B]`` ints naming each episode's matrix.
    success_reward : float, optional
        Weight of the paper's terminal reward ``1 - d(q_last, r_last) / d_th`` for episodes that
        end within ``threshold`` of the goal (``d <= d_th``, the paper's success; the bonus is 0
        at d = d_th), returned by :meth:`done`; 0 (the default) disables.
    workers : int, optional
        Threads for a step (-1 = all cores, the default everywhere in navdtw; pass 1 when the
        environment loop owns the parallelism, e.g. one reward per vectorised-env worker process).

    Raises
    ------
    TypeError
        ``references`` that are not paths (e.g. a string), a ``threshold`` or ``workers`` of
        the wrong type, a non-numeric matrix.
    ValueError
        An empty reference; node references without ``distances`` or coordinates with them
        (or with ``env``); several matrices without ``env``, an ``env`` that is not one integer
        per episode or out of range; a reference node id outside its matrix; a non-finite
        coordinate; a bad matrix (as :func:`navdtw.dtw`); a ``threshold`` that is not finite
        and > 0, a negative or non-finite ``success_reward``, a bad ``workers``.

    Notes
    -----
    After ``t >= 1`` steps, :attr:`dtw` and :attr:`ndtw` equal ``navdtw.dtw`` / ``navdtw.ndtw`` of the
    reference against the points stepped so far. The first step of an episode returns 0 (there is
    no previous prefix), so an episode's rewards sum to its final nDTW minus its first-step nDTW.
    """

    def __init__(
        self,
        references,
        *,
        threshold: float = 3.0,
        distances=None,
        env=None,
        success_reward: float = 0.0,
        workers: int = -1,
    ):
        self.threshold = check_threshold(threshold)
        self.success_reward = float(success_reward)
        if not np.isfinite(self.success_reward) or self.success_reward < 0:
            raise ValueError(f"success_reward must be a finite weight >= 0, got {shown(success_reward)}")
        self.workers = resolve_workers(workers)
        self._matrices = None if distances is None else as_matrices(distances)
        self._env_arg = env
        self._set_references(as_paths(references, "references"), env)

    # ---- state ----

    def _set_references(self, refs: Paths, env) -> None:
        lengths = refs.lengths
        if len(refs) == 0:
            raise ValueError("references is empty")
        if lengths.min() == 0:
            raise ValueError(f"references[{int(np.argmin(lengths))}] is empty")
        nodes = refs.is_nodes
        if nodes != (self._matrices is not None):
            raise ValueError("node references need distances=; coordinate references must not have it")
        if nodes:
            values = refs.values.astype(np.int64, copy=False)
            if env is None:
                if len(self._matrices) > 1:
                    raise ValueError("several distance matrices need env= (one index per episode)")
                self._env = None
                sizes = np.full(len(refs), self._matrices[0].shape[0])
            else:
                e = np.asarray(env)
                if e.dtype.kind not in "iu" or e.shape != (len(refs),):
                    raise ValueError(f"env must be [B] integers, one per episode ({len(refs)})")
                e = e.astype(np.int64)
                if e.min() < 0 or e.max() >= len(self._matrices):
                    b = int(np.argmax((e < 0) | (e >= len(self._matrices))))
                    raise ValueError(f"env[{b}] = {e[b]} is out of range for {len(self._matrices)} matrices")
                self._env = e
                sizes = np.array([m.shape[0] for m in self._matrices])[e]
            per_point = np.repeat(sizes, lengths)
            bad = (values < 0) | (values >= per_point)
            if bad.any():
                k = int(np.argmax(bad))
                b = int(np.searchsorted(refs.offsets, k, side="right") - 1)
                raise ValueError(f"references[{b}] has node id {values[k]} out of range")
            self._refs = unchecked_paths(np.ascontiguousarray(values), refs.offsets)
        else:
            if env is not None:
                raise ValueError("env= selects distance matrices; coordinate references have none")
            check_finite(refs, "references")
            self._refs = refs
        B = len(refs)
        self._columns = np.full(len(self._refs.values), np.inf)
        self._steps = np.zeros(B, dtype=np.int64)
        self._dtw = np.full(B, np.inf)
        self._ndtw = np.zeros(B)
        self._active = np.ones(B, dtype=np.uint8)
        self._rewards = np.zeros(B)
        self._last = None

    def __len__(self) -> int:
        return len(self._steps)

    @property
    def dtw(self) -> np.ndarray:
        """Current DTW per episode (metres; inf before the first step). A copy."""
        return self._dtw.copy()

    @property
    def ndtw(self) -> np.ndarray:
        """Current nDTW per episode (0 before the first step). A copy."""
        return self._ndtw.copy()

    @property
    def steps(self) -> np.ndarray:
        """Points appended so far per episode."""
        return self._steps.copy()

    @property
    def active(self) -> np.ndarray:
        """True for episodes still running."""
        return self._active.astype(bool)

    def reset(self, indices=None, references=None) -> None:
        """Starts episodes again, optionally with new references.

        Episodes not reset keep their state.

        Parameters
        ----------
        indices : array_like, optional
            The episodes to reset: integer indices (negative ones count from the end) or a
            boolean mask ``[B]``; ``None`` (the default) resets all.
        references : Paths or sequence of array_like, optional
            New reference paths for those episodes, one per index (each episode at most once),
            of the same kind as the others.

        Raises
        ------
        TypeError
            ``indices`` that are neither integers nor a boolean mask.
        IndexError
            An index out of range.
        ValueError
            A mask of another length than the episodes; as many ``references`` as indices, an
            episode given twice with references; a new reference that is empty or of another
            kind or dimension, or that the constructor would refuse.
        """
        B = len(self)
        if indices is None:
            idx = np.arange(B)
        else:
            raw = np.asarray(indices)
            if raw.dtype == np.bool_:  # a mask of the episodes to reset, as vector envs return
                if raw.shape != (B,):
                    raise ValueError(f"reset: a boolean mask needs one entry per episode ({B})")
                idx = np.flatnonzero(raw)
            elif raw.size == 0:
                idx = np.zeros(0, dtype=np.int64)
            elif raw.dtype.kind in "iu":
                idx = raw.astype(np.int64).reshape(-1)
            else:
                raise TypeError(f"reset: indices must be integers or a boolean mask, got {raw.dtype}")
        if idx.size and (idx.min() < -B or idx.max() >= B):
            raise IndexError(f"reset: episode index out of range for {B} episodes")
        idx = idx % B if idx.size else idx
        if references is not None:
            new = list(references) if not isinstance(references, Paths) else references.tolist()
            if len(new) != len(idx):
                raise ValueError(f"reset: {len(new)} references for {len(idx)} episodes")
            if not idx.size:
                return
            uniq, counts = np.unique(idx, return_counts=True)
            if (counts > 1).any():
                raise ValueError(f"reset: episode {int(uniq[counts > 1][0])} is given twice with references")
            paths = self._refs.tolist()
            for k, i in enumerate(idx):
                paths[int(i)] = np.asarray(new[k])
            old_offsets, old_columns, old_last = self._refs.offsets, self._columns, self._last
            state = (self._steps.copy(), self._dtw.copy(), self._ndtw.copy(), self._active.copy())
            self._set_references(Paths.from_list(paths, name="references"), self._env_arg)
            # Episodes not being reset keep their state; their columns are copied over.
            keep = np.ones(B, dtype=bool)
            keep[idx] = False
            for b in np.flatnonzero(keep):
                o, n = self._refs.offsets[b], self._refs.offsets[b + 1]
                self._columns[o:n] = old_columns[old_offsets[b] : old_offsets[b + 1]]
            steps, dtw, ndtw, active = state
            self._steps[keep], self._dtw[keep], self._ndtw[keep] = steps[keep], dtw[keep], ndtw[keep]
            self._active[keep] = active[keep]
            if old_last is not None and (self._refs.is_nodes or old_last.shape[1:] == (self._refs.dim,)):
                self._last = old_last
            return
        starts, ends = self._refs.offsets[idx], self._refs.offsets[idx + 1]
        for o, e in zip(starts, ends):
            self._columns[o:e] = np.inf
        self._steps[idx] = 0
        self._dtw[idx] = np.inf
        self._ndtw[idx] = 0.0
        self._active[idx] = 1

    def step(self, points) -> np.ndarray:
        """Appends one point per episode and returns the nDTW gains.

        Parameters
        ----------
        points : array_like
            Node ids ``[B]`` or coordinates ``[B, D]``; entries of finished episodes are ignored
            (their reward is 0).

        Returns
        -------
        numpy.ndarray
            float64 ``[B]``: each running episode's nDTW after this point minus before it (0 at
            its first point). The array is reused by the next call: copy it to keep.

        Raises
        ------
        ValueError
            ``points`` of another shape or not numbers (integers for node ids); a node id outside
            its matrix or a coordinate that is not finite (or beyond +-1e15 m) for a running
            episode.
        """
        B = len(self)
        if self._refs.is_nodes:
            p = np.asarray(points)
            if p.dtype.kind not in "iu" or p.shape != (B,):
                raise ValueError(f"points must be [B] = [{B}] integer node ids, got {p.dtype} {p.shape}")
            p = p.astype(np.int64, copy=False)
            _core.reward_step_nodes(
                self._refs.values,
                self._columns,
                self._refs.offsets,
                self._steps,
                self._dtw,
                self._ndtw,
                self._active,
                p,
                self._rewards,
                self._matrices,
                env=self._env,
                threshold=self.threshold,
                workers=self.workers,
            )
        else:
            D = self._refs.dim
            p = np.asarray(points)
            if p.dtype.kind not in "iuf" or p.shape != (B, D):
                raise ValueError(f"points must be [B, D] = [{B}, {D}] coordinates, got {p.dtype} {p.shape}")
            p = np.ascontiguousarray(p, dtype=np.float32)
            if not (np.abs(p) <= MAX_COORDINATE).all():  # cheap test first; finished episodes may hold anything
                act = self._active.view(bool)
                bad = act & ~(np.abs(p) <= MAX_COORDINATE).all(axis=1)
                if bad.any():
                    raise ValueError(
                        f"points[{int(np.flatnonzero(bad)[0])}] is not finite or beyond +-{MAX_COORDINATE:g} m"
                    )
            _core.reward_step_points(
                self._refs.values,
                self._columns,
                self._refs.offsets,
                self._steps,
                self._dtw,
                self._ndtw,
                self._active,
                p,
                self._rewards,
                self.threshold,
                workers=self.workers,
            )
        # Remember each running episode's last point for the terminal reward.
        if self._last is None:
            self._last = np.zeros_like(p)
        where = self._active.view(bool)
        np.copyto(self._last, p, where=where if p.ndim == 1 else where[:, None])
        return self._rewards

    def _goal_distance(self, idx: np.ndarray) -> np.ndarray:
        """d(r_last, last point) for episodes idx (metres; node mode reads distances[goal, point],
        rows = reference nodes, as the DTW cost does)."""
        goal = self._refs.values[self._refs.offsets[idx + 1] - 1]
        last = self._last[idx]
        if not self._refs.is_nodes:
            diff = last.astype(np.float64) - goal
            return np.sqrt(np.einsum("ij,ij->i", diff, diff))
        if self._env is None:
            return self._matrices[0][goal, last].astype(np.float64)
        out = np.empty(len(idx))
        for k, mat in enumerate(self._matrices):
            sel = self._env[idx] == k
            out[sel] = mat[goal[sel], last[sel]]
        return out

    def done(self, mask) -> np.ndarray:
        """Marks episodes finished and returns their terminal rewards.

        Parameters
        ----------
        mask : array_like
            bool ``[B]`` (or 0/1): the episodes that end now.

        Returns
        -------
        numpy.ndarray
            float64 ``[B]``: with ``success_reward`` > 0, an episode ending now within
            ``threshold`` of its goal gets ``success_reward * (1 - d(q_last, r_last) /
            threshold)``; everything else gets 0.

        Raises
        ------
        ValueError
            ``mask`` of another length than the episodes.
        """
        m = np.asarray(mask)
        if m.shape != (len(self),):
            raise ValueError(f"mask must have one entry per episode ({len(self)})")
        m = m.astype(bool) & self._active.astype(bool)
        out = np.zeros(len(self))
        if self.success_reward > 0 and self._last is not None:
            scored = np.flatnonzero(m & (self._steps > 0))  # an episode with no point has no end
            dist = self._goal_distance(scored)
            ok = dist <= self.threshold
            out[scored[ok]] = self.success_reward * (1.0 - dist[ok] / self.threshold)
        self._active[m] = 0
        return out
