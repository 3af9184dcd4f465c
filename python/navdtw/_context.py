"""Internal (re-exported by :mod:`navdtw.registry`): what a metric's computation reads, the
:class:`Context` of one batch, and the formulas the built-in metrics and :class:`navdtw.Scores`
share (SPL's ratio, CLS, goal progress, a ratio that is never NaN)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from . import _core

STAT_INDEX: dict[str, int] = {name: k for k, name in enumerate(_core.STATS)}

#: Per-episode inputs that replace the distance tests of success and oracle success when given
#: (both together): ``evaluate(..., inputs={"success": s, "oracle_success": o})``.
SUCCESS_INPUTS: tuple[str, str] = ("success", "oracle_success")

#: Per-episode distances to the goal that replace NE and ONE when given (both together, metres,
#: ``inf`` = unreachable): the final point's and the path's nearest point's,
#: ``evaluate(..., inputs={"distance_to_goal": ne, "oracle_distance_to_goal": one})``.
GOAL_DISTANCE_INPUTS: tuple[str, str] = ("distance_to_goal", "oracle_distance_to_goal")


# --------------------------------------------------------------------------------------------
# the context a computation sees
# --------------------------------------------------------------------------------------------


class Context:
    """What a metric's computation may read, for one batch of B episodes (all arrays ``[B]``).

    * ``stat(name)``: a C++ per-pair statistic (``navdtw._core.STATS``), float64.
    * ``threshold`` (metres), ``convention`` (a :class:`navdtw.Convention`), ``size`` (B),
      ``nodes`` (node paths or coordinates).
    * ``sr``: success as 0.0 / 1.0 (the convention's comparison, and ``stopped=`` when given), or
      the input ``success`` when given (:data:`SUCCESS_INPUTS`).
    * ``oracle_success``: 1[one within d_th], or the input ``oracle_success`` when given.
    * ``success(distance)``: the convention's distance comparison for any distances.
    * ``spl_length``: SPL's l for the convention; ``spl_ratio``: l / max(PL(Q), l, floor) with
      the convention's ``spl_floor``.
    * ``dtw``: DTW per episode (computed on first use, once); ``ndtw``: its nDTW.
    * ``reference_points``, ``query_points``: number of points of each path (after collapsing).
    * ``input(name)``: an extra per-episode input given to ``evaluate(inputs=...)``.

    :func:`navdtw.evaluate` builds it; the constructor is for navdtw's modules.

    Parameters
    ----------
    stats : numpy.ndarray
        The engine's per-pair statistics, ``[len(STATS), B]`` float64.
    threshold : float
        The success distance d_th (metres).
    convention : Convention
        The convention scored under.
    spl_length : numpy.ndarray
        SPL's l per episode (metres).
    reference_points, query_points : numpy.ndarray
        Number of points of each reference and query (after collapsing).
    dtw : callable
        ``f() -> float64 [B]``: computes DTW (called at most once, when a metric asks).
    stopped : numpy.ndarray, optional
        Where the agent issued stop (bool ``[B]``), if given.
    inputs : dict[str, numpy.ndarray], optional
        The extra per-episode inputs.
    nodes : bool, optional
        Node paths (default) or coordinates.
    """

    def __init__(
        self,
        stats: np.ndarray,
        *,
        threshold: float,
        convention,
        spl_length: np.ndarray,
        reference_points: np.ndarray,
        query_points: np.ndarray,
        dtw: Callable[[], np.ndarray],
        stopped: np.ndarray | None = None,
        inputs: dict[str, np.ndarray] | None = None,
        nodes: bool = True,
    ):
        self._stats = stats
        self.threshold = threshold
        self.convention = convention
        self.spl_length = spl_length
        self.reference_points = reference_points
        self.query_points = query_points
        self.stopped = stopped
        self.nodes = nodes
        self._inputs = inputs or {}
        self._dtw_fn = dtw
        self._cache: dict[str, np.ndarray] = {}

    @property
    def size(self) -> int:
        """Number of episodes B."""
        return int(self._stats.shape[1])

    def stat(self, name: str) -> np.ndarray:
        """A per-pair statistic of the engine.

        Parameters
        ----------
        name : str
            One of ``navdtw._core.STATS`` (``"ne"``, ``"pl_query"``, ...).

        Returns
        -------
        numpy.ndarray
            float64 ``[B]`` (a view; do not change it).

        Raises
        ------
        KeyError
            A name the engine does not compute.
        """
        return self._stats[STAT_INDEX[name]]

    def input(self, name: str) -> np.ndarray:
        """An extra per-episode input given to ``evaluate(inputs=...)``.

        Parameters
        ----------
        name : str
            The input's name (declared in the metric's ``inputs``).

        Returns
        -------
        numpy.ndarray
            The array as given (checked to have one entry per episode).

        Raises
        ------
        KeyError
            The input was not given.
        """
        try:
            return self._inputs[name]
        except KeyError:
            raise KeyError(f"no per-episode input {name!r} was given (evaluate(inputs={{{name!r}: ...}}))") from None

    def success(self, distance: np.ndarray) -> np.ndarray:
        """The convention's success test for any distances.

        Parameters
        ----------
        distance : numpy.ndarray
            Distances in metres.

        Returns
        -------
        numpy.ndarray
            float64, 1.0 where ``distance`` is within the threshold (``<=`` or ``<`` as the
            convention says), else 0.0.
        """
        ok = (distance <= self.threshold) if self.convention.success_inclusive else (distance < self.threshold)
        return ok.astype(np.float64)

    def _cached(self, key: str, make: Callable[[], np.ndarray]) -> np.ndarray:
        if key not in self._cache:
            self._cache[key] = make()
        return self._cache[key]

    def _given_success(self, name: str, distance: str) -> np.ndarray:
        given = self._inputs.get(name)
        s = given.astype(bool) if given is not None else self.success(self.stat(distance)).astype(bool)
        if name == "success" and self.stopped is not None:
            s = s & self.stopped
        return s.astype(np.float64)

    @property
    def sr(self) -> np.ndarray:
        """Success per episode as 0.0 or 1.0 (the distance test and ``stopped``, or the input
        ``success`` when given)."""
        return self._cached("sr", lambda: self._given_success("success", "ne"))

    @property
    def oracle_success(self) -> np.ndarray:
        """Oracle success per episode as 0.0 or 1.0 (``one`` within the threshold, or the input
        ``oracle_success`` when given)."""
        return self._cached("oracle_success", lambda: self._given_success("oracle_success", "one"))

    @property
    def spl_ratio(self) -> np.ndarray:
        """l / max(PL(Q), l, floor) per episode, with the convention's ``spl_floor``."""
        floor = getattr(self.convention, "spl_floor", 0.0)
        return self._cached("spl_ratio", lambda: spl_ratio(self.stat("pl_query"), self.spl_length, floor))

    @property
    def dtw(self) -> np.ndarray:
        """DTW per episode (metres), computed on first use."""
        return self._cached("dtw", self._dtw_fn)

    @property
    def ndtw(self) -> np.ndarray:
        """nDTW per episode, from :attr:`dtw`."""
        from .engine import ndtw_value

        return self._cached("ndtw", lambda: ndtw_value(self.dtw, self.reference_points, self.threshold))


