"""What a suite run writes and says (issue 19, "Outputs"): stale files of earlier runs, a folder
that cannot be written, all-or-nothing writes naming the real output, escaping per format (checked
by a Markdown renderer, a CSV reader, pdfLaTeX and the terminal's view), the LaTeX table's width,
warnings carried everywhere, provenance; on the synthetic suite of tests/test_suite.py."""

from __future__ import annotations

import csv
import errno
import hashlib
import html
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest
from synthetic_suite import (
    AGENTS,
    assert_episodes_read_back,
    continuous_files,
    make_world,
    suite_text,
    trajectory,
    write_suite,
)

import navdtw._io
from navdtw import suite as S
from navdtw.cli import main

FAST = "resamples = 200\nbaseline_walks = 0\n"


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    return make_world(tmp_path_factory.mktemp("suite"))


def _files(out: Path) -> dict[str, str]:
    """Every file in ``out`` (not the cache) with its SHA-256."""
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(out.iterdir()) if p.is_file() and p.name}


# ------------------------------------------------------------------------------------------
# stale outputs, --no-report
# ------------------------------------------------------------------------------------------


def test_a_rerun_removes_its_own_stale_outputs_only(world, tmp_path, capsys):
    suite = write_suite(world, AGENTS, name="stale.toml", settings=FAST)
    out = tmp_path / "out"
    assert main(["suite", "run", str(suite), "--out", str(out), "--no-progress"]) == 0
    assert (out / "report.html").is_file()
    (out / "my_notes.txt").write_text("mine")
    capsys.readouterr()
    assert main(["suite", "run", str(suite), "--out", str(out), "--no-progress", "--no-report"]) == 0
    said = capsys.readouterr().out
    assert not (out / "report.html").exists()  # the earlier run's report would describe other results
    assert (out / "my_notes.txt").read_text() == "mine"
    assert "report" not in said.split("wrote", 1)[1].splitlines()[0]  # it says what it wrote, nothing more
    assert "removed the earlier run's report.html" in said
    results = json.loads((out / "results.json").read_text())
    assert results["outputs"]["removed"] == ["report.html"] and "report.html" not in results["outputs"]["files"]
    manifest = json.loads((out / ".navdtw-outputs.json").read_text())["files"]
    assert set(manifest) == set(results["outputs"]["files"])
    assert all(hashlib.sha256((out / n).read_bytes()).hexdigest() == h for n, h in manifest.items())
    # a file of the same name that navdtw did not write (or that was changed) is left, with a warning
    (out / "report.html").write_text("the user's own page")
    assert main(["suite", "run", str(suite), "--out", str(out), "--no-progress", "--no-report"]) == 0
    err = capsys.readouterr().err
    assert (out / "report.html").read_text() == "the user's own page"
    assert "report.html: not written by this run and left in place (no record that navdtw wrote it)" in err


# ------------------------------------------------------------------------------------------
# a folder or file that cannot be written
# ------------------------------------------------------------------------------------------


def _refuse(monkeypatch, where: Path, name: str | None, code: int):
    """``tempfile.mkstemp`` fails in ``where`` (for temporaries of ``name`` only, if given); root
    ignores file permissions, so a read-only folder and a full disk are simulated here."""
    real = tempfile.mkstemp

    def mkstemp(*args, **kw):
        if Path(kw.get("dir", "")) == where and (name is None or kw.get("prefix", "").startswith(f".{name}.")):
            raise OSError(code, __import__("os").strerror(code), str(where / f"{kw.get('prefix')}xyz.tmp"))
        return real(*args, **kw)

    monkeypatch.setattr(tempfile, "mkstemp", mkstemp)


def test_a_read_only_folder_fails_before_the_work(world, tmp_path, monkeypatch, capsys):
    from navdtw.datasets import r2r

    out = tmp_path / "ro"
    out.mkdir()
    _refuse(monkeypatch, out, None, errno.EROFS)
    scored = []
    monkeypatch.setattr(r2r.R2RBenchmark, "match", lambda self, *a, **k: scored.append(1))
    suite = write_suite(world, AGENTS, name="ro.toml", settings=FAST)
    assert main(["suite", "run", str(suite), "--out", str(out), "--no-progress"]) == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{out}: cannot write into the output folder: Read-only file system" in err[0]
    assert ".tmp" not in err[0] and scored == []  # nothing was scored
    with pytest.raises(S.OutputError):
        S.run(suite, out, progress=False)


def test_a_failed_write_keeps_the_previous_outputs_and_names_the_output(world, tmp_path, monkeypatch, capsys):
    out = tmp_path / "out"
    first = write_suite(world, {"oracle": "oracle.json"}, name="w1.toml", settings=FAST)
    assert main(["suite", "run", str(first), "--out", str(out), "--no-progress"]) == 0
    before = _files(out)
    capsys.readouterr()
    _refuse(monkeypatch, out, "leaderboard.tex", errno.ENOSPC)
    second = write_suite(world, AGENTS, name="w2.toml", settings=FAST)
    assert main(["suite", "run", str(second), "--out", str(out), "--no-progress"]) == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{out / 'leaderboard.tex'}: cannot write: No space left on device" in err[0]
    assert "nothing was changed" in err[0] and ".tmp" not in err[0]
    assert _files(out) == before  # all or nothing: the earlier run's files, no temporaries left


def _all_files(out: Path) -> dict[str, str]:
    """Every file in ``out`` (hidden ones too, not the cache) with its SHA-256."""
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(out.iterdir()) if p.is_file()}


def _manifest_holds(out: Path) -> None:
    listed = json.loads((out / ".navdtw-outputs.json").read_text())["files"]
    assert all(hashlib.sha256((out / n).read_bytes()).hexdigest() == h for n, h in listed.items())


