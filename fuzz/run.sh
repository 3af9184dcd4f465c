#!/usr/bin/env bash
# Runs navdtw's fuzz targets, each for SECONDS (see fuzz/README.md):
#
#   bash fuzz/run.sh SECONDS [target...]      # default: every target
#
# Targets:
#   cpp    the C++ core, directly (fuzz/dtw_fuzz.cpp, libFuzzer + ASan + UBSan, clang); built into
#          build/fuzz/ by fuzz/build_cpp.sh when missing or older than its sources
#
# Each target starts from its committed seed corpus and keeps what it finds in a working corpus
# under build/fuzz/ (NAVDTW_FUZZ_WORK), so a later run goes on from there; a failing input is
# written to build/fuzz/artifacts/ and the script exits non-zero. Run long runs under nice.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"

if [[ $# -lt 1 || ! "$1" =~ ^[0-9]+$ ]]; then
    echo "usage: $0 SECONDS [target...]   (targets: cpp)" >&2
    exit 2
fi
SECONDS_PER_TARGET="$1"
shift
ALL_TARGETS=(cpp)
TARGETS=("$@")
[[ ${#TARGETS[@]} -eq 0 ]] && TARGETS=("${ALL_TARGETS[@]}")

WORK="${NAVDTW_FUZZ_WORK:-$ROOT/build/fuzz}"
ARTIFACTS="$WORK/artifacts"
mkdir -p "$ARTIFACTS"

# ---- cpp: the C++ core ----------------------------------------------------------------------
run_cpp() {
    local bin="$ROOT/build/fuzz/dtw_fuzz" corpus="$WORK/corpus_cpp" src
    local rebuild=0
    [[ -x "$bin" ]] || rebuild=1
    for src in fuzz/dtw_fuzz.cpp fuzz/build_cpp.sh cpp/navdtw/*.hpp cpp/kernels_avx2.cpp cpp/kernels_avx512.cpp; do
        [[ $rebuild == 1 || "$src" -nt "$bin" ]] && rebuild=1
    done
    if [[ $rebuild == 1 ]]; then
        bash fuzz/build_cpp.sh
    fi
    mkdir -p "$corpus"
    echo "== fuzz/run.sh: cpp for $SECONDS_PER_TARGET s (corpus $corpus, seeds fuzz/corpus_cpp)" >&2
    # new inputs go to the first folder only; the committed seeds are read, never written
    "$bin" "$corpus" "$ROOT/fuzz/corpus_cpp" -max_total_time="$SECONDS_PER_TARGET" -max_len=1024 \
        -timeout=60 -rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix="$ARTIFACTS/cpp-" \
        2> >(grep -v -E '^#[0-9]+[[:space:]]+(NEW|REDUCE|pulse)' >&2)
}

status=0
for target in "${TARGETS[@]}"; do
    start=$(date +%s)
    case "$target" in
        cpp) run_cpp || status=1 ;;
        *)
            echo "unknown target '$target' (targets: ${ALL_TARGETS[*]})" >&2
            exit 2
            ;;
    esac
    echo "== fuzz/run.sh: $target took $(( $(date +%s) - start )) s" >&2
done
exit $status
