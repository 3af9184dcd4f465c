"""navdtw.habitat's measures inside habitat-lab's own task, against plain references.

Needs habitat-lab (tools/check_habitat.sh builds the venv: habitat-lab 0.3.3 from PyPI, numpy
1.26.4); skipped without it (the main venv: habitat-lab pins numpy 1.26.4, the [test] extra needs
numpy 2). habitat-sim is not on PyPI: tests/habitat_double.py stands in for it.

* nDTW (exact, streamed) equals the plain DTW recurrence on the de-duplicated positions, after
  every step, to 1e-9, on 1,200 random episodes: paths of one point, agents standing still,
  references of one and two points, repeated positions. The recurrence follows navdtw's float32
  rule for distances (docs/metrics.md); a float64 recurrence agrees to 1e-6.
* ``method: fastdtw`` and every other measure equal VLN-CE's (tests/vlnce_twin.py, its code
  rewritten) on the same episodes; SDTW also equals habitat's own ``success`` x nDTW in the task.
* Configuration: hydra (``+habitat/task/measurements=[...]``, a runtime ``measurements.update``)
  and yacs-style upper-case keys.
"""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest
from habitat_double import SimDouble, install

if not install():
    pytest.skip("habitat-lab is not installed (tools/check_habitat.sh builds a venv with it)", allow_module_level=True)

habitat = pytest.importorskip("habitat")
nh = pytest.importorskip("navdtw.habitat")
fastdtw_module = pytest.importorskip("fastdtw")

from habitat.core.registry import registry  # noqa: E402
from habitat.tasks.nav.nav import NavigationGoal  # noqa: E402
from habitat.tasks.vln.vln import InstructionData, VLNEpisode  # noqa: E402
from vlnce_twin import VLNCEEpisode  # noqa: E402

ALL = [name for name, *_ in nh.CONFIGS]
SEED = 20261129


def make_config(*overrides: str):
    return habitat.get_config(
        "benchmark/nav/vln_r2r.yaml",
        overrides=[
            f"+habitat/task/measurements=[{','.join(ALL)}]",
            "habitat.task.measurements.success.success_distance=3.0",
            *overrides,
        ],
    )


def make_task(config, sim):
    return registry.get_task(config.habitat.task.type)(config=config.habitat.task, sim=sim, dataset=None)


def make_episode(k: int, reference: np.ndarray) -> VLNEpisode:
    return VLNEpisode(
        episode_id=str(k),
        scene_id="double.glb",
        start_position=reference[0].tolist(),
        start_rotation=[0.0, 0.0, 0.0, 1.0],
        info={"geodesic_distance": 1.0},
        goals=[NavigationGoal(position=reference[-1].tolist(), radius=3.0)],
        reference_path=reference.tolist(),
        instruction=InstructionData(instruction_text="go"),
        trajectory_id=k,
    )


def random_episodes(count: int, seed: int = SEED):
    """(reference float64 [n, 3], positions float32 [steps + 1, 3], stop) per episode: one-point
    paths, standing still, one- and two-point references, repeats, endings near the goal."""
    rng = np.random.default_rng(seed)
    out = []
    for k in range(count):
        kind = k % 6
        n = 2 if kind == 1 else 1 if kind == 5 and k % 12 == 5 else int(rng.integers(1, 25))
        reference = np.cumsum(rng.normal(0, 2.0, (n, 3)), axis=0)
        reference[:, 1] = rng.normal(0, 0.3)  # one floor, as most episodes
        steps = 0 if kind == 0 else int(rng.integers(1, 50))
        start = reference[0] + rng.normal(0, 1.0, 3)
        if kind == 2:  # standing still
            positions = np.repeat(start[None], steps + 1, axis=0)
        else:
            goal = reference[-1] + rng.normal(0, 2.5, 3)
            t = np.linspace(0, 1, steps + 1)[:, None]
            positions = (1 - t) * start + t * goal + rng.normal(0, 0.5, (steps + 1, 3))
            stuck = rng.random(steps + 1) < 0.25  # bumping into walls: the position repeats
            stuck[0] = False
            for i in np.flatnonzero(stuck):
                positions[i] = positions[i - 1]
        out.append((reference, positions.astype(np.float32), bool(rng.random() < 0.7)))
    return out


