// AVX2 variants (see navdtw/lanes.hpp): the 8-lane exact coordinate DTW, and a VEX-encoded copy of
// the scalar short-row kernel for node pairs. Entered only after a run-time CPU check, so the
// package still runs on CPUs without AVX2. The file is compiled with the baseline flags and only
// the kernel functions carry target("avx2"): with -mavx2 on the whole file, inline and template
// code it shares with other files (std::vector, check_cancel) could be emitted with AVX2
// instructions and picked by the linker for every caller. The node copy gets its AVX2 code by
// always_inline (dtw.hpp's dtw_matrix_short), inside the target("avx2") function only. No FMA:
// multiplies and adds stay separate, as in the scalar kernel.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "navdtw/dtw.hpp"
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

#define NAVDTW_AVX2 __attribute__((target("avx2"), always_inline)) inline

// The recurrence of 8 lanes, sums in double (two vectors) or in float (precision="single", one
// vector): next = cost + min(min(diag, up), left), in that order, as the scalar kernel does it.
struct DoubleLanes {
    using value_type = double;
    __m256d lo, hi;
    NAVDTW_AVX2 static DoubleLanes load(const double* p) { return {_mm256_loadu_pd(p), _mm256_loadu_pd(p + 4)}; }
    NAVDTW_AVX2 static DoubleLanes fill(double x) { return {_mm256_set1_pd(x), _mm256_set1_pd(x)}; }
    NAVDTW_AVX2 void store(double* p) const {
        _mm256_storeu_pd(p, lo);
        _mm256_storeu_pd(p + 4, hi);
    }
    NAVDTW_AVX2 static DoubleLanes next(__m256 cost, const DoubleLanes& diag, const DoubleLanes& up,
                                        const DoubleLanes& left) {
        const __m256d c_lo = _mm256_cvtps_pd(_mm256_castps256_ps128(cost));
        const __m256d c_hi = _mm256_cvtps_pd(_mm256_extractf128_ps(cost, 1));
        return {_mm256_add_pd(c_lo, _mm256_min_pd(_mm256_min_pd(diag.lo, up.lo), left.lo)),
                _mm256_add_pd(c_hi, _mm256_min_pd(_mm256_min_pd(diag.hi, up.hi), left.hi))};
    }
};

struct FloatLanes {
    using value_type = float;
    __m256 v;
    NAVDTW_AVX2 static FloatLanes load(const float* p) { return {_mm256_loadu_ps(p)}; }
    NAVDTW_AVX2 static FloatLanes fill(float x) { return {_mm256_set1_ps(x)}; }
    NAVDTW_AVX2 void store(float* p) const { _mm256_storeu_ps(p, v); }
    NAVDTW_AVX2 static FloatLanes next(__m256 cost, const FloatLanes& diag, const FloatLanes& up,
                                       const FloatLanes& left) {
        return {_mm256_add_ps(cost, _mm256_min_ps(_mm256_min_ps(diag.v, up.v), left.v))};
    }
};

// out[(i * dim + d) * 8 + l] = paths[l][min(i, lengths[l] - 1)][d] for i < rows: one vector per
// (point, coordinate), built from 8 scalar loads, instead of 8 scalar stores (the interleave runs
// once per group, but a group of short rows spends a tenth of its time here).
template <int DIM>
__attribute__((target("avx2"))) void interleave(const float* const* paths, const lane_index_t* lengths,
                                                lane_index_t rows, int dim_rt, float* out) {
    const int dim = DIM > 0 ? DIM : dim_rt;
    for (lane_index_t i = 0; i < rows; ++i) {
        const float* at[kLanes];
        for (int l = 0; l < kLanes; ++l) at[l] = paths[l] + std::min(i, lengths[l] - 1) * dim;
        for (int d = 0; d < dim; ++d)
            _mm256_storeu_ps(out + (i * dim + d) * kLanes, _mm256_setr_ps(at[0][d], at[1][d], at[2][d], at[3][d],
                                                                          at[4][d], at[5][d], at[6][d], at[7][d]));
    }
}

