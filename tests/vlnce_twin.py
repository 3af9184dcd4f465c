"""VLN-CE's episode measures, rewritten as plain Python: the reference navdtw.habitat is checked against.

Transcribed (not copied) from jacobkrantz/VLN-CE, ``habitat_extensions/measures.py`` at commit
729d141b2ee10628061ada74dd3a5b9f70faeba5: ``euclidean_distance``, ``NDTW.reset_metric`` /
``update_metric`` (with ``FDTW: True``, VLN-CE's default: ``fastdtw(locations, gt_locations,
dist=euclidean_distance)[0]``), ``SDTW.update_metric``, ``PathLength``, ``OracleNavigationError``,
``OracleSuccess`` and ``StepsTaken``; and from habitat-lab (``habitat/tasks/nav/nav.py``, the
0.3.3 release on PyPI, which VLN-CE's ``SDTW`` and oracle measures read through
``task.measurements``): ``DistanceToGoal.update_metric`` (``distance_to: POINT``) and
``Success.update_metric``. Each measure's state is kept as VLN-CE keeps it (positions as lists,
float32 arrays where VLN-CE holds the simulator's arrays).
"""

from __future__ import annotations

import numpy as np
from fastdtw import fastdtw


def euclidean_distance(pos_a, pos_b) -> float:
    return np.linalg.norm(np.array(pos_b) - np.array(pos_a), ord=2)


class VLNCEEpisode:
    """One episode's measures as VLN-CE computes them, fed the simulator's positions (float32)."""

    def __init__(self, gt_locations, goals, geodesic, success_distance=3.0):
        self.gt_locations = gt_locations
        self.goals = goals
        self.geodesic = geodesic
        self.success_distance = success_distance

    # habitat's DistanceToGoal (POINT)
    def _distance_to_goal(self, position):
        if self._previous_position is None or not np.allclose(self._previous_position, position, atol=1e-4):
            self._distance = self.geodesic(position, self.goals)
            self._previous_position = (position[0], position[1], position[2])
        return self._distance

    # VLN-CE's NDTW with FDTW
    def _ndtw_update(self, position):
        current_position = position.tolist()
        if len(self.locations) == 0:
            self.locations.append(current_position)
        else:
            if current_position == self.locations[-1]:
                return
            self.locations.append(current_position)
        dtw_distance = fastdtw(self.locations, self.gt_locations, dist=euclidean_distance)[0]
        self.ndtw = np.exp(-dtw_distance / (len(self.gt_locations) * self.success_distance))

    def reset(self, position, stop_called=False):
        self._previous_position = None
        self.locations = []
        self.ndtw = None
        self._ndtw_update(position)
        self.path_length = 0.0
        self._previous = position
        d = self._distance_to_goal(position)
        self.oracle_navigation_error = min(float("inf"), d)
        self.oracle_success = float(0.0 or d < self.success_distance)
        self.steps_taken = 0.0
        self._judge(d, stop_called)

    def _judge(self, d, stop_called):
        self.success = 1.0 if stop_called and d < self.success_distance else 0.0
        self.sdtw = self.success * self.ndtw

    def step(self, position, stop_called=False):
        # the measures in VLN-CE's task order: distance_to_goal, success, ndtw, sdtw, path_length, ...
        d = self._distance_to_goal(position)
        self._ndtw_update(position)
        self.path_length += euclidean_distance(position, self._previous)
        self._previous = position
        self.oracle_navigation_error = min(self.oracle_navigation_error, d)
        self.oracle_success = float(self.oracle_success or d < self.success_distance)
        self.steps_taken += 1.0
        self._judge(d, stop_called)
