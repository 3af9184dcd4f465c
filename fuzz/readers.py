"""Coverage-guided fuzz targets for every navdtw reader (atheris over a plain build).

One target per reader family (``--target NAME``, see ``TARGETS``): R2R/R4R, RxR, REVERIE (with
the box file and the box folder), NDH, R2R-CE, RxR-CE, positions, HA-VLN, the Matterport
connectivity files, the suite TOML and the results tables (JSON Lines, JSON list, keyed JSON,
CSV, TSV, Parquet). An input is a small *bundle* of files::

    === opts
    {"convention": "duet"}
    === R2R_val.json
    [{"path_id": 1, ...}]
    === connectivity/scanA_connectivity.json
    [...]

Each ``=== NAME`` line starts one file (the names a target accepts are fixed, see each target's
``slots``); ``opts`` picks the target's options (convention, format, ...). A file the bundle
lacks gets the target's default content, so a mutation of one file meets valid partners. Files
whose name ends in ``.gz`` are gzipped (unless their content is gzip already, then it is
written as it is).

The oracle, for every input: the reader either returns or raises ``ValueError`` / ``TypeError``
(or a subclass: ``SuiteError``, ``UnknownViewpointError``) whose message is one line naming one
of the input's files; any other exception (KeyError, IndexError, RecursionError, numpy errors,
OverflowError, ...), a multi-line or anonymous message, a hang (libFuzzer's ``-timeout``) or a
crash is a finding; so is a file written outside the input's folder (the working folder and the
input folder are listed before and after).

Mutations (``custom_mutator``): libFuzzer's byte mutations of the whole bundle or of one file,
and structure-aware ones that parse one file (JSON, JSON Lines, TOML, CSV), change its value tree
(replace a node with an interesting value or another node, delete, duplicate, swap, rename a
key, nest deeply, write a 5000-digit integer, ...) and write it back, so inputs get past the
parsers and into the readers' checks.

Run it (fuzz/README.md, section "Readers"; ``bash fuzz/run.sh SECONDS [target...]``)::

    python fuzz/readers.py --target r2r CORPUS_DIR fuzz/seeds/r2r -max_total_time=60 -timeout=10
    python fuzz/readers.py --target r2r --replay fuzz/seeds/r2r     # no atheris needed
    python fuzz/readers.py --target all --replay                    # every target's seeds
    python fuzz/readers.py --write-seeds                           # regenerates fuzz/seeds/
"""

from __future__ import annotations

import contextlib
import copy
import csv
import gzip
import io
import json
import math
import os
import random
import re
import shutil
import sys
import tempfile
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
SEEDS = os.path.join(HERE, "seeds")

try:
    import atheris
except ImportError:  # replay and seed writing work without it
    atheris = None

_FUZZING = atheris is not None and not {"--replay", "--write-seeds", "--list"} & set(sys.argv)
if _FUZZING:
    with atheris.instrument_imports(include=["navdtw"]):
        import navdtw
        import navdtw.datasets
        import navdtw.humanaware
        import navdtw.suite.config
    if "_trace_branch" not in navdtw.datasets.load_results.__code__.co_names:
        # not instrumented: scikit-build-core's editable install loads navdtw through a loader of
        # its own, which atheris does not instrument; libFuzzer then sees no coverage
        sys.stderr.write(
            "WARNING: navdtw is not instrumented (an editable install?): this run has no coverage and "
            "mutates blindly; fuzz a plain install (pip install .), see fuzz/README.md\n"
        )
else:
    import navdtw
    import navdtw.datasets
    import navdtw.humanaware
    import navdtw.suite.config

import numpy as np  # noqa: E402

ds = navdtw.datasets

# --------------------------------------------------------------------------------------------
# bundles: several files in one input
# --------------------------------------------------------------------------------------------

_MARK = re.compile(rb"(?m)^=== ([^\n]*)\n")


def decode(data: bytes) -> dict[str, bytes]:
    """``{name: content}`` of a bundle; text before the first mark is ignored; a later file of
    the same name wins."""
    out: dict[str, bytes] = {}
    parts = _MARK.split(data)
    for k in range(1, len(parts) - 1, 2):
        name = parts[k].decode("utf-8", "replace").strip()
        content = parts[k + 1]
        out[name] = content[:-1] if content.endswith(b"\n") else content
    return out


def encode(files: dict[str, bytes]) -> bytes:
    return b"".join(b"=== " + name.encode() + b"\n" + content + b"\n" for name, content in files.items())


def _json_bytes(obj) -> bytes:
    return json.dumps(obj).encode()


def _jsonl_bytes(rows) -> bytes:
    return "\n".join(json.dumps(r) for r in rows).encode()


# --------------------------------------------------------------------------------------------
# a tiny world of our own (no research data): two scans, a few viewpoints each
# --------------------------------------------------------------------------------------------


def connectivity(ids, positions, edges, excluded=()) -> list[dict]:
    """A Matterport3D connectivity list: ``pose`` an identity rotation plus the position."""
    n = len(ids)
    out = []
    for k, (vp, (x, y, z)) in enumerate(zip(ids, positions)):
        un = [False] * n
        for a, b in edges:
            if a == k:
                un[b] = True
            if b == k:
                un[a] = True
        pose = [1.0, 0.0, 0.0, x, 0.0, 1.0, 0.0, y, 0.0, 0.0, 1.0, z, 0.0, 0.0, 0.0, 1.0]
        out.append({"image_id": vp, "pose": pose, "included": vp not in excluded, "height": 1.5, "unobstructed": un})
    return out


SCAN_A = connectivity(
    ["a0", "a1", "a2", "a3", "ax"],
    [(0.0, 0.0, 1.5), (2.0, 0.0, 1.5), (4.0, 0.0, 1.5), (4.0, 3.0, 1.5), (9.0, 9.0, 1.5)],
    [(0, 1), (1, 2), (2, 3), (3, 4)],
    excluded=("ax",),
)
SCAN_B = connectivity(["b0", "b1", "b2"], [(0.0, 0.0, 0.0), (1.0, 1.0, 0.0), (1.0, 2.5, 0.2)], [(0, 1), (1, 2)])
CONN = {
    "connectivity/scanA_connectivity.json": _json_bytes(SCAN_A),
    "connectivity/scanB_connectivity.json": _json_bytes(SCAN_B),
}


def step(vp, heading=0.0, elevation=0.0):
    return [vp, heading, elevation]


# --------------------------------------------------------------------------------------------
# the oracle
# --------------------------------------------------------------------------------------------


class Finding(AssertionError):
    """The oracle's verdict on one input (libFuzzer saves it as a crash)."""


#: bundle names a target may write: a path of plain parts below the input folder
_SAFE_NAME = re.compile(r"[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)?")


class Target:
    """One fuzz target: its files (``slots``: name -> default content), which extra names it
    accepts (``pattern``), its options and the reader calls (``run(folder, opts)``)."""

    def __init__(self, name, slots, run, seeds, pattern=None, opts=None, text_formats=None):
        self.name = name
        self.slots = slots
        self.run = run
        self.seeds = seeds
        self.pattern = re.compile(pattern) if pattern else None
        self.opts = opts or {}
        self.text_formats = text_formats or {}

    def accepts(self, name: str) -> bool:
        if len(name) > 200:  # beyond a file system's name length: the harness could not write it
            return False
        if name in self.slots or name == "opts":
            return True
        return bool(self.pattern and self.pattern.fullmatch(name) and _SAFE_NAME.fullmatch(name) and ".." not in name)

    def files(self, data: bytes) -> tuple[dict[str, bytes], dict]:
        """The files to write (defaults for the slots the bundle lacks) and the options."""
        got = {k: v for k, v in decode(data).items() if self.accepts(k)}
        try:
            opts = json.loads(got.pop("opts", b"{}"))
        except (ValueError, RecursionError):
            opts = {}
        if not isinstance(opts, dict):
            opts = {}
        files = dict(got)
        for name, content in self.slots.items():
            if name not in files and content is not None:
                folder = name.split("/")[0] + "/" if "/" in name else None
                if folder and any(k.startswith(folder) for k in got):
                    continue  # the bundle brings its own files of this folder
                files[name] = content
        return files, opts

    def opt(self, opts: dict, key: str):
        """An option's value if it is one the target knows, else its default (the first)."""
        choices = self.opts[key]
        value = opts.get(key, choices[0])
        try:
            return value if value in choices else choices[0]
        except TypeError:  # unhashable
            return choices[0]


