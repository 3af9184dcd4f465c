"""navdtw's habitat-lab measures (:mod:`navdtw.habitat`): the streamed nDTW path, the distance to
the goal, and the ``Measure`` subclasses. Registered by ``navdtw.habitat``'s ``__init__``."""

from __future__ import annotations

import gzip
import json
import math
import numbers
from collections.abc import Mapping
from typing import Any

import numpy as np
from habitat.core.embodied_task import Measure

from .. import _core
from ..engine import MAX_COORDINATE

__all__ = [
    "NDTW",
    "SDTW",
    "NDTWRewardMeasure",
    "OracleNavigationError",
    "OracleSuccess",
    "PathLength",
    "StepsTaken",
    "Trajectory",
]

METHODS = ("exact", "fastdtw")


# ---- configuration: hydra (lower case) or yacs (upper case) ----


def _option(config, name: str, default):
    """``config.name``, else ``config.NAME`` (habitat 0.1.7 / 0.2.x's yacs keys), else ``default``."""
    if config is None:
        return default
    for key in (name, name.upper()):
        try:
            if key in config:
                return config[key]
        except TypeError:  # not a mapping: a plain dataclass given directly
            pass
        value = getattr(config, key, None)
        if value is not None:
            return value
    return default


def _plain_keys(config, options: tuple[str, ...], measure: str) -> None:
    """Refuses a key of a plain mapping config (a dict) that the measure does not read, with the
    closest one it reads: ``{"SUCCES_DISTANCE": 2}`` would otherwise run at the default 3.0 m.
    hydra's and yacs' configs (and habitat's, built on them) are left to refuse such keys
    themselves; a dataclass has only its fields."""
    if not isinstance(config, Mapping) or any(
        c.__module__.split(".")[0] in ("yacs", "omegaconf", "habitat") for c in type(config).__mro__
    ):
        return
    from difflib import get_close_matches

    known = [*options, *(k.upper() for k in options)]
    for key in config:
        if key not in known:
            close = get_close_matches(str(key).lower(), options, n=1, cutoff=0.6)
            hint = f" (did you mean {(close[0].upper() if str(key).isupper() else close[0])!r}?)" if close else ""
            raise ValueError(
                f"{measure}: unknown configuration key {key!r}{hint}; it reads {', '.join(options)} "
                "(or their upper-case forms)"
            )


def _success_distance(config, measure: str) -> float:
    value = _option(config, "success_distance", 3.0)
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not (math.isfinite(value) and value > 0):
        raise ValueError(f"{measure}: success_distance must be a finite number of metres > 0, got {value!r}")
    return float(value)


def _method(config, measure: str) -> str:
    value = str(_option(config, "method", "exact")).lower()
    if value not in METHODS:
        raise ValueError(f"{measure}: method must be one of {', '.join(METHODS)}, got {value!r}")
    return value


def _position(sim) -> list[float]:
    """The agent's position as Python floats (exact for habitat's float32 positions), as VLN-CE's
    ``position.tolist()``; plain Python on a few floats: a step's bookkeeping costs about a
    microsecond, not the ten of small numpy calls."""
    p = sim.get_agent_state().position
    try:
        return p.tolist()
    except AttributeError:  # a plain sequence (magnum's Vector3, a list)
        return [float(v) for v in p]


# ---- the shared pieces: the de-duplicated path, the reference, the distance to the goal ----


