#!/usr/bin/env bash
# Runs fuzz targets for SECONDS each: bash fuzz/run.sh SECONDS [target...]
#
# Targets (all by default, in this order): the readers of fuzz/readers.py (r2r, rxr, reverie, ndh,
# r2rce, rxrce, positions, havln, connectivity, suite, results) and dtw (fuzz/fuzz_dtw.py, the
# engine against tests/naive.py). Each target is one case of the `case` below.
#
# Environment: PYTHON (default python: a venv with navdtw and atheris installed, a plain build),
# NAVDTW_FUZZ_WORK (default /tmp/navdtw-fuzz): per target its growing corpus (<work>/<target>/corpus,
# started from the committed seeds), its findings (crash-*, timeout-*, oom-*) and its log.
# NAVDTW_FUZZ_KEEP_GOING=1 saves findings of the reader targets to <work>/<target>/findings and goes on
# (a hang or a crash still stops the target). Prints one line per target (executions, exec/s,
# coverage) and exits 1 if any target found something.
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
READERS=$("$PY" fuzz/readers.py --list) || exit 2
if [[ $# -gt 0 ]]; then
    TARGETS=("$@")
else
    # shellcheck disable=SC2206
    TARGETS=($READERS dtw)
fi

# libFuzzer options shared by the Python targets: -timeout bounds one input (a hang is a finding),
# -rss_limit_mb bounds memory, -max_len lets bundles of several files grow.
LIBFUZZER=(-max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1)

summary() {  # target log: one line from libFuzzer's final stats
    local t=$1 log=$2
    local runs eps cov
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
    eps=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
    cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -1)
    printf '%-13s %8s executions %6s exec/s  %s\n' "$t" "${runs:-?}" "${eps:-?}" "${cov:-cov: ?}"
}

status=0
for t in "${TARGETS[@]}"; do
    dir="$WORK/$t"
    mkdir -p "$dir/corpus"
    log="$dir/log"
    case "$t" in
        dtw)
            "$PY" fuzz/fuzz_dtw.py "$dir/corpus" fuzz/corpus "${LIBFUZZER[@]}" -max_len=256 \
                -artifact_prefix="$dir/" >"$log" 2>&1
            ;;
        *)
            if ! grep -qx "$t" <<<"$READERS"; then
                echo "unknown target $t (targets: $(echo $READERS) dtw)" >&2
                status=2
                continue
            fi
            keep=()
            [[ ${NAVDTW_FUZZ_KEEP_GOING:-} == 1 ]] && keep=(env "NAVDTW_FUZZ_KEEP_GOING=$dir/findings")
            "${keep[@]}" "$PY" fuzz/readers.py --target "$t" "$dir/corpus" "fuzz/seeds/$t" "${LIBFUZZER[@]}" \
                -max_len=65536 -artifact_prefix="$dir/" >"$log" 2>&1
            ;;
    esac
    rc=$?
    summary "$t" "$log"
    if [[ $rc -ne 0 ]]; then
        echo "  $t: FINDING (exit $rc); see $log and $dir/" >&2
        grep -E '^(ERROR|==[0-9]+== ERROR|[A-Za-z]*Error|.*Finding:)' "$log" | head -3 >&2
        status=1
    fi
    if [[ -d $dir/findings ]] && compgen -G "$dir/findings/*" >/dev/null; then
        echo "  $t: $(ls "$dir/findings" | wc -l) findings saved in $dir/findings" >&2
        status=1
    fi
done
exit $status