def _write(folder: str, files: dict[str, bytes]) -> list[str]:
    names = []
    for name, content in files.items():
        path = os.path.join(folder, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if name.endswith(".gz") and content[:2] != b"\x1f\x8b":
            content = gzip.compress(content, mtime=0)
        with open(path, "wb") as f:
            f.write(content)
        names.append(name)
    return names


def _listing(folder: str) -> list[str]:
    out = []
    for root, dirs, files in os.walk(folder):
        out += [os.path.relpath(os.path.join(root, f), folder) for f in files]
        out += [os.path.relpath(os.path.join(root, d), folder) + "/" for d in dirs]
    return sorted(out)


class Sandbox:
    """The process's scratch folder: ``work`` (the cwd while a reader runs, must stay empty) and
    ``input`` (the files of one input, recreated per input)."""

    def __init__(self) -> None:
        # a memory file system when there is one: folders are made and removed for every input
        shm = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
        self.root = tempfile.mkdtemp(prefix="navdtw-fuzz-", dir=os.environ.get("NAVDTW_FUZZ_TMP", shm))
        self.work = os.path.join(self.root, "work")
        self.input = os.path.join(self.root, "input")
        os.mkdir(self.work)
        import atexit

        atexit.register(shutil.rmtree, self.root, True)

    def fresh(self) -> str:
        if os.path.exists(self.input):
            shutil.rmtree(self.input)
        os.mkdir(self.input)
        return self.input


_SANDBOX: Sandbox | None = None
#: the names of the current input's files and folders (a message must name one)
_NAMES: set[str] = set()
_ALLOWED = (ValueError, TypeError)
#: NAVDTW_FUZZ_VERBOSE=1: print every refusal (to see what the seeds and a corpus reach)
_VERBOSE = os.environ.get("NAVDTW_FUZZ_VERBOSE") == "1"


def run_one(target: Target, data: bytes) -> None:
    """Writes the input's files and runs the target's readers on them under the oracle."""
    global _SANDBOX
    if _SANDBOX is None:
        _SANDBOX = Sandbox()
    box = _SANDBOX
    folder = box.fresh()
    files, opts = target.files(data)
    written = _write(folder, files)
    before = _listing(folder)
    _NAMES.clear()
    _NAMES.update({os.path.basename(n) for n in written} | {n.split("/")[0] for n in written if "/" in n})
    cwd = os.getcwd()
    os.chdir(box.work)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            target.run(folder, opts)
    except _ALLOWED as exc:
        check_message(exc, _NAMES)
        if _VERBOSE:
            sys.stderr.write(f"refused: {type(exc).__name__}: {exc}\n")
    finally:
        os.chdir(cwd)
    after = _listing(folder)
    if after != before:
        raise Finding(f"the readers changed the input folder: {sorted(set(after) ^ set(before))}")
    if os.listdir(box.work):
        raise Finding(f"the readers wrote into the working folder: {os.listdir(box.work)}")
    if sorted(os.listdir(box.root)) != ["input", "work"]:
        raise Finding(f"the readers wrote beside the input folder: {os.listdir(box.root)}")


_SEEN: dict[str, int] = {}


def one_input(target: Target, data: bytes) -> None:
    """libFuzzer's callback: :func:`run_one`; with ``NAVDTW_FUZZ_KEEP_GOING=DIR`` a finding is
    saved to DIR (at most 3 per kind: exception type and the innermost navdtw line) and printed,
    and the run goes on (a hang or a crash still stops it)."""
    keep = os.environ.get("NAVDTW_FUZZ_KEEP_GOING")
    if not keep:
        run_one(target, data)
        return
    try:
        run_one(target, data)
    except Exception as exc:
        import hashlib
        import traceback

        tb = (exc.__cause__ or exc).__traceback__  # a Finding about a message: where the message was raised
        frames = [f for f in traceback.extract_tb(tb) if "navdtw" in f.filename]
        where = f"{os.path.basename(frames[-1].filename)}:{frames[-1].lineno}" if frames else "harness"
        kind = f"{type(exc).__name__}@{where}"
        if isinstance(exc, Finding):
            kind += ":" + re.sub(r"'[^']*'|\d+", "#", str(exc))[:80]
        _SEEN[kind] = _SEEN.get(kind, 0) + 1
        if _SEEN[kind] > 3:
            return
        os.makedirs(keep, exist_ok=True)
        name = os.path.join(keep, f"{target.name}-" + hashlib.sha1(data).hexdigest()[:16])
        with open(name, "wb") as f:
            f.write(data)
        last = traceback.format_exception_only(type(exc), exc)[-1].strip()
        sys.stderr.write(f"FINDING {kind} saved to {name}: {last[:300]}\n")


def check_message(exc: BaseException, names: set[str]) -> None:
    msg = str(exc)
    if "\n" in msg or "\r" in msg:
        raise Finding(f"{type(exc).__name__} message of several lines: {msg[:400]!r}") from exc
    if not any(n and n in msg for n in names):
        raise Finding(f"{type(exc).__name__} message names none of the files {sorted(names)}: {msg[:400]!r}") from exc
    for bad in ("np.int64(", "np.float64(", "np.str_(", "querys"):
        if bad in msg:
            raise Finding(f"{type(exc).__name__} message shows {bad!r}: {msg[:400]!r}") from exc


# --------------------------------------------------------------------------------------------
# the targets
# --------------------------------------------------------------------------------------------


def _p(folder, name):
    return os.path.join(folder, name)


def attempt(fn, *args, **kwargs):
    """``fn(*args, **kwargs)``, or None when it raises an allowed error (whose message the oracle
    checks): later calls of a target still run after a refusal, for coverage."""
    try:
        return fn(*args, **kwargs)
    except _ALLOWED as exc:
        check_message(exc, _NAMES)
        if _VERBOSE:
            sys.stderr.write(f"refused: {type(exc).__name__}: {exc}\n")
        return None


def _match_all(bench, preds, convention, strict_too=True):
    """``bench.match`` (and strict, when it applies) and ``bench.evaluate`` of the match."""
    if bench is None:
        return None
    matched = attempt(bench.match, preds, convention=convention)
    if matched is not None:
        attempt(bench.evaluate, matched, convention=convention, workers=1)
    if strict_too:
        attempt(bench.match, preds, convention=convention, strict=True)
    return matched


# --- R2R / R4R ------------------------------------------------------------------------------

R2R_SPLIT = [
    {
        "path_id": 1,
        "scan": "scanA",
        "path": ["a0", "a1", "a2"],
        "heading": 0.5,
        "distance": 4.0,
        "instructions": ["walk ahead", "go to the end", "straight on", "a fourth one"],
    },
    {
        "path_id": "p2",
        "scan": "scanB",
        "path": ["b0", "b1", "b2"],
        "heading": 1.0,
        "distance": 3.2,
        "num_instructions": 2,
    },
]
R2R_PREDS = [
    {"instr_id": "1_0", "trajectory": [step("a0"), step("a1", 0.3), step("a1", 0.6), step("a2")]},
    {"instr_id": "1_1", "trajectory": [step("a0"), step("a1")]},
    {"instr_id": "1_2", "trajectory": ["a0", "a1", "a2", "a3"]},
    {"instr_id": "1_3", "trajectory": [step("a1"), step("a2")]},
    {"instr_id": "p2_0", "trajectory": [step("b0"), step("b1"), step("b2")]},
    {"instr_id": "p2_1", "trajectory": [step("b0")]},
]


def run_r2r(folder, opts):
    split, preds, conn = _p(folder, "R2R_val.json"), _p(folder, "preds.json"), _p(folder, "connectivity")
    kind = R2R_TARGET.opt(opts, "kind")
    entries = attempt(ds.load_r2r, split)
    if entries is not None:
        ds.instructions(entries)
    attempt(ds.load_predictions, preds, duplicates=R2R_TARGET.opt(opts, "duplicates"))
    bench = attempt(ds.open, kind, split=split, connectivity=conn)
    _match_all(bench, preds, R2R_TARGET.opt(opts, "convention"))
    if bench is not None and opts.get("baseline") is True:
        attempt(bench.baseline, 3, seed=1, workers=1, progress=False)


R2R_TARGET = Target(
    "r2r",
    {"R2R_val.json": _json_bytes(R2R_SPLIT), "preds.json": _json_bytes(R2R_PREDS), **CONN},
    run_r2r,
    seeds=[
        {},
        {"opts": {"convention": "duet", "kind": "r4r"}},
        {"opts": {"convention": "paper", "duplicates": "first", "baseline": True}},
        {"opts": {"convention": "r4r"}, "preds.json": R2R_PREDS[:4] + R2R_PREDS[4:]},
    ],
    pattern=r"connectivity/[A-Za-z0-9]+_connectivity\.json",
    opts={"convention": ["r2r", "duet", "paper", "r4r"], "kind": ["r2r", "r4r"], "duplicates": ["error", "first"]},
)

# --- RxR -------------------------------------------------------------------------------------

RXR_GUIDE = [
    {
        "instruction_id": 10,
        "path_id": 1,
        "scan": "scanA",
        "path": ["a0", "a1", "a2"],
        "heading": 0.2,
        "language": "en-US",
        "instruction": "go",
    },
    {
        "instruction_id": 11,
        "path_id": 1,
        "scan": "scanA",
        "path": ["a0", "a1", "a2"],
        "heading": 0.2,
        "language": "hi-IN",
        "instruction": "jao",
    },
    {
        "instruction_id": 12,
        "scan": "scanB",
        "path": ["b0", "b1"],
        "language": "te-IN",
        "timed_instruction": [{"word": "x", "start_time": 0.1}],
    },
]
RXR_PREDS_FOLLOWER = [
    {"instruction_id": 10, "path": ["a0", "a1", "a2"], "metrics": {"ndtw": 0.9}},
    {"instruction_id": 11, "path": ["a0", "a0", "a1"]},
    {"instruction_id": 12, "path": ["b0"]},
]
RXR_PREDS_HAMT = [
    {"instr_id": "1_10", "trajectory": [step("a0"), step("a1")]},
    {"instr_id": "1_11", "trajectory": [step("a0"), step("a1"), step("a2")]},
    {"instr_id": "12", "trajectory": [step("b0"), step("b1")]},
]


def run_rxr(folder, opts):
    guide, conn = _p(folder, "rxr_val_guide.jsonl.gz"), _p(folder, "connectivity")
    preds = _p(folder, RXR_TARGET.opt(opts, "preds"))
    attempt(ds.load_rxr_guide, guide)
    attempt(ds.load_rxr_predictions, preds)
    bench = attempt(ds.open, "rxr", split=guide, connectivity=conn)
    _match_all(bench, preds, RXR_TARGET.opt(opts, "convention"))


RXR_TARGET = Target(
    "rxr",
    {
        "rxr_val_guide.jsonl.gz": _jsonl_bytes(RXR_GUIDE),
        "follower.jsonl": _jsonl_bytes(RXR_PREDS_FOLLOWER),
        "submit.json": _json_bytes(RXR_PREDS_HAMT),
        **CONN,
    },
    run_rxr,
    seeds=[{}, {"opts": {"preds": "submit.json", "convention": "paper"}}],
    pattern=r"connectivity/[A-Za-z0-9]+_connectivity\.json",
    opts={"convention": ["duet", "paper"], "preds": ["follower.jsonl", "submit.json"]},
    text_formats={"rxr_val_guide.jsonl.gz": "jsonl", "follower.jsonl": "jsonl"},
)

# --- REVERIE ---------------------------------------------------------------------------------

REVERIE_SPLIT = [
    {
        "id": "1_7",
        "path_id": 1,
        "scan": "scanA",
        "path": ["a0", "a1", "a2"],
        "objId": 7,
        "heading": 0.0,
        "distance": 4.0,
        "instructions": ["find the lamp", "the lamp"],
    },
    {"id": "2_3", "path_id": 2, "scan": "scanB", "path": ["b0", "b1"], "objId": "3", "instructions": ["the chair"]},
]
REVERIE_BOXES = {
    "scanA_a2": {"a2": {"7": {"name": "lamp", "visible_pos": [3, 4], "bbox2d": [[1, 2, 30, 40], [5, 6, 7, 8]]}}},
    "scanA_a3": {
        "a3": {
            "7": {"name": "lamp", "visible_pos": [1], "bbox2d": [[0.5, 2, 3.5, 4e1]]},
            "9": {"name": "door", "visible_pos": []},
        }
    },
    "scanA_a1": {"a1": {}},
    "scanB_b1": {"b1": {"3": {"name": "chair", "visible_pos": [0], "bbox2d": [[1, 1, 2, 2]]}}},
}
REVERIE_PREDS = [
    {"instr_id": "1_7_0", "trajectory": [step("a0"), step("a1"), step("a2")], "predObjId": 7},
    {"instr_id": "1_7_1", "trajectory": [["a0"], ["a1", "a2", "a3"]], "pred_objid": "9"},
    {"instr_id": "2_3_0", "trajectory": [step("b0"), step("b1")], "predObjId": None},
]


def run_reverie(folder, opts):
    split, preds, conn = _p(folder, "REVERIE_val.json"), _p(folder, "preds.json"), _p(folder, "connectivity")
    objects = _p(folder, "BBox.json") if REVERIE_TARGET.opt(opts, "objects") == "file" else _p(folder, "BBox")
    attempt(ds.load_reverie, split)
    attempt(ds.load_objects, objects)
    attempt(ds.load_reverie_predictions, preds)
    bench = attempt(ds.open, "reverie", split=split, connectivity=conn, objects=objects)
    _match_all(bench, preds, REVERIE_TARGET.opt(opts, "convention"))


REVERIE_TARGET = Target(
    "reverie",
    {
        "REVERIE_val.json": _json_bytes(REVERIE_SPLIT),
        "preds.json": _json_bytes(REVERIE_PREDS),
        "BBox.json": _json_bytes(REVERIE_BOXES),
        **{f"BBox/{k}.json": _json_bytes(v) for k, v in REVERIE_BOXES.items()},
        **CONN,
    },
    run_reverie,
    seeds=[
        {},
        {"opts": {"objects": "folder", "convention": "duet"}},
        {
            "opts": {"convention": "paper"},
            "preds.json": [{k: v for k, v in p.items() if k not in ("predObjId", "pred_objid")} for p in REVERIE_PREDS],
        },
    ],
    pattern=r"(connectivity/[A-Za-z0-9]+_connectivity|BBox/[A-Za-z0-9]+_[A-Za-z0-9]+)\.json",
    opts={"convention": ["reverie", "duet", "paper"], "objects": ["file", "folder"]},
)

# --- NDH -------------------------------------------------------------------------------------

NDH_SPLIT = [
    {
        "inst_idx": 5,
        "scan": "scanA",
        "target": "lamp",
        "start_pano": {"pano": "a0", "heading": 0.1, "elevation": 0.0},
        "nav_history": ["a0"],
        "dialog_history": [{"nav_idx": 0, "role": "navigator", "message": "where?"}],
        "end_panos": ["a3", "a2"],
        "planner_path": ["a0", "a1", "a2"],
        "player_path": ["a0", "a1", "a2", "a3"],
    },
    {
        "inst_idx": 6,
        "scan": "scanB",
        "end_panos": ["b2"],
        "planner_path": ["b0", "b1"],
        "player_path": ["b0", "b1", "b2"],
    },
]
NDH_PREDS = [
    {"inst_idx": 5, "trajectory": [step("a0"), step("a1"), step("a1"), step("a2")]},
    {"inst_idx": "6", "trajectory": ["b0", "b1", "b2"]},
]


def run_ndh(folder, opts):
    split, preds, conn = _p(folder, "NDH_val.json"), _p(folder, "preds.json"), _p(folder, "connectivity")
    attempt(ds.load_ndh, split)
    attempt(ds.load_ndh_predictions, preds, duplicates=NDH_TARGET.opt(opts, "duplicates"))
    bench = attempt(ds.open, "ndh", split=split, connectivity=conn, goal=NDH_TARGET.opt(opts, "goal"))
    _match_all(bench, preds, NDH_TARGET.opt(opts, "convention"))


NDH_TARGET = Target(
    "ndh",
    {"NDH_val.json": _json_bytes(NDH_SPLIT), "preds.json": _json_bytes(NDH_PREDS), **CONN},
    run_ndh,
    seeds=[{}, {"opts": {"goal": "trusted", "convention": "paper", "duplicates": "first"}}],
    pattern=r"connectivity/[A-Za-z0-9]+_connectivity\.json",
    opts={"convention": ["ndh", "paper"], "goal": ["planner", "trusted"], "duplicates": ["error", "first"]},
)

# --- R2R-CE and RxR-CE -----------------------------------------------------------------------

CE_EPISODES = {
    "episodes": [
        {
            "episode_id": 1,
            "trajectory_id": 4,
            "scene_id": "mp3d/scanA/scanA.glb",
            "start_position": [0.0, 0.0, 0.0],
            "reference_path": [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [2.0, 0.0, 0.5]],
            "instruction": {"instruction_id": 11, "instruction_text": "go", "language": "en-US"},
            "info": {"geodesic_distance": 2.1},
            "goals": [{"position": [2.0, 0.0, 0.5], "radius": 3.0}],
        },
        {
            "episode_id": "2",
            "trajectory_id": 4,
            "scene_id": "mp3d/scanB/scanB.glb",
            "reference_path": [[0.0, 1.0, 0.0], [0.0, 1.0, 1.0]],
            "instruction": {"instruction_id": "1", "instruction_text": "turn", "language": "hi-IN"},
        },
    ]
}
CE_GT = {
    "1": {
        "locations": [[0.0, 0.0, 0.0], [0.5, 0.0, 0.0], [1.0, 0.0, 0.0], [2.0, 0.0, 0.5]],
        "actions": [1, 1, 2, 0],
        "forward_steps": 2,
    },
    "2": {"locations": [[0.0, 1.0, 0.0], [0.0, 1.0, 1.0]], "actions": [1, 0], "forward_steps": 1},
}
CE_PREDS_R2R = {
    "1": [{"position": [0.0, 0.0, 0.0], "heading": 0.0, "stop": False}, {"position": [1.5, 0.0, 0.2], "stop": True}],
    "2": [[0.0, 1.0, 0.0], [0.0, 1.0, 0.0], [0.1, 1.0, 0.9]],
}
CE_PREDS_RXR = [
    {"instruction_id": 11, "path": [[0.0, 0.0, 0.0], [2.0, 0.0, 0.4]]},
    {"instruction_id": 1, "path": [[0.0, 1.0, 0.0]]},
]
CE_PREDS_LIST = [
    {"episode_id": 1, "path": [[0.0, 0.0, 0.0], [2.0, 0.0, 0.4]]},
    {"episode_id": "2", "path": [[0.0, 1.0, 0.0]]},
]


def run_r2rce(folder, opts):
    eps, gt = _p(folder, "val_unseen.json.gz"), _p(folder, "val_unseen_gt.json.gz")
    preds = _p(folder, R2RCE_TARGET.opt(opts, "preds"))
    attempt(ds.load_vlnce_episodes, eps)
    attempt(ds.load_vlnce_gt, gt)
    attempt(ds.load_vlnce_predictions, preds)
    bench = attempt(ds.open, "r2r-ce", vlnce_episodes=eps, vlnce_gt=gt)
    _match_all(bench, preds, R2RCE_TARGET.opt(opts, "convention"), strict_too=False)
    if bench is not None and opts.get("baseline") is True:
        attempt(bench.baseline, 3, seed=1, workers=1, progress=False)


_CE_SLOTS = {
    "val_unseen.json.gz": _json_bytes(CE_EPISODES),
    "val_unseen_gt.json.gz": _json_bytes(CE_GT),
    "preds.json": _json_bytes(CE_PREDS_R2R),
    "preds.jsonl": _jsonl_bytes(CE_PREDS_RXR),
    "preds_list.json": _json_bytes(CE_PREDS_LIST),
}
R2RCE_TARGET = Target(
    "r2rce",
    _CE_SLOTS,
    run_r2rce,
    seeds=[{}, {"opts": {"preds": "preds.jsonl", "convention": "paper"}}, {"opts": {"preds": "preds_list.json"}}],
    opts={"convention": ["vlnce", "paper"], "preds": ["preds.json", "preds.jsonl", "preds_list.json"]},
    text_formats={"preds.jsonl": "jsonl"},
)


def run_rxrce(folder, opts):
    eps, gt = _p(folder, "val_unseen.json.gz"), _p(folder, "val_unseen_gt.json.gz")
    preds = _p(folder, RXRCE_TARGET.opt(opts, "preds"))
    attempt(ds.load_rxrce_episodes, eps)
    languages = RXRCE_TARGET.opt(opts, "languages")
    bench = attempt(ds.open, "rxr-ce", rxrce_episodes=eps, rxrce_gt=gt, languages=languages)
    matched = _match_all(bench, preds, RXRCE_TARGET.opt(opts, "convention"), strict_too=False)
    if matched is not None:
        bench.cluster_of(matched.ids)


RXRCE_TARGET = Target(
    "rxrce",
    _CE_SLOTS,
    run_rxrce,
    seeds=[
        {},
        {"opts": {"preds": "preds.jsonl", "languages": "en", "clusters": True}},
        {"opts": {"languages": "hi-IN", "preds": "preds_list.json"}},
    ],
    opts={
        "convention": ["vlnce", "paper"],
        "preds": ["preds.json", "preds.jsonl", "preds_list.json"],
        "languages": ["all", "en", "en-US", "en-IN", "hi-IN", "te-IN"],
    },
    text_formats={"preds.jsonl": "jsonl"},
)

# --- positions -------------------------------------------------------------------------------

POS_REFS = [
    {
        "episode_id": "e1",
        "path": [[0.0, 0.0, 0.0], [1.0, 1.0, 0.0], [2.0, 1.0, 0.0]],
        "goal": [2.0, 1.5, 0.0],
        "geodesic_distance": 2.5,
        "path_id": "p1",
        "scene": "s",
    },
    {"episode_id": 2, "path": [[5.0, 5.0, 1.0], [6.0, 5.0, 1.0]], "geodesic_distance": "Infinity", "path_id": "p1"},
]
POS_PREDS = {"e1": [[0.0, 0.0, 0.0], [2.0, 1.2, 0.0]], "2": {"path": [[5.0, 5.0, 1.0]], "distance_to_goal": 1.0}}


def run_positions(folder, opts):
    refs = _p(folder, POS_TARGET.opt(opts, "refs"))
    preds = _p(folder, "preds.json")
    attempt(ds.load_positions, refs)
    attempt(ds.load_positions, preds)
    distance, dims = POS_TARGET.opt(opts, "distance"), POS_TARGET.opt(opts, "dims")
    bench = attempt(ds.open, "positions", references=refs, distance=distance, dims=dims)
    _match_all(bench, preds, POS_TARGET.opt(opts, "convention"), strict_too=False)
    if bench is not None:
        bench.cluster_of(bench.ids)
        if opts.get("baseline") is True:
            attempt(bench.baseline, 3, seed=1, workers=1, progress=False)


POS_TARGET = Target(
    "positions",
    {
        "refs.jsonl": _jsonl_bytes(POS_REFS).replace(b'"Infinity"', b"Infinity"),
        "refs.json": _json_bytes(POS_REFS[:1]),
        "preds.json": _json_bytes(POS_PREDS),
    },
    run_positions,
    seeds=[
        {},
        {"opts": {"distance": "geodesic", "dims": "xz", "convention": "vlnce"}},
        {"opts": {"refs": "refs.json", "dims": "xy"}},
    ],
    opts={
        "refs": ["refs.jsonl", "refs.json"],
        "distance": ["euclidean", "geodesic"],
        "dims": ["all", "xy", "xz", "yz"],
        "convention": ["r2r", "r4r", "vlnce"],
    },
    text_formats={"refs.jsonl": "jsonl"},
)

# --- HA-VLN ----------------------------------------------------------------------------------

HAVLN = {"1": 0, "2": 3, "17": 1.0, "4": 2}


def run_havln(folder, opts):
    table = ds.load_havln_collisions(_p(folder, "collision_num_val_unseen.json"))
    if not table:
        return
    ids = list(table)
    base = navdtw.humanaware.baseline_for(ids, table)  # every count the reader returns is an int64
    n = len(ids)
    result = navdtw.humanaware.evaluate(np.ones(n, dtype=bool), [table[i] for i in ids], base, np.zeros(n))
    assert (result.adjusted_collision_count == 0).all()
    result.summary()


HAVLN_TARGET = Target(
    "havln",
    {"collision_num_val_unseen.json": _json_bytes(HAVLN)},
    run_havln,
    seeds=[{}, {"collision_num_val_unseen.json": {"a": 0.0, "b": 12}}],
)

# --- connectivity ----------------------------------------------------------------------------


def run_connectivity(folder, opts):
    conn = _p(folder, "connectivity")
    graphs = attempt(ds.load_connectivity, conn)
    for scan in graphs or ():
        g = graphs[scan]
        d = g.distances
        assert len(g.csr[0]) == g.num_nodes + 1
        if g.num_nodes > 1 and np.isfinite(d[0, -1]):  # an unreachable node is the API's ValueError
            g.shortest_path(0, g.num_nodes - 1)
            g.path_length(list(range(g.num_nodes)))
        assert d.shape == (g.num_nodes, g.num_nodes)
    for name in sorted(os.listdir(conn)):
        attempt(ds.matterport.load_navgraph, os.path.join(conn, name))


CONN_TARGET = Target(
    "connectivity",
    dict(CONN),
    run_connectivity,
    seeds=[{}, {"connectivity/scanB_connectivity.json": SCAN_B}],
    pattern=r"connectivity/[A-Za-z0-9]+_connectivity\.json",
)

# --- suite TOML ------------------------------------------------------------------------------

SUITE = """\
title = "fuzz suite"
metrics = ["sr", "spl", "ndtw"]
latex = "compact"

[datasets.r2r_val]
dataset = "r2r"
split = "R2R_val.json"
connectivity = "connectivity"
convention = "r2r"
threshold = 3.0

[datasets.ce]
dataset = "r2r-ce"
vlnce_episodes = "val_unseen.json.gz"
vlnce_gt = "val_unseen_gt.json.gz"

[datasets.tables]
dataset = "results"
split = "R2R_val.json"
dataset_kind = "r2r"
columns = {"Oracle SR" = "osr", "steps" = "ignore", "TCR" = "-"}
percent = ["spl"]
select = {agent = "mine"}

[agents.mine]
r2r_val = "preds.json"
ce = ["runs/ce_seed1.json", "runs/ce_seed2.json"]
tables = "runs/table*.jsonl"

[agents.mine.reported.r2r_val]
sr = 0.5
spl = "51.2%"
ne = 4.25

[agents.other]
r2r_val = "${FUZZ_RUNS}/preds.json"

[settings]
resamples = 200
seed = 3
confidence = 0.9
method = "percentile"
alpha = 0.1
baseline_walks = 0
cluster = "episode"
workers = 1
episodes = "shared"
min_units = 4
"""


SUITE_POSITIONS = '[datasets.p]\ndataset = "positions"\nreferences = "preds.json"\n[agents.a]\np = "preds.json"\n'


def run_suite(folder, opts):
    os.environ["FUZZ_RUNS"] = folder
    navdtw.suite.config.load_suite(_p(folder, "suite.toml"))


_EMPTY = b"x"
SUITE_TARGET = Target(
    "suite",
    {
        "suite.toml": SUITE.encode(),
        "R2R_val.json": _EMPTY,
        "preds.json": _EMPTY,
        "val_unseen.json.gz": _EMPTY,
        "val_unseen_gt.json.gz": _EMPTY,
        "runs/ce_seed1.json": _EMPTY,
        "runs/ce_seed2.json": _EMPTY,
        "runs/table1.jsonl": _EMPTY,
        "runs/table2.jsonl": _EMPTY,
        "connectivity/scanA_connectivity.json": _EMPTY,
    },
    run_suite,
    seeds=[
        {},
        {"suite.toml": SUITE_POSITIONS},
    ],
    text_formats={"suite.toml": "toml"},
)

# --- results tables --------------------------------------------------------------------------

RESULTS_ROWS = [
    {
        "episode_id": 1,
        "success": 1.0,
        "spl": 0.8,
        "ndtw": 0.71,
        "distance_to_goal": 1.2,
        "Oracle SR": 1,
        "collisions": {"count": 2},
        "language": "en-US",
        "path_id": "1",
        "scene_id": "mp3d/scanA/scanA.glb",
        "agent": "mine",
    },
    {
        "episode_id": "2",
        "success": 0.0,
        "spl": None,
        "ndtw": 0.2,
        "distance_to_goal": "Infinity",
        "Oracle SR": 0,
        "collisions": {"count": 0},
        "language": "hi-IN",
        "path_id": "1",
        "agent": "mine",
    },
    {
        "episode_id": 3,
        "success": 0,
        "spl": 0.0,
        "ndtw": 0.5,
        "distance_to_goal": 7.5,
        "Oracle SR": 1,
        "steps_taken": 40,
        "collisions": {"count": 1},
        "path_id": 2,
        "agent": "mine",
    },
]
RESULTS_CSV = (
    "instr_id,SR,SPL,nDTW,NE,TCR,CR,instruction\n"
    "1_0,1,0.9,0.8,0.5,0,0,walk ahead\n"
    '1_1,0,0,0.4,5.5,2,1,"go, then stop"\n'
    "1_2,false,NaN,0.3,inf,0,0,x\n"
)


def _results_json(rows, form):
    text = json.dumps(rows)
    return text.replace('"Infinity"', "Infinity").encode() if form else text.encode()


def run_results(folder, opts):
    from navdtw.datasets import results as res

    fmt = RESULTS_TARGET.opt(opts, "format")
    path = _p(folder, fmt)
    if fmt == "table.parquet":
        path = _parquet(folder)
        if path is None:
            return
    kwargs = {}
    for key, parse in (("columns", res.parse_columns), ("percent", res.parse_percent), ("select", res.parse_select)):
        if key in opts:
            try:
                parse(opts[key])
            except (ValueError, TypeError):
                continue  # an option the caller would have been told about: not the file's fault
            kwargs[key] = opts[key]
    for key in ("id_column", "path_column"):
        if isinstance(opts.get(key), str):
            kwargs[key] = opts[key]
    table = attempt(ds.load_results, path, **kwargs)
    if table is not None:
        table.evaluate().summary()
    if RESULTS_TARGET.opt(opts, "split") == "r2r":
        bench = attempt(ds.open, "results", split=_p(folder, "R2R_val.json"), dataset_kind="r2r", **kwargs)
        matched = None if bench is None else attempt(bench.match, path)
        if matched is not None:
            bench.cluster_of(matched.ids)


def _parquet(folder):
    """table.parquet from the JSON rows of ``table_rows.json`` (None when pyarrow cannot make a
    table of them, or is not installed); a bundle whose ``table.parquet`` is Parquet already
    (``PAR1``) is read as it is."""
    path = _p(folder, "table.parquet")
    with open(path, "rb") as f:
        if f.read(4) == b"PAR1":
            return path
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        return None
    try:
        with open(_p(folder, "table_rows.json"), "rb") as f:
            rows = json.loads(f.read())
        table = pa.Table.from_pylist(rows)
        sink = io.BytesIO()
        pq.write_table(table, sink)
    except Exception:  # the harness's conversion, not the reader: any failure skips the input
        return None
    with open(path, "wb") as f:
        f.write(sink.getvalue())
    return path


RESULTS_TARGET = Target(
    "results",
    {
        "table.jsonl": _jsonl_bytes(RESULTS_ROWS).replace(b'"Infinity"', b"Infinity"),
        "table.json": _results_json(RESULTS_ROWS, True),
        "keyed.json": _json_bytes(
            {str(r["episode_id"]): {k: v for k, v in r.items() if k != "episode_id"} for r in RESULTS_ROWS}
        ),
        "table.csv": RESULTS_CSV.encode(),
        "table.tsv": RESULTS_CSV.replace(",", "\t").encode(),
        "table_rows.json": _json_bytes([{k: v for k, v in r.items() if k != "collisions"} for r in RESULTS_ROWS]),
        "table.parquet": b"from table_rows.json",
        "R2R_val.json": _json_bytes(R2R_SPLIT),
    },
    run_results,
    seeds=[
        {},
        {"opts": {"format": "table.json", "columns": {"Oracle SR": "osr", "collisions.count": "-"}}},
        {"opts": {"format": "keyed.json", "select": {"agent": "mine"}}},
        {"opts": {"format": "table.csv", "split": "r2r"}},
        {"opts": {"format": "table.tsv", "id_column": "instr_id", "columns": {"instruction": "ignore"}}},
        {"opts": {"format": "table.parquet", "path_column": "path_id"}},
    ],
    opts={
        "format": ["table.jsonl", "table.json", "keyed.json", "table.csv", "table.tsv", "table.parquet"],
        "split": [None, "r2r"],
    },
    text_formats={"table.jsonl": "jsonl", "table.csv": "csv", "table.tsv": "tsv"},
)

TARGETS: dict[str, Target] = {
    t.name: t
    for t in (
        R2R_TARGET,
        RXR_TARGET,
        REVERIE_TARGET,
        NDH_TARGET,
        R2RCE_TARGET,
        RXRCE_TARGET,
        POS_TARGET,
        HAVLN_TARGET,
        CONN_TARGET,
        SUITE_TARGET,
        RESULTS_TARGET,
    )
}


# --------------------------------------------------------------------------------------------
# structure-aware mutations
# --------------------------------------------------------------------------------------------

_DEEP = "\x00deep\x00"
_DIGITS = "\x00digits\x00"
INTERESTING = [
    None,
    True,
    False,
    0,
    1,
    -1,
    2,
    3,
    255,
    2**31,
    2**32,
    2**53 + 1,
    2**63 - 1,
    2**63,
    2**64,
    -(2**63) - 1,
    10**400,  # beyond float's range, within int()'s 4300 digits
    -(10**400),
    0.0,
    -0.0,
    0.5,
    1.5,
    -2.5,
    1e-300,
    1e300,
    -1e300,
    1.8e19,
    3.0e38,
    4e38,
    float("nan"),
    float("inf"),
    float("-inf"),
    "",
    " ",
    "x",
    "0",
    "12",
    "1_0",
    "-1",
    "1e3",
    "NaN",
    "inf",
    "a0",
    "scanA",
    "scanA_a2",
    "a\nb",
    "\t",
    "\x00",
    "\u2028",
    "é",
    "=cmd",
    "${HOME}",
    "../x",
    "*",
    "**",
    "[",
    "[]",
    "{}",
    [],
    {},
    [[]],
    [0, 0, 0],
    [1e300, 0, 0],
    [[0, 0, 0]],
    [[0, 0], [1, 1, 1]],
    ["a0"],
    [None],
    {"": None},
    _DEEP,
    _DIGITS,
]
KEYS = [
    "",
    "path_id",
    "path",
    "scan",
    "instructions",
    "num_instructions",
    "instr_id",
    "trajectory",
    "id",
    "objId",
    "predObjId",
    "pred_objid",
    "inst_idx",
    "end_panos",
    "planner_path",
    "player_path",
    "start_pano",
    "episode_id",
    "instruction_id",
    "instruction",
    "language",
    "reference_path",
    "locations",
    "actions",
    "forward_steps",
    "position",
    "goal",
    "geodesic_distance",
    "distance_to_goal",
    "episodes",
    "info",
    "visible_pos",
    "image_id",
    "pose",
    "included",
    "unobstructed",
    "distance",
    "heading",
    "dataset",
    "reported",
    "settings",
    "agents",
    "datasets",
    "metrics",
    "latex",
    "title",
    "split",
    "connectivity",
    "convention",
    "threshold",
    "success",
    "spl",
    "ndtw",
    "sr",
    "ne",
    "scene_id",
    "trajectory_id",
    "agent",
    "format",
    "preds",
    "objects",
    "columns",
    "percent",
    "select",
    "id_column",
    "path_column",
    "kind",
    "goal",
    "duplicates",
    "languages",
    "dims",
]


def _nodes(tree, path=()):
    """Every (path, node) of a JSON tree, depth first."""
    yield path, tree
    if isinstance(tree, dict):
        for k, v in tree.items():
            yield from _nodes(v, (*path, k))
    elif isinstance(tree, list):
        for k, v in enumerate(tree):
            yield from _nodes(v, (*path, k))


def _set(tree, path, value):
    if not path:
        return value
    parent = tree
    for p in path[:-1]:
        parent = parent[p]
    parent[path[-1]] = value
    return tree


def _get(tree, path):
    for p in path:
        tree = tree[p]
    return tree


def _tweak_number(x, rng):
    if isinstance(x, bool):
        return not x
    ops = [
        lambda v: v + 1,
        lambda v: v - 1,
        lambda v: -v,
        lambda v: v * 10 ** rng.randint(1, 30),
        lambda v: float(v),
        lambda v: v + 0.5,
        lambda v: str(v),
        lambda v: int(v) if math.isfinite(v) else v,
        lambda v: v * 1e200,
    ]
    try:
        return rng.choice(ops)(x)
    except (OverflowError, ValueError):
        return 2**64


def _tweak_string(s, rng):
    ops = [
        lambda v: "",
        lambda v: v + v,
        lambda v: v[:-1],
        lambda v: v + rng.choice(["_0", "_9", "\n", "\x7f", " ", "é", "0"]),
        lambda v: v.upper(),
        lambda v: rng.choice(KEYS),
        lambda v: " " + v,
        lambda v: v.replace("a", "b"),
        lambda v: int(v) if v.isdigit() else 7,
    ]
    return rng.choice(ops)(s)


def mutate_tree(tree, rng: random.Random, keys=()):
    """One structural change of a parsed JSON / TOML value (a new tree; the old one is kept)."""
    tree = copy.deepcopy(tree)
    nodes = list(_nodes(tree))
    path, node = rng.choice(nodes)
    r = rng.random()
    if r < 0.25:
        return _set(tree, path, copy.deepcopy(rng.choice(INTERESTING)))
    if r < 0.35:
        return _set(tree, path, copy.deepcopy(rng.choice(nodes)[1]))  # another node of the tree
    if r < 0.5 and path:
        parent = _get(tree, path[:-1])
        if isinstance(parent, dict):
            del parent[path[-1]]
        else:
            del parent[path[-1]]
        return tree
    if r < 0.6 and isinstance(node, list) and node:
        k = rng.randrange(len(node))
        how = rng.random()
        if how < 0.4:
            node.insert(rng.randrange(len(node) + 1), copy.deepcopy(node[k]))
        elif how < 0.7:
            j = rng.randrange(len(node))
            node[k], node[j] = node[j], node[k]
        else:
            node[:] = node[:k]
        return tree
    if r < 0.7 and isinstance(node, dict) and node:
        k = rng.choice(list(node))
        new = rng.choice([*KEYS, *keys]) if rng.random() < 0.7 else _tweak_string(str(k), rng)
        if isinstance(new, str):
            node[new] = node.pop(k)
        return tree
    if r < 0.75 and isinstance(node, dict):
        node[rng.choice([*KEYS, *keys])] = copy.deepcopy(rng.choice(INTERESTING))
        return tree
    if r < 0.8:
        return _set(tree, path, [node] if rng.random() < 0.5 else {"x": node})
    if isinstance(node, (int, float)):
        return _set(tree, path, _tweak_number(node, rng))
    if isinstance(node, str):
        return _set(tree, path, _tweak_string(node, rng))
    return _set(tree, path, copy.deepcopy(rng.choice(INTERESTING)))


def _dump_json(tree, rng) -> str:
    text = json.dumps(tree, indent=rng.choice([None, None, 1]), ensure_ascii=rng.random() < 0.8)
    if _DEEP in text or json.dumps(_DEEP) in text:
        depth = rng.choice([50, 1000, 100_000])
        text = text.replace(json.dumps(_DEEP), "[" * depth + "]" * depth)
    if json.dumps(_DIGITS) in text:
        text = text.replace(json.dumps(_DIGITS), "1" + "0" * rng.choice([20, 400, 5000]))
    return text


def _toml_key(k) -> str:
    return json.dumps(str(k))


def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v) if abs(v) < 2**70 else "1" + "0" * 30
    if isinstance(v, float):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf") if math.isinf(v) else repr(v)
    if isinstance(v, str):
        if v == _DEEP:
            return "[" * 2000 + "]" * 2000
        if v == _DIGITS:
            return "1" + "0" * 5000
        return json.dumps(v)
    if v is None:
        return '""'
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{_toml_key(k)} = {_toml_value(x)}" for k, x in v.items()) + "}"
    return json.dumps(str(v))  # dates and times


