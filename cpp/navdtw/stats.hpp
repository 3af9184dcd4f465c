// navdtw: per-pair path statistics behind the navigation metrics (metrics.py).
//
// One pass over a (reference, query) pair gives every quantity that needs a loop over points:
// end and oracle distances, both path lengths, the nearest-point distances behind AD, MD and
// CLS's path coverage, and the edge edit distance behind SED. metrics.py turns these columns into
// the metrics of each convention with numpy. For node paths, every distance between a reference
// node r and a query node q is distances[r, q], as in the DTW cost (so a non-symmetric matrix
// means the same thing everywhere), and a distance along one path is distances[from, to].
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include "navdtw/batch.hpp"

namespace navdtw {

enum Stat : int {
    kNE = 0,        // d(r_last, q_last)
    kONE,           // min_j d(r_last, q_j)
    kPLQ,           // sum_j d(q_j, q_j+1)
    kPLR,           // sum_i d(r_i, r_i+1)
    kStartGoal,     // d(r_last, q_first)
    kRefStartGoal,  // d(r_first, r_last)
    kAD,            // mean_j min_i d(r_i, q_j)
    kMD,            // max_j min_i d(r_i, q_j)
    kPC,            // mean_i exp(-min_j d(r_i, q_j) / threshold)
    kEdit,          // Levenshtein distance between the edge sequences (node paths only; NaN otherwise)
    kNumStats
};

// The name of every statistic, in enum order: the one list the bindings export as _core.STATS and
// the Python metric registry (registry.py) reads its columns by.
struct StatName {
    Stat stat;
    const char* name;
};
inline constexpr StatName kStatNames[] = {
    {kNE, "ne"},
    {kONE, "one"},
    {kPLQ, "pl_query"},
    {kPLR, "pl_reference"},
    {kStartGoal, "start_goal"},
    {kRefStartGoal, "reference_start_goal"},
    {kAD, "ad"},
    {kMD, "md"},
    {kPC, "pc"},
    {kEdit, "edit"},
};
static_assert(sizeof(kStatNames) / sizeof(kStatNames[0]) == kNumStats, "every statistic needs a name");
constexpr bool stat_names_in_order() {
    for (int k = 0; k < kNumStats; ++k)
        if (kStatNames[k].stat != k) return false;
    return true;
}
static_assert(stat_names_in_order(), "kStatNames must list the statistics in enum order");

template <class I>
struct NodeMetric {
    const float* m;
    index_t stride;
    double operator()(I a, I b) const {
        return static_cast<double>(m[static_cast<index_t>(a) * stride + static_cast<index_t>(b)]);
    }
};

struct PointMetric {
    int dim;
    double operator()(const float* a, const float* b) const { return EuclideanCost<float, 0>{a, b, dim}(0, 0); }
};

template <class I>
struct NodeSeq {
    const I* p;
    I operator[](index_t i) const { return p[i]; }
    bool same_edge(index_t i, const NodeSeq& o, index_t j) const { return p[i] == o.p[j] && p[i + 1] == o.p[j + 1]; }
};

struct PointSeq {
    const float* p;
    int dim;
    const float* operator[](index_t i) const { return p + i * dim; }
};

// Levenshtein distance (unit costs) between the edge sequences (s_0 s_1, s_1 s_2, ...) of two
// node paths, with one rolling row.
template <class I>
double edge_edit_distance(const NodeSeq<I>& r, index_t n, const NodeSeq<I>& q, index_t m, std::vector<double>& row) {
    const index_t er = n - 1, eq = m - 1;
    if (er == 0 || eq == 0) return static_cast<double>(std::max(er, eq));
    row.resize(static_cast<std::size_t>(eq + 1));
    for (index_t j = 0; j <= eq; ++j) row[static_cast<std::size_t>(j)] = static_cast<double>(j);
    for (index_t i = 1; i <= er; ++i) {
        double diag = row[0];
        row[0] = static_cast<double>(i);
        for (index_t j = 1; j <= eq; ++j) {
            const double up = row[static_cast<std::size_t>(j)];
            const double sub = diag + (r.same_edge(i - 1, q, j - 1) ? 0.0 : 1.0);
            row[static_cast<std::size_t>(j)] = std::min(sub, std::min(up, row[static_cast<std::size_t>(j - 1)]) + 1.0);
            diag = up;
        }
    }
    return row[static_cast<std::size_t>(eq)];
}

struct StatsScratch {
    std::vector<double> near_r;  // min_j d(r_i, q_j)
    std::vector<double> row;     // edit-distance row
};

// Writes stat k of this pair to out[k * stride] (the batch output is column-major [kNumStats, B],
// so metrics.py reads every statistic as one contiguous array).
template <class Metric, class Seq>
void pair_stats(const Metric& d, const Seq& r, index_t n, const Seq& q, index_t m, double threshold, double* out,
                index_t stride, StatsScratch& s) {
    const auto goal = r[n - 1];
    out[kNE * stride] = d(goal, q[m - 1]);
    double one = kInf, plq = 0.0, plr = 0.0;
    for (index_t j = 0; j < m; ++j) one = std::min(one, d(goal, q[j]));
    for (index_t j = 0; j + 1 < m; ++j) plq += d(q[j], q[j + 1]);
    for (index_t i = 0; i + 1 < n; ++i) plr += d(r[i], r[i + 1]);
    out[kONE * stride] = one;
    out[kPLQ * stride] = plq;
    out[kPLR * stride] = plr;
    out[kStartGoal * stride] = d(goal, q[0]);
    out[kRefStartGoal * stride] = d(r[0], goal);

    // One lookup per cell serves both nearest-point directions: min over r (AD, MD) and min over
    // q (path coverage).
    s.near_r.assign(static_cast<std::size_t>(n), kInf);
    double ad = 0.0, md = 0.0;
    for (index_t j = 0; j < m; ++j) {
        double best = kInf;
        for (index_t i = 0; i < n; ++i) {
            const double rq = d(r[i], q[j]);
            best = std::min(best, rq);
            double& nr = s.near_r[static_cast<std::size_t>(i)];
            nr = std::min(nr, rq);
        }
        ad += best;
        md = std::max(md, best);
    }
    out[kAD * stride] = ad / static_cast<double>(m);
    out[kMD * stride] = md;
    double pc = 0.0;
    for (index_t i = 0; i < n; ++i) {
        const double x = s.near_r[static_cast<std::size_t>(i)];
        pc += x == 0.0 ? 1.0 : std::exp(-x / threshold);  // reference nodes the query visits are common
    }
    out[kPC * stride] = pc / static_cast<double>(n);
}

inline void stats_points_batch(const PointSet& R, const PointSet& Q, const PairIndex& P, index_t B, double threshold,
                               double* out, int workers, const Poll& poll) {
    if (R.dim != Q.dim) throw std::invalid_argument("references and queries have different dimensions");
    run_parallel(
        B, workers, default_chunk(B, workers),
        [&](index_t begin, index_t end) {
            StatsScratch s;
            for (index_t b = begin; b < end; ++b) {
                const auto [r, q] = P.at(b);
                check_path(R, r, "references", b);
                check_path(Q, q, "queries", b);
                double* o = out + b;
                pair_stats(PointMetric{R.dim}, PointSeq{R.path(r), R.dim}, R.length(r), PointSeq{Q.path(q), Q.dim},
                           Q.length(q), threshold, o, B, s);
                o[kEdit * B] = std::nan("");
            }
        },
        poll);
}

template <class I>
void stats_nodes_batch(const NodeSet<I>& R, const NodeSet<I>& Q, const std::vector<DistanceMatrix>& mats,
                       const index_t* env, const PairIndex& P, index_t B, double threshold, double* out, int workers,
                       const Poll& poll) {
    if (mats.empty()) throw std::invalid_argument("distances is empty");
    run_parallel(
        B, workers, default_chunk(B, workers),
        [&](index_t begin, index_t end) {
            StatsScratch s;
            for (index_t b = begin; b < end; ++b) {
                const NodePair<I> p = node_pair(R, Q, mats, env, P, b);
                const NodeSeq<I> rs{R.path(p.r)}, qs{Q.path(p.q)};
                double* o = out + b;
                pair_stats(NodeMetric<I>{p.M.data, p.M.n}, rs, R.length(p.r), qs, Q.length(p.q), threshold, o, B, s);
                o[kEdit * B] = edge_edit_distance(rs, R.length(p.r), qs, Q.length(p.q), s.row);
            }
        },
        poll);
}

}  // namespace navdtw
