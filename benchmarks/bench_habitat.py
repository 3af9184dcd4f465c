"""Per-step cost of navdtw.habitat's nDTW measure beside the loops' own per-step DTW, in one run.

VLN-CE's ``NDTW`` measure (jacobkrantz/VLN-CE, habitat_extensions/measures.py) calls fastdtw on
the whole path at every ``update_metric``; InternNav's (InternRobotics/InternNav,
internnav/habitat_extensions/vln/measures.py) calls ``dtw(locations, gt_locations,
dist=euclidean_distance)[0]`` the same way, from the ``dtw`` package its requirements pin
(``dtw==1.4.0``); the issue measured the same recomputation with dtw-python. navdtw's measure
keeps the last DTW column and extends it by one point a step.

Rows, each an episode driven through a measure's ``reset_metric`` and ``update_metric`` as
habitat calls them (the simulator is tests/habitat_double.py's, ~1 us a call):

* ``navdtw NDTW (exact, streamed)``: ``navdtw.habitat.NDTW``.
* ``VLN-CE NDTW (fastdtw)``: ``navdtw.habitat.NDTW`` with ``method: fastdtw``, which equals VLN-CE's
  measure value for value (tests/test_habitat.py); fastdtw dominates its cost.
* ``InternNav NDTW (dtw 1.4.0)``: InternNav's update (locations list, ``dtw(..., dist=
  euclidean_distance)[0]``, ``np.exp``) with dtw 1.4.0 loaded from ``--dtw14 DIR`` (``pip install
  --target DIR dtw==1.4.0``: its module is named ``dtw``, as dtw-python's is).
* ``dtw-python per step``: the same update with dtw-python's ``dtw(cdist(locations, reference),
  step_pattern=symmetric1).distance`` (the plain recurrence).

Workloads: references of 10, 40 and 120 points (3-D random walks of 0.5 m steps, one floor) and
episodes of 100 and 500 steps (0.25 m steps, a quarter of them blocked: the position repeats);
seed 0. Printed: us per step (the episode's process CPU time / steps, best of ``--repeat``), the
peers' ratios to navdtw, and the issue's targets at 40 points / 100 steps (>= 50x below fastdtw,
>= 100x below dtw-python), PASS / MISS (never fails).

Needs habitat-lab (tools/check_habitat.sh's venv); without it the script says so and exits 0.

Usage: python benchmarks/bench_habitat.py [--dtw14 DIR] [--repeat 3]
       python benchmarks/bench_habitat.py --tiny    # one small episode each: checks the script runs (CI)
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path

import numpy as np

TESTS = Path(__file__).resolve().parents[1] / "tests"


class Episode:
    def __init__(self, reference):
        self.episode_id = "0"
        self.reference_path = reference.tolist()
        self.goals = []


def workload(rng, n: int, steps: int):
    ref = rng.normal(0, 1, (n, 3))
    ref[:, 1] = 0.0
    ref *= 0.5 / np.maximum(np.linalg.norm(ref, axis=1, keepdims=True), 1e-9)
    reference = np.cumsum(ref, axis=0)
    walk = rng.normal(0, 1, (steps + 1, 3))
    walk[:, 1] = 0.0
    walk *= 0.25 / np.maximum(np.linalg.norm(walk, axis=1, keepdims=True), 1e-9)
    walk[rng.random(steps + 1) < 0.25] = 0.0  # blocked: the position repeats
    walk[0] = reference[0]
    return reference, np.cumsum(walk, axis=0).astype(np.float32)


class RecomputeMeasure:
    """InternNav's / VLN-CE's update: the whole path through ``dtw_of`` at every step."""

    def __init__(self, sim, dtw_of, threshold=3.0):
        self._sim, self._dtw_of, self._threshold = sim, dtw_of, threshold

    def reset_metric(self, *args, episode, **kwargs):
        self.locations = []
        self.gt_locations = episode.reference_path
        self.update_metric()

    def update_metric(self, *args, **kwargs):
        current_position = self._sim.get_agent_state().position.tolist()
        if len(self.locations) == 0:
            self.locations.append(current_position)
        else:
            if current_position == self.locations[-1]:
                return
            self.locations.append(current_position)
        d = self._dtw_of(self.locations, self.gt_locations)
        self._metric = np.exp(-d / (len(self.gt_locations) * self._threshold))


def euclidean_distance(pos_a, pos_b) -> float:
    return np.linalg.norm(np.array(pos_b) - np.array(pos_a), ord=2)


def peers(sim, dtw14_dir):
    """name -> (measure factory, note or None when it cannot run)."""
    import navdtw.habitat as nh

    out = {
        "navdtw NDTW (exact, streamed)": (lambda: nh.NDTW(sim=sim, config={}), None),
        "VLN-CE NDTW (fastdtw)": (lambda: nh.NDTW(sim=sim, config={"method": "fastdtw"}), None),
    }
    if importlib.util.find_spec("fastdtw") is None:
        out["VLN-CE NDTW (fastdtw)"] = (None, "fastdtw is not installed (pip install fastdtw==0.3.4)")
    note = "give --dtw14 DIR (pip install --target DIR dtw==1.4.0)"
    if dtw14_dir:
        spec = importlib.util.spec_from_file_location("dtw14", Path(dtw14_dir) / "dtw" / "dtw.py")
        dtw14 = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(dtw14)
        out["InternNav NDTW (dtw 1.4.0)"] = (
            lambda: RecomputeMeasure(sim, lambda q, r: dtw14.dtw(q, r, dist=euclidean_distance)[0]),
            None,
        )
    else:
        out["InternNav NDTW (dtw 1.4.0)"] = (None, note)
    try:
        import dtw as dtw_python

        if not hasattr(dtw_python, "stepPattern"):
            raise ImportError("the module named dtw is not dtw-python's")
        from scipy.spatial.distance import cdist

        # the local distance matrix given directly: dtw-python reads a one-row x as a univariate
        # series; symmetric1 is the plain recurrence (its default, symmetric2, weighs diagonals 2)
        out["dtw-python per step"] = (
            lambda: RecomputeMeasure(
                sim, lambda q, r: dtw_python.dtw(cdist(q, r), step_pattern=dtw_python.symmetric1).distance
            ),
            None,
        )
    except ImportError as e:
        out["dtw-python per step"] = (None, f"dtw-python is not importable ({e}; pip install dtw-python)")
    return out


def run_episode(measure, sim, episode, positions) -> float:
    """Process CPU seconds of one episode: reset, then one update per step."""
    c0 = time.process_time()
    sim.move_to(positions[0])
    measure.reset_metric(episode=episode)
    for p in positions[1:]:
        sim.move_to(p)
        measure.update_metric(episode=episode)
    return time.process_time() - c0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tiny", action="store_true", help="one small episode each (checks the script runs)")
    ap.add_argument("--repeat", type=int, default=3, help="episodes timed per row and workload (best kept)")
    ap.add_argument("--dtw14", help="a folder with dtw 1.4.0 installed (pip install --target DIR dtw==1.4.0)")
    ap.add_argument("--slow-repeat", type=int, default=1, help="repeats for the recomputing peers (default 1)")
    args = ap.parse_args(argv)

    sys.path.insert(0, str(TESTS))
    try:
        from habitat_double import SimDouble, install

        if not install():
            raise ImportError("habitat-lab is not installed")
        import navdtw.habitat  # noqa: F401
    except ImportError as e:
        print(f"bench_habitat: skipped: {e} (tools/check_habitat.sh builds a venv with habitat-lab)")
        return 0

    sim = SimDouble()
    sizes = [(10, 20)] if args.tiny else [(n, s) for s in (100, 500) for n in (10, 40, 120)]
    rows = peers(sim, args.dtw14)
    for name, (_, note) in rows.items():
        if note:
            print(f"note: {name}: skipped: {note}")
    results: dict[tuple[str, int, int], float] = {}
    for n, steps in sizes:
        reference, positions = workload(np.random.default_rng(0), n, steps)
        episode = Episode(reference)
        for name, (factory, _) in rows.items():
            if factory is None:
                continue
            repeat = 1 if args.tiny else args.repeat if name.startswith("navdtw") else args.slow_repeat
            best = min(run_episode(factory(), sim, episode, positions) for _ in range(repeat))
            results[(name, n, steps)] = best / steps * 1e6
    navdtw_row = "navdtw NDTW (exact, streamed)"
    print()
    print("| measure | |R| | steps | us/step | x navdtw |")
    print("|---|---:|---:|---:|---:|")
    for n, steps in sizes:
        base = results[(navdtw_row, n, steps)]
        for name in rows:
            if (name, n, steps) in results:
                us = results[(name, n, steps)]
                print(f"| {name} | {n} | {steps} | {us:.1f} | {us / base:.0f} |")
    if not args.tiny:
        print()
        base = results[(navdtw_row, 40, 100)]
        for name, target in (("VLN-CE NDTW (fastdtw)", 50), ("dtw-python per step", 100)):
            if (name, 40, 100) in results:
                ratio = results[(name, 40, 100)] / base
                print(
                    f"target: {name} >= {target}x navdtw at 40 points / 100 steps: {ratio:.0f}x "
                    f"{'PASS' if ratio >= target else 'MISS'}"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
