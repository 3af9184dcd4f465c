#!/usr/bin/env bash
# Runs fuzz targets for SECONDS each: bash fuzz/run.sh SECONDS [target...]
#
# Targets (all by default, in this order): the readers of fuzz/readers.py (r2r, rxr, reverie, ndh,
# r2rce, rxrce, positions, havln, connectivity, suite, results; atheris over a plain build), dtw
# (fuzz/fuzz_dtw.py, the engine against tests/naive.py) and cpp (fuzz/dtw_fuzz.cpp, the C++ core
# directly: libFuzzer + ASan + UBSan, built with clang into build/fuzz/ by fuzz/build_cpp.sh when
# missing or older than its sources). Each target is one case of the `case` below.
#
# Environment: PYTHON (default python: a venv with navdtw and atheris, a plain build, for the
# Python targets), NAVDTW_FUZZ_WORK (default /tmp/navdtw-fuzz): per target its growing corpus
# (<work>/<target>/corpus, started from the committed seeds), its findings (crash-*, timeout-*,
# oom-*) and its log. NAVDTW_FUZZ_KEEP_GOING=1 saves the reader targets' findings to
# <work>/<target>/findings and goes on (a hang or a crash still stops the target). Prints one line
# per target (executions, exec/s, coverage) and exits 1 if any target found something. Run long
# runs under nice.
set -uo pipefail
cd "$(dirname "$0")/.."
if [[ $# -lt 1 || ! $1 =~ ^[0-9]+$ ]]; then
    echo "usage: bash fuzz/run.sh SECONDS [target...]" >&2
    exit 2
fi
SECS=$1
shift
PY=${PYTHON:-python}
WORK=${NAVDTW_FUZZ_WORK:-/tmp/navdtw-fuzz}
READERS=$("$PY" fuzz/readers.py --list 2>/dev/null) || READERS=""
if [[ $# -gt 0 ]]; then
    TARGETS=("$@")
else
    # shellcheck disable=SC2206
    TARGETS=($READERS dtw cpp)
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

# libFuzzer options of the Python targets: -timeout bounds one input (a hang is a finding),
# -rss_limit_mb bounds memory.
PY_LIBFUZZER=(-max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1)

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
        dtw)
            "$PY" fuzz/fuzz_dtw.py "$dir/corpus" fuzz/corpus "${PY_LIBFUZZER[@]}" -max_len=256 \
                -artifact_prefix="$dir/" >"$log" 2>&1
            ;;
        *)
            if ! grep -qx -- "$t" <<<"$READERS"; then
                echo "unknown target $t (targets: $(echo "$READERS" | tr '\n' ' ')dtw cpp)" >&2
                status=2
                continue
            fi
            # -max_len: a bundle holds several files
            keep=()
            [[ ${NAVDTW_FUZZ_KEEP_GOING:-} == 1 ]] && keep=(env "NAVDTW_FUZZ_KEEP_GOING=$dir/findings")
            # the inputs' scratch folder (a memory file system when there is one), removed after:
            # libFuzzer ends the process without Python's exit handlers
            scratch=$(mktemp -d /dev/shm/navdtw-fuzz-run.XXXXXX 2>/dev/null || mktemp -d)
            "${keep[@]}" env NAVDTW_FUZZ_TMP="$scratch" "$PY" fuzz/readers.py --target "$t" "$dir/corpus" \
                "fuzz/seeds/$t" "${PY_LIBFUZZER[@]}" -max_len=65536 -artifact_prefix="$dir/" >"$log" 2>&1
            rc=$?
            rm -rf "$scratch"
            grep -m1 '^WARNING: navdtw is not instrumented' "$log" >&2  # an editable install: no coverage
            (exit $rc)
            ;;
    esac
    rc=$?
    summary "$t" "$log"
    echo "  $t took $(( $(date +%s) - start )) s" >&2
    if [[ $rc -ne 0 ]]; then
        echo "  $t: FINDING (exit $rc); see $log and $dir/" >&2
        grep -E '^(MISMATCH|FINDING|Finding|==[0-9]+== ?ERROR|SUMMARY|.*runtime error|[A-Za-z]*Error:)' "$log" | head -5 >&2
        status=1
    fi
    if [[ -d $dir/findings ]] && compgen -G "$dir/findings/*" >/dev/null; then
        echo "  $t: $(find "$dir/findings" -type f | wc -l) findings saved in $dir/findings" >&2
        status=1
    fi
done
exit $status
