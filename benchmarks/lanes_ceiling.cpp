// What the 8-lane coordinate DTW kernel can reach on this CPU: a standalone microbenchmark.
//
// Times the inner loop of cpp/kernels_avx2.cpp (3-D float32 points, 8 pairs in lanes, one
// 102-column strip that stays in L1) in variants that differ in one thing each, so the cost of
// each part shows:
//
//   shipped         float32 cost (one sqrt), double recurrence: what navdtw runs
//   float32 sums    the same with a float32 recurrence (one vector per 8 lanes, no conversions)
//   no sqrt         the shipped loop with the square root left out (wrong values, timing only)
//   sqrt alone      independent vsqrtps only: the square-root throughput bound
//
// Cycles are estimated from a dependent chain of double adds (latency 3 on Zen 2-4 and on Intel
// since Skylake); the ratios between rows do not depend on that estimate.
//
//   g++ -O2 -mavx2 benchmarks/lanes_ceiling.cpp -o /tmp/lanes_ceiling && /tmp/lanes_ceiling
#include <immintrin.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

namespace {

constexpr int kLanes = 8, kRows = 2000, kCols = 102, kReps = 40;

enum class Variant { kShipped, kFloatSums, kNoSqrt };

template <Variant V>
__attribute__((noinline)) double strip(const float* ri, const float* qi, double* row, float* row_f) {
    const __m256d inf = _mm256_set1_pd(INFINITY);
    for (int s = 0; s < kCols * kLanes; ++s) row[s] = row_f[s] = INFINITY;
    for (int t = 0; t < kRows; ++t) {
        const __m256 r0 = _mm256_loadu_ps(ri + (t * 3) * kLanes), r1 = _mm256_loadu_ps(ri + (t * 3 + 1) * kLanes),
                     r2 = _mm256_loadu_ps(ri + (t * 3 + 2) * kLanes);
        __m256d diag_lo = t == 0 ? _mm256_setzero_pd() : inf, diag_hi = diag_lo, left_lo = inf, left_hi = inf;
        __m256 diag_f = t == 0 ? _mm256_setzero_ps() : _mm256_set1_ps(INFINITY), left_f = _mm256_set1_ps(INFINITY);
        for (int s = 0; s < kCols; ++s) {
            const float* q = qi + s * 3 * kLanes;
            const __m256 d0 = _mm256_sub_ps(r0, _mm256_loadu_ps(q)), d1 = _mm256_sub_ps(r1, _mm256_loadu_ps(q + 8)),
                         d2 = _mm256_sub_ps(r2, _mm256_loadu_ps(q + 16));
            const __m256 acc =
                _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(d0, d0), _mm256_mul_ps(d1, d1)), _mm256_mul_ps(d2, d2));
            const __m256 cost = V == Variant::kNoSqrt ? acc : _mm256_sqrt_ps(acc);
            if constexpr (V == Variant::kFloatSums) {
                float* cell = row_f + s * kLanes;
                const __m256 up = _mm256_loadu_ps(cell);
                const __m256 v = _mm256_add_ps(cost, _mm256_min_ps(_mm256_min_ps(diag_f, up), left_f));
                _mm256_storeu_ps(cell, v);
                diag_f = up;
                left_f = v;
            } else {
                const __m256d c_lo = _mm256_cvtps_pd(_mm256_castps256_ps128(cost));
                const __m256d c_hi = _mm256_cvtps_pd(_mm256_extractf128_ps(cost, 1));
                double* cell = row + s * kLanes;
                const __m256d up_lo = _mm256_loadu_pd(cell), up_hi = _mm256_loadu_pd(cell + 4);
                const __m256d v_lo = _mm256_add_pd(c_lo, _mm256_min_pd(_mm256_min_pd(diag_lo, up_lo), left_lo));
                const __m256d v_hi = _mm256_add_pd(c_hi, _mm256_min_pd(_mm256_min_pd(diag_hi, up_hi), left_hi));
                _mm256_storeu_pd(cell, v_lo);
                _mm256_storeu_pd(cell + 4, v_hi);
                diag_lo = up_lo;
                diag_hi = up_hi;
                left_lo = v_lo;
                left_hi = v_hi;
            }
        }
    }
    return V == Variant::kFloatSums ? row_f[(kCols - 1) * kLanes] : row[(kCols - 1) * kLanes];
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Nanoseconds per cycle, from a dependent chain of vaddpd (3 cycles each).
double ns_per_cycle() {
    const long n = 100000000;
    __m256d a = _mm256_set1_pd(1.0);
    const __m256d b = _mm256_set1_pd(1e-9);
    double best = 1e9;
    for (int rep = 0; rep < 3; ++rep) {
        const auto t0 = std::chrono::steady_clock::now();
        for (long i = 0; i < n; ++i) {
            a = _mm256_add_pd(a, b);
            __asm__ volatile("" : "+x"(a));
        }
        best = std::min(best, seconds_since(t0) * 1e9 / n / 3.0);
    }
    return best;
}

double ns_per_sqrt8() {  // independent vsqrtps ymm: throughput, not latency
    const long n = 50000000;
    __m256 x[8];
    for (int k = 0; k < 8; ++k) x[k] = _mm256_set1_ps(2.0f + k);
    double best = 1e9;
    for (int rep = 0; rep < 3; ++rep) {
        const auto t0 = std::chrono::steady_clock::now();
        for (long i = 0; i < n / 8; ++i)
            for (int k = 0; k < 8; ++k) {
                x[k] = _mm256_sqrt_ps(x[k]);
                __asm__ volatile("" : "+x"(x[k]));
            }
        best = std::min(best, seconds_since(t0) * 1e9 / n);
    }
    return best;
}

template <Variant V>
double ns_per_iteration(const float* ri, const float* qi, double* row, float* row_f, double* sink) {
    double best = 1e9;
    for (int rep = 0; rep < 5; ++rep) {
        const auto t0 = std::chrono::steady_clock::now();
        for (int k = 0; k < kReps; ++k) *sink += strip<V>(ri, qi, row, row_f);
        best = std::min(best, seconds_since(t0) * 1e9 / (double(kReps) * kRows * kCols));
    }
    return best;
}

}  // namespace

int main() {
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> u(0.0f, 20.0f);
    std::vector<float> ri(kRows * 3 * kLanes), qi(kCols * 3 * kLanes), row_f(kCols * kLanes);
    std::vector<double> row(kCols * kLanes);
    for (float& x : ri) x = u(rng);
    for (float& x : qi) x = u(rng);
    double sink = 0;
    const double cycle = ns_per_cycle();
    std::printf("clock estimate: %.2f GHz (dependent vaddpd, 3 cycles)\n", 1.0 / cycle);
    std::printf("%-14s %18s %14s\n", "variant", "cycles / 8 cells", "G cells/s/core");
    auto report = [&](const char* name, double ns) {
        std::printf("%-14s %18.2f %14.2f\n", name, ns / cycle, kLanes / ns);
    };
    report("shipped", ns_per_iteration<Variant::kShipped>(ri.data(), qi.data(), row.data(), row_f.data(), &sink));
    report("float32 sums",
           ns_per_iteration<Variant::kFloatSums>(ri.data(), qi.data(), row.data(), row_f.data(), &sink));
    report("no sqrt", ns_per_iteration<Variant::kNoSqrt>(ri.data(), qi.data(), row.data(), row_f.data(), &sink));
    report("sqrt alone", ns_per_sqrt8());
    return sink == 42.0;  // keeps the results live
}
