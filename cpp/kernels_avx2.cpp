// AVX2 variants (see navdtw/lanes.hpp): the 8-lane exact coordinate DTW (navdtw/lanes_kernel.hpp
// over the AVX2 vector type below), a VEX-encoded copy of the scalar short-row kernel for node
// pairs, and the node-id copy of packed node blocks. Entered only after a run-time CPU check, so
// the package still runs on CPUs without AVX2. The file is compiled with the baseline flags and
// only the kernel functions carry NAVDTW_TARGET_AVX2 (portability.hpp): with -mavx2 on the whole
// file, inline and template code it shares with other files (std::vector, check_cancel) could be
// emitted with AVX2 instructions and picked by the linker for every caller. The node copy gets its
// AVX2 code by always_inline (dtw.hpp's dtw_matrix_short), inside the AVX2 function only (GCC and
// Clang; MSVC compiles it as the scalar kernel). No FMA: multiplies and adds stay separate, as in
// the scalar kernel.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "navdtw/dtw.hpp"
#include "navdtw/lanes.hpp"
#include "navdtw/parallel.hpp"
#include "navdtw/portability.hpp"

#if NAVDTW_AVX2_KERNELS
#include <immintrin.h>

#define NAVDTW_LANES_TARGET NAVDTW_TARGET_AVX2
#include "navdtw/lanes_kernel.hpp"

namespace navdtw {

bool avx2_supported() {
    static const bool ok = cpu_has_avx2();
    return ok;
}

namespace {

#define NAVDTW_AVX2 NAVDTW_TARGET_AVX2 NAVDTW_ALWAYS_INLINE

// The vector type of lanes_kernel.hpp: 8 floats in one register; the 8 sums in two double
// registers or one float register.
struct Avx2 {
    static constexpr int kLanes = 8;
    using F = __m256;
    NAVDTW_AVX2 static F load(const float* p) { return _mm256_loadu_ps(p); }
    NAVDTW_AVX2 static void store(float* p, F x) { _mm256_storeu_ps(p, x); }
    NAVDTW_AVX2 static F gather(const float* const* at, int d) {
        return _mm256_setr_ps(at[0][d], at[1][d], at[2][d], at[3][d], at[4][d], at[5][d], at[6][d], at[7][d]);
    }
    NAVDTW_AVX2 static F sub(F a, F b) { return _mm256_sub_ps(a, b); }
    NAVDTW_AVX2 static F mul(F a, F b) { return _mm256_mul_ps(a, b); }
    NAVDTW_AVX2 static F add(F a, F b) { return _mm256_add_ps(a, b); }
    NAVDTW_AVX2 static F sqrt(F a) { return _mm256_sqrt_ps(a); }

    struct DoubleSums {
        __m256d lo, hi;
        NAVDTW_AVX2 static DoubleSums load(const double* p) { return {_mm256_loadu_pd(p), _mm256_loadu_pd(p + 4)}; }
        NAVDTW_AVX2 static DoubleSums fill(double x) { return {_mm256_set1_pd(x), _mm256_set1_pd(x)}; }
        NAVDTW_AVX2 void store(double* p) const {
            _mm256_storeu_pd(p, lo);
            _mm256_storeu_pd(p + 4, hi);
        }
        NAVDTW_AVX2 static DoubleSums next(F cost, const DoubleSums& diag, const DoubleSums& up,
                                           const DoubleSums& left) {
            const __m256d c_lo = _mm256_cvtps_pd(_mm256_castps256_ps128(cost));
            const __m256d c_hi = _mm256_cvtps_pd(_mm256_extractf128_ps(cost, 1));
            return {_mm256_add_pd(c_lo, _mm256_min_pd(_mm256_min_pd(diag.lo, up.lo), left.lo)),
                    _mm256_add_pd(c_hi, _mm256_min_pd(_mm256_min_pd(diag.hi, up.hi), left.hi))};
        }
    };
    struct FloatSums {
        __m256 v;
        NAVDTW_AVX2 static FloatSums load(const float* p) { return {_mm256_loadu_ps(p)}; }
        NAVDTW_AVX2 static FloatSums fill(float x) { return {_mm256_set1_ps(x)}; }
        NAVDTW_AVX2 void store(float* p) const { _mm256_storeu_ps(p, v); }
        NAVDTW_AVX2 static FloatSums next(F cost, const FloatSums& diag, const FloatSums& up, const FloatSums& left) {
            return {_mm256_add_ps(cost, _mm256_min_ps(_mm256_min_ps(diag.v, up.v), left.v))};
        }
    };
    template <class T>
    using Sums = std::conditional_t<std::is_same_v<T, float>, FloatSums, DoubleSums>;
    // Two rows per sweep (lanes_kernel.hpp): W2 and W3 1.08-1.13x faster than one row, in double
    // and in single (benchmarks/README.md).
    template <class T>
    static constexpr int kRows = 2;
};

// copy_node_ids_avx2 for one path: 8 ids per masked load (lanes past the end read as 0 and never
// fault), a full store, and an unsigned compare: id >= limit exactly when max(id, limit) == id.
NAVDTW_AVX2 __m256i copy_ids8(const std::int32_t* p, lane_index_t len, __m256i limit, std::int32_t* out) {
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    __m256i bad = _mm256_setzero_si256();
    for (lane_index_t k = 0; k < len; k += 8) {
        const auto left = static_cast<int>(std::min<lane_index_t>(len - k, 8));
        const __m256i v = _mm256_maskload_epi32(p + k, _mm256_cmpgt_epi32(_mm256_set1_epi32(left), lane));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + k), v);
        bad = _mm256_or_si256(bad, _mm256_cmpeq_epi32(_mm256_max_epu32(v, limit), v));
    }
    return bad;
}