class _GroundTruth:
    """VLN-CE's ground-truth locations (``GT_PATH``), read once; or the episodes' reference paths."""

    def __init__(self, config, measure: str):
        self.measure = measure
        self.path = str(_option(config, "gt_path", "") or "")
        self.split = str(_option(config, "split", "") or "")
        self._locations: dict | None = None

    def _load(self) -> dict:
        if "{role}" in self.path:  # RxR-CE: one file per annotation role, as VLN-CE reads them
            out: dict = {}
            for role in ("guide", "follower"):
                with gzip.open(self.path.format(split=self.split, role=role), "rt") as f:
                    out.update(json.load(f))
            return out
        with gzip.open(self.path.format(split=self.split), "rt") as f:
            return json.load(f)

    def points(self, episode):
        """The episode's reference path as stored (lists from JSON, or an array), not yet checked."""
        if self.path:
            if self._locations is None:
                self._locations = self._load()
            entry = self._locations.get(str(episode.episode_id))
            if entry is None:
                raise ValueError(f"{self.measure}: episode {episode.episode_id} is not in {self.path}")
            return entry["locations"]
        points = getattr(episode, "reference_path", None)
        if points is None:
            raise ValueError(
                f"{self.measure}: episode {episode.episode_id} has no reference_path (a VLN episode's; or set gt_path)"
            )
        return points

    def checked(self, points, episode) -> np.ndarray:
        """The reference path as float64 ``[n, D]``; a clear error naming the episode otherwise."""
        shape = f"{self.measure}: episode {episode.episode_id}'s reference path is empty or not [n, D]"
        try:
            ref = np.asarray(points, dtype=np.float64)
        except (TypeError, ValueError) as e:  # ragged, or not numbers
            raise ValueError(f"{shape} numbers") from e
        if ref.ndim != 2 or len(ref) == 0 or ref.shape[1] == 0:
            raise ValueError(shape)
        if not (np.abs(ref) <= MAX_COORDINATE).all():
            raise ValueError(
                f"{self.measure}: episode {episode.episode_id}'s reference path has a coordinate that is not "
                f"finite or beyond +-{MAX_COORDINATE:g} m"
            )
        return ref


class _GoalDistance:
    """habitat's ``DistanceToGoal`` (``distance_to: POINT``): the geodesic distance to the
    episode's goals, recomputed when the agent moved by more than 1e-4 m (``np.allclose``)."""

    def __init__(self, sim):
        self._sim = sim
        self._previous = None
        self.value = math.inf

    def reset(self) -> None:
        self._previous = None

    def update(self, position: list[float], episode) -> float:
        # np.allclose(previous, position, atol=1e-4): |a - b| <= 1e-4 + 1e-5 |b| everywhere
        previous = self._previous
        if previous is None or not all(abs(a - b) <= 1e-4 + 1e-5 * abs(b) for a, b in zip(previous, position)):
            goals = [goal.position for goal in episode.goals]
            self.value = float(self._sim.geodesic_distance(np.array(position, dtype=np.float32), goals, episode))
            self._previous = position
        return self.value


class _Path:
    """The episode's positions with consecutive repeats dropped, and nDTW of them against the
    reference: streamed (``_core.PointStepper``: the last DTW column, O(|R|) a point, the cost
    and reward rule of :class:`navdtw.NDTWReward`) or VLN-CE's fastdtw on the whole path."""

    def __init__(self, config, measure: str):
        self.measure = measure
        self.threshold = _success_distance(config, measure)
        self.method = _method(config, measure)
        self.truth = _GroundTruth(config, measure)
        if self.method == "fastdtw":
            try:
                from fastdtw import fastdtw
            except ImportError as e:
                raise ImportError(f"{measure}: method 'fastdtw' needs the fastdtw package (pip install fastdtw)") from e
            self._fastdtw = fastdtw
        self.stepper = None
        self.last: list[float] | None = None
        self.locations: list[list[float]] = []
        self.ndtw = 0.0
        self.moved = False
        self._gain = 0.0

    def reset(self, episode) -> None:
        points = self.truth.points(episode)
        if self.method == "exact":
            # the stepper reads and checks the reference itself (JSON's lists: a few microseconds,
            # a tenth of numpy's conversion); numpy names what is wrong only when it refuses
            try:
                if self.stepper is None:
                    self.stepper = _core.PointStepper(points, self.threshold, MAX_COORDINATE)
                else:
                    self.stepper.reset(points)
            except (TypeError, ValueError) as e:
                self.truth.checked(points, episode)
                raise ValueError(f"{self.measure}: episode {episode.episode_id}'s reference path: {e}") from e
            self.points = points
        else:
            self.ref = self.truth.checked(points, episode)
        self.last = None
        self.locations = []
        self.ndtw = 0.0
        self.moved = False

    @property
    def gain(self) -> float:
        """The last position's nDTW gain: 0 at the first and when the agent did not move."""
        if not self.moved:
            return 0.0
        return self.stepper.gain if self.stepper is not None else self._gain

    def add(self, position: list[float]) -> bool:
        """Appends the position unless it repeats the last one; True if it was appended."""
        if position == self.last:
            self.moved = False
            return False
        stepper = self.stepper
        if stepper is not None:
            try:
                self.ndtw = stepper.step(position)
            except ValueError:
                raise self._refused(position) from None
        else:
            self._add_fastdtw(position)
        self.moved = self.last is not None
        self.last = position
        return True

    def _add_fastdtw(self, position: list[float]) -> None:
        if len(position) != self.ref.shape[1]:
            raise self._refused(position)
        for v in position:
            if not -MAX_COORDINATE <= v <= MAX_COORDINATE:
                raise self._refused(position)
        self.locations.append(position)
        d = self._fastdtw(self.locations, self.ref.tolist(), dist=_euclidean)[0]
        ndtw = float(np.exp(-d / (len(self.ref) * self.threshold)))  # VLN-CE: np.exp
        self._gain = ndtw - self.ndtw
        self.ndtw = ndtw

    def _refused(self, position) -> ValueError:
        dim = self.stepper.dim if self.stepper is not None else self.ref.shape[1]
        if len(position) != dim:
            return ValueError(
                f"{self.measure}: the agent's position has {len(position)} coordinates, the reference {dim}"
            )
        return ValueError(f"{self.measure}: the agent's position {position} is not finite")


