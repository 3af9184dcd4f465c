// libFuzzer harness of navdtw's C++ core (cpp/navdtw/ plus the SIMD kernel files), no Python.
//
// Every input decodes to a small ragged batch of (reference, query) pairs in one cost mode:
// coordinates (float32 [n, D], D = 1..4, many exact ties, values up to the engine's documented
// bound of +-1e15 m) or node ids (int32 or int64) over one or more float32 [V, V] matrices with
// some inf and some huge entries. Each kernel is called directly and checked against a plain
// full-table recurrence written here (sum of costs, steps (1,0), (0,1), (1,1)), bit for bit where
// the engine promises identical bits:
//
//   exact DTW, double and single sums     == reference (short-row, rolling-row and AVX2 node kernels)
//   lane kernels: AVX2, AVX-512 (where    == reference, for groups of any count and lengths
//   this CPU runs them), double + single
//   band, window 0 .. max(n, m) + 1       == banded reference, >= exact, == exact once w >= max(n, m) - 1
//   FastDTW, radius 0..3 and one more     >= exact, == exact when the radius covers the shorter path
//   FastDTW's double path                 == reference over double costs, close to the float32 one
//   single vs double sums                 within (n + m) float32 roundings
//   prefix                                == last row of the reference table
//   warping path                          value == exact, a valid path, its summed cost == value, and
//                                          the path the documented tie rule picks
//   transposed problem                    DTW(Q, R) == DTW(R, Q) (nodes: over M^T), every band too
//   batches                               == single pairs, for every kernel forced, workers 1 and 2,
//                                          element-wise, explicit pairs, all pairs, env=, precision
//   anchored DTW (anchored.hpp),         exclusive == the recurrence over IVLN-CE's window written
//   anchors from the fuzz input           here; through == the sum of its stretches' references
//                                          minus the anchors' costs (within 1e-12), >= exact (within
//                                          1e-12: the join rounds), == exact
//                                          without anchors, the same bits for every kernel forced
//   bad node ids in a batch               std::invalid_argument naming the lowest bad pair
//   bad pairs in a batch (index, empty    std::invalid_argument naming the lowest bad pair, whatever
//   path, node id, env)                   the kernel and workers
//   streaming reward (reward.hpp)         DTW after each step == prefix DTW, nDTW and rewards from it
//   statistics (stats.hpp)                == plain loops
//   random walks (walks.hpp)              walks along the graph's edges, the same for any workers
//                                          and batch split
//
// A mismatch prints the decoded batch and aborts (libFuzzer saves the input as crash-*).
// Build and run: fuzz/build_cpp.sh, fuzz/run.sh (see fuzz/README.md).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "navdtw/anchored.hpp"
#include "navdtw/batch.hpp"
#include "navdtw/dtw.hpp"
#include "navdtw/lanes.hpp"
#include "navdtw/reward.hpp"
#include "navdtw/stats.hpp"
#include "navdtw/walks.hpp"

namespace {

using navdtw::index_t;
constexpr double kInf = std::numeric_limits<double>::infinity();
// python/navdtw/engine.py's MAX_COORDINATE: the engine refuses coordinates beyond it.
constexpr double kMaxCoordinate = 1e15;

// ---------------------------------------------------------------------------------------------
// decoding
// ---------------------------------------------------------------------------------------------

// Consumes the input byte by byte; past the end every byte reads as 0.
struct Reader {
    const std::uint8_t* data;
    std::size_t size, pos = 0;
    int byte() { return pos < size ? data[pos++] : (++pos, 0); }
    int below(int n) { return byte() % n; }
};

struct Case {
    bool nodes = false;
    int dim = 1;
    bool int32 = false;
    // coordinates: path k is pts[k] ([len, dim] row-major); nodes: ids[k]
    std::vector<std::vector<float>> pts;
    std::vector<std::vector<std::int64_t>> ids;
    int V = 1;
    std::vector<std::vector<float>> mats;  // [V, V] each
    // pair p = (reference path ref[p], query path qry[p]) over matrix env[p]
    std::vector<int> ref, qry, env;
    int window_pick = 0, radius_pick = 0;

    index_t len(int k) const {
        return nodes ? static_cast<index_t>(ids[static_cast<std::size_t>(k)].size())
                     : static_cast<index_t>(pts[static_cast<std::size_t>(k)].size()) / dim;
    }
};

float coordinate(Reader& rd, const std::vector<float>& path, int dim) {
    const int kind = rd.below(16), v = rd.byte();
    if (kind < 7) return static_cast<float>(v % 7 - 3);  // small integers: many exact ties
    if (kind < 9 && path.size() >= static_cast<std::size_t>(dim))
        return path[path.size() - static_cast<std::size_t>(dim)];  // the previous point's coordinate
    if (kind < 13) return static_cast<float>((v - 128) / 7.3);
    if (kind == 13) return static_cast<float>((v - 128) / 128.0 * kMaxCoordinate);        // large, inside the bound
    if (kind == 14) return static_cast<float>(v % 2 ? kMaxCoordinate : -kMaxCoordinate);  // the bound itself
    return static_cast<float>((v - 128) * 1e-30);                                         // tiny
}

// Path lengths: mostly short (the short-row kernels), sometimes long enough to cross the lane
// kernels' column strips (42 .. 170 columns wide depending on dim, lanes and precision).
index_t length(Reader& rd) {
    const int b = rd.byte();
    if (b < 240) return 1 + b % 12;
    return 1 + rd.below(96);
}

Case decode(const std::uint8_t* data, std::size_t size) {
    Reader rd{data, size};
    Case c;
    const int head = rd.byte();
    c.nodes = head & 1;
    c.dim = 1 + (head >> 1) % 4;
    c.int32 = (head >> 3) & 1;
    const int n_paths = 1 + rd.below(12);
    const int n_pairs = 1 + rd.below(20);
    c.window_pick = rd.byte();
    c.radius_pick = rd.byte();
    if (c.nodes) {
        c.V = 1 + rd.below(8);
        const int n_mats = 1 + rd.below(3);
        const bool symmetric = rd.byte() & 1;
        for (int e = 0; e < n_mats; ++e) {
            std::vector<float> M(static_cast<std::size_t>(c.V * c.V));
            for (float& x : M) {
                const int b = rd.byte();
                x = b % 11 == 0 ? std::numeric_limits<float>::infinity()
                    : b == 254  ? 3e38f  // two of them overflow a float32 sum (precision="single")
                                : static_cast<float>(b % 17) * 0.5f;
            }
            if (symmetric)
                for (int i = 0; i < c.V; ++i)
                    for (int j = 0; j < i; ++j) {
                        float& a = M[static_cast<std::size_t>(i * c.V + j)];
                        float& b = M[static_cast<std::size_t>(j * c.V + i)];
                        a = b = std::min(a, b);
                    }
            c.mats.push_back(std::move(M));
        }
        for (int k = 0; k < n_paths; ++k) {
            std::vector<std::int64_t> p(static_cast<std::size_t>(length(rd)));
            for (auto& x : p) x = rd.below(c.V);
            c.ids.push_back(std::move(p));
        }
    } else {
        for (int k = 0; k < n_paths; ++k) {
            const index_t n = length(rd);
            std::vector<float> p;
            p.reserve(static_cast<std::size_t>(n * c.dim));
            for (index_t i = 0; i < n * c.dim; ++i) p.push_back(coordinate(rd, p, c.dim));
            c.pts.push_back(std::move(p));
        }
    }
    for (int p = 0; p < n_pairs; ++p) {
        c.ref.push_back(rd.below(n_paths));
        c.qry.push_back(rd.below(n_paths));
        c.env.push_back(c.nodes ? rd.below(static_cast<int>(c.mats.size())) : 0);
    }
    return c;
}

const Case* g_case = nullptr;  // for the failure report

void describe(const Case& c) {
    std::fprintf(stderr, "mode=%s dim=%d int32=%d V=%d pairs=%zu\n", c.nodes ? "nodes" : "points", c.dim, c.int32, c.V,
                 c.ref.size());
    const std::size_t n_paths = c.nodes ? c.ids.size() : c.pts.size();
    for (std::size_t k = 0; k < n_paths; ++k) {
        std::fprintf(stderr, "path %zu:", k);
        if (c.nodes)
            for (auto x : c.ids[k]) std::fprintf(stderr, " %lld", static_cast<long long>(x));
        else
            for (float x : c.pts[k]) std::fprintf(stderr, " %.9g", static_cast<double>(x));
        std::fprintf(stderr, "\n");
    }
    for (std::size_t e = 0; e < c.mats.size(); ++e) {
        std::fprintf(stderr, "matrix %zu:", e);
        for (float x : c.mats[e]) std::fprintf(stderr, " %g", static_cast<double>(x));
        std::fprintf(stderr, "\n");
    }
    for (std::size_t p = 0; p < c.ref.size(); ++p) std::fprintf(stderr, "(%d,%d,e%d) ", c.ref[p], c.qry[p], c.env[p]);
    std::fprintf(stderr, "\n");
}

[[noreturn]] void fail(const std::string& what) {
    std::fprintf(stderr, "\nMISMATCH: %s\n", what.c_str());
    if (g_case) describe(*g_case);
    std::abort();
}

std::string num(double x) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", x);
    return buf;
}