def dtw_table(reference: np.ndarray, path: np.ndarray, rule: str) -> np.ndarray:
    """The plain DTW recurrence; column j's last entry is DTW(R, path[: j + 1]). ``rule``
    float32: navdtw's distances (float32 differences, squares summed in order, float32 sqrt);
    float64: float64 throughout."""
    n, m = len(reference), len(path)
    if rule == "float32":
        diff = reference.astype(np.float32)[:, None, :] - path.astype(np.float32)[None, :, :]
        sq = diff * diff
        cost = np.sqrt(sq[..., 0] + sq[..., 1] + sq[..., 2]).astype(np.float64)
    else:
        cost = np.linalg.norm(reference[:, None, :] - path.astype(np.float64)[None, :, :], axis=2)
    previous = [0.0] + [math.inf] * m  # row i - 1 of the table, column 0 first
    for i in range(n):
        row, c = [math.inf], cost[i].tolist()
        for j in range(m):
            row.append(c[j] + min(previous[j], previous[j + 1], row[j]))
        previous = row
    return np.array(previous[1:])


def dedup(positions: np.ndarray) -> tuple[np.ndarray, list[int]]:
    """The positions without consecutive repeats, and for each step the index of its last kept point."""
    kept, index = [positions[0]], [0]
    for p in positions[1:]:
        if not np.array_equal(p, kept[-1]):
            kept.append(p)
        index.append(len(kept) - 1)
    return np.array(kept), index


def run_episode(task, sim, episode, positions, stop):
    """Drives habitat's measurements through an episode; the metrics after reset and each step."""
    sim.move_to(positions[0])
    task.is_stop_called = False
    task.measurements.reset_measures(episode=episode, task=task)
    seen = [dict(task.measurements.get_metrics())]
    for t in range(1, len(positions)):
        sim.move_to(positions[t])
        task.is_stop_called = stop and t == len(positions) - 1
        task.measurements.update_measures(episode=episode, action={"action": "move_forward"}, task=task)
        seen.append(dict(task.measurements.get_metrics()))
    return seen


EPISODES = random_episodes(1200)


def test_episodes_cover_the_edge_cases():
    refs = [len(r) for r, _, _ in EPISODES]
    assert sum(n == 1 for n in refs) >= 50 and sum(n == 2 for n in refs) >= 150
    assert sum(len(p) == 1 for _, p, _ in EPISODES) >= 150  # one-point paths
    assert sum(len(p) > 1 and len(dedup(p)[0]) == 1 for _, p, _ in EPISODES) >= 150  # standing still


def test_ndtw_measure_equals_the_plain_recurrence():
    sim = SimDouble()
    task = make_task(make_config(), sim)
    worst32 = worst64 = 0.0
    for k, (reference, positions, stop) in enumerate(EPISODES):
        seen = run_episode(task, sim, make_episode(k, reference), positions, stop)
        kept, index = dedup(positions)
        for rule in ("float32", "float64"):
            want = np.exp(-dtw_table(reference, kept, rule) / (len(reference) * 3.0))[index]
            got = np.array([s["ndtw"] for s in seen])
            err = float(np.max(np.abs(got - want)))
            if rule == "float32":
                worst32 = max(worst32, err)
            else:
                worst64 = max(worst64, err)
        # SDTW is habitat's own Success x nDTW, after every step
        assert [s["sdtw"] for s in seen] == [s["success"] * s["ndtw"] for s in seen]
        # the trajectory is the de-duplicated path; the reward sums to the last nDTW minus the first
        assert seen[-1]["trajectory"] == kept.astype(np.float64).tolist()
        assert math.isclose(sum(s["ndtw_reward"] for s in seen), seen[-1]["ndtw"] - seen[0]["ndtw"], abs_tol=1e-12)
    assert worst32 <= 1e-9, worst32
    assert worst64 <= 1e-6, worst64  # float32 distances against float64 ones