def _euclidean(a, b) -> float:
    """VLN-CE's ``euclidean_distance``: the L2 norm of b - a (float64)."""
    return float(np.linalg.norm(np.asarray(b, dtype=np.float64) - np.asarray(a, dtype=np.float64)))


def _stop_called(task) -> bool:
    return bool(getattr(task, "is_stop_called", False))


class _NavdtwMeasure(Measure):
    """What navdtw's measures share: construction as habitat builds measures, the uuid option."""

    cls_uuid = ""
    #: The configuration keys the measure reads (lower case; yacs' upper-case forms too).
    options: tuple[str, ...] = ("type", "uuid")

    def __init__(self, *args: Any, sim=None, config=None, dataset=None, task=None, **kwargs: Any):
        _plain_keys(config, self.options, type(self).__name__.replace("Measure", ""))
        self._sim = sim
        self._config = config
        self._uuid = str(_option(config, "uuid", "") or self.cls_uuid)
        super().__init__()

    def _get_uuid(self, *args: Any, **kwargs: Any) -> str:
        return self._uuid


# ---- the measures ----


class NDTW(_NavdtwMeasure):
    """nDTW of the agent's path so far against the episode's reference, exact and streamed.

    Registered as ``NavdtwNDTW``; metric ``ndtw``. Needs only the agent's position and the episode.

    Parameters
    ----------
    sim : habitat.core.simulator.Simulator
        Gives ``get_agent_state().position``.
    config : mapping, optional
        ``success_distance`` (d_th, metres, 3.0), ``method`` (``exact``, the default, or
        ``fastdtw``: VLN-CE's value), ``gt_path`` and ``split`` (VLN-CE's ground-truth
        ``locations`` instead of ``episode.reference_path``), ``uuid`` (the metric's name,
        ``ndtw``); upper-case keys (yacs) are read too.
    dataset, task : optional
        Passed by habitat; not used.
    *args, **kwargs
        Whatever else habitat passes (``name``).

    Raises
    ------
    ValueError
        A ``success_distance`` that is not a finite number > 0, an unknown ``method``; at reset,
        an episode without a reference path (or not in ``gt_path``) or with an empty one.
    ImportError
        ``method: fastdtw`` without the fastdtw package.
    """

    cls_uuid = "ndtw"
    options = ("type", "uuid", "success_distance", "method", "gt_path", "split")

    def __init__(self, *args: Any, sim=None, config=None, dataset=None, task=None, **kwargs: Any):
        super().__init__(*args, sim=sim, config=config, dataset=dataset, task=task, **kwargs)
        self._path = _Path(config, type(self).__name__)

    def reset_metric(self, *args: Any, episode, **kwargs: Any) -> None:
        """Starts the episode's path at the agent's position.

        Parameters
        ----------
        episode : habitat.core.dataset.Episode
            With ``reference_path`` (or an ``episode_id`` in ``gt_path``).
        *args, **kwargs
            Whatever habitat passes (``task``, ``observations``).
        """
        self._path.reset(episode)
        self._path.add(_position(self._sim))
        self._metric = self._path.ndtw

    def update_metric(self, *args: Any, **kwargs: Any) -> None:
        """Extends the path by the agent's position (unless it did not move).

        Parameters
        ----------
        *args, **kwargs
            Whatever habitat passes (``episode``, ``action``, ``task``, ``observations``).
        """
        self._path.add(_position(self._sim))
        self._metric = self._path.ndtw


