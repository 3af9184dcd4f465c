"""The version in its three places: ``__version__`` (python/navdtw/__init__.py; the build reads it
from there), CITATION.cff's ``version`` and CHANGELOG.md's top heading.

    python tools/release.py --check                  # they agree (tests/test_packaging.py runs this)
    python tools/release.py --check --tag v0.2.0     # and the tag names a release version (wheels.yml)
    python tools/release.py 0.2.0                    # set a release: all three, dated today
    python tools/release.py 0.3.0.dev0               # after it: the next development version

Two forms only: a release ``X.Y.Z`` and a development version ``X.Y.Z.devN``. While developing, the
CHANGELOG's top heading is ``## X.Y.Z (unreleased)`` and CITATION.cff has no ``date-released``; a
release turns the heading into ``## X.Y.Z (YYYY-MM-DD)`` and CITATION.cff gets the same date. The
release checklist is CONTRIBUTING.md's "Release". Exit status 1 names every disagreement.
"""

from __future__ import annotations

import argparse
import datetime
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
INIT = ROOT / "python" / "navdtw" / "__init__.py"
CITATION = ROOT / "CITATION.cff"
CHANGELOG = ROOT / "CHANGELOG.md"

RELEASE = r"\d+\.\d+\.\d+"
DEV = rf"({RELEASE})\.dev\d+"
VERSION_LINE = re.compile(r'^__version__ = "([^"]*)"$', re.M)
CITATION_VERSION = re.compile(r'^version: *"?([^"\n]*)"?$', re.M)
CITATION_DATE = re.compile(r'^date-released: *"?([^"\n]*)"?$', re.M)
HEADING = re.compile(r"^## (\S+) \(([^)]*)\)$", re.M)


def read() -> dict[str, str | None]:
    """What each place says: the version, CITATION's version and date, the CHANGELOG's top heading."""
    init, citation, changelog = (p.read_text(encoding="utf-8") for p in (INIT, CITATION, CHANGELOG))
    version, cff_version, cff_date, heading = (
        VERSION_LINE.search(init),
        CITATION_VERSION.search(citation),
        CITATION_DATE.search(citation),
        HEADING.search(changelog),
    )
    return {
        "version": version and version[1],
        "citation": cff_version and cff_version[1],
        "citation_date": cff_date and cff_date[1],
        "changelog": heading and heading[1],
        "changelog_status": heading and heading[2],
    }


def problems(tag: str | None = None) -> list[str]:
    """Every disagreement between the three places (and the tag, when given)."""
    found = read()
    version = found["version"] or ""
    out = []
    dev = re.fullmatch(DEV, version)
    if not dev and not re.fullmatch(RELEASE, version):
        return [f"{INIT.name}: __version__ {version!r} is neither X.Y.Z nor X.Y.Z.devN"]
    if found["citation"] != version:
        out.append(f"CITATION.cff: version {found['citation']!r}, __version__ {version!r}")
    base = dev[1] if dev else version
    if found["changelog"] != base:
        out.append(f"CHANGELOG.md: the top heading names {found['changelog']!r}, __version__ {version!r}")
    if dev:
        status = found["changelog_status"]
        if status != "unreleased":
            out.append(f"CHANGELOG.md: a development version's heading says ({status}), not (unreleased)")
        if found["citation_date"] is not None:
            out.append("CITATION.cff: date-released set for a development version")
    else:
        status = found["changelog_status"] or ""
        if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", status):
            out.append(f"CHANGELOG.md: release {version}'s heading says ({status}), not its date (YYYY-MM-DD)")
        elif found["citation_date"] != status:
            out.append(f"CITATION.cff: date-released {found['citation_date']!r}, the CHANGELOG's {status!r}")
    if tag is not None:
        if tag != f"v{version}":
            out.append(f"tag {tag}: __version__ is {version} (tag v{version})")
        if dev:
            out.append(f"tag {tag}: {version} is a development version; set the release first")
    return out


def set_version(version: str, today: str) -> None:
    """Writes ``version`` to the three places (a release dated ``today``)."""
    dev = re.fullmatch(DEV, version)
    if not dev and not re.fullmatch(RELEASE, version):
        sys.exit(f"release.py: {version!r} is neither X.Y.Z nor X.Y.Z.devN")
    base = dev[1] if dev else version
    init = INIT.read_text(encoding="utf-8")
    INIT.write_text(VERSION_LINE.sub(f'__version__ = "{version}"', init, count=1), encoding="utf-8")

    citation = CITATION_DATE.sub("", CITATION.read_text(encoding="utf-8")).replace("\n\n", "\n")
    citation = CITATION_VERSION.sub(f'version: "{version}"', citation, count=1)
    if not dev:
        citation = CITATION_VERSION.sub(lambda m: f'{m[0]}\ndate-released: "{today}"', citation, count=1)
    CITATION.write_text(citation, encoding="utf-8")

    changelog = CHANGELOG.read_text(encoding="utf-8")
    top = HEADING.search(changelog)
    if dev:
        if not (top and top[1] == base and top[2] == "unreleased"):  # a new section above the last
            at = top.start() if top else len(changelog)
            changelog = changelog[:at] + f"## {base} (unreleased)\n\n" + changelog[at:]
    elif top and top[1] == base:
        changelog = changelog[: top.start()] + f"## {base} ({today})" + changelog[top.end() :]
    else:
        sys.exit(f"release.py: CHANGELOG.md's top heading is not ## {base} (...): write its entry first")
    CHANGELOG.write_text(changelog, encoding="utf-8")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("version", nargs="?", help="the version to set: X.Y.Z (a release) or X.Y.Z.devN")
    ap.add_argument("--check", action="store_true", help="check that the three places agree")
    ap.add_argument("--tag", help="with --check: the git tag being released (vX.Y.Z)")
    ap.add_argument("--date", default=datetime.date.today().isoformat(), help="a release's date (default today)")
    args = ap.parse_args()
    if args.version:
        set_version(args.version, args.date)
    elif not args.check:
        ap.error("give a version to set, or --check")
    found = problems(args.tag)
    for p in found:
        print(f"release.py: {p}", file=sys.stderr)
    if not found:
        print(f"release.py: version {read()['version']} agrees in __init__.py, CITATION.cff and CHANGELOG.md")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
