// navdtw: the SIMD kernels' interface. On x86-64 (kernels_avx2.cpp, called only when use_avx2()):
// exact DTW of 8 coordinate pairs at once, one pair per SIMD lane; a VEX-encoded copy of the
// short-row kernel for node pairs; and the node-id copy of packed node blocks. On aarch64
// (kernels_neon.cpp, NEON is always there): the 8-lane coordinate kernel. Both lane kernels are
// one source, navdtw/lanes_kernel.hpp, over each instruction set's vector type.
//
// A group of up to 8 pairs is solved in lockstep over the largest rows x columns of the group:
// shorter paths are padded by repeating their last point, and each lane's answer is read at its
// own end cell (n-1, m-1) as the rows pass it. Padding only adds cells after a lane's own table,
// which nothing inside it depends on. Every cell does the same float32 cost and double
// recurrence as the scalar kernel, so the variants return identical bits. The batch driver groups
// pairs of similar shape (sorted by lengths) so little padding is computed.
#pragma once

#include <atomic>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "navdtw/portability.hpp"

namespace navdtw {

using lane_index_t = std::int64_t;

struct LanePair {
    const float* ref;
    lane_index_t n;
    const float* qry;
    lane_index_t m;
};

constexpr int kLanes = 8;

// Bytes of rolling row plus query points per column strip: well inside a 32 KB L1 data cache.
constexpr int kStripBytes = 16384;

// The sums a strip sweep keeps, of type T (double, or float for precision="single").
template <class T>
struct StripSums {
    std::vector<T> row;   // rolling row of one strip: [column][lane]
    std::vector<T> edge;  // last column of the previous strip: [row][lane]
};

struct LaneScratch {
    std::vector<float> ri, qi;  // interleaved points: [row][dim][lane]
    StripSums<double> sums;
    StripSums<float> sums_single;
    template <class T>
    StripSums<T>& sums_of() {
        if constexpr (std::is_same_v<T, float>)
            return sums_single;
        else
            return sums;
    }
};

// True when this CPU (and OS) run the AVX2 kernel; defined in kernels_avx2.cpp.
bool avx2_supported();

// Exact DTW of pairs[0 .. count), count <= 8, into out[0 .. count), with sums in double or, when
// `single`, in float (precision="single"). dtw_lanes_avx2 requires avx2_supported();
// dtw_lanes_neon exists on aarch64 only.
void dtw_lanes_avx2(const LanePair* pairs, int count, int dim, bool single, double* out, LaneScratch& scratch);
#if NAVDTW_AARCH64
void dtw_lanes_neon(const LanePair* pairs, int count, int dim, bool single, double* out, LaneScratch& scratch);
#endif

// Exact DTW of one node pair (ids already checked) whose shorter side has at most 8 ids, over a
// float32 [n_nodes, n_nodes] matrix: dtw.hpp's dtw_matrix_short compiled for AVX2 (VEX encoding;
// the same operations, hence the same bits). Requires avx2_supported().
double dtw_node_short_avx2(const float* matrix, lane_index_t n_nodes, const std::int32_t* ref, lane_index_t n,
                           const std::int32_t* qry, lane_index_t m, bool single);
double dtw_node_short_avx2(const float* matrix, lane_index_t n_nodes, const std::int64_t* ref, lane_index_t n,
                           const std::int64_t* qry, lane_index_t m, bool single);

// Copies node ids ref[0 .. n) then qry[0 .. m) to out[0 .. n + m) and says whether every id is
// in [0, n_nodes) (n_nodes <= INT32_MAX). Works in chunks of 8 ids: reads never pass the paths'
// ends (masked loads), but writes may run up to kIdCopySlack elements past out[n + m).
// Requires avx2_supported().
constexpr lane_index_t kIdCopySlack = 8;
bool copy_node_ids_avx2(const std::int32_t* ref, lane_index_t n, const std::int32_t* qry, lane_index_t m,
                        lane_index_t n_nodes, std::int32_t* out);

// Switch for tests and benchmarks: false forces the portable scalar kernels.
inline std::atomic<bool>& simd_enabled() {
    static std::atomic<bool> enabled{true};
    return enabled;
}

inline bool use_avx2() { return simd_enabled().load(std::memory_order_relaxed) && avx2_supported(); }

// The lane kernel of this build and CPU: "avx2", "neon", or nullptr (none; the portable kernel).
inline const char* lanes_kernel_name() {
#if NAVDTW_AARCH64
    return "neon";
#else
    return avx2_supported() ? "avx2" : nullptr;
#endif
}

// The lane kernels compiled into this build (run-time CPU support aside).
inline const char* lanes_kernels_compiled() {
#if NAVDTW_AARCH64
    return "neon";
#elif NAVDTW_AVX2_KERNELS
    return "avx2";
#else
    return "";
#endif
}

inline bool use_lanes() { return simd_enabled().load(std::memory_order_relaxed) && lanes_kernel_name() != nullptr; }

inline void dtw_lanes(const LanePair* pairs, int count, int dim, bool single, double* out, LaneScratch& scratch) {
#if NAVDTW_AARCH64
    dtw_lanes_neon(pairs, count, dim, single, out, scratch);
#else
    dtw_lanes_avx2(pairs, count, dim, single, out, scratch);
#endif
}

}  // namespace navdtw
