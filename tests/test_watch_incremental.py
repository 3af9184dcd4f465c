"""navdtw watch reading results as they grow (issue 36, item 4): what was appended or added since
the last look is read on its own (navdtw.datasets.results.GrowingResults, shards.Listing,
_readers.Tail, _build.extend), and a watch on incremental reads gives exactly what a watch that
re-reads the run whole at every change gives: the values, the pending lines, the messages, the
decisions; a file truncated or rewritten is read whole again, never a wrong number."""

from __future__ import annotations

import json
import math
import random
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from navdtw.datasets.results import load_results
from navdtw.datasets.results._readers import Tail, read_appended
from navdtw.datasets.results._table import GrowingResults
from navdtw.datasets.results.shards import Listing, files_of
from navdtw.order import Order
from navdtw.watch import Follower, Watch

N = 30  # episodes of the order
KIND = ["results"]  # what the runs hold: results, or trajectories of the kind positions


def record(i, rng: random.Random, **more) -> dict:
    if KIND[0] == "positions":  # a trajectory: its end within 3 m of the reference's, or not
        out = {"episode_id": i, "path": [[0.0, 0.0], [5.0 + 4.0 * rng.random(), 1.0]]}
        out.update({k: ([[0.0, v]] if k in ("spl", "ndtw") else v) for k, v in more.items() if k != "success"})
        return out
    sr = float(rng.random() < 0.5)
    out = {"episode_id": i, "success": sr, "spl": rng.random() if sr else math.nan, "ndtw": rng.random()}
    out.update(more)
    return out


def line(rec: dict) -> bytes:
    return (json.dumps(rec) + "\n").encode()


class Run:
    """A run being written in one layout, by random steps."""

    def __init__(self, root: Path, layout: str, seed: int) -> None:
        self.root, self.layout, self.rng = root, layout, random.Random(seed)
        self.next = 0  # next episode of the order to write (mostly in order, some out of it)
        self.pending: dict[Path, bytes] = {}  # a file's rest, not yet written
        if layout == "jsonl":
            self.files = [root / "results.jsonl"]
            self.source = str(self.files[0])
        elif layout == "shards":
            self.files = [root / f"stats_ep_r{r}_w2.jsonl" for r in range(2)]
            self.source = str(self.files[0])
        elif layout == "glob":
            self.files = [root / f"progress_{r}.jsonl" for r in range(3)]
            self.source = str(root / "progress_*.jsonl")
        else:  # a folder of one file per episode (NaVid's stats_{id}.json, indent=4)
            (root / "log").mkdir()
            self.files = []
            self.source = str(root / "log")
        for f in self.files[:2] if layout != "glob" else self.files[:1]:
            f.write_bytes(b"")

    def ids(self, k: int) -> list[str]:
        out = []
        for _ in range(k):
            if self.rng.random() < 0.2 and self.next + 3 < N:  # finished out of order
                out.append(f"e{self.next + self.rng.randint(1, 3)}")
            else:
                out.append(f"e{self.next}")
                self.next += 1
        return out

    def write(self, recs: list[dict], partial: bool = False) -> None:
        if self.layout == "folder":
            for rec in recs:
                i = rec.get("episode_id", "x")
                f = self.root / "log" / f"stats_{i}.json"
                if KIND[0] == "positions":
                    text = json.dumps([rec], indent=4).encode()
                else:
                    text = json.dumps({"id": i, **{k: v for k, v in rec.items() if k != "episode_id"}}, indent=4)
                    text = text.encode()
                if partial:
                    cut = self.rng.randint(1, len(text) - 1)
                    f.write_bytes(text[:cut])
                    self.pending[f] = text[cut:]
                else:
                    f.write_bytes(text)
            return
        f = self.rng.choice(self.files)
        data = b"".join(line(r) for r in recs)
        if partial:
            cut = self.rng.randint(1, len(data) - 1)
            data, self.pending[f] = data[:cut], data[cut:] + self.pending.get(f, b"")
        elif f in self.pending:
            data = self.pending.pop(f) + data
        with open(f, "ab") as out:
            out.write(data)

    def step(self, op: str) -> None:
        rng = self.rng
        if op == "append":
            self.write([record(i, rng) for i in self.ids(rng.randint(1, 3))])
        elif op == "partial":
            self.write([record(i, rng) for i in self.ids(1)], partial=True)
        elif op == "finish":
            for f, rest in list(self.pending.items()):
                with open(f, "ab") as out:
                    out.write(rest)
                del self.pending[f]
        elif op == "twice":  # an id written again
            self.write([record("e0", rng)])
        elif op == "foreign":
            self.write([record(f"x{rng.randint(0, 9)}", rng)])
        elif op == "nan":  # a NaN SPL where success is 1: an error naming the entry
            self.write([record(i, rng, success=1.0, spl=math.nan) for i in self.ids(1)])
        elif op == "column":  # a column not written before
            self.write([record(i, rng, extra=rng.random()) for i in self.ids(1)])
        elif op == "text":  # a metric that is not a number
            self.write([record(i, rng, ndtw="high") for i in self.ids(1)])
        elif op == "malformed" and self.layout != "folder":
            f = rng.choice(self.files)
            with open(f, "ab") as out:
                out.write(self.pending.pop(f, b"") + b'{"episode_id": "e1", oops\n')
        elif op in ("truncate", "rewrite", "flip"):
            files = [
                f for f in (self.files or sorted((self.root / "log").glob("*"))) if f.exists() and f.stat().st_size
            ]
            if not files:
                return
            f = rng.choice(files)
            data = f.read_bytes()
            self.pending.pop(f, None)
            if op == "truncate":
                f.write_bytes(data[: rng.randint(0, len(data) - 1)])
            elif op == "rewrite":  # other episodes, or the same ones with other values
                text = data.decode()
                f.write_bytes(text.replace('"success": 1.0', '"success": 0.0').replace('"e', '"e1').encode())
            else:  # one value changed in place, the size unchanged
                k = data.find(b'"success": ')
                if k >= 0:
                    k += len(b'"success": ')
                    f.write_bytes(data[:k] + (b"1" if data[k : k + 1] == b"0" else b"0") + data[k + 1 :])