template <int DIM, class Lanes>
__attribute__((target("avx2"))) void lanes_kernel(const LanePair* p, int count, int dim_rt, double* out,
                                                  LaneScratch& ws) {
    using T = typename Lanes::value_type;
    const int dim = DIM > 0 ? DIM : dim_rt;
    lane_index_t N = 0, M = 0;
    for (int l = 0; l < count; ++l) {
        N = std::max(N, p[l].n);
        M = std::max(M, p[l].m);
    }
    // Interleave: lane l of row t holds point min(t, n_l - 1) of its path; unused lanes copy lane 0.
    ws.ri.resize(static_cast<std::size_t>(N * dim * kLanes));
    ws.qi.resize(static_cast<std::size_t>(M * dim * kLanes));
    const float* refs[kLanes];
    const float* qrys[kLanes];
    lane_index_t ns[kLanes], ms[kLanes];
    for (int l = 0; l < kLanes; ++l) {
        const LanePair& q = p[l < count ? l : 0];
        refs[l] = q.ref;
        qrys[l] = q.qry;
        ns[l] = q.n;
        ms[l] = q.m;
    }
    interleave<DIM>(refs, ns, N, dim, ws.ri.data());
    interleave<DIM>(qrys, ms, M, dim, ws.qi.data());
    // The table is swept in strips of columns so that a strip's rolling row and query points stay
    // in L1 while every row passes over them (a full row of 2000 columns, 224 KB, streams from L2
    // and caps the kernel). edge[t] carries D(t, last column of the previous strip) across.
    const T inf_value = std::numeric_limits<T>::infinity();
    const auto column_bytes = static_cast<lane_index_t>((sizeof(T) + dim * sizeof(float)) * kLanes);
    const lane_index_t width = std::max<lane_index_t>(16, kStripBytes / column_bytes);
    StripSums<T>& sums = ws.sums_of<T>();
    sums.row.resize(static_cast<std::size_t>(std::min(width, M) * kLanes));
    sums.edge.assign(static_cast<std::size_t>(N * kLanes), inf_value);
    const float* ri = ws.ri.data();
    const float* qi = ws.qi.data();
    T* buf = sums.row.data();
    T* edge = sums.edge.data();
    const Lanes inf = Lanes::fill(inf_value);

    for (lane_index_t s0 = 0; s0 < M; s0 += width) {
        const lane_index_t s1 = std::min(M, s0 + width);
        std::fill(buf, buf + (s1 - s0) * kLanes, inf_value);
        // D(t - 1, s0 - 1): zero before the first cell, infinite above row 0 elsewhere.
        Lanes diag = s0 == 0 ? Lanes::fill(T(0)) : inf;
        for (lane_index_t t = 0; t < N; ++t) {
            if ((t & 63) == 63) check_cancel();  // a group of huge pairs stays interruptible
            __m256 r[DIM > 0 ? DIM : 1];
            if constexpr (DIM > 0)
                for (int d = 0; d < DIM; ++d) r[d] = _mm256_loadu_ps(ri + (t * DIM + d) * kLanes);
            const float* rrow = ri + t * dim * kLanes;
            T* e = edge + t * kLanes;
            Lanes left = Lanes::load(e);
            const Lanes next_diag = left;
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
                T* cell = buf + (s - s0) * kLanes;
                const Lanes up = Lanes::load(cell);
                const Lanes v = Lanes::next(_mm256_sqrt_ps(acc), diag, up, left);
                v.store(cell);
                diag = up;
                left = v;
            }
            left.store(e);
            diag = next_diag;
            for (int l = 0; l < count; ++l)
                if (p[l].n - 1 == t && p[l].m - 1 >= s0 && p[l].m - 1 < s1)
                    out[l] = buf[(p[l].m - 1 - s0) * kLanes + l];
        }
    }
}

template <class Lanes>
__attribute__((target("avx2"))) void lanes_by_dim(const LanePair* pairs, int count, int dim, double* out,
                                                  LaneScratch& scratch) {
    switch (dim) {
        case 2:
            lanes_kernel<2, Lanes>(pairs, count, dim, out, scratch);
            break;
        case 3:
            lanes_kernel<3, Lanes>(pairs, count, dim, out, scratch);
            break;
        default:
            lanes_kernel<0, Lanes>(pairs, count, dim, out, scratch);
    }
}

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

__attribute__((target("avx2"))) bool copy_node_ids_avx2(const std::int32_t* ref, lane_index_t n,
                                                        const std::int32_t* qry, lane_index_t m, lane_index_t n_nodes,
                                                        std::int32_t* out) {
    const __m256i limit = _mm256_set1_epi32(static_cast<int>(n_nodes));  // >= 1: a matrix is never empty
    const __m256i bad_ref = copy_ids8(ref, n, limit, out);  // first: the query's copy overwrites its overrun
    const __m256i bad = _mm256_or_si256(bad_ref, copy_ids8(qry, m, limit, out + n));
    return _mm256_testz_si256(bad, bad);
}

__attribute__((target("avx2"))) void dtw_lanes_avx2(const LanePair* pairs, int count, int dim, bool single, double* out,
                                                    LaneScratch& scratch) {
    if (single)
        lanes_by_dim<FloatLanes>(pairs, count, dim, out, scratch);
    else
        lanes_by_dim<DoubleLanes>(pairs, count, dim, out, scratch);
}

__attribute__((target("avx2"))) double dtw_node_short_avx2(const float* matrix, lane_index_t n_nodes,
                                                           const std::int32_t* ref, lane_index_t n,
                                                           const std::int32_t* qry, lane_index_t m, bool single) {
    const MatrixCost<std::int32_t> cost{matrix, n_nodes, ref, qry};
    return single ? dtw_matrix_short<float>(cost, n, m) : dtw_matrix_short<double>(cost, n, m);
}

__attribute__((target("avx2"))) double dtw_node_short_avx2(const float* matrix, lane_index_t n_nodes,
                                                           const std::int64_t* ref, lane_index_t n,
                                                           const std::int64_t* qry, lane_index_t m, bool single) {
    const MatrixCost<std::int64_t> cost{matrix, n_nodes, ref, qry};
    return single ? dtw_matrix_short<float>(cost, n, m) : dtw_matrix_short<double>(cost, n, m);
}

}  // namespace navdtw

#else  // not x86-64: the scalar kernel serves every call

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
