#!/usr/bin/env bash
# Python line coverage of each reader module reached by a fuzz corpus: replays the corpus of each
# target (fuzz/run.sh's <work>/<target>/corpus plus the committed seeds) under coverage.py and
# reports the target's module(s).  bash fuzz/coverage.sh [target...]
# Environment as fuzz/run.sh: PYTHON (with coverage installed), NAVDTW_FUZZ_WORK.
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python}
WORK=${NAVDTW_FUZZ_WORK:-/tmp/navdtw-fuzz}
if [[ $# -gt 0 ]]; then TARGETS=("$@"); else mapfile -t TARGETS < <("$PY" fuzz/readers.py --list); fi
declare -A MODULES=(
    [r2r]="datasets/r2r.py" [rxr]="datasets/rxr.py" [reverie]="datasets/reverie.py" [ndh]="datasets/ndh.py"
    [r2rce]="datasets/vlnce.py" [rxrce]="datasets/rxrce.py" [positions]="datasets/positions.py"
    [havln]="datasets/havln.py,humanaware.py" [connectivity]="datasets/matterport.py"
    [suite]="suite/config.py" [results]="datasets/results/*.py"
)
for t in "${TARGETS[@]}"; do
    include=$(tr ',' '\n' <<<"${MODULES[$t]}" | sed 's|^|*/navdtw/|' | paste -sd, -)
    data="$WORK/$t/.coverage"
    corpus=("fuzz/seeds/$t")
    [[ -d $WORK/$t/corpus ]] && corpus+=("$WORK/$t/corpus")
    # findings left in the corpus are saved aside (NAVDTW_FUZZ_KEEP_GOING), not stopping the replay
    NAVDTW_FUZZ_KEEP_GOING="$WORK/$t/replay-findings" "$PY" -m coverage run --data-file="$data" \
        --include="$include" fuzz/readers.py --target "$t" --replay "${corpus[@]}" 2>/dev/null | tail -1
    "$PY" -m coverage report --data-file="$data" | tail -n +3 | grep -v '^---'
done
