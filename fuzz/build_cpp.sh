#!/usr/bin/env bash
# Builds the libFuzzer harness of the C++ core (fuzz/dtw_fuzz.cpp) with clang:
#
#   bash fuzz/build_cpp.sh            # build/fuzz/dtw_fuzz: -fsanitize=fuzzer,address,undefined, -O1
#   bash fuzz/build_cpp.sh coverage   # build/fuzz/dtw_fuzz_cov: source-based coverage, no sanitizers
#
# Three translation units (the harness with every header of cpp/navdtw/, and the two x86 kernel
# files, which must stay apart: each includes navdtw/lanes_kernel.hpp for its own instruction
# set), compiled one after the other. Needs clang++ and its libFuzzer runtime (Debian/Ubuntu:
# clang, libclang-rt-*-dev; clang >= 14). Environment: CXX (default clang++), NAVDTW_FUZZ_BUILD
# (default build/fuzz).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
CXX="${CXX:-clang++}"
OUT="${NAVDTW_FUZZ_BUILD:-$ROOT/build/fuzz}"
VARIANT="${1:-fuzz}"
mkdir -p "$OUT"

# As the extension's flags (CMakeLists.txt): C++17, no FMA contraction (bit-identical kernels),
# warnings as errors. -O1 keeps the build quick and the sanitizers' reports precise.
FLAGS=(-std=c++17 -O1 -g -ffp-contract=off -fno-math-errno -Wall -Wextra -Wconversion -Wshadow -Werror
       -I"$ROOT/cpp" -pthread)
case "$VARIANT" in
    fuzz)
        # every file instrumented for libFuzzer's coverage feedback (the kernels too) and checked
        # by ASan + UBSan; any report aborts
        FLAGS+=(-fno-omit-frame-pointer -fno-sanitize-recover=all)
        COMPILE=(-fsanitize=fuzzer-no-link,address,undefined)
        LINK=(-fsanitize=fuzzer,address,undefined)
        BIN="$OUT/dtw_fuzz"
        ;;
    coverage)
        # clang's source-based coverage, no sanitizers; libFuzzer's driver only replays inputs
        COMPILE=(-fprofile-instr-generate -fcoverage-mapping)
        LINK=(-fsanitize=fuzzer -fprofile-instr-generate -fcoverage-mapping)
        BIN="$OUT/dtw_fuzz_cov"
        ;;
    *)
        echo "usage: $0 [fuzz|coverage]" >&2
        exit 2
        ;;
esac

start=$(date +%s)
objs=()
for src in fuzz/dtw_fuzz.cpp cpp/kernels_avx2.cpp cpp/kernels_avx512.cpp; do
    obj="$OUT/$(basename "$src" .cpp).$VARIANT.o"
    "$CXX" "${FLAGS[@]}" "${COMPILE[@]}" -c "$src" -o "$obj"
    objs+=("$obj")
done
"$CXX" "${FLAGS[@]}" "${LINK[@]}" "${objs[@]}" -o "$BIN"
echo "== built $BIN in $(( $(date +%s) - start )) s" >&2