def _no_scoring(monkeypatch):
    from navdtw.datasets import r2r

    scored = []
    monkeypatch.setattr(r2r.R2RBenchmark, "match", lambda self, *a, **k: scored.append(1))
    return scored


def test_a_file_navdtw_did_not_write_is_never_replaced(world, tmp_path, monkeypatch, capsys):
    suite = write_suite(world, {"oracle": "oracle.json"}, name="own.toml", settings=FAST)
    out = tmp_path / "out"
    out.mkdir()
    (out / "results.json").write_text("my own results")
    with monkeypatch.context() as m:
        scored = _no_scoring(m)
        with pytest.raises(S.OutputError, match=re.escape("results.json: not written by navdtw")):
            S.run(suite, out, progress=False)
        assert main(["suite", "run", str(suite), "--out", str(out), "--no-progress"]) == 3
        assert scored == []  # refused before any work
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{out / 'results.json'}: not written by navdtw" in err[0] and "--force" in err[0]
    assert _all_files(out) == {"results.json": hashlib.sha256(b"my own results").hexdigest()}
    assert main(["suite", "run", str(suite), "--out", str(out), "--no-progress", "--force"]) == 0  # the user says so
    assert json.loads((out / "results.json").read_text())["datasets"]
    _manifest_holds(out)
    # navdtw's own output, edited since: the user's now
    S.run(suite, out, progress=False)
    (out / "leaderboard.md").write_text("# my edited leaderboard\n")
    with pytest.raises(S.OutputError, match=re.escape("leaderboard.md: changed since navdtw wrote it")):
        S.run(suite, out, progress=False)
    assert (out / "leaderboard.md").read_text() == "# my edited leaderboard\n"
    # a manifest that is not navdtw's is not trusted
    (out / "leaderboard.md").unlink()
    (out / ".navdtw-outputs.json").write_text("{}")
    with pytest.raises(S.OutputError, match=re.escape("navdtw-outputs.json: not navdtw's manifest")):
        S.run(suite, out, progress=False)


def test_a_read_only_file_is_protected(world, tmp_path, capsys):
    suite = write_suite(world, {"oracle": "oracle.json"}, name="ro_file.toml", settings=FAST)
    out = tmp_path / "out"
    S.run(suite, out, progress=False)
    (out / "leaderboard.csv").chmod(0o444)
    before = _all_files(out)
    assert main(["suite", "run", str(suite), "--out", str(out), "--no-progress"]) == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{out / 'leaderboard.csv'}: cannot replace: it is read-only (mode 0444)" in err[0]
    with pytest.raises(S.OutputError, match=re.escape("leaderboard.csv: cannot replace: it is read-only")):
        S.run(suite, out, progress=False, force=True)  # --force replaces the user's files, not protected ones
    assert main(["suite", "run", str(suite), "--out", str(out), "--no-progress", "--force"]) == 3
    assert _all_files(out) == before and (out / "leaderboard.csv").stat().st_mode & 0o777 == 0o444


def _chattr(path: Path, flag: str) -> bool:
    try:
        return subprocess.run(["chattr", flag, str(path)], capture_output=True).returncode == 0
    except OSError:
        return False


@pytest.mark.parametrize("where", ["leaderboard.md", "leaderboard.tex", ".navdtw-outputs.json"])
def test_a_failed_rename_leaves_the_old_run_whole(world, tmp_path, monkeypatch, capsys, where):
    """A rename that fails half-way through the switch (the first, a middle one, the manifest's):
    every file already replaced is put back; the folder is the old run, its manifest holds."""
    out = tmp_path / "out"
    S.run(write_suite(world, {"oracle": "oracle.json"}, name="r1.toml", settings=FAST), out, progress=False)
    (out / "my_notes.txt").write_text("mine")
    before = _all_files(out)
    real = os.replace

    def replace(src, dst, *a, **k):
        if Path(dst).name == where:
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        return real(src, dst, *a, **k)

    monkeypatch.setattr(os, "replace", replace)
    second = write_suite(world, AGENTS, name="r2.toml", settings=FAST)
    assert main(["suite", "run", str(second), "--out", str(out), "--no-progress"]) == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{out / where}: cannot write: Input/output error; nothing was changed" in err[0]
    assert _all_files(out) == before
    _manifest_holds(out)


def test_an_interruption_during_the_switch_leaves_the_old_run_whole(world, tmp_path, monkeypatch):
    out = tmp_path / "out"
    S.run(write_suite(world, {"oracle": "oracle.json"}, name="i1.toml", settings=FAST), out, progress=False)
    before = _all_files(out)
    real, calls = os.replace, []

    def replace(src, dst, *a, **k):
        calls.append(dst)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(src, dst, *a, **k)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(KeyboardInterrupt):
        S.run(write_suite(world, AGENTS, name="i2.toml", settings=FAST), out, progress=False)
    assert _all_files(out) == before


# A kill (SIGKILL, a power cut) runs no rollback: the process stops where it is. `where` is the
# output whose rename it stops before, or "cleanup": after the switch, while the old files go.
_KILL = """
import os, sys
import navdtw._io
where, replace, unlink = sys.argv[1], os.replace, os.unlink
def replace_or_die(src, dst, *a):
    if os.path.basename(str(dst)) == where:
        os._exit(137)
    return replace(src, dst, *a)
def unlink_or_die(path, *a):
    if where == "cleanup" and str(path).endswith(".old"):
        os._exit(137)
    return unlink(path, *a)
navdtw._io.os.replace, navdtw._io.os.unlink = replace_or_die, unlink_or_die
from navdtw.cli import main
sys.exit(main(sys.argv[2:]))
"""


