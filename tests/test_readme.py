"""The README's Python examples run as written (in order, in one namespace), so they cannot rot.

Blocks that read the real data run only when it is present, with its path rewritten to the data
folder the tests found."""

from __future__ import annotations

import re

import pytest
from conftest import REPO, find_data_dir

README = (REPO / "README.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"```python\n(.*?)```", README, re.S)


def _needs_data(block: str) -> bool:
    return "../shared/data" in block or re.search(r"\bgraphs\b", block) is not None


def test_readme_examples_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # examples that write files write them here
    data = find_data_dir()
    ns: dict = {"__name__": "readme"}
    ran = 0
    for k, block in enumerate(BLOCKS):
        if _needs_data(block) and data is None:
            continue
        code = block.replace("../shared/data", str(data)) if data is not None else block
        exec(compile(code, f"README python block {k}", "exec"), ns)
        ran += 1
    assert ran >= 4
    navdtw = ns["navdtw"]
    # Values the README states.
    assert navdtw.dtw(ns["R"], ns["Q"]) == 2.0
    assert navdtw.dtw([0, 1, 2], [0, 2], distances=ns["D"]) == 1.0
    if data is not None:
        summary = ns["scores"].summary(percent=True)
        assert summary["sr"] == 100.0 and summary["ne"] == 0.0
        assert summary["pl"] == pytest.approx(9.4797, abs=1e-4)
        assert summary["spl"] == pytest.approx(100.0, abs=1e-4)


def test_readme_commands_exist():
    """Every `navdtw <command>` the README shows is a real subcommand."""
    from navdtw.cli import build_parser

    commands = set(re.findall(r"^navdtw (\w+)", README, re.M))
    assert commands >= {"demo", "score", "baseline"}
    parser = build_parser()
    for cmd in commands:
        with pytest.raises(SystemExit) as exit_info:
            parser.parse_args([cmd, "--help"])
        assert exit_info.value.code == 0
