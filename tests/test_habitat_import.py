"""``import navdtw.habitat`` where habitat cannot be imported: one line saying what to install.

Runs everywhere (no habitat-lab needed): each case imports navdtw.habitat in a fresh interpreter
where ``habitat`` is missing, or is a stand-in that fails as habitat-lab 0.3 does without
habitat-sim (``import habitat`` imports magnum, habitat-sim's bindings, which pip cannot install).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def _import_error(tmp_path: Path, prelude: str) -> str:
    code = f"{prelude}\ntry:\n    import navdtw.habitat\nexcept ModuleNotFoundError as exc:\n    print(exc.name, exc)\n"
    code += "else:\n    print('imported')"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_without_habitat_lab_the_error_says_what_to_install(tmp_path):
    message = _import_error(tmp_path, "import sys; sys.modules['habitat'] = None")
    # still a ModuleNotFoundError naming the module (tools that skip a missing framework read .name)
    name, _, message = message.partition(" ")
    assert name.split(".")[0] == "habitat", name
    assert message.startswith("navdtw.habitat needs habitat-lab: pip install habitat-lab"), message
    assert "habitat-sim" in message and "\n" not in message


def test_habitat_lab_without_habitat_sim_is_said(tmp_path):
    """pip installs habitat-lab 0.3 without habitat-sim; its ``import habitat`` then fails on magnum."""
    (tmp_path / "habitat").mkdir()
    (tmp_path / "habitat" / "__init__.py").write_text("import magnum_not_installed_here as mn\n")
    (tmp_path / "habitat" / "core").mkdir()
    (tmp_path / "habitat" / "core" / "__init__.py").write_text("")
    (tmp_path / "habitat" / "core" / "registry.py").write_text("registry = None\n")
    message = _import_error(tmp_path, "")
    assert message.startswith(
        "magnum_not_installed_here navdtw.habitat: import habitat failed (No module named 'magnum_not_installed_here')"
    )
    assert "habitat-sim" in message and "conda" in message and "\n" not in message