// Same bits (inf == inf; a NaN is always a failure: the engine promises never to return one).
void expect_same(double got, double want, const std::string& what) {
    if (std::isnan(got) || std::isnan(want) || got != want) fail(what + ": got " + num(got) + ", want " + num(want));
}

// ---------------------------------------------------------------------------------------------
// the plain references
// ---------------------------------------------------------------------------------------------

// Euclidean distance of two float32 points, measured in float32 as docs/engine.md defines it:
// squared differences summed left to right, one correctly rounded square root.
float point_cost(const float* a, const float* b, int dim) {
    float s = 0.0f;
    for (int k = 0; k < dim; ++k) {
        const float d = a[k] - b[k];
        s = k == 0 ? d * d : s + d * d;
    }
    return std::sqrt(s);
}

// The same points in double (FastDTW's coarse levels measure double series).
double point_cost_double(const double* a, const double* b, int dim) {
    double s = 0.0;
    for (int k = 0; k < dim; ++k) {
        const double d = a[k] - b[k];
        s = k == 0 ? d * d : s + d * d;
    }
    return std::sqrt(s);
}

// One pair's cost table: cost[i][j] = d(reference point i, query point j).
struct Costs {
    index_t n = 0, m = 0;
    std::vector<double> c;
    double at(index_t i, index_t j) const { return c[static_cast<std::size_t>(i * m + j)]; }
};

// Whether cell (i, j) of an n x m table lies in the Sakoe-Chiba band of half-width w (w < 0: no
// band), written from its definition in docs/engine.md: with the longer path on the rows (length
// L, row t) and the shorter on the columns (length S, column s), c = t (S - 1) / (L - 1) and the
// band keeps floor(c) - w <= s <= ceil(c) + w.
bool in_band(index_t n, index_t m, index_t i, index_t j, index_t w) {
    if (w < 0) return true;
    const index_t L = std::max(n, m), S = std::min(n, m);
    const index_t t = n >= m ? i : j, s = n >= m ? j : i;
    if (L <= 1) return true;
    const index_t num = t * (S - 1), den = L - 1;
    const index_t fl = num / den, ce = (num + den - 1) / den;
    return s >= fl - w && s <= ce + w;
}

// The full (n + 1) x (m + 1) table, C[-1][-1] = 0, borders inf, sums of type T. Returns it
// row-major [n, m] (without the borders).
template <class T>
std::vector<T> reference_table(const Costs& k, index_t w) {
    const index_t n = k.n, m = k.m;
    const T inf = std::numeric_limits<T>::infinity();
    std::vector<T> C(static_cast<std::size_t>((n + 1) * (m + 1)), inf);
    auto at = [&](index_t i, index_t j) -> T& { return C[static_cast<std::size_t>((i + 1) * (m + 1) + (j + 1))]; };
    at(-1, -1) = T(0);
    for (index_t i = 0; i < n; ++i)
        for (index_t j = 0; j < m; ++j) {
            if (!in_band(n, m, i, j, w)) continue;
            const T best = std::min({at(i - 1, j - 1), at(i - 1, j), at(i, j - 1)});
            at(i, j) = static_cast<T>(k.at(i, j)) + best;
        }
    std::vector<T> out(static_cast<std::size_t>(n * m));
    for (index_t i = 0; i < n; ++i)
        for (index_t j = 0; j < m; ++j) out[static_cast<std::size_t>(i * m + j)] = at(i, j);
    return out;
}

template <class T>
double reference_dtw(const Costs& k, index_t w = -1) {
    return static_cast<double>(reference_table<T>(k, w).back());
}

// The optimal path the documented tie rule picks (diagonal, then advancing the reference, then
// the query), for a finite value.
std::vector<std::pair<index_t, index_t>> reference_path(const Costs& k) {
    const std::vector<double> C = reference_table<double>(k, -1);
    const index_t m = k.m;
    auto val = [&](index_t i, index_t j) {
        if (i == -1 && j == -1) return 0.0;
        if (i < 0 || j < 0) return kInf;
        return C[static_cast<std::size_t>(i * m + j)];
    };
    std::vector<std::pair<index_t, index_t>> path;
    index_t i = k.n - 1, j = k.m - 1;
    while (true) {
        path.emplace_back(i, j);
        if (i == 0 && j == 0) break;
        double best = val(i - 1, j - 1);
        int d = 2;
        if (val(i - 1, j) < best) {
            best = val(i - 1, j);
            d = 0;
        }
        if (val(i, j - 1) < best) d = 1;
        if (d != 1) --i;
        if (d != 0) --j;
    }
    std::reverse(path.begin(), path.end());
    return path;
}

// ---------------------------------------------------------------------------------------------
// the checks
// ---------------------------------------------------------------------------------------------

std::string pair_name(int p, index_t n, index_t m) {
    return "pair " + std::to_string(p) + " (" + std::to_string(n) + " x " + std::to_string(m) + ")";
}

// Window half-widths to try: every one for short pairs; for long pairs the edges and one chosen
// by the input.
std::vector<index_t> windows(index_t n, index_t m, int pick) {
    const index_t top = std::max(n, m) + 1;
    std::vector<index_t> ws;
    if (top <= 14) {
        for (index_t w = 0; w <= top; ++w) ws.push_back(w);
    } else {
        for (index_t w : {index_t(0), index_t(1), top - 2, top - 1, top}) ws.push_back(w);
        ws.push_back(pick % (top + 1));
    }
    return ws;
}

void check_path(const std::vector<std::pair<index_t, index_t>>& path, const Costs& k, double value,
                const std::string& name) {
    if (path.empty() || path.front() != std::make_pair(index_t(0), index_t(0)) ||
        path.back() != std::make_pair(k.n - 1, k.m - 1))
        fail(name + ": warping path does not run from (0, 0) to the end cell");
    double sum = 0.0;
    for (std::size_t s = 0; s < path.size(); ++s) {
        if (s > 0) {
            const index_t di = path[s].first - path[s - 1].first, dj = path[s].second - path[s - 1].second;
            if (di < 0 || dj < 0 || di > 1 || dj > 1 || di + dj == 0) fail(name + ": warping path takes a bad step");
        }
        sum = k.at(path[s].first, path[s].second) + sum;  // the recurrence's order: cost + earlier sum
    }
    expect_same(sum, value, name + ": summed cost of the warping path");
    if (std::isfinite(value) && path != reference_path(k)) fail(name + ": warping path differs from the tie rule's");
}

// Relative distance allowed between float32 and double sums of a path of n + m - 1 steps.
bool close_single(double single, double dbl, index_t n, index_t m) {
    if (std::isinf(dbl)) return std::isinf(single);
    if (std::isinf(single)) return dbl > 1e38;  // float32 sums overflow at 3.4e38
    const double tol = static_cast<double>(n + m + 2) * 0x1p-23;
    return std::fabs(single - dbl) <= tol * dbl;
}

