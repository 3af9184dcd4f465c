"""One run written in chunks (issue 36 items 9 and 11): folders of one run's chunks given as a list
or a glob that matches folders are one run, each folder read with its layout; files named by the
shortest path that tells them apart; a folder of files in several formats refused in one message,
the same from compare, load_results and watch."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from eval_writers import episodes, navid, traveluav

from navdtw.cli import main
from navdtw.datasets import load_results
from navdtw.datasets.results.shards import distinct_names, files_of


def _chunks(tmp_path, eps, cuts, name="chunk"):
    items = list(eps.items())
    logs = []
    for k, (a, b) in enumerate(zip(cuts[:-1], cuts[1:])):
        (tmp_path / f"{name}{k}").mkdir()
        logs.append(navid(tmp_path / f"{name}{k}", dict(items[a:b])))
    return logs


@pytest.mark.parametrize("given", ["navid=chunk0/log,chunk1/log,chunk2/log", "navid=chunk*/log"])
def test_shards_of_chunk_folders_are_one_run(tmp_path, monkeypatch, capsys, given):
    eps = episodes(30, seed=1)
    _chunks(tmp_path, eps, [0, 12, 20, 30])
    (tmp_path / "base").mkdir()
    navid(tmp_path / "base", episodes(30, seed=2))
    monkeypatch.chdir(tmp_path)
    argv = ["compare", "--shards", given, "base/log", "--dataset", "results", "--resamples", "200"]
    assert main([*argv, "--no-progress", "--out", "out"]) == 0
    err = capsys.readouterr().err
    assert "30 files of one run in 3 folders (chunk0/log, chunk1/log, chunk2/log)" in err
    agent = json.loads((tmp_path / "out" / "results.json").read_text())["datasets"]["results"]["agents"]["navid"]
    assert agent["sr"]["mean"] == pytest.approx(np.mean([m["success"] for m in eps.values()]), rel=1e-12)
    assert agent["spl"]["mean"] == pytest.approx(np.mean([m["spl"] for m in eps.values()]), rel=1e-12)


def test_files_of_a_list_of_folders_and_a_glob_of_folders(tmp_path):
    logs = _chunks(tmp_path, episodes(10), [0, 4, 10])
    by_list = files_of(logs)
    by_glob = files_of(str(tmp_path / "chunk*" / "log"))
    assert by_list.paths == by_glob.paths == tuple(sorted(logs[0].iterdir())) + tuple(sorted(logs[1].iterdir()))
    assert by_list.how == "10 files of one run in 2 folders (chunk0/log, chunk1/log)"
    assert by_list.label == "chunk0/log/ and chunk1/log/"
    with pytest.raises(ValueError, match=r"no file or folder matches"):
        files_of(str(tmp_path / "nothing*" / "log"))
    with pytest.raises(FileNotFoundError, match=r"chunk7: no such file or folder"):
        files_of([logs[0], tmp_path / "chunk7"])


def test_the_same_id_in_two_chunk_folders_names_the_folders(tmp_path, monkeypatch, capsys):
    """It used to read "11 is at stats_11.json line 1 and stats_11.json line 1"."""
    eps = episodes(20, seed=3)
    items = list(eps.items())
    for k, part in enumerate([items[:12], items[8:]]):
        (tmp_path / f"dup{k}").mkdir()
        navid(tmp_path / f"dup{k}", dict(part))
    monkeypatch.chdir(tmp_path)
    for given in ("navid=dup*/log", "navid=dup*/log/*.json"):
        assert main(["compare", "--shards", given, "--dataset", "results", "--no-progress"]) in (1, 5)
        err = capsys.readouterr().err
        assert "10 is at dup0/log/stats_10.json line 1 and dup1/log/stats_10.json line 1" in err, err


def test_distinct_names_are_the_shortest_ends_that_differ(tmp_path):
    paths = [tmp_path / "a/log/s_1.json", tmp_path / "b/log/s_1.json", tmp_path / "a/log/s_2.json", tmp_path / "x"]
    assert distinct_names(paths) == ["a/log/s_1.json", "b/log/s_1.json", "s_2.json", "x"]
    assert distinct_names([tmp_path / "a", tmp_path / "a"])[0].endswith("/a")  # the same path: all of it
    assert distinct_names([]) == []


def test_chunk_folders_of_episode_folders_read_by_their_layout(tmp_path):
    """TravelUAV's folder of episode folders, in two chunks (one re-run under another name)."""
    root0, truth0 = traveluav(tmp_path / "chunk0", 6, seed=0)
    root1, truth1 = traveluav(tmp_path / "chunk1", 6, seed=1)
    for p in sorted(root1.iterdir()):  # the second chunk's trajectories are others
        p.rename(p.with_name(p.name.replace("2024_", "2025_")))
    t = load_results([root0, root1])
    assert len(t.ids) == 12
    succ = [m["success"] for m in truth0.values()] + [m["success"] for m in truth1.values()]
    assert float(np.mean(t.values["sr"])) == pytest.approx(np.mean(succ))
    shutil.rmtree(root1)
    shutil.copytree(root0, root1)  # the same trajectories in both chunks: named with their chunk
    with pytest.raises(ValueError, match=r"is at chunk0/eval_closeloop/baseline \S+ and chunk1/eval_closeloop/"):
        load_results([root0, root1])


def _mixed(folder):
    folder.mkdir()
    (folder / "a.jsonl").write_text('{"id": 1, "sr": 1, "spl": 0.5}\n{"id": 2, "sr": 0, "spl": 0}\n')
    (folder / "b.csv").write_text("id,sr,spl\n3,1,0.4\n")
    (folder / "README.txt").write_text("These are my results\n")
    return folder


def test_a_folder_of_several_formats_is_one_message(tmp_path, monkeypatch, capsys):
    """It used to read "README.txt: a header and no rows"."""
    folder = _mixed(tmp_path / "mixed")
    want = "the files of one run are in different formats (JSON: a.jsonl; CSV: b.csv; text: README.txt)"
    with pytest.raises(ValueError) as info:
        load_results(folder)
    assert want in str(info.value) and f"the JSON files alone: '{folder / '*.jsonl'}'" in str(info.value)
    monkeypatch.chdir(tmp_path)
    main(["compare", "mixed", "--dataset", "results", "--no-progress"])
    assert want in capsys.readouterr().err
    (tmp_path / "order.txt").write_text("".join(f"{k}\n" for k in range(1, 4)))
    assert main(["watch", "mixed", "--order", "order.txt", "--width", "0.5", "--once"]) == 2  # watch: the same
    assert "the files of one run are in different formats (JSON: a.jsonl; CSV: b.csv" in capsys.readouterr().err
    (folder / "README.txt").unlink()
    with pytest.raises(ValueError, match=r"different formats \(JSON: a\.jsonl; CSV: b\.csv\)"):
        load_results(folder)
    (folder / "b.csv").unlink()
    (folder / "c.json").write_text('[{"id": 3, "sr": 1, "spl": 0.4}]')  # JSON and JSON Lines: one format
    assert sorted(load_results(folder).ids) == ["1", "2", "3"]
