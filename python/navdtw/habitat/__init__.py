"""navdtw's measures for habitat-lab: exact nDTW and SDTW in the loop, one DTW column per step.

``import navdtw.habitat`` registers these measures with habitat-lab's registry (and, on
habitat-lab >= 0.2.5, their configurations with hydra's ``ConfigStore`` group
``habitat/task/measurements``); ``import navdtw`` never imports habitat.

======================================  =========================  ====================  =========================
measure (registered type)               metric (uuid, default)     needs                 VLN-CE's counterpart
======================================  =========================  ====================  =========================
:class:`NDTW` (``NavdtwNDTW``)          ``ndtw``                   position, episode     ``NDTW``
:class:`SDTW` (``NavdtwSDTW``)          ``sdtw``                   + geodesic distance   ``SDTW`` (with ``Success``)
:class:`PathLength`                     ``path_length``            position              ``PathLength``
:class:`OracleNavigationError`          ``oracle_navigation_error``  geodesic distance   ``OracleNavigationError``
:class:`OracleSuccess`                  ``oracle_success``         geodesic distance     ``OracleSuccess``
:class:`StepsTaken`                     ``steps_taken``            nothing               ``StepsTaken``
:class:`Trajectory`                     ``trajectory``             position              (none)
:class:`NDTWRewardMeasure`              ``ndtw_reward``            position, episode     (none)
======================================  =========================  ====================  =========================

Each registered type is the class name with ``Navdtw`` in front (``NavdtwPathLength``, ...), so
that VLN-CE's own measures, registered under their class names, stay available beside them.

**Semantics (VLN-CE's).** A measure reads the agent's position from
``sim.get_agent_state().position`` at every reset and step; the path is the positions with
consecutive repeats dropped (a step that does not move the agent adds no point). The reference
is ``episode.reference_path``, or, with ``gt_path`` set, the ``locations`` of the episode in
VLN-CE's ground-truth file (``GT_PATH``, with ``{split}`` and ``{role}`` filled in as VLN-CE
does). nDTW = exp(-DTW / (|R| d_th)) with d_th = ``success_distance`` (3.0 m by default). The
distance to the goal is habitat's ``DistanceToGoal`` (``distance_to: POINT``): the simulator's
geodesic distance from the position to the episode's goals, recomputed when the position moved
by more than 1e-4 m. SDTW = success x nDTW with success as habitat's ``Success`` judges it, which
VLN-CE uses: the task's ``is_stop_called`` and a distance to the goal below ``success_distance``.

**Exact, streamed.** nDTW and SDTW keep the last column of the DTW matrix (|R| doubles) and extend
it by one point per step through navdtw's compiled core (:class:`navdtw.NDTWReward`): O(|R|) a
step, and the value after every step equals :func:`navdtw.ndtw` of the path so far (navdtw's
float32 rule for distances, docs/metrics.md). VLN-CE's measure calls fastdtw on the whole path at
every step instead, an approximation of DTW whose cost grows with the path; ``method: fastdtw``
reproduces it (it needs the ``fastdtw`` package) for figures that must match published ones.

**Configuration.** habitat-lab 0.3 (hydra): the ``*MeasurementConfig`` dataclasses, in hydra's
group ``habitat/task/measurements`` as ``navdtw_ndtw``, ``navdtw_sdtw``, ... (``+habitat/task/
measurements=[navdtw_ndtw,navdtw_sdtw]``), or at run time
``config.habitat.task.measurements.update({"ndtw": NDTWMeasurementConfig(success_distance=3.0)})``.
habitat 0.1.7 / 0.2.x (yacs, VLN-CE and ETPNav): ``TYPE: NavdtwNDTW`` with upper-case keys
(``SUCCESS_DISTANCE``, ``METHOD``, ``GT_PATH``, ``SPLIT``, ``UUID``). VLN-CE's ``FDTW`` key is not
read: the method is ``METHOD`` (``exact`` unless it says ``fastdtw``). A plain dict given as a
measure's ``config`` may hold only the keys the measure reads (``{"SUCCES_DISTANCE": 2}`` is an
error naming ``SUCCESS_DISTANCE``); yacs and hydra check their own.

**The order in the loop.** :func:`order_episodes` puts an ``Env``'s or a ``Dataset``'s episodes
(or one rank's share) in ``navdtw order``'s order in memory, without copying the split file;
:func:`keep_order` sets the iterator options that keep it (:data:`ITERATOR_OPTIONS`: habitat's
``EpisodeIterator`` with ``shuffle`` and ``group_by_scene`` off, no sampling, no scene-repeat
limit), :func:`check_iterator_options` refuses options that break it, and :class:`OrderCheck`,
called with each episode the loop starts, names an episode run out of the order and its position.
"""

from __future__ import annotations

try:
    from habitat.core.registry import registry
except ImportError as _exc:  # one line saying what to install (habitat-sim is not on PyPI); the
    # missing module's name is kept (ModuleNotFoundError.name), as tools that skip a framework read it
    if (getattr(_exc, "name", None) or "").partition(".")[0] == "habitat":
        raise ModuleNotFoundError(
            "navdtw.habitat needs habitat-lab: pip install habitat-lab (0.3.x; VLN-CE's 0.1.7 / 0.2.x from "
            "source), and habitat-sim, which is not on PyPI (conda install habitat-sim -c conda-forge -c aihabitat)",
            name=_exc.name,
        ) from _exc
    raise ModuleNotFoundError(
        f"navdtw.habitat: import habitat failed ({_exc}): habitat-lab needs habitat-sim and its bindings "
        "(magnum), which are not on PyPI: conda install habitat-sim -c conda-forge -c aihabitat, or build it "
        "from source",
        name=getattr(_exc, "name", None),
    ) from _exc

from ._config import (
    CONFIGS,
    ConfigStore,
    NDTWMeasurementConfig,
    NDTWRewardMeasurementConfig,
    OracleNavigationErrorMeasurementConfig,
    OracleSuccessMeasurementConfig,
    PathLengthMeasurementConfig,
    SDTWMeasurementConfig,
    StepsTakenMeasurementConfig,
    TrajectoryMeasurementConfig,
)
from ._measures import (
    NDTW,
    SDTW,
    NDTWRewardMeasure,
    OracleNavigationError,
    OracleSuccess,
    PathLength,
    StepsTaken,
    Trajectory,
)
from ._order import (
    ITERATOR_OPTIONS,
    OrderCheck,
    check_iterator_options,
    keep_order,
    order_episodes,
    order_share,
)

__all__ = [
    "CONFIGS",
    "ITERATOR_OPTIONS",
    "NDTW",
    "SDTW",
    "NDTWMeasurementConfig",
    "NDTWRewardMeasure",
    "NDTWRewardMeasurementConfig",
    "OracleNavigationError",
    "OracleNavigationErrorMeasurementConfig",
    "OracleSuccess",
    "OracleSuccessMeasurementConfig",
    "OrderCheck",
    "PathLength",
    "PathLengthMeasurementConfig",
    "SDTWMeasurementConfig",
    "StepsTaken",
    "StepsTakenMeasurementConfig",
    "Trajectory",
    "TrajectoryMeasurementConfig",
    "check_iterator_options",
    "keep_order",
    "order_episodes",
    "order_share",
]

for _name, _type, _cls, _node in CONFIGS:
    registry.register_measure(_cls, name=_type)
    if ConfigStore is not None:
        ConfigStore.instance().store(
            package=f"habitat.task.measurements.{_node.uuid}",
            group="habitat/task/measurements",
            name=_name,
            node=_node,
        )