def _agents(out: Path) -> set[str]:
    return {a for ds in json.loads((out / "results.json").read_text())["datasets"].values() for a in ds["agents"]}


@pytest.mark.parametrize("where", ["leaderboard.tex", ".navdtw-outputs.json", "cleanup"])
def test_a_switch_killed_half_way_is_finished_by_the_next_run(world, tmp_path, capsys, where):
    """A kill during the switch leaves a mixed folder and the journal; the next command that writes
    there puts the old run back (killed before the manifest), or keeps the new one whole (killed
    after it), says so on one line, and goes on without --force."""
    out = tmp_path / "out"
    S.run(write_suite(world, {"oracle": "oracle.json"}, name="k1.toml", settings=FAST), out, progress=False)
    (out / "my_notes.txt").write_text("mine")
    before = _all_files(out)
    killer = tmp_path / "kill.py"
    killer.write_text(_KILL)
    second = write_suite(world, AGENTS, name="k2.toml", settings=FAST)
    run = [sys.executable, str(killer), where, "suite", "run", str(second), "--out", str(out), "--no-progress"]
    assert subprocess.run(run, capture_output=True).returncode == 137
    assert (out / navdtw._io.JOURNAL).is_file() and _all_files(out) != before  # cut short, mixed
    with pytest.warns(navdtw._io.OutputWarning, match="cut short") as said:
        navdtw._io.check_replaceable(out, S.outputs.output_names(True))
    after = _all_files(out)
    assert all(not n.endswith((".old", ".tmp")) for n in after) and navdtw._io.JOURNAL not in after
    _manifest_holds(out)
    agents = _agents(out)
    if where == "cleanup":  # the switch was complete: the new run stays, its leftovers go
        assert "after switching its outputs in; its leftover files are removed" in str(said[0].message)
        assert agents == set(AGENTS) and after["my_notes.txt"] == before["my_notes.txt"]
    else:
        assert "while switching its outputs in; its files are put back as they were" in str(said[0].message)
        assert after == before
    # the same through the command: a kill, then a rerun that needs no --force
    assert subprocess.run(run, capture_output=True).returncode == 137
    assert main(["suite", "run", str(second), "--out", str(out), "--no-progress"]) == 0
    (line,) = [x for x in capsys.readouterr().err.splitlines() if "cut short" in x]
    assert line.startswith(f"navdtw: warning: {out}: an earlier run was cut short")
    assert _agents(out) == set(AGENTS)
    assert sorted(_all_files(out)) == sorted([*S.outputs.output_names(True), ".navdtw-outputs.json", "my_notes.txt"])
    _manifest_holds(out)


def test_an_unreadable_journal_is_named(tmp_path):
    (tmp_path / navdtw._io.JOURNAL).write_text("{")
    with pytest.raises(navdtw._io.OutputError, match=r"\.navdtw-switch\.json: the journal of an earlier run's switch"):
        navdtw._io.check_replaceable(tmp_path, ["results.json"])


def test_an_immutable_file_fails_the_switch_before_anything_changes(world, tmp_path, monkeypatch, capsys):
    out = tmp_path / "out"
    S.run(write_suite(world, {"oracle": "oracle.json"}, name="m1.toml", settings=FAST), out, progress=False)
    if not _chattr(out / "leaderboard.tex", "+i"):
        pytest.skip("chattr +i is not available here (needs root and a file system with the flag)")
    try:
        before = _all_files(out)
        second = write_suite(world, AGENTS, name="m2.toml", settings=FAST)
        # found before the run does any work ...
        assert main(["suite", "run", str(second), "--out", str(out), "--no-progress"]) == 3
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and f"{out / 'leaderboard.tex'}: cannot replace: it is not writable" in err[0]
        # ... and, made immutable while the run was scoring, at the switch: nothing replaced
        monkeypatch.setattr(navdtw._io, "protected", lambda path: "")
        assert main(["suite", "run", str(second), "--out", str(out), "--no-progress"]) == 3
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and f"{out / 'leaderboard.tex'}: cannot replace: Operation not permitted" in err[0]
        assert "nothing was changed" in err[0]
        assert _all_files(out) == before
        _manifest_holds(out)
    finally:
        _chattr(out / "leaderboard.tex", "-i")


def test_a_full_disk_leaves_the_old_run_whole(world, tmp_path, capsys):
    """A real full disk: the old run's outputs on a tmpfs with little room to spare (root only)."""
    out = tmp_path / "out"
    first = tmp_path / "first"
    S.run(write_suite(world, {"oracle": "oracle.json"}, name="d1.toml", settings=FAST), first, progress=False)
    size = sum(p.stat().st_size for p in first.iterdir() if p.is_file())
    out.mkdir()
    kb = size // 1024 + 64  # room for the old run and its metadata, not for a second copy
    mount = shutil.which("mount")  # tools/check_wheel.sh runs the suite with only a venv on PATH
    if mount is None:
        pytest.skip("no mount command on PATH")
    if subprocess.run([mount, "-t", "tmpfs", "-o", f"size={kb}k", "tmpfs", str(out)], capture_output=True).returncode:
        pytest.skip("cannot mount a small tmpfs here (needs root)")
    try:
        for p in first.iterdir():
            if p.is_file():
                shutil.copy2(p, out / p.name)
        before = _all_files(out)
        second = write_suite(world, AGENTS, name="d2.toml", settings=FAST)
        assert main(["suite", "run", str(second), "--out", str(out), "--no-progress"]) == 3
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "cannot write: No space left on device; nothing was changed" in err[0]
        assert _all_files(out) == before
        _manifest_holds(out)
    finally:
        subprocess.run([shutil.which("umount") or "umount", str(out)], capture_output=True)


