"""Check what navdtw's sdist and wheel carry (used by tools/check_wheel.sh).

    python tools/check_dist.py sdist dist/navdtw-X.Y.Z.tar.gz
    python tools/check_dist.py wheel wheelhouse/navdtw-X.Y.Z-....whl

sdist: the files the source tree has under the kept folders and top-level files (README, LICENSE,
...; git's tracked files when run in a checkout, else what is on disk less ignored kinds), plus
PKG-INFO, and nothing else: no .ci/, tools/, benchmarks/, CLI output, wheels or build products.
wheel: the Python package (every file of python/navdtw), exactly one compiled ``_core`` extension,
``py.typed``, ``_core.pyi``, and a dist-info with METADATA, WHEEL, RECORD, entry_points.txt and
licenses/LICENSE; nothing else (no grafted libraries, tests or sources).
Prints the listing it checked and exits 1 naming every missing or unexpected file.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "python" / "navdtw"

# What a build needs or a user reads; pyproject.toml's sdist.exclude drops the rest.
SDIST_DIRS = ("cpp", "python", "tests", "docs")
SDIST_FILES = ("pyproject.toml", "CMakeLists.txt", "README.md", "LICENSE", "CHANGELOG.md", "CITATION.cff", ".gitignore")
SDIST_REQUIRED = ("PKG-INFO", "pyproject.toml", "CMakeLists.txt", "README.md", "LICENSE")
# Never in a source tree we ship, whatever git says.
JUNK = re.compile(r"(^|/)(__pycache__/|\.pytest_cache/|.*\.(pyc|so|pyd|dylib|whl|o)$)")


def _source_files() -> set[str]:
    """Files of the kept folders and top-level files, as git tracks them (or as found on disk)."""
    try:
        out = subprocess.run(
            ["git", "ls-files", "--", *SDIST_DIRS, *SDIST_FILES],
            cwd=ROOT,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        files = set(out.split())
    except (OSError, subprocess.CalledProcessError):
        files = {p.relative_to(ROOT).as_posix() for d in SDIST_DIRS for p in (ROOT / d).rglob("*") if p.is_file()}
        files |= {f for f in SDIST_FILES if (ROOT / f).is_file()}
    return {f for f in files if not JUNK.search(f)}


def check_sdist(path: Path) -> list[str]:
    with tarfile.open(path) as tar:
        names = [m.name for m in tar.getmembers() if m.isfile()]
    prefix = names[0].split("/", 1)[0] + "/"
    have = {n[len(prefix) :] for n in names if n.startswith(prefix)}
    errors = [f"outside {prefix}: {n}" for n in names if not n.startswith(prefix)]
    want = _source_files() | {"PKG-INFO"}
    errors += [f"missing: {f}" for f in sorted(set(SDIST_REQUIRED) - have)]
    errors += [f"missing (in the source tree): {f}" for f in sorted(want - have - set(SDIST_REQUIRED))]
    errors += [f"unexpected: {f}" for f in sorted(have - want)]
    return errors


def check_wheel(path: Path) -> list[str]:
    with zipfile.ZipFile(path) as whl:
        have = {n for n in whl.namelist() if not n.endswith("/")}
    package = {
        "navdtw/" + p.relative_to(PACKAGE).as_posix()
        for p in PACKAGE.rglob("*")
        if p.is_file() and not JUNK.search(p.as_posix())
    }
    extensions = {n for n in have if re.fullmatch(r"navdtw/_core\.[^/]*\.(so|pyd)|navdtw/_core\.(so|pyd)", n)}
    dist_info = {n.split("/", 1)[0] for n in have if n.split("/", 1)[0].endswith(".dist-info")}
    errors = []
    if len(extensions) != 1:
        errors.append(f"want exactly one navdtw/_core extension, found {sorted(extensions) or 'none'}")
    if len(dist_info) != 1:
        errors.append(f"want exactly one .dist-info folder, found {sorted(dist_info) or 'none'}")
    meta = {
        f"{d}/{f}" for d in dist_info for f in ("METADATA", "WHEEL", "RECORD", "entry_points.txt", "licenses/LICENSE")
    }
    want = package | extensions | meta
    for required in ("navdtw/__init__.py", "navdtw/py.typed", "navdtw/_core.pyi"):
        if required not in package:
            errors.append(f"the source package itself lacks {required}")
    errors += [f"missing: {f}" for f in sorted(want - have)]
    errors += [f"unexpected: {f}" for f in sorted(have - want)]
    return errors


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("sdist", "wheel"):
        print(__doc__, file=sys.stderr)
        return 2
    kind, path = argv[0], Path(argv[1])
    errors = check_sdist(path) if kind == "sdist" else check_wheel(path)
    if errors:
        print(f"{path.name}: {len(errors)} problem(s)", file=sys.stderr)
        for e in errors:
            print(f"  {e}", file=sys.stderr)
        return 1
    print(f"{path.name}: contents as expected")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
