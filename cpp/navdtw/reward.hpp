// navdtw: streaming DTW for the nDTW reinforcement-learning reward.
//
// DTW(R, q_1..q_t) is the last entry of column t of the DP table, and column t+1 depends only on
// column t and the new point, so extending a query by one point costs O(|R|) and the state of an
// episode is one column of |R| doubles. A batch of episodes keeps its columns in one flat buffer
// laid out like the reference offsets; a step updates every active episode in place with no
// allocation.
#pragma once

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
                const double nd = std::exp(-d / (static_cast<double>(n) * s.threshold));
                rewards[b] = s.steps[b] == 0 ? 0.0 : nd - s.ndtw[b];
                s.dtw[b] = d;
                s.ndtw[b] = nd;
                ++s.steps[b];
            }
        },
        poll);
}

}  // namespace navdtw
