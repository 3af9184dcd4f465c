"""The SIMD lane kernel (AVX2 or NEON) against the portable one: identical bits, and their speed.

    python tools/simd_bits.py            # asserts identical bytes on coordinate batches
    python tools/simd_bits.py --bench    # also times a W2-like batch both ways (a ratio)

Used by tools/check_aarch64.sh under qemu; runs natively as well. Exits non-zero on any
difference. The ratio is what the benchmarks/README.md NEON line reports.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import navdtw
from navdtw import _core


def walks(rng: np.random.Generator, count: int, lo: int, hi: int, dim: int) -> list[np.ndarray]:
    """Random walks of 0.25 m steps, directions uniform on the sphere (benchmarks' W2 shape)."""
    out = []
    for n in rng.integers(lo, hi + 1, size=count):
        step = rng.normal(size=(int(n), dim))
        step *= 0.25 / np.linalg.norm(step, axis=1, keepdims=True)
        out.append(np.cumsum(step, axis=0).astype(np.float32))
    return out


def batch(refs, qrys, precision: str, simd: bool) -> np.ndarray:
    before = _core.simd_enabled() if hasattr(_core, "simd_enabled") else True
    _core.set_simd(simd)
    try:
        return navdtw.dtw_batch(refs, qrys, precision=precision, workers=1)
    finally:
        _core.set_simd(before)


def check_bits() -> int:
    rng = np.random.default_rng(15)
    cases = 0
    for dim, lo, hi in [(2, 1, 40), (3, 1, 40), (3, 30, 300), (5, 1, 60)]:
        refs = walks(rng, 200, lo, hi, dim)
        qrys = walks(rng, 200, lo, hi, dim)
        for precision in ("double", "single"):
            a = batch(refs, qrys, precision, simd=True)
            b = batch(refs, qrys, precision, simd=False)
            if a.tobytes() != b.tobytes():
                bad = np.flatnonzero(a.view(np.uint64) != b.view(np.uint64))
                print(f"simd_bits: dim {dim}, {precision}: {bad.size} results differ, first at pair {bad[0]}")
                return 1
            cases += a.size
    info = _core.build_info()
    print(f"simd_bits: {cases} results identical with the {info['simd_kernel']} kernel and the portable one")
    return 0


def bench() -> None:
    rng = np.random.default_rng(2)
    refs = walks(rng, 400, 30, 120, 3)
    qrys = walks(rng, 400, 20, 400, 3)
    for precision in ("double", "single"):
        times = {}
        for simd in (True, False):
            best = float("inf")
            for _ in range(3):
                t0 = time.perf_counter()
                batch(refs, qrys, precision, simd)
                best = min(best, time.perf_counter() - t0)
            times[simd] = best
        print(
            f"simd_bits: W2-like 400 pairs, {precision}: simd {times[True]:.3f} s, portable {times[False]:.3f} s, "
            f"ratio {times[False] / times[True]:.2f}x"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bench", action="store_true", help="also time both kernels")
    args = parser.parse_args()
    if _core.build_info()["simd_kernel"] == "portable":
        print("simd_bits: no SIMD lane kernel on this build and CPU; nothing to compare")
        return 0
    status = check_bits()
    if args.bench and status == 0:
        bench()
    return status


if __name__ == "__main__":
    sys.exit(main())