OPS = ["append"] * 6 + ["partial", "finish", "finish", "twice", "foreign", "nan", "column", "text", "malformed"]
OPS += ["truncate", "rewrite", "flip"]


def outcome(watch: Watch):
    """What a look gives: the state, the view, the episodes read; or the error."""
    try:
        watch.poll()
    except ValueError as exc:
        return ("error", type(exc).__name__, str(exc))
    run = next(iter(watch.runs.values()))
    table = run.follower.table
    episodes = None
    if table is not None:
        episodes = (table.ids, {m: v.tolist() for m, v in table.values.items()}, sorted(table.rates), table.notes)
    return ("ok", json.dumps(watch.state(), sort_keys=True, default=str), watch.lines(), episodes)


def watches(source: str, question: dict, bench=None):
    order = Order(tuple((f"e{k}",) for k in range(N)), seed=0, source="order.json")
    out = []
    for incremental in (True, False):
        follower = Follower(source, name="run", incremental=incremental, bench=bench)
        out.append(Watch(order, {"run": follower}, metrics=["sr"], alpha=0.1, **question))
    return out


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    layout=st.sampled_from(["jsonl", "shards", "glob", "folder"]),
    seed=st.integers(0, 2**31),
    ops=st.lists(st.sampled_from(OPS), min_size=1, max_size=14),
    question=st.sampled_from([{"width": 0.9}, {"width": 0.3}, {"reported": {"sr": 0.9}, "width": 0.5}]),
)
def test_incremental_reads_decide_as_whole_reads(layout, seed, ops, question):
    KIND[0] = "results"
    with tempfile.TemporaryDirectory(prefix="navdtw-incr-") as tmp:
        run = Run(Path(tmp), layout, seed)
        fast, whole = watches(run.source, question)
        _follow(run, fast, whole, ops)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    layout=st.sampled_from(["jsonl", "glob", "folder"]),
    seed=st.integers(0, 2**31),
    ops=st.lists(st.sampled_from(OPS), min_size=1, max_size=10),
)
def test_trajectories_scored_as_they_grow_decide_as_whole_reads(layout, seed, ops):
    """The same for trajectories (the kind positions): the lines appended are matched and scored
    on their own, the episodes joined to the run's."""
    import navdtw.datasets as ds

    KIND[0] = "positions"
    try:
        with tempfile.TemporaryDirectory(prefix="navdtw-incr-") as tmp:
            refs = Path(tmp) / "refs.json"
            refs.write_text(json.dumps([{"episode_id": f"e{k}", "path": [[0, 0], [8, 1]]} for k in range(N)]))
            (Path(tmp) / "run").mkdir()
            run = Run(Path(tmp) / "run", layout, seed)
            fast, whole = watches(run.source, {"width": 0.3}, bench=ds.open("positions", references=refs))
            _follow(run, fast, whole, ops)
    finally:
        KIND[0] = "results"


