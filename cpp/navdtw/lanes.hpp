// navdtw: the SIMD kernels' interface and the choice among them.
//
// The lane kernels: exact DTW of a group of coordinate pairs at once, one pair per SIMD lane.
// - AVX-512 (kernels_avx512.cpp, x86-64, called only when avx512_supported()): 16 lanes;
// - AVX2 (kernels_avx2.cpp, x86-64, called only when avx2_supported()): 8 lanes, plus a
//   VEX-encoded copy of the short-row kernel for node pairs and the node-id copy of packed node
//   blocks;
// - NEON (kernels_neon.cpp, aarch64, always there): 8 lanes.
// All are one source, navdtw/lanes_kernel.hpp, over each instruction set's vector type.
//
// A group of up to `lanes` pairs is solved in lockstep over the largest rows x columns of the
// group: shorter paths are padded by repeating their last point, and each lane's answer is read
// at its own end cell (n-1, m-1) as the rows pass it. Padding only adds cells after a lane's own
// table, which nothing inside it depends on. Every cell does the same float32 cost and recurrence
// (double sums, or float for precision="single") as the scalar kernel, so every kernel returns
// identical bits. The batch driver groups pairs of similar shape (sorted by lengths) so little
// padding is computed.
//
// Calling a kernel directly (no Python; e.g. a fuzzing harness), with `pairs` of at most
// simd_lanes(kernel) LanePair and `out` of as many doubles:
//     navdtw::LaneScratch scratch;
//     if (navdtw::simd_supported(navdtw::Simd::kAvx512))
//         navdtw::dtw_lanes(navdtw::Simd::kAvx512, pairs, count, dim, single, out, scratch);
// The portable kernel of the same pairs is navdtw::dtw_points_pair (batch.hpp).
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

// The most lanes any kernel uses (AVX-512: 16 float32 lanes per register).
constexpr int kMaxLanes = 16;

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

// ---- the kernels ----

// The SIMD kernels; kPortable is the scalar code of dtw.hpp.
enum class Simd : int { kPortable = 0, kAvx2 = 1, kAvx512 = 2, kNeon = 3 };

// True when this CPU (and OS) run the AVX2 / AVX-512 kernels; defined in kernels_avx2.cpp and
// kernels_avx512.cpp (false where they are not compiled).
bool avx2_supported();
bool avx512_supported();

// Exact DTW of pairs[0 .. count) into out[0 .. count), with sums in double or, when `single`, in
// float (precision="single"). count <= 8 for AVX2 and NEON, <= 16 for AVX-512. dtw_lanes_avx2
// requires avx2_supported(), dtw_lanes_avx512 avx512_supported(); dtw_lanes_neon exists on
// aarch64 only.
void dtw_lanes_avx2(const LanePair* pairs, int count, int dim, bool single, double* out, LaneScratch& scratch);
void dtw_lanes_avx512(const LanePair* pairs, int count, int dim, bool single, double* out, LaneScratch& scratch);
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

inline const char* simd_name(Simd k) {
    switch (k) {
        case Simd::kAvx2:
            return "avx2";
        case Simd::kAvx512:
            return "avx512";
        case Simd::kNeon:
            return "neon";
        default:
            return "portable";
    }
}

// Pairs per group of the kernel (0 for the portable one).
inline int simd_lanes(Simd k) {
    switch (k) {
        case Simd::kAvx512:
            return 16;
        case Simd::kAvx2:
        case Simd::kNeon:
            return 8;
        default:
            return 0;
    }
}

// Whether this build has the kernel and this CPU runs it.
inline bool simd_supported(Simd k) {
    switch (k) {
        case Simd::kPortable:
            return true;
        case Simd::kAvx2:
            return avx2_supported();
        case Simd::kAvx512:
            return avx512_supported();
        case Simd::kNeon:
            return NAVDTW_AARCH64 != 0;
    }
    return false;
}

// The widest kernel this build and CPU run.
inline Simd simd_widest() {
    if (simd_supported(Simd::kAvx512)) return Simd::kAvx512;
    if (simd_supported(Simd::kAvx2)) return Simd::kAvx2;
    if (simd_supported(Simd::kNeon)) return Simd::kNeon;
    return Simd::kPortable;
}

