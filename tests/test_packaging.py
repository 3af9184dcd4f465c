"""The installed distribution's metadata: one version (also in CITATION.cff), the licence, shipped,
and the Python versions it claims (classifiers) = the ones the release builds wheels for."""

from __future__ import annotations

import importlib.metadata as md
import re
import sys
from pathlib import Path

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
