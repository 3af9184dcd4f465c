"""Every SIMD lane kernel this CPU runs (AVX-512, AVX2 or NEON) against the portable one:
identical bits, and their speed.

    python tools/simd_bits.py            # asserts identical bytes on coordinate batches
    python tools/simd_bits.py --bench    # also times a W2-like batch with each kernel (ratios)

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


LANE_KERNELS = [k for k in _core.simd_kernels() if k != "portable"]


def batch(refs, qrys, precision: str, kernel: str) -> np.ndarray:
    before = _core.build_info()["simd_choice"]
    _core.set_simd(kernel)
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
            want = batch(refs, qrys, precision, "portable")
            for kernel in LANE_KERNELS:
                got = batch(refs, qrys, precision, kernel)
                if got.tobytes() != want.tobytes():
                    bad = np.flatnonzero(got.view(np.uint64) != want.view(np.uint64))
                    where = f"{kernel}, dim {dim}, {precision}"
                    print(f"simd_bits: {where}: {bad.size} results differ, first at pair {bad[0]}")
                    return 1
                cases += got.size
    print(f"simd_bits: {cases} results identical with the {', '.join(LANE_KERNELS)} and portable kernels")
    return 0


def bench() -> None:
    rng = np.random.default_rng(2)
    refs = walks(rng, 400, 30, 120, 3)
    qrys = walks(rng, 400, 20, 400, 3)
    for precision in ("double", "single"):
        times = {}
        for kernel in [*LANE_KERNELS, "portable"]:
            best = float("inf")
            for _ in range(3):
                t0 = time.perf_counter()
                batch(refs, qrys, precision, kernel)
                best = min(best, time.perf_counter() - t0)
            times[kernel] = best
        print(
            f"simd_bits: W2-like 400 pairs, {precision}: "
            + ", ".join(f"{k} {t:.3f} s" for k, t in times.items())
            + "; portable / "
            + ", ".join(f"{k} {times['portable'] / times[k]:.2f}x" for k in LANE_KERNELS)
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bench", action="store_true", help="also time both kernels")
    args = parser.parse_args()
    if not LANE_KERNELS:
        print("simd_bits: no SIMD lane kernel on this build and CPU; nothing to compare")
        return 0
    status = check_bits()
    if args.bench and status == 0:
        bench()
    return status


if __name__ == "__main__":
    sys.exit(main())
