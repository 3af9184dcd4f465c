// The engine's C++ without Python, for compilers and targets CI does not build wheels with
// (tools/check_mingw.sh): every header of cpp/navdtw/ with its batch templates instantiated, so a
// cross-compiler (mingw-w64 for Windows, 32-bit included) sees the code the bindings compile.
// Run natively it also checks portability.hpp: the 32-bit-halves multiply equals the 128-bit
// product (unsigned __int128 or _umul128) on edge cases and a million pseudo-random pairs; and
// every lane kernel this CPU runs (navdtw::dtw_lanes, called directly, as a fuzzing harness
// would) returns the portable kernel's bits (navdtw::dtw_points_pair), in double and in single.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "navdtw/anchored.hpp"
#include "navdtw/batch.hpp"
#include "navdtw/dtw.hpp"
#include "navdtw/lanes.hpp"
#include "navdtw/parallel.hpp"
#include "navdtw/portability.hpp"
#include "navdtw/reward.hpp"
#include "navdtw/stats.hpp"
#include "navdtw/walks.hpp"

namespace {

using navdtw::index_t;

// Instantiates the templates the bindings use (not called by main).
template <class I>
void node_batches(const navdtw::NodeSet<I>& R, const std::vector<navdtw::DistanceMatrix>& mats,
                  const navdtw::PairIndex& P, double* out, const navdtw::Poll& poll) {
    navdtw::dtw_nodes_batch<I>(R, R, mats, nullptr, P, 1, navdtw::Method{}, out, 1, poll);
    const navdtw::AnchorSet A{R.offsets, R.offsets};
    navdtw::dtw_anchored_nodes_batch<I>(R, R, mats, nullptr, P, 1, A, true, 1, out, 1, poll);
    navdtw::stats_nodes_batch<I>(R, R, mats, nullptr, P, 1, 3.0, out, 1, poll);
    navdtw::Workspace ws;
    const navdtw::MatrixCost<I> cost{mats[0].data, mats[0].n, R.values, R.values};
    std::vector<std::pair<index_t, index_t>> path;
    out[0] = navdtw::warping_path(cost, 1, 1, ws, path);
    navdtw::dtw_prefix(cost, 1, 1, out, ws);
}

[[maybe_unused]] void instantiate(const float* points, const std::int32_t* ids32, const std::int64_t* ids64,
                                  const index_t* offsets, double* out, navdtw::RewardState& reward) {
    const navdtw::Poll poll = [] { return false; };
    const navdtw::PointSet R{points, offsets, 1, 2};
    const navdtw::PairIndex P;
    navdtw::dtw_points_batch(R, R, P, 1, navdtw::Method{}, out, 2, poll);
    const navdtw::AnchorSet A{offsets, offsets};
    navdtw::dtw_anchored_points_batch(R, R, P, 1, A, false, -1, out, 2, poll);
    navdtw::stats_points_batch(R, R, P, 1, 3.0, out, 2, poll);
    const std::vector<navdtw::DistanceMatrix> mats{{points, 1}};
    node_batches<std::int32_t>({ids32, offsets, 1}, mats, P, out, poll);
    node_batches<std::int64_t>({ids64, offsets, 1}, mats, P, out, poll);
    navdtw::Workspace ws;
    out[0] = navdtw::fastdtw_points(points, 1, points, 1, 2, 1, ws);
    navdtw::reward_step(
        reward, out,
        [&](index_t, double* col, index_t n, index_t t) {
            return navdtw::extend_column(col, n, t, [&](index_t i) { return static_cast<double>(points[i]); });
        },
        1, poll);
    const navdtw::WalkSpec walks{offsets, offsets, 1, offsets, offsets, 1, offsets, 1, 7};
    std::int64_t lengths[2], refs[1], values[1];
    navdtw::walk_lengths(walks, 0, 1, lengths, refs, 1, poll);
    navdtw::walk_fill(walks, 0, 1, lengths, refs, values, 1, poll);
}

[[maybe_unused]] int check_mul128() {
    std::vector<std::uint64_t> values{0,
                                      1,
                                      2,
                                      3,
                                      0xffffffffULL,
                                      0x100000000ULL,
                                      0x7fffffffffffffffULL,
                                      0x8000000000000000ULL,
                                      0xffffffffffffffffULL,
                                      0xfffffffffffffffeULL,
                                      0x9e3779b97f4a7c15ULL};
    std::uint64_t state = 15;
    for (int k = 0; k < 1000; ++k) values.push_back(navdtw::mix64(state += 0x9e3779b97f4a7c15ULL));
    int bad = 0;
    for (std::uint64_t a : values)
        for (std::uint64_t b : values) {
            const navdtw::U128 x = navdtw::mul_64x64(a, b), y = navdtw::mul_64x64_portable(a, b);
            if (x.hi != y.hi || x.lo != y.lo) ++bad;
        }
    std::printf("check_portability: mul_64x64_portable %s on %zu products\n", bad == 0 ? "matches" : "DIFFERS",
                values.size() * values.size());
    return bad == 0 ? 0 : 1;
}

// Random 3-D pairs of 1 .. 300 points, in groups of each kernel's width (the tail group short),
// through every lane kernel this CPU runs against the portable kernel, bit for bit.
int check_lane_kernels() {
    std::uint64_t state = 22;
    const auto next = [&](std::uint64_t bound) { return navdtw::mix64(state += 0x9e3779b97f4a7c15ULL) % bound; };
    const int n_pairs = 37, dim = 3;
    std::vector<std::vector<float>> paths(2 * n_pairs);
    for (std::vector<float>& path : paths) {
        path.resize(static_cast<std::size_t>(1 + next(300)) * dim);
        for (float& x : path) x = static_cast<float>(next(2000)) * 0.01f;
    }
    const auto length = [&](int i) { return static_cast<index_t>(paths[static_cast<std::size_t>(i)].size() / dim); };
    int bad = 0, checked = 0;
    std::string kernels;
    for (navdtw::Simd kernel : {navdtw::Simd::kAvx512, navdtw::Simd::kAvx2, navdtw::Simd::kNeon}) {
        if (!navdtw::simd_supported(kernel)) continue;
        kernels += std::string(kernels.empty() ? "" : ", ") + navdtw::simd_name(kernel);
        const int width = navdtw::simd_lanes(kernel);
        navdtw::LaneScratch scratch;
        navdtw::Workspace ws;
        for (const bool single : {false, true})
            for (int first = 0; first < n_pairs; first += width) {
                const int count = std::min(width, n_pairs - first);
                navdtw::LanePair group[navdtw::kMaxLanes];
                for (int l = 0; l < count; ++l) {
                    const int r = 2 * (first + l), q = r + 1;
                    group[l] = {paths[static_cast<std::size_t>(r)].data(), length(r),
                                paths[static_cast<std::size_t>(q)].data(), length(q)};
                }
                double out[navdtw::kMaxLanes];
                navdtw::dtw_lanes(kernel, group, count, dim, single, out, scratch);
                const navdtw::Method method{-1, -1, single};
                for (int l = 0; l < count; ++l, ++checked) {
                    const double want =
                        navdtw::dtw_points_pair(group[l].ref, group[l].n, group[l].qry, group[l].m, dim, method, ws);
                    if (std::memcmp(&out[l], &want, sizeof(double)) != 0) ++bad;
                }
            }
    }
    std::printf("check_portability: lane kernels run here: %s; %d of %d results %s the portable kernel's bits\n",
                kernels.empty() ? "none" : kernels.c_str(), checked - bad, checked, bad == 0 ? "equal" : "DIFFER from");
    return bad == 0 ? 0 : 1;
}

}  // namespace

int main() {
#if defined(__SIZEOF_INT128__) || (defined(_MSC_VER) && defined(_M_X64))
    int status = check_mul128();
#else
    std::printf("check_portability: no 128-bit product to compare against on this target\n");
    int status = 0;
#endif
    status |= check_lane_kernels();
    return status;
}
