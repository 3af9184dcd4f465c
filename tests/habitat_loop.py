"""One rank of an evaluation loop on habitat-lab, as docs/in-the-loop.md writes it: navdtw's
measures in the task, the split's episodes in ``navdtw order``'s order (this rank's share), the
check that the loop runs them in it, and the per-episode log. tests/test_habitat_loop.py runs two
of these side by side.

    python tests/habitat_loop.py --order ORDER.json --rank R --world-size K --log FOLDER --episodes N

Offline: habitat-sim is not on PyPI, so tests/habitat_double.py stands in for it (positions and
geodesic distances), and the agent is a seeded policy that follows the episode's dense
ground-truth locations with noise, stops short of the goal or near it, and bumps into walls
(steps that do not move it). The double's geodesic distance is the straight-line distance to the
episode's last ground-truth location: the distance ``navdtw score --dataset r2r-ce`` measures
success by (docs/metrics.md, R2R-CE), so the loop's values and the score's are comparable.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from habitat_double import install, register_simulator  # noqa: E402

#: The R2R-CE folder under NAVDTW_DATA, and the split the loop runs.
R2R_CE = "r2r_vlnce/R2R_VLNCE_v1-3_preprocessed"
SPLIT = "val_unseen"
#: The measures the loop adds to habitat-lab's VLN task (its own distance_to_goal, success, spl stay).
#: (The others, sdtw, trajectory and a fastdtw nDTW, are added at run time, as StreamVLN does.)
MEASURES = (
    "navdtw_ndtw",
    "navdtw_path_length",
    "navdtw_oracle_success",
    "navdtw_oracle_navigation_error",
    "navdtw_steps_taken",
)


def gt_file(data: Path) -> Path:
    return data / R2R_CE / SPLIT / f"{SPLIT}_gt.json.gz"


def split_file(data: Path) -> Path:
    return data / R2R_CE / SPLIT / f"{SPLIT}.json.gz"


def plan(episode, locations: dict, seed: int) -> list[list[float]]:
    """The seeded agent's positions after each movement step (the STOP step aside): every 3rd or
    4th dense ground-truth location, with noise on the floor plane, up to 40-100% of the way; about
    one step in five bumps into a wall (the position repeats)."""
    rng = np.random.default_rng([seed, int(episode.episode_id)])
    loc = np.asarray(locations[str(episode.episode_id)]["locations"], dtype=np.float64)
    stride = int(rng.integers(3, 5))
    end = int(np.ceil(len(loc) * rng.uniform(0.4, 1.0)))
    points = loc[stride:end:stride].copy()
    points[:, [0, 2]] += rng.normal(0.0, 0.4, (len(points), 2))
    out: list[list[float]] = []
    for p in points:
        if out and rng.random() < 0.2:
            out.append(out[-1])  # a wall: the step does not move the agent
        out.append(p.tolist())
    return out


def build(data: Path, sim_name: str):
    """habitat-lab's VLN benchmark config with navdtw's measures and the order-keeping iterator options."""
    import habitat

    import navdtw.habitat as nh

    config = habitat.get_config(
        "benchmark/nav/vln_r2r.yaml",
        overrides=[
            f"habitat.simulator.type={sim_name}",
            f"habitat.dataset.data_path='{data / R2R_CE}/{{split}}/{{split}}.json.gz'",
            f"habitat.dataset.split={SPLIT}",
            f"habitat.dataset.scenes_dir='{data}'",
            f"+habitat/task/measurements=[{','.join(MEASURES)}]",
            # habitat-lab's own success (and so SPL) at VLN-CE's 3 m (its default is 0.2 m)
            "habitat.task.measurements.success.success_distance=3.0",
            # VLN-CE's reference: the dense ground-truth locations (GT_PATH), as navdtw score reads them
            f"habitat.task.measurements.ndtw.gt_path='{data / R2R_CE}/{{split}}/{{split}}_gt.json.gz'",
            f"habitat.task.measurements.ndtw.split={SPLIT}",
        ],
    )
    nh.keep_order(config)  # shuffle and group_by_scene off, no sampling, no scene-repeat limit
    with habitat.config.read_write(config):  # a StreamVLN / InternNav-style runtime update
        config.habitat.task.measurements.update(
            {
                "sdtw": nh.SDTWMeasurementConfig(success_distance=3.0, gt_path=str(gt_file(data)), split=SPLIT),
                "trajectory": nh.TrajectoryMeasurementConfig(),
                "ndtw_fastdtw": nh.NDTWMeasurementConfig(
                    method="fastdtw", uuid="ndtw_fastdtw", gt_path=str(gt_file(data)), split=SPLIT
                ),
            }
        )
    return config


def run(order_file: Path, rank: int, world_size: int, log_folder: Path, episodes: int, data: Path, seed: int) -> int:
    """Runs this rank's first ``episodes`` episodes of its share of the order; returns how many ran."""
    if not install():
        raise SystemExit("habitat-lab is not installed")
    import habitat

    import navdtw
    import navdtw.habitat as nh
    from navdtw.order import load_order

    with gzip.open(gt_file(data), "rt") as f:
        locations = json.load(f)
    # the double's geodesic distance: straight to the episode's last dense ground-truth location
    last = {k: np.asarray(v["locations"][-1], dtype=np.float64) for k, v in locations.items()}

    def geodesic(position, targets, episode):
        return float(np.linalg.norm(np.asarray(position, dtype=np.float64) - last[str(episode.episode_id)]))

    config = build(data, register_simulator())
    order = load_order(order_file)
    env = habitat.Env(config)
    env.sim.geodesic = geodesic
    env.sim.plan = lambda episode: plan(episode, locations, seed)
    nh.order_episodes(env, order, rank=rank, world_size=world_size, split=split_file(data))
    check = nh.OrderCheck(order, rank=rank, world_size=world_size)
    ran = 0
    with navdtw.EpisodeLog(
        log_folder, rank=rank, world_size=world_size, order=order, split=split_file(data),
        convention="vlnce", success_distance=3.0,
    ) as log:  # fmt: skip
        while ran < episodes and not check.finished:
            env.reset()
            episode = env.current_episode
            check(episode)  # the order's next episode, or a clear error naming it and its position
            while not env.episode_over:  # the seeded agent: its planned steps, then STOP
                env.step("move_forward" if env.sim.planned else "stop")
            info = env.get_metrics()
            log.write(episode.episode_id, info, path=info["trajectory"])
            ran += 1
    env.close()
    return ran


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--order", type=Path, required=True)
    parser.add_argument("--rank", type=int, default=0)
    parser.add_argument("--world-size", type=int, default=1)
    parser.add_argument("--log", type=Path, required=True)
    parser.add_argument("--episodes", type=int, default=100)
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=20261129)
    args = parser.parse_args(argv)
    ran = run(args.order, args.rank, args.world_size, args.log, args.episodes, args.data, args.seed)
    print(f"rank {args.rank} of {args.world_size}: {ran} episodes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
