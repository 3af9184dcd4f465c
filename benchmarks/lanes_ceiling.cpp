// What the lane kernels of coordinate DTW can reach on this CPU: a standalone benchmark, no navdtw.
//
//   g++ -std=c++17 -O2 -march=native benchmarks/lanes_ceiling.cpp -o /tmp/lanes_ceiling
//   /tmp/lanes_ceiling              # part 1: the inner loop, in variants
//   /tmp/lanes_ceiling DIR [REPEAT] # part 2: plain lane kernels over a workload (W2, W3) that
//                                   # benchmarks/bench_engine.py saved in DIR (rv/ro/qv/qo .npy)
//
// Part 1 times the inner loop of the lane kernel (3-D float32 points, one 102-column strip that
// stays in L1, one row per sweep) in variants that differ in one thing each, so the cost of each
// part shows, with 8 lanes (AVX2) and, where the CPU has AVX-512, 16 lanes:
//
//   double sums     float32 cost (one sqrt), double recurrence: what navdtw runs by default
//   float32 sums    the same with a float32 recurrence (precision="single")
//   no sqrt         double sums with the square root left out (wrong values, timing only)
//   sqrt alone      independent square roots only: the square-root throughput bound
//
// Part 1 ends with the clock while 256-bit and 512-bit floating point runs beside a chain of
// integer multiplies: where 512-bit work lowers the clock (the "AVX-512 license" of many Intel
// cores), the chain slows down with it.
//
// Part 2 is the ceiling of benchmarks/README.md: a plain lane kernel, as one would write it in an
// afternoon, with float32 distances and float32 sums (the cheapest recurrence), compiled with
// -march=native: pairs sorted by shape, groups of 8 or 16 lanes padded by repeating last points,
// 16 KB column strips, one row per sweep. It prints G cells/s for each width (best of REPEAT runs
// of the whole batch, 1 thread, CPU time), then one machine-readable line for bench_engine.py. No input
// checks, no threads, no Python: what navdtw's public API is measured against.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include <time.h>

namespace {

// CPU seconds of this thread: unlike wall time, it leaves out the time other processes take the
// core away (the machine may be shared); navdtw's rows in bench_engine.py are timed the same way.
double thread_seconds() {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// ---- the vector types: 8 lanes in one YMM register, 16 in one ZMM register ----

struct Ymm {
    static constexpr int kLanes = 8;
    static constexpr const char* kName = "8 lanes (AVX2)";
    using F = __m256;
    using D = __m256d;  // 4 of the 8 double sums
    static F load(const float* p) { return _mm256_loadu_ps(p); }
    static void store(float* p, F x) { _mm256_storeu_ps(p, x); }
    static F set1(float x) { return _mm256_set1_ps(x); }
    static F sub(F a, F b) { return _mm256_sub_ps(a, b); }
    static F mul(F a, F b) { return _mm256_mul_ps(a, b); }
    static F add(F a, F b) { return _mm256_add_ps(a, b); }
    static F min(F a, F b) { return _mm256_min_ps(a, b); }
    static F sqrt(F a) { return _mm256_sqrt_ps(a); }
    static D dload(const double* p) { return _mm256_loadu_pd(p); }
    static void dstore(double* p, D x) { _mm256_storeu_pd(p, x); }
    static D dset1(double x) { return _mm256_set1_pd(x); }
    static D dadd(D a, D b) { return _mm256_add_pd(a, b); }
    static D dmin(D a, D b) { return _mm256_min_pd(a, b); }
    static D lo(F c) { return _mm256_cvtps_pd(_mm256_castps256_ps128(c)); }
    static D hi(F c) { return _mm256_cvtps_pd(_mm256_extractf128_ps(c, 1)); }
};

#ifdef __AVX512F__
struct Zmm {
    static constexpr int kLanes = 16;
    static constexpr const char* kName = "16 lanes (AVX-512)";
    using F = __m512;
    using D = __m512d;  // 8 of the 16 double sums
    static F load(const float* p) { return _mm512_loadu_ps(p); }
    static void store(float* p, F x) { _mm512_storeu_ps(p, x); }
    static F set1(float x) { return _mm512_set1_ps(x); }
    static F sub(F a, F b) { return _mm512_sub_ps(a, b); }
    static F mul(F a, F b) { return _mm512_mul_ps(a, b); }
    static F add(F a, F b) { return _mm512_add_ps(a, b); }
    static F min(F a, F b) { return _mm512_min_ps(a, b); }
    static F sqrt(F a) { return _mm512_sqrt_ps(a); }
    static D dload(const double* p) { return _mm512_loadu_pd(p); }
    static void dstore(double* p, D x) { _mm512_storeu_pd(p, x); }
    static D dset1(double x) { return _mm512_set1_pd(x); }
    static D dadd(D a, D b) { return _mm512_add_pd(a, b); }
    static D dmin(D a, D b) { return _mm512_min_pd(a, b); }
    static D lo(F c) { return _mm512_cvtps_pd(_mm512_castps512_ps256(c)); }
    static D hi(F c) { return _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(c), 1))); }
};
#endif