def test_an_output_name_taken_by_a_folder(world, tmp_path, capsys):
    out = tmp_path / "out"
    (out / "leaderboard.md").mkdir(parents=True)
    suite = write_suite(world, {"oracle": "oracle.json"}, name="dir.toml", settings=FAST)
    assert main(["suite", "run", str(suite), "--out", str(out), "--no-progress"]) == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"navdtw: error: {out / 'leaderboard.md'}: cannot write: it exists and is not a file"]
    assert [p.name for p in out.iterdir() if p.name != ".cache"] == ["leaderboard.md"]  # nothing written


def test_other_commands_name_the_output_and_exit_3(tmp_path, monkeypatch, capsys):
    out = tmp_path / "demo"
    out.mkdir()
    _refuse(monkeypatch, out, "summary.json", errno.ENOSPC)
    assert main(["demo", "--pairs", "5", "--out", str(out), "--no-figures"]) == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"navdtw: error: {out / 'summary.json'}: cannot write: No space left on device; nothing was changed"]
    assert sorted(p.name for p in out.iterdir()) == []  # nothing half-written, no staging folder left


# ------------------------------------------------------------------------------------------
# one failure, one column; every agent failing; round trips
# ------------------------------------------------------------------------------------------


def _results_table(path: Path, seed: int, nan_at: int | None = None) -> Path:
    rng = np.random.default_rng(seed)
    with open(path, "w") as f:
        for i in range(50):
            row = {"episode_id": str(i), "success": float(rng.random() < 0.5), "spl": rng.random() / 2}
            row["ndtw"] = float("nan") if i == nan_at else rng.random()
            f.write(json.dumps(row) + "\n")
    return path


def test_one_nan_fails_that_column_only(tmp_path, capsys):
    a = _results_table(tmp_path / "a.jsonl", 1, nan_at=3)
    b = _results_table(tmp_path / "b.jsonl", 2)
    out = tmp_path / "out"
    args = [str(a), str(b), "--dataset", "results", "--resamples", "200", "--out", str(out), "--no-progress"]
    assert main(["compare", *args]) == 1
    printed = capsys.readouterr()
    why = "a.jsonl: line 4 (episode_id 3): 'ndtw' is NaN or missing"
    assert f"navdtw: failed: a on results (ndtw): {why}" in printed.err
    row = next(line for line in printed.out.splitlines() if line.startswith("a "))
    assert row.split()[1:] == [row.split()[1], row.split()[2], "failed"]  # SR and SPL kept
    results = json.loads((out / "results.json").read_text())
    assert set(results["datasets"]["results"]["agents"]["a"]) == {"sr", "spl"}
    assert set(results["datasets"]["results"]["agents"]["b"]) == {"sr", "spl", "ndtw"}
    (failure,) = results["failures"]
    assert failure["agent"] == "a" and failure["metric"] == "ndtw" and why in failure["error"]
    md = (out / "leaderboard.md").read_text()
    line = next(x for x in md.splitlines() if x.startswith("| a |"))
    assert line.count("|") == 5 and "failed: a.jsonl: line 4 (episode\\_id 3)" in line.split("|")[4]
    cells = {(r["agent"], r["metric"]): r for r in csv.DictReader(io.StringIO((out / "leaderboard.csv").read_text()))}
    assert cells["a", "ndtw"]["mean"] == "" and why in cells["a", "ndtw"]["failed"]
    assert cells["a", "sr"]["mean"] and cells["a", "sr"]["failed"] == "" and cells["b", "ndtw"]["failed"] == ""
    tex = (out / "leaderboard.tex").read_text()
    assert re.search(r"^a & [^&]+ & [^&]+ & failed \\\\$", tex, re.M) and "Failed: nDTW of a: a.jsonl" in tex
    page = (out / "report.html").read_text()
    assert '"ndtw":[null,null,null,0,"a.jsonl: line 4 (episode_id 3)' in page  # the report's cell
    assert '"explore":{"a":"a","b":"b","metric":"sr"}' in page  # the explorer opens on a Δ both agents have
    assert "failed: " in S.SuiteResults(results)._repr_html_()


def test_when_every_agent_fails_nothing_is_written(world, tmp_path, capsys):
    runs = world / "runs"
    out = tmp_path / "out"
    args = [str(runs / "broken.json"), "--dataset", "r2r", "--split", str(world / "data" / "split.json")]
    args += ["--connectivity", str(world / "data" / "connectivity"), "--resamples", "200", "--no-progress"]
    assert main(["compare", *args, "--out", str(out)]) == 5  # not 1: a script must not read results.json
    printed = capsys.readouterr()
    assert printed.out == "" and "navdtw: failed: broken on r2r: broken.json" in printed.err
    assert f"navdtw: every agent failed; nothing written to {out}" in printed.err
    assert [p for p in out.rglob("*") if p.is_file()] == []
    # an earlier run's outputs stay as they were
    assert main(["compare", str(runs / "oracle.json"), *args[1:], "--out", str(out)]) == 0
    before = _all_files(out)
    assert main(["compare", *args, "--out", str(out)]) == 5
    assert _all_files(out) == before
    # one agent's failure among others is 1: the others' results are written
    assert main(["compare", str(runs / "oracle.json"), *args, "--out", str(out)]) == 1


