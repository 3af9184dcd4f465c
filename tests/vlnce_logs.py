"""VLN-CE-style per-episode evaluation logs (JSON Lines), written into a test's temporary folder:
what a habitat evaluation loop built on VLN-CE writes per episode (``distance_to_goal``,
``success``, ``spl``, ``ndtw``, ``path_length``, ``oracle_success``, ``steps_taken``, with the
episode and scene ids), NaN and Infinity included where such loops write them: an agent that ends
where the goal is unreachable logs ``distance_to_goal`` Infinity and ``spl`` NaN (its success is 0).

Episodes have a difficulty shared by every agent and run (a hard episode is hard for all); a run
(seed) has its own offset (``run_effect``), so runs of one agent differ as seeds do."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

SCENES = (
    "2azQ1b91cZZ",
    "8194nk5LbLH",
    "EU6Fwq7SyZv",
    "QUCTc6BB5sX",
    "TbHJrupSAjP",
    "X7HyMhZNoso",
    "oLBMNvg9in8",
    "zsNo4HB9uLZ",
)


def episodes_log(
    n: int = 240, *, skill: float = 0.0, run: int = 0, run_effect: float = 0.0, unreachable=(), seed=0
) -> list[dict]:
    """The rows of one evaluation run: ``skill`` shifts the agent's success log-odds, ``run_effect``
    this run's; ``unreachable`` lists episode indices where the agent ends off the navigable mesh
    (Infinity / NaN). Every row's values are consistent: success iff distance_to_goal <= 3 m,
    oracle_success >= success, spl = success * shortest / max(path_length, shortest)."""
    episode = np.random.default_rng([seed, 1])  # the episodes: the same for every agent and run
    difficulty = episode.normal(0.0, 1.2, n)
    shortest = episode.uniform(5.0, 14.0, n)
    rng = np.random.default_rng([seed, 2, int(1000 * skill) & 0xFFFF, run])
    p = 1.0 / (1.0 + np.exp(-(skill + run_effect - difficulty)))
    success = rng.random(n) < p
    ne = np.where(success, rng.uniform(0.2, 3.0, n), 3.0 + rng.gamma(2.0, 2.5, n))
    oracle = success | (rng.random(n) < 0.25)
    pl = shortest * rng.uniform(1.0, 1.6, n)
    rows = []
    for k in range(n):
        spl = float(success[k]) * shortest[k] / max(pl[k], shortest[k])
        dist = float(ne[k])
        if k in unreachable:
            dist, spl = math.inf, math.nan
        rows.append(
            {
                "episode_id": str(k + 1),
                "scene_id": f"mp3d/{SCENES[k % len(SCENES)]}/{SCENES[k % len(SCENES)]}.glb",
                "distance_to_goal": dist,
                "success": float(success[k]) if k not in unreachable else 0.0,
                "spl": spl,
                "ndtw": float(np.clip(math.exp(-min(dist, 30.0) / 9.0) * rng.uniform(0.8, 1.0), 0, 1)),
                "path_length": float(pl[k]),
                "oracle_success": float(oracle[k]) if k not in unreachable else 0.0,
                "steps_taken": int(rng.integers(40, 500)),
            }
        )
    return rows


def write_log(path: Path, rows: list[dict]) -> Path:
    """JSON Lines as Python's json writes them (``NaN``, ``Infinity``)."""
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def two_agents_three_runs(folder: Path, n: int = 240) -> dict[str, list[Path]]:
    """The acceptance case: agents ``mine`` and ``base``, three runs each; a few episodes end
    unreachable in every run of an agent, one more in a single run (seed 1)."""
    out: dict[str, list[Path]] = {}
    for agent, skill, effects, unreachable in (
        ("mine", 0.6, (0.15, -0.1, 0.0), {4, 77, 150}),
        ("base", 0.2, (-0.05, 0.1, 0.05), {4, 200}),
    ):
        out[agent] = []
        for r, effect in enumerate(effects):
            ends = unreachable | ({9} if r == 1 else set())
            rows = episodes_log(n, skill=skill, run=r, run_effect=effect, unreachable=ends)
            out[agent].append(write_log(folder / f"{agent}_seed{r}.jsonl", rows))
    return out