def dump_toml(tree: dict, prefix=()) -> str:
    """A TOML document of ``tree``: scalars and lists inline, tables as ``[a.b]`` sections."""
    lines, tables = [], []
    for k, v in tree.items():
        if isinstance(v, dict) and v and all(isinstance(x, (dict, str, int, float, list, bool)) for x in v.values()):
            tables.append((k, v))
        else:
            lines.append(f"{_toml_key(k)} = {_toml_value(v)}")
    out = ""
    if prefix and (lines or not tables):
        out += "[" + ".".join(_toml_key(p) for p in prefix) + "]\n"
    out += "".join(line + "\n" for line in lines)
    for k, v in tables:
        out += "\n" + dump_toml(v, (*prefix, k))
    return out


def _parse(fmt: str, content: bytes):
    text = content.decode("utf-8")
    if fmt == "jsonl":
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    if fmt == "toml":
        import tomllib

        return tomllib.loads(text)
    if fmt in ("csv", "tsv"):
        return list(csv.reader(io.StringIO(text), delimiter="\t" if fmt == "tsv" else ","))
    return json.loads(text)


def _serialise(fmt: str, tree, rng) -> bytes:
    if fmt == "jsonl":
        rows = tree if isinstance(tree, list) else [tree]
        return "\n".join(_dump_json(r, rng) for r in rows).encode()
    if fmt == "toml":
        return dump_toml(tree if isinstance(tree, dict) else {"x": tree}).encode()
    if fmt in ("csv", "tsv"):
        out = io.StringIO()
        w = csv.writer(out, delimiter="\t" if fmt == "tsv" else ",", lineterminator=rng.choice(["\n", "\r\n"]))
        for row in tree if isinstance(tree, list) else [[tree]]:
            w.writerow(row if isinstance(row, list) else [row])
        return out.getvalue().encode()
    return _dump_json(tree, rng).encode()


