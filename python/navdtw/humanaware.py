"""HA-VLN (human-aware vision-and-language navigation) metrics.

Per episode (see ``docs/metrics.md``, section "HA-VLN")::

    TCR = max(0, collision_count - baseline_collision_count)   # adjusted collision count
    CR  = min(TCR, 1)                                          # collision indicator
    SR  = success * int(TCR == 0)                              # strict success
    NE  = distance_to_goal                                     # metres, straight-line in HA-VLN

The dataset summary is the mean of each over episodes, with keys ``sr``, ``tcr``, ``cr``, ``ne``
(``summary(keys="havln")``: HA-VLN's evaluator's names ``SR``, ``TCR``, ``CR``, ``NE``).
``SR`` and ``CR`` are fractions in [0, 1] (not percentages); ``TCR`` is collisions per episode and
``NE`` is metres. Lower is better for TCR, CR and NE.

The baseline collision counts (collisions that are unavoidable because a human walks into the agent's
reference path) ship with HA-VLN as ``collision_num_val_{seen,unseen}.json``; read them with
:func:`navdtw.datasets.load_havln_collisions` and align them with your episodes with :func:`baseline_for`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ._messages import shown
from ._typing import ArrayLike

__all__ = ["HumanAwareResult", "baseline_for", "evaluate"]

# ----------------------------------------------------------------------------------------------
# validation helpers


def _as_1d(values: ArrayLike, name: str) -> np.ndarray:
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"{name}: expected one value per episode (a 1-D array-like), got shape {arr.shape}")
    if arr.size and arr.dtype != np.bool_ and arr.dtype.kind not in "iuf":
        raise TypeError(f"{name}: expected numbers, got dtype {arr.dtype}")
    return arr


def _first_bad(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask)[0])


def _as_counts(values: ArrayLike, name: str) -> np.ndarray:
    """Non-negative integer counts per episode (integral floats accepted) -> int64."""
    arr = _as_1d(values, name)
    if arr.dtype == np.bool_:
        return arr.astype(np.int64)
    if arr.dtype.kind == "f":
        bad = ~np.isfinite(arr) | (arr != np.floor(arr)) | (arr < 0)
        if bad.any():
            i = _first_bad(bad)
            raise ValueError(f"{name}[{i}] = {shown(arr[i])}: counts must be non-negative integers")
        # 2**63 itself is not an int64: compare with the float 2**63 (int64's max rounds up to it)
        if arr.size and arr.max() >= 2.0**63:
            i = int(np.argmax(arr))
            raise ValueError(f"{name}[{i}] = {shown(arr[i])}: count too large (above 2**63 - 1)")
        return arr.astype(np.int64)
    if arr.dtype.kind == "i":
        bad = arr < 0
        if bad.any():
            i = _first_bad(bad)
            raise ValueError(f"{name}[{i}] = {shown(arr[i])}: counts must be non-negative integers")
    elif arr.size and arr.max() > np.uint64(np.iinfo(np.int64).max):  # unsigned (exact on numpy 1.x)
        i = int(np.argmax(arr))
        raise ValueError(f"{name}[{i}] = {shown(arr[i])}: count too large")
    return arr.astype(np.int64)


def _as_success(values: ArrayLike, name: str) -> np.ndarray:
    """Success flags per episode: bool, or numbers equal to 0 or 1 -> int64 0/1."""
    arr = _as_1d(values, name)
    if arr.dtype == np.bool_:
        return arr.astype(np.int64)
    bad = ~((arr == 0) | (arr == 1))  # NaN compares unequal, so it is caught here too
    if bad.any():
        i = _first_bad(bad)
        raise ValueError(f"{name}[{i}] = {shown(arr[i])}: success must be 0/1 or a bool")
    return arr.astype(np.int64)


def _as_distances(values: ArrayLike, name: str) -> np.ndarray:
    """Finite, non-negative distances per episode (metres) -> float64."""
    arr = _as_1d(values, name)
    if arr.dtype == np.bool_:
        raise TypeError(f"{name}: expected distances in metres, got booleans")
    arr = arr.astype(np.float64)
    bad = ~np.isfinite(arr) | (arr < 0)
    if bad.any():
        i = _first_bad(bad)
        raise ValueError(f"{name}[{i}] = {shown(arr[i])}: distances must be finite and non-negative")
    return arr


# ----------------------------------------------------------------------------------------------
# results


@dataclass(frozen=True)
class HumanAwareResult:
    """Per-episode HA-VLN metrics; every field is a numpy array with one entry per episode.

    :func:`evaluate` builds it from checked input.

    Attributes
    ----------
    success : numpy.ndarray
        int64 0/1, the task success as given (before the collision rule).
    goal_distance : numpy.ndarray
        float64, distance to the goal at the end of the episode (metres); the episode's NE.
    collision_count : numpy.ndarray
        int64, collisions recorded for the agent.
    baseline_collision_count : numpy.ndarray
        int64, the unavoidable collisions of the episode (HA-VLN's ``collision_num`` files).
    adjusted_collision_count : numpy.ndarray
        int64, ``TCR = max(0, collision_count - baseline_collision_count)``.
    collision_indicator : numpy.ndarray
        int64 0/1, ``CR = min(TCR, 1)``.
    strict_success : numpy.ndarray
        int64 0/1, ``SR = success * (TCR == 0)``.
    """

    success: np.ndarray
    goal_distance: np.ndarray
    collision_count: np.ndarray
    baseline_collision_count: np.ndarray
    adjusted_collision_count: np.ndarray
    collision_indicator: np.ndarray
    strict_success: np.ndarray

    FIELDS = (
        "success",
        "goal_distance",
        "collision_count",
        "baseline_collision_count",
        "adjusted_collision_count",
        "collision_indicator",
        "strict_success",
    )

    def __len__(self) -> int:
        return int(self.success.shape[0])

    def to_records(self) -> list[dict[str, int | float]]:
        """One dict per episode.

        Returns
        -------
        list of dict
            Per episode, the fields above (in that order) as plain Python ints / floats.
        """
        columns = [getattr(self, f).tolist() for f in self.FIELDS]
        return [dict(zip(self.FIELDS, row)) for row in zip(*columns)]

    # summary() keys: navdtw's rule (lowercase) -> the names HA-VLN's evaluator prints.
    HAVLN_KEYS: ClassVar[dict[str, str]] = {"sr": "SR", "tcr": "TCR", "cr": "CR", "ne": "NE"}

    def summary(self, *, keys: str = "navdtw") -> dict[str, float]:
        """Means over episodes.

        SR and CR are fractions in [0, 1]; TCR is collisions per episode; NE is metres.

        Parameters
        ----------
        keys : str, optional
            ``"navdtw"`` (the default): lowercase keys ``sr, tcr, cr, ne``, as every navdtw
            summary; ``"havln"``: HA-VLN's evaluator's names ``SR, TCR, CR, NE``.

        Returns
        -------
        dict[str, float]
            The four means; ``nan`` each with zero episodes.

        Raises
        ------
        ValueError
            ``keys`` is neither ``"navdtw"`` nor ``"havln"``.
        """
        if keys not in ("navdtw", "havln"):
            raise ValueError(f"keys must be 'navdtw' (lowercase) or 'havln' (SR, TCR, CR, NE), got {keys!r}")
        columns = {
            "sr": self.strict_success,
            "tcr": self.adjusted_collision_count,
            "cr": self.collision_indicator,
            "ne": self.goal_distance,
        }
        out = {k: float(np.mean(v)) if len(self) else float("nan") for k, v in columns.items()}
        if keys == "havln":
            return {self.HAVLN_KEYS[k]: v for k, v in out.items()}
        return out


def evaluate(
    success: ArrayLike,
    collision_count: ArrayLike,
    baseline_collision_count: ArrayLike,
    distance_to_goal: ArrayLike,
) -> HumanAwareResult:
    """HA-VLN metrics for a set of episodes.

    Parameters
    ----------
    success : array_like
        One flag per episode: bool, or 0 / 1.
    collision_count : array_like
        Collisions of the agent per episode: non-negative integers (integral floats accepted).
    baseline_collision_count : array_like
        Unavoidable collisions per episode (same rules); see :func:`baseline_for`.
    distance_to_goal : array_like
        Final distance to the goal per episode, metres: finite and non-negative.

    Returns
    -------
    HumanAwareResult
        Per-episode arrays; ``.summary()`` gives the dataset means ``sr, tcr, cr, ne``
        (``.summary(keys="havln")``: ``SR, TCR, CR, NE``).

    Raises
    ------
    ValueError
        On unequal lengths, an argument that is not 1-D, or an invalid value (a success other
        than 0/1, a negative or fractional count, a negative or non-finite distance); the
        message names the argument and episode index.
    TypeError
        On values that are not numbers, or booleans as distances; the message names the
        argument.
    """
    s = _as_success(success, "success")
    c = _as_counts(collision_count, "collision_count")
    b = _as_counts(baseline_collision_count, "baseline_collision_count")
    d = _as_distances(distance_to_goal, "distance_to_goal")
    lengths = {
        "success": s.shape[0],
        "collision_count": c.shape[0],
        "baseline_collision_count": b.shape[0],
        "distance_to_goal": d.shape[0],
    }
    if len(set(lengths.values())) != 1:
        detail = ", ".join(f"{k}={v}" for k, v in lengths.items())
        raise ValueError(f"all arguments need one value per episode; got lengths {detail}")
    tcr = np.maximum(c - b, 0)
    cr = np.minimum(tcr, 1)
    strict = s * (tcr == 0)
    return HumanAwareResult(
        success=s,
        goal_distance=d,
        collision_count=c,
        baseline_collision_count=b,
        adjusted_collision_count=tcr,
        collision_indicator=cr,
        strict_success=strict.astype(np.int64),
    )


# ----------------------------------------------------------------------------------------------
# baseline collision tables


def baseline_for(episode_ids: Iterable[Any], table: Mapping[str, int]) -> np.ndarray:
    """Baseline collision counts aligned with ``episode_ids``.

    Ids are matched as strings (``7`` and ``"7"`` are the same episode), as in the HA-VLN files.

    Parameters
    ----------
    episode_ids : iterable
        Your episodes' ids, in your order.
    table : mapping[str, int]
        Episode id (a string) -> baseline collision count, as
        :func:`navdtw.datasets.load_havln_collisions` returns.

    Returns
    -------
    numpy.ndarray
        int64, one count per id, in the order of ``episode_ids``.

    Raises
    ------
    ValueError
        If an id is not in ``table``; the message names the first missing id and how many are
        missing. A count that is not an integer fails too (Python's message).
    """
    keys = [str(e) for e in episode_ids]
    missing = [k for k in keys if k not in table]
    if missing:
        more = f" ({len(missing)} missing in all)" if len(missing) > 1 else ""
        raise ValueError(f"episode id {missing[0]!r} has no baseline collision count in the table{more}")
    return np.fromiter((table[k] for k in keys), dtype=np.int64, count=len(keys))


def __getattr__(name: str):
    # Metrics know no file format (docs/design.md): the HA-VLN collision reader lives in navdtw.datasets.
    if name == "load_baseline_collisions":
        raise AttributeError(
            "navdtw.humanaware.load_baseline_collisions moved to the readers in 0.2: use "
            "navdtw.datasets.load_havln_collisions"
        )
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