// ---- coordinates ----

struct PointPair {
    const float* a;
    index_t n;
    const float* q;
    index_t m;
};

Costs point_costs(const PointPair& pp, int dim) {
    Costs k{pp.n, pp.m, {}};
    k.c.resize(static_cast<std::size_t>(pp.n * pp.m));
    for (index_t i = 0; i < pp.n; ++i)
        for (index_t j = 0; j < pp.m; ++j)
            k.c[static_cast<std::size_t>(i * pp.m + j)] =
                static_cast<double>(point_cost(pp.a + i * dim, pp.q + j * dim, dim));
    return k;
}

// Every single-pair kernel of one coordinate pair against the reference.
void check_point_pair(const PointPair& pp, int dim, int p, const Case& c, navdtw::Workspace& ws) {
    const std::string name = "points " + pair_name(p, pp.n, pp.m);
    const Costs k = point_costs(pp, dim);
    const double exact = reference_dtw<double>(k), exact_f = reference_dtw<float>(k);
    // coordinates within +-1e15 m: every cost is finite for any D <= 4 (engine.md's bound)
    if (!std::isfinite(exact)) fail(name + ": DTW of coordinates inside the documented bound is not finite");
    navdtw::Method dbl, sgl;
    sgl.single = true;
    expect_same(navdtw::dtw_points_pair(pp.a, pp.n, pp.q, pp.m, dim, dbl, ws), exact, name + ": exact");
    expect_same(navdtw::dtw_points_pair(pp.a, pp.n, pp.q, pp.m, dim, sgl, ws), exact_f, name + ": exact single");
    expect_same(navdtw::dtw_points_pair(pp.q, pp.m, pp.a, pp.n, dim, dbl, ws), exact, name + ": transposed");
    expect_same(navdtw::dtw_points_pair(pp.q, pp.m, pp.a, pp.n, dim, sgl, ws), exact_f, name + ": transposed single");
    if (!close_single(exact_f, exact, pp.n, pp.m)) fail(name + ": single " + num(exact_f) + " far from " + num(exact));

    for (const index_t w : windows(pp.n, pp.m, c.window_pick)) {
        const std::string bn = name + ": band w=" + std::to_string(w);
        navdtw::Method bd, bs;
        bd.window = bs.window = w;
        bs.single = true;
        const double want = reference_dtw<double>(k, w), want_f = reference_dtw<float>(k, w);
        const double got = navdtw::dtw_points_pair(pp.a, pp.n, pp.q, pp.m, dim, bd, ws);
        expect_same(got, want, bn);
        expect_same(navdtw::dtw_points_pair(pp.a, pp.n, pp.q, pp.m, dim, bs, ws), want_f, bn + " single");
        expect_same(navdtw::dtw_points_pair(pp.q, pp.m, pp.a, pp.n, dim, bd, ws), want, bn + " transposed");
        if (!(got >= exact)) fail(bn + ": " + num(got) + " < exact " + num(exact));
        if (w >= std::max(pp.n, pp.m) - 1) expect_same(got, exact, bn + " (as wide as the table)");
    }

    int radii[5] = {0, 1, 2, 3, c.radius_pick % 40};
    for (const int rad : radii) {
        const std::string fn = name + ": FastDTW radius=" + std::to_string(rad);
        navdtw::Method fm;
        fm.radius = rad;
        const double f = navdtw::dtw_points_pair(pp.a, pp.n, pp.q, pp.m, dim, fm, ws);
        if (!(f >= exact) || !std::isfinite(f)) fail(fn + ": " + num(f) + " < exact " + num(exact));
        if (std::min(pp.n, pp.m) < rad + 2) expect_same(f, exact, fn + " (covers the shorter path)");
    }

    // The double path: FastDTW's levels measure double series. With a radius past both lengths a
    // level is the exact recurrence over double costs, bit for bit.
    {
        std::vector<double> x(pp.q, pp.q + pp.m * dim), y(pp.a, pp.a + pp.n * dim);
        Costs kd{pp.m, pp.n, std::vector<double>(static_cast<std::size_t>(pp.n * pp.m))};
        for (index_t i = 0; i < pp.m; ++i)
            for (index_t j = 0; j < pp.n; ++j)
                kd.c[static_cast<std::size_t>(i * pp.n + j)] =
                    point_cost_double(x.data() + i * dim, y.data() + j * dim, dim);
        const double want = reference_dtw<double>(kd);
        const index_t big = std::max(pp.n, pp.m);
        const double got = navdtw::fastdtw_level(x.data(), pp.m, y.data(), pp.n, dim, big, ws, nullptr);
        expect_same(got, want, name + ": double-series DTW (FastDTW level)");
        std::vector<std::pair<index_t, index_t>> path;
        const double got_p = navdtw::fastdtw_level(x.data(), pp.m, y.data(), pp.n, dim, big, ws, &path);
        expect_same(got_p, want, name + ": double-series DTW with path");
        // float32 costs vs double costs: a float32 cost is within (dim + 2) roundings of the double
        // one, or below ~4e-23 m off where its square underflows (docs/engine.md); a DTW value is
        // a sum of at most n + m - 1 costs
        const double tol = (dim + 3) * 0x1p-24 * std::max(want, exact) + static_cast<double>(pp.n + pp.m) * 1e-22;
        if (!(std::fabs(want - exact) <= tol))
            fail(name + ": double-series DTW " + num(want) + " far from the float32 one " + num(exact));
    }

    std::vector<double> pref(static_cast<std::size_t>(pp.m));
    switch (dim) {
        case 2:
            navdtw::dtw_prefix(navdtw::EuclideanCost<float, 2>{pp.a, pp.q, 2}, pp.n, pp.m, pref.data(), ws);
            break;
        case 3:
            navdtw::dtw_prefix(navdtw::EuclideanCost<float, 3>{pp.a, pp.q, 3}, pp.n, pp.m, pref.data(), ws);
            break;
        default:
            navdtw::dtw_prefix(navdtw::EuclideanCost<float, 0>{pp.a, pp.q, dim}, pp.n, pp.m, pref.data(), ws);
    }
    const std::vector<double> table = reference_table<double>(k, -1);
    for (index_t j = 0; j < pp.m; ++j)
        expect_same(pref[static_cast<std::size_t>(j)], table[static_cast<std::size_t>((pp.n - 1) * pp.m + j)],
                    name + ": prefix[" + std::to_string(j) + "]");

    std::vector<std::pair<index_t, index_t>> path;
    const double v = navdtw::warping_path(navdtw::EuclideanCost<float, 0>{pp.a, pp.q, dim}, pp.n, pp.m, ws, path);
    expect_same(v, exact, name + ": warping path value");
    check_path(path, k, exact, name);
}

// The lane kernels, called directly on the pairs in the input's order (not the batch driver's
// shape order), in groups of every size up to the kernel's lanes.
void check_lanes(const std::vector<PointPair>& pairs, const std::vector<double>& exact,
                 const std::vector<double>& exact_f, int dim) {
    navdtw::LaneScratch scratch;
    for (const navdtw::Simd k : navdtw::simd_compiled()) {
        if (!navdtw::simd_supported(k)) continue;
        const int lanes = navdtw::simd_lanes(k);
        for (const bool single : {false, true}) {
            // groups of `size` pairs for every size, so ragged groups and part-empty ones both run
            for (const int size : {1, lanes / 2 + 1, lanes}) {
                for (std::size_t g0 = 0; g0 < pairs.size(); g0 += static_cast<std::size_t>(size)) {
                    const int count =
                        static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(size), pairs.size() - g0));
                    navdtw::LanePair lp[navdtw::kMaxLanes];
                    double out[navdtw::kMaxLanes];
                    for (int l = 0; l < count; ++l) {
                        const PointPair& pp = pairs[g0 + static_cast<std::size_t>(l)];
                        lp[l] = {pp.a, pp.n, pp.q, pp.m};
                        out[l] = -1.0;
                    }
                    navdtw::dtw_lanes(k, lp, count, dim, single, out, scratch);
                    for (int l = 0; l < count; ++l) {
                        const std::size_t p = g0 + static_cast<std::size_t>(l);
                        expect_same(out[l], single ? exact_f[p] : exact[p],
                                    std::string(navdtw::simd_name(k)) + (single ? " single" : "") + " lane " +
                                        std::to_string(l) + " of " + std::to_string(count) + ", " +
                                        pair_name(static_cast<int>(p), pairs[p].n, pairs[p].m));
                    }
                }
            }
        }
    }
}