CSV_CELLS = [
    "",
    "nan",
    "NaN",
    "inf",
    "-inf",
    "-1",
    "1e300",
    "101",
    "55.5",
    "abc",
    "1_0",
    "true",
    "null",
    '"',
    "=1+1",
    "1" * 40,
    "\n",
]


def mutate_csv(rows: list, rng: random.Random) -> list:
    rows = [list(r) for r in rows] or [[]]
    r = rng.random()
    i = rng.randrange(len(rows))
    if r < 0.5 and rows[i]:
        rows[i][rng.randrange(len(rows[i]))] = rng.choice(CSV_CELLS + [c for row in rows for c in row])
    elif r < 0.65:
        rows.insert(rng.randrange(len(rows) + 1), list(rows[i]))
    elif r < 0.75 and len(rows) > 1:
        del rows[i]
    elif r < 0.85:
        col = rng.randrange(max(len(rows[0]), 1))
        for row in rows:
            if col < len(row):
                if rng.random() < 0.5:
                    del row[col]
                else:
                    row.insert(col, row[col])
    else:
        rows[i].append(rng.choice(CSV_CELLS))
    return rows


def _keys_of(target: Target) -> list[str]:
    keys = set()
    for content in target.slots.values():
        with_keys = re.findall(rb'"([A-Za-z_][A-Za-z0-9_. ]{0,30})"\s*:', content or b"")
        keys.update(k.decode() for k in with_keys)
    return sorted(keys)


