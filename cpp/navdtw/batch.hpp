// navdtw: the ragged batch driver.
//
// A ragged set of paths is CSR: flat values plus int64 offsets (path i is values[offsets[i] :
// offsets[i+1]]). A batch scores B pairs (reference index, query index), chosen element-wise,
// by an explicit [B, 2] pair array, or as all |R| x |Q| pairs. In node mode every pair may use
// its own distance matrix through an environment index. Every index the kernels follow is checked
// here, per pair, so a bad id is an exception naming the pair and path, never a wild read.
#pragma once

#include <algorithm>
#include <climits>
#include <cstdint>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "navdtw/dtw.hpp"
#include "navdtw/lanes.hpp"
#include "navdtw/parallel.hpp"
#include "navdtw/portability.hpp"

namespace navdtw {

struct PointSet {
    const float* values;     // [N, dim] row-major
    const index_t* offsets;  // [size + 1]
    index_t size;
    int dim;
    index_t length(index_t i) const { return offsets[i + 1] - offsets[i]; }
    const float* path(index_t i) const { return values + offsets[i] * dim; }
};

template <class I>
struct NodeSet {
    const I* values;
    const index_t* offsets;
    index_t size;
    index_t length(index_t i) const { return offsets[i + 1] - offsets[i]; }
    const I* path(index_t i) const { return values + offsets[i]; }
};

struct DistanceMatrix {
    const float* data;  // [n, n] row-major
    index_t n;
};

enum class PairMode { kElementwise, kExplicit, kAll };

struct PairIndex {
    PairMode mode = PairMode::kElementwise;
    const index_t* pairs = nullptr;  // [B, 2] for kExplicit
    index_t n_queries = 0;           // for kAll: pair b = (b / n_queries, b % n_queries)