def test_fastdtw_option_and_the_other_measures_equal_vlnce():
    sim = SimDouble()
    task = make_task(
        make_config("habitat.task.measurements.ndtw.method=fastdtw", "habitat.task.measurements.sdtw.method=fastdtw"),
        sim,
    )
    checked = successes = 0
    for k, (reference, positions, stop) in enumerate(EPISODES):
        seen = run_episode(task, sim, make_episode(k, reference), positions, stop)
        twin = VLNCEEpisode(reference.tolist(), [reference[-1].tolist()], sim.geodesic_distance)
        for t, p in enumerate(positions):
            stopped = stop and t == len(positions) - 1 and t > 0  # STOP is a step: never at reset
            twin.reset(p) if t == 0 else twin.step(p, stopped)
            got = seen[t]
            assert got["ndtw"] == twin.ndtw
            assert got["sdtw"] == twin.sdtw
            assert got["oracle_success"] == twin.oracle_success
            assert got["oracle_navigation_error"] == twin.oracle_navigation_error
            assert got["steps_taken"] == twin.steps_taken
            # VLN-CE sums float32 norms of the float32 positions; navdtw float64 norms
            assert math.isclose(got["path_length"], twin.path_length, rel_tol=1e-6, abs_tol=1e-6)
            checked += 1
        successes += twin.success == 1.0
    assert checked > 20_000 and successes > 50


def test_yacs_upper_case_keys_and_uuid():
    sim = SimDouble()
    config = {"TYPE": "NavdtwNDTW", "SUCCESS_DISTANCE": 2.0, "METHOD": "exact", "UUID": "ndtw_navdtw"}
    measure = registry.get_measure("NavdtwNDTW")(sim=sim, config=config, dataset=None, task=None)
    assert measure.uuid == "ndtw_navdtw"
    reference = np.array([[0.0, 0.0, 0.0], [4.0, 0.0, 0.0]])
    sim.move_to([0.0, 0.0, 1.0])
    measure.reset_metric(episode=make_episode(0, reference))
    assert measure.get_metric() == pytest.approx(math.exp(-(1 + math.sqrt(17)) / (2 * 2.0)), abs=1e-7)
    oracle = registry.get_measure("NavdtwOracleSuccess")(sim=sim, config={"SUCCESS_DISTANCE": 5.0})
    oracle.reset_metric(episode=make_episode(0, reference))
    assert oracle.get_metric() == 1.0  # 4.12 m from the goal, < 5


def test_runtime_update_takes_success_distance():
    config = make_config()
    with habitat.config.read_write(config):
        config.habitat.task.measurements.update({"ndtw": nh.NDTWMeasurementConfig(success_distance=1.5)})
    assert config.habitat.task.measurements.ndtw.success_distance == 1.5
    sim = SimDouble()
    task = make_task(config, sim)
    reference = np.array([[0.0, 0.0, 0.0], [3.0, 0.0, 0.0]])
    seen = run_episode(task, sim, make_episode(0, reference), np.float32([[0, 0, 1], [3, 0, 1]]), True)
    assert seen[-1]["ndtw"] == pytest.approx(math.exp(-2.0 / (2 * 1.5)), abs=1e-12)


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"success_distance": 0}, "NDTW: success_distance must be a finite number of metres > 0, got 0"),
        ({"SUCCESS_DISTANCE": float("nan")}, "NDTW: success_distance must be a finite number of metres > 0"),
        ({"method": "dtw"}, "NDTW: method must be one of exact, fastdtw, got 'dtw'"),
        # a misspelt key of a plain mapping (new-user F7): refused, not run at the default 3.0 m
        (
            {"SUCCES_DISTANCE": 2.0},
            "NDTW: unknown configuration key 'SUCCES_DISTANCE' (did you mean 'SUCCESS_DISTANCE'?)",
        ),
        (
            {"succes_distance": 2.0},
            "NDTW: unknown configuration key 'succes_distance' (did you mean 'success_distance'?)",
        ),
        ({"FDTW": True}, "NDTW: unknown configuration key 'FDTW'; it reads type, uuid, success_distance, method"),
    ],
)
def test_bad_configuration_is_named(config, message):
    with pytest.raises(ValueError, match="^" + message.replace("(", r"\(").replace(")", r"\)").replace("?", r"\?")):
        nh.NDTW(sim=SimDouble(), config=config)


