"""Test files in VLN-CE's layouts, written into a test's temporary folder (never committed): the
RxR-CE layout built from R2R-CE-style episodes, and predictions in VLN-CE's inference formats."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

#: RxR's guide languages, assigned to episodes in turn.
LANGS = ("en-US", "en-IN", "hi-IN", "te-IN")


def gz(path: Path, obj) -> Path:
    path.write_bytes(gzip.compress(json.dumps(obj).encode()))
    return path


def rxrce_layout(episodes: list[dict], gt: dict, folder: Path, split: str = "val_unseen") -> tuple[Path, Path]:
    """R2R-CE-style episodes and ground truth written in the RxR-CE layout: string ids, an
    instruction with an instruction_id that is another episode's id (as in RxR-CE, where episode
    "1" has instruction "0") and a language (the four in turn), info.role = "guide"."""
    n = len(episodes)
    out = []
    for k, e in enumerate(episodes):
        e = dict(e)
        e["episode_id"] = str(e["episode_id"])
        e["trajectory_id"] = str(e.get("trajectory_id", e["episode_id"]))
        text = (e.get("instruction") or {}).get("instruction_text", "go")
        e["instruction"] = {"instruction_id": str(n - 1 - k), "language": LANGS[k % 4], "instruction_text": text}
        e["info"] = {"role": "guide", **(e.get("info") or {})}
        out.append(e)
    return (
        gz(folder / f"{split}_guide.json.gz", {"episodes": out}),
        gz(folder / f"{split}_guide_gt.json.gz", {str(k): v for k, v in gt.items()}),
    )


def predictions(episodes: list[dict], paths: dict[str, list], folder: Path) -> dict[str, Path]:
    """The same paths in VLN-CE's two inference formats and as episode_id records."""
    # INFERENCE.FORMAT "r2r": {episode_id: [{position, heading, stop}]}, the env's get_info after each
    # step: stop is the task's is_stop_called, true on the last step of an agent that stopped
    as_r2r = folder / "preds_r2r.json"
    steps = {
        str(k): [{"position": p, "heading": 0.0, "stop": j == len(v) - 1} for j, p in enumerate(v)]
        for k, v in paths.items()
    }
    as_r2r.write_text(json.dumps(steps))
    iid = {str(e["episode_id"]): int(e["instruction"]["instruction_id"]) for e in episodes}
    rows = sorted(
        ({"instruction_id": iid[str(k)], "path": v} for k, v in paths.items()), key=lambda r: r["instruction_id"]
    )
    as_rxr = folder / "preds_rxr.jsonl"  # INFERENCE.FORMAT "rxr": JSON Lines, sorted by instruction_id
    as_rxr.write_text("".join(json.dumps(r) + "\n" for r in rows))
    as_records = folder / "preds_records.json"
    as_records.write_text(json.dumps([{"episode_id": k, "path": v} for k, v in paths.items()]))
    return {"r2r": as_r2r, "rxr": as_rxr, "records": as_records}
