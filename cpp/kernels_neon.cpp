// NEON variant of the 8-lane exact coordinate DTW (see navdtw/lanes.hpp): navdtw/lanes_kernel.hpp
// over the NEON vector type below. NEON (Advanced SIMD) is part of every aarch64 CPU, so there is
// no run-time check and no target attribute. Its float32 sqrt is IEEE correctly rounded and no
// FMA is written (the build keeps the compiler from contracting, -ffp-contract=off), so every
// lane computes the scalar kernel's bits.
#include "navdtw/portability.hpp"

#if NAVDTW_AARCH64
#include <arm_neon.h>

#include <type_traits>

#include "navdtw/lanes.hpp"

#define NAVDTW_LANES_TARGET
#include "navdtw/lanes_kernel.hpp"

namespace navdtw {

namespace {

// The vector type of lanes_kernel.hpp: 8 floats in two registers; the 8 sums in four double
// registers or two float registers. Lane l sits at index l of memory, as on AVX2.
struct Neon {
    static constexpr int kLanes = 8;
    struct F {
        float32x4_t lo, hi;
    };
    static F load(const float* p) { return {vld1q_f32(p), vld1q_f32(p + 4)}; }
    static void store(float* p, F x) {
        vst1q_f32(p, x.lo);
        vst1q_f32(p + 4, x.hi);
    }
    static F gather(const float* const* at, int d) {
        const float lanes[8] = {at[0][d], at[1][d], at[2][d], at[3][d], at[4][d], at[5][d], at[6][d], at[7][d]};
        return load(lanes);
    }
    static F sub(F a, F b) { return {vsubq_f32(a.lo, b.lo), vsubq_f32(a.hi, b.hi)}; }
    static F mul(F a, F b) { return {vmulq_f32(a.lo, b.lo), vmulq_f32(a.hi, b.hi)}; }
    static F add(F a, F b) { return {vaddq_f32(a.lo, b.lo), vaddq_f32(a.hi, b.hi)}; }
    static F sqrt(F a) { return {vsqrtq_f32(a.lo), vsqrtq_f32(a.hi)}; }

    struct DoubleSums {
        float64x2_t v[4];
        static DoubleSums load(const double* p) {
            return {{vld1q_f64(p), vld1q_f64(p + 2), vld1q_f64(p + 4), vld1q_f64(p + 6)}};
        }
        static DoubleSums fill(double x) {
            const float64x2_t f = vdupq_n_f64(x);
            return {{f, f, f, f}};
        }
        void store(double* p) const {
            for (int k = 0; k < 4; ++k) vst1q_f64(p + 2 * k, v[k]);
        }
        static DoubleSums next(F cost, const DoubleSums& diag, const DoubleSums& up, const DoubleSums& left) {
            const float64x2_t c[4] = {vcvt_f64_f32(vget_low_f32(cost.lo)), vcvt_high_f64_f32(cost.lo),
                                      vcvt_f64_f32(vget_low_f32(cost.hi)), vcvt_high_f64_f32(cost.hi)};
            DoubleSums out;
            for (int k = 0; k < 4; ++k) out.v[k] = vaddq_f64(c[k], vminq_f64(vminq_f64(diag.v[k], up.v[k]), left.v[k]));
            return out;
        }
    };
    struct FloatSums {
        F v;
        static FloatSums load(const float* p) { return {Neon::load(p)}; }
        static FloatSums fill(float x) { return {{vdupq_n_f32(x), vdupq_n_f32(x)}}; }
        void store(float* p) const { Neon::store(p, v); }
        static FloatSums next(F cost, const FloatSums& diag, const FloatSums& up, const FloatSums& left) {
            return {{vaddq_f32(cost.lo, vminq_f32(vminq_f32(diag.v.lo, up.v.lo), left.v.lo)),
                     vaddq_f32(cost.hi, vminq_f32(vminq_f32(diag.v.hi, up.v.hi), left.v.hi))}};
        }
    };
    template <class T>
    using Sums = std::conditional_t<std::is_same_v<T, float>, FloatSums, DoubleSums>;
    // One row per sweep: not measured on ARM hardware (none here), and two rows of 8 lanes need
    // more than NEON's 32 registers.
    template <class T>
    static constexpr int kRows = 1;
};

}  // namespace

void dtw_lanes_neon(const LanePair* pairs, int count, int dim, bool single, double* out, LaneScratch& scratch) {
    lanes::dtw_lanes_with<Neon>(pairs, count, dim, single, out, scratch);
}

}  // namespace navdtw

#endif