def test_unknown_keys_of_plain_mappings_only_are_refused():
    """Every measure refuses a key it does not read in a plain dict, naming itself; the keys it
    reads pass in either case; a yacs-like config class is left to its own checks."""
    for name, _, cls, _ in nh.CONFIGS:
        cls(sim=SimDouble(), config={k.upper(): v for k, v in {"type": "x", "uuid": name}.items()})
        with pytest.raises(
            ValueError, match=rf"^{cls.__name__.replace('Measure', '')}: unknown configuration key 'sucess_reward'"
        ):
            cls(sim=SimDouble(), config={"sucess_reward": 1.0})
    nh.NDTWRewardMeasure(sim=SimDouble(), config={"success_reward": 1.0, "GT_PATH": "", "split": "val"})
    yacs_like = type("CfgNode", (dict,), {"__module__": "yacs.config"})
    nh.NDTW(sim=SimDouble(), config=yacs_like(SUCCESS_DISTANCE=2.0, FDTW=True))  # VLN-CE's key, not read


def test_episode_without_reference_is_named():
    measure = nh.NDTW(sim=SimDouble(), config={})
    episode = make_episode(7, np.zeros((2, 3)))
    episode.reference_path = None
    with pytest.raises(ValueError, match=r"^NDTW: episode 7 has no reference_path"):
        measure.reset_metric(episode=episode)


@pytest.mark.parametrize("method", ["exact", "fastdtw"])
@pytest.mark.parametrize(
    ("reference", "message"),
    [
        ([], "reference path is empty or not \\[n, D\\]"),
        ([[0.0, 0.0, 0.0], [1.0, 1.0]], "reference path is empty or not \\[n, D\\] numbers"),
        ([[0.0, "a", 0.0]], "reference path is empty or not \\[n, D\\] numbers"),
        ([[0.0, 0.0, 0.0], [1.0, float("nan"), 0.0]], "reference path has a coordinate that is not finite"),
        ([[0.0, 0.0, 2e15]], "reference path has a coordinate that is not finite or beyond \\+-1e\\+15 m"),
    ],
)
def test_bad_reference_is_named_and_the_next_episode_runs(method, reference, message):
    """A bad reference fails its reset with the measure's and episode's names (a ValueError, never a
    crash); the measure then runs the next episode as a fresh one."""
    sim = SimDouble()
    measure = nh.NDTW(sim=sim, config={"method": method})
    good = np.array([[0.0, 0.0, 0.0], [2.0, 0.0, 0.0]])
    sim.move_to([0.0, 0.0, 0.0])
    measure.reset_metric(episode=make_episode(1, good))
    episode = make_episode(8, good)
    episode.reference_path = reference
    with pytest.raises(ValueError, match="^NDTW: episode 8's " + message):
        measure.reset_metric(episode=episode)
    fresh = nh.NDTW(sim=sim, config={"method": method})
    for m in (measure, fresh):
        sim.move_to([0.0, 0.0, 0.0])
        m.reset_metric(episode=make_episode(2, good))
        sim.move_to([1.0, 0.0, 0.0])
        m.update_metric(episode=None)
    assert measure.get_metric() == fresh.get_metric() == pytest.approx(math.exp(-1.0 / (2 * 3.0)), abs=1e-12)  # 0 + 1


