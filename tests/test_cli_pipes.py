"""The command line's output piped (issue 36 item 11): the progress bar, off a terminal, ends its
line and names the command, so the table printed next starts a line of its own."""

from __future__ import annotations

import subprocess
import sys

import pytest
from eval_writers import episodes, navid


def test_the_bar_ends_its_line_and_names_the_command(tmp_path):
    pytest.importorskip("tqdm")
    for name, seed in (("a", 1), ("b", 2)):
        (tmp_path / name).mkdir()
        navid(tmp_path / name, episodes(12, seed=seed))
    proc = subprocess.run(
        [sys.executable, "-m", "navdtw", "compare", "a/log", "b/log", "--dataset", "results", "--resamples", "100"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,  # 2>&1
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout
    lines = proc.stdout.split("\n")
    table = next(k for k, line in enumerate(lines) if "results: results, convention" in line)
    assert lines[table].startswith("results: results, convention"), repr(lines[table])  # not after the bar
    assert "navdtw compare: 100%" in lines[table - 1]
    assert "suite:" not in proc.stdout
