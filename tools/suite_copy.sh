#!/usr/bin/env bash
# The test suite outside the source tree, for the checks that test an installed wheel
# (check_wheel.sh, check_habitat.sh): tests/ plus every file the tests read besides the package
# (pytest settings in pyproject.toml; README.md, CHANGELOG.md, CITATION.cff and docs/ for the
# documentation and release tests). No python/ or cpp/: the installed wheel is what runs.
# One list for both checks, so a test that starts reading a new file is fixed in one place.
#
#   tools/suite_copy.sh DEST     # DEST/suite/ is created; prints its path
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DEST="$1/suite"
mkdir -p "$DEST"
cp -r "$ROOT/tests" "$ROOT/pyproject.toml" "$ROOT/README.md" "$ROOT/CHANGELOG.md" "$ROOT/CITATION.cff" "$ROOT/docs" "$DEST/"
find "$DEST" -name __pycache__ -prune -exec rm -rf {} +
echo "$DEST"
