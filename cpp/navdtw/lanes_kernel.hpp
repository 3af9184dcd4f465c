// navdtw: the lane kernel of exact coordinate DTW (see lanes.hpp), written once against a small
// vector type V that each SIMD kernel file supplies (kernels_avx2.cpp, kernels_avx512.cpp,
// kernels_neon.cpp):
//
//   V::kLanes                      pairs per group (8 or 16)
//   V::F                           kLanes float32 lanes
//   V::load(p), V::store(p, x)     kLanes floats from / to memory
//   V::gather(at, d)               lane l = at[l][d]
//   V::sub, V::mul, V::add, V::sqrt  lane-wise, IEEE float32 (correctly rounded sqrt), no FMA
//   V::Sums<T>                     kLanes running sums of type T (double, or float for
//                                  precision="single"): load, fill, store, and
//                                  next(cost, diag, up, left) = cost + min(min(diag, up), left)
//   V::kRows<T>                    rows per sweep of a strip, 1 or 2 (below)
//
// Every cell does the scalar kernel's operations in its order (float32 cost summed left to
// right over the coordinates, converted exactly to T, then the recurrence), so every vector type
// returns the scalar kernel's bits. The including file defines NAVDTW_LANES_TARGET, the target
// attribute of the kernel functions (AVX2 or AVX-512 on x86-64; empty for NEON, which is
// baseline on aarch64).
#pragma once

#include <algorithm>
#include <cstddef>
#include <limits>

#include "navdtw/lanes.hpp"
#include "navdtw/parallel.hpp"

#ifndef NAVDTW_LANES_TARGET
#error "define NAVDTW_LANES_TARGET before including navdtw/lanes_kernel.hpp"
#endif

