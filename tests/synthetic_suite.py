"""The synthetic suite of the suite tests (tests/test_suite.py, tests/test_suite_outputs.py): two
5 x 5 grid scans (2 m spacing), 40 paths x 3 instructions, and agents of known quality."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np

# ------------------------------------------------------------------------------------------
# a synthetic world: two 5 x 5 grid scans (2 m spacing), 40 paths x 3 instructions
# ------------------------------------------------------------------------------------------

SIDE = 5


def vp(scan: str, i: int, j: int) -> str:
    return f"{scan}_{i}{j}"


def grid_connectivity(scan: str) -> list[dict]:
    nodes = [(i, j) for i in range(SIDE) for j in range(SIDE)]
    out = []
    for i, j in nodes:
        pose = [1.0, 0, 0, 2.0 * i, 0, 1.0, 0, 2.0 * j, 0, 0, 1.0, 1.5, 0, 0, 0, 1.0]
        near = [abs(i - a) + abs(j - b) == 1 for a, b in nodes]
        out.append({"image_id": vp(scan, i, j), "pose": pose, "included": True, "unobstructed": near, "visible": near})
    return out


def walk(rng, scan: str, steps: int, start=None) -> list[str]:
    i, j = start if start is not None else (int(rng.integers(SIDE)), int(rng.integers(SIDE)))
    path = [(i, j)]
    while len(path) <= steps:
        moves = [
            (i + a, j + b) for a, b in ((1, 0), (-1, 0), (0, 1), (0, -1)) if 0 <= i + a < SIDE and 0 <= j + b < SIDE
        ]
        moves = [m for m in moves if m not in path] or moves
        i, j = moves[int(rng.integers(len(moves)))]
        path.append((i, j))
    return [vp(scan, a, b) for a, b in path]


def csv_rows(path: Path) -> list[dict]:
    return list(csv.DictReader(io.StringIO(path.read_text())))


def trajectory(vps):
    return [[v, 0.0, 0.0] for v in vps]


def make_world(root: Path) -> Path:
    """Files of a suite: connectivity, a split, and predictions of agents of known quality:
    ``oracle`` follows every reference, ``near`` follows it but stops one step short on 1 path in
    8, ``lost`` walks randomly from the start, ``broken`` is malformed JSON."""
    conn = root / "data" / "connectivity"
    conn.mkdir(parents=True)
    for scan in ("scanA", "scanB"):
        (conn / f"{scan}_connectivity.json").write_text(json.dumps(grid_connectivity(scan)))
    rng = np.random.default_rng(7)
    split = []
    for p in range(40):
        scan = ("scanA", "scanB")[p % 2]
        split.append(
            {
                "path_id": 100 + p,
                "scan": scan,
                "path": walk(rng, scan, 4),
                "heading": 0.0,
                "distance": 8.0,
                "instructions": ["go", "walk", "move"],
            }
        )
    (root / "data" / "split.json").write_text(json.dumps(split))
    runs = root / "runs"
    runs.mkdir()
    agents = {"oracle": [], "near": [], "lost": []}
    for e in split:
        for k in range(3):
            iid = f"{e['path_id']}_{k}"
            agents["oracle"].append({"instr_id": iid, "trajectory": trajectory(e["path"])})
            short = e["path"][:-1] if e["path_id"] % 8 == 0 else e["path"]
            agents["near"].append({"instr_id": iid, "trajectory": trajectory(short)})
            i, j = (int(c) for c in e["path"][0].split("_")[1])
            agents["lost"].append({"instr_id": iid, "trajectory": trajectory(walk(rng, e["scan"], 4, (i, j)))})
    for name, preds in agents.items():
        (runs / f"{name}.json").write_text(json.dumps(preds))
    (runs / "broken.json").write_text('[{"instr_id": "100_0", "trajectory": [')
    missing = agents["near"][1:]  # no prediction for the first instruction
    (runs / "missing_one.json").write_text(json.dumps(missing))
    return root


def suite_text(agents: dict[str, str], settings: str = "resamples = 2000\nbaseline_walks = 2000\n") -> str:
    lines = [
        'title = "synthetic"',
        "[datasets.grid_val]",
        'dataset = "r2r"',
        'split = "data/split.json"',
        'connectivity = "data/connectivity"',
        'convention = "r2r"',
        "",
        "[datasets.grid_paper]",
        'dataset = "r2r"',
        'split = "data/split.json"',
        'connectivity = "data/connectivity"',
        'convention = "paper"',
        "threshold = 1.5",
    ]
    for agent, file in agents.items():
        lines += ["", f"[agents.{agent}]", f'grid_val = "runs/{file}"', f'grid_paper = "runs/{file}"']
    lines += ["", "[settings]", settings]
    return "\n".join(lines)


def write_suite(world, agents, name="suite.toml", **kw) -> Path:
    path = world / name
    path.write_text(suite_text(agents, **kw))
    return path


AGENTS = {"oracle": "oracle.json", "near_miss": "near.json", "lost": "lost.json"}


def continuous_files(root: Path, seed: int = 3) -> None:
    """An R2R-CE split of 30 episodes (15 trajectories) in ``root``: ``val.json``, ``val_gt.json``,
    and the predictions ``exact.json`` (the references) and ``stay.json`` (never moves)."""
    rng = np.random.default_rng(seed)
    episodes, gt = [], {}
    for e in range(30):
        ref = np.cumsum(rng.normal(size=(6, 3)) * [1.0, 0.0, 1.0], axis=0)
        episodes.append(
            {"episode_id": e, "trajectory_id": e // 2, "scene_id": "mp3d/s/s.glb", "reference_path": ref.tolist()}
        )
        gt[str(e)] = {"locations": ref.tolist()}
    (root / "val.json").write_text(json.dumps({"episodes": episodes}))
    (root / "val_gt.json").write_text(json.dumps(gt))
    exact = [{"episode_id": e["episode_id"], "path": e["reference_path"]} for e in episodes]
    stay = [{"episode_id": e["episode_id"], "path": e["reference_path"][:1]} for e in episodes]
    (root / "exact.json").write_text(json.dumps(exact))
    (root / "stay.json").write_text(json.dumps(stay))


def assert_episodes_read_back(table: Path, results: dict) -> None:
    """Every (data set, agent) of a run, read back from its episodes file (``table``) as a results
    table with ``select = {agent, dataset}``, has the run's metrics and means (and counts left out)."""
    import pytest

    from navdtw import suite

    for name, ds in results["datasets"].items():
        for agent, values in ds["agents"].items():
            again = suite.compare(
                [table],
                dataset="results",
                select={"agent": agent, "dataset": name},
                progress=False,
                settings={"resamples": 200, "baseline_walks": 0},
            )
            back = again["datasets"]["results"]["agents"][table.stem]
            assert set(back) == set(values), (name, agent)
            for m, v in values.items():
                assert back[m]["mean"] == pytest.approx(v["mean"], rel=1e-12, abs=1e-15), (name, agent, m)
                assert back[m].get("left_out", 0) == v.get("left_out", 0), (name, agent, m)
