// AVX-512 variant of the lane kernel of exact coordinate DTW (see navdtw/lanes.hpp): 16 pairs per
// group, navdtw/lanes_kernel.hpp over the AVX-512F vector type below. Entered only after a
// run-time CPU check, so the package still runs on CPUs without AVX-512. As in kernels_avx2.cpp,
// the file is compiled with the baseline flags and only the kernel functions carry
// NAVDTW_TARGET_AVX512 (portability.hpp), so no AVX-512 instruction leaks into inline or template
// code shared with other files. No FMA: multiplies and adds stay separate, as in the scalar
// kernel.
#include <type_traits>

#include "navdtw/lanes.hpp"
#include "navdtw/portability.hpp"

#if NAVDTW_AVX2_KERNELS
#include <immintrin.h>

#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ < 13
// GCC 12's AVX-512 intrinsics pass a self-initialised _mm512_undefined_*() where they are
// inlined, which -W(maybe-)uninitialized flags in our functions (GCC bug 105593, fixed in 13).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#define NAVDTW_LANES_TARGET NAVDTW_TARGET_AVX512
#include "navdtw/lanes_kernel.hpp"

namespace navdtw {

bool avx512_supported() {
    static const bool ok = cpu_has_avx512();
    return ok;
}

namespace {

#define NAVDTW_AVX512 NAVDTW_TARGET_AVX512 NAVDTW_ALWAYS_INLINE

// The vector type of lanes_kernel.hpp: 16 floats in one register; the 16 sums in two double
// registers (8 doubles each) or one float register.
struct Avx512 {
    static constexpr int kLanes = 16;
    using F = __m512;
    NAVDTW_AVX512 static F load(const float* p) { return _mm512_loadu_ps(p); }
    NAVDTW_AVX512 static void store(float* p, F x) { _mm512_storeu_ps(p, x); }
    // From scalars, not through a stack array: GCC 12's ASan places such an array in a fake stack
    // frame that is not 64-byte aligned, and the 64-byte-aligned frame of this function then
    // reads a wild address (detect_stack_use_after_return, which tools/sanitize.sh turns on).
    NAVDTW_AVX512 static F gather(const float* const* at, int d) {
        return _mm512_setr_ps(at[0][d], at[1][d], at[2][d], at[3][d], at[4][d], at[5][d], at[6][d], at[7][d], at[8][d],
                              at[9][d], at[10][d], at[11][d], at[12][d], at[13][d], at[14][d], at[15][d]);
    }
    NAVDTW_AVX512 static F sub(F a, F b) { return _mm512_sub_ps(a, b); }
    NAVDTW_AVX512 static F mul(F a, F b) { return _mm512_mul_ps(a, b); }
    NAVDTW_AVX512 static F add(F a, F b) { return _mm512_add_ps(a, b); }
    NAVDTW_AVX512 static F sqrt(F a) { return _mm512_sqrt_ps(a); }

    struct DoubleSums {
        __m512d lo, hi;
        NAVDTW_AVX512 static DoubleSums load(const double* p) { return {_mm512_loadu_pd(p), _mm512_loadu_pd(p + 8)}; }
        NAVDTW_AVX512 static DoubleSums fill(double x) { return {_mm512_set1_pd(x), _mm512_set1_pd(x)}; }
        NAVDTW_AVX512 void store(double* p) const {
            _mm512_storeu_pd(p, lo);
            _mm512_storeu_pd(p + 8, hi);
        }
        NAVDTW_AVX512 static DoubleSums next(F cost, const DoubleSums& diag, const DoubleSums& up,
                                             const DoubleSums& left) {
            const __m512d c_lo = _mm512_cvtps_pd(_mm512_castps512_ps256(cost));
            const __m512d c_hi = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(cost), 1)));
            return {_mm512_add_pd(c_lo, _mm512_min_pd(_mm512_min_pd(diag.lo, up.lo), left.lo)),
                    _mm512_add_pd(c_hi, _mm512_min_pd(_mm512_min_pd(diag.hi, up.hi), left.hi))};
        }
    };
    struct FloatSums {
        __m512 v;
        NAVDTW_AVX512 static FloatSums load(const float* p) { return {_mm512_loadu_ps(p)}; }
        NAVDTW_AVX512 static FloatSums fill(float x) { return {_mm512_set1_ps(x)}; }
        NAVDTW_AVX512 void store(float* p) const { _mm512_storeu_ps(p, v); }
        NAVDTW_AVX512 static FloatSums next(F cost, const FloatSums& diag, const FloatSums& up, const FloatSums& left) {
            return {_mm512_add_ps(cost, _mm512_min_ps(_mm512_min_ps(diag.v, up.v), left.v))};
        }
    };
    template <class T>
    using Sums = std::conditional_t<std::is_same_v<T, float>, FloatSums, DoubleSums>;
    template <class T>
    static constexpr int kRows = 2;
};

#undef NAVDTW_AVX512

}  // namespace

NAVDTW_TARGET_AVX512 void dtw_lanes_avx512(const LanePair* pairs, int count, int dim, bool single, double* out,
                                           LaneScratch& scratch) {
    lanes::dtw_lanes_with<Avx512>(pairs, count, dim, single, out, scratch);
}

}  // namespace navdtw

#else  // not x86-64 (or no capable compiler): no AVX-512 kernel, avx512_supported() is false

namespace navdtw {
bool avx512_supported() { return false; }
void dtw_lanes_avx512(const LanePair*, int, int, bool, double*, LaneScratch&) {}
}  // namespace navdtw

#endif