namespace navdtw::lanes {

// out[(i * dim + d) * L + l] = paths[l][min(i, lengths[l] - 1)][d] for i < rows: one vector per
// (point, coordinate), built from L scalar loads, instead of L scalar stores: the interleave runs
// once per group, yet is a visible share of a group of short rows (benchmarks/README.md).
template <class V, int DIM>
NAVDTW_LANES_TARGET void interleave(const float* const* paths, const lane_index_t* lengths, lane_index_t rows,
                                    int dim_rt, float* out) {
    constexpr int L = V::kLanes;
    const int dim = DIM > 0 ? DIM : dim_rt;
    for (lane_index_t i = 0; i < rows; ++i) {
        const float* at[L];
        for (int l = 0; l < L; ++l) at[l] = paths[l] + std::min(i, lengths[l] - 1) * dim;
        for (int d = 0; d < dim; ++d) V::store(out + (i * dim + d) * L, V::gather(at, d));
    }
}

// The float32 cost of one row's point (r, or the row at `rrow`) against the query point at `qrow`.
template <class V, int DIM>
NAVDTW_ALWAYS_INLINE NAVDTW_LANES_TARGET typename V::F cost(const typename V::F* r, const float* rrow,
                                                            const float* qrow, int dim) {
    constexpr int L = V::kLanes;
    typename V::F acc;
    if constexpr (DIM > 0) {
        typename V::F diff = V::sub(r[0], V::load(qrow));
        acc = V::mul(diff, diff);
        for (int d = 1; d < DIM; ++d) {
            diff = V::sub(r[d], V::load(qrow + d * L));
            acc = V::add(acc, V::mul(diff, diff));
        }
    } else {
        typename V::F diff = V::sub(V::load(rrow), V::load(qrow));
        acc = V::mul(diff, diff);
        for (int d = 1; d < dim; ++d) {
            diff = V::sub(V::load(rrow + d * L), V::load(qrow + d * L));
            acc = V::add(acc, V::mul(diff, diff));
        }
    }
    return V::sqrt(acc);
}

// The state of one strip sweep: rows [0, N) over the strip's columns [s0, s1).
template <class T>
struct Strip {
    const float* ri;  // interleaved reference points
    const float* qi;  // interleaved query points
    T* buf;           // the strip's rolling row: [column - s0][lane]
    T* edge;          // D(t, s0 - 1) on entry, D(t, s1 - 1) on exit: [row][lane]
    lane_index_t s0, s1;
    int dim;
};

// Sweeps row t over the strip. diag holds D(t - 1, s0 - 1) and becomes D(t, s0 - 1).
template <class V, int DIM, class T>
NAVDTW_ALWAYS_INLINE NAVDTW_LANES_TARGET void sweep_row(const Strip<T>& st, lane_index_t t,
                                                        typename V::template Sums<T>& diag) {
    constexpr int L = V::kLanes;
    using F = typename V::F;
    using Lanes = typename V::template Sums<T>;
    const int dim = DIM > 0 ? DIM : st.dim;
    const float* rrow = st.ri + t * dim * L;
    F r[DIM > 0 ? DIM : 1];
    if constexpr (DIM > 0)
        for (int d = 0; d < DIM; ++d) r[d] = V::load(rrow + d * L);
    T* e = st.edge + t * L;
    Lanes left = Lanes::load(e);
    const Lanes next_diag = left;
    for (lane_index_t s = st.s0; s < st.s1; ++s) {
        const F c = cost<V, DIM>(r, rrow, st.qi + s * dim * L, dim);
        T* cell = st.buf + (s - st.s0) * L;
        const Lanes up = Lanes::load(cell);
        const Lanes v = Lanes::next(c, diag, up, left);
        v.store(cell);
        diag = up;
        left = v;
    }
    left.store(e);
    diag = next_diag;
}

// Sweeps rows t and t + 1 together: two chains of min and add per column, independent but for
// one value, where a single row waits on the latency of its chain at every column. The row
// buffer is read and written once for both rows, so it holds row t + 1 only afterwards. diag
// holds D(t - 1, s0 - 1) and becomes D(t + 1, s0 - 1).
template <class V, int DIM, class T>
NAVDTW_ALWAYS_INLINE NAVDTW_LANES_TARGET void sweep_two_rows(const Strip<T>& st, lane_index_t t,
                                                             typename V::template Sums<T>& diag) {
    constexpr int L = V::kLanes;
    using F = typename V::F;
    using Lanes = typename V::template Sums<T>;
    const int dim = DIM > 0 ? DIM : st.dim;
    const float* rrow = st.ri + t * dim * L;
    const float* rrow2 = rrow + dim * L;
    F r[DIM > 0 ? DIM : 1], r2[DIM > 0 ? DIM : 1];
    if constexpr (DIM > 0)
        for (int d = 0; d < DIM; ++d) {
            r[d] = V::load(rrow + d * L);
            r2[d] = V::load(rrow2 + d * L);
        }
    T* e = st.edge + t * L;
    Lanes left = Lanes::load(e), left2 = Lanes::load(e + L);
    const Lanes next_diag = left2;
    for (lane_index_t s = st.s0; s < st.s1; ++s) {
        const float* qrow = st.qi + s * dim * L;
        const F c = cost<V, DIM>(r, rrow, qrow, dim);
        const F c2 = cost<V, DIM>(r2, rrow2, qrow, dim);
        T* cell = st.buf + (s - st.s0) * L;
        const Lanes up = Lanes::load(cell);
        const Lanes v = Lanes::next(c, diag, up, left);    // D(t, s)
        const Lanes v2 = Lanes::next(c2, left, v, left2);  // D(t + 1, s): diag D(t, s - 1), up D(t, s)
        v2.store(cell);
        diag = up;
        left = v;
        left2 = v2;
    }
    left.store(e);
    left2.store(e + L);
    diag = next_diag;
}

template <class V, int DIM, class T>
NAVDTW_LANES_TARGET void lanes_kernel(const LanePair* p, int count, int dim_rt, double* out, LaneScratch& ws) {
    constexpr int L = V::kLanes;
    using Lanes = typename V::template Sums<T>;
    const int dim = DIM > 0 ? DIM : dim_rt;
    lane_index_t N = 0, M = 0;
    for (int l = 0; l < count; ++l) {
        N = std::max(N, p[l].n);
        M = std::max(M, p[l].m);
    }
    // Interleave: lane l of row t holds point min(t, n_l - 1) of its path; unused lanes copy lane 0.
    ws.ri.resize(static_cast<std::size_t>(N * dim * L));
    ws.qi.resize(static_cast<std::size_t>(M * dim * L));
    const float* refs[L];
    const float* qrys[L];
    lane_index_t ns[L], ms[L];
    for (int l = 0; l < L; ++l) {
        const LanePair& q = p[l < count ? l : 0];
        refs[l] = q.ref;
        qrys[l] = q.qry;
        ns[l] = q.n;
        ms[l] = q.m;
    }
    interleave<V, DIM>(refs, ns, N, dim, ws.ri.data());
    interleave<V, DIM>(qrys, ms, M, dim, ws.qi.data());
    // The table is swept in strips of columns so that a strip's rolling row and query points stay
    // in L1 while every row passes over them (a full row of 2000 columns is 224 KB, served from L2).
    // edge[t] carries D(t, last column of the previous strip) across.
    const T inf_value = std::numeric_limits<T>::infinity();
    const auto column_bytes =
        static_cast<lane_index_t>((sizeof(T) + static_cast<std::size_t>(dim) * sizeof(float)) * std::size_t{L});
    const lane_index_t width = std::max<lane_index_t>(16, kStripBytes / column_bytes);
    StripSums<T>& sums = ws.sums_of<T>();
    sums.row.resize(static_cast<std::size_t>(std::min(width, M) * L));
    sums.edge.assign(static_cast<std::size_t>(N * L), inf_value);
    Strip<T> st{ws.ri.data(), ws.qi.data(), sums.row.data(), sums.edge.data(), 0, 0, dim};
    // A lane whose table ends on row t is read from the row buffer before row t + 1 overwrites
    // it, so row t is swept alone.
    const auto ends_on = [&](lane_index_t t) {
        for (int l = 0; l < count; ++l)
            if (p[l].n - 1 == t) return true;
        return false;
    };

    for (st.s0 = 0; st.s0 < M; st.s0 += width) {
        st.s1 = std::min(M, st.s0 + width);
        std::fill(st.buf, st.buf + (st.s1 - st.s0) * L, inf_value);
        // D(t - 1, s0 - 1): zero before the first cell, infinite above row 0 elsewhere.
        Lanes diag = Lanes::fill(st.s0 == 0 ? T(0) : inf_value);
        lane_index_t sweeps = 0;
        for (lane_index_t t = 0; t < N;) {
            if ((++sweeps & 31) == 0) check_cancel();  // a group of huge pairs stays interruptible
            if (V::template kRows<T> == 2 && t + 1 < N && !ends_on(t)) {
                sweep_two_rows<V, DIM, T>(st, t, diag);
                t += 2;
            } else {
                sweep_row<V, DIM, T>(st, t, diag);
                t += 1;
            }
            // the row buffer holds row t - 1
            for (int l = 0; l < count; ++l)
                if (p[l].n == t && p[l].m - 1 >= st.s0 && p[l].m - 1 < st.s1)
                    out[l] = static_cast<double>(st.buf[(p[l].m - 1 - st.s0) * L + l]);
        }
    }
}

template <class V, class T>
NAVDTW_LANES_TARGET void lanes_by_dim(const LanePair* pairs, int count, int dim, double* out, LaneScratch& scratch) {
    switch (dim) {
        case 2:
            lanes_kernel<V, 2, T>(pairs, count, dim, out, scratch);
            break;
        case 3:
            lanes_kernel<V, 3, T>(pairs, count, dim, out, scratch);
            break;
        default:
            lanes_kernel<V, 0, T>(pairs, count, dim, out, scratch);
    }
}

// The entry point of a kernel file: dtw_lanes_* of lanes.hpp, for vector type V.
template <class V>
NAVDTW_LANES_TARGET void dtw_lanes_with(const LanePair* pairs, int count, int dim, bool single, double* out,
                                        LaneScratch& scratch) {
    if (single)
        lanes_by_dim<V, float>(pairs, count, dim, out, scratch);
    else
        lanes_by_dim<V, double>(pairs, count, dim, out, scratch);
}

}  // namespace navdtw::lanes