// The kernels this build compiled in (run-time CPU support aside), widest first.
inline std::vector<Simd> simd_compiled() {
#if NAVDTW_AARCH64
    return {Simd::kNeon};
#elif NAVDTW_AVX2_KERNELS
    return {Simd::kAvx512, Simd::kAvx2};
#else
    return {};
#endif
}

// The lane kernel k (one that simd_supported(k), not kPortable) on count <= simd_lanes(k) pairs.
inline void dtw_lanes(Simd k, const LanePair* pairs, int count, int dim, bool single, double* out,
                      LaneScratch& scratch) {
#if NAVDTW_AARCH64
    (void)k;
    dtw_lanes_neon(pairs, count, dim, single, out, scratch);
#else
    if (k == Simd::kAvx512)
        dtw_lanes_avx512(pairs, count, dim, single, out, scratch);
    else
        dtw_lanes_avx2(pairs, count, dim, single, out, scratch);
#endif
}

// ---- the choice ----
//
// Batches use the kernel of simd_choice(): kSimdAuto (the default) picks per batch with
// simd_for_batch; any Simd value forces that kernel for every batch (tests, benchmarks,
// NAVDTW_SIMD). Set it with set_simd, which refuses a kernel this build or CPU lacks.
constexpr int kSimdAuto = -1;

inline std::atomic<int>& simd_choice() {
    static std::atomic<int> choice{kSimdAuto};
    return choice;
}

inline bool set_simd(int choice) {
    if (choice != kSimdAuto && !simd_supported(static_cast<Simd>(choice))) return false;
    simd_choice().store(choice, std::memory_order_relaxed);
    return true;
}

// The automatic choice takes 8 lanes (AVX2, NEON) for every batch but double-precision batches
// of long pairs, where 16 AVX-512 lanes measured faster. Measured on an AVX-512 Xeon
// (benchmarks/README.md): its float32 square root, which every cell needs, has the same
// throughput per lane in 512-bit as in 256-bit registers, so 16 lanes lose 5-12% in single
// precision; in double they save half the conversions and sums per cell and win 3-10% on pairs
// of 250 x 250 points and up, and are within noise (0.96-1.03x) on shorter pairs. Nor do they
// pay where 16-lane groups leave more lanes empty than 8-lane groups would (a batch of 2 pairs
// fills 2 of 16 lanes, or of 8).
constexpr double kAvx512MinCellsPerPair = 65536.0;

// The 8-lane kernel of this build and CPU (or the portable one).
inline Simd simd_default() {
    if (simd_supported(Simd::kAvx2)) return Simd::kAvx2;
    if (simd_supported(Simd::kNeon)) return Simd::kNeon;
    return Simd::kPortable;
}

// The kernel a batch of `pairs` exact coordinate pairs averaging `cells_per_pair` cells (|R| |Q|)
// uses.
inline Simd simd_for_batch(bool single, double cells_per_pair, std::int64_t pairs) {
    const int c = simd_choice().load(std::memory_order_relaxed);
    if (c != kSimdAuto) return static_cast<Simd>(c);
    const std::int64_t lanes16 = (pairs + 15) / 16 * 16, lanes8 = (pairs + 7) / 8 * 8;  // lanes computed
    if (!single && cells_per_pair >= kAvx512MinCellsPerPair && 100 * lanes16 <= 105 * lanes8 && avx512_supported())
        return Simd::kAvx512;
    return simd_default();
}

// The kernel batches use (the automatic choice: the one most batches use).
inline Simd simd_in_use() {
    const int c = simd_choice().load(std::memory_order_relaxed);
    return c == kSimdAuto ? simd_default() : static_cast<Simd>(c);
}

// The AVX2-only extras of node batches (short-row copy, id copy) follow the choice too: on unless
// the portable kernel is forced.
inline bool use_avx2() { return simd_in_use() != Simd::kPortable && avx2_supported(); }

}  // namespace navdtw
