"""The installed distribution's metadata: one version, the licence, the Python range the wheels cover."""

from __future__ import annotations

import importlib.metadata as md

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