def _format(target: Target, name: str, content: bytes) -> str:
    if name in target.text_formats:
        return target.text_formats[name]
    if name == "opts" or name.endswith((".json", ".json.gz")):
        return "json"
    return ""


def _strings(tree):
    """Every string of a parsed tree: dict keys and string values."""
    if isinstance(tree, dict):
        for k, v in tree.items():
            yield str(k)
            yield from _strings(v)
    elif isinstance(tree, list):
        for v in tree:
            yield from _strings(v)
    elif isinstance(tree, str):
        yield tree


def _replace_in(tree, old: str, new: str):
    """``tree`` with ``old`` replaced by ``new`` inside every key and string value."""
    if isinstance(tree, dict):
        return {(k.replace(old, new) if isinstance(k, str) else k): _replace_in(v, old, new) for k, v in tree.items()}
    if isinstance(tree, list):
        return [_replace_in(v, old, new) for v in tree]
    if isinstance(tree, str):
        return tree.replace(old, new)
    return tree


#: what :func:`rename_everywhere` puts into a name: a message must still be one line
BREAKS = ["\n", "\r", "\r\n", "\n\n"]


def rename_everywhere(target: Target, files: dict[str, bytes], rng: random.Random) -> dict[str, bytes] | None:
    """One name (an id, a scan, a column, a key, an option's value: any string of at least two
    characters in one of the bundle's structured files) given a line break, the same in every
    file of the bundle and in its options, so that the files still agree and the input takes the
    path it took before, now with a line break in every name a message might show. Coverage does
    not change, so libFuzzer would not keep such an input for a later mutation to reach an error
    with: this mutation gives every corpus input (each reaching some error) its line breaks in one
    step. None when the bundle has no such name."""
    trees = {}
    for name in sorted(set(files) | set(target.slots) | {"opts"}):
        content = files.get(name, target.slots.get(name))
        fmt = _format(target, name, content or b"")
        if content is None or not fmt:
            continue
        with contextlib.suppress(ValueError, TypeError, RecursionError, UnicodeError, csv.Error):
            trees[name] = (fmt, _parse(fmt, content))
    names = sorted({s for _, tree in trees.values() for s in _strings(tree) if len(s) >= 2})
    if not names:
        return None
    old = rng.choice(names)
    brk = rng.choice(BREAKS)
    where = rng.random()
    new = old + brk if where < 0.4 else brk + old if where < 0.6 else old[:1] + brk + old[1:]
    out = dict(files)
    for name, (fmt, tree) in trees.items():
        if any(old in s for s in _strings(tree)):
            out[name] = _serialise(fmt, _replace_in(tree, old, new), rng)
    return out


