#!/usr/bin/env bash
# Cross-builds navdtw's extension for aarch64 and runs tests under qemu, with the NEON kernel and
# with it disabled, asserting identical bits (tools/simd_bits.py).
#
#   bash tools/check_aarch64.sh                  # engine, hostile-input and reward tests (15-30 min)
#   bash tools/check_aarch64.sh --quick          # CI's subset: cross-build + NEON bits check only
#   bash tools/check_aarch64.sh --bench          # also the NEON / portable ratio (tools/simd_bits.py)
#   bash tools/check_aarch64.sh -- tests/x.py    # other pytest arguments
#
# Installs what it needs (Debian: g++-aarch64-linux-gnu, qemu-user-static; as root or through
# sudo -n, else it says so and skips). The aarch64
# CPython is Debian's python3.11 arm64 packages unpacked into a folder (apt-get download +
# dpkg -x: installing python3:arm64 through multiarch would remove the host's python3), with numpy,
# scipy, pytest and hypothesis aarch64 wheels from PyPI. All of it lives in $NAVDTW_AARCH64_ROOT
# (default /tmp/navdtw-aarch64), kept between runs, never in the repository.
#
# Under qemu there is no binfmt_misc here, so a program the tests start with sys.executable would
# not run: bin/python is a wrapper script that starts qemu, and qemu's -0 makes it the guest's
# argv[0], hence sys.executable.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$(pwd)
ROOT=${NAVDTW_AARCH64_ROOT:-/tmp/navdtw-aarch64}
MODE=full
PYTEST_ARGS=()
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) MODE=quick ;;
        --bench) MODE=bench ;;
        --) shift; PYTEST_ARGS=("$@"); break ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
    shift
done

log() { echo "check_aarch64: $*"; }
# shellcheck source=tools/as_root.sh
. tools/as_root.sh

# ---- tools ----
if ! command -v aarch64-linux-gnu-g++ >/dev/null || ! command -v qemu-aarch64-static >/dev/null ||
    ! command -v cmake >/dev/null; then
    log "installing g++-aarch64-linux-gnu qemu-user-static"
    apt_install check_aarch64.sh "the aarch64 check is skipped" g++-aarch64-linux-gnu qemu-user-static cmake ||
        exit 0
fi

# ---- aarch64 CPython 3.11 (Debian bookworm's), unpacked ----
PY_PACKAGES=(python3.11-minimal libpython3.11-minimal libpython3.11-stdlib libpython3.11-dev
    libexpat1 zlib1g libffi8 libssl3 libbz2-1.0 liblzma5 libsqlite3-0 libncursesw6
    libtinfo6 libreadline8 libuuid1 libcrypt1 libnsl2 libtirpc3 libdb5.3)
