"""The hand-written stubs of the compiled module are valid and used: mypy checks a usage file,
and a deliberately wrong annotation is caught."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mypy")

USAGE = Path(__file__).parent / "typecheck" / "usage.py"


def _mypy(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--follow-imports=silent",
            "--ignore-missing-imports",
            "--no-incremental",
            str(path),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_usage_type_checks():
    proc = _mypy(USAGE)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_stubs_catch_a_wrong_type(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("from navdtw import _core\nflag: str = _core.simd_available()\n")
    proc = _mypy(bad)
    assert proc.returncode == 1 and "simd_available" not in proc.stderr
    assert 'has type "bool", variable has type "str"' in proc.stdout
