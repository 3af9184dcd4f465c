// navdtw: every compiler- and target-specific piece of the C++ code, so that the algorithms are
// plain C++17 for GCC, Clang and MSVC alike.
//
// - NAVDTW_X86_64 / NAVDTW_AARCH64: the SIMD targets (AVX2 and AVX-512 with run-time checks,
//   built where NAVDTW_AVX2_KERNELS; NEON, always present on aarch64). Any other target (32-bit
//   x86, ARMv7, ppc64le, ...) runs the portable kernels only.
// - NAVDTW_TARGET_AVX2, NAVDTW_TARGET_AVX512: let one function use AVX2 / AVX-512F in a file
//   compiled for the baseline CPU. GCC and Clang need target("avx2") / target("avx512f"); MSVC
//   emits AVX2 and AVX-512 intrinsics in any function, so the file needs no /arch:AVX2 or
//   /arch:AVX512 (which would also let the compiler put such code into inline library functions
//   that the linker may then pick for every caller).
// - NAVDTW_ALWAYS_INLINE, NAVDTW_COLD: inlining hints in each compiler's spelling.
// - cpu_has_avx2(), cpu_has_avx512(): CPU and OS support of AVX2 (the OS must save the YMM
//   registers) and of AVX-512F (the OS must save the ZMM and mask registers too).
// - mul_64x64(): the full 128-bit product of two 64-bit integers.
#pragma once

#include <cstdint>

#if defined(_MSC_VER) && !defined(__clang__)
#include <intrin.h>
// No fused multiply-add contraction (the default since VS 2022 17.0, not before): results stay
// bit-identical across platforms. GCC and Clang get -ffp-contract=off from CMakeLists.txt.
#pragma fp_contract(off)
#endif

#if defined(__x86_64__) || (defined(_M_X64) && !defined(_M_ARM64EC))
#define NAVDTW_X86_64 1
#else
#define NAVDTW_X86_64 0
#endif

// The AVX2 and AVX-512 kernels need a compiler that can target them per function (see
// NAVDTW_TARGET_AVX2).
#if NAVDTW_X86_64 && (defined(__GNUC__) || defined(__clang__) || defined(_MSC_VER))
#define NAVDTW_AVX2_KERNELS 1
#else
#define NAVDTW_AVX2_KERNELS 0
#endif

#if defined(__aarch64__) || defined(_M_ARM64)
#define NAVDTW_AARCH64 1
#else
#define NAVDTW_AARCH64 0
#endif

#if defined(__GNUC__) || defined(__clang__)
#define NAVDTW_ALWAYS_INLINE __attribute__((always_inline)) inline
#define NAVDTW_COLD __attribute__((cold, noinline))
#define NAVDTW_TARGET_AVX2 __attribute__((target("avx2")))
#define NAVDTW_TARGET_AVX512 __attribute__((target("avx512f")))
#elif defined(_MSC_VER)
#define NAVDTW_ALWAYS_INLINE __forceinline
#define NAVDTW_COLD __declspec(noinline)
#define NAVDTW_TARGET_AVX2
#define NAVDTW_TARGET_AVX512
#else
#define NAVDTW_ALWAYS_INLINE inline
#define NAVDTW_COLD
#define NAVDTW_TARGET_AVX2
#define NAVDTW_TARGET_AVX512
#endif

namespace navdtw {

inline bool cpu_has_avx2() {
#if NAVDTW_AVX2_KERNELS && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2");  // checks the OS's YMM state too
#elif NAVDTW_AVX2_KERNELS && defined(_MSC_VER)
    int r[4];
    __cpuid(r, 0);
    if (r[0] < 7) return false;
    __cpuid(r, 1);
    const bool osxsave = (r[2] & (1 << 27)) != 0, avx = (r[2] & (1 << 28)) != 0;
    if (!osxsave || !avx) return false;
    if ((_xgetbv(0) & 0x6) != 0x6) return false;  // the OS saves XMM and YMM state
    __cpuidex(r, 7, 0);
    return (r[1] & (1 << 5)) != 0;  // EBX bit 5: AVX2
#else
    return false;
#endif
}

inline bool cpu_has_avx512() {
#if NAVDTW_AVX2_KERNELS && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f");  // checks the OS's ZMM and mask state too
#elif NAVDTW_AVX2_KERNELS && defined(_MSC_VER)
    if (!cpu_has_avx2()) return false;
    int r[4];
    __cpuidex(r, 7, 0);
    if ((r[1] & (1 << 16)) == 0) return false;  // EBX bit 16: AVX512F
    // the OS saves XMM, YMM, the mask registers and both halves of the ZMM registers
    return (_xgetbv(0) & 0xe6) == 0xe6;
#else
    return false;
#endif
}

struct U128 {
    std::uint64_t hi, lo;
};

// a * b from 32-bit halves: the fallback where the compiler has no 128-bit type or intrinsic.
inline U128 mul_64x64_portable(std::uint64_t a, std::uint64_t b) {
    const std::uint64_t mask = 0xffffffffULL;
    const std::uint64_t a0 = a & mask, a1 = a >> 32, b0 = b & mask, b1 = b >> 32;
    const std::uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
    const std::uint64_t mid = (p00 >> 32) + (p01 & mask) + (p10 & mask);  // < 3 * 2^32: no overflow
    return {p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32), (mid << 32) | (p00 & mask)};
}

inline U128 mul_64x64(std::uint64_t a, std::uint64_t b) {
#if defined(__SIZEOF_INT128__)
    const unsigned __int128 m = static_cast<unsigned __int128>(a) * b;
    return {static_cast<std::uint64_t>(m >> 64), static_cast<std::uint64_t>(m)};
#elif defined(_MSC_VER) && defined(_M_X64)
    std::uint64_t hi;
    const std::uint64_t lo = _umul128(a, b, &hi);
    return {hi, lo};
#else
    return mul_64x64_portable(a, b);
#endif
}

}  // namespace navdtw