def _mixed_suite(world: Path) -> Path:
    """Three data sets of three kinds (on a graph, in continuous space, a results table's), two agents."""
    runs = world / "runs"
    continuous_files(world / "data")
    for k, name in enumerate(("mine", "theirs")):
        _results_table(runs / f"{name}_ce.jsonl", 10 + k)
    text = "\n".join(
        [
            "[datasets.grid_val]",
            'dataset = "r2r"',
            'split = "data/split.json"',
            'connectivity = "data/connectivity"',
            "[datasets.ce_val]",
            'dataset = "r2r-ce"',
            'vlnce_episodes = "data/val.json"',
            'vlnce_gt = "data/val_gt.json"',
            "[datasets.ce_logs]",
            'dataset = "results"',
            "[agents.mine]",
            'grid_val = "runs/oracle.json"',
            'ce_val = "data/exact.json"',
            'ce_logs = "runs/mine_ce.jsonl"',
            "[agents.theirs]",
            'grid_val = "runs/lost.json"',
            'ce_val = "data/stay.json"',
            'ce_logs = "runs/theirs_ce.jsonl"',
            "[settings]",
            FAST,
        ]
    )
    (world / "mixed.toml").write_text(text)
    return world / "mixed.toml"


@pytest.mark.parametrize("episodes", ["episodes.parquet", "episodes.csv"])
def test_every_output_table_reads_back(world, tmp_path, monkeypatch, capsys, episodes):
    """episodes.parquet / .csv: each (agent, data set) of every kind read back with compare
    --select gives the same means; leaderboard.csv holds results.json's numbers exactly;
    results.json is what run() returned."""
    if episodes.endswith(".parquet"):
        pytest.importorskip("pyarrow")
    else:
        monkeypatch.setattr(S.outputs, "_episodes_name", lambda: "episodes.csv")
    out = tmp_path / "out"
    results = S.run(_mixed_suite(world), out, progress=False)
    assert not results["failures"] and len(results["datasets"]) == 3
    assert json.loads((out / "results.json").read_text()) == json.loads(json.dumps(results))
    # the command the issue gave, and its hint when the rows are not chosen
    table = out / episodes
    assert main(["compare", str(table), "--dataset", "results", "--select", "agent=mine", "--select",
                 "dataset=ce_logs", "--resamples", "200", "--no-progress"]) == 0  # fmt: skip
    said = capsys.readouterr().err  # the graph data sets' metrics are not this table's: left out, and said
    assert "column(s) 'scan', 'pl', 'ne'" in said and "empty on the rows selected: left out" in said
    assert main(["compare", str(table), "--dataset", "results", "--resamples", "200", "--no-progress"]) == 5
    assert "choose rows with --select agent=NAME --select dataset=NAME" in capsys.readouterr().err
    assert_episodes_read_back(table, results)
    rows = list(csv.DictReader(io.StringIO((out / "leaderboard.csv").read_text())))
    for r in rows:
        v = results["datasets"][r["dataset"]]["agents"][r["agent"]][r["metric"]]
        got = [None if r[k] == "" else float(r[k]) for k in ("mean", "lo", "hi")]
        assert got == [v["mean"], *v["ci"]]
    assert len(rows) == sum(len(a) for ds in results["datasets"].values() for a in ds["agents"].values())


# ------------------------------------------------------------------------------------------
# escaping per format
# ------------------------------------------------------------------------------------------

HOSTILE = {
    "html": "<img src=x onerror=alert(1)>",
    "pipe": "a|b\nc",
    "formula": "=cmd|' /C calc'!A0",
    "latex": 'x_y^z~{}%$#&\\ "q" <a> --b `c\'',
    "ansi": "\x1b[31mred\x1b[0m\u202eevil",
    "md": "*bold* _it_ [link](http://x) `code` # - 1. ~~s~~ $m$",
}


@pytest.fixture(scope="module")
def hostile(world, tmp_path_factory):
    """A run whose agents and data set have hostile names, and a failure whose message quotes one."""
    runs = world / "runs"
    lines = ['[datasets."grid <b>val</b> | x"]', 'dataset = "r2r"', 'split = "data/split.json"']
    lines += ['connectivity = "data/connectivity"', ""]
    for key, name in HOSTILE.items():
        shutil.copy(runs / "near.json", runs / f"h_{key}.json")
        lines += [f"[agents.{json.dumps(name)}]", f'"grid <b>val</b> | x" = "runs/h_{key}.json"', ""]
    (runs / "bad <script>.json").write_text("[{")
    lines += ['[agents."=broken"]', '"grid <b>val</b> | x" = "runs/bad <script>.json"', "", "[settings]", FAST]
    path = world / "hostile.toml"
    path.write_text("\n".join(lines))
    out = tmp_path_factory.mktemp("hostile")
    results = S.run(path, out, progress=False)
    assert len(results["failures"]) == 1
    return out, results


def test_markdown_escapes_for_a_real_renderer(hostile):
    markdown_it = pytest.importorskip("markdown_it")
    out, _ = hostile
    text = (out / "leaderboard.md").read_text()
    page = markdown_it.MarkdownIt("commonmark").enable("table").enable("strikethrough").render(text)
    assert "<img" not in page and "<b>" not in page and "<script" not in page  # shown, never run
    assert "<em>" not in page and "<code>" not in page and "<a " not in page and "<s>" not in page
    board = page.split("<details>")[0]  # the leaderboard, before the pairwise comparisons
    rows = [html.unescape(r) for r in re.findall(r"<tr>\s*<td>(.*?)</td>", board, re.S)]  # the agents' cells
    shown = {**HOSTILE, "pipe": "a|b\\nc", "ansi": "\\x1b[31mred\\x1b[0m\\u202eevil"}  # control characters shown
    assert rows == list(shown.values())
    assert "<h2>grid &lt;b&gt;val&lt;/b&gt; | x</h2>" in page
    assert "bad &lt;script&gt;.json" in page  # the failure's message