def _follow(run: Run, fast: Watch, whole: Watch, ops: list[str]) -> None:
    """Each step of the run, then a look of each watch: the same outcome, until an error."""
    for op in ["append", *ops]:
        run.step(op)
        a, b = outcome(fast), outcome(whole)
        assert a == b, (op, a, b)
        if a[0] == "error":
            break
    for w in (fast, whole):
        next(iter(w.runs.values())).follower.close()


def test_a_look_after_an_append_reads_only_the_lines_appended(tmp_path):
    f = tmp_path / "results.jsonl"
    rng = random.Random(0)
    f.write_bytes(b"".join(line(record(f"e{k}", rng)) for k in range(20)))
    growing = GrowingResults(f)
    first = growing.read()
    assert growing.added is None and len(first) == 20  # the first read is whole
    with open(f, "ab") as out:
        out.write(line(record("e20", rng)) + b'{"episode_id": "e21", "succ')  # a last line being written
    table = growing.read()
    assert growing.added == ["e20"] and growing.rows == [20]
    again = load_results(_complete(f, tmp_path))
    assert table.ids == again.ids and all(np.array_equal(table.values[m], again.values[m]) for m in again.values)
    with open(f, "ab") as out:  # the pending line is read again from its start
        out.write(b'ess": 1.0, "spl": 0.5, "ndtw": 0.25}\n')
    table = growing.read()
    assert growing.added == ["e21"] and table.values["spl"][-1] == 0.5
    f.write_bytes(f.read_bytes()[:100])  # truncated: read whole (here: an error naming the line)
    with pytest.raises(ValueError, match="line 2: malformed"):
        growing.read()


def _complete(f: Path, tmp: Path) -> Path:
    data = f.read_bytes()
    out = tmp / "complete" / f.name
    out.parent.mkdir(exist_ok=True)
    out.write_bytes(data[: data.rfind(b"\n") + 1])
    return out


def test_a_tail_tells_an_append_from_a_rewrite(tmp_path):
    f = tmp_path / "a.jsonl"
    f.write_bytes(b'{"a": 1}\n{"a": 2}\n{"a": 3')
    assert Tail.of(f.read_bytes()) is None  # not ending with a newline
    tail = Tail.of(b'{"a": 1}\n{"a": 2}\n')
    after, new, pending = read_appended(f, tail)
    assert (new, pending, after.offset, after.lines) == (b"", b'{"a": 3', 18, 2)
    f.write_bytes(b'{"a": 1}\n{"a": 9}\n{"a": 3}\n')  # the same size before the tail, another value
    from navdtw.datasets.results._readers import Reread

    with pytest.raises(Reread):
        read_appended(f, tail)
    assert Tail.of(b'[{"a": 1}]\n') is None and Tail.of(b"a,b\n1,2\n") is None  # a document, a CSV: whole


def test_a_listing_sees_files_added_and_removed_as_files_of_does(tmp_path):
    (tmp_path / "log").mkdir()
    for k in range(3):
        (tmp_path / "log" / f"stats_{k}.json").write_text("{}")
    (tmp_path / "log" / ".hidden").write_text("{}")
    listing = Listing(tmp_path / "log")
    assert listing.files() == files_of(tmp_path / "log") and len(listing.added) == 3
    assert listing.files() == files_of(tmp_path / "log") and listing.added == []
    (tmp_path / "log" / "stats_10.json").write_text("{}")
    assert listing.files() == files_of(tmp_path / "log") and [p.name for p in listing.added] == ["stats_10.json"]
    (tmp_path / "log" / "stats_0.json").unlink()
    assert listing.files() == files_of(tmp_path / "log")
    (tmp_path / "log" / "x_r0_w2.json").write_text("{}")  # one rank of two: named as files_of names it
    with pytest.raises(ValueError, match="rank 1"):
        listing.files()