class SDTW(_NavdtwMeasure):
    """SDTW = success x nDTW, success judged as habitat's ``Success`` (VLN-CE's).

    Registered as ``NavdtwSDTW``; metric ``sdtw``. Keeps its own nDTW column, so it needs no
    other measure: the agent's position, the episode, the simulator's geodesic distance to the
    episode's goals and the task's ``is_stop_called``.

    Parameters
    ----------
    sim : habitat.core.simulator.Simulator
        Gives ``get_agent_state().position`` and ``geodesic_distance``.
    config : mapping, optional
        As :class:`NDTW`'s (``success_distance`` is both nDTW's d_th and success's radius, as in
        VLN-CE's configurations); ``uuid`` defaults to ``sdtw``.
    dataset, task : optional
        Passed by habitat; not used here.
    *args, **kwargs
        Whatever else habitat passes (``name``).

    Raises
    ------
    ValueError
        As :class:`NDTW`.
    ImportError
        As :class:`NDTW`.
    """

    cls_uuid = "sdtw"
    options = ("type", "uuid", "success_distance", "method", "gt_path", "split")

    def __init__(self, *args: Any, sim=None, config=None, dataset=None, task=None, **kwargs: Any):
        super().__init__(*args, sim=sim, config=config, dataset=dataset, task=task, **kwargs)
        self._path = _Path(config, type(self).__name__)
        self._goal = _GoalDistance(sim)

    def _judge(self, position: list[float], episode, task) -> None:
        d = self._goal.update(position, episode)
        success = 1.0 if _stop_called(task) and d < self._path.threshold else 0.0
        self._metric = success * self._path.ndtw

    def reset_metric(self, *args: Any, episode, task=None, **kwargs: Any) -> None:
        """Starts the episode's path at the agent's position.

        Parameters
        ----------
        episode : habitat.core.dataset.Episode
            With ``reference_path`` and ``goals``.
        task : habitat.core.embodied_task.EmbodiedTask, optional
            Read for ``is_stop_called``.
        *args, **kwargs
            Whatever else habitat passes.
        """
        self._path.reset(episode)
        self._goal.reset()
        position = _position(self._sim)
        self._path.add(position)
        self._judge(position, episode, task)

    def update_metric(self, *args: Any, episode, task=None, **kwargs: Any) -> None:
        """Extends the path by the agent's position and judges success.

        Parameters
        ----------
        episode : habitat.core.dataset.Episode
            The running episode.
        task : habitat.core.embodied_task.EmbodiedTask, optional
            Read for ``is_stop_called``.
        *args, **kwargs
            Whatever else habitat passes.
        """
        position = _position(self._sim)
        self._path.add(position)
        self._judge(position, episode, task)


class PathLength(_NavdtwMeasure):
    """The length travelled: the sum of Euclidean distances between consecutive positions.

    Registered as ``NavdtwPathLength``; metric ``path_length`` (VLN-CE's ``PathLength``: straight
    segments, metres, computed in float64 from habitat's float32 positions).

    Built as habitat builds measures (``sim=``, ``config=``, ``dataset=``, ``task=``); ``config``
    may set ``uuid`` (upper case too).
    """

    cls_uuid = "path_length"

    def reset_metric(self, *args: Any, **kwargs: Any) -> None:
        """Starts at the agent's position, length 0.

        Parameters
        ----------
        *args, **kwargs
            Whatever habitat passes.
        """
        self._previous = _position(self._sim)
        self._metric = 0.0

    def update_metric(self, *args: Any, **kwargs: Any) -> None:
        """Adds the distance from the previous position.

        Parameters
        ----------
        *args, **kwargs
            Whatever habitat passes.
        """
        position = _position(self._sim)
        self._metric += math.dist(position, self._previous)
        self._previous = position


class _GoalMeasure(_NavdtwMeasure):
    def __init__(self, *args: Any, sim=None, config=None, dataset=None, task=None, **kwargs: Any):
        super().__init__(*args, sim=sim, config=config, dataset=dataset, task=task, **kwargs)
        self._goal = _GoalDistance(sim)