def test_csv_cells_cannot_run_as_formulas(hostile):
    out, _ = hostile
    rows = list(csv.DictReader(io.StringIO((out / "leaderboard.csv").read_text())))
    agents = {r["agent"] for r in rows}
    assert "'=cmd|' /C calc'!A0" in agents and "=cmd|' /C calc'!A0" not in agents
    assert all(not r[k].startswith(("=", "+", "-", "@")) for r in rows for k in ("dataset", "agent", "metric"))
    assert all(r["mean"] == "" or float(r["mean"]) == float(r["mean"]) for r in rows)  # numbers stay numbers
    assert S.tables.csv_cell("-1.5") == "'-1.5" and S.tables.csv_cell("a=b") == "a=b"


def test_latex_compiles_with_every_name(hostile, tmp_path):
    out, _ = hostile
    tex = (out / "leaderboard.tex").read_text()
    text = "\n".join(line for line in tex.splitlines() if not line.startswith("\\label"))
    for bad in ("<img", "a|b", '"q"', "\x1b", "\u202e", "--b"):
        assert bad not in text
    _compile(tmp_path, tex)


def test_the_terminal_shows_control_characters_instead_of_running_them(hostile, capsys):
    _, results = hostile
    text = S.format_leaderboard(results)
    assert "\x1b" not in text and "\u202e" not in text and "\\x1b[31mred" in text and "\\u202e" in text
    assert "a|b c" not in text and "a|b\\nc" in text  # the newline cannot break the table
    from navdtw.cli._output import print_suite as _print_suite

    _print_suite(results, None)
    printed = capsys.readouterr()
    assert "\x1b" not in printed.out + printed.err


def test_html_escapes(hostile):
    _, results = hostile
    page = results._repr_html_()
    assert "<img" not in page and html.escape(HOSTILE["html"]) in page


CLASHING = {"newline": "x\ny", "space": "x y", "underscore": "x_y", "tab": "x\ty", "escape": "x\x1b[2Jy"}


@pytest.fixture(scope="module")
def clashing(world, tmp_path_factory):
    """Names that one blank or a control character tells apart: agents, and data sets "a b" and
    "a_b" (one slug for a LaTeX label), one named with a clear-screen sequence."""
    runs = world / "runs"
    lines = []
    sets = ["a b", "a_b", "c\x1b[2Jd"]
    for ds in sets:
        lines += [f"[datasets.{json.dumps(ds)}]", 'dataset = "r2r"', 'split = "data/split.json"']
        lines += ['connectivity = "data/connectivity"', ""]
    for key, name in CLASHING.items():
        shutil.copy(runs / "near.json", runs / f"c_{key}.json")
        lines += [f"[agents.{json.dumps(name)}]", *(f'{json.dumps(ds)} = "runs/c_{key}.json"' for ds in sets), ""]
    lines += ["[settings]", FAST]
    path = world / "clashing.toml"
    path.write_text("\n".join(lines))
    out = tmp_path_factory.mktemp("clashing")
    return out, S.run(path, out, progress=False, report=False)


def test_different_names_stay_distinct_in_every_output(clashing):
    out, results = clashing
    n = len(CLASHING)
    md = (out / "leaderboard.md").read_text()
    rows = [line.split("|")[1].strip() for line in md.split("## Warnings")[0].splitlines() if line.startswith("| x")]
    assert len(rows) == 3 * n and len(set(rows)) == n  # n agents, each shown its own way, on 3 data sets
    assert "| x\\\\ny |" in md and "| x y |" in md and "| x\\\\x1b\\[2Jy |" in md
    tex = (out / "leaderboard.tex").read_text()
    names = [line.split(" & ")[0] for line in tex.splitlines() if line.startswith("x")]
    assert len(names) == 3 * n and len(set(names)) == n and "x\\textbackslash{}ny" in names
    labels = re.findall(r"\\label\{(.*?)\}", tex)
    assert labels == ["tab:navdtw-a-b", "tab:navdtw-a-b-2", "tab:navdtw-c--2Jd"]
    board = list(csv.DictReader(io.StringIO((out / "leaderboard.csv").read_text())))
    assert {r["agent"] for r in board} == {"x\\ny", "x y", "x_y", "x\\ty", "x\\x1b[2Jy"}
    assert {r["dataset"] for r in board} == {"a b", "a_b", "c\\x1b[2Jd"}
    text = (out / "leaderboard.csv").read_text()
    assert "\x1b" not in text and "\t" not in text and text.count("\n") == len(board) + 1  # one line per row
    page = results._repr_html_()
    assert "x\\ny" in page and "\x1b" not in page and "x y" in page
    term = S.format_leaderboard(results)
    assert "x\\ny" in term and "x\\x1b[2Jy" in term and "\x1b" not in term


