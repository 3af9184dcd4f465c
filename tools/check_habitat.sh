#!/usr/bin/env bash
# navdtw beside habitat-lab 0.3.3 (issue 33); part of .ci/run (in the background, beside the suite).
#
#   tools/check_habitat.sh [WHEEL]          # WHEEL: a built navdtw wheel; without one it builds one
#   NAVDTW_KEEP=1 tools/check_habitat.sh    # keep the temporary folder (its path is printed)
#
# 1. A fresh virtualenv with habitat-lab 0.3.3 from PyPI and navdtw's wheel installed together, by
#    pip's resolver, with navdtw's declared dependencies (not --no-deps): habitat-lab pins
#    numpy==1.26.4, so this resolves only while navdtw's core accepts numpy 1.x.
# 2. numpy must still be 1.26.4 after installing navdtw and the test tools (a dependency that pulls
#    numpy 2 in fails the check), and `pip check` must be clean.
# 3. The suite but its `slow` tests (tests/ copied outside the source tree, so the installed wheel is
#    what runs): the core with numpy 1.26.4 (tests of an extra skip, it is not installed) and
#    tests/test_habitat.py (navdtw.habitat's measures in habitat-lab's own task; habitat-sim is
#    not on PyPI: tests/habitat_double.py stands in for it), tests/test_habitat_order.py (navdtw
#    order's order in habitat's EpisodeIterator and Env) and, with the shared data (NAVDTW_DATA,
#    default ../shared/data), tests/test_habitat_loop.py: two ranks of tests/habitat_loop.py
#    over R2R-CE val_unseen writing the per-episode log, watch deciding, score agreeing.
#
# habitat-lab "0.3.3" is published on PyPI as 0.3.320250127 and 0.3.320260507 (the release plus a
# build date). The 2025 build does not import on CPython >= 3.11 (a dataclass field with a mutable
# default, which 3.11's dataclasses refuse); the 2026 build, tested here, fixes that. Both pin
# numpy==1.26.4.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PYTHON="${PYTHON:-python3}"
HABITAT="habitat-lab==0.3.320260507"
NUMPY="1.26.4"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/navdtw-check-habitat.XXXXXX")"
if [[ "${NAVDTW_KEEP:-0}" == 1 ]]; then
    echo "== keeping $WORK" >&2
else
    trap 'rm -rf "$WORK"' EXIT
fi
T0=$(date +%s)
step() { echo "== check_habitat [$(( $(date +%s) - T0 )) s] $*" >&2; }

WHEEL="${1:-}"
if [[ -z "$WHEEL" ]]; then
    step "pip wheel --no-deps (no wheel given)"
    "$PYTHON" -m pip wheel --quiet --disable-pip-version-check --no-deps -w "$WORK/dist" "$ROOT"
    WHEEL=("$WORK"/dist/navdtw-*.whl)
fi
[[ -f "$WHEEL" ]] || { echo "error: no wheel at $WHEEL" >&2; exit 1; }

step "fresh virtualenv: $HABITAT + $(basename "$WHEEL") with its dependencies"
"$PYTHON" -m venv "$WORK/venv"
PY="$WORK/venv/bin/python"
export PIP_DISABLE_PIP_VERSION_CHECK=1
"$PY" -m pip install --quiet --no-compile "$HABITAT" "$WHEEL"
# The test tools at their [test] floors' spelling, without letting them move numpy.
"$PY" -m pip install --quiet --no-compile "numpy==$NUMPY" "pytest>=7" "hypothesis>=6.80" "fastdtw==0.3.4"
"$PY" -m pip check
"$PY" - "$NUMPY" <<'PY'
import sys
from importlib.metadata import version

got = version("numpy")
print(f"habitat-lab {version('habitat-lab')}, navdtw {version('navdtw')}, numpy {got}, scipy {version('scipy')}")
if got != sys.argv[1]:
    sys.exit(f"check_habitat.sh: numpy changed from {sys.argv[1]} to {got}")
PY

# The suite outside the source tree (tools/suite_copy.sh: tests/ and the files the tests read).
"$ROOT/tools/suite_copy.sh" "$WORK" >/dev/null
if [[ -z "${NAVDTW_DATA:-}" && -d "$ROOT/../shared/data" ]]; then
    NAVDTW_DATA="$(cd "$ROOT/../shared/data" && pwd)"
fi
export NAVDTW_DATA="${NAVDTW_DATA:-}"
[[ -n "$NAVDTW_DATA" ]] || unset NAVDTW_DATA

step "the suite but the slow tests, numpy $NUMPY, habitat-lab's tests included"
(
    cd "$WORK/suite"
    "$PY" -c "import navdtw, sys; f = navdtw.__file__; print('navdtw from', f); sys.exit('site-packages' not in f)"
    "$PY" -m pytest -q -p no:cacheprovider -m "not slow" 2>&1 | tee "$WORK/suite.log"
)
# pytest's -ra summary names every skipped test and file: habitat's tests must have run here (the
# end-to-end loop, tests/test_habitat_loop.py, too when NAVDTW_DATA holds R2R-CE val_unseen).
HABITAT_TESTS="test_habitat|test_habitat_order"
if [[ -n "${NAVDTW_DATA:-}" && -f "$NAVDTW_DATA/r2r_vlnce/R2R_VLNCE_v1-3_preprocessed/val_unseen/val_unseen.json.gz" ]]; then
    HABITAT_TESTS="$HABITAT_TESTS|test_habitat_loop"
fi
if grep -Eq "^SKIPPED \[[0-9]+\] tests/($HABITAT_TESTS)\.py" "$WORK/suite.log"; then
    echo "error: habitat's tests were skipped beside habitat-lab:" >&2
    grep -E "^SKIPPED \[[0-9]+\] tests/($HABITAT_TESTS)\.py" "$WORK/suite.log" >&2
    exit 1
fi
step "check_habitat.sh: all checks passed"