    std::pair<index_t, index_t> at(index_t b) const {
        switch (mode) {
            case PairMode::kExplicit:
                return {pairs[2 * b], pairs[2 * b + 1]};
            case PairMode::kAll:
                return {b / n_queries, b % n_queries};
            default:
                return {b, b};
        }
    }
};

[[noreturn]] inline void fail_pair(index_t b, const std::string& what) {
    std::ostringstream os;
    os << "pair " << b << ": " << what;
    throw std::invalid_argument(os.str());
}

// The checks below run for every pair, so they stay small enough to inline; the messages are
// built out of line, on the cold path.
NAVDTW_COLD inline void fail_path_index(index_t b, const char* name, index_t i, index_t size) {
    std::ostringstream os;
    os << name << " index " << i << " is out of range for " << size << " " << name;
    fail_pair(b, os.str());
}

NAVDTW_COLD inline void fail_empty_path(index_t b, const char* name, index_t i) {
    std::ostringstream os;
    os << name << "[" << i << "] is empty; every path needs at least one point";
    fail_pair(b, os.str());
}

NAVDTW_COLD inline void fail_node(index_t b, const char* name, index_t i, index_t k, index_t v, index_t n_nodes,
                                  index_t e) {
    std::ostringstream os;
    os << name << "[" << i << "] has node id " << v << " at position " << k << ", outside [0, " << n_nodes
       << ") of distances[" << e << "]";
    fail_pair(b, os.str());
}

template <class Set>
void check_path(const Set& set, index_t i, const char* name, index_t b) {
    if (i < 0 || i >= set.size) fail_path_index(b, name, i, set.size);
    if (set.length(i) <= 0) fail_empty_path(b, name, i);
}

// One unsigned compare per id: a negative id becomes a huge unsigned value.
template <class I>
bool is_node(I id, index_t n_nodes) {
    return static_cast<std::uint64_t>(static_cast<index_t>(id)) < static_cast<std::uint64_t>(n_nodes);
}

template <class I>
bool ids_in_range(const I* p, index_t len, index_t n_nodes) {
    bool ok = true;
    for (index_t k = 0; k < len; ++k) ok &= is_node(p[k], n_nodes);
    return ok;
}

// Copies p[0 .. len) to out and says whether every id is a node. The check reads the values it
// copies, so the kernel later reads exactly what was checked.
template <class I>
bool copy_ids_in_range(const I* p, index_t len, index_t n_nodes, I* out) {
    bool ok = true;
    for (index_t k = 0; k < len; ++k) {
        const I v = p[k];
        out[k] = v;
        ok &= is_node(v, n_nodes);
    }
    return ok;
}

template <class I>
void check_nodes(const NodeSet<I>& set, index_t i, index_t n_nodes, const char* name, index_t b, index_t e) {
    const I* p = set.path(i);
    const index_t len = set.length(i);
    if (ids_in_range(p, len, n_nodes)) return;
    for (index_t k = 0; k < len; ++k)
        if (!is_node(p[k], n_nodes)) fail_node(b, name, i, k, static_cast<index_t>(p[k]), n_nodes, e);
}

inline void check_method(const Method& m) {
    if (m.window >= 0 && m.radius >= 0) throw std::invalid_argument("window and radius are mutually exclusive");
    if (m.single && m.radius >= 0)
        throw std::invalid_argument("precision='single' is for exact and banded DTW; FastDTW (radius=) sums in double");
}

// Runs fn(b, workspace) -> double for every pair b into out[b], in parallel.
template <class PairFn>
void for_each_pair(index_t B, int workers, const Poll& poll, double* out, const PairFn& fn) {
    run_parallel(
        B, workers, default_chunk(B, workers),
        [&](index_t begin, index_t end) {
            Workspace ws;
            for (index_t b = begin; b < end; ++b) out[b] = fn(b, ws);
        },
        poll);
}

template <class T>
double dtw_points_pair_t(const float* a, index_t n, const float* q, index_t m, int dim, index_t window, Workspace& ws) {
    switch (dim) {
        case 2:
            return dtw_pair<T>(EuclideanCost<float, 2>{a, q, 2}, n, m, window, ws);
        case 3:
            return dtw_pair<T>(EuclideanCost<float, 3>{a, q, 3}, n, m, window, ws);
        default:
            return dtw_pair<T>(EuclideanCost<float, 0>{a, q, dim}, n, m, window, ws);
    }
}

inline double dtw_points_pair(const float* a, index_t n, const float* q, index_t m, int dim, const Method& method,
                              Workspace& ws) {
    if (method.radius >= 0) return fastdtw_points(a, n, q, m, dim, method.radius, ws);
    if (method.single) return dtw_points_pair_t<float>(a, n, q, m, dim, method.window, ws);
    return dtw_points_pair_t<double>(a, n, q, m, dim, method.window, ws);
}

// ---- SIMD lanes: pairs validated, then visited in (|R|, |Q|) order in groups of 8 or 16 ----

struct ShapeOrder {
    std::vector<std::pair<index_t, index_t>> rq;  // (reference, query) of every pair
    std::vector<index_t> order;                   // pairs sorted by shape
    double cells = 0.0;                           // sum of |R| |Q|
};

template <class RSet, class QSet>
ShapeOrder shape_order(const RSet& R, const QSet& Q, const PairIndex& P, index_t B) {
    ShapeOrder so;
    so.rq.resize(static_cast<std::size_t>(B));
    index_t max_n = 0, max_m = 0;
    for (index_t b = 0; b < B; ++b) {
        const auto pr = P.at(b);
        check_path(R, pr.first, "references", b);
        check_path(Q, pr.second, "queries", b);
        so.rq[static_cast<std::size_t>(b)] = pr;
        const index_t n = R.length(pr.first), m = Q.length(pr.second);
        max_n = std::max(max_n, n);
        max_m = std::max(max_m, m);
        so.cells += static_cast<double>(n) * static_cast<double>(m);
    }
    so.order.resize(static_cast<std::size_t>(B));
    auto key = [&](index_t b) {
        const auto& pr = so.rq[static_cast<std::size_t>(b)];
        return (R.length(pr.first) - 1) * max_m + (Q.length(pr.second) - 1);
    };
    const index_t shapes = max_n <= (index_t(1) << 20) / std::max<index_t>(1, max_m) ? max_n * max_m : -1;
    if (shapes >= 0) {
        // Counting sort over the shapes. With few shapes (short paths, where memory traffic
        // dominates) sort each block of consecutive pairs on its own, so a group's paths stay
        // close together in memory; otherwise sort the whole batch.
        const index_t block = shapes <= 1024 ? 1024 : B;
        std::vector<index_t> start(static_cast<std::size_t>(shapes) + 1);
        for (index_t b0 = 0; b0 < B; b0 += block) {
            const index_t b1 = std::min(B, b0 + block);
            std::fill(start.begin(), start.end(), 0);
            for (index_t b = b0; b < b1; ++b) ++start[static_cast<std::size_t>(key(b)) + 1];
            start[0] = b0;
            for (std::size_t k = 1; k < start.size(); ++k) start[k] += start[k - 1];
            for (index_t b = b0; b < b1; ++b)
                so.order[static_cast<std::size_t>(start[static_cast<std::size_t>(key(b))]++)] = b;
        }
    } else {
        std::iota(so.order.begin(), so.order.end(), index_t(0));
        std::sort(so.order.begin(), so.order.end(), [&](index_t a, index_t b) {
            const auto& x = so.rq[static_cast<std::size_t>(a)];
            const auto& y = so.rq[static_cast<std::size_t>(b)];
            return std::make_pair(R.length(x.first), Q.length(x.second)) <
                   std::make_pair(R.length(y.first), Q.length(y.second));
        });
    }
    return so;
}

// Runs group(pair_ids, count, results, scratch) over groups of `lanes` pairs in shape order and
// writes every result to its own slot.
template <class GroupFn>
void run_lanes(const ShapeOrder& so, int lanes, double* out, int workers, const Poll& poll, const GroupFn& group) {
    const auto B = static_cast<index_t>(so.order.size());
    const index_t groups = (B + lanes - 1) / lanes;
    run_parallel(
        groups, workers, std::max<index_t>(1, default_chunk(groups, workers) / 4),
        [&](index_t g0, index_t g1) {
            LaneScratch scratch;
            double res[kMaxLanes];
            for (index_t g = g0; g < g1; ++g) {
                const index_t first = g * lanes;
                const int count = static_cast<int>(std::min<index_t>(lanes, B - first));
                const index_t* ids = so.order.data() + first;
                group(ids, count, res, scratch);
                for (int l = 0; l < count; ++l) out[ids[l]] = res[l];
            }
        },
        poll);
}

inline void dtw_points_batch(const PointSet& R, const PointSet& Q, const PairIndex& P, index_t B, const Method& method,
                             double* out, int workers, const Poll& poll) {
    check_method(method);
    if (R.dim != Q.dim) throw std::invalid_argument("references and queries have different dimensions");
    const bool exact = method.window < 0 && method.radius < 0;
    // Lanes pay off from two pairs on (a group of lanes costs about what one pair costs the scalar
    // kernel, which waits on its chain of mins and adds), once pairs have a few dozen cells
    // (grouping costs a pass and a sort).
    if (exact && B >= 2 && simd_in_use() != Simd::kPortable) {
        const ShapeOrder so = shape_order(R, Q, P, B);
        const double cells_per_pair = so.cells / static_cast<double>(B);
        if (cells_per_pair >= 64.0) {
            const Simd kernel = simd_for_batch(method.single, cells_per_pair, B);
            run_lanes(so, simd_lanes(kernel), out, workers, poll,
                      [&](const index_t* ids, int count, double* res, LaneScratch& scratch) {
                          LanePair lanes[kMaxLanes];
                          for (int l = 0; l < count; ++l) {
                              const auto [r, q] = so.rq[static_cast<std::size_t>(ids[l])];
                              lanes[l] = {R.path(r), R.length(r), Q.path(q), Q.length(q)};
                          }
                          dtw_lanes(kernel, lanes, count, R.dim, method.single, res, scratch);
                      });
            return;
        }
    }
    for_each_pair(B, workers, poll, out, [&](index_t b, Workspace& ws) {
        const auto [r, q] = P.at(b);
        check_path(R, r, "references", b);
        check_path(Q, q, "queries", b);
        return dtw_points_pair(R.path(r), R.length(r), Q.path(q), Q.length(q), R.dim, method, ws);
    });
}

// Pairs per block when a node batch is grouped by environment (see for_each_node_pair).
// A block whose pairs average more ids than kPackIdsPerPair runs in pair order, uncopied, so the
// copy stays below 48 ids per pair of the block.
constexpr index_t kEnvBlockMin = 1024, kEnvBlockMax = index_t(1) << 15, kPackIdsPerPair = 48;

// Resolves and checks pair b of a node batch: path indices, environment, node ids.
template <class I>
struct NodePair {
    index_t r, q;
    const DistanceMatrix& M;
};

template <class I>
NodePair<I> node_pair(const NodeSet<I>& R, const NodeSet<I>& Q, const std::vector<DistanceMatrix>& mats,
                      const index_t* env, const PairIndex& P, index_t b) {
    const auto [r, q] = P.at(b);
    check_path(R, r, "references", b);
    check_path(Q, q, "queries", b);
    const index_t e = env ? env[b] : 0;
    const auto n_env = static_cast<index_t>(mats.size());
    if (e < 0 || e >= n_env)
        throw std::invalid_argument("env[" + std::to_string(b) + "] = " + std::to_string(e) + " is out of range for " +
                                    std::to_string(n_env) + " distance matrices");
    const DistanceMatrix& M = mats[static_cast<std::size_t>(e)];
    check_nodes(R, r, M.n, "references", b, e);
    check_nodes(Q, q, M.n, "queries", b, e);
    return {r, q, M};
}

// Runs solve(matrix, reference ids, n, query ids, m, workspace) -> double for every pair of a node
// batch into out[b], in parallel, after node_pair's checks (or the same checks in two passes).
//
// Pairs run in blocks, each block grouped by environment, so that one matrix stays in cache while
// its pairs run: pairs that pick matrices at random miss the cache on nearly every cost. A block
// is checked and copied in pair order, with its ids packed by environment, then solved from the
// packed copy: reading the pairs' own paths in environment order would wait on scattered loads.
// Node ids are checked as they are copied, so the kernel reads exactly the values checked. One
// matrix takes the same path (the copy costs about what it saves; see benchmarks/README.md), so
// there is one set of checks. Only when there are too many matrices for a block to group (over
// block / 8) do pairs run one by one.
template <class I, class SolveFn>
void for_each_node_pair(const NodeSet<I>& R, const NodeSet<I>& Q, const std::vector<DistanceMatrix>& mats,
                        const index_t* env, const PairIndex& P, index_t B, int workers, const Poll& poll, double* out,
                        const SolveFn& solve) {
    const auto n_env = static_cast<index_t>(mats.size());
    const index_t w = std::max(1, workers);
    const index_t block = std::clamp<index_t>((B + 4 * w - 1) / (4 * w), kEnvBlockMin, kEnvBlockMax);
    if (n_env > block / 8) {
        for_each_pair(B, workers, poll, out, [&](index_t b, Workspace& ws) {
            const NodePair<I> p = node_pair(R, Q, mats, env, P, b);
            return solve(p.M, R.path(p.r), R.length(p.r), Q.path(p.q), Q.length(p.q), ws);
        });
        return;
    }
    struct Checked {
        index_t r, q, e, n, m;  // as the checks saw them: nothing is read twice from the caller's arrays
    };
    struct Packed {
        index_t b, at, n, m;  // pair, offset of its ids in `ids`, lengths
    };
    // Copies pair c's ids to `to` (reference, then query) and says whether all are nodes.
    const bool avx2_ids = use_avx2();
    const auto copy_pair_ids = [&](const Checked& c, index_t n_nodes, I* to) {
        if constexpr (std::is_same_v<I, std::int32_t>)
            if (avx2_ids && n_nodes <= INT32_MAX)
                return copy_node_ids_avx2(R.path(c.r), c.n, Q.path(c.q), c.m, n_nodes, to);
        return copy_ids_in_range(R.path(c.r), c.n, n_nodes, to) &&
               copy_ids_in_range(Q.path(c.q), c.m, n_nodes, to + c.n);
    };
    run_parallel((B + block - 1) / block, workers, 1,
                 [&](index_t k0, index_t k1) {
                     Workspace ws;
                     std::vector<Checked> checked;
                     std::vector<index_t> pairs_at(static_cast<std::size_t>(n_env) + 1),
                         ids_at(static_cast<std::size_t>(n_env) + 1);
                     std::vector<Packed> packed;
                     std::vector<I> ids;
                     for (index_t k = k0; k < k1; ++k) {
                         const index_t b0 = k * block, b1 = std::min(B, b0 + block);
                         // A block checks paths and environments in one pass and node ids in a later one. When
                         // pair b fails either, node_pair re-checks b0 .. b in order and throws for the lowest
                         // bad pair, so the error is the one a pair-by-pair check would give.
                         const auto fail_at = [&](index_t bad) {
                             for (index_t x = b0; x <= bad; ++x) node_pair(R, Q, mats, env, P, x);
                             throw std::logic_error("navdtw: a node pair failed a check and then passed it");
                         };
                         checked.resize(static_cast<std::size_t>(b1 - b0));
                         std::fill(pairs_at.begin(), pairs_at.end(), 0);
                         std::fill(ids_at.begin(), ids_at.end(), 0);
                         for (index_t b = b0; b < b1; ++b) {
                             const auto [r, q] = P.at(b);
                             const index_t e = env ? env[b] : 0;
                             if (!(r >= 0 && r < R.size && q >= 0 && q < Q.size && e >= 0 && e < n_env)) fail_at(b);
                             const Checked c{r, q, e, R.length(r), Q.length(q)};
                             if (c.n <= 0 || c.m <= 0) fail_at(b);
                             checked[static_cast<std::size_t>(b - b0)] = c;
                             ++pairs_at[static_cast<std::size_t>(c.e) + 1];
                             ids_at[static_cast<std::size_t>(c.e) + 1] += c.n + c.m;
                         }
                         index_t n_ids = 0;
                         for (std::size_t e = 1; e < pairs_at.size(); ++e) {
                             n_ids += ids_at[e];
                             pairs_at[e] += pairs_at[e - 1];
                             ids_at[e] += ids_at[e - 1] + kIdCopySlack;  // room for the AVX2 copy's overrun
                         }
                         if (n_ids > (b1 - b0) * kPackIdsPerPair) {
                             // long paths: their own DP outweighs the cache misses, and a copy would be large
                             for (index_t b = b0; b < b1; ++b) {
                                 const Checked& c = checked[static_cast<std::size_t>(b - b0)];
                                 const DistanceMatrix& M = mats[static_cast<std::size_t>(c.e)];
                                 if (!ids_in_range(R.path(c.r), c.n, M.n) || !ids_in_range(Q.path(c.q), c.m, M.n))
                                     fail_at(b);
                                 out[b] = solve(M, R.path(c.r), c.n, Q.path(c.q), c.m, ws);
                                 if ((b & 255) == 255) check_cancel();
                             }
                             continue;
                         }
                         packed.resize(static_cast<std::size_t>(b1 - b0));
                         ids.resize(static_cast<std::size_t>(ids_at.back() + kIdCopySlack));
                         for (index_t b = b0; b < b1; ++b) {
                             const Checked& c = checked[static_cast<std::size_t>(b - b0)];
                             const auto e = static_cast<std::size_t>(c.e);
                             const index_t at = ids_at[e], n_nodes = mats[e].n;
                             if (!copy_pair_ids(c, n_nodes, ids.data() + at)) fail_at(b);
                             ids_at[e] += c.n + c.m;
                             packed[static_cast<std::size_t>(pairs_at[e]++)] = {b, at, c.n, c.m};
                         }
                         // pairs_at[e] now ends bucket e, so bucket e is [pairs_at[e - 1], pairs_at[e])
                         for (index_t e = 0; e < n_env; ++e) {
                             const DistanceMatrix& M = mats[static_cast<std::size_t>(e)];
                             for (index_t i = e == 0 ? 0 : pairs_at[static_cast<std::size_t>(e) - 1];
                                  i < pairs_at[static_cast<std::size_t>(e)]; ++i) {
                                 const Packed& x = packed[static_cast<std::size_t>(i)];
                                 out[x.b] = solve(M, ids.data() + x.at, x.n, ids.data() + x.at + x.n, x.m, ws);
                             }
                             check_cancel();
                         }
                     }
                 },
                 poll);
}

template <class I>
void dtw_nodes_batch(const NodeSet<I>& R, const NodeSet<I>& Q, const std::vector<DistanceMatrix>& mats,
                     const index_t* env, const PairIndex& P, index_t B, const Method& method, double* out, int workers,
                     const Poll& poll) {
    check_method(method);
    if (method.radius >= 0)
        throw std::invalid_argument("radius (FastDTW) needs coordinate paths: node paths cannot be averaged");
    if (mats.empty()) throw std::invalid_argument("distances is empty");
    const bool short_avx2 = method.window < 0 && use_avx2();  // exact short pairs: the VEX-encoded copy
    for_each_node_pair(R, Q, mats, env, P, B, workers, poll, out,
                       [&](const DistanceMatrix& M, const I* a, index_t n, const I* q, index_t m, Workspace& ws) {
                           if (short_avx2 && std::min(n, m) <= kShortRow)
                               return dtw_node_short_avx2(M.data, M.n, a, n, q, m, method.single);
                           const MatrixCost<I> cost{M.data, M.n, a, q};
                           if (method.single) return dtw_pair<float>(cost, n, m, method.window, ws);
                           return dtw_pair<double>(cost, n, m, method.window, ws);
                       });
}

}  // namespace navdtw
