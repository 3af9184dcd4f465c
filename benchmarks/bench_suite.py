#!/usr/bin/env python
"""Wall time of a whole benchmark-suite run, stage by stage: 4 data sets x 8 agents, every metric.

The suite (written to a temporary folder, never into the repository):

* ``r2r_val_unseen`` (2,349 instructions): the six real R2R outputs in ``../shared/data`` (two
  PREVALENT-style variants, the Phi-3, random and stop agents, the simulator's shortest-path
  agent) plus two generated from them (one stops half-way on 30% of the episodes; one takes each
  episode's trajectory from one of two real agents at random);
* ``r2r_val_seen`` (1,021): the two real val-seen outputs plus six generated from them;
* ``ndh_val_unseen`` (907 dialogs): the three real NDH val-unseen outputs plus five generated;
* ``reverie_val_unseen`` (3,521 instructions): the ground truth as an agent (reference paths and
  target objects) plus seven perturbed copies (early stops, wrong objects, staying put, mixtures).

Each run scores all 32 (agent, data set) pairs with every metric, computes 10,000 bootstrap
resamples and all 28 pairwise tests per metric and data set, writes every output and the report.
The first run computes the random-walk baselines (100,000 walks per data set); the second
finds them in the cache. The issue's target: under 5 s on this 2-core machine after graphs are
loaded (everything but the ``load`` stage), report included. Printed, never asserted.

    PYTHONPATH=python python benchmarks/bench_suite.py
    python benchmarks/bench_suite.py --resamples 2000 --repeat 3 --keep /tmp/suite_bench
    python benchmarks/bench_suite.py --tiny      # 50 resamples, 500 walks, 1 run: checks the script runs (CI)
    python benchmarks/bench_suite.py --case results   # only the results-tables case (no data needed)

The second case (``--case results``, issue 20) needs no data: 4 data sets of per-episode results
tables in VLN-CE's JSON Lines form (NaN and Infinity included; 1,839 / 1,517 / 778 / 1,000
episodes, the sizes of R2R-CE and RxR-CE val unseen, R2R-CE val seen and a round number), 8 agents
x 3 runs (seeds) each: 96 files, 8 columns each (one of them the steps, no direction), every
agent's figure the mean over its runs with the interval over episodes and runs, 28 pairs per
metric with the probability of improvement, one agent with reported figures. Reading the tables is
the "score" stage; the target, under 5 s, is for everything after it (statistics, outputs, report).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

from navdtw import suite as navsuite

try:  # imported before timing (module import is start-up, not the run)
    from navdtw import report as _report
except ImportError:  # before the report is merged: the run writes no report.html
    _report = None

REPO = Path(__file__).resolve().parents[1]
STAGES = ("load", "score", "baseline", "stats", "write", "report")


def data_dir() -> Path | None:
    path = Path(os.environ.get("NAVDTW_DATA") or REPO.parent / "shared" / "data")
    return path if path.is_dir() else None


def _traj(vps) -> list:
    return [[v, 0.0, 0.0] for v in vps]


def _prefix(path, frac: float) -> list:
    return path[: max(1, round(len(path) * frac))]


def _write(path: Path, obj) -> str:
    path.write_text(json.dumps(obj))
    return path.name


def _mixed_agents(folder: Path, tag: str, real: dict[str, Path], rng, key: str = "instr_id") -> dict[str, str]:
    """The real files plus generated ones until there are 8: early stops and mixtures of them
    (``key``: the id field of the results files)."""
    loaded = {name: json.loads(p.read_text()) for name, p in real.items()}
    agents = {name: str(p) for name, p in real.items()}
    names = list(loaded)
    k = 0
    while len(agents) < 8:
        a = loaded[names[k % len(names)]]
        b = loaded[names[(k + 1) % len(names)]]
        by_id = {e[key]: e for e in b}
        out = []
        for e in a:
            traj = e["trajectory"]
            if k % 2 == 0 and rng.random() < 0.3:  # stops early
                traj = traj[: max(1, len(traj) // 2)]
            elif k % 2 == 1 and rng.random() < 0.5:  # the other agent's trajectory
                traj = by_id[e[key]]["trajectory"]
            out.append({key: e[key], "trajectory": traj})
        agents[f"{names[k % len(names)]}_gen{k}"] = _write(folder / f"{tag}_gen{k}.json", out)
        k += 1
    return agents


def _reverie_agents(folder: Path, split_file: Path, rng) -> dict[str, str]:
    """The ground truth (reference path, target object) and seven perturbed copies."""
    items = [
        (f"{e['id']}_{k}", e["path"], e["objId"])
        for e in json.loads(split_file.read_text())
        for k in range(len(e["instructions"]))
    ]
    recipes = {
        "ground_truth": lambda p, o: (p, o),
        "stops_early": lambda p, o: (_prefix(p, 0.5) if rng.random() < 0.3 else p, o),
        "wrong_object": lambda p, o: (p, o if rng.random() < 0.7 else -1),
        "half_way": lambda p, o: (_prefix(p, 0.5), o),
        "stay": lambda p, o: (p[:1], -1),
        "mix_gt_stay": lambda p, o: (p, o) if rng.random() < 0.6 else (p[:1], -1),
        "mix_gt_half": lambda p, o: (p, o) if rng.random() < 0.5 else (_prefix(p, 0.5), o),
        "last_step_missing": lambda p, o: (p[:-1] or p, o),
    }
    out = {}
    for name, f in recipes.items():
        records = []
        for iid, path, obj in items:
            traj, pred = f(path, obj)
            records.append({"instr_id": iid, "trajectory": _traj(traj), "predObjId": pred})
        out[name] = _write(folder / f"reverie_{name}.json", records)
    return out


def write_suite(folder: Path, data: Path, resamples: int, walks: int) -> Path:
    rng = np.random.default_rng(0)
    conn = data / "matterport3dsimulator" / "connectivity"
    res = data / "r2r_results"
    unseen = {
        "prevalent": res / "prevalent_r2r" / "seq2seq_teacher_imagenet_val_unseen_iter_36000.json",
        "prevalent_add": res / "prevalent_r2r" / "seq2seq_teacher_imagenet_val_unseen_iter_36000_add.json",
        "phi": res / "rpl2024_group9" / "val_unseen_phi_agent.json",
        "random": res / "rpl2024_group9" / "val_unseen_random_agent.json",
        "stop": res / "rpl2024_group9" / "val_unseen_stop_agent.json",
        "shortest": data / "matterport3dsimulator" / "web" / "app" / "val_unseen_shortest_agent.json",
    }
    seen = {
        "prevalent": res / "prevalent_r2r" / "seq2seq_teacher_imagenet_val_seen_iter_36000.json",
        "prevalent_add": res / "prevalent_r2r" / "seq2seq_teacher_imagenet_val_seen_iter_36000_add.json",
    }
    ndh = data / "cvdn" / "results"
    ndh_real = {
        "ndh_seq2seq_100": ndh / "val-seq2seq-all-trusted_path-40-sample-imagenet_val_unseen_iter_100.json",
        "ndh_seq2seq_19900": ndh / "val-seq2seq-all-trusted_path-80-sample-imagenet_val_unseen_iter_19900.json",
        "ndh_sample": ndh / "baseline_sample.json",
    }
    reverie_split = data / "reverie" / "REVERIE_val_unseen.json"
    datasets = {
        "r2r_val_unseen": (
            {"dataset": "r2r", "split": data / "r2r" / "R2R_val_unseen.json", "connectivity": conn},
            _mixed_agents(folder, "unseen", unseen, rng),
        ),
        "r2r_val_seen": (
            {"dataset": "r2r", "split": data / "r2r" / "R2R_val_seen.json", "connectivity": conn},
            _mixed_agents(folder, "seen", seen, rng),
        ),
        "ndh_val_unseen": (
            {"dataset": "ndh", "split": data / "cvdn" / "NDH_val_unseen.json", "connectivity": conn},
            _mixed_agents(folder, "ndh", ndh_real, rng, key="inst_idx"),
        ),
        "reverie_val_unseen": (
            {
                "dataset": "reverie",
                "split": reverie_split,
                "connectivity": conn,
                "objects": data / "reverie" / "BBox_val_scans.json.gz",
            },
            _reverie_agents(folder, reverie_split, rng),
        ),
    }
    lines = ['title = "navdtw suite benchmark"']
    agents: dict[str, dict[str, str]] = {}
    for name, (table, files) in datasets.items():
        lines.append(f"\n[datasets.{name}]")
        lines += [f'{k} = "{v}"' for k, v in table.items()]
        for agent, file in files.items():
            agents.setdefault(f"{agent}", {})[name] = file
    for agent, files in agents.items():
        lines.append(f'\n[agents."{agent}"]')
        lines += [f'{ds} = "{f}"' for ds, f in files.items()]
    lines += ["\n[settings]", f"resamples = {resamples}", f"baseline_walks = {walks}"]
    path = folder / "suite.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


RESULTS_SIZES = {"r2rce_val_unseen": 1839, "rxrce_val_unseen": 1517, "r2rce_val_seen": 778, "other": 1000}


def write_results_case(folder: Path, resamples: int) -> Path:
    """The results-tables case: 4 data sets x 8 agents x 3 runs of VLN-CE-style JSON Lines logs."""
    rng = np.random.default_rng(0)
    lines = []
    agents: dict[str, list[str]] = {}
    for ds, n in RESULTS_SIZES.items():
        lines += [f"[datasets.{ds}]", 'dataset = "results"', ""]
        hard = rng.normal(0, 1.2, n)
        shortest = rng.uniform(5, 14, n)
        for a in range(8):
            for run in range(3):
                ok = rng.random(n) < 1 / (1 + np.exp(hard - 0.1 * a - rng.normal(0, 0.1)))
                ne = np.where(ok, rng.uniform(0, 3, n), 3 + rng.gamma(2, 2.5, n))
                unreachable = rng.random(n) < 0.005
                ne[unreachable] = np.inf
                ok &= ~unreachable
                pl = shortest * rng.uniform(1, 1.6, n)
                spl = np.where(unreachable, np.nan, ok * shortest / pl)
                ndtw = np.exp(-np.minimum(ne, 30) / 9) * rng.uniform(0.8, 1, n)
                rows = [
                    {
                        "episode_id": str(k),
                        "distance_to_goal": float(ne[k]),
                        "success": float(ok[k]),
                        "spl": float(spl[k]),
                        "ndtw": float(ndtw[k]),
                        "path_length": float(pl[k]),
                        "oracle_success": float(ok[k] or ne[k] < 5),
                        "steps_taken": int(rng.integers(40, 500)),
                    }
                    for k in range(n)
                ]
                name = f"{ds}_agent{a}_seed{run}.jsonl"
                (folder / name).write_text("".join(json.dumps(r) + "\n" for r in rows))
                agents.setdefault(f"agent{a}", []).append(f'{ds} = "{ds}_agent{a}_seed*.jsonl"') if run == 0 else None
    for agent, entries in agents.items():
        lines += [f"[agents.{agent}]", *entries, ""]
    lines += ["[agents.agent7.reported]", 'r2rce_val_unseen = {sr = 0.62, spl = "51%"}', ""]
    lines += ["[settings]", f"resamples = {resamples}", "baseline_walks = 0"]
    path = folder / "results_suite.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def results_case(folder: Path, resamples: int, repeat: int) -> None:
    t0 = time.perf_counter()
    suite_file = write_results_case(folder, resamples)
    print(f"results tables: 4 data sets x 8 agents x 3 runs, generated in {time.perf_counter() - t0:.1f} s")
    print("seconds per stage, wall / CPU (score = reading the 96 tables)")
    print("run  " + "  ".join(f"{s:>11}" for s in STAGES) + "   after-read        total")
    out = folder / "results_out"
    for k in range(repeat):
        timings: dict[str, float] = {}
        t, c = time.perf_counter(), time.process_time()
        results = navsuite.run(suite_file, out, progress=False, timings=timings)
        total, cpu = time.perf_counter() - t, time.process_time() - c
        read = timings.get("load", 0.0) + timings.get("score", 0.0)
        read_cpu = timings.get("load_cpu", 0.0) + timings.get("score_cpu", 0.0)
        cells = "  ".join(f"{timings.get(s, 0.0):5.2f}/{timings.get(s + '_cpu', 0.0):5.2f}" for s in STAGES)
        print(f"{k + 1:>3}  {cells}  {total - read:5.2f}/{cpu - read_cpu:5.2f}  {total:5.2f}/{cpu:5.2f}")
        if results["failures"]:
            print("failures:", results["failures"])
    print(f"load average (1 min) at the end: {os.getloadavg()[0]:.1f}")
    print(
        f"{sum(len(d['agents']) for d in results['datasets'].values())} (agent, data set) pairs of 3 runs, "
        f"{sum(len(d['comparisons']) for d in results['datasets'].values())} comparisons\n"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--resamples", type=int, default=10_000)
    ap.add_argument("--walks", type=int, default=100_000, help="random walks per baseline (default 100000)")
    ap.add_argument("--repeat", type=int, default=2, help="runs; the first computes the baselines (default 2)")
    ap.add_argument("--keep", metavar="DIR", help="write the suite and its outputs here and keep them")
    ap.add_argument("--tiny", action="store_true", help="50 resamples, 500 walks, 1 run: checks the script runs (CI)")
    ap.add_argument("--case", choices=("all", "real", "results"), default="all", help="which case (default all)")
    args = ap.parse_args()
    if args.tiny:
        args.resamples, args.walks, args.repeat = 50, 500, 1
    if args.case in ("all", "results"):
        folder = Path(args.keep) / "results_case" if args.keep else Path(tempfile.mkdtemp(prefix="navdtw_bench_"))
        folder.mkdir(parents=True, exist_ok=True)
        try:
            results_case(folder, args.resamples, args.repeat)
        finally:
            if not args.keep:
                shutil.rmtree(folder, ignore_errors=True)
    if args.case == "results":
        return
    data = data_dir()
    if data is None:
        print("bench_suite: real VLN data not found (set NAVDTW_DATA or put it at ../shared/data); skipped")
        return

    folder = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="navdtw_bench_suite_"))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        t0 = time.perf_counter()
        suite_file = write_suite(folder, data, args.resamples, args.walks)
        print(f"generated the suite's files in {time.perf_counter() - t0:.1f} s ({folder})")
        print(
            f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores; "
            f"{args.resamples} resamples, {args.walks} baseline walks\n"
        )
        out = folder / "out"
        shutil.rmtree(out / ".cache", ignore_errors=True)
        print("seconds per stage, wall / CPU (CPU counts both cores where BLAS or the engine use them)")
        print("run  " + "  ".join(f"{s:>11}" for s in STAGES) + "   after-load        total")
        for k in range(args.repeat):
            timings: dict[str, float] = {}
            t, c = time.perf_counter(), time.process_time()
            results = navsuite.run(suite_file, out, progress=False, timings=timings)
            total, cpu = time.perf_counter() - t, time.process_time() - c
            after = total - timings.get("load", 0.0)
            after_cpu = cpu - timings.get("load_cpu", 0.0)
            cells = "  ".join(f"{timings.get(s, 0.0):5.2f}/{timings.get(s + '_cpu', 0.0):5.2f}" for s in STAGES)
            note = "(baselines computed)" if k == 0 else "(baselines cached)"
            print(f"{k + 1:>3}  {cells}  {after:5.2f}/{after_cpu:5.2f}  {total:5.2f}/{cpu:5.2f}  {note}")
            if results["failures"]:
                print("failures:", results["failures"])
        print(f"load average (1 min) at the end: {os.getloadavg()[0]:.1f}")
        sizes = {p.name: p.stat().st_size for p in out.iterdir() if p.is_file()}
        print("\noutputs: " + ", ".join(f"{n} {s / 1e6:.2f} MB" for n, s in sorted(sizes.items())))
        print(
            f"{sum(len(d['agents']) for d in results['datasets'].values())} (agent, data set) pairs, "
            f"{sum(len(d['comparisons']) for d in results['datasets'].values())} comparisons"
        )
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
