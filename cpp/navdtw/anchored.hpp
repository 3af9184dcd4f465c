// navdtw: anchored DTW, the alignment constrained to pass through given cells.
//
// Anchors are (reference index, query index) cells of one pair's DP table, in path order. Two
// constraints (docs/engine.md, "Anchored DTW", proves both decompositions):
//
// - through (exclusive = false): the warping path visits every anchor. With the symmetric1 steps
//   (1, 0), (0, 1), (1, 1) and additive cell costs, a path through cell a splits at a into a path
//   (0, 0) -> a and a path a -> (n-1, m-1) that share only a, and every such pair of paths joins
//   into a path through a. So the best path through a is the best of each part, and
//       DTW_a = DTW(block before a) + DTW(block after a) - d(a),
//   each block an ordinary DTW of the sub-paths between consecutive anchors. The engine computes
//   exactly that: every block is a pair of sub-paths (SIMD lanes, the band, the short-row kernels
//   all apply), then sum_k (block_k - d(end of block k)) + last block, in this order, so every
//   kernel returns the same bits. A band (window=) is a Sakoe-Chiba band of each block.
// - exclusive (exclusive = true): IVLN-CE's window (habitat_extensions/tour_ndtw.py,
//   window_align_func, on dtw-python's symmetric1): every cell of reference row r other than the
//   anchor (r, q) is removed from the table, except the start cell (0, 0), which dtw-python seeds
//   whatever the window says. For r > 0 the path visits row r, hence (r, q), and no other cell of
//   row r: reference point r is aligned with query point q alone. One row-windowed recurrence over
//   the table, the reference on the rows; a band is a Sakoe-Chiba band of each stretch between
//   consecutive anchors of rows > 0. Removing every cell of a row leaves no path: DTW = inf.
#pragma once

#include <algorithm>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "navdtw/batch.hpp"