@pytest.mark.parametrize("method", ["exact", "fastdtw"])
def test_position_of_another_dimension_is_named(method):
    sim = SimDouble()
    measure = nh.NDTW(sim=sim, config={"method": method})
    measure.reset_metric(episode=make_episode(3, np.zeros((2, 3))))
    sim.move_to([1.0, 2.0])
    with pytest.raises(ValueError, match=r"^NDTW: the agent's position has 2 coordinates, the reference 3$"):
        measure.update_metric()


def test_gt_path_reads_vlnce_ground_truth(tmp_path):
    import gzip
    import json

    gt = {"5": {"locations": [[0.0, 0.0, 0.0], [2.0, 0.0, 0.0], [4.0, 0.0, 0.0]], "actions": [1, 1, 0]}}
    with gzip.open(tmp_path / "val_unseen_gt.json.gz", "wt") as f:
        json.dump(gt, f)
    sim = SimDouble()
    config = {"GT_PATH": str(tmp_path / "{split}_gt.json.gz"), "SPLIT": "val_unseen"}
    measure = nh.NDTW(sim=sim, config=config)
    sim.move_to([0, 0, 0])
    measure.reset_metric(episode=make_episode(5, np.zeros((1, 3))))
    assert measure.get_metric() == pytest.approx(math.exp(-6.0 / (3 * 3.0)), abs=1e-12)  # 0 + 2 + 4
    with pytest.raises(ValueError, match=r"^NDTW: episode 6 is not in"):
        measure.reset_metric(episode=make_episode(6, np.zeros((1, 3))))


def test_import_navdtw_does_not_import_habitat():
    code = "import sys, navdtw; navdtw.evaluate; navdtw.NDTWReward; sys.exit('habitat' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def test_reward_measure_equals_ndtw_reward():
    """The reward measure's values are navdtw.NDTWReward's step() gains and its done() bonus."""
    import navdtw

    sim = SimDouble()
    measure = nh.NDTWRewardMeasure(sim=sim, config={"success_reward": 2.0})
    task = type("Task", (), {"is_stop_called": False})()
    checked = 0
    for k, (reference, positions, _) in enumerate(EPISODES[:300]):
        kept, _ = dedup(positions)
        want = navdtw.NDTWReward([reference], threshold=3.0, success_reward=2.0, workers=1)
        gains = [float(want.step(p[None])[0]) for p in kept]
        bonus = float(want.done(np.ones(1, dtype=bool))[0])
        sim.move_to(positions[0])
        task.is_stop_called = False
        measure.reset_metric(episode=make_episode(k, reference), task=task)
        got = [measure.get_metric()]
        for t in range(1, len(positions)):
            sim.move_to(positions[t])
            task.is_stop_called = t == len(positions) - 1
            measure.update_metric(task=task)
            got.append(measure.get_metric())
        if len(positions) > 1:
            # the stop step's gain (0 when it repeats a position) plus the bonus
            moved = [g for t, g in enumerate(got[1:], 1) if not np.array_equal(positions[t], positions[t - 1])]
            assert math.isclose(sum(got), sum(gains) + bonus, abs_tol=1e-12)
            assert len(moved) == len(kept) - 1
            checked += bonus > 0
    assert checked > 10


@pytest.mark.parametrize("method", ["exact", "fastdtw"])
def test_position_that_is_not_finite_is_named(method):
    sim = SimDouble()
    measure = nh.NDTW(sim=sim, config={"method": method})
    measure.reset_metric(episode=make_episode(3, np.zeros((2, 3))))
    sim.move_to([np.nan, 0, 0])
    with pytest.raises(ValueError, match=r"^NDTW: the agent's position \[nan, 0.0, 0.0\] is not finite"):
        measure.update_metric()