def mutate(target: Target, data: bytes, max_size: int, seed: int) -> bytes:
    """The custom mutator: structural (one file's tree), per file bytes or whole-bundle bytes, a
    name with a line break in every file (:func:`rename_everywhere`)."""
    rng = random.Random(seed)
    files = decode(data)
    if not files:
        files = {name: content for name, content in target.slots.items() if content is not None}
    choice = rng.random()
    if choice < 0.15 or atheris is None:
        return atheris.Mutate(data, max_size) if atheris is not None else data
    if choice > 0.9:
        renamed = rename_everywhere(target, files, rng)
        out = encode(renamed) if renamed is not None else b""
        if renamed is not None and len(out) <= max_size:
            return out
    name = rng.choice(sorted(set(files) | set(target.slots) | {"opts"}))
    content = files.get(name, target.slots.get(name) or b"{}")
    fmt = _format(target, name, content)
    if name == "opts" and rng.random() < 0.5:  # options: pick one of the target's values
        opts = {}
        with_opts = decode(data).get("opts")
        with contextlib.suppress(ValueError, RecursionError):
            opts = json.loads(with_opts) if with_opts else {}
        if isinstance(opts, dict) and target.opts:
            key = rng.choice(sorted(target.opts))
            opts[key] = rng.choice(target.opts[key])
            files["opts"] = json.dumps(opts).encode()
            out = encode(files)
            return out if len(out) <= max_size else atheris.Mutate(data, max_size)
    if choice < 0.4 or not fmt:
        new = atheris.Mutate(content, max(1, max_size - (len(data) - len(content))))
    else:
        try:
            tree = _parse(fmt, content)
            if fmt in ("csv", "tsv"):
                tree = mutate_csv(tree, rng)
            else:
                for _ in range(1 + (rng.random() < 0.3) * rng.randint(1, 3)):
                    tree = mutate_tree(tree, rng, _keys_of(target))
            new = _serialise(fmt, tree, rng)
        except (ValueError, TypeError, RecursionError, KeyError, IndexError, OverflowError, UnicodeError, csv.Error):
            new = atheris.Mutate(content, max(1, max_size - (len(data) - len(content))))
    files[name] = new
    out = encode(files)
    if len(out) > max_size:
        return atheris.Mutate(data, max_size)
    return out


