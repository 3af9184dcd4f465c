"""The installed distribution's metadata: one version (also in CITATION.cff and the CHANGELOG's top
heading, tools/release.py), the licence, shipped, and the Python versions it claims (classifiers) =
the ones the release builds wheels for."""

from __future__ import annotations

import importlib.metadata as md
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import navdtw


def test_distribution_version_is_the_package_version():
    # pyproject.toml reads the version from navdtw/__init__.py (scikit-build-core's regex provider).
    assert md.version("navdtw") == navdtw.__version__


def test_licence_is_declared_and_shipped():
    meta = md.metadata("navdtw")
    assert meta["License-Expression"] == "MIT"
    files = md.files("navdtw") or []
    licences = [f for f in files if f.name == "LICENSE" and ".dist-info" in str(f)]
    assert licences, "the dist-info carries no LICENSE"
    assert "MIT License" in licences[0].read_text()


def test_citation_names_the_package_version():
    # CITATION.cff sits beside tests/ in the repository and the sdist.
    text = (Path(__file__).resolve().parents[1] / "CITATION.cff").read_text(encoding="utf-8")
    versions = re.findall(r"^version: *\"?([^\"\n]+)\"?$", text, re.MULTILINE)
    assert versions == [navdtw.__version__]


def test_classifiers_name_exactly_the_pythons_wheels_are_built_for():
    # pyproject.toml sits beside tests/ in the repository and the sdist (check_wheel.sh copies it).
    if sys.version_info >= (3, 11):
        import tomllib
    else:
        import tomli as tomllib  # navdtw's own dependency below 3.11
    with open(Path(__file__).resolve().parents[1] / "pyproject.toml", "rb") as f:
        project = tomllib.load(f)
    built = {f"3.{m}" for m in re.findall(r"\bcp3(\d+)-", project["tool"]["cibuildwheel"]["build"])}
    meta = md.metadata("navdtw")
    claimed = {
        c.rsplit(" :: ", 1)[1]
        for c in meta.get_all("Classifier") or []
        if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)
    }
    assert claimed == built
    oldest = min(built, key=lambda v: int(v.split(".")[1]))
    assert meta["Requires-Python"] == f">={oldest}"


RELEASE_TOOL = Path(__file__).resolve().parents[1] / "tools" / "release.py"


def _release(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(root / "tools" / "release.py"), *args], capture_output=True, text=True, timeout=60
    )


@pytest.mark.skipif(not RELEASE_TOOL.is_file(), reason="no tools/ beside tests/ (an sdist or a wheel test)")
def test_version_agrees_in_init_citation_and_changelog():
    proc = _release(RELEASE_TOOL.parents[1], "--check")
    assert proc.returncode == 0, proc.stderr


@pytest.mark.skipif(not RELEASE_TOOL.is_file(), reason="no tools/ beside tests/ (an sdist or a wheel test)")
def test_release_sets_a_dated_non_dev_version_everywhere(tmp_path):
    """tools/release.py on a copy: a release X.Y.Z is dated in the CHANGELOG and CITATION.cff and is
    what the tag must name; the next .devN opens a new (unreleased) section; mismatches are named."""
    repo = RELEASE_TOOL.parents[1]
    (tmp_path / "tools").mkdir()
    (tmp_path / "python" / "navdtw").mkdir(parents=True)
    shutil.copy(RELEASE_TOOL, tmp_path / "tools")
    shutil.copy(repo / "python" / "navdtw" / "__init__.py", tmp_path / "python" / "navdtw")
    for name in ("CITATION.cff", "CHANGELOG.md"):
        shutil.copy(repo / name, tmp_path)
    init = tmp_path / "python" / "navdtw" / "__init__.py"
    base = re.search(r'^__version__ = "(\d+\.\d+\.\d+)', init.read_text(), re.M)[1]

    bad = _release(tmp_path, "--check", "--tag", f"v{base}")  # the development version is not a release
    assert bad.returncode == 1 and "is a development version" in bad.stderr
    assert _release(tmp_path, base, "--date", "2030-01-02").returncode == 0
    assert f'__version__ = "{base}"\n' in init.read_text()
    assert f'version: "{base}"\ndate-released: "2030-01-02"\n' in (tmp_path / "CITATION.cff").read_text()
    assert f"\n## {base} (2030-01-02)\n" in (tmp_path / "CHANGELOG.md").read_text()
    assert _release(tmp_path, "--check", "--tag", f"v{base}").returncode == 0
    wrong = _release(tmp_path, "--check", "--tag", "v9.9.9")
    assert wrong.returncode == 1 and f"__version__ is {base}" in wrong.stderr

    major, minor, _ = base.split(".")
    after = f"{major}.{int(minor) + 1}.0"
    assert _release(tmp_path, f"{after}.dev0").returncode == 0
    changelog = (tmp_path / "CHANGELOG.md").read_text()
    assert changelog.index(f"## {after} (unreleased)") < changelog.index(f"## {base} (2030-01-02)")
    assert "date-released" not in (tmp_path / "CITATION.cff").read_text()
    assert _release(tmp_path, "--check").returncode == 0

    (tmp_path / "CITATION.cff").write_text((tmp_path / "CITATION.cff").read_text().replace(f"{after}.dev0", "0.0.1"))
    mismatch = _release(tmp_path, "--check")
    assert mismatch.returncode == 1 and "CITATION.cff: version '0.0.1'" in mismatch.stderr


def test_docs_extra_installs_on_every_supported_python():
    """Sphinx >= 8.1 needs Python 3.10: the docs extra's requirements are marked by Python version, so
    `pip install "navdtw[docs]"` on 3.9 installs navdtw alone instead of failing to resolve."""
    from packaging.requirements import Requirement

    if sys.version_info >= (3, 11):
        import tomllib
    else:
        import tomli as tomllib
    with open(Path(__file__).resolve().parents[1] / "pyproject.toml", "rb") as f:
        docs = [Requirement(r) for r in tomllib.load(f)["project"]["optional-dependencies"]["docs"]]
    assert docs
    for req in docs:
        assert req.marker is not None, f"{req}: no Python version marker"
        assert not req.marker.evaluate({"python_version": "3.9"}), req
        assert req.marker.evaluate({"python_version": "3.10"}), req