// ---- part 1: the inner loop over one L1-resident strip ----

constexpr int kRows = 2000, kCols = 102, kReps = 40;

enum class Variant { kDoubleSums, kFloatSums, kNoSqrt };

template <class V, Variant K>
__attribute__((noinline)) double strip(const float* ri, const float* qi, double* row, float* row_f) {
    constexpr int L = V::kLanes, H = L / 2;
    for (int s = 0; s < kCols * L; ++s) row[s] = row_f[s] = INFINITY;
    for (int t = 0; t < kRows; ++t) {
        const auto r0 = V::load(ri + (t * 3) * L), r1 = V::load(ri + (t * 3 + 1) * L),
                   r2 = V::load(ri + (t * 3 + 2) * L);
        auto diag_lo = V::dset1(t == 0 ? 0.0 : INFINITY), diag_hi = diag_lo, left_lo = V::dset1(INFINITY),
             left_hi = left_lo;
        auto diag_f = V::set1(t == 0 ? 0.0f : INFINITY), left_f = V::set1(INFINITY);
        for (int s = 0; s < kCols; ++s) {
            const float* q = qi + s * 3 * L;
            const auto d0 = V::sub(r0, V::load(q)), d1 = V::sub(r1, V::load(q + L)),
                       d2 = V::sub(r2, V::load(q + 2 * L));
            const auto acc = V::add(V::add(V::mul(d0, d0), V::mul(d1, d1)), V::mul(d2, d2));
            const auto cost = K == Variant::kNoSqrt ? acc : V::sqrt(acc);
            if constexpr (K == Variant::kFloatSums) {
                float* cell = row_f + s * L;
                const auto up = V::load(cell);
                const auto v = V::add(cost, V::min(V::min(diag_f, up), left_f));
                V::store(cell, v);
                diag_f = up;
                left_f = v;
            } else {
                double* cell = row + s * L;
                const auto up_lo = V::dload(cell), up_hi = V::dload(cell + H);
                const auto v_lo = V::dadd(V::lo(cost), V::dmin(V::dmin(diag_lo, up_lo), left_lo));
                const auto v_hi = V::dadd(V::hi(cost), V::dmin(V::dmin(diag_hi, up_hi), left_hi));
                V::dstore(cell, v_lo);
                V::dstore(cell + H, v_hi);
                diag_lo = up_lo;
                diag_hi = up_hi;
                left_lo = v_lo;
                left_hi = v_hi;
            }
        }
    }
    return K == Variant::kFloatSums ? row_f[(kCols - 1) * L] : row[(kCols - 1) * L];
}

