"""Two navdtw commands writing into one output folder at once (issue 36 item 12): the second waits
for the first's lock on the folder, says so, and then writes; the lock is re-entrant in a process."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings

import pytest

from navdtw._io import OutputWarning, folder_lock, output_folder, read_manifest, sha256_of

HOLD = """
import sys, time
from pathlib import Path
from navdtw._io import folder_lock
out = Path(sys.argv[1])
with folder_lock(out):
    print("held", flush=True)
    sys.stdin.readline()  # held until the test says
    (out / "released").write_text("1")
"""


@pytest.mark.skipif(sys.platform == "win32", reason="the POSIX lock (flock on the folder)")
def test_a_second_command_waits_for_the_first_and_says_so(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    hold = [sys.executable, "-c", HOLD, str(out)]
    demo = [sys.executable, "-m", "navdtw", "demo", "--pairs", "5", "--no-figures", "--out", str(out)]
    with subprocess.Popen(hold, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) as holder:
        try:
            assert holder.stdout.readline().strip() == "held"
            with subprocess.Popen(demo, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as second:
                line = second.stderr.readline()  # it says it waits, before it writes anything
                assert "another navdtw command is writing into this output folder; waiting for it to finish" in line
                assert str(out) in line and second.poll() is None and not (out / "summary.json").exists()
                holder.stdin.write("\n")
                holder.stdin.flush()
                assert holder.wait(timeout=60) == 0
                stdout, _ = second.communicate(timeout=300)
                assert second.returncode == 0, stdout
        finally:
            holder.kill()
    assert (out / "released").is_file() and (out / "summary.json").is_file()
    listed = read_manifest(out)
    assert listed and listed["summary.json"] == sha256_of(out / "summary.json")


@pytest.mark.skipif(sys.platform == "win32", reason="the POSIX lock (flock on the folder)")
def test_two_commands_at_once_into_one_folder_both_succeed(tmp_path):
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "navdtw", "demo", "--pairs", "5", "--no-figures", "--out", str(out)]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(3)]
    for p in procs:
        with p:
            _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    listed = read_manifest(out)
    assert listed is not None and all(sha256_of(out / n) == h for n, h in listed.items())
    assert json.loads((out / "summary.json").read_text())["pairs"] == 5
    assert not list(out.glob(".navdtw-switch*")) and not list(out.glob("*.tmp")) and not list(out.glob("*.old"))


def test_the_lock_is_reentrant_and_released(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error", OutputWarning)  # no waiting on oneself
        with folder_lock(tmp_path), folder_lock(tmp_path), output_folder(tmp_path) as stage:
            (stage / "a.txt").write_text("x")
        with output_folder(tmp_path) as stage:  # released: taken again
            (stage / "a.txt").write_text("y")
    assert (tmp_path / "a.txt").read_text() == "y"
    with folder_lock(tmp_path / "not yet"):  # a folder that does not exist yet: nothing to hold
        pass
