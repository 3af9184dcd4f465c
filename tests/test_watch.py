"""navdtw order and navdtw watch: the random order's files, following results as they are written,
the decisions (navdtw.order, navdtw.watch)."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest

from navdtw.datasets.results import load_results
from navdtw.order import Order, load_order, random_order, write_order
from navdtw.watch import DECISIONS, Follower, Watch


def ce_split(path, n=40):
    eps = [
        {"episode_id": 100 + k, "trajectory_id": k // 2, "scene_id": "s", "instruction": {"text": f"go {k}"}}
        for k in range(n)
    ]
    path.write_bytes(gzip.compress(json.dumps({"episodes": eps, "instruction_vocab": {"x": 1}}).encode()))
    return path


def r2r_split(path, n=10):
    entries = [{"path_id": 500 + k, "scan": "s", "path": ["a", "b"], "instructions": ["x", "y", "z"]} for k in range(n)]
    path.write_text(json.dumps(entries))
    return path


# --------------------------------------------------------------------------------------------
# navdtw order
# --------------------------------------------------------------------------------------------


def test_order_of_a_vlnce_split_and_its_workers(tmp_path):
    split = ce_split(tmp_path / "val_unseen.json.gz")
    files = write_order(split, tmp_path / "out", seed=3, workers=3)
    ids = (tmp_path / "out" / "order.txt").read_text().split()
    assert sorted(ids) == sorted(str(100 + k) for k in range(40)) and ids != sorted(ids)
    copy = json.loads(gzip.decompress(files["split"].read_bytes()))
    assert [str(e["episode_id"]) for e in copy["episodes"]] == ids and copy["instruction_vocab"] == {"x": 1}
    order = load_order(files["json"])
    assert order.ids == ids and order.seed == 3 and len(order) == 40
    # round-robin: worker r runs positions r, r + 3, ...; their first finished ones form a prefix
    for r in range(3):
        assert (tmp_path / "out" / f"order.worker{r}of3.txt").read_text().split() == ids[r::3]
        share = json.loads(gzip.decompress(files[f"split{r}"].read_bytes()))["episodes"]
        assert [str(e["episode_id"]) for e in share] == ids[r::3]
    # same seed, same order; another seed, another
    again = write_order(split, tmp_path / "again", seed=3)
    assert again["order"].read_text().split() == ids
    other = write_order(split, tmp_path / "other", seed=4)
    assert other["order"].read_text().split() != ids


def test_order_of_an_r2r_split_keeps_paths_whole(tmp_path):
    split = r2r_split(tmp_path / "R2R_val_unseen.json")
    files = write_order(split, tmp_path / "out", seed=0)
    order = load_order(files["json"])
    assert len(order) == 10 and all(len(u) == 3 for u in order.units)
    assert order.units[0] == tuple(f"{order.units[0][0][:-2]}_{j}" for j in range(3))
    copy = json.loads(files["split"].read_text())
    assert [f"{e['path_id']}_0" for e in copy] == [u[0] for u in order.units]


def test_order_is_uniform():
    # every position equally likely for every unit: chi-square over 4,000 draws of a 5-unit order
    counts = np.zeros((5, 5))
    for s in range(4000):
        p = random_order(5, s)
        counts[np.arange(5), p] += 1
    assert np.all(np.abs(counts - 800) < 5 * np.sqrt(800))


def test_order_refuses_to_overwrite_and_bad_splits(tmp_path):
    split = ce_split(tmp_path / "val.json.gz")
    write_order(split, tmp_path / "out", seed=0)
    with pytest.raises(FileExistsError, match="never overwrites"):
        write_order(split, tmp_path / "out", seed=1)
    with pytest.raises(FileExistsError, match=r"val.json.gz exists"):  # the split's own folder
        write_order(split, tmp_path, seed=1)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"episodes": [{"id": 1}]}))
    with pytest.raises(ValueError, match=r"bad.json: episodes\[0\] has no 'episode_id'"):
        write_order(bad, tmp_path / "o2", seed=0)
    bad.write_text("{not json")
    with pytest.raises(ValueError, match=r"bad.json: not a JSON split file"):
        write_order(bad, tmp_path / "o3", seed=0)
    bad.write_text(json.dumps([{"path_id": 1, "instructions": ["a"]}, {"path_id": 1, "instructions": ["b"]}]))
    with pytest.raises(ValueError, match="'1_0' appears twice"):
        write_order(bad, tmp_path / "o4", seed=0)
    with pytest.raises(ValueError, match="workers must be"):
        write_order(split, tmp_path / "o5", seed=0, workers=0)


def test_plain_id_lists_are_orders(tmp_path):
    (tmp_path / "ids.txt").write_text("a\nb\n\nc\n")
    assert load_order(tmp_path / "ids.txt").units == (("a",), ("b",), ("c",))
    (tmp_path / "dup.txt").write_text("a\nb\na\n")
    with pytest.raises(ValueError, match=r"dup.txt: episode id 'a' appears twice"):
        load_order(tmp_path / "dup.txt")


# --------------------------------------------------------------------------------------------
# following results
# --------------------------------------------------------------------------------------------


def row(i, sr, **more):
    return json.dumps({"episode_id": i, "success": sr, **more})


def test_a_partial_last_line_is_waited_for(tmp_path):
    f = tmp_path / "run.jsonl"
    f.write_text(row("a", 1) + "\n" + row("b", 0)[:12])
    fol = Follower([f], name="run")
    assert fol.poll() and fol.table.ids == ["a"]
    assert not fol.poll()  # nothing new
    with f.open("a") as h:
        h.write(row("b", 0)[12:] + "\n")
    assert fol.poll() and fol.table.ids == ["a", "b"]
    # a last object without a newline is taken once whole (StreamVLN ends its file so); a row without
    # an id (a summary) is left out and counted
    with f.open("a") as h:
        h.write(row("c", 1) + "\n" + json.dumps({"sucs_all": 0.5, "length": 3}))
    assert fol.poll() and fol.table.ids == ["a", "b", "c"] and fol.left_out == 1


def test_a_keyed_json_on_one_line_is_read_whole(tmp_path):
    f = tmp_path / "stats.json"
    f.write_text(json.dumps({"a": {"success": 1.0}, "b": {"success": 0.0}}))
    fol = Follower([f], name="run")
    assert fol.poll() and fol.table.ids == ["a", "b"] and fol.left_out == 0


def test_a_complete_malformed_line_is_an_error(tmp_path):
    f = tmp_path / "run.jsonl"
    f.write_text(row("a", 1) + "\n{oops\n")
    with pytest.raises(ValueError, match=r"run.jsonl: line 2 is not JSON"):
        Follower([f], name="run").poll()


def test_folders_of_one_file_per_episode_and_shards(tmp_path):
    d = tmp_path / "log"
    d.mkdir()
    (d / "stats_a.json").write_text(json.dumps({"id": "a", "success": 1.0}, indent=4))
    (d / "stats_b.json").write_text('{"id": "b", "succ')  # being written
    fol = Follower([d], name="navid")
    assert fol.poll() and fol.table.ids == ["a"]
    (d / "stats_b.json").write_text(json.dumps({"id": "b", "success": 0.0}, indent=4))
    assert fol.poll() and sorted(fol.table.ids) == ["a", "b"]
    # two shards of one run (a glob); an episode in both is an error naming them
    (tmp_path / "r0.jsonl").write_text(row("x", 1) + "\n")
    (tmp_path / "r1.jsonl").write_text(row("y", 0) + "\n")
    fol = Follower([str(tmp_path / "r*.jsonl")], name="ranks")
    assert fol.poll() and sorted(fol.table.ids) == ["x", "y"]
    (tmp_path / "r1.jsonl").write_text(row("y", 0) + "\n" + row("x", 1) + "\n")
    with pytest.raises(ValueError, match=r"'x' is in both r0.jsonl and r1.jsonl"):
        fol.poll()


# --------------------------------------------------------------------------------------------
# deciding
# --------------------------------------------------------------------------------------------


def population(n, p, seed):
    return (np.random.default_rng(seed).random(n) < p).astype(float)


def write_run(path, order, values, upto, **more):
    with path.open("w") as h:
        for i, v in zip(order.ids[:upto], values[:upto]):
            h.write(row(i, float(v), **{k: float(x[order.ids.index(i)]) for k, x in more.items()}) + "\n")


def test_the_longest_complete_prefix_is_used(tmp_path):
    order = Order(tuple((f"e{k}",) for k in range(100)), seed=0, source="order.json")
    f = tmp_path / "run.jsonl"
    # episodes 0-29 and 40-49 finished: the prefix is 30, ten wait
    f.write_text("".join(row(f"e{k}", 1) + "\n" for k in list(range(30)) + list(range(40, 50))))
    w = Watch(order, {"run": Follower([f], name="run")}, metrics=["sr"], width=0.01)
    w.poll()
    run = w.runs["run"]
    assert run.done == 30 and run.waiting == 10 and run.tracks["sr"].cs.count == 30
    text = "\n".join(w.lines())
    assert "30/100 of the order" in text and "10 finished out of order wait" in text


def test_width_reported_and_their_exit_statuses(tmp_path):
    n = 1000
    order = Order(tuple((f"e{k}",) for k in range(n)), seed=0, source="order.json")
    vals = population(n, 0.6, 1)
    f = tmp_path / "run.jsonl"
    write_run(f, order, vals, 600)
    w = Watch(order, {"run": Follower([f], name="run")}, metrics=["sr"], width=0.2)
    assert w.run(once=True) == "width" and DECISIONS["width"][0] == 10
    w = Watch(order, {"run": Follower([f], name="run")}, metrics=["sr"], width=0.01)
    assert w.run(once=True) == "undecided"
    w = Watch(order, {"run": Follower([f], name="run")}, metrics=[], reported={"sr": vals.mean() - 0.15})
    assert w.run(once=True, output=tmp_path / "state.json") == "reported-outside"
    state = json.loads((tmp_path / "state.json").read_text())
    assert state["decision"] == "reported-outside" and state["exit_status"] == 12
    assert (
        state["runs"]["run"]["in_order"] == 600 and state["runs"]["run"]["metrics"]["sr"]["upper"] < vals.mean() + 0.1
    )
    w = Watch(order, {"run": Follower([f], name="run")}, metrics=[], reported={"sr": vals.mean()}, width=0.2)
    assert w.run(once=True) == "reported-inside"
    # the whole split: the interval is the exact mean, so any width is reached
    write_run(f, order, vals, n)
    w = Watch(order, {"run": Follower([f], name="run")}, metrics=["sr"], width=1e-9)
    assert w.run(once=True) == "width"
    iv = w.runs["run"].tracks["sr"].cs.interval()
    assert iv.lower == pytest.approx(vals.mean()) and iv.upper == pytest.approx(vals.mean())


def test_against_shares_the_error_over_metrics(tmp_path):
    n = 800
    order = Order(tuple((f"e{k}",) for k in range(n)), seed=0, source="order.json")
    base_sr = population(n, 0.4, 2)
    mine_sr = np.maximum(base_sr, population(n, 0.3, 3))  # clearly better
    base = tmp_path / "base.jsonl"
    write_run(base, order, base_sr, n, ndtw=base_sr * 0.5 + 0.25)
    f = tmp_path / "run.jsonl"
    write_run(f, order, mine_sr, 400, ndtw=mine_sr * 0.5 + 0.25)
    w = Watch(order, {"run": Follower([f], name="run")}, metrics=["sr", "ndtw"], against=load_results(base))
    assert w.run(once=True) == "better" and w.share == 0.025
    assert w.per_metric == {"sr": "better", "ndtw": "better"} and "0.025 each" in w.message
    # the same agent against itself: tied once the difference is within the width of 0
    write_run(f, order, base_sr, 400, ndtw=base_sr * 0.5 + 0.25)
    w = Watch(order, {"run": Follower([f], name="run")}, metrics=["sr"], against=load_results(base), width=0.1)
    assert w.run(once=True) == "tied"
    short = tmp_path / "short.jsonl"
    write_run(short, order, base_sr, 10)
    with pytest.raises(ValueError, match="790 episodes of the order have no row"):
        Watch(order, {"run": Follower([f], name="run")}, metrics=["sr"], against=load_results(short))


def test_checkpoints_are_eliminated_until_one_remains(tmp_path):
    n = 1000
    order = Order(tuple((f"e{k}",) for k in range(n)), seed=0, source="order.json")
    runs = {}
    for name, p, upto in (("c1", 0.2, 300), ("c2", 0.7, 500), ("c3", 0.35, 200)):
        f = tmp_path / f"{name}.jsonl"
        write_run(f, order, population(n, p, hash(name) % 100), upto)
        runs[name] = Follower([f], name=name)
    w = Watch(order, runs, metrics=["sr"])
    assert w.run(once=True) == "chosen" and w.message.startswith("c2 is the best")
    assert w.runs["c1"].eliminated and w.runs["c3"].eliminated and w.share == pytest.approx(0.05 / 3)


def test_no_question_and_unbounded_metrics_are_refused(tmp_path):
    order = Order((("a",),), source="o")
    f = tmp_path / "run.jsonl"
    f.write_text(json.dumps({"episode_id": "a", "ne": 3.0, "success": 1}) + "\n")
    with pytest.raises(ValueError, match="nothing to decide"):
        Watch(order, {"run": Follower([f], name="run")}, metrics=["sr"])
    w = Watch(order, {"run": Follower([f], name="run")}, metrics=["ne"], width=0.1)
    with pytest.raises(ValueError, match="'ne' is not a bounded metric"):
        w.poll()


# --------------------------------------------------------------------------------------------
# the commands
# --------------------------------------------------------------------------------------------

WRITER = """
import json, sys, time
import numpy as np
path, order_file = sys.argv[1], sys.argv[2]
ids = json.load(open(order_file))["units"]
rng = np.random.default_rng(0)
with open(path, "a") as f:
    for k, (i,) in enumerate(ids):
        line = json.dumps({"episode_id": i, "success": float(rng.random() < 0.8), "spl": 0.5})
        if k == 30:  # a truncated line, completed later: waited for, never an error
            f.write(line[:10]); f.flush(); time.sleep(0.6)
            f.write(line[10:] + "\\n")
        else:
            f.write(line + "\\n")
        f.flush()
        time.sleep(0.01)