if [ ! -x "$ROOT/sysroot/usr/bin/python3.11" ]; then
    log "unpacking Debian's arm64 python3.11 into $ROOT/sysroot"
    # apt downloads arm64 packages only with the architecture enabled; a run that enables it
    # disables it again afterwards (and refreshes the package lists), leaving the host as it was.
    if ! dpkg --print-foreign-architectures | grep -qx arm64; then
        as_root dpkg --add-architecture arm64 || {
            echo "check_aarch64.sh: cannot enable the arm64 architecture (not root, and sudo -n is" \
                "not allowed); the aarch64 check is skipped" >&2
            exit 0
        }
        trap 'log "disabling the arm64 architecture this run enabled"
            as_root dpkg --remove-architecture arm64 && as_root apt-get update -qq' EXIT
    fi
    as_root apt-get update -qq
    mkdir -p "$ROOT/debs" "$ROOT/sysroot"
    SANDBOX=()  # root's apt downloads as the _apt user, who cannot write to $ROOT/debs
    [ "$(id -u)" = 0 ] && SANDBOX=(-o APT::Sandbox::User=root)
    (cd "$ROOT/debs" && apt-get download -qq "${SANDBOX[@]}" "${PY_PACKAGES[@]/%/:arm64}")
    for deb in "$ROOT"/debs/*.deb; do dpkg -x "$deb" "$ROOT/sysroot"; done
fi
SYSROOT=$ROOT/sysroot
QEMU_LD=/usr/aarch64-linux-gnu

mkdir -p "$ROOT/bin"
cat >"$ROOT/bin/python" <<EOF
#!/bin/sh
# aarch64 CPython under qemu (written by tools/check_aarch64.sh)
export PYTHONHOME="$SYSROOT/usr"
export PYTHONPATH="$ROOT/pkg:$ROOT/site\${PYTHONPATH:+:\$PYTHONPATH}"
export LD_LIBRARY_PATH="$SYSROOT/usr/lib/aarch64-linux-gnu:$SYSROOT/lib/aarch64-linux-gnu"
exec qemu-aarch64-static -L "$QEMU_LD" -0 "$ROOT/bin/python" "$SYSROOT/usr/bin/python3.11" "\$@"
EOF
chmod +x "$ROOT/bin/python"
PY=$ROOT/bin/python

# ---- aarch64 wheels of the test dependencies ----
if [ ! -d "$ROOT/site/numpy" ]; then
    log "installing numpy, scipy, pytest, hypothesis aarch64 wheels into $ROOT/site"
    python3 -m pip install --quiet --target "$ROOT/site" --only-binary=:all: --implementation cp \
        --python-version 3.11 --platform manylinux_2_28_aarch64 --platform manylinux2014_aarch64 \
        numpy scipy "pytest>=7" "hypothesis>=6.80"
fi

# ---- the extension, cross-compiled by the project's own CMakeLists.txt (with -Werror) ----
log "cross-building the extension"
BUILD=$ROOT/build
rm -rf "$BUILD"  # a build tree belongs to one checkout; the downloads above are what is reused
PYBIND11_DIR=$(python3 -c "import pybind11; print(pybind11.get_cmake_dir())" 2>/dev/null) || {
    python3 -m pip install --quiet --target "$ROOT/host" pybind11
    PYBIND11_DIR=$(PYTHONPATH=$ROOT/host python3 -c "import pybind11; print(pybind11.get_cmake_dir())")
}
cmake -S "$REPO" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DNAVDTW_WERROR=ON \
    -DCMAKE_SYSTEM_NAME=Linux -DCMAKE_SYSTEM_PROCESSOR=aarch64 \
    -DCMAKE_CXX_COMPILER=aarch64-linux-gnu-g++ -DCMAKE_CXX_FLAGS="-isystem $SYSROOT/usr/include" \
    -DSKBUILD_PROJECT_NAME=navdtw -DSKBUILD_PROJECT_VERSION=0.0.0 -Dpybind11_DIR="$PYBIND11_DIR" \
    -DPython_INCLUDE_DIR="$SYSROOT/usr/include/python3.11" \
    -DPython_SOABI=cpython-311-aarch64-linux-gnu -DPYBIND11_USE_CROSSCOMPILING=ON >"$ROOT/cmake.log"
cmake --build "$BUILD" -j2 >>"$ROOT/cmake.log"
rm -rf "$ROOT/pkg" && mkdir -p "$ROOT/pkg"
cp -r "$REPO/python/navdtw" "$ROOT/pkg/navdtw"
rm -f "$ROOT"/pkg/navdtw/_core*.so
cp "$BUILD"/_core*.so "$ROOT/pkg/navdtw/"
python3 - "$ROOT"/pkg/navdtw/_core*.so <<'EOF'
import sys
with open(sys.argv[1], "rb") as f:
    machine = int.from_bytes(f.read(20)[18:20], "little")  # ELF e_machine
sys.exit(0 if machine == 183 else f"check_aarch64: {sys.argv[1]} is not an aarch64 ELF file ({machine})")
EOF

# ---- under qemu: the NEON bits check, then the tests (run from the repository) ----
"$PY" -c "import navdtw, platform; print('check_aarch64:', platform.machine(), navdtw._core.build_info())"
"$PY" tools/simd_bits.py $([ "$MODE" = bench ] && echo --bench)
cd "$REPO"
if [ "$MODE" = quick ] && [ ${#PYTEST_ARGS[@]} -eq 0 ]; then
    exit 0
fi
if [ ${#PYTEST_ARGS[@]} -eq 0 ]; then
    PYTEST_ARGS=(tests/test_engine.py tests/test_hostile.py tests/test_reward.py)
fi
# pytest's rootdir is the repository (conftest.py, pyproject.toml); the package comes from $ROOT/pkg.
"$PY" -m pytest -q -p no:cacheprovider "${PYTEST_ARGS[@]}"