# --------------------------------------------------------------------------------------------
# shared formulas
# --------------------------------------------------------------------------------------------


def safe_ratio(num: np.ndarray, den: np.ndarray, both_zero: float) -> np.ndarray:
    """num / den with 0/0 -> both_zero and x/inf -> 0, never NaN."""
    out = np.full(num.shape, both_zero, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        np.divide(num, den, out=out, where=den > 0)
    np.nan_to_num(out, copy=False, nan=0.0)  # inf / inf: an unreachable goal
    return out


def success(ne: np.ndarray, threshold: float, conv, stopped: np.ndarray | None) -> np.ndarray:
    """SR per episode (0.0 / 1.0): ``ne <= d_th`` or ``ne < d_th`` as the convention says."""
    sr = (ne <= threshold) if conv.success_inclusive else (ne < threshold)
    if stopped is not None:
        sr = sr & stopped
    return sr.astype(np.float64)


def spl_ratio(pl: np.ndarray, length: np.ndarray, floor: float = 0.0) -> np.ndarray:
    """l / max(pl, l, floor); 1 when all are 0 (floor 0), 0 when l = 0 < floor (DUET's 0.01)."""
    return safe_ratio(length, np.maximum(np.maximum(pl, length), floor), both_zero=1.0)


def cls(pc: np.ndarray, pl_reference: np.ndarray, pl_query: np.ndarray) -> np.ndarray:
    """CLS = PC * LS, LS = a / (a + |a - PL(Q)|), a = PC * PL(R); LS = 1 when a and PL(Q) are both 0,
    and 0 when either length is infinite (a path through unreachable nodes)."""
    a = np.zeros_like(pc)
    np.multiply(pc, pl_reference, out=a, where=pc > 0)
    finite = np.isfinite(a) & np.isfinite(pl_query)
    a_f = np.where(finite, a, 0.0)
    q_f = np.where(finite, pl_query, 0.0)
    ls = np.where(finite, safe_ratio(a_f, a_f + np.abs(a_f - q_f), both_zero=1.0), 0.0)
    return pc * ls


def goal_progress(start_distance: np.ndarray, final_distance: np.ndarray) -> np.ndarray:
    """GP = start_distance - final_distance (metres; the distances from the start and from the final
    point to the goal region). Where both are inf (a region unreachable from either), 0: never NaN."""
    start = np.asarray(start_distance, dtype=np.float64)
    final = np.asarray(final_distance, dtype=np.float64)
    both = np.isinf(start) & np.isinf(final)
    return np.where(both, 0.0, start - np.where(both, 0.0, final))
