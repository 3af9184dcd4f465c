#!/usr/bin/env bash
# Line coverage of the C++ core reached by a corpus of fuzz/dtw_fuzz.cpp (llvm-cov):
#
#   bash fuzz/coverage_cpp.sh [CORPUS_DIR...]   # default: /tmp/navdtw-fuzz/cpp/corpus and fuzz/corpus_cpp
#
# Builds the coverage variant (fuzz/build_cpp.sh coverage: clang source-based coverage, no
# sanitizers), replays every input once, and prints llvm-cov's report of cpp/navdtw/ (per file and
# total) and of the x86 kernel files. Needs llvm-profdata and llvm-cov of clang's version
# (Debian/Ubuntu: llvm). The profile and an HTML report go to build/fuzz/coverage/.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
OUT="${NAVDTW_FUZZ_BUILD:-$ROOT/build/fuzz}"
COV="$OUT/coverage"
[[ $# -eq 0 ]] && set -- "${NAVDTW_FUZZ_WORK:-/tmp/navdtw-fuzz}/cpp/corpus" "$ROOT/fuzz/corpus_cpp"

# llvm tools of the same major version as clang++ (their profile formats must match)
ver="$(clang++ --version | sed -n 's/.*clang version \([0-9]*\).*/\1/p' | head -1)"
PROFDATA=llvm-profdata COVTOOL=llvm-cov
command -v "llvm-profdata-$ver" >/dev/null && PROFDATA="llvm-profdata-$ver"
command -v "llvm-cov-$ver" >/dev/null && COVTOOL="llvm-cov-$ver"

# (re)built unless newer than every source
rebuild=1
if [[ -x "$OUT/dtw_fuzz_cov" ]]; then
    rebuild=0
    for src in fuzz/dtw_fuzz.cpp fuzz/build_cpp.sh cpp/navdtw/*.hpp cpp/kernels_avx2.cpp cpp/kernels_avx512.cpp; do
        [[ "$src" -nt "$OUT/dtw_fuzz_cov" ]] && rebuild=1
    done
fi
[[ $rebuild == 1 ]] && bash fuzz/build_cpp.sh coverage
rm -rf "$COV" && mkdir -p "$COV"
files=0
for dir in "$@"; do
    [[ -d "$dir" ]] && files=$(( files + $(find "$dir" -type f | wc -l) ))
done
echo "== replaying $files inputs from: $*" >&2
LLVM_PROFILE_FILE="$COV/dtw_fuzz.profraw" "$OUT/dtw_fuzz_cov" -runs=0 "$@" 2>&1 | grep -E "INITED|DONE|ERROR" >&2 || true
"$PROFDATA" merge -sparse "$COV/dtw_fuzz.profraw" -o "$COV/dtw_fuzz.profdata"
SOURCES=(cpp/navdtw/*.hpp)
echo "== line coverage of cpp/navdtw/ ($files inputs)"
"$COVTOOL" report "$OUT/dtw_fuzz_cov" -instr-profile="$COV/dtw_fuzz.profdata" "${SOURCES[@]}"
echo "== the kernel files"
"$COVTOOL" report "$OUT/dtw_fuzz_cov" -instr-profile="$COV/dtw_fuzz.profdata" cpp/kernels_avx2.cpp cpp/kernels_avx512.cpp
"$COVTOOL" show "$OUT/dtw_fuzz_cov" -instr-profile="$COV/dtw_fuzz.profdata" -format=html -output-dir="$COV/html" \
    "${SOURCES[@]}" cpp/kernels_avx2.cpp cpp/kernels_avx512.cpp
echo "== HTML report: $COV/html/index.html" >&2
