// navdtw: the 8-lane exact coordinate DTW (see lanes.hpp), written once against a small vector
// type V that each SIMD kernel file supplies (kernels_avx2.cpp, kernels_neon.cpp):
//
//   V::F8                          8 float32 lanes
//   V::load(p), V::store(p, x)     8 floats from / to memory
//   V::gather(at, d)               lane l = at[l][d]
//   V::sub, V::mul, V::add, V::sqrt  lane-wise, IEEE float32 (correctly rounded sqrt), no FMA
//   V::Sums<T>                     8 running sums of type T (double, or float for
//                                  precision="single"): load, fill, store, and
//                                  next(cost, diag, up, left) = cost + min(min(diag, up), left)
//
// Every cell does the scalar kernel's operations in its order (float32 cost summed left to
// right over the coordinates, converted exactly to T, then the recurrence), so every vector type
// returns the scalar kernel's bits. The including file defines NAVDTW_LANES_TARGET, the target
// attribute of the kernel functions (AVX2 on x86-64; empty for NEON, which is baseline on aarch64).
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

// out[(i * dim + d) * 8 + l] = paths[l][min(i, lengths[l] - 1)][d] for i < rows: one vector per
// (point, coordinate), built from 8 scalar loads, instead of 8 scalar stores: the interleave runs
// once per group, yet is a visible share of a group of short rows (benchmarks/README.md).
template <class V, int DIM>
NAVDTW_LANES_TARGET void interleave(const float* const* paths, const lane_index_t* lengths, lane_index_t rows,
                                    int dim_rt, float* out) {
    const int dim = DIM > 0 ? DIM : dim_rt;
    for (lane_index_t i = 0; i < rows; ++i) {
        const float* at[kLanes];
        for (int l = 0; l < kLanes; ++l) at[l] = paths[l] + std::min(i, lengths[l] - 1) * dim;
        for (int d = 0; d < dim; ++d) V::store(out + (i * dim + d) * kLanes, V::gather(at, d));
    }
}

template <class V, int DIM, class T>
NAVDTW_LANES_TARGET void lanes_kernel(const LanePair* p, int count, int dim_rt, double* out, LaneScratch& ws) {
    using F8 = typename V::F8;
    using Lanes = typename V::template Sums<T>;
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
    interleave<V, DIM>(refs, ns, N, dim, ws.ri.data());
    interleave<V, DIM>(qrys, ms, M, dim, ws.qi.data());
    // The table is swept in strips of columns so that a strip's rolling row and query points stay
    // in L1 while every row passes over them (a full row of 2000 columns is 224 KB, served from L2).
    // edge[t] carries D(t, last column of the previous strip) across.
    const T inf_value = std::numeric_limits<T>::infinity();
    const auto column_bytes = static_cast<lane_index_t>((sizeof(T) + static_cast<std::size_t>(dim) * sizeof(float)) *
                                                        static_cast<std::size_t>(kLanes));
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
            F8 r[DIM > 0 ? DIM : 1];
            if constexpr (DIM > 0)
                for (int d = 0; d < DIM; ++d) r[d] = V::load(ri + (t * DIM + d) * kLanes);
            const float* rrow = ri + t * dim * kLanes;
            T* e = edge + t * kLanes;
            Lanes left = Lanes::load(e);
            const Lanes next_diag = left;
            for (lane_index_t s = s0; s < s1; ++s) {
                const float* qrow = qi + s * dim * kLanes;
                F8 acc;
                if constexpr (DIM > 0) {
                    F8 diff = V::sub(r[0], V::load(qrow));
                    acc = V::mul(diff, diff);
                    for (int d = 1; d < DIM; ++d) {
                        diff = V::sub(r[d], V::load(qrow + d * kLanes));
                        acc = V::add(acc, V::mul(diff, diff));
                    }
                } else {
                    F8 diff = V::sub(V::load(rrow), V::load(qrow));
                    acc = V::mul(diff, diff);
                    for (int d = 1; d < dim; ++d) {
                        diff = V::sub(V::load(rrow + d * kLanes), V::load(qrow + d * kLanes));
                        acc = V::add(acc, V::mul(diff, diff));
                    }
                }
                T* cell = buf + (s - s0) * kLanes;
                const Lanes up = Lanes::load(cell);
                const Lanes v = Lanes::next(V::sqrt(acc), diag, up, left);
                v.store(cell);
                diag = up;
                left = v;
            }
            left.store(e);
            diag = next_diag;
            for (int l = 0; l < count; ++l)
                if (p[l].n - 1 == t && p[l].m - 1 >= s0 && p[l].m - 1 < s1)
                    out[l] = static_cast<double>(buf[(p[l].m - 1 - s0) * kLanes + l]);
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
