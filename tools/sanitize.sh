#!/usr/bin/env bash
# Builds navdtw's extension with AddressSanitizer + UndefinedBehaviorSanitizer (CMake option
# NAVDTW_SANITIZE) into its own virtualenv and build directory, then runs pytest under it.
#
#   tools/sanitize.sh                       # the fast engine tests (see DEFAULT_TESTS below)
#   tools/sanitize.sh -q -x                 # options only: still the default files
#   tools/sanitize.sh tests/test_hostile.py -k offsets     # any pytest arguments
#   tools/sanitize.sh tests                 # the whole suite (about 100 s on 2 cores)
#   NAVDTW_SANITIZE_SKIP_BUILD=1 tools/sanitize.sh ...      # reuse the last sanitizer build
#
# Environment:
#   NAVDTW_ASAN_VENV   virtualenv to build and test in   (default: .venv-asan in the repository)
#   NAVDTW_ASAN_BUILD  CMake build directory             (default: build/asan)
#   NAVDTW_ASAN_TYPE   CMake build type                  (default: RelWithDebInfo)
#
# CPython itself is not instrumented, so the ASan runtime must be loaded first (LD_PRELOAD) and
# leak detection is off (the interpreter keeps objects alive until exit by design); a refused huge
# allocation returns NULL (numpy's MemoryError) instead of aborting. Any ASan or
# UBSan report aborts the process (halt_on_error), which fails the run.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"

VENV="${NAVDTW_ASAN_VENV:-$ROOT/.venv-asan}"
BUILD="${NAVDTW_ASAN_BUILD:-$ROOT/build/asan}"
TYPE="${NAVDTW_ASAN_TYPE:-RelWithDebInfo}"
DEFAULT_TESTS=(tests/test_engine.py tests/test_engine_errors.py tests/test_hostile.py tests/test_threads.py
               tests/test_fastdtw_compat.py tests/test_metrics.py)

PY="$VENV/bin/python"
if [[ ! -x "$PY" ]]; then
    python3 -m venv "$VENV"
fi
if [[ "${NAVDTW_SANITIZE_SKIP_BUILD:-0}" != 1 ]]; then
    # Build requirements are installed up front so the build can reuse $BUILD (no isolation).
    # (the build requirements and the [test] extra of pyproject.toml)
    "$PY" -m pip install --quiet "scikit-build-core>=0.10" "pybind11>=2.12" ninja numpy scipy \
        "pytest>=7" "hypothesis>=6.80" "fastdtw==0.3.4" "matplotlib>=3.8.4" "tqdm>=4.60"
    echo "== building the sanitized extension ($TYPE) in $BUILD" >&2
    start=$(date +%s)
    "$PY" -m pip install --quiet --no-build-isolation --no-deps --force-reinstall . \
        -Cbuild-dir="$BUILD" -Ccmake.build-type="$TYPE" \
        -Ccmake.define.NAVDTW_SANITIZE=ON -Ccmake.define.NAVDTW_WERROR=ON
    echo "== build took $(( $(date +%s) - start )) s" >&2
fi

ASAN_LIB="$(gcc -print-file-name=libasan.so)"
if [[ ! -e "$ASAN_LIB" ]]; then
    echo "error: gcc's libasan.so not found (install libasan / gcc)" >&2
    exit 2
fi
# The sanitized build must really be instrumented, or the run proves nothing.
# (found without importing it: an instrumented module only imports with the runtime preloaded)
SO="$("$PY" -c 'import glob, importlib.util as u; s = u.find_spec("navdtw"); d = s.submodule_search_locations[0] if s else ""; print((glob.glob(d + "/_core*.so") or [""])[0])' 2>/dev/null || true)"
# (ldd's output is read whole: with pipefail, `grep -q` closing the pipe early can fail ldd.)
if [[ -z "$SO" ]] || [[ "$(ldd "$SO")" != *libasan* ]]; then
    echo "error: $VENV has no ASan-instrumented navdtw._core (${SO:-not importable}); run without SKIP_BUILD" >&2
    exit 2
fi

# No test file or folder among the arguments (only options such as -q, -x): the default files.
has_path=0
for arg in "$@"; do
    [[ -e "${arg%%::*}" ]] && has_path=1
done
if [[ $has_path == 0 ]]; then
    set -- "$@" "${DEFAULT_TESTS[@]}"
fi

# libstdc++ is preloaded too: the python binary does not link it, and without it at start-up
# ASan's __cxa_throw interceptor has no real function to forward to, so the first C++ exception
# (every ValueError the engine raises) dies with "CHECK failed: real___cxa_throw != 0".
STDCXX_LIB="$(gcc -print-file-name=libstdc++.so.6)"
export LD_PRELOAD="$ASAN_LIB:$STDCXX_LIB${LD_PRELOAD:+:$LD_PRELOAD}"
export ASAN_OPTIONS="detect_leaks=0:halt_on_error=1:allocator_may_return_null=1:abort_on_error=1:detect_stack_use_after_return=1:strict_string_checks=1:check_initialization_order=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
# Subprocess tests inherit these, so they run sanitized too.
echo "== pytest under ASan+UBSan: $*" >&2
start=$(date +%s)
set +e
"$PY" -m pytest -p no:cacheprovider "$@"
rc=$?
set -e
echo "== sanitized tests took $(( $(date +%s) - start )) s (exit $rc)" >&2
exit $rc