"""


def test_cli_order_then_watch_once(tmp_path, capsys):
    from navdtw.cli import EXIT_STATUS, main

    split = ce_split(tmp_path / "val_unseen.json.gz", n=200)
    assert main(["order", str(split), "--seed", "5", "--workers", "2", "--out", str(tmp_path / "o")]) == 0
    assert "wrote" in capsys.readouterr().out
    order = load_order(tmp_path / "o" / "order.json")
    f = tmp_path / "run.jsonl"
    write_run(f, order, population(200, 0.9, 0), 150)
    code = main(["watch", str(f), "--order", str(tmp_path / "o" / "order.json"), "--reported", "sr=0.3", "--once"])
    out = capsys.readouterr().out
    assert code == 12 and "outside" in out and "150/200 of the order" in out and "(exit status 12)" in out
    assert all(EXIT_STATUS[c] == m for c, m in DECISIONS.values())
    assert main(["watch", str(f), "--order", str(tmp_path / "o" / "order.json"), "--reported", "sr=56"]) == 2
    assert "give METRIC=FRACTION" in capsys.readouterr().err


def test_watch_follows_a_file_another_process_appends(tmp_path):
    """End to end: one process appends episodes (one line truncated for a while), another runs
    ``navdtw watch`` on the growing file; it stops on its own with the decision's exit status."""
    import subprocess
    import sys

    split = ce_split(tmp_path / "val_unseen.json.gz", n=600)
    write_order(split, tmp_path / "o", seed=11)
    results = tmp_path / "results.jsonl"
    results.touch()
    (tmp_path / "writer.py").write_text(WRITER)
    writer = subprocess.Popen(
        [sys.executable, str(tmp_path / "writer.py"), str(results), str(tmp_path / "o" / "order.json")]
    )
    try:
        watch = subprocess.run(
            [
                sys.executable,
                "-m",
                "navdtw",
                "watch",
                str(results),
                "--order",
                str(tmp_path / "o" / "order.json"),
                "--reported",
                "sr=0.5",
                "--poll",
                "0.05",
                "--idle",
                "60",
                "--output",
                str(tmp_path / "state.json"),
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        writer.kill()
        writer.wait()
    assert watch.returncode == 12, watch.stdout + watch.stderr
    assert "reported sr 0.5 outside" in watch.stdout and watch.stderr == ""
    state = json.loads((tmp_path / "state.json").read_text())
    n = state["runs"]["run"]["in_order"]
    assert state["exit_status"] == 12 and 30 < n < 600  # past the truncated line, before the end


def test_the_exit_status_table_of_the_docs_lists_every_decision():
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "cli.md").read_text()
    for code, _ in DECISIONS.values():
        assert f"\n| {code} | " in text, code


def test_readme_stop_early_commands_run(tmp_path, monkeypatch, capsys):
    """The README's two commands, as written, on a small split whose agent is clearly better."""
    import re
    import shlex
    from pathlib import Path

    from navdtw.cli import main

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    (block,) = [c for c in re.findall(r"```bash\n(.*?)```", readme, re.S) if "navdtw order" in c]
    first, second = (shlex.split(line) for line in block.strip().splitlines())
    monkeypatch.chdir(tmp_path)
    ce_split(tmp_path / "val_unseen.json.gz", n=300)
    assert main(first[1:]) == 0
    order = load_order(tmp_path / "order" / "order.json")
    rng = np.random.default_rng(1)
    base = rng.random(300) < 0.3
    mine = base | (rng.random(300) < 0.5)
    write_run(tmp_path / "base.jsonl", order, base, 300, ndtw=base * 0.6 + 0.2)
    write_run(tmp_path / "results.jsonl", order, mine, 300, ndtw=mine * 0.6 + 0.2)
    assert main([*second[1:], "--once"]) == 13
    assert "better than base.jsonl" in capsys.readouterr().out
