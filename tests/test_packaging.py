"""The installed distribution's metadata: one version (also in CITATION.cff) and the licence, shipped."""

from __future__ import annotations

import importlib.metadata as md
import re
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
