"""docs/design.md is the code's: its table of layers is ``LAYERS`` of tests/test_import_rules.py,
row for row and module for module, so the page cannot drift from the rule the tests enforce."""

from __future__ import annotations

import re
from pathlib import Path

from test_import_rules import LAYERS

DESIGN = Path(__file__).resolve().parents[1] / "docs" / "design.md"


def page_layers(text: str) -> list[tuple[str, set[str]]]:
    """The rows of the table under "## The layers": (layer, the modules its cell names)."""
    section = text.split("## The layers", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 3 or cells[0] in ("layer", "") or set(cells[0]) <= {"-"}:
            continue
        names = set()
        for token in re.findall(r"`([^`]+)`", cells[1]):
            if token.endswith(".py") or "*" in token:  # `__init__.py`, `datasets.*`: covered by their package
                continue
            names.add(token if token == "navdtw" else f"navdtw.{token}")
        rows.append((cells[0], names))
    return rows


def test_the_design_page_table_is_layers():
    page = page_layers(DESIGN.read_text(encoding="utf-8"))
    assert [name for name, _ in page] == [name for name, _ in LAYERS], "the layers, in order"
    for (name, modules), (_, code) in zip(page, LAYERS):
        assert modules == set(code), f"layer {name!r}: the page names {sorted(modules ^ set(code))} differently"


def test_page_layers_reads_a_row():
    row = "| a | `_x` (C++), `y` and `y.*`, the package `navdtw` (`__init__.py`) | z |"
    text = f"## The layers\n\n| layer | modules | what |\n|---|---|---|\n{row}\n\n## Next\n"
    assert page_layers(text) == [("a", {"navdtw._x", "navdtw.y", "navdtw"})]