#undef NAVDTW_AVX2

}  // namespace

NAVDTW_TARGET_AVX2 bool copy_node_ids_avx2(const std::int32_t* ref, lane_index_t n, const std::int32_t* qry,
                                           lane_index_t m, lane_index_t n_nodes, std::int32_t* out) {
    const __m256i limit = _mm256_set1_epi32(static_cast<int>(n_nodes));  // >= 1: a matrix is never empty
    const __m256i bad_ref = copy_ids8(ref, n, limit, out);  // first: the query's copy overwrites its overrun
    const __m256i bad = _mm256_or_si256(bad_ref, copy_ids8(qry, m, limit, out + n));
    return _mm256_testz_si256(bad, bad);
}

NAVDTW_TARGET_AVX2 void dtw_lanes_avx2(const LanePair* pairs, int count, int dim, bool single, double* out,
                                       LaneScratch& scratch) {
    lanes::dtw_lanes_with<Avx2>(pairs, count, dim, single, out, scratch);
}

NAVDTW_TARGET_AVX2 double dtw_node_short_avx2(const float* matrix, lane_index_t n_nodes, const std::int32_t* ref,
                                              lane_index_t n, const std::int32_t* qry, lane_index_t m, bool single) {
    const MatrixCost<std::int32_t> cost{matrix, n_nodes, ref, qry};
    return single ? dtw_matrix_short<float>(cost, n, m) : dtw_matrix_short<double>(cost, n, m);
}

NAVDTW_TARGET_AVX2 double dtw_node_short_avx2(const float* matrix, lane_index_t n_nodes, const std::int64_t* ref,
                                              lane_index_t n, const std::int64_t* qry, lane_index_t m, bool single) {
    const MatrixCost<std::int64_t> cost{matrix, n_nodes, ref, qry};
    return single ? dtw_matrix_short<float>(cost, n, m) : dtw_matrix_short<double>(cost, n, m);
}

}  // namespace navdtw

#else  // not x86-64 (or no AVX2-capable compiler): no AVX2 kernels, use_avx2() is false

namespace navdtw {
bool avx2_supported() { return false; }
void dtw_lanes_avx2(const LanePair*, int, int, bool, double*, LaneScratch&) {}
double dtw_node_short_avx2(const float*, lane_index_t, const std::int32_t*, lane_index_t, const std::int32_t*,
                           lane_index_t, bool) {
    return 0.0;
}
bool copy_node_ids_avx2(const std::int32_t*, lane_index_t, const std::int32_t*, lane_index_t, lane_index_t,
                        std::int32_t*) {
    return false;
}
double dtw_node_short_avx2(const float*, lane_index_t, const std::int64_t*, lane_index_t, const std::int64_t*,
                           lane_index_t, bool) {
    return 0.0;
}
}  // namespace navdtw

#endif