// The kernels a batch may be forced to use: each supported one, and the automatic choice.
std::vector<int> simd_choices() {
    std::vector<int> out{navdtw::kSimdAuto, static_cast<int>(navdtw::Simd::kPortable)};
    for (const navdtw::Simd k : navdtw::simd_compiled())
        if (navdtw::simd_supported(k)) out.push_back(static_cast<int>(k));
    return out;
}

// Workers 1 for every kernel; 2 as well for the automatic choice (threads under ASan are slow to
// start, and the worker count changes only how pairs are shared out).
std::vector<int> worker_counts(int choice) {
    if (choice == navdtw::kSimdAuto) return {1, 2};
    return {1};
}

struct SimdGuard {
    ~SimdGuard() { navdtw::set_simd(navdtw::kSimdAuto); }
};

const navdtw::Poll kNoPoll = [] { return false; };

// Runs fn, which must throw std::invalid_argument whose message starts with `want`.
template <class Fn>
void expect_error(const Fn& fn, const std::string& want, const std::string& what) {
    std::string msg = "no error";
    try {
        fn();
    } catch (const std::invalid_argument& e) {
        msg = e.what();
    }
    if (msg.rfind(want, 0) != 0) fail(what + ": message '" + msg + "', want it to start with '" + want + "'");
}

// The streaming DTW of the RL reward: the pairs' queries arrive one point per step (episodes end
// at their own lengths, two workers every other step); after step t an episode's DTW is the
// prefix DTW(R, q_0..q_t) (the reference table's last row), bit for bit, its nDTW
// exp(-DTW / (|R| threshold)) and its reward the change of nDTW (0 on the first step).
void check_reward(const std::vector<Costs>& ks) {
    const auto B = static_cast<index_t>(ks.size());
    std::vector<index_t> ref_offsets{0}, steps(static_cast<std::size_t>(B), 0);
    index_t T = 0;
    std::vector<std::vector<double>> tables;
    for (const Costs& k : ks) {
        ref_offsets.push_back(ref_offsets.back() + k.n);
        T = std::max(T, k.m);
        tables.push_back(reference_table<double>(k, -1));
    }
    std::vector<double> columns(static_cast<std::size_t>(ref_offsets.back()), -1.0), dtw(static_cast<std::size_t>(B)),
        ndtw(static_cast<std::size_t>(B), 0.0), rewards(static_cast<std::size_t>(B));
    std::vector<std::uint8_t> active(static_cast<std::size_t>(B));
    const double threshold = 3.0;
    navdtw::RewardState st{columns.data(), ref_offsets.data(), steps.data(), dtw.data(), ndtw.data(), active.data(), B,
                           threshold};
    for (index_t t = 0; t < T; ++t) {
        for (index_t b = 0; b < B; ++b) active[static_cast<std::size_t>(b)] = t < ks[static_cast<std::size_t>(b)].m;
        const std::vector<double> before = ndtw;
        const auto point_cost = [&](index_t b, double* col, index_t n, index_t step) {
            const Costs& k = ks[static_cast<std::size_t>(b)];
            return navdtw::extend_column(col, n, step, [&](index_t i) { return k.at(i, step); });
        };
        navdtw::reward_step(st, rewards.data(), point_cost, t % 2 ? 2 : 1, kNoPoll);
        for (index_t b = 0; b < B; ++b) {
            const auto ub = static_cast<std::size_t>(b);
            const std::string name = "reward step " + std::to_string(t) + ", episode " + std::to_string(b);
            if (!active[ub]) {
                expect_same(rewards[ub], 0.0, name + " (finished): reward");
                continue;
            }
            const Costs& k = ks[ub];
            const double want = tables[ub][static_cast<std::size_t>((k.n - 1) * k.m + t)];
            expect_same(dtw[ub], want, name + ": DTW");
            const double nd = std::exp(-want / (static_cast<double>(k.n) * threshold));
            expect_same(ndtw[ub], nd, name + ": nDTW");
            expect_same(rewards[ub], t == 0 ? 0.0 : nd - before[ub], name + ": reward");
            if (steps[ub] != t + 1) fail(name + ": step count");
        }
    }
}

// Random walks over the graph of the first matrix's finite off-diagonal entries (node i's
// neighbours: every j with M[i, j] finite, in order), one reference per path starting at its first
// node, step counts drawn from the paths' lengths - 1.
void check_walks(const Case& c) {
    const index_t V = c.V;
    const std::vector<float>& M = c.mats[0];
    std::vector<std::int64_t> indptr{0}, indices;
    for (index_t i = 0; i < V; ++i) {
        for (index_t j = 0; j < V; ++j)
            if (i != j && std::isfinite(M[static_cast<std::size_t>(i * V + j)])) indices.push_back(j);
        indptr.push_back(static_cast<std::int64_t>(indices.size()));
    }
    std::vector<std::int64_t> starts, base, counts;
    for (const auto& p : c.ids) {
        starts.push_back(p[0]);
        base.push_back(0);
        counts.push_back(static_cast<std::int64_t>(p.size()) - 1);
    }
    const navdtw::WalkSpec spec{indptr.data(),
                                indices.data(),
                                V,
                                starts.data(),
                                base.data(),
                                static_cast<std::int64_t>(starts.size()),
                                counts.data(),
                                static_cast<std::int64_t>(counts.size()),
                                static_cast<std::uint64_t>(c.window_pick * 256 + c.radius_pick)};
    const std::int64_t first = c.radius_pick, count = static_cast<std::int64_t>(c.ref.size());
    const auto walks = [&](std::int64_t from, std::int64_t n, int workers) {
        std::vector<std::int64_t> offsets(static_cast<std::size_t>(n + 1)), refs(static_cast<std::size_t>(n));
        navdtw::walk_lengths(spec, from, n, offsets.data(), refs.data(), workers, kNoPoll);
        std::vector<std::int64_t> values(static_cast<std::size_t>(offsets.back()));
        navdtw::walk_fill(spec, from, n, offsets.data(), refs.data(), values.data(), workers, kNoPoll);
        return std::make_tuple(offsets, refs, values);
    };
    const auto [offsets, refs, values] = walks(first, count, 1);
    for (std::int64_t j = 0; j < count; ++j) {
        const std::string name = "walk " + std::to_string(first + j);
        const auto uj = static_cast<std::size_t>(j);
        const std::int64_t ref = refs[uj], len = offsets[uj + 1] - offsets[uj];
        if (ref != (first + j) % spec.n_refs) fail(name + ": serves the wrong reference");
        if (std::find(counts.begin(), counts.end(), len - 1) == counts.end()) fail(name + ": step count not drawn");
        const std::int64_t* w = values.data() + offsets[uj];
        if (w[0] != starts[static_cast<std::size_t>(ref)]) fail(name + ": does not start at its reference's start");
        for (std::int64_t k = 1; k < len; ++k) {
            const std::int64_t from = w[k - 1], lo = indptr[static_cast<std::size_t>(from)],
                               hi = indptr[static_cast<std::size_t>(from) + 1];
            const bool ok = lo == hi
                                ? w[k] == from
                                : std::find(indices.begin() + lo, indices.begin() + hi, w[k]) != indices.begin() + hi;
            if (!ok) fail(name + ": step " + std::to_string(k) + " leaves the graph's edges");
        }
    }
    if (walks(first, count, 2) != std::make_tuple(offsets, refs, values)) fail("walks differ with 2 workers");
    if (count > 1) {  // a walk depends on its index only: the batch from first + 1 is the tail
        const auto [o2, r2, v2] = walks(first + 1, count - 1, 2);
        if (!std::equal(v2.begin(), v2.end(), values.begin() + offsets[1]) ||
            !std::equal(r2.begin(), r2.end(), refs.begin() + 1))
            fail("walks depend on the batch they are drawn in");
    }
}