def crossover(target: Target, data1: bytes, data2: bytes, max_out: int, seed: int) -> bytes:
    """Takes each file from one of the two bundles."""
    rng = random.Random(seed)
    a, b = decode(data1), decode(data2)
    out = {}
    for name in sorted(set(a) | set(b)):
        pick = a if (name in a and (name not in b or rng.random() < 0.5)) else b
        out[name] = pick[name]
    result = encode(out)
    return result if len(result) <= max_out else data1[:max_out]


# --------------------------------------------------------------------------------------------
# seeds, replay, main
# --------------------------------------------------------------------------------------------


def seed_bundles(target: Target) -> list[bytes]:
    out = []
    for seed in target.seeds:
        files = {}
        for name, value in seed.items():
            if isinstance(value, bytes):
                files[name] = value
            elif isinstance(value, str):
                files[name] = value.encode()
            else:
                fmt = target.text_formats.get(name, "json")
                files[name] = _jsonl_bytes(value) if fmt == "jsonl" else _json_bytes(value)
        if not files:  # the defaults, written out (so the corpus shows every file)
            files = {name: content for name, content in target.slots.items() if content is not None}
        out.append(encode(files))
    return out


def write_seeds(names) -> int:
    for name in names:
        folder = os.path.join(SEEDS, name)
        if os.path.isdir(folder):
            shutil.rmtree(folder)
        os.makedirs(folder)
        for k, bundle in enumerate(seed_bundles(TARGETS[name])):
            with open(os.path.join(folder, f"seed-{k:02d}"), "wb") as f:
                f.write(bundle)
        print(f"{name}: {len(TARGETS[name].seeds)} seeds in {os.path.relpath(folder)}")
    return 0