class OracleNavigationError(_GoalMeasure):
    """The smallest distance to the goal so far (metres): VLN-CE's ``OracleNavigationError``.

    Registered as ``NavdtwOracleNavigationError``; metric ``oracle_navigation_error``. The distance
    is habitat's ``DistanceToGoal`` (geodesic, ``POINT``), computed here.

    Built as habitat builds measures (``sim=``, ``config=``, ``dataset=``, ``task=``); ``config``
    may set ``uuid`` (upper case too).
    """

    cls_uuid = "oracle_navigation_error"

    def reset_metric(self, *args: Any, episode, **kwargs: Any) -> None:
        """Starts at the distance from the agent's position.

        Parameters
        ----------
        episode : habitat.core.dataset.Episode
            With ``goals``.
        *args, **kwargs
            Whatever else habitat passes.
        """
        self._goal.reset()
        self._metric = math.inf
        self.update_metric(episode=episode)

    def update_metric(self, *args: Any, episode, **kwargs: Any) -> None:
        """Keeps the smaller of the distance so far and the current one.

        Parameters
        ----------
        episode : habitat.core.dataset.Episode
            With ``goals``.
        *args, **kwargs
            Whatever else habitat passes.
        """
        self._metric = min(self._metric, self._goal.update(_position(self._sim), episode))


class OracleSuccess(_GoalMeasure):
    """1.0 once the agent has been within ``success_distance`` of the goal: VLN-CE's ``OracleSuccess``.

    Registered as ``NavdtwOracleSuccess``; metric ``oracle_success`` (a distance to the goal
    strictly below ``success_distance`` at any step, reset included).

    Parameters
    ----------
    sim : habitat.core.simulator.Simulator
        Gives ``get_agent_state().position`` and ``geodesic_distance``.
    config : mapping, optional
        ``success_distance`` (metres, 3.0), ``uuid``.
    dataset, task : optional
        Not used.
    *args, **kwargs
        Whatever else habitat passes.

    Raises
    ------
    ValueError
        A ``success_distance`` that is not a finite number > 0.
    """

    cls_uuid = "oracle_success"
    options = ("type", "uuid", "success_distance")

    def __init__(self, *args: Any, sim=None, config=None, dataset=None, task=None, **kwargs: Any):
        super().__init__(*args, sim=sim, config=config, dataset=dataset, task=task, **kwargs)
        self._threshold = _success_distance(config, type(self).__name__)

    def reset_metric(self, *args: Any, episode, **kwargs: Any) -> None:
        """Starts unsuccessful, then judges the agent's position.

        Parameters
        ----------
        episode : habitat.core.dataset.Episode
            With ``goals``.
        *args, **kwargs
            Whatever else habitat passes.
        """
        self._goal.reset()
        self._metric = 0.0
        self.update_metric(episode=episode)

    def update_metric(self, *args: Any, episode, **kwargs: Any) -> None:
        """Becomes 1.0 when the distance to the goal is below ``success_distance``.

        Parameters
        ----------
        episode : habitat.core.dataset.Episode
            With ``goals``.
        *args, **kwargs
            Whatever else habitat passes.
        """
        d = self._goal.update(_position(self._sim), episode)
        self._metric = float(bool(self._metric) or d < self._threshold)


class StepsTaken(_NavdtwMeasure):
    """The number of steps (``update_metric`` calls, STOP included): VLN-CE's ``StepsTaken``.

    Registered as ``NavdtwStepsTaken``; metric ``steps_taken`` (a float, as VLN-CE's).

    Built as habitat builds measures (``sim=``, ``config=``, ``dataset=``, ``task=``); ``config``
    may set ``uuid`` (upper case too).
    """

    cls_uuid = "steps_taken"

    def reset_metric(self, *args: Any, **kwargs: Any) -> None:
        """Sets the count to 0.

        Parameters
        ----------
        *args, **kwargs
            Whatever habitat passes.
        """
        self._metric = 0.0

    def update_metric(self, *args: Any, **kwargs: Any) -> None:
        """Counts one step.

        Parameters
        ----------
        *args, **kwargs
            Whatever habitat passes.
        """
        self._metric += 1.0