// ---------------------------------------------------------------------------------------------
// anchored DTW
// ---------------------------------------------------------------------------------------------

// Anchors for an n x m pair from a pick: k of them, spread along the diagonal, in path order;
// with `exclusive` at most one per reference index.
std::vector<index_t> pick_anchors(index_t n, index_t m, int pick, bool exclusive) {
    const int k = pick % 4;
    std::vector<index_t> a;
    for (int j = 0; j < k; ++j) {
        const index_t r = (n - 1) * (j + 1) / (k + 1) + (pick >> 3 & 1), q = (m - 1) * (j + 1) / (k + 1);
        const index_t rr = std::min(r, n - 1);
        if (exclusive && !a.empty() && a[a.size() - 2] == rr) continue;
        a.push_back(rr);
        a.push_back(q);
    }
    return a;
}

// IVLN-CE's window as dtw-python runs it: an anchor (i, j) removes every other cell of reference
// row i; (0, 0) is seeded whatever the window; the plain recurrence over the cells left.
double reference_exclusive(const Costs& k, const std::vector<index_t>& a) {
    const index_t n = k.n, m = k.m;
    std::vector<double> C(static_cast<std::size_t>((n + 1) * (m + 1)), kInf);
    auto at = [&](index_t i, index_t j) -> double& { return C[static_cast<std::size_t>((i + 1) * (m + 1) + (j + 1))]; };
    at(-1, -1) = 0.0;
    for (index_t i = 0; i < n; ++i)
        for (index_t j = 0; j < m; ++j) {
            bool removed = false;
            for (std::size_t t = 0; t < a.size(); t += 2)
                if (a[t] == i && a[t + 1] != j) removed = true;
            if (removed && !(i == 0 && j == 0)) continue;
            at(i, j) = k.at(i, j) + std::min({at(i - 1, j - 1), at(i - 1, j), at(i, j - 1)});
        }
    return at(n - 1, m - 1);
}

// The sum of the stretches' exact DTWs minus the costs of the anchors between them.
double reference_through(const Costs& k, const std::vector<index_t>& a) {
    std::vector<std::pair<index_t, index_t>> corners{{0, 0}};
    for (std::size_t t = 0; t < a.size(); t += 2) corners.emplace_back(a[t], a[t + 1]);
    corners.emplace_back(k.n - 1, k.m - 1);
    double total = 0.0;
    for (std::size_t s = 0; s + 1 < corners.size(); ++s) {
        const auto [r0, q0] = corners[s];
        const auto [r1, q1] = corners[s + 1];
        Costs sub{r1 - r0 + 1, q1 - q0 + 1, {}};
        for (index_t i = r0; i <= r1; ++i)
            for (index_t j = q0; j <= q1; ++j) sub.c.push_back(k.at(i, j));
        total += reference_dtw<double>(sub);
        if (s > 0) total -= k.at(r0, q0);
    }
    return total;
}

void check_anchored(const std::vector<PointPair>& pairs, const std::vector<double>& exact, int dim, int pick) {
    const auto B = static_cast<index_t>(pairs.size());
    std::vector<float> rv, qv;
    std::vector<index_t> ro{0}, qo{0};
    for (const PointPair& pp : pairs) {
        rv.insert(rv.end(), pp.a, pp.a + pp.n * dim);
        qv.insert(qv.end(), pp.q, pp.q + pp.m * dim);
        ro.push_back(ro.back() + pp.n);
        qo.push_back(qo.back() + pp.m);
    }
    const navdtw::PointSet R{rv.data(), ro.data(), B, dim}, Q{qv.data(), qo.data(), B, dim};
    for (const bool exclusive : {false, true}) {
        std::vector<index_t> av, ao{0};
        std::vector<double> want(static_cast<std::size_t>(B));
        for (index_t p = 0; p < B; ++p) {
            const PointPair& pp = pairs[static_cast<std::size_t>(p)];
            const std::vector<index_t> a = pick_anchors(pp.n, pp.m, pick + static_cast<int>(p), exclusive);
            const Costs k = point_costs(pp, dim);
            want[static_cast<std::size_t>(p)] = exclusive ? reference_exclusive(k, a) : reference_through(k, a);
            if (a.empty() && want[static_cast<std::size_t>(p)] != exact[static_cast<std::size_t>(p)])
                fail("anchored reference without anchors != exact, pair " + std::to_string(p));
            av.insert(av.end(), a.begin(), a.end());
            ao.push_back(ao.back() + static_cast<index_t>(a.size() / 2));
        }
        const navdtw::AnchorSet A{av.data(), ao.data()};
        std::vector<double> first, out(static_cast<std::size_t>(B));
        SimdGuard guard;
        for (const int choice : simd_choices()) {
            if (!navdtw::set_simd(choice)) fail("set_simd refused a supported kernel");
            for (const int workers : {1, 2}) {
                navdtw::dtw_anchored_points_batch(R, Q, navdtw::PairIndex{}, B, A, exclusive, -1, out.data(), workers,
                                                  kNoPoll);
                const std::string what = std::string(exclusive ? "exclusive" : "through") + " anchored, kernel " +
                                         std::to_string(choice) + ", workers " + std::to_string(workers);
                if (first.empty()) first = out;
                for (index_t p = 0; p < B; ++p) {
                    const auto u = static_cast<std::size_t>(p);
                    expect_same(out[u], first[u],
                                what + ": the same bits as the first kernel, pair " + std::to_string(p));
                    if (exclusive) {
                        expect_same(out[u], want[u], what + ", pair " + std::to_string(p));
                    } else if (!(out[u] >= exact[u] - 1e-12 * std::fabs(exact[u])) ||
                               !(std::fabs(out[u] - want[u]) <= 1e-12 * std::max(1.0, std::fabs(want[u])) ||
                                 (std::isinf(out[u]) && std::isinf(want[u])))) {
                        fail(what + ", pair " + std::to_string(p) + ": got " + num(out[u]) + ", want " + num(want[u]) +
                             " (exact " + num(exact[u]) + ")");
                    }
                }
            }
        }
    }
}