def test_a_folder_look_reads_only_the_files_added(tmp_path):
    folder = tmp_path / "log"
    folder.mkdir()
    rng = random.Random(1)
    for k in range(40):
        rec = record(k, rng)
        (folder / f"stats_{k}.json").write_text(
            json.dumps({"id": k, **{a: b for a, b in rec.items() if a != "episode_id"}})
        )
    follower = Follower(folder, name="run", restat=8)
    assert follower.poll() and follower.added is None and len(follower.table.ids) == 40
    (folder / "stats_40.json").write_text(json.dumps({"id": 40, "success": 1.0, "spl": 0.5, "ndtw": 0.5}))
    assert follower.poll() and follower.added.ids == ["40"] and len(follower.table.ids) == 41
    assert follower.table.ids == load_results(folder).ids
    assert not follower.poll()  # nothing new


def _states(project: str, tmp: Path) -> tuple[str, list[dict[str, bytes]]]:
    """A project's run as a running evaluation leaves it after each episode (tests/eval_writers.py):
    the source watch is given (relative) and, per step, the files written (relative path -> bytes)."""
    import eval_writers as w

    eps = w.episodes(24, seed=5, unreachable=(4,))
    ids = list(eps)

    def written(k: int, write) -> dict[str, bytes]:
        stage = tmp / f"stage{project}{k}"
        stage.mkdir()
        write(stage, {i: eps[i] for i in ids[:k]})
        return {p.relative_to(stage).as_posix(): p.read_bytes() for p in sorted(stage.rglob("*")) if p.is_file()}

    if project in ("streamvln", "internnav"):  # a JSON line appended per episode
        write = {
            "streamvln": lambda d, e: w.streamvln(d, e, summary=False),
            "internnav": lambda d, e: w.internnav(d, "M", e),
        }[project]
        final = {k: v for k, v in written(len(ids), write).items() if not k.endswith("/result.json")}
        ((name, data),) = final.items()
        lines = data.splitlines(keepends=True)
        return name, [{name: b"".join(lines[:k])} for k in range(1, len(lines) + 1)]
    if project in ("navid", "navila-bench"):  # a file per episode
        write = {"navid": w.navid, "navila-bench": w.navila_bench}[project]
        final = written(len(ids), write)
        folder = next(iter(final)).rsplit("/", 1)[0]
        return folder, [dict([item]) for item in final.items()]
    write = {  # a document dumped whole (every rank's, with ETPNav)
        "etpnav": w.etpnav,
        "aerialvln": lambda d, e: w.aerialvln(d, e),
        "goat-bench": lambda d, e: w.goat_bench(d, len(e)),
        "havln-info": w.havln_info,
    }[project]
    states = [
        {k: v for k, v in written(k, write).items() if not k.startswith("results/")} for k in range(8, len(ids) + 1)
    ]
    source = {
        "etpnav": "stats_ep_ckpt_6_val_unseen_r0_w4.json",
        "aerialvln": "intermediate_results/stats_ckpt_3_val_unseen.json",
        "goat-bench": "episode_metrics.json",
        "havln-info": "stats_ckpt_11_val_unseen_info.json",
    }[project]
    return source, states


@pytest.mark.parametrize(
    "project", ["streamvln", "internnav", "navid", "navila-bench", "etpnav", "aerialvln", "goat-bench", "havln-info"]
)
def test_every_layout_is_read_as_it_grows_or_whole_as_its_grows_says(tmp_path, project):
    """Each project's run, written episode by episode as its code writes it: the watch on
    incremental reads reads the same table as the one reading whole at every look, and it reads
    incrementally exactly the layouts that grow by lines or by files (``Layout.grows``)."""
    from navdtw.datasets.results.layouts import layout

    source, states = _states(project, tmp_path)
    live = tmp_path / "live"
    followers = [Follower(live / source, name=project, incremental=inc) for inc in (True, False)]
    added = []
    for k, state in enumerate(states):
        for name, data in state.items():
            (live / name).parent.mkdir(parents=True, exist_ok=True)
            (live / name).write_bytes(data)
        polled = [f.poll() for f in followers]
        fast, whole = (f.table for f in followers)
        assert polled[0] == polled[1] or k == 0, k
        assert fast.ids == whole.ids and fast.notes == whole.notes, k
        assert fast.values.keys() == whole.values.keys()
        assert all(np.array_equal(fast.values[m], whole.values[m]) for m in whole.values), k
        added.append(followers[0].added)
    grows = layout(project).grows
    assert f"layout {project})" in " ".join(fast.notes)
    if grows in ("lines", "files"):  # whole at the first look, and at the second (one row before: the
        # columns that are the same in every row, left out, are known from two)
        assert added[0] is None and all(a is not None and len(a.ids) == 1 for a in added[2:]), grows
    else:
        assert grows == "whole" and all(a is None for a in added), grows