class Trajectory(_NavdtwMeasure):
    """The agent's path so far: ``[[x, y, z], ...]``, consecutive repeats dropped (nDTW's path).

    Registered as ``NavdtwTrajectory``; metric ``trajectory`` (a new list at every step, so an
    ``info`` kept from an earlier step does not change).

    Built as habitat builds measures (``sim=``, ``config=``, ``dataset=``, ``task=``); ``config``
    may set ``uuid`` (upper case too).
    """

    cls_uuid = "trajectory"

    def reset_metric(self, *args: Any, **kwargs: Any) -> None:
        """Starts the path at the agent's position.

        Parameters
        ----------
        *args, **kwargs
            Whatever habitat passes.
        """
        self._points: list[list[float]] = []
        self.update_metric()

    def update_metric(self, *args: Any, **kwargs: Any) -> None:
        """Appends the agent's position unless it repeats the last one.

        Parameters
        ----------
        *args, **kwargs
            Whatever habitat passes.
        """
        point = _position(self._sim)
        if not self._points or point != self._points[-1]:
            self._points.append(point)
        self._metric = list(self._points)


class NDTWRewardMeasure(_NavdtwMeasure):
    """The per-step nDTW reward of :class:`navdtw.NDTWReward`: nDTW after this step minus before.

    Registered as ``NavdtwNDTWReward``; metric ``ndtw_reward``: 0 at reset and on a step that does
    not move the agent; with ``success_reward`` > 0, the step that calls STOP within
    ``success_distance`` of the reference's last point adds ``success_reward * (1 - d /
    success_distance)`` (:meth:`navdtw.NDTWReward.done`). A reward measure for an RL trainer
    (``reward_measure: ndtw_reward``); the rewards of an episode sum to its final nDTW minus the
    nDTW of its first position.

    Parameters
    ----------
    sim : habitat.core.simulator.Simulator
        Gives ``get_agent_state().position``.
    config : mapping, optional
        ``success_distance`` (3.0), ``success_reward`` (0.0), ``gt_path``, ``split``, ``uuid``.
    dataset, task : optional
        Not used.
    *args, **kwargs
        Whatever else habitat passes.

    Raises
    ------
    ValueError
        As :class:`NDTW`; a negative or non-finite ``success_reward``.
    """

    cls_uuid = "ndtw_reward"
    options = ("type", "uuid", "success_distance", "success_reward", "method", "gt_path", "split")

    def __init__(self, *args: Any, sim=None, config=None, dataset=None, task=None, **kwargs: Any):
        super().__init__(*args, sim=sim, config=config, dataset=dataset, task=task, **kwargs)
        self._path = _Path(config, "NDTWReward")
        if self._path.method != "exact":
            raise ValueError("NDTWReward: the reward is streamed exactly; method must be 'exact'")
        bonus = _option(config, "success_reward", 0.0)
        if isinstance(bonus, bool) or not isinstance(bonus, numbers.Real) or not (math.isfinite(bonus) and bonus >= 0):
            raise ValueError(f"NDTWReward: success_reward must be a finite number >= 0, got {bonus!r}")
        self._bonus = float(bonus)
        self._done = False

    def reset_metric(self, *args: Any, episode, **kwargs: Any) -> None:
        """Starts the episode's path at the agent's position; reward 0.

        Parameters
        ----------
        episode : habitat.core.dataset.Episode
            With ``reference_path``.
        *args, **kwargs
            Whatever else habitat passes.
        """
        self._path.reset(episode)
        self._path.add(_position(self._sim))
        self._done = False
        self._metric = 0.0

    def update_metric(self, *args: Any, task=None, **kwargs: Any) -> None:
        """The nDTW gain of this step (plus the success bonus on STOP).

        Parameters
        ----------
        task : habitat.core.embodied_task.EmbodiedTask, optional
            Read for ``is_stop_called``.
        *args, **kwargs
            Whatever else habitat passes.
        """
        if self._done:
            self._metric = 0.0
            return
        self._path.add(_position(self._sim))
        reward = self._path.gain
        if _stop_called(task):
            self._done = True
            if self._bonus > 0:  # navdtw.NDTWReward.done's terminal reward
                goal = np.asarray(self._path.points[-1], dtype=np.float64).astype(np.float32).astype(np.float64)
                d = float(np.linalg.norm(np.array(self._path.last) - goal))
                if d <= self._path.threshold:
                    reward += self._bonus * (1.0 - d / self._path.threshold)
        self._metric = reward