void check_points(const Case& c) {
    // CSR of all paths
    std::vector<float> values;
    std::vector<index_t> offsets{0};
    for (const auto& p : c.pts) {
        values.insert(values.end(), p.begin(), p.end());
        offsets.push_back(offsets.back() + static_cast<index_t>(p.size()) / c.dim);
    }
    const auto n_paths = static_cast<index_t>(c.pts.size());
    const navdtw::PointSet S{values.data(), offsets.data(), n_paths, c.dim};
    const auto B = static_cast<index_t>(c.ref.size());
    std::vector<PointPair> pairs;
    std::vector<double> exact, exact_f;
    std::vector<index_t> explicit_pairs;
    for (index_t p = 0; p < B; ++p) {
        const int r = c.ref[static_cast<std::size_t>(p)], q = c.qry[static_cast<std::size_t>(p)];
        pairs.push_back({S.path(r), S.length(r), S.path(q), S.length(q)});
        const Costs k = point_costs(pairs.back(), c.dim);
        exact.push_back(reference_dtw<double>(k));
        exact_f.push_back(reference_dtw<float>(k));
        explicit_pairs.push_back(r);
        explicit_pairs.push_back(q);
    }
    navdtw::Workspace ws;
    // the full battery on the first pairs; the batch checks below cover the rest
    for (index_t p = 0; p < std::min<index_t>(B, 2); ++p)
        check_point_pair(pairs[static_cast<std::size_t>(p)], c.dim, static_cast<int>(p), c, ws);
    check_lanes(pairs, exact, exact_f, c.dim);
    check_anchored(pairs, exact, c.dim, c.window_pick);

    // Batches: element-wise over gathered copies, with explicit pairs over the shared set, and
    // all pairs; every method, each kernel forced, workers 1 and 2.
    std::vector<float> rv, qv;
    std::vector<index_t> ro{0}, qo{0};
    for (const PointPair& pp : pairs) {
        rv.insert(rv.end(), pp.a, pp.a + pp.n * c.dim);
        qv.insert(qv.end(), pp.q, pp.q + pp.m * c.dim);
        ro.push_back(ro.back() + pp.n);
        qo.push_back(qo.back() + pp.m);
    }
    const navdtw::PointSet R{rv.data(), ro.data(), B, c.dim}, Q{qv.data(), qo.data(), B, c.dim};
    const index_t w = c.window_pick % 4, rad = c.radius_pick % 4;
    std::vector<double> band(static_cast<std::size_t>(B)), fast(static_cast<std::size_t>(B));
    for (index_t p = 0; p < B; ++p) {
        const PointPair& pp = pairs[static_cast<std::size_t>(p)];
        navdtw::Method bm, fm;
        bm.window = w;
        fm.radius = rad;
        band[static_cast<std::size_t>(p)] = navdtw::dtw_points_pair(pp.a, pp.n, pp.q, pp.m, c.dim, bm, ws);
        fast[static_cast<std::size_t>(p)] = navdtw::dtw_points_pair(pp.a, pp.n, pp.q, pp.m, c.dim, fm, ws);
    }
    SimdGuard guard;
    std::vector<double> out(static_cast<std::size_t>(B));
    for (const int choice : simd_choices()) {
        if (!navdtw::set_simd(choice)) fail("set_simd refused a supported kernel");
        const std::string kn =
            choice == navdtw::kSimdAuto ? "auto" : navdtw::simd_name(static_cast<navdtw::Simd>(choice));
        for (const int workers : worker_counts(choice)) {
            const std::string bn = "batch (" + kn + ", workers=" + std::to_string(workers) + ")";
            struct Run {
                navdtw::Method method;
                const std::vector<double>* want;
                const char* what;
            };
            navdtw::Method single, banded, fastdtw;
            single.single = true;
            banded.window = w;
            fastdtw.radius = rad;
            for (const Run& run : {Run{navdtw::Method{}, &exact, "exact"}, Run{single, &exact_f, "single"},
                                   Run{banded, &band, "band"}, Run{fastdtw, &fast, "FastDTW"}}) {
                // band and FastDTW batches never use the lane kernels: once is enough
                if (choice != navdtw::kSimdAuto && (run.method.window >= 0 || run.method.radius >= 0)) continue;
                std::fill(out.begin(), out.end(), -1.0);
                navdtw::dtw_points_batch(R, Q, navdtw::PairIndex{}, B, run.method, out.data(), workers, kNoPoll);
                for (index_t p = 0; p < B; ++p)
                    expect_same(out[static_cast<std::size_t>(p)], (*run.want)[static_cast<std::size_t>(p)],
                                bn + " " + run.what + " element-wise, pair " + std::to_string(p));
            }
            std::fill(out.begin(), out.end(), -1.0);
            const navdtw::PairIndex P{navdtw::PairMode::kExplicit, explicit_pairs.data(), 0};
            navdtw::dtw_points_batch(S, S, P, B, navdtw::Method{}, out.data(), workers, kNoPoll);
            for (index_t p = 0; p < B; ++p)
                expect_same(out[static_cast<std::size_t>(p)], exact[static_cast<std::size_t>(p)],
                            bn + " pairs=, pair " + std::to_string(p));
        }
    }
    // all pairs of a few paths (|R| x |Q| reference values)
    const index_t A = std::min<index_t>(n_paths, 5);
    const navdtw::PointSet SA{values.data(), offsets.data(), A, c.dim};
    std::vector<double> all(static_cast<std::size_t>(A * A));
    navdtw::dtw_points_batch(SA, SA, navdtw::PairIndex{navdtw::PairMode::kAll, nullptr, A}, A * A, navdtw::Method{},
                             all.data(), 2, kNoPoll);
    for (index_t i = 0; i < A; ++i)
        for (index_t j = 0; j < A; ++j) {
            const Costs k = point_costs({S.path(i), S.length(i), S.path(j), S.length(j)}, c.dim);
            expect_same(all[static_cast<std::size_t>(i * A + j)], reference_dtw<double>(k),
                        "all pairs (" + std::to_string(i) + ", " + std::to_string(j) + ")");
        }

    // A bad pair among the explicit pairs: a reference index past the set, a query index -1, or an
    // empty path (appended to the set); the error names it, for the lane and the pair-by-pair route.
    {
        const index_t pos = c.window_pick % B;
        std::vector<index_t> bad_pairs(explicit_pairs);
        std::vector<index_t> offsets2(offsets);
        offsets2.push_back(offsets.back());  // path n_paths: empty
        const navdtw::PointSet S2{values.data(), offsets2.data(), n_paths + 1, c.dim};
        std::string want = "pair " + std::to_string(pos) + ": ";
        switch (c.radius_pick % 3) {
            case 0:
                bad_pairs[static_cast<std::size_t>(2 * pos)] = n_paths + 1;
                want += "references index " + std::to_string(n_paths + 1) + " is out of range";
                break;
            case 1:
                bad_pairs[static_cast<std::size_t>(2 * pos + 1)] = -1;
                want += "queries index -1 is out of range";
                break;
            default:
                bad_pairs[static_cast<std::size_t>(2 * pos)] = n_paths;
                want += "references[" + std::to_string(n_paths) + "] is empty";
        }
        const navdtw::PairIndex PB{navdtw::PairMode::kExplicit, bad_pairs.data(), 0};
        for (const int choice : {navdtw::kSimdAuto, static_cast<int>(navdtw::Simd::kPortable)}) {
            navdtw::set_simd(choice);
            for (const int workers : {1, 2})
                for (const index_t window : {index_t(-1), index_t(1)}) {
                    navdtw::Method method;
                    method.window = window;
                    expect_error([&] { navdtw::dtw_points_batch(S2, S2, PB, B, method, out.data(), workers, kNoPoll); },
                                 want, "bad pair in a batch (workers=" + std::to_string(workers) + ")");
                }
        }
        navdtw::set_simd(navdtw::kSimdAuto);
        std::vector<double> stats_out(static_cast<std::size_t>(navdtw::kNumStats * B));
        expect_error([&] { navdtw::stats_points_batch(S2, S2, PB, B, 3.0, stats_out.data(), 2, kNoPoll); }, want,
                     "bad pair in a statistics batch");
    }

    std::vector<Costs> ks;
    for (const PointPair& pp : pairs) ks.push_back(point_costs(pp, c.dim));
    check_reward(ks);

    // statistics of the pairs, from their definitions
    std::vector<double> st(static_cast<std::size_t>(navdtw::kNumStats * B));
    const double threshold = 3.0;
    navdtw::stats_points_batch(R, Q, navdtw::PairIndex{}, B, threshold, st.data(), 2, kNoPoll);
    for (index_t p = 0; p < B; ++p) {
        const PointPair& pp = pairs[static_cast<std::size_t>(p)];
        const int d = c.dim;
        auto dist = [d](const float* x, const float* y) { return static_cast<double>(point_cost(x, y, d)); };
        const float* goal = pp.a + (pp.n - 1) * d;
        double one = kInf, plq = 0.0, plr = 0.0, ad = 0.0, md = 0.0, pc = 0.0;
        for (index_t j = 0; j < pp.m; ++j) one = std::min(one, dist(goal, pp.q + j * d));
        for (index_t j = 0; j + 1 < pp.m; ++j) plq += dist(pp.q + j * d, pp.q + (j + 1) * d);
        for (index_t i = 0; i + 1 < pp.n; ++i) plr += dist(pp.a + i * d, pp.a + (i + 1) * d);
        for (index_t j = 0; j < pp.m; ++j) {
            double best = kInf;
            for (index_t i = 0; i < pp.n; ++i) best = std::min(best, dist(pp.a + i * d, pp.q + j * d));
            ad += best;
            md = std::max(md, best);
        }
        for (index_t i = 0; i < pp.n; ++i) {
            double best = kInf;
            for (index_t j = 0; j < pp.m; ++j) best = std::min(best, dist(pp.a + i * d, pp.q + j * d));
            pc += best == 0.0 ? 1.0 : std::exp(-best / threshold);
        }
        const double want[navdtw::kNumStats] = {dist(goal, pp.q + (pp.m - 1) * d),
                                                one,
                                                plq,
                                                plr,
                                                dist(goal, pp.q),
                                                dist(pp.a, goal),
                                                ad / static_cast<double>(pp.m),
                                                md,
                                                pc / static_cast<double>(pp.n),
                                                0.0};
        for (int s = 0; s < navdtw::kNumStats - 1; ++s)
            expect_same(st[static_cast<std::size_t>(s * B + p)], want[s],
                        std::string("stats ") + navdtw::kStatNames[s].name + ", pair " + std::to_string(p));
        if (!std::isnan(st[static_cast<std::size_t>((navdtw::kNumStats - 1) * B + p)]))
            fail("stats: the edit distance of coordinate paths is not NaN");
    }
}

