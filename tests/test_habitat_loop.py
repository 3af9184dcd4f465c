"""End to end, offline: habitat-lab 0.3.3's own ``Env`` and VLN task with navdtw's measures over
R2R-CE val_unseen (the shared data, NAVDTW_DATA), in ``navdtw order``'s order, two ranks
(processes) writing the per-episode log, ``navdtw watch`` deciding from it, and the per-episode
values equal to ``navdtw score --dataset r2r-ce`` on the same trajectories.

Needs habitat-lab (tools/check_habitat.sh's venv, where CI runs it), fastdtw and the R2R-CE
files; skipped without them. tests/habitat_loop.py is the rank (the lines docs/in-the-loop.md
shows), tests/habitat_double.py the simulator. The agent is seeded, so the logs are the same on
every run.

What is compared (``navdtw score`` of the logged paths, per episode):

* ``ndtw`` (navdtw's exact measure, VLN-CE's dense ground truth as the reference) with the score's
  ``paper`` convention (exact DTW), and ``sdtw`` with its ``sdtw``; to 1e-12: the same float32
  distances (docs/metrics.md);
* ``ndtw_fastdtw`` (the measure's ``method: fastdtw``, VLN-CE's value) with the score's ``vlnce``
  convention (FastDTW), to 1e-8: the fastdtw package takes float64 distances, navdtw's FastDTW
  float32 ones;
* ``success``, ``oracle_success`` exactly; ``distance_to_goal`` (NE), ``oracle_navigation_error``
  (ONE) and ``path_length`` (PL) to 1e-6 relative: the measures sum float64 distances, the score
  float32 ones.

SPL is not compared: habitat-lab's SPL takes the distance at reset as the shortest path, the
score's ``vlnce`` convention the episode's ``info.geodesic_distance``, which the double does not
reproduce (it has no navigation mesh).
"""

from __future__ import annotations

import csv
import gzip
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
from habitat_double import install

HERE = Path(__file__).resolve().parent
DATA = Path(os.environ.get("NAVDTW_DATA", HERE.parents[1] / "shared" / "data"))
R2R_CE = DATA / "r2r_vlnce" / "R2R_VLNCE_v1-3_preprocessed" / "val_unseen"
SPLIT = R2R_CE / "val_unseen.json.gz"
GT = R2R_CE / "val_unseen_gt.json.gz"
#: Episodes per rank: two ranks run the first 2 x 150 episodes of the order.
PER_RANK = 150
SEED = 7

if not install():
    pytest.skip("habitat-lab is not installed (tools/check_habitat.sh builds a venv with it)", allow_module_level=True)
pytest.importorskip("habitat")
pytest.importorskip("fastdtw")
if not (SPLIT.is_file() and GT.is_file()):
    pytest.skip(f"R2R-CE val_unseen is not in {DATA} (NAVDTW_DATA)", allow_module_level=True)


