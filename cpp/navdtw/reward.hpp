// navdtw: streaming DTW for the nDTW reinforcement-learning reward.
//
// DTW(R, q_1..q_t) is the last entry of column t of the DP table, and column t+1 depends only on
// column t and the new point, so extending a query by one point costs O(|R|) and the state of an
// episode is one column of |R| doubles. A batch of episodes keeps its columns in one flat buffer
// laid out like the reference offsets; a step updates every active episode in place with no
// allocation. PointStepper is one episode's state for a caller that steps a single episode at a
// time (a habitat measure): the same column, cost and reward rule, without the batch's arrays.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "navdtw/batch.hpp"

namespace navdtw {

// Appends one query point to the DP column `col` (length n) that already holds t points.
// cost(i) = d(r_i, new point). Returns DTW(R, q_1..q_{t+1}).
template <class Cost>
inline double extend_column(double* col, index_t n, index_t t, const Cost& cost) {
    double diag = (t == 0) ? 0.0 : kInf;  // C[i-1][t-1], starting from the virtual C[-1][-1] = 0
    double below = kInf;                  // C[i-1][t], the new column's previous row
    for (index_t i = 0; i < n; ++i) {
        const double same = (t == 0) ? kInf : col[i];  // C[i][t-1]
        const double v = cost(i) + std::min(std::min(diag, same), below);
        diag = same;
        col[i] = v;
        below = v;
    }
    return col[n - 1];
}

// Appends coordinate point p (dim floats) to the column of a float32 reference ref (n x dim):
// the engine's float32 Euclidean cost. Returns DTW(R, q_1..q_{t+1}).
inline double extend_point_column(double* col, index_t n, index_t t, const float* ref, const float* p, int dim) {
    const EuclideanCost<float, 0> cost{ref, p, dim};
    return extend_column(col, n, t, [&](index_t i) { return cost(i, 0); });
}

// Records DTW d of an episode's query after one more point: nDTW = exp(-d / (|R| d_th)) and the
// reward, the nDTW gain (0 at the episode's first point, which has no previous prefix).
inline double record_point(double d, index_t n, double threshold, index_t& steps, double& dtw, double& ndtw) {
    const double nd = std::exp(-d / (static_cast<double>(n) * threshold));
    const double reward = steps == 0 ? 0.0 : nd - ndtw;
    dtw = d;
    ndtw = nd;
    ++steps;
    return reward;
}

struct RewardState {
    double* columns;  // flat DP columns, one block of |R_b| per episode
    const index_t* ref_offsets;
    index_t* steps;  // points appended so far per episode
    double* dtw;     // current DTW per episode
    double* ndtw;    // current nDTW per episode
    const std::uint8_t* active;
    index_t size;  // episodes
    double threshold;
};

// One step for every active episode: point(b) supplies the cost functor for episode b.
template <class PointCost>
void reward_step(RewardState& s, double* rewards, const PointCost& point_cost, int workers, const Poll& poll) {
    run_parallel(
        s.size, workers, std::max<index_t>(64, default_chunk(s.size, workers)),
        [&](index_t begin, index_t end) {
            for (index_t b = begin; b < end; ++b) {
                if (!s.active[b]) {
                    rewards[b] = 0.0;
                    continue;
                }
                const index_t off = s.ref_offsets[b], n = s.ref_offsets[b + 1] - off;
                const double d = point_cost(b, s.columns + off, n, s.steps[b]);
                rewards[b] = record_point(d, n, s.threshold, s.steps[b], s.dtw[b], s.ndtw[b]);
            }
        },
        poll);
}

// One episode's streaming nDTW against a coordinate reference: the reference (rounded to float32,
// the engine's storage type, and copied), its last DP column and the reward state. step() is
// O(|R|) and allocates nothing; reset() starts the episode again, optionally with a new reference
// (which allocates at most once).
class PointStepper {
public:
    template <class T>
    PointStepper(const T* ref, index_t n, int dim, double threshold) : threshold_(threshold) {
        if (!(threshold > 0) || !std::isfinite(threshold))
            throw std::invalid_argument("threshold must be finite and > 0");
        reset(ref, n, dim);
    }

    // Starts the episode again against the same reference.
    void reset() {
        std::fill(col_.begin(), col_.end(), kInf);
        steps_ = 0;
        dtw_ = kInf;
        ndtw_ = 0.0;
        gain_ = 0.0;
    }

    // Starts the episode again against a new reference (n x dim values, n >= 1, dim >= 1).
    template <class T>
    void reset(const T* ref, index_t n, int dim) {
        if (n < 1 || dim < 1) throw std::invalid_argument("the reference must be a non-empty [n, D] path");
        ref_.resize(static_cast<std::size_t>(n * dim));
        for (std::size_t k = 0; k < ref_.size(); ++k) ref_[k] = static_cast<float>(ref[k]);
        col_.resize(static_cast<std::size_t>(n));
        n_ = n;
        dim_ = dim;
        reset();
    }

    // Appends point p (dim() floats) and returns the episode's nDTW after it.
    double step(const float* p) {
        const double d = extend_point_column(col_.data(), n_, steps_, ref_.data(), p, dim_);
        gain_ = record_point(d, n_, threshold_, steps_, dtw_, ndtw_);
        return ndtw_;
    }

    index_t size() const { return n_; }
    int dim() const { return dim_; }
    const float* reference() const { return ref_.data(); }
    index_t steps() const { return steps_; }
    double dtw() const { return dtw_; }
    double ndtw() const { return ndtw_; }
    double gain() const { return gain_; }  // the last step's reward (0 before the second point)
    double threshold() const { return threshold_; }

private:
    std::vector<float> ref_;
    std::vector<double> col_;
    index_t n_ = 0;
    int dim_ = 0;
    index_t steps_ = 0;
    double dtw_ = kInf;
    double ndtw_ = 0.0;
    double gain_ = 0.0;
    double threshold_;
};

}  // namespace navdtw