template <class V, Variant K>
double ns_per_iteration(double* sink) {
    constexpr int L = V::kLanes;
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> u(0.0f, 20.0f);
    std::vector<float> ri(kRows * 3 * L), qi(kCols * 3 * L), row_f(kCols * L);
    std::vector<double> row(kCols * L);
    for (float& x : ri) x = u(rng);
    for (float& x : qi) x = u(rng);
    double best = 1e9;
    for (int rep = 0; rep < 5; ++rep) {
        const double t0 = thread_seconds();
        for (int k = 0; k < kReps; ++k) *sink += strip<V, K>(ri.data(), qi.data(), row.data(), row_f.data());
        best = std::min(best, (thread_seconds() - t0) * 1e9 / (double(kReps) * kRows * kCols));
    }
    return best;
}

template <class V>
double ns_per_sqrt() {  // 8 independent square roots per step: throughput, not latency
    const long n = 50000000 / V::kLanes;
    typename V::F x[8];
    for (int k = 0; k < 8; ++k) x[k] = V::set1(2.0f + static_cast<float>(k));
    double best = 1e9;
    for (int rep = 0; rep < 3; ++rep) {
        const double t0 = thread_seconds();
        for (long i = 0; i < n / 8; ++i)
            for (int k = 0; k < 8; ++k) {
                x[k] = V::sqrt(x[k]);
                __asm__ volatile("" : "+v"(x[k]));
            }
        best = std::min(best, (thread_seconds() - t0) * 1e9 / static_cast<double>(n));
    }
    return best;
}

// Nanoseconds per cycle, from a dependent chain of integer multiplies (3 cycles each on x86-64
// cores since Sandy Bridge and Zen; integer adds would not do: some cores fold them).
double ns_per_cycle() {
    const long n = 100000000;
    double best = 1e9;
    for (int rep = 0; rep < 3; ++rep) {
        long x = 3;
        const double t0 = thread_seconds();
        for (long i = 0; i < n; ++i) __asm__ volatile("imul %0, %0" : "+r"(x));
        best = std::min(best, (thread_seconds() - t0) * 1e9 / static_cast<double>(n) / 3.0);
    }
    return best;
}

// Nanoseconds per cycle of a chain of integer multiplies that runs beside independent V-width
// multiplies (4 per 12 cycles of the chain: the vector units stay busy, the chain sets the pace).
template <class V>
double ns_per_cycle_beside() {
    const long n = 20000000;
    double best = 1e9;
    for (int rep = 0; rep < 3; ++rep) {
        long x = 3;
        typename V::F v[4];
        for (int k = 0; k < 4; ++k) v[k] = V::set1(1.0f + static_cast<float>(k));
        const auto m = V::set1(1.0000001f);
        const double t0 = thread_seconds();
        for (long i = 0; i < n; ++i) {
            __asm__ volatile("imul %0, %0\n\timul %0, %0\n\timul %0, %0\n\timul %0, %0" : "+r"(x));
            for (int k = 0; k < 4; ++k) {
                v[k] = V::mul(v[k], m);
                __asm__ volatile("" : "+v"(v[k]));
            }
        }
        best = std::min(best, (thread_seconds() - t0) * 1e9 / static_cast<double>(n) / 12.0);
    }
    return best;
}

template <class V>
void report_strip(double cycle, double* sink) {
    constexpr int L = V::kLanes;
    auto line = [&](const char* name, double ns) {
        std::printf("%-20s %-14s %18.2f %14.2f\n", V::kName, name, ns / cycle, L / ns);
    };
    line("double sums", ns_per_iteration<V, Variant::kDoubleSums>(sink));
    line("float32 sums", ns_per_iteration<V, Variant::kFloatSums>(sink));
    line("no sqrt", ns_per_iteration<V, Variant::kNoSqrt>(sink));
    line("sqrt alone", ns_per_sqrt<V>());
}

// ---- part 2: a plain lane kernel over a whole workload ----

