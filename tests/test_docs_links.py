"""Every link between the documentation's Markdown files lands where it says, read on a code host
as in the site (issue 36 item 13): each relative link's file exists and its ``#anchor`` is a
heading of that file itself (a page that only ``{include}``s another has none of its headings on a
code host), and the README's links into the repository likewise. The platforms table of the README
and of docs/install.md are the same."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
#: the README's links into the repository are absolute (it is the package index page)
REPO = "https://github.com/navdtw/navdtw/blob/main/"

_FENCE = re.compile(r"^(```|~~~)")
_LINK = re.compile(r"(?<!!)\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def _prose(text: str) -> list[str]:
    """The lines outside code fences, inline code taken out."""
    out, fenced = [], False
    for line in text.split("\n"):
        if _FENCE.match(line.lstrip()):
            fenced = not fenced
            out.append("")
            continue
        out.append("" if fenced else re.sub(r"`[^`]*`", "``", line))
    return out


def slug(heading: str) -> str:
    """A heading's anchor as GitHub (and MyST's ``myst_heading_anchors``) makes it: the text of its
    Markdown (code marks and link targets dropped), lowercased, every character but letters,
    digits, ``_``, ``-`` and spaces removed, spaces as ``-``."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = text.replace("`", "").replace("*", "")
    text = re.sub(r"[^\w\- ]", "", text.lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """The anchors of a Markdown file as it is read on a code host: its own headings (numbered
    ``-1``, ``-2`` when repeated, as GitHub does)."""
    seen: dict[str, int] = {}
    out = set()
    fenced = False
    for line in path.read_text(encoding="utf-8").split("\n"):
        if _FENCE.match(line.lstrip()):
            fenced = not fenced
            continue
        m = None if fenced else _HEADING.match(line)
        if m is None:
            continue
        s = slug(m[2])
        n = seen.get(s, 0)
        seen[s] = n + 1
        out.add(s if n == 0 else f"{s}-{n}")
    return out


def _links(path: Path) -> list[tuple[int, str]]:
    return [
        (k + 1, m[1]) for k, line in enumerate(_prose(path.read_text(encoding="utf-8"))) for m in _LINK.finditer(line)
    ]


PAGES = sorted(p for p in [*DOCS.rglob("*.md"), ROOT / "README.md", ROOT / "CONTRIBUTING.md"] if p.is_file())
#: a source tree (else the suite's copy beside an installed wheel: tools/suite_copy.sh copies
#: README.md and docs/ but not every file they link to, so a missing target is not judged there)
SOURCE = (ROOT / "python" / "navdtw").is_dir()


def _target(page: Path, link: str) -> tuple[Path, str] | None:
    """The file and anchor a link names, or None for a link out of the repository."""
    if link.startswith(REPO):
        link = str(ROOT / link[len(REPO) :])
    elif re.match(r"^[a-z]+:", link) or link.startswith("//"):
        return None
    where, _, anchor = link.partition("#")
    file = page if not where else (Path(where) if Path(where).is_absolute() else page.parent / where)
    return file.resolve(), anchor


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_link_lands_on_a_file_and_a_heading_of_it(page):
    bad = []
    for line, link in _links(page):
        target = _target(page, link)
        if target is None:
            continue
        file, anchor = target
        if not file.exists():
            if SOURCE:
                bad.append(f"line {line}: {link}: no such file")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file):
            bad.append(f"line {line}: {link}: {file.name} has no heading #{anchor} of its own")
    assert not bad, f"{page.relative_to(ROOT)}: " + "; ".join(bad)


def test_the_slugs_are_githubs():
    assert slug("Non-finite values: one policy, shown wherever a number is shown") == (
        "non-finite-values-one-policy-shown-wherever-a-number-is-shown"
    )
    assert slug("The results package (`navdtw.datasets.results`)") == "the-results-package-navdtwdatasetsresults"
    assert slug("Wheels: which systems they need, and why") == "wheels-which-systems-they-need-and-why"


def test_a_page_that_only_includes_has_no_anchor_of_its_own(tmp_path):
    """docs/index.md is an {include} of the README: on a code host index.md#platforms finds no
    table (install.md linked there)."""
    assert "platforms" not in anchors(DOCS / "index.md")
    page = tmp_path / "a.md"
    page.write_text("# A\n\nsee [the table](index.md#platforms)\n")
    (tmp_path / "index.md").write_text("```{include} ../README.md\n```\n")
    file, anchor = _target(page, _links(page)[0][1])
    assert anchor == "platforms" and anchor not in anchors(file)
    assert "platforms" in anchors(DOCS / "install.md")


def test_the_platforms_tables_are_the_same():
    def table(path: Path) -> list[str]:
        text = path.read_text(encoding="utf-8").split("\n")
        start = text.index("## Platforms")
        return [line for line in text[start:] if line.startswith("|")][:7]

    readme, install = table(ROOT / "README.md"), table(DOCS / "install.md")
    assert len(readme) == 7 and readme == install
