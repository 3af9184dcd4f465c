"""The documentation site documents every public name and every data set kind.

The sources (docs/api/*.rst) are checked always; the built site's object inventory
(docs/_build/html/objects.inv, written by ``sphinx-build -W --keep-going -b html docs
docs/_build/html``, which CI runs before the tests) when it exists."""

from __future__ import annotations

import importlib
import re
import zlib

import pytest
from conftest import REPO

import navdtw

DOCS = REPO / "docs"
INVENTORY = DOCS / "_build" / "html" / "objects.inv"
# The public names the reference must list: every name in these modules' __all__.
PUBLIC = ("navdtw", "navdtw.datasets", "navdtw.stats")
# `.. autofunction:: navdtw.dtw`, `.. py:module:: navdtw.suite`, ...
DIRECTIVE = re.compile(r"^\.\. (?:auto\w+|py:\w+):: (?P<name>[\w.]+)(?P<options>(?:\n   :[\w-]+:.*)*)", re.M)


def public_names() -> set[str]:
    return {f"{module}.{name}" for module in PUBLIC for name in importlib.import_module(module).__all__}


def documented_in_sources() -> set[str]:
    """Names the API pages document: each directive's target, and the members (``__all__``) of an
    ``automodule`` with ``:members:``."""
    names = set()
    for page in sorted((DOCS / "api").glob("*.rst")):
        for m in DIRECTIVE.finditer(page.read_text(encoding="utf-8")):
            module_option = re.search(r":module: ([\w.]+)", m["options"])
            names.add(f"{module_option[1]}.{m['name']}" if module_option else m["name"])
            if m.group(0).startswith(".. automodule::") and ":members:" in m["options"]:
                module = importlib.import_module(m["name"])
                members = getattr(module, "__all__", [n for n in dir(module) if not n.startswith("_")])
                names |= {f"{m['name']}.{member}" for member in members}
    return names


def inventory_names() -> set[str]:
    """Every Python object of the built site (objects.inv: four header lines, then zlib)."""
    raw = INVENTORY.read_bytes()
    body = raw.split(b"\n", 4)[4]
    lines = zlib.decompress(body).decode("utf-8").splitlines()
    return {line.split(" ", 1)[0] for line in lines if " py:" in line}


def test_api_sources_list_every_public_name():
    missing = sorted(public_names() - documented_in_sources())
    assert not missing, f"not in docs/api/*.rst: {missing}"


def test_built_site_lists_every_public_name():
    if not INVENTORY.is_file():
        pytest.skip("the site is not built (sphinx-build -W --keep-going -b html docs docs/_build/html)")
    missing = sorted(public_names() - inventory_names())
    assert not missing, f"not in the built site's objects.inv (rebuild it if it is stale): {missing}"


def test_source_check_can_fail():
    """The source check sees a name that no page documents."""
    assert "navdtw.dtw" in documented_in_sources()
    assert "navdtw.no_such_function" not in documented_in_sources()


def test_every_data_set_kind_has_a_page():
    """A new kind in navdtw.datasets.DATASETS needs docs/datasets/<kind>.md, listed in the index's
    toctree (HA-VLN, scored by navdtw.humanaware, has one too)."""
    index = (DOCS / "datasets" / "index.md").read_text(encoding="utf-8")
    (toctree,) = re.findall(r"```\{toctree\}\n(.*?)```", index, re.S)
    listed = {line.strip() for line in toctree.splitlines() if line.strip() and not line.startswith(":")}
    kinds = {*navdtw.datasets.DATASETS, "ha-vln"}
    assert kinds <= listed, f"kinds without a line in docs/datasets/index.md's toctree: {sorted(kinds - listed)}"
    for kind in sorted(listed):
        page = DOCS / "datasets" / f"{kind}.md"
        assert page.is_file(), f"{page} is missing"
        assert f"`{kind}`" in index, f"docs/datasets/index.md's table has no row for {kind}"