def replay(target: Target, paths) -> int:
    """Runs every input file (or every file of a folder) under the oracle; the first finding
    stops with its file name and the traceback."""
    files = []
    for p in paths:
        if os.path.isdir(p):
            files += [os.path.join(p, f) for f in sorted(os.listdir(p)) if not f.startswith(".")]
        else:
            files.append(p)
    for f in files:
        with open(f, "rb") as fh:
            data = fh.read()
        try:
            one_input(target, data)  # NAVDTW_FUZZ_KEEP_GOING=DIR: findings saved, the replay goes on
        except BaseException:
            sys.stderr.write(f"finding: {f}\n")
            raise
    print(f"{target.name}: replayed {len(files)} inputs: ok")
    return 0


def main(argv) -> int:
    args = list(argv[1:])
    names = list(TARGETS)
    if "--list" in args:
        print("\n".join(names))
        return 0
    if "--write-seeds" in args:
        return write_seeds([a for a in args if a in TARGETS] or names)
    if "--target" not in args:
        sys.exit(
            f"usage: {argv[0]} --target NAME [--replay FILE|DIR ...] [libFuzzer args]; targets: {', '.join(names)}"
        )
    k = args.index("--target")
    name = args[k + 1]
    del args[k : k + 2]
    if name == "all" and args == ["--replay"]:  # every target's committed seeds
        return max(replay(TARGETS[n], [os.path.join(SEEDS, n)]) for n in names)
    if name not in TARGETS:
        sys.exit(f"unknown target {name!r}; targets: {', '.join(names)}")
    target = TARGETS[name]
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 1000))
    if "--replay" in args:
        args.remove("--replay")
        return replay(target, args)
    if atheris is None:
        sys.exit("atheris is not installed: pip install atheris (or use --replay)")
    atheris.Setup(
        [argv[0], *args],
        lambda data: one_input(target, data),
        custom_mutator=lambda data, max_size, seed: mutate(target, data, max_size, seed),
        custom_crossover=lambda d1, d2, max_out, seed: crossover(target, d1, d2, max_out, seed),
    )
    atheris.Fuzz()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
