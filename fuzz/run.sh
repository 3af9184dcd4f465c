#!/usr/bin/env bash
# Runs fuzz targets for SECONDS each: bash fuzz/run.sh SECONDS [target...]
#
# Targets (all by default): cpp (fuzz/dtw_fuzz.cpp, the C++ core directly: libFuzzer + ASan + UBSan,
# built with clang into build/fuzz/ by fuzz/build_cpp.sh when missing or older than its sources).
# Each target is one case of the `case` below.
#
# Environment: NAVDTW_FUZZ_WORK (default /tmp/navdtw-fuzz): per target its growing corpus
# (<work>/<target>/corpus, started from the committed seeds), its findings (crash-*, timeout-*,
# oom-*) and its log. Prints one line per target (executions, exec/s, coverage) and exits 1 if any
# target found something. Run long runs under nice.
set -uo pipefail
cd "$(dirname "$0")/.."
if [[ $# -lt 1 || ! $1 =~ ^[0-9]+$ ]]; then
    echo "usage: bash fuzz/run.sh SECONDS [target...]" >&2
    exit 2
fi
SECS=$1
shift
WORK=${NAVDTW_FUZZ_WORK:-/tmp/navdtw-fuzz}
if [[ $# -gt 0 ]]; then
    TARGETS=("$@")
else
    TARGETS=(cpp)
fi

summary() {  # target log: one line from libFuzzer's final stats
    local t=$1 log=$2
    local runs eps cov
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
    eps=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
    cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -1)
    printf '%-13s %8s executions %6s exec/s  %s\n' "$t" "${runs:-?}" "${eps:-?}" "${cov:-cov: ?}"
}

# ---- cpp: the C++ core (fuzz/dtw_fuzz.cpp) ----
CPP_FUZZ=build/fuzz/dtw_fuzz
build_cpp() {  # builds build/fuzz/dtw_fuzz unless it is newer than every source
    local src
    if [[ -x $CPP_FUZZ ]]; then
        for src in fuzz/dtw_fuzz.cpp fuzz/build_cpp.sh cpp/navdtw/*.hpp cpp/kernels_avx2.cpp cpp/kernels_avx512.cpp; do
            [[ $src -nt $CPP_FUZZ ]] && { bash fuzz/build_cpp.sh; return; }
        done
        return 0
    fi
    bash fuzz/build_cpp.sh
}

status=0
for t in "${TARGETS[@]}"; do
    dir="$WORK/$t"
    mkdir -p "$dir/corpus"
    log="$dir/log"
    start=$(date +%s)
    case "$t" in
        cpp)
            if ! build_cpp; then
                echo "  cpp: the build failed" >&2
                status=1
                continue
            fi
            # -max_len: long enough for ~100-point paths; -timeout bounds one input (a hang is a
            # finding). New inputs go to the first folder; the committed seeds are only read.
            "$CPP_FUZZ" "$dir/corpus" fuzz/corpus_cpp -max_total_time="$SECS" -max_len=1024 -timeout=60 \
                -rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix="$dir/" >"$log" 2>&1
            ;;
        *)
            echo "unknown target $t (targets: cpp)" >&2
            status=2
            continue
            ;;
    esac
    rc=$?
    summary "$t" "$log"
    echo "  $t took $(( $(date +%s) - start )) s" >&2
    if [[ $rc -ne 0 ]]; then
        echo "  $t: FINDING (exit $rc); see $log and $dir/" >&2
        grep -E '^(MISMATCH|==[0-9]+== ?ERROR|SUMMARY|.*runtime error)' "$log" | head -5 >&2
        status=1
    fi
done
exit $status