// ---- nodes ----

template <class I>
Costs node_costs(const float* M, index_t V, const I* a, index_t n, const I* q, index_t m) {
    Costs k{n, m, std::vector<double>(static_cast<std::size_t>(n * m))};
    for (index_t i = 0; i < n; ++i)
        for (index_t j = 0; j < m; ++j)
            k.c[static_cast<std::size_t>(i * m + j)] = static_cast<double>(M[a[i] * V + q[j]]);
    return k;
}

template <class I>
void check_node_pair(const float* M, const float* MT, index_t V, const I* a, index_t n, const I* q, index_t m, int p,
                     const Case& c, navdtw::Workspace& ws) {
    const std::string name = "nodes " + pair_name(p, n, m);
    const Costs k = node_costs(M, V, a, n, q, m);
    const double exact = reference_dtw<double>(k), exact_f = reference_dtw<float>(k);
    const navdtw::MatrixCost<I> cost{M, V, a, q}, cost_t{MT, V, q, a};
    expect_same(navdtw::dtw_pair<double>(cost, n, m, -1, ws), exact, name + ": exact");
    expect_same(navdtw::dtw_pair<float>(cost, n, m, -1, ws), exact_f, name + ": exact single");
    expect_same(navdtw::dtw_pair<double>(cost_t, m, n, -1, ws), exact, name + ": transposed (M^T)");
    if (!close_single(exact_f, exact, n, m)) fail(name + ": single " + num(exact_f) + " far from " + num(exact));
    if (navdtw::avx2_supported() && std::min(n, m) <= navdtw::kShortRow) {
        expect_same(navdtw::dtw_node_short_avx2(M, V, a, n, q, m, false), exact, name + ": AVX2 short-row");
        expect_same(navdtw::dtw_node_short_avx2(M, V, a, n, q, m, true), exact_f, name + ": AVX2 short-row single");
    }
    // the rolling-row kernel on short pairs too (dtw_pair sends those to the short-row kernel)
    {
        const bool rows_ref = n >= m;
        const index_t rows = rows_ref ? n : m, cols = rows_ref ? m : n;
        double* buf = ws.rolling_row<double>(cols);
        const double got = rows_ref ? navdtw::dtw_rolling(cost, rows, cols, navdtw::FullWindow{cols}, buf)
                                    : navdtw::dtw_rolling(navdtw::Transposed<navdtw::MatrixCost<I>>{cost}, rows, cols,
                                                          navdtw::FullWindow{cols}, buf);
        expect_same(got, exact, name + ": rolling row");
    }
    for (const index_t w : windows(n, m, c.window_pick)) {
        const std::string bn = name + ": band w=" + std::to_string(w);
        const double want = reference_dtw<double>(k, w);
        const double got = navdtw::dtw_pair<double>(cost, n, m, w, ws);
        expect_same(got, want, bn);
        expect_same(navdtw::dtw_pair<float>(cost, n, m, w, ws), reference_dtw<float>(k, w), bn + " single");
        expect_same(navdtw::dtw_pair<double>(cost_t, m, n, w, ws), want, bn + " transposed");
        if (!(got >= exact)) fail(bn + ": " + num(got) + " < exact " + num(exact));
        if (w >= std::max(n, m) - 1) expect_same(got, exact, bn + " (as wide as the table)");
    }
    std::vector<double> pref(static_cast<std::size_t>(m));
    navdtw::dtw_prefix(cost, n, m, pref.data(), ws);
    const std::vector<double> table = reference_table<double>(k, -1);
    for (index_t j = 0; j < m; ++j)
        expect_same(pref[static_cast<std::size_t>(j)], table[static_cast<std::size_t>((n - 1) * m + j)],
                    name + ": prefix[" + std::to_string(j) + "]");
    std::vector<std::pair<index_t, index_t>> path;
    const double v = navdtw::warping_path(cost, n, m, ws, path);
    expect_same(v, exact, name + ": warping path value");
    check_path(path, k, exact, name);
}

