// navdtw: seeded random walks on navigation graphs, for random baselines.
//
// Each walk draws from its own counter-based stream: the state is a hash of (seed, walk index),
// advanced SplitMix64-style. A walk therefore depends only on (seed, its index), never on how the
// batch is chunked or how many workers run, so baselines are reproducible bit for bit.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "navdtw/parallel.hpp"
#include "navdtw/portability.hpp"

namespace navdtw {

inline std::uint64_t mix64(std::uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

class WalkRng {
public:
    WalkRng(std::uint64_t seed, std::uint64_t walk) : state_(mix64(seed ^ mix64(walk + 0x9e3779b97f4a7c15ULL))) {}
    std::uint64_t next() { return mix64(state_ += 0x9e3779b97f4a7c15ULL); }
    // Uniform integer in [0, n), n >= 1, without modulo bias (Lemire's multiply-and-reject).
    std::uint64_t below(std::uint64_t n) {
        U128 m = mul_64x64(next(), n);
        if (m.lo < n) {
            const std::uint64_t t = (0 - n) % n;
            while (m.lo < t) m = mul_64x64(next(), n);
        }
        return m.hi;
    }

private:
    std::uint64_t state_;
};

struct WalkSpec {
    const std::int64_t* indptr;   // CSR neighbour lists over all nodes (global ids) [N + 1]
    const std::int64_t* indices;  // [nnz]
    std::int64_t n_nodes;
    const std::int64_t* starts;  // start node (global id) of each reference [n_refs]
    const std::int64_t* base;    // global id of local node 0 of each reference's graph [n_refs]
    std::int64_t n_refs;
    const std::int64_t* step_counts;  // empirical step-count sample to draw from [n_steps]
    std::int64_t n_steps;
    std::uint64_t seed;
};

// Walk w serves reference w mod n_refs: start there, draw a step count from step_counts, then
// move to a uniformly chosen neighbour at every step (backtracking allowed; a node without
// neighbours is stayed at). Two passes so the caller can allocate the output in between:
// walk_lengths fills offsets [count + 1] and refs [count]; walk_fill writes local node ids.
inline std::int64_t draw_steps(const WalkSpec& s, WalkRng& rng) {
    return s.step_counts[rng.below(static_cast<std::uint64_t>(s.n_steps))];
}

inline void walk_lengths(const WalkSpec& s, std::int64_t first, std::int64_t count, std::int64_t* offsets,
                         std::int64_t* refs, int workers, const Poll& poll) {
    if (s.n_refs <= 0 || s.n_steps <= 0) throw std::invalid_argument("random walks need references and step counts");
    offsets[0] = 0;
    run_parallel(
        count, workers, default_chunk(count, workers),
        [&](std::int64_t b, std::int64_t e) {
            for (std::int64_t j = b; j < e; ++j) {
                const auto w = static_cast<std::uint64_t>(first + j);
                WalkRng rng(s.seed, w);
                offsets[j + 1] = draw_steps(s, rng) + 1;
                refs[j] = static_cast<std::int64_t>(w % static_cast<std::uint64_t>(s.n_refs));
            }
        },
        poll);
    for (std::int64_t j = 0; j < count; ++j) offsets[j + 1] += offsets[j];
}

inline void walk_fill(const WalkSpec& s, std::int64_t first, std::int64_t count, const std::int64_t* offsets,
                      const std::int64_t* refs, std::int64_t* values, int workers, const Poll& poll) {
    run_parallel(
        count, workers, default_chunk(count, workers),
        [&](std::int64_t b, std::int64_t e) {
            for (std::int64_t j = b; j < e; ++j) {
                WalkRng rng(s.seed, static_cast<std::uint64_t>(first + j));
                draw_steps(s, rng);  // replay the step-count draw of walk_lengths
                const std::int64_t ref = refs[j];
                std::int64_t node = s.starts[ref];
                const std::int64_t base = s.base[ref];
                std::int64_t* out = values + offsets[j];
                const std::int64_t len = offsets[j + 1] - offsets[j];
                out[0] = node - base;
                for (std::int64_t k = 1; k < len; ++k) {
                    const std::int64_t lo = s.indptr[node], deg = s.indptr[node + 1] - lo;
                    if (deg > 0)
                        node = s.indices[lo + static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(deg)))];
                    out[k] = node - base;
                }
            }
        },
        poll);
}

}  // namespace navdtw
