#!/usr/bin/env bash
# Windows code paths without Windows: compiles the engine with mingw-w64's GCC (64-bit and 32-bit
# Windows, warnings as errors) and links a test program, then builds and runs the same program
# natively with GCC and Clang (portability.hpp's checks: the 32-bit-halves multiply equals the
# 128-bit product).
#
#   bash tools/check_mingw.sh
#
# What is compiled: tools/check_portability.cpp (every header of cpp/navdtw/ with the templates
# the bindings instantiate) and the kernel files cpp/kernels_*.cpp. The pybind11 binding files are
# not: they need a Windows CPython's headers (pyconfig.h), which Debian does not package; they hold
# argument checks and no compiler-specific code. The 32-bit target has no unsigned __int128 and no
# AVX2 kernels, so it compiles the portable fallbacks. mingw's posix thread model is used (its
# win32 model has no std::thread in GCC 12; MSVC has it). Installs mingw-w64 and clang if missing
# (as root or through sudo -n; without either it says so and skips).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v x86_64-w64-mingw32-g++-posix >/dev/null || ! command -v clang++ >/dev/null; then
    # shellcheck source=tools/as_root.sh
    . tools/as_root.sh
    apt_install check_mingw.sh "the Windows cross-compile check is skipped" mingw-w64 clang || exit 0
fi

OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
FLAGS=(-std=c++17 -O2 -Wall -Wextra -Wconversion -Wshadow -Werror -ffp-contract=off -fno-math-errno -I cpp)
SOURCES=(tools/check_portability.cpp cpp/kernels_avx2.cpp cpp/kernels_avx512.cpp cpp/kernels_neon.cpp)

for target in x86_64 i686; do
    "$target-w64-mingw32-g++-posix" "${FLAGS[@]}" "${SOURCES[@]}" -static -o "$OUT/check_$target.exe"
    echo "check_mingw: $target-w64-mingw32 compiled and linked with -Werror"
done

for cxx in g++ clang++; do
    "$cxx" "${FLAGS[@]}" "${SOURCES[@]}" -pthread -o "$OUT/check_native"
    echo "check_mingw: native $cxx:"
    "$OUT/check_native"
done