template <class I>
void check_nodes_t(const Case& c) {
    const index_t V = c.V;
    std::vector<std::vector<float>> mats_t;
    for (const auto& M : c.mats) {
        std::vector<float> T(M.size());
        for (index_t i = 0; i < V; ++i)
            for (index_t j = 0; j < V; ++j)
                T[static_cast<std::size_t>(j * V + i)] = M[static_cast<std::size_t>(i * V + j)];
        mats_t.push_back(std::move(T));
    }
    std::vector<I> values;
    std::vector<index_t> offsets{0};
    for (const auto& p : c.ids) {
        for (auto x : p) values.push_back(static_cast<I>(x));
        offsets.push_back(offsets.back() + static_cast<index_t>(p.size()));
    }
    const navdtw::NodeSet<I> S{values.data(), offsets.data(), static_cast<index_t>(c.ids.size())};
    const auto B = static_cast<index_t>(c.ref.size());
    std::vector<double> exact, exact_f, band;
    const index_t w = c.window_pick % 4;
    std::vector<index_t> explicit_pairs, env;
    navdtw::Workspace ws;
    for (index_t p = 0; p < B; ++p) {
        const int r = c.ref[static_cast<std::size_t>(p)], q = c.qry[static_cast<std::size_t>(p)];
        const auto e = static_cast<std::size_t>(c.env[static_cast<std::size_t>(p)]);
        const Costs k = node_costs(c.mats[e].data(), V, S.path(r), S.length(r), S.path(q), S.length(q));
        exact.push_back(reference_dtw<double>(k));
        exact_f.push_back(reference_dtw<float>(k));
        band.push_back(reference_dtw<double>(k, w));
        if (p < 2)
            check_node_pair(c.mats[e].data(), mats_t[e].data(), V, S.path(r), S.length(r), S.path(q), S.length(q),
                            static_cast<int>(p), c, ws);
        explicit_pairs.push_back(r);
        explicit_pairs.push_back(q);
        env.push_back(static_cast<index_t>(e));
    }
    std::vector<navdtw::DistanceMatrix> mats;
    for (const auto& M : c.mats) mats.push_back({M.data(), V});
    // more matrices than a block groups (over 1024 / 8): pairs run one by one
    std::vector<navdtw::DistanceMatrix> many(130, mats[0]);
    for (std::size_t e = 0; e < mats.size(); ++e) many[e] = mats[e];
    const navdtw::PairIndex P{navdtw::PairMode::kExplicit, explicit_pairs.data(), 0};
    SimdGuard guard;
    std::vector<double> out(static_cast<std::size_t>(B));
    // node batches use no lane kernel; the choice only turns the AVX2 extras (short-row copy, id copy)
    // on (auto, where the CPU has AVX2) or off (portable)
    for (const int choice : {navdtw::kSimdAuto, static_cast<int>(navdtw::Simd::kPortable)}) {
        if (!navdtw::set_simd(choice)) fail("set_simd refused a supported kernel");
        const std::string kn =
            choice == navdtw::kSimdAuto ? "auto" : navdtw::simd_name(static_cast<navdtw::Simd>(choice));
        for (const int workers : worker_counts(choice)) {
            for (const auto* ms : {&mats, &many}) {
                const std::string bn = "node batch (" + kn + ", workers=" + std::to_string(workers) + ", " +
                                       std::to_string(ms->size()) + " matrices)";
                navdtw::Method single, banded;
                single.single = true;
                banded.window = w;
                const std::pair<navdtw::Method, const std::vector<double>*> runs[] = {
                    {navdtw::Method{}, &exact}, {single, &exact_f}, {banded, &band}};
                for (const auto& [method, want] : runs) {
                    std::fill(out.begin(), out.end(), -1.0);
                    navdtw::dtw_nodes_batch<I>(S, S, *ms, env.data(), P, B, method, out.data(), workers, kNoPoll);
                    for (index_t p = 0; p < B; ++p)
                        expect_same(out[static_cast<std::size_t>(p)], (*want)[static_cast<std::size_t>(p)],
                                    bn +
                                        (method.single        ? " single"
                                         : method.window >= 0 ? " band"
                                                              : " exact") +
                                        ", pair " + std::to_string(p));
                }
            }
        }
        // A bad node id in one path: the error names the lowest pair that uses it.
        if (!c.ids.empty()) {
            const int bad_path = c.window_pick % static_cast<int>(c.ids.size());
            const index_t at =
                offsets[static_cast<std::size_t>(bad_path)] + c.radius_pick % std::max<index_t>(1, S.length(bad_path));
            std::vector<I> broken(values);
            broken[static_cast<std::size_t>(at)] = c.radius_pick & 1 ? static_cast<I>(-1) : static_cast<I>(V);
            const navdtw::NodeSet<I> SB{broken.data(), offsets.data(), S.size};
            index_t first_bad = -1;
            for (index_t p = 0; p < B && first_bad < 0; ++p)
                if (c.ref[static_cast<std::size_t>(p)] == bad_path || c.qry[static_cast<std::size_t>(p)] == bad_path)
                    first_bad = p;
            for (const int workers : worker_counts(choice)) {
                std::string msg;
                try {
                    navdtw::dtw_nodes_batch<I>(SB, SB, mats, env.data(), P, B, navdtw::Method{}, out.data(), workers,
                                               kNoPoll);
                } catch (const std::invalid_argument& e) {
                    msg = e.what();
                }
                const std::string want = "pair " + std::to_string(first_bad) + ": ";
                if (first_bad < 0 ? !msg.empty() : msg.rfind(want, 0) != 0)
                    fail("bad node id (" + kn + ", workers=" + std::to_string(workers) + "): message '" + msg +
                         "', want it to start with '" + (first_bad < 0 ? std::string("no error") : want) + "'");
            }
        }
    }
    // an environment index out of range at one pair
    {
        const index_t pos = c.window_pick % B;
        std::vector<index_t> env2(env);
        env2[static_cast<std::size_t>(pos)] = c.radius_pick & 1 ? -1 : static_cast<index_t>(mats.size());
        const std::string want =
            "env[" + std::to_string(pos) + "] = " + std::to_string(env2[static_cast<std::size_t>(pos)]);
        for (const int workers : {1, 2}) {
            expect_error(
                [&] {
                    navdtw::dtw_nodes_batch<I>(S, S, mats, env2.data(), P, B, navdtw::Method{}, out.data(), workers,
                                               kNoPoll);
                },
                want, "bad env in a batch (workers=" + std::to_string(workers) + ")");
            std::vector<double> stats_out(static_cast<std::size_t>(navdtw::kNumStats * B));
            expect_error(
                [&] {
                    navdtw::stats_nodes_batch<I>(S, S, mats, env2.data(), P, B, 3.0, stats_out.data(), workers,
                                                 kNoPoll);
                },
                want, "bad env in a statistics batch (workers=" + std::to_string(workers) + ")");
        }
    }
    {
        std::vector<Costs> ks;
        for (index_t p = 0; p < B; ++p) {
            const int r = c.ref[static_cast<std::size_t>(p)], q = c.qry[static_cast<std::size_t>(p)];
            ks.push_back(node_costs(c.mats[static_cast<std::size_t>(env[static_cast<std::size_t>(p)])].data(), V,
                                    S.path(r), S.length(r), S.path(q), S.length(q)));
        }
        check_reward(ks);
    }
    check_walks(c);
    // the AVX2 id copy against the plain check
    if constexpr (std::is_same_v<I, std::int32_t>) {
        if (navdtw::avx2_supported())
            for (index_t p = 0; p < B; ++p) {
                const int r = c.ref[static_cast<std::size_t>(p)], q = c.qry[static_cast<std::size_t>(p)];
                const index_t n = S.length(r), m = S.length(q);
                for (const index_t limit : {V, V - 1}) {
                    if (limit < 1) continue;
                    std::vector<std::int32_t> got(static_cast<std::size_t>(n + m + navdtw::kIdCopySlack));
                    const bool ok = navdtw::copy_node_ids_avx2(S.path(r), n, S.path(q), m, limit, got.data());
                    const bool want =
                        navdtw::ids_in_range(S.path(r), n, limit) && navdtw::ids_in_range(S.path(q), m, limit);
                    if (ok != want) fail("copy_node_ids_avx2's check, pair " + std::to_string(p));
                    if (!std::equal(S.path(r), S.path(r) + n, got.begin()) ||
                        !std::equal(S.path(q), S.path(q) + m, got.begin() + n))
                        fail("copy_node_ids_avx2's copy, pair " + std::to_string(p));
                }
            }
    }
    // statistics of the pairs, from their definitions
    std::vector<double> st(static_cast<std::size_t>(navdtw::kNumStats * B));
    navdtw::stats_nodes_batch<I>(S, S, mats, env.data(), P, B, 3.0, st.data(), 2, kNoPoll);
    for (index_t p = 0; p < B; ++p) {
        const I* a = S.path(c.ref[static_cast<std::size_t>(p)]);
        const I* q = S.path(c.qry[static_cast<std::size_t>(p)]);
        const index_t n = S.length(c.ref[static_cast<std::size_t>(p)]),
                      m = S.length(c.qry[static_cast<std::size_t>(p)]);
        const float* M = c.mats[static_cast<std::size_t>(env[static_cast<std::size_t>(p)])].data();
        auto d = [&](I x, I y) { return static_cast<double>(M[x * V + y]); };
        expect_same(st[static_cast<std::size_t>(navdtw::kNE * B + p)], d(a[n - 1], q[m - 1]), "node stats ne");
        double md = 0.0;
        for (index_t j = 0; j < m; ++j) {
            double best = kInf;
            for (index_t i = 0; i < n; ++i) best = std::min(best, d(a[i], q[j]));
            md = std::max(md, best);
        }
        expect_same(st[static_cast<std::size_t>(navdtw::kMD * B + p)], md, "node stats md, pair " + std::to_string(p));
        // edge edit distance: Levenshtein over the edge sequences, full table
        const index_t er = n - 1, eq = m - 1;
        std::vector<double> E(static_cast<std::size_t>((er + 1) * (eq + 1)));
        for (index_t i = 0; i <= er; ++i)
            for (index_t j = 0; j <= eq; ++j) {
                double& e = E[static_cast<std::size_t>(i * (eq + 1) + j)];
                if (i == 0 || j == 0) {
                    e = static_cast<double>(i + j);
                    continue;
                }
                const bool same = a[i - 1] == q[j - 1] && a[i] == q[j];
                e = std::min({E[static_cast<std::size_t>((i - 1) * (eq + 1) + j - 1)] + (same ? 0.0 : 1.0),
                              E[static_cast<std::size_t>((i - 1) * (eq + 1) + j)] + 1.0,
                              E[static_cast<std::size_t>(i * (eq + 1) + j - 1)] + 1.0});
            }
        expect_same(st[static_cast<std::size_t>(navdtw::kEdit * B + p)], E.back(),
                    "node stats edit distance, pair " + std::to_string(p));
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const Case c = decode(data, size);
    g_case = &c;
    if (!c.nodes)
        check_points(c);
    else if (c.int32)
        check_nodes_t<std::int32_t>(c);
    else
        check_nodes_t<std::int64_t>(c);
    g_case = nullptr;
    return 0;
}