def navdtw(*args: str, ok=(0,)) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "navdtw", *args], capture_output=True, text=True, timeout=600)
    assert proc.returncode in ok, proc.stdout + proc.stderr
    return proc


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """``navdtw order`` for two workers, then two ranks of tests/habitat_loop.py side by side."""
    tmp = tmp_path_factory.mktemp("loop")
    navdtw("order", str(SPLIT), "--seed", str(SEED), "--workers", "2", "--out", str(tmp / "order"))
    ranks = [
        subprocess.Popen(
            [
                sys.executable,
                str(HERE / "habitat_loop.py"),
                *("--order", str(tmp / "order" / "order.json"), "--rank", str(rank), "--world-size", "2"),
                *("--log", str(tmp / "log"), "--episodes", str(PER_RANK), "--data", str(DATA)),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for rank in range(2)
    ]
    for proc in ranks:
        out, _ = proc.communicate(timeout=900)
        assert proc.returncode == 0, out
    logs = {
        r: [json.loads(line) for line in (tmp / "log" / f"episodes_r{r}_w2.jsonl").read_text().splitlines()]
        for r in range(2)
    }
    return tmp, logs


def test_each_rank_logs_its_share_in_the_order(run):
    tmp, logs = run
    for rank in range(2):
        share = (tmp / "order" / f"order.worker{rank}of2.txt").read_text().split()
        assert [r["episode_id"] for r in logs[rank]] == share[:PER_RANK]
        meta = json.loads((tmp / "log" / f"episodes_r{rank}_w2.meta.json").read_text())
        order = json.loads((tmp / "order" / "order.json").read_text())
        assert meta["split"]["sha256"] == order["split_sha256"] and meta["order"]["seed"] == SEED
    # the two shares are the order's first 2 x PER_RANK episodes
    first = (tmp / "order" / "order.txt").read_text().split()[: 2 * PER_RANK]
    assert sorted(r["episode_id"] for r in logs[0] + logs[1]) == sorted(first)


def test_watch_decides_from_the_log(run):
    tmp, logs = run
    records = logs[0] + logs[1]
    mean = sum(r["ndtw"] for r in records) / len(records)
    assert 0.3 < mean < 0.9  # the seeded agent: neither lost nor perfect
    navdtw(
        "watch",
        str(tmp / "log" / "episodes_r0_w2.jsonl"),
        *("--order", str(tmp / "order" / "order.json"), "--metric", "ndtw", "--reported", "ndtw=0.95"),
        *("--once", "--output", str(tmp / "watch.json")),
        ok=(12,),
    )
    state = json.loads((tmp / "watch.json").read_text())
    assert state["decision"] == "reported-outside" and state["exit_status"] == 12
    assert state["order"]["seed"] == SEED and state["order"]["units"] == 1839
    run_state = state["runs"]["run"]
    assert run_state["in_order"] == 2 * PER_RANK and run_state["not_in_order"] == 0
    ndtw = run_state["metrics"]["ndtw"]
    assert math.isclose(ndtw["mean_so_far"], mean, abs_tol=1e-12)  # the logged values, both ranks
    assert ndtw["lower"] <= mean <= ndtw["upper"] < 0.95
    # asked of a reported figure inside the interval, it is not decided against it
    navdtw(
        "watch",
        str(tmp / "log" / "episodes_r1_w2.jsonl"),
        *("--order", str(tmp / "order" / "order.json"), "--metric", "ndtw", "--reported", f"ndtw={mean:.3f}"),
        "--once",
        ok=(4, 11),
    )


def score(tmp: Path, records: list[dict], convention: str) -> dict[str, dict[str, float]]:
    """``navdtw score --dataset r2r-ce`` of the logged paths (the episodes they cover: the
    split's entries for them, written beside; the ground truth as it is)."""
    folder = tmp / f"score_{convention}"
    folder.mkdir(exist_ok=True)
    ids = {r["episode_id"] for r in records}
    with gzip.open(SPLIT, "rt") as f:
        doc = json.load(f)
    doc["episodes"] = [e for e in doc["episodes"] if str(e["episode_id"]) in ids]
    (folder / "episodes.json").write_text(json.dumps(doc))
    (folder / "paths.jsonl").write_text(
        "".join(json.dumps({"episode_id": r["episode_id"], "path": r["path"]}) + "\n" for r in records)
    )
    navdtw(
        "score",
        *("--dataset", "r2r-ce", "--convention", convention),
        *("--vlnce-episodes", str(folder / "episodes.json"), "--vlnce-gt", str(GT)),
        *("--predictions", str(folder / "paths.jsonl"), "--out", str(folder / "out")),
    )
    with (folder / "out" / "episodes.csv").open() as f:
        return {
            row["episode_id"]: {k: float(v) for k, v in row.items() if k not in ("episode_id", "scan")}
            for row in csv.DictReader(f)
        }


def test_final_values_equal_navdtw_score(run):
    tmp, logs = run
    records = logs[0] + logs[1]
    exact = score(tmp, records, "paper")
    vlnce = score(tmp, records, "vlnce")
    assert set(exact) == set(vlnce) == {r["episode_id"] for r in records}
    worst: dict[str, float] = {}

    def agree(name, got, want, tol, rel=False):
        err = abs(got - want) / (max(abs(want), 1.0) if rel else 1.0)
        worst[name] = max(worst.get(name, 0.0), err)
        assert err <= tol, (name, got, want)

    successes = 0
    for r in records:
        e, v = exact[r["episode_id"]], vlnce[r["episode_id"]]
        agree("ndtw", r["ndtw"], e["ndtw"], 1e-12)
        agree("sdtw", r["sdtw"], e["sdtw"], 1e-12)
        agree("ndtw_fastdtw", r["ndtw_fastdtw"], v["ndtw"], 1e-8)
        agree("sdtw_fastdtw", r["success"] * r["ndtw_fastdtw"], v["sdtw"], 1e-8)
        assert r["success"] == v["sr"] and r["oracle_success"] == v["osr"]
        agree("ne", r["distance_to_goal"], v["ne"], 1e-6, rel=True)
        agree("one", r["oracle_navigation_error"], v["one"], 1e-6, rel=True)
        agree("pl", r["path_length"], v["pl"], 1e-6, rel=True)
        successes += r["success"] == 1.0
    assert 0.2 * len(records) < successes < 0.9 * len(records)  # both outcomes are compared
    assert len(records) == 2 * PER_RANK