namespace navdtw {

// Ragged anchors: pair b's anchors are values[2 offsets[b] .. 2 offsets[b+1]) as (r, q) rows.
struct AnchorSet {
    const index_t* values;   // [A, 2]
    const index_t* offsets;  // [B + 1]
    index_t count(index_t b) const { return offsets[b + 1] - offsets[b]; }
    const index_t* of(index_t b) const { return values + 2 * offsets[b]; }
};

NAVDTW_COLD inline void fail_anchor(index_t b, index_t k, index_t r, index_t q, const std::string& why) {
    std::ostringstream os;
    os << "anchors[" << b << "][" << k << "] = (" << r << ", " << q << ") " << why;
    throw std::invalid_argument(os.str());
}

// Anchors in range of an n x m table and in path order; with exclusive, one per reference row.
inline void check_anchors(const index_t* a, index_t count, index_t n, index_t m, bool exclusive, index_t b) {
    for (index_t k = 0; k < count; ++k) {
        const index_t r = a[2 * k], q = a[2 * k + 1];
        if (r < 0 || r >= n || q < 0 || q >= m) {
            std::ostringstream os;
            os << "is out of range: the reference has " << n << " points and the query " << m;
            fail_anchor(b, k, r, q, os.str());
        }
        if (k == 0) continue;
        const index_t pr = a[2 * k - 2], pq = a[2 * k - 1];
        if (r < pr || q < pq) {
            std::ostringstream os;
            os << "comes after (" << pr << ", " << pq
               << "): anchors must follow the path, both indices non-decreasing (not monotone)";
            fail_anchor(b, k, r, q, os.str());
        }
        if (exclusive && r == pr) {
            std::ostringstream os;
            os << "repeats reference index " << r << " of the anchor before it; with exclusive=True a reference "
               << "point has at most one anchor";
            fail_anchor(b, k, r, q, os.str());
        }
    }
}

// ---- through: blocks between consecutive anchors ----

struct Block {
    index_t r0, q0, r1, q1;  // the block's corners, inclusive
};

// The blocks of a through-anchored n x m table: (0, 0), the anchors, (n-1, m-1), with repeated
// corners merged.
inline void through_blocks(const index_t* a, index_t count, index_t n, index_t m, std::vector<Block>& out) {
    out.clear();
    index_t r = 0, q = 0;
    for (index_t k = 0; k <= count; ++k) {
        const index_t nr = k < count ? a[2 * k] : n - 1, nq = k < count ? a[2 * k + 1] : m - 1;
        if (nr == r && nq == q) continue;
        out.push_back({r, q, nr, nq});
        r = nr;
        q = nq;
    }
    if (out.empty()) out.push_back({0, 0, 0, 0});  // a 1 x 1 table
}

// sum_k (block_k - d(end of block k)) over all blocks but the last, plus the last block; inf
// when any block is inf (never inf - inf). Every term is >= 0 in floating point too: a block's
// value is its end cell's cost plus non-negative sums.
template <class EndCost>
double join_blocks(const Block* blocks, const double* values, std::size_t count, const EndCost& end_cost) {
    double total = 0.0;
    for (std::size_t k = 0; k < count; ++k) {
        const double v = values[k];
        if (v == kInf) return kInf;
        total += k + 1 < count ? v - end_cost(blocks[k].r1, blocks[k].q1) : v;
    }
    return total;
}

// ---- exclusive: one row-windowed recurrence ----

// Row ranges [lo, hi] of a Sakoe-Chiba band of half-width w over an R x S block (any shape), in
// block coordinates, written to lo[0 .. R), hi[0 .. R). The cells are those of BandWindow with
// the longer side on the rows (dtw_pair's band), read row by row.
inline void band_rows(index_t R, index_t S, index_t w, index_t* lo, index_t* hi) {
    w = std::min(w, std::max(R, S));
    if (R >= S) {
        const BandWindow bw{R, S, w};
        for (index_t t = 0; t < R; ++t) {
            lo[t] = bw.lo(t);
            hi[t] = bw.hi(t);
        }
        return;
    }
    // Transposed: column s of the block keeps rows bw.lo(s) .. bw.hi(s), both non-decreasing in s.
    // Row t keeps the columns s with bw.lo(s) <= t <= bw.hi(s), a run from the first s whose hi
    // reaches t to the last s whose lo does not pass t.
    const BandWindow bw{S, R, w};
    index_t first = 0, last = 0;
    for (index_t t = 0; t < R; ++t) {
        while (first < S && bw.hi(first) < t) ++first;
        while (last + 1 < S && bw.lo(last + 1) <= t) ++last;
        lo[t] = first;
        hi[t] = last;
    }
}

// Reference on the rows (cost(r, q)). `a` holds count anchors already checked (exclusive rules).
template <class Cost>
double dtw_exclusive(const Cost& cost, index_t n, index_t m, const index_t* a, index_t count, index_t window,
                     Workspace& ws) {
    // Row ranges. First the stretches between the cells every path visits, (0, 0), the anchors
    // of rows > 0 and (n-1, m-1): their rows stay within the stretch's columns (as every path
    // does) or, with a band, within the stretch's band. Then each anchored row holds its anchor
    // alone; row 0 keeps (0, 0) too, which dtw-python seeds whatever the window says: so row 0 is
    // the run (0, 0) .. (0, q) when q <= 1, and otherwise (0, 0) alone ((0, q) unreachable).
    ws.lo.resize(static_cast<std::size_t>(n));
    ws.hi.resize(static_cast<std::size_t>(n));
    index_t* lo = ws.lo.data();
    index_t* hi = ws.hi.data();
    index_t r0 = 0, q0 = 0;
    for (index_t k = 0; k <= count; ++k) {
        const index_t r1 = k < count ? a[2 * k] : n - 1, q1 = k < count ? a[2 * k + 1] : m - 1;
        if (k < count && r1 == 0) continue;
        if (window >= 0) {
            band_rows(r1 - r0 + 1, q1 - q0 + 1, window, lo + r0, hi + r0);
            for (index_t t = r0; t <= r1; ++t) {
                lo[t] += q0;
                hi[t] += q0;
            }
        } else {
            for (index_t t = r0; t <= r1; ++t) {
                lo[t] = q0;
                hi[t] = q1;
            }
        }
        r0 = r1;
        q0 = q1;
    }
    for (index_t k = 0; k < count; ++k) {
        const index_t r = a[2 * k], q = a[2 * k + 1];
        lo[r] = r == 0 ? 0 : q;
        hi[r] = r == 0 && q > 1 ? 0 : q;
    }
    // The recurrence, with the previous row's range checked explicitly (rows may be empty).
    double* buf = ws.rolling_row<double>(m);
    index_t plo = 0, phi = -1;
    for (index_t t = 0; t < n; ++t) {
        if ((t & 255) == 255) check_cancel();
        const index_t l = lo[t], h = hi[t];
        if (l > h) return kInf;  // a row without cells: no path
        auto prev = [&](index_t s) { return s >= plo && s <= phi ? buf[s] : kInf; };
        double diag = t == 0 ? (l == 0 ? 0.0 : kInf) : prev(l - 1);
        double left = kInf;
        for (index_t s = l; s <= h; ++s) {
            const double up = t == 0 ? kInf : prev(s);
            const double v = cost(t, s) + std::min(std::min(diag, up), left);
            buf[s] = v;
            diag = up;
            left = v;
        }
        plo = l;
        phi = h;
    }
    return phi == m - 1 ? buf[m - 1] : kInf;
}

// ---- one pair ----

// Anchored DTW of one pair whose anchors are checked. make_cost(r0, q0) is the cost functor of
// the sub-paths starting at reference point r0 and query point q0; cost(r, q) = make_cost(0, 0).
template <class MakeCost>
double dtw_anchored_pair(const MakeCost& make_cost, index_t n, index_t m, const index_t* a, index_t count,
                         bool exclusive, index_t window, Workspace& ws, std::vector<Block>& blocks,
                         std::vector<double>& values) {
    const auto cost = make_cost(0, 0);
    if (exclusive) return dtw_exclusive(cost, n, m, a, count, window, ws);
    through_blocks(a, count, n, m, blocks);
    values.resize(blocks.size());
    for (std::size_t k = 0; k < blocks.size(); ++k) {
        const Block& c = blocks[k];
        values[k] = dtw_pair<double>(make_cost(c.r0, c.q0), c.r1 - c.r0 + 1, c.q1 - c.q0 + 1, window, ws);
    }
    return join_blocks(blocks.data(), values.data(), blocks.size(), cost);
}

template <int DIM>
struct SubPoints {
    const float* a;
    const float* q;
    int dim;
    EuclideanCost<float, DIM> operator()(index_t r0, index_t q0) const { return {a + r0 * dim, q + q0 * dim, dim}; }
};

inline double dtw_anchored_points_pair(const float* a, index_t n, const float* q, index_t m, int dim,
                                       const index_t* anchors, index_t count, bool exclusive, index_t window,
                                       Workspace& ws, std::vector<Block>& blocks, std::vector<double>& values) {
    switch (dim) {
        case 2:
            return dtw_anchored_pair(SubPoints<2>{a, q, 2}, n, m, anchors, count, exclusive, window, ws, blocks,
                                     values);
        case 3:
            return dtw_anchored_pair(SubPoints<3>{a, q, 3}, n, m, anchors, count, exclusive, window, ws, blocks,
                                     values);
        default:
            return dtw_anchored_pair(SubPoints<0>{a, q, dim}, n, m, anchors, count, exclusive, window, ws, blocks,
                                     values);
    }
}

template <class I>
struct SubNodes {
    const float* m;
    index_t stride;
    const I* a;
    const I* q;
    MatrixCost<I> operator()(index_t r0, index_t q0) const { return {m, stride, a + r0, q + q0}; }
};

// ---- batches ----

inline void check_anchor_pairs(const AnchorSet& A, index_t B) {
    if (A.offsets[0] != 0) throw std::invalid_argument("anchors: offsets[0] must be 0");
    for (index_t b = 0; b < B; ++b)
        if (A.offsets[b + 1] < A.offsets[b])
            throw std::invalid_argument("anchors: offsets decrease at pair " + std::to_string(b));
}

// The blocks of a checked through-anchored pair (as through_blocks lists them) appended to `out` as
// lane pairs: sub-paths of the pair's paths, no copies. Returns the cells they hold.
inline double through_lane_pairs(const float* a, index_t n, const float* q, index_t m, int dim, const index_t* anc,
                                 index_t count, std::vector<LanePair>& out) {
    const std::size_t before = out.size();
    double cells = 0.0;
    index_t r = 0, c = 0;
    for (index_t k = 0; k <= count; ++k) {
        const index_t nr = k < count ? anc[2 * k] : n - 1, nc = k < count ? anc[2 * k + 1] : m - 1;
        if (nr == r && nc == c) continue;
        out.push_back({a + r * dim, nr - r + 1, q + c * dim, nc - c + 1});
        cells += static_cast<double>(nr - r + 1) * static_cast<double>(nc - c + 1);
        r = nr;
        c = nc;
    }
    if (out.size() == before) {  // a 1 x 1 table
        out.push_back({a, 1, q, 1});
        cells = 1.0;
    }
    return cells;
}

// join_blocks over lane pairs: a block's end cell is its sub-paths' last points, the same floats
// the pair's cost reads at (r1, q1), so the bits are join_blocks'.
inline double join_lane_pairs(const LanePair* lp, const double* values, std::size_t count, int dim) {
    double total = 0.0;
    for (std::size_t k = 0; k < count; ++k) {
        const double v = values[k];
        if (v == kInf) return kInf;
        if (k + 1 < count) {
            const EuclideanCost<float, 0> end{lp[k].ref, lp[k].qry, dim};
            total += v - end(lp[k].n - 1, lp[k].m - 1);
        } else {
            total += v;
        }
    }
    return total;
}

// Through-anchored exact coordinate batches on the SIMD lanes: every block of every pair is one
// lane pair (pair b's are lp[first[b] .. first[b + 1])), in shape order; then each pair joins its
// blocks as the scalar code does, so the bits are the same. One pass over the pairs lists the
// lane pairs (the storage reserved once: no regrowth, no second list of blocks).
inline void through_lanes(const std::vector<LanePair>& lp, const std::vector<index_t>& first, int dim, Simd kernel,
                          double* out, int workers, const Poll& poll) {
    const auto nb = static_cast<index_t>(lp.size());
    // Blocks in shape order, so a group of lanes pads little: a counting sort over the shapes
    // (as shape_order does for pairs), or a sort when there are too many shapes.
    ShapeOrder so;
    so.order.resize(lp.size());
    index_t max_n = 1, max_m = 1;
    for (const LanePair& p : lp) {
        max_n = std::max(max_n, p.n);
        max_m = std::max(max_m, p.m);
    }
    if (max_n <= (index_t(1) << 20) / max_m) {
        std::vector<index_t> start(static_cast<std::size_t>(max_n * max_m) + 1, 0);
        auto key = [&](index_t k) {
            const LanePair& p = lp[static_cast<std::size_t>(k)];
            return static_cast<std::size_t>((p.n - 1) * max_m + (p.m - 1));
        };
        for (index_t k = 0; k < nb; ++k) ++start[key(k) + 1];
        for (std::size_t i = 1; i < start.size(); ++i) start[i] += start[i - 1];
        for (index_t k = 0; k < nb; ++k) so.order[static_cast<std::size_t>(start[key(k)]++)] = k;
    } else {
        for (index_t k = 0; k < nb; ++k) so.order[static_cast<std::size_t>(k)] = k;
        std::sort(so.order.begin(), so.order.end(), [&](index_t x, index_t y) {
            const LanePair& u = lp[static_cast<std::size_t>(x)];
            const LanePair& v = lp[static_cast<std::size_t>(y)];
            return u.n != v.n ? u.n < v.n : (u.m != v.m ? u.m < v.m : x < y);
        });
    }
    std::vector<double> values(lp.size());
    run_lanes(so, simd_lanes(kernel), values.data(), workers, poll,
              [&](const index_t* ids, int count, double* res, LaneScratch& scratch) {
                  LanePair lanes[kMaxLanes];
                  for (int l = 0; l < count; ++l) lanes[l] = lp[static_cast<std::size_t>(ids[l])];
                  dtw_lanes(kernel, lanes, count, dim, false, res, scratch);
              });
    for (std::size_t b = 0; b + 1 < first.size(); ++b) {
        const auto k0 = static_cast<std::size_t>(first[b]);
        out[b] = join_lane_pairs(lp.data() + k0, values.data() + k0, static_cast<std::size_t>(first[b + 1]) - k0, dim);
    }
}

inline void dtw_anchored_points_batch(const PointSet& R, const PointSet& Q, const PairIndex& P, index_t B,
                                      const AnchorSet& A, bool exclusive, index_t window, double* out, int workers,
                                      const Poll& poll) {
    if (R.dim != Q.dim) throw std::invalid_argument("references and queries have different dimensions");
    check_anchor_pairs(A, B);
    if (!exclusive && window < 0 && simd_in_use() != Simd::kPortable) {
        // Every pair checked first, its blocks listed as lane pairs (at most anchors + 1 each).
        std::vector<LanePair> lp;
        lp.reserve(static_cast<std::size_t>(A.offsets[B] + B));
        std::vector<index_t> first(static_cast<std::size_t>(B) + 1, 0);
        double cells = 0.0;
        for (index_t b = 0; b < B; ++b) {
            const auto [r, q] = P.at(b);
            check_path(R, r, "references", b);
            check_path(Q, q, "queries", b);
            const index_t n = R.length(r), m = Q.length(q);
            check_anchors(A.of(b), A.count(b), n, m, false, b);
            cells += through_lane_pairs(R.path(r), n, Q.path(q), m, R.dim, A.of(b), A.count(b), lp);
            first[static_cast<std::size_t>(b) + 1] = static_cast<index_t>(lp.size());
        }
        const auto nb = static_cast<index_t>(lp.size());
        if (nb >= 2 && cells / static_cast<double>(nb) >= 64.0) {
            through_lanes(lp, first, R.dim, simd_for_batch(false, cells / static_cast<double>(nb), nb), out, workers,
                          poll);
            return;
        }
    }
    run_parallel(
        B, workers, default_chunk(B, workers),
        [&](index_t begin, index_t end) {
            Workspace ws;
            std::vector<Block> blocks;
            std::vector<double> values;
            for (index_t b = begin; b < end; ++b) {
                const auto [r, q] = P.at(b);
                check_path(R, r, "references", b);
                check_path(Q, q, "queries", b);
                const index_t n = R.length(r), m = Q.length(q);
                check_anchors(A.of(b), A.count(b), n, m, exclusive, b);
                out[b] = dtw_anchored_points_pair(R.path(r), n, Q.path(q), m, R.dim, A.of(b), A.count(b), exclusive,
                                                  window, ws, blocks, values);
            }
        },
        poll);
}

template <class I>
void dtw_anchored_nodes_batch(const NodeSet<I>& R, const NodeSet<I>& Q, const std::vector<DistanceMatrix>& mats,
                              const index_t* env, const PairIndex& P, index_t B, const AnchorSet& A, bool exclusive,
                              index_t window, double* out, int workers, const Poll& poll) {
    if (mats.empty()) throw std::invalid_argument("distances is empty");
    check_anchor_pairs(A, B);
    run_parallel(
        B, workers, default_chunk(B, workers),
        [&](index_t begin, index_t end) {
            Workspace ws;
            std::vector<Block> blocks;
            std::vector<double> values;
            for (index_t b = begin; b < end; ++b) {
                const NodePair<I> p = node_pair(R, Q, mats, env, P, b);
                const index_t n = R.length(p.r), m = Q.length(p.q);
                check_anchors(A.of(b), A.count(b), n, m, exclusive, b);
                out[b] = dtw_anchored_pair(SubNodes<I>{p.M.data, p.M.n, R.path(p.r), Q.path(p.q)}, n, m, A.of(b),
                                           A.count(b), exclusive, window, ws, blocks, values);
            }
        },
        poll);
}

}  // namespace navdtw