template <class T>
std::vector<T> load_npy(const std::string& path) {  // a C-ordered .npy file of little-endian T
    std::ifstream f(path, std::ios::binary);
    if (!f) {
        std::fprintf(stderr, "lanes_ceiling: cannot read %s\n", path.c_str());
        std::exit(2);
    }
    char magic[8];
    std::uint16_t header = 0;
    f.read(magic, 8);
    f.read(reinterpret_cast<char*>(&header), 2);
    f.seekg(0, std::ios::end);
    const auto end = static_cast<std::size_t>(f.tellg()), start = std::size_t{10} + header;
    std::vector<T> v((end - start) / sizeof(T));
    f.seekg(static_cast<std::streamoff>(start));
    f.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(T)));
    return v;
}

struct Workload {
    std::vector<float> rv, qv;         // 3-D points
    std::vector<std::int64_t> ro, qo;  // offsets
    std::vector<std::int64_t> order;   // pairs sorted by (|R|, |Q|)
    double cells = 0;
    std::int64_t n(std::int64_t b) const { return ro[b + 1] - ro[b]; }
    std::int64_t m(std::int64_t b) const { return qo[b + 1] - qo[b]; }
};

// Exact DTW of every pair (b, b) of the workload into out[b]: float32 costs, float32 sums.
template <class V>
__attribute__((noinline)) void plain_kernel(const Workload& w, float* out) {
    constexpr int L = V::kLanes;
    constexpr std::int64_t kWidth = 16384 / (16 * L);  // columns per strip: row and points in 16 KB
    std::vector<float> ri, qi, row(kWidth * L), edge;
    const auto B = static_cast<std::int64_t>(w.order.size());
    for (std::int64_t g = 0; g < B; g += L) {
        const int count = static_cast<int>(std::min<std::int64_t>(L, B - g));
        std::int64_t n[L], m[L], N = 0, M = 0;
        const float* rp[L];
        const float* qp[L];
        for (int l = 0; l < L; ++l) {
            const std::int64_t b = w.order[g + (l < count ? l : 0)];
            n[l] = w.n(b);
            m[l] = w.m(b);
            rp[l] = w.rv.data() + w.ro[b] * 3;
            qp[l] = w.qv.data() + w.qo[b] * 3;
            N = std::max(N, n[l]);
            M = std::max(M, m[l]);
        }
        ri.resize(N * 3 * L);
        qi.resize(M * 3 * L);
        for (std::int64_t i = 0; i < N; ++i)
            for (int c = 0; c < 3; ++c)
                for (int l = 0; l < L; ++l) ri[(i * 3 + c) * L + l] = rp[l][std::min(i, n[l] - 1) * 3 + c];
        for (std::int64_t i = 0; i < M; ++i)
            for (int c = 0; c < 3; ++c)
                for (int l = 0; l < L; ++l) qi[(i * 3 + c) * L + l] = qp[l][std::min(i, m[l] - 1) * 3 + c];
        edge.assign(N * L, INFINITY);
        for (std::int64_t s0 = 0; s0 < M; s0 += kWidth) {
            const std::int64_t s1 = std::min(M, s0 + kWidth);
            std::fill(row.begin(), row.begin() + (s1 - s0) * L, INFINITY);
            auto diag = V::set1(s0 == 0 ? 0.0f : INFINITY);
            for (std::int64_t t = 0; t < N; ++t) {
                const auto r0 = V::load(&ri[t * 3 * L]), r1 = V::load(&ri[(t * 3 + 1) * L]),
                           r2 = V::load(&ri[(t * 3 + 2) * L]);
                auto left = V::load(&edge[t * L]);
                const auto next_diag = left;
                for (std::int64_t s = s0; s < s1; ++s) {
                    const float* q = &qi[s * 3 * L];
                    const auto d0 = V::sub(r0, V::load(q)), d1 = V::sub(r1, V::load(q + L)),
                               d2 = V::sub(r2, V::load(q + 2 * L));
                    const auto cost = V::sqrt(V::add(V::add(V::mul(d0, d0), V::mul(d1, d1)), V::mul(d2, d2)));
                    float* cell = &row[(s - s0) * L];
                    const auto up = V::load(cell);
                    const auto v = V::add(cost, V::min(V::min(diag, up), left));
                    V::store(cell, v);
                    diag = up;
                    left = v;
                }
                V::store(&edge[t * L], left);
                diag = next_diag;
                for (int l = 0; l < count; ++l)
                    if (n[l] - 1 == t && m[l] - 1 >= s0 && m[l] - 1 < s1)
                        out[w.order[g + l]] = row[(m[l] - 1 - s0) * L + l];
            }
        }
    }
}