def test_names_that_every_output_would_show_alike_are_refused(world, tmp_path, capsys):
    """An agent named with a backslash and an n, beside one with a newline: escaped, both read
    x\\ny everywhere; refused before any work, naming both (repr tells them apart)."""
    runs = world / "runs"
    lines = ["[datasets.val]", 'dataset = "r2r"', 'split = "data/split.json"', 'connectivity = "data/connectivity"']
    for name, file in (("x\ny", "near.json"), ("x\\ny", "lost.json")):
        lines += [f"[agents.{json.dumps(name)}]", f'val = "runs/{file}"']
    suite = world / "alike.toml"
    suite.write_text("\n".join([*lines, "[settings]", FAST]))
    assert main(["suite", "run", str(suite), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "navdtw: error: alike.toml: agents 'x\\ny' and 'x\\\\ny' would be shown alike (x\\ny) in every output; "
        "rename one (navdtw compare: NAME=FILE)"
    ]
    for name in ("x\ny", "x\\ny"):  # the same through compare, where a file's name is the agent's
        shutil.copy(runs / "near.json", tmp_path / f"{name}.json")
    args = [str(tmp_path / "x\ny.json"), str(tmp_path / "x\\ny.json"), "--dataset", "r2r", "--no-progress"]
    args += ["--split", str(world / "data" / "split.json"), "--connectivity", str(world / "data" / "connectivity")]
    assert main(["compare", *args]) == 2
    assert "would be shown alike (x\\ny) in every output" in capsys.readouterr().err


def test_latex_labels_are_unique_and_the_names_compile(clashing, tmp_path):
    out, _ = clashing
    tex = (out / "leaderboard.tex").read_text()
    _compile(tmp_path, tex)
    log = _compile(tmp_path, tex)  # the second run reads the labels back from paper.aux
    assert "multiply defined" not in log and "multiply-defined" not in log


def test_the_progress_bar_shows_control_characters(world, monkeypatch, capsys):
    tqdm = pytest.importorskip("tqdm.auto")

    class Eager(tqdm.tqdm):  # draws on every step, not at most every 0.1 s
        def __init__(self, *args, **kw):
            super().__init__(*args, **{**kw, "mininterval": 0, "miniters": 1})

    monkeypatch.setattr(tqdm, "tqdm", Eager)
    name = json.dumps("v\x1b[2J\nx")
    text = suite_text({"oracle": "oracle.json"}, settings=FAST)
    text = text.replace("[datasets.grid_val]", f"[datasets.{name}]").replace("grid_val = ", f"{name} = ")
    path = world / "progress.toml"
    path.write_text(text)
    S.run(path, None, progress=True)
    err = capsys.readouterr().err
    # off a terminal the bar's last state stays and ends its line (issue 36 item 11): that one "\n" only
    assert "statistics of v\\x1b[2J\\nx" in err and "\x1b[2J" not in err and "\n" not in err[:-1]
    assert err.endswith("\n")


def test_the_report_shows_control_characters_as_the_tables_do():
    """report.js's esc() is term_escape, then HTML escaping (run in node, when there is one)."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    js = (Path(S.__file__).parent.parent / "_report" / "report.js").read_text()
    helpers = js[js.index("  const CONTROL") : js.index("  function el(")]
    texts = ["".join(map(chr, range(0xA0))), "x\ny <b>&'\"", "\u202eevil\u2066\u061c", "plain é 中"]
    script = helpers + f"console.log(JSON.stringify({json.dumps(texts)}.map(esc)));"
    shown = json.loads(subprocess.run([node, "-e", script], capture_output=True, text=True, check=True).stdout)
    assert [html.unescape(x) for x in shown] == [S.tables.term_escape(t) for t in texts]


# ------------------------------------------------------------------------------------------
# LaTeX: the metrics, the forms, the width
# ------------------------------------------------------------------------------------------


def _compile(folder: Path, tex: str, textwidth: str = "455pt") -> str:
    """pdfLaTeX on ``tex`` in a two-column article with ACL's text width (the narrowest of the common
    two-column venues); returns the log. Skips without pdflatex."""
    if not shutil.which("pdflatex"):
        pytest.skip(
            "pdflatex is not installed (bash tools/install_latex.sh: texlive-latex-base, texlive-latex-recommended)"
        )
    (folder / "lb.tex").write_text(tex)
    (folder / "paper.tex").write_text(
        "\\documentclass[10pt,twocolumn]{article}\n\\usepackage[T1]{fontenc}\n\\usepackage{booktabs}\n"
        f"\\setlength{{\\textwidth}}{{{textwidth}}}\n\\begin{{document}}\n\\input{{lb}}\nText.\n\\end{{document}}\n"
    )
    r = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "paper.tex"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
    )
    log = (folder / "paper.log").read_text(errors="replace")
    assert r.returncode == 0, log[-3000:]
    return log


def test_the_default_latex_table_fits_a_two_column_paper(world, tmp_path):
    """Issue 19: leaderboard.tex had 15 metric columns with their intervals, 2-2.5x a page's width
    (943-1168 pt on the README's suite against ACL's 455 pt). Now: the headline metrics, the
    intervals under the means."""
    out = tmp_path / "out"
    results = S.run(write_suite(world, AGENTS, name="tex.toml", settings=FAST), out, progress=False, report=False)
    tex = (out / "leaderboard.tex").read_text()
    log = _compile(tmp_path, tex)
    assert "Overfull \\hbox" not in log
    head = next(line for line in tex.splitlines() if line.startswith("Agent &"))
    assert head.count("&") == len(S.tables.LATEX_METRICS["*"]) - 1  # no GP on R2R: 7 metric columns
    assert len(results["datasets"]["grid_val"]["agents"]["oracle"]) == 13  # every metric elsewhere


def test_metric_selection_and_the_compact_form(world, tmp_path, capsys):
    suite = write_suite(world, AGENTS, name="sel.toml", settings=FAST)
    out = tmp_path / "o"
    args = ["suite", "run", str(suite), "--out", str(out), "--no-progress", "--no-report"]
    assert main([*args, "--metrics", "sr,ndtw,ne", "--latex", "compact"]) == 0
    text = capsys.readouterr().out
    assert "SR↑ (%)  nDTW↑ (%)  NE↓ (m)" in text and "SPL" not in text
    results = json.loads((out / "results.json").read_text())
    assert results["metrics"] == ["sr", "ndtw", "ne"]
    assert list(results["datasets"]["grid_val"]["agents"]["oracle"]) == ["sr", "ndtw", "ne"]
    assert {c["metric"] for c in results["datasets"]["grid_val"]["comparisons"]} == {"sr", "ndtw", "ne"}
    tex = (out / "leaderboard.tex").read_text()
    assert "Agent & SR$\\uparrow$ & nDTW$\\uparrow$ & NE$\\downarrow$ \\\\" in tex
    assert "\\scriptsize [" not in tex and "Intervals: see leaderboard.md." in tex
    # the same in the suite file; a bad name is one line, exit 2
    (world / "sel2.toml").write_text('metrics = ["spl"]\nlatex = "compact"\n' + suite_text({"oracle": "oracle.json"}))
    assert S.load_suite(world / "sel2.toml").metrics == ("spl",)
    assert main([*args, "--metrics", "sr,nope"]) == 2
    assert "--metrics: unknown metric 'nope'" in capsys.readouterr().err


# ------------------------------------------------------------------------------------------
# warnings carried everywhere; provenance
# ------------------------------------------------------------------------------------------


def test_warnings_reach_the_terminal_results_and_report(world, tmp_path, capsys):
    preds = json.loads((world / "runs" / "oracle.json").read_text())
    dup = [*preds, {**preds[0], "trajectory": preds[5]["trajectory"]}]  # a duplicate id, kept first
    (world / "runs" / "dup.json").write_text(json.dumps(dup))
    astray = [dict(p) for p in preds]
    for p in astray[:4]:  # four trajectories that do not start at their reference's start
        p["trajectory"] = trajectory(["scanA_44" if p["trajectory"][0][0].startswith("scanA") else "scanB_44"])
    (world / "runs" / "astray.json").write_text(json.dumps(astray))
    text = suite_text({"astray": "astray.json"}, settings=FAST).replace(
        "[settings]", '[agents.dup]\ngrid_val = "runs/dup.json"\n\n[settings]'
    )
    suite = world / "warn.toml"
    suite.write_text(text)
    out = tmp_path / "o"
    assert main(["suite", "run", str(suite), "--out", str(out), "--no-progress"]) == 0
    err = capsys.readouterr().err
    results = json.loads((out / "results.json").read_text())
    messages = [(w["agent"], w["dataset"], w["message"]) for w in results["warnings"]]
    dup_msg = next(m for a, d, m in messages if a == "dup" and d == "grid_val")
    assert "kept the first entry of duplicated ids" in dup_msg and "100_0" in dup_msg
    start = next(m for a, d, m in messages if a == "astray" and d == "grid_val")
    assert start.startswith("astray.json: 4 of 120 trajectories do not start at their reference's start")
    for needle in (dup_msg, start):
        assert needle in err and needle.replace("_", "\\_") in (out / "leaderboard.md").read_text()
    page = (out / "report.html").read_text()
    assert "trajectories do not start at their reference" in page and 'id="warnings"' in page
    # navdtw score says it too (it was silent without --strict)
    args = [
        "score",
        "--split",
        str(world / "data" / "split.json"),
        "--connectivity",
        str(world / "data" / "connectivity"),
    ]
    assert main([*args, "--predictions", str(world / "runs" / "astray.json"), "--out", str(tmp_path / "s")]) == 0
    assert "navdtw: warning: astray.json: 4 of 120 trajectories" in capsys.readouterr().err
    assert json.loads((tmp_path / "s" / "summary.json").read_text())["warnings"] == [start]


def test_provenance(world, tmp_path, capsys):
    suite = write_suite(world, {"oracle": "oracle.json"}, name="prov.toml", settings=FAST)
    out = tmp_path / "o"
    argv = ["suite", "run", str(suite), "--out", str(out), "--no-progress", "--no-report"]
    assert main(argv) == 0
    p = json.loads((out / "results.json").read_text())["provenance"]
    assert p["command"] == ["navdtw", *argv]
    assert p["suite_file"] == {"path": str(suite.resolve()), "sha256": hashlib.sha256(suite.read_bytes()).hexdigest()}
    by = {(i["dataset"], i["agent"], i["option"]): i for i in p["inputs"]}
    split = by[("grid_val", None, "split")]
    assert split["path"] == str((world / "data" / "split.json").resolve())
    assert split["sha256"] == hashlib.sha256((world / "data" / "split.json").read_bytes()).hexdigest()
    pred = by[("grid_paper", "oracle", "predictions")]
    assert pred["sha256"] == hashlib.sha256((world / "runs" / "oracle.json").read_bytes()).hexdigest()
    conn = world / "data" / "connectivity"  # a folder: over its files' names and digests
    want = hashlib.sha256(
        "".join(f"{f.name}\0{hashlib.sha256(f.read_bytes()).hexdigest()}\n" for f in sorted(conn.iterdir())).encode()
    ).hexdigest()
    assert by[("grid_val", None, "connectivity")]["sha256"] == want
    import numpy
    import scipy

    assert (p["numpy"], p["scipy"]) == (numpy.__version__, scipy.__version__) and p["python"]
    assert S.run(suite, None, progress=False)["provenance"]["command"] is None  # from Python: the suite file


@pytest.mark.data
def test_a_navigation_only_reverie_file_is_said(data_dir, tmp_path):
    """A REVERIE file without predObjId is scored navigation-only (no RGS, RGSPL): said once."""
    split = json.loads((data_dir / "reverie" / "REVERIE_val_unseen.json").read_text())
    preds = [
        {"instr_id": f"{e['id']}_{k}", "trajectory": trajectory(e["path"])}
        for e in split
        for k in range(len(e["instructions"]))
    ]
    (tmp_path / "nav_only.json").write_text(json.dumps(preds))
    results = S.compare(
        [tmp_path / "nav_only.json"],
        dataset="reverie",
        split=data_dir / "reverie" / "REVERIE_val_unseen.json",
        connectivity=data_dir / "matterport3dsimulator" / "connectivity",
        objects=data_dir / "reverie" / "BBox_val_scans.json.gz",
        settings={"resamples": 100},
        progress=False,
    )
    (w,) = results["warnings"]
    assert w["agent"] == "nav_only" and "scored navigation-only, without RGS and RGSPL" in w["message"]
    assert "rgs" not in results["datasets"]["reverie"]["agents"]["nav_only"]
