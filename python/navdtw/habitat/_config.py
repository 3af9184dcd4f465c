"""habitat-lab 0.3's configurations of navdtw's measures (hydra structured configs), one
``MeasurementConfig`` dataclass per measure, and :data:`CONFIGS`, which ``navdtw.habitat``
registers."""

from __future__ import annotations

from dataclasses import dataclass

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

try:  # habitat-lab >= 0.2.5: hydra's structured configs
    from habitat.config.default_structured_configs import MeasurementConfig
    from hydra.core.config_store import ConfigStore
except ImportError:  # habitat 0.1.7 / 0.2.x: yacs, no ConfigStore
    ConfigStore = None

    @dataclass
    class MeasurementConfig:  # type: ignore[no-redef]
        """Stands in for habitat-lab 0.3's ``MeasurementConfig`` where it does not exist."""

        type: str = ""


__all__ = [
    "CONFIGS",
    "NDTWMeasurementConfig",
    "NDTWRewardMeasurementConfig",
    "OracleNavigationErrorMeasurementConfig",
    "OracleSuccessMeasurementConfig",
    "PathLengthMeasurementConfig",
    "SDTWMeasurementConfig",
    "StepsTakenMeasurementConfig",
    "TrajectoryMeasurementConfig",
]


@dataclass
class NDTWMeasurementConfig(MeasurementConfig):
    """habitat-lab 0.3's configuration of :class:`NDTW` (``habitat/task/measurements: navdtw_ndtw``).

    Parameters
    ----------
    type : str
        ``NavdtwNDTW``.
    success_distance : float
        d_th, metres (3.0).
    method : str
        ``exact`` (the default) or ``fastdtw`` (VLN-CE's value).
    gt_path : str
        VLN-CE's ground-truth file (``{split}``, ``{role}`` filled in) instead of
        ``episode.reference_path``; empty (the default) reads the episode.
    split : str
        The split for ``gt_path``.
    uuid : str
        The metric's name (``ndtw``).
    """

    type: str = "NavdtwNDTW"
    success_distance: float = 3.0
    method: str = "exact"
    gt_path: str = ""
    split: str = ""
    uuid: str = "ndtw"


@dataclass
class SDTWMeasurementConfig(MeasurementConfig):
    """habitat-lab 0.3's configuration of :class:`SDTW` (``navdtw_sdtw``).

    Parameters
    ----------
    type : str
        ``NavdtwSDTW``.
    success_distance : float
        d_th and the success radius, metres (3.0).
    method : str
        ``exact`` or ``fastdtw``.
    gt_path : str
        As :class:`NDTWMeasurementConfig`.
    split : str
        As :class:`NDTWMeasurementConfig`.
    uuid : str
        The metric's name (``sdtw``).
    """

    type: str = "NavdtwSDTW"
    success_distance: float = 3.0
    method: str = "exact"
    gt_path: str = ""
    split: str = ""
    uuid: str = "sdtw"


@dataclass
class PathLengthMeasurementConfig(MeasurementConfig):
    """habitat-lab 0.3's configuration of :class:`PathLength` (``navdtw_path_length``).

    Parameters
    ----------
    type : str
        ``NavdtwPathLength``.
    uuid : str
        The metric's name (``path_length``).
    """

    type: str = "NavdtwPathLength"
    uuid: str = "path_length"


@dataclass
class OracleNavigationErrorMeasurementConfig(MeasurementConfig):
    """habitat-lab 0.3's configuration of :class:`OracleNavigationError` (``navdtw_oracle_navigation_error``).

    Parameters
    ----------
    type : str
        ``NavdtwOracleNavigationError``.
    uuid : str
        The metric's name (``oracle_navigation_error``).
    """

    type: str = "NavdtwOracleNavigationError"
    uuid: str = "oracle_navigation_error"


@dataclass
class OracleSuccessMeasurementConfig(MeasurementConfig):
    """habitat-lab 0.3's configuration of :class:`OracleSuccess` (``navdtw_oracle_success``).

    Parameters
    ----------
    type : str
        ``NavdtwOracleSuccess``.
    success_distance : float
        The success radius, metres (3.0).
    uuid : str
        The metric's name (``oracle_success``).
    """

    type: str = "NavdtwOracleSuccess"
    success_distance: float = 3.0
    uuid: str = "oracle_success"


@dataclass
class StepsTakenMeasurementConfig(MeasurementConfig):
    """habitat-lab 0.3's configuration of :class:`StepsTaken` (``navdtw_steps_taken``).

    Parameters
    ----------
    type : str
        ``NavdtwStepsTaken``.
    uuid : str
        The metric's name (``steps_taken``).
    """

    type: str = "NavdtwStepsTaken"
    uuid: str = "steps_taken"


@dataclass
class TrajectoryMeasurementConfig(MeasurementConfig):
    """habitat-lab 0.3's configuration of :class:`Trajectory` (``navdtw_trajectory``).

    Parameters
    ----------
    type : str
        ``NavdtwTrajectory``.
    uuid : str
        The metric's name (``trajectory``).
    """

    type: str = "NavdtwTrajectory"
    uuid: str = "trajectory"


@dataclass
class NDTWRewardMeasurementConfig(MeasurementConfig):
    """habitat-lab 0.3's configuration of :class:`NDTWRewardMeasure` (``navdtw_ndtw_reward``).

    Parameters
    ----------
    type : str
        ``NavdtwNDTWReward``.
    success_distance : float
        d_th, metres (3.0).
    success_reward : float
        The weight of the terminal bonus (0.0: none).
    gt_path : str
        As :class:`NDTWMeasurementConfig`.
    split : str
        As :class:`NDTWMeasurementConfig`.
    uuid : str
        The metric's name (``ndtw_reward``).
    """

    type: str = "NavdtwNDTWReward"
    success_distance: float = 3.0
    success_reward: float = 0.0
    gt_path: str = ""
    split: str = ""
    uuid: str = "ndtw_reward"


#: Every measure: (hydra config name, registered type, class, config dataclass).
CONFIGS: tuple[tuple[str, str, type, type], ...] = (
    ("navdtw_ndtw", "NavdtwNDTW", NDTW, NDTWMeasurementConfig),
    ("navdtw_sdtw", "NavdtwSDTW", SDTW, SDTWMeasurementConfig),
    ("navdtw_path_length", "NavdtwPathLength", PathLength, PathLengthMeasurementConfig),
    (
        "navdtw_oracle_navigation_error",
        "NavdtwOracleNavigationError",
        OracleNavigationError,
        OracleNavigationErrorMeasurementConfig,
    ),
    ("navdtw_oracle_success", "NavdtwOracleSuccess", OracleSuccess, OracleSuccessMeasurementConfig),
    ("navdtw_steps_taken", "NavdtwStepsTaken", StepsTaken, StepsTakenMeasurementConfig),
    ("navdtw_trajectory", "NavdtwTrajectory", Trajectory, TrajectoryMeasurementConfig),
    ("navdtw_ndtw_reward", "NavdtwNDTWReward", NDTWRewardMeasure, NDTWRewardMeasurementConfig),
)