template <class V>
double gcells_per_s(const Workload& w, int repeat, std::vector<float>& out) {
    double best = 1e9;
    for (int rep = 0; rep < repeat; ++rep) {
        const double t0 = thread_seconds();
        plain_kernel<V>(w, out.data());
        best = std::min(best, thread_seconds() - t0);
    }
    return w.cells / best / 1e9;
}

int run_workload(const std::string& dir, int repeat) {
    Workload w;
    w.rv = load_npy<float>(dir + "/rv.npy");
    w.qv = load_npy<float>(dir + "/qv.npy");
    w.ro = load_npy<std::int64_t>(dir + "/ro.npy");
    w.qo = load_npy<std::int64_t>(dir + "/qo.npy");
    const auto B = static_cast<std::int64_t>(w.ro.size()) - 1;
    if (B < 1 || w.qo.size() != w.ro.size() || w.rv.size() != static_cast<std::size_t>(w.ro.back()) * 3) {
        std::fprintf(stderr, "lanes_ceiling: %s is not a 3-D coordinate workload\n", dir.c_str());
        return 2;
    }
    w.order.resize(B);
    std::iota(w.order.begin(), w.order.end(), std::int64_t{0});
    std::stable_sort(w.order.begin(), w.order.end(), [&](std::int64_t a, std::int64_t b) {
        return std::make_pair(w.n(a), w.m(a)) < std::make_pair(w.n(b), w.m(b));
    });
    for (std::int64_t b = 0; b < B; ++b) w.cells += static_cast<double>(w.n(b)) * static_cast<double>(w.m(b));
    std::vector<float> out(B);
    std::printf("plain lane kernel, float32 sums, %lld pairs, %.3g cells, 1 thread, best of %d (CPU time):\n",
                static_cast<long long>(B), w.cells, repeat);
    const double y = gcells_per_s<Ymm>(w, repeat, out);
    std::printf("  %-20s %6.2f G cells/s\n", Ymm::kName, y);
#ifdef __AVX512F__
    const double z = gcells_per_s<Zmm>(w, repeat, out);
    std::printf("  %-20s %6.2f G cells/s\n", Zmm::kName, z);
    std::printf("@@CEILING {\"lanes8\": %.6g, \"lanes16\": %.6g, \"check\": %.9g}\n", y * 1e9, z * 1e9, out[0]);
#else
    std::printf("@@CEILING {\"lanes8\": %.6g, \"check\": %.9g}\n", y * 1e9, out[0]);
#endif
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc > 1) return run_workload(argv[1], argc > 2 ? std::atoi(argv[2]) : 5);
    double sink = 0;
    const double cycle = ns_per_cycle();
    std::printf("clock estimate: %.2f GHz (dependent imul, 3 cycles)\n", 1.0 / cycle);
    std::printf("%-20s %-14s %18s %14s\n", "lanes", "variant", "cycles / vector", "G cells/s/core");
    report_strip<Ymm>(cycle, &sink);
#ifdef __AVX512F__
    report_strip<Zmm>(cycle, &sink);
#endif
    std::printf("clock beside 256-bit multiplies: %.2f GHz\n", 1.0 / ns_per_cycle_beside<Ymm>());
#ifdef __AVX512F__
    std::printf("clock beside 512-bit multiplies: %.2f GHz\n", 1.0 / ns_per_cycle_beside<Zmm>());
#endif
    return sink == 42.0;  // keeps the results live
}
