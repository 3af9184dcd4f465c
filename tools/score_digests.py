"""Bit-identity check for refactors: digests of every score navdtw gives on the real data.

Run it with the python of a venv holding the old build and again with the new one, then compare:

    /work/venv/bin/python tools/score_digests.py before.json
    /work/venv-new/bin/python tools/score_digests.py after.json
    diff before.json after.json

Covers ``navdtw score`` on R2R (every results file, four conventions, --strict) and R2R-CE (two
prediction formats), ``navdtw demo``, ``navdtw baseline`` (R2R, R4R), the synthetic world's
matrices / neighbours / every shortest path, the HA-VLN collision files, and a benchmark suite
(``navdtw suite run``: R2R and NDH, real and perturbed agents, with baselines; ``navdtw compare``):
every output file but the Parquet one (the digest's venvs may lack pyarrow: episodes.csv then).
Data: $NAVDTW_DATA or ../shared/data beside the repository.
"""

import gzip
import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

from navdtw import datasets
from navdtw.cli import main
from navdtw.synthetic import SyntheticWorld

D = Path(os.environ.get("NAVDTW_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data")
out = {}
tmp = Path(tempfile.mkdtemp())
conn = D / "matterport3dsimulator/connectivity"


def h(b):
    return hashlib.sha256(b).hexdigest()


def run(tag, args, files):
    o = tmp / tag
    rc = main([*args, "--out", str(o)])
    out[tag + ":rc"] = rc
    for f in files:
        p = o / f
        if f.endswith(".json"):
            j = json.loads(p.read_text())
            out[tag + ":" + f] = json.dumps(j.get("means"), sort_keys=True)
        else:
            out[tag + ":" + f] = h(p.read_bytes())


runs = [("shortest", D / "r2r/R2R_val_unseen.json", D / "matterport3dsimulator/web/app/val_unseen_shortest_agent.json")]
for p in sorted((D / "r2r_results").rglob("*.json")):
    split = D / "r2r" / ("R2R_val_seen.json" if "val_seen" in p.name else "R2R_val_unseen.json")
    runs.append((p.stem, split, p))
for tag, split, pred in runs:
    for conv in ("r2r", "paper", "duet", "r4r"):
        run(
            f"{tag}-{conv}",
            [
                "score",
                "--split",
                str(split),
                "--connectivity",
                str(conn),
                "--predictions",
                str(pred),
                "--convention",
                conv,
                "--no-figures",
            ],
            ["episodes.csv", "summary.json"],
        )
run(
    "shortest-strict",
    [
        "score",
        "--split",
        str(D / "r2r/R2R_val_unseen.json"),
        "--connectivity",
        str(conn),
        "--predictions",
        str(D / "matterport3dsimulator/web/app/val_unseen_shortest_agent.json"),
        "--strict",
        "--no-figures",
    ],
    ["episodes.csv"],
)
# VLN-CE: predictions = the gt locations (subsampled), keyed by episode id, two formats
base = D / "r2r_vlnce/R2R_VLNCE_v1-3_preprocessed/val_unseen"
gt = json.loads(gzip.decompress((base / "val_unseen_gt.json.gz").read_bytes()))
preds = {k: [{"position": p} for p in v["locations"][::3]] for k, v in gt.items()}
pf = tmp / "ce_preds.json"
pf.write_text(json.dumps(preds))
lines = tmp / "ce_preds.jsonl"
lines.write_text("\n".join(json.dumps({"episode_id": k, "path": v["locations"][::2]}) for k, v in gt.items()))
for name, f in (("ce-dict", pf), ("ce-lines", lines)):
    for conv in ("vlnce", "paper"):
        run(
            f"{name}-{conv}",
            [
                "score",
                "--vlnce-episodes",
                str(base / "val_unseen.json.gz"),
                "--vlnce-gt",
                str(base / "val_unseen_gt.json.gz"),
                "--predictions",
                str(f),
                "--convention",
                conv,
                "--no-figures",
            ],
            ["episodes.csv", "summary.json"],
        )
for seed in (0, 3):
    run(
        f"demo{seed}", ["demo", "--seed", str(seed), "--pairs", "500", "--no-figures"], ["episodes.csv", "summary.json"]
    )
run(
    "baseline",
    [
        "baseline",
        "--split",
        str(D / "r2r/R2R_val_unseen.json"),
        "--connectivity",
        str(conn),
        "-n",
        "200000",
        "--no-progress",
    ],
    ["baseline.json"],
)
run(
    "baseline-r4r",
    [
        "baseline",
        "--split",
        str(D / "r4r_generated/R4R_val_seen.paths.json"),
        "--connectivity",
        str(conn),
        "-n",
        "100000",
        "--no-progress",
        "--convention",
        "r4r",
    ],
    ["baseline.json"],
)
# synthetic world internals: every shortest path, neighbours, matrices
for seed in (0, 1, 7):
    w = SyntheticWorld.generate(seed=seed)
    out[f"w{seed}:dist"] = h(np.ascontiguousarray(w.distances).tobytes())
    out[f"w{seed}:hops"] = h(np.ascontiguousarray(w.hops).tobytes())
    out[f"w{seed}:thr"] = repr(w.threshold)

    def sp1(a, b, w=w):
        try:
            return w.shortest_path(a, b).tobytes()
        except ValueError:
            return b"-"

    sp = b"".join(sp1(a, b) for a in range(w.num_nodes) for b in range(w.num_nodes))
    out[f"w{seed}:sp"] = h(sp)
    out[f"w{seed}:nb"] = h(b"".join(w.neighbors(a).tobytes() for a in range(w.num_nodes)))
    r, q = w.sample_pairs(300, seed=seed + 1)
    out[f"w{seed}:pairs"] = h(b"".join(x.tobytes() for x in r + q))
    out[f"w{seed}:gdist"] = h(np.ascontiguousarray(w.graph.distances).tobytes())
# HA-VLN readers
for s in ("seen", "unseen"):
    out[f"havln-{s}"] = h(
        json.dumps(datasets.load_havln_collisions(D / f"ha_vln/collision_num_val_{s}.json"), sort_keys=True).encode()
    )
# a benchmark suite and a comparison: results.json, leaderboards, per-episode values, report
res = D / "r2r_results"
suite_file = tmp / "suite.toml"
suite_file.write_text(
    f"""
[datasets.r2r_val_unseen]
dataset = "r2r"
split = "{D / "r2r/R2R_val_unseen.json"}"
connectivity = "{conn}"
[datasets.ndh_val_unseen]
dataset = "ndh"
split = "{D / "cvdn/NDH_val_unseen.json"}"
connectivity = "{conn}"
[agents.prevalent]
r2r_val_unseen = "{res / "prevalent_r2r/seq2seq_teacher_imagenet_val_unseen_iter_36000.json"}"
[agents.phi]
r2r_val_unseen = "{res / "rpl2024_group9/val_unseen_phi_agent.json"}"
[agents.stop]
r2r_val_unseen = "{res / "rpl2024_group9/val_unseen_stop_agent.json"}"
[agents.ndh_early]
ndh_val_unseen = "{D / "cvdn/results/val-seq2seq-all-trusted_path-40-sample-imagenet_val_unseen_iter_100.json"}"
[agents.ndh_late]
ndh_val_unseen = "{D / "cvdn/results/val-seq2seq-all-trusted_path-80-sample-imagenet_val_unseen_iter_19900.json"}"
[settings]
resamples = 1000
baseline_walks = 5000
"""
)
suite_outputs = ["results.json", "leaderboard.md", "leaderboard.csv", "leaderboard.tex", "report.html"]
for tag, args in (
    ("suite", ["suite", "run", str(suite_file), "--no-progress", "--max-scenes", "50"]),
    (
        "compare",
        [
            "compare",
            str(res / "rpl2024_group9/val_unseen_phi_agent.json"),
            str(res / "rpl2024_group9/val_unseen_random_agent.json"),
            "--dataset",
            "r2r",
            "--split",
            str(D / "r2r/R2R_val_unseen.json"),
            "--connectivity",
            str(conn),
            "--resamples",
            "500",
            "--no-progress",
        ],
    ),
):
    o = tmp / tag
    out[tag + ":rc"] = main([*args, "--out", str(o)])
    episodes = "episodes.parquet" if (o / "episodes.parquet").exists() else "episodes.csv"
    for f in [*suite_outputs, episodes]:
        out[tag + ":" + f] = h((o / f).read_bytes())
Path(sys.argv[1]).write_text(json.dumps(out, indent=1, sort_keys=True))
print(len(out), "digests")
