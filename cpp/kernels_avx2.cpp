// AVX2 variant of the exact coordinate DTW (see navdtw/lanes.hpp), entered only after a run-time
// CPU check, so the package still runs on CPUs without AVX2. The file is compiled with the
// baseline flags and only the kernel functions carry target("avx2"): with -mavx2 on the whole
// file, inline and template code it shares with other files (std::vector, check_cancel) could be
// emitted with AVX2 instructions and picked by the linker for every caller. No FMA: multiplies and
// adds stay separate, as in the scalar kernel.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "navdtw/lanes.hpp"
#include "navdtw/parallel.hpp"

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>

namespace navdtw {

bool avx2_supported() {
    static const bool ok = __builtin_cpu_supports("avx2");
    return ok;
}

namespace {

template <int DIM>
__attribute__((target("avx2"))) void lanes_kernel(const LanePair* p, int count, int dim_rt, double* out, LaneScratch& ws) {
    const int dim = DIM > 0 ? DIM : dim_rt;
    lane_index_t N = 0, M = 0;
    for (int l = 0; l < count; ++l) {
        N = std::max(N, p[l].n);
        M = std::max(M, p[l].m);
    }
    // Interleave: lane l of row t holds point min(t, n_l - 1) of its path; unused lanes copy lane 0.
    ws.ri.resize(static_cast<std::size_t>(N * dim * kLanes));
    ws.qi.resize(static_cast<std::size_t>(M * dim * kLanes));
    for (int l = 0; l < kLanes; ++l) {
        const LanePair& q = p[l < count ? l : 0];
        for (lane_index_t t = 0; t < N; ++t) {
            const float* src = q.ref + std::min(t, q.n - 1) * dim;
            for (int d = 0; d < dim; ++d) ws.ri[static_cast<std::size_t>((t * dim + d) * kLanes + l)] = src[d];
        }
        for (lane_index_t s = 0; s < M; ++s) {
            const float* src = q.qry + std::min(s, q.m - 1) * dim;
            for (int d = 0; d < dim; ++d) ws.qi[static_cast<std::size_t>((s * dim + d) * kLanes + l)] = src[d];
        }
    }
    // The table is swept in strips of columns so that a strip's rolling row and query points stay
    // in L1 while every row passes over them (a full row of 2000 columns, 224 KB, streams from L2
    // and caps the kernel). edge[t] carries D(t, last column of the previous strip) across.
    const lane_index_t width = std::max<lane_index_t>(16, kStripBytes / ((2 + dim) * 4 * kLanes));
    ws.buf.resize(static_cast<std::size_t>(std::min(width, M) * kLanes));
    ws.edge.assign(static_cast<std::size_t>(N * kLanes), std::numeric_limits<double>::infinity());
    const float* ri = ws.ri.data();
    const float* qi = ws.qi.data();
    double* buf = ws.buf.data();
    double* edge = ws.edge.data();
    const __m256d inf = _mm256_set1_pd(std::numeric_limits<double>::infinity());

    for (lane_index_t s0 = 0; s0 < M; s0 += width) {
        const lane_index_t s1 = std::min(M, s0 + width);
        std::fill(buf, buf + (s1 - s0) * kLanes, std::numeric_limits<double>::infinity());
        // D(t - 1, s0 - 1): zero before the first cell, infinite above row 0 elsewhere.
        __m256d diag_lo = s0 == 0 ? _mm256_setzero_pd() : inf, diag_hi = diag_lo;
        for (lane_index_t t = 0; t < N; ++t) {
            if ((t & 63) == 63) check_cancel();  // a group of huge pairs stays interruptible
            __m256 r[DIM > 0 ? DIM : 1];
            if constexpr (DIM > 0)
                for (int d = 0; d < DIM; ++d) r[d] = _mm256_loadu_ps(ri + (t * DIM + d) * kLanes);
            const float* rrow = ri + t * dim * kLanes;
            double* e = edge + t * kLanes;
            __m256d left_lo = _mm256_loadu_pd(e), left_hi = _mm256_loadu_pd(e + 4);
            const __m256d next_diag_lo = left_lo, next_diag_hi = left_hi;
            for (lane_index_t s = s0; s < s1; ++s) {
                const float* qrow = qi + s * dim * kLanes;
                __m256 acc;
                if constexpr (DIM > 0) {
                    __m256 diff = _mm256_sub_ps(r[0], _mm256_loadu_ps(qrow));
                    acc = _mm256_mul_ps(diff, diff);
                    for (int d = 1; d < DIM; ++d) {
                        diff = _mm256_sub_ps(r[d], _mm256_loadu_ps(qrow + d * kLanes));
                        acc = _mm256_add_ps(acc, _mm256_mul_ps(diff, diff));
                    }
                } else {
                    __m256 diff = _mm256_sub_ps(_mm256_loadu_ps(rrow), _mm256_loadu_ps(qrow));
                    acc = _mm256_mul_ps(diff, diff);
                    for (int d = 1; d < dim; ++d) {
                        diff = _mm256_sub_ps(_mm256_loadu_ps(rrow + d * kLanes), _mm256_loadu_ps(qrow + d * kLanes));
                        acc = _mm256_add_ps(acc, _mm256_mul_ps(diff, diff));
                    }
                }
                const __m256 cost = _mm256_sqrt_ps(acc);
                const __m256d c_lo = _mm256_cvtps_pd(_mm256_castps256_ps128(cost));
                const __m256d c_hi = _mm256_cvtps_pd(_mm256_extractf128_ps(cost, 1));
                double* cell = buf + (s - s0) * kLanes;
                const __m256d up_lo = _mm256_loadu_pd(cell), up_hi = _mm256_loadu_pd(cell + 4);
                const __m256d v_lo = _mm256_add_pd(c_lo, _mm256_min_pd(_mm256_min_pd(diag_lo, up_lo), left_lo));
                const __m256d v_hi = _mm256_add_pd(c_hi, _mm256_min_pd(_mm256_min_pd(diag_hi, up_hi), left_hi));
                _mm256_storeu_pd(cell, v_lo);
                _mm256_storeu_pd(cell + 4, v_hi);
                diag_lo = up_lo;
                diag_hi = up_hi;
                left_lo = v_lo;
                left_hi = v_hi;
            }
            _mm256_storeu_pd(e, left_lo);
            _mm256_storeu_pd(e + 4, left_hi);
            diag_lo = next_diag_lo;
            diag_hi = next_diag_hi;
            for (int l = 0; l < count; ++l)
                if (p[l].n - 1 == t && p[l].m - 1 >= s0 && p[l].m - 1 < s1) out[l] = buf[(p[l].m - 1 - s0) * kLanes + l];
        }
    }
}

}  // namespace

__attribute__((target("avx2"))) void dtw_lanes_avx2(const LanePair* pairs, int count, int dim, double* out,
                                                     LaneScratch& scratch) {
    switch (dim) {
        case 2: lanes_kernel<2>(pairs, count, dim, out, scratch); break;
        case 3: lanes_kernel<3>(pairs, count, dim, out, scratch); break;
        default: lanes_kernel<0>(pairs, count, dim, out, scratch);
    }
}

}  // namespace navdtw

#else  // not x86-64: the scalar kernel serves every call

namespace navdtw {
bool avx2_supported() { return false; }
void dtw_lanes_avx2(const LanePair*, int, int, double*, LaneScratch&) {}
}  // namespace navdtw

#endif
