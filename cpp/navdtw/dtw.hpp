// navdtw: the dynamic-time-warping kernels.
//
// Everything here is plain C++17 with no Python inside. A kernel sees one pair at a time through a
// cost functor, cost(t, s) = d(row point t, column point s), and walks a monotone window of the
// (rows x cols) DP table with a single rolling row, so memory is O(cols) per pair.
//
// Recurrence (docs/metrics.md): C[-1][-1] = 0, C[t][-1] = C[-1][s] = inf,
//   C[t][s] = d(t, s) + min(C[t-1][s], C[t][s-1], C[t-1][s-1]).
// Sums are accumulated in double (or in float, opt-in: precision="single"); infinite costs
// propagate (inf + x = inf, never NaN).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "navdtw/parallel.hpp"
#include "navdtw/portability.hpp"

namespace navdtw {

using index_t = std::int64_t;
constexpr double kInf = std::numeric_limits<double>::infinity();

// ----------------------------------------------------------------------------------------------
// Cost providers
// ----------------------------------------------------------------------------------------------

// Euclidean distance between rows of two point arrays (row-major [n, dim]); DIM > 0 fixes the
// dimension at compile time (the common 2-D and 3-D cases), DIM == 0 reads it at run time.
// Squared differences are summed left to right. float32 points are measured in float32 (one
// correctly rounded sqrt), exactly as the SIMD kernels do it, so every kernel variant returns the
// same bits; double series (FastDTW's coarse levels, as the fastdtw package) in double.
template <class T, int DIM>
struct EuclideanCost {
    const T* a;
    const T* b;
    int dim;

    int d() const { return DIM > 0 ? DIM : dim; }
    double operator()(index_t i, index_t j) const {
        const int n = d();
        const T* p = a + i * n;
        const T* q = b + j * n;
        T diff = p[0] - q[0];
        T s = diff * diff;
        for (int k = 1; k < n; ++k) {
            diff = p[k] - q[k];
            s += diff * diff;
        }
        return static_cast<double>(std::sqrt(s));
    }
};

// Lookup in a float32 [V, V] distance matrix, row = reference node, column = query node.
template <class I>
struct MatrixCost {
    const float* m;
    index_t stride;  // V
    const I* a;
    const I* b;
    double operator()(index_t i, index_t j) const {
        return static_cast<double>(m[static_cast<index_t>(a[i]) * stride + static_cast<index_t>(b[j])]);
    }
};

// Presents cost(j, i) as cost(i, j): lets one kernel put either sequence on the rows.
template <class Cost>
struct Transposed {
    const Cost& c;
    double operator()(index_t i, index_t j) const { return c(j, i); }
};

// ----------------------------------------------------------------------------------------------
// Windows: for each row t, the allowed columns [lo(t), hi(t)]. Every window used here is
// monotone (lo and hi non-decreasing in t) and connected, which the rolling-row kernel relies on.
// ----------------------------------------------------------------------------------------------

struct FullWindow {
    index_t cols;
    index_t lo(index_t) const { return 0; }
    index_t hi(index_t) const { return cols - 1; }
};

// Sakoe-Chiba band scaled for unequal lengths. Rows must be the longer sequence (rows >= cols).
// The diagonal runs from (0, 0) to (rows-1, cols-1); at row t it sits at column
// c(t) = t (cols-1) / (rows-1), and the band keeps columns floor(c(t)) - w .. ceil(c(t)) + w.
// Because c(t+1) - c(t) <= 1, the band is connected for every w >= 0 and always holds the end cell.
struct BandWindow {
    index_t rows, cols, w;
    index_t lo(index_t t) const {
        if (rows <= 1) return 0;
        const index_t f = (t * (cols - 1)) / (rows - 1);
        return std::max<index_t>(0, f - w);
    }
    index_t hi(index_t t) const {
        if (rows <= 1) return cols - 1;
        const index_t c = (t * (cols - 1) + rows - 2) / (rows - 1);
        return std::min<index_t>(cols - 1, c + w);
    }
};

// Explicit per-row ranges (FastDTW's projected window).
struct RangeWindow {
    const index_t* los;
    const index_t* his;
    index_t lo(index_t t) const { return los[t]; }
    index_t hi(index_t t) const { return his[t]; }
};

// ----------------------------------------------------------------------------------------------
// The rolling-row kernel. `buf` holds at least `cols` sums of type T. `last_col(t, v)` is called
// with C[t][cols-1] after each row (used for prefix scores); pass a no-op otherwise.
// ----------------------------------------------------------------------------------------------

struct NoSink {
    void operator()(index_t, double) const {}
};

// T is the type of the sums: double, or float for precision="single" (the costs are float32
// values either way, so converting them to T is exact).
template <class Cost, class Window, class T, class Sink = NoSink>
double dtw_rolling(const Cost& cost, index_t rows, index_t cols, const Window& win, T* buf, Sink&& last_col = Sink{}) {
    const T inf = std::numeric_limits<T>::infinity();
    std::fill(buf, buf + cols, inf);
    index_t prev_lo = 0;
    for (index_t t = 0; t < rows; ++t) {
        if ((t & 255) == 255) check_cancel();  // a huge pair stays interruptible
        const index_t lo = win.lo(t), hi = win.hi(t);
        // C[t-1][lo-1]: a real value only if that cell was inside the previous row's range;
        // cells left of it hold stale values from older rows.
        T diag = (t == 0) ? (lo == 0 ? T(0) : inf) : (lo - 1 >= prev_lo ? buf[lo - 1] : inf);
        T left = inf;
        for (index_t s = lo; s <= hi; ++s) {
            const T up = buf[s];  // columns right of the previous range were never written: inf
            const T best = std::min(std::min(diag, up), left);
            const T v = static_cast<T>(cost(t, s)) + best;
            buf[s] = v;
            diag = up;
            left = v;
        }
        // Once a row's range starts past lo, nothing reads below it again except through `diag`.
        prev_lo = lo;
        if (hi == cols - 1)
            last_col(t, buf[cols - 1]);
        else
            last_col(t, kInf);
    }
    return buf[cols - 1];
}

// ----------------------------------------------------------------------------------------------
// Full DP with step directions, for warping paths and FastDTW's coarse levels.
// Directions: 0 = from (t-1, s), 1 = from (t, s-1), 2 = from (t-1, s-1).
// Tie rules: Ties::kDiagFirst prefers the diagonal, then (t-1, s), then (t, s-1);
// Ties::kFastdtw reproduces the `fastdtw` package: (t-1, s), then (t, s-1), then diagonal.
// ----------------------------------------------------------------------------------------------

enum class Ties { kDiagFirst, kFastdtw };

struct Workspace {
    std::vector<double> row;         // rolling row / previous row
    std::vector<double> row2;        // current row (path kernel)
    std::vector<std::uint8_t> dirs;  // step directions of the window cells
    std::vector<index_t> start;      // offset of each row in `dirs`
    std::vector<index_t> lo, hi;     // window ranges
    std::vector<float> row_single;   // rolling row of precision="single"
    // A rolling row of at least n sums of type T: `row` for double, `row_single` for float.
    template <class T>
    T* rolling_row(index_t n) {
        std::vector<T>* r;
        if constexpr (std::is_same_v<T, float>)
            r = &row_single;
        else
            r = &row;
        if (static_cast<index_t>(r->size()) < n) r->resize(static_cast<std::size_t>(n));
        return r->data();
    }
};

template <class Cost, class Window>
double dtw_with_path(const Cost& cost, index_t rows, index_t cols, const Window& win, Ties ties, Workspace& ws,
                     std::vector<std::pair<index_t, index_t>>& path) {
    ws.start.resize(static_cast<std::size_t>(rows) + 1);
    index_t total = 0;
    for (index_t t = 0; t < rows; ++t) {
        ws.start[static_cast<std::size_t>(t)] = total;
        total += win.hi(t) - win.lo(t) + 1;
    }
    ws.start[static_cast<std::size_t>(rows)] = total;
    ws.dirs.resize(static_cast<std::size_t>(total));
    ws.row.assign(static_cast<std::size_t>(cols), kInf);
    ws.row2.assign(static_cast<std::size_t>(cols), kInf);
    double* prev = ws.row.data();
    double* cur = ws.row2.data();
    index_t plo = 0, phi = -1;
    for (index_t t = 0; t < rows; ++t) {
        if ((t & 255) == 255) check_cancel();
        const index_t lo = win.lo(t), hi = win.hi(t);
        std::uint8_t* dir = ws.dirs.data() + ws.start[static_cast<std::size_t>(t)] - lo;
        double left = kInf;
        for (index_t s = lo; s <= hi; ++s) {
            const double up = (t > 0 && s >= plo && s <= phi) ? prev[s] : kInf;
            double diag;
            if (t == 0 && s == 0)
                diag = 0.0;
            else
                diag = (t > 0 && s - 1 >= plo && s - 1 <= phi) ? prev[s - 1] : kInf;
            double best;
            std::uint8_t d;
            if (ties == Ties::kFastdtw) {
                best = up;
                d = 0;
                if (left < best) {
                    best = left;
                    d = 1;
                }
                if (diag < best) {
                    best = diag;
                    d = 2;
                }
            } else {
                best = diag;
                d = 2;
                if (up < best) {
                    best = up;
                    d = 0;
                }
                if (left < best) {
                    best = left;
                    d = 1;
                }
            }
            const double v = cost(t, s) + best;
            cur[s] = v;
            dir[s] = d;
            left = v;
        }
        std::swap(prev, cur);
        plo = lo;
        phi = hi;
    }
    const double value = prev[cols - 1];
    // Walk back from the end cell to (0, 0).
    path.clear();
    index_t t = rows - 1, s = cols - 1;
    while (true) {
        path.emplace_back(t, s);
        if (t == 0 && s == 0) break;
        if (s < win.lo(t) || s > win.hi(t)) throw std::logic_error("navdtw: warping path left its window");
        const std::uint8_t d = ws.dirs[static_cast<std::size_t>(ws.start[static_cast<std::size_t>(t)] + s - win.lo(t))];
        if (t == 0) {
            --s;
            continue;
        }  // only (0, s-1) is finite on row 0
        if (s == 0 && d != 0) {
            --t;
            continue;
        }
        if (d == 0)
            --t;
        else if (d == 1)
            --s;
        else {
            --t;
            --s;
        }
    }
    std::reverse(path.begin(), path.end());
    return value;
}

// ----------------------------------------------------------------------------------------------
// FastDTW (Salvador & Chan 2007) with the coarsening and window rules of the `fastdtw` package:
// below radius + 2 points solve exactly; otherwise halve both series by averaging neighbour
// pairs (an odd last point is dropped), recurse, grow the coarse path by `radius` cells in every
// direction, project each coarse cell onto its 2x2 fine block, and solve inside that window.
// The row series `x` is the package's first argument (VLN-CE passes the agent path there).
// One deviation, only for radius 0 where the package can fail: the last row is extended so the
// end cell is always reachable. Result >= exact DTW.
// ----------------------------------------------------------------------------------------------

inline void reduce_by_half(const double* x, index_t n, int dim, std::vector<double>& out) {
    const index_t h = n / 2;
    out.resize(static_cast<std::size_t>(h * dim));
    for (index_t i = 0; i < h; ++i)
        for (int k = 0; k < dim; ++k)
            out[static_cast<std::size_t>(i * dim + k)] = (x[(2 * i) * dim + k] + x[(2 * i + 1) * dim + k]) / 2.0;
}

// Projects a coarse path onto the fine window ranges lo[0..nx), hi[0..nx).
inline void expand_window(const std::vector<std::pair<index_t, index_t>>& path, index_t cnx, index_t nx, index_t ny,
                          index_t radius, std::vector<index_t>& lo, std::vector<index_t>& hi) {
    // Per coarse row: smallest and largest path column (the path is monotone and connected).
    std::vector<index_t> pmin(static_cast<std::size_t>(cnx), std::numeric_limits<index_t>::max());
    std::vector<index_t> pmax(static_cast<std::size_t>(cnx), std::numeric_limits<index_t>::min());
    for (const auto& c : path) {
        auto i = static_cast<std::size_t>(c.first);
        pmin[i] = std::min(pmin[i], c.second);
        pmax[i] = std::max(pmax[i], c.second);
    }
    lo.assign(static_cast<std::size_t>(nx), 0);
    hi.assign(static_cast<std::size_t>(nx), -1);
    for (index_t i = 0; i < nx; ++i) {
        const index_t k = i / 2;  // coarse row of fine row i
        const index_t a = std::max<index_t>(0, k - radius), b = std::min<index_t>(cnx - 1, k + radius);
        if (a > b) continue;  // no coarse path row within reach: empty row
        // pmin is non-decreasing and pmax too, so the extremes sit at the ends of [a, b].
        const index_t clo = pmin[static_cast<std::size_t>(a)] - radius;
        const index_t chi = pmax[static_cast<std::size_t>(b)] + radius;
        lo[static_cast<std::size_t>(i)] = std::max<index_t>(0, 2 * clo);
        hi[static_cast<std::size_t>(i)] = std::min<index_t>(ny - 1, 2 * chi + 1);
    }
    // Radius 0 with an odd length leaves the last row (or column) out; reconnect the end cell.
    const auto last = static_cast<std::size_t>(nx - 1);
    if (hi[last] < lo[last]) lo[last] = nx > 1 ? hi[last - 1] : 0;
    hi[last] = ny - 1;
}

// FastDTW on double series x [nx, dim] (rows) and y [ny, dim] (columns). When `path` is non-null
// the alignment is returned too (needed by the recursion); the top level asks for the value only.
inline double fastdtw_level(const double* x, index_t nx, const double* y, index_t ny, int dim, index_t radius,
                            Workspace& ws, std::vector<std::pair<index_t, index_t>>* path) {
    const EuclideanCost<double, 0> cost{x, y, dim};
    if (nx < radius + 2 || ny < radius + 2) {
        if (path) return dtw_with_path(cost, nx, ny, FullWindow{ny}, Ties::kFastdtw, ws, *path);
        return dtw_rolling(cost, nx, ny, FullWindow{ny}, ws.rolling_row<double>(ny));
    }
    std::vector<double> xs, ys;
    reduce_by_half(x, nx, dim, xs);
    reduce_by_half(y, ny, dim, ys);
    std::vector<std::pair<index_t, index_t>> coarse;
    fastdtw_level(xs.data(), nx / 2, ys.data(), ny / 2, dim, radius, ws, &coarse);
    std::vector<index_t> lo, hi;
    expand_window(coarse, nx / 2, nx, ny, radius, lo, hi);
    const RangeWindow win{lo.data(), hi.data()};
    if (path) return dtw_with_path(cost, nx, ny, win, Ties::kFastdtw, ws, *path);
    return dtw_rolling(cost, nx, ny, win, ws.rolling_row<double>(ny));
}

// ----------------------------------------------------------------------------------------------
// One pair, by method. `reference` indexes the cost's first argument, `query` the second.
// ----------------------------------------------------------------------------------------------

struct Method {
    index_t window = -1;  // Sakoe-Chiba half-width in points; -1 = none
    index_t radius = -1;  // FastDTW radius; -1 = none (exact)
    bool single = false;  // sums in float32 (precision="single"): exact and banded DTW only
};

// dtw_rolling's full-window recurrence for a row of exactly C columns: the row lives in registers
// and each row is straight-line code, so consecutive rows overlap in the CPU instead of waiting on
// memory. Same operations in the same order, hence the same bits. Serves short paths (node paths
// of R2R episodes are 4-7 nodes long).
template <int C, class T, class Cost>
double dtw_short_row(const Cost& cost, index_t rows) {
    const T inf = std::numeric_limits<T>::infinity();
    T buf[C];
    for (int s = 0; s < C; ++s) buf[s] = inf;
    for (index_t t = 0; t < rows; ++t) {
        if ((t & 255) == 255) check_cancel();
        T diag = t == 0 ? T(0) : inf, left = inf;
        for (int s = 0; s < C; ++s) {
            const T up = buf[s];
            const T v = static_cast<T>(cost(t, s)) + std::min(std::min(diag, up), left);
            buf[s] = v;
            diag = up;
            left = v;
        }
    }
    return buf[C - 1];
}

// dtw_short_row for a distance matrix, cost(t, s) = m[row_at(t) + col_at[s]]: each column's offset
// into the matrix is computed once, not once per row; row 0 and column 0 run without the minimums
// that the infinite cells around the table decide (min(min(inf, up), inf) is up, bit for bit);
// and the rows run in runs of 256 between cancellation checks, so no call inside a run makes the
// compiler reload them. The same values as dtw_short_row, hence the same bits. Transposed: the
// rows are the query.
template <int C, class T, bool kTransposed, class I>
NAVDTW_ALWAYS_INLINE double dtw_short_row_matrix(const MatrixCost<I>& cost, index_t rows) {
    const index_t stride = cost.stride;
    const I* row_ids = kTransposed ? cost.b : cost.a;
    const index_t row_scale = kTransposed ? 1 : stride;
    index_t col_at[C];
    for (int s = 0; s < C; ++s)
        col_at[s] = kTransposed ? static_cast<index_t>(cost.a[s]) * stride : static_cast<index_t>(cost.b[s]);
    T buf[C];
    {
        // row 0: C[0][s] = cost + C[0][s - 1], starting from C[-1][-1] = 0
        const float* row = cost.m + static_cast<index_t>(row_ids[0]) * row_scale;
        T left = T(0);
        for (int s = 0; s < C; ++s) {
            left = static_cast<T>(row[col_at[s]]) + left;
            buf[s] = left;
        }
    }
    for (index_t t0 = 1; t0 < rows; t0 += 256) {
        if (t0 > 1) check_cancel();  // a huge pair stays interruptible
        const index_t t1 = std::min(rows, t0 + 256);
        for (index_t t = t0; t < t1; ++t) {
            const float* row = cost.m + static_cast<index_t>(row_ids[t]) * row_scale;
            T diag = buf[0];
            T left = static_cast<T>(row[col_at[0]]) + buf[0];  // column 0: C[t][0] = cost + C[t-1][0]
            buf[0] = left;
            for (int s = 1; s < C; ++s) {
                const T up = buf[s];
                const T v = static_cast<T>(row[col_at[s]]) + std::min(std::min(diag, up), left);
                buf[s] = v;
                diag = up;
                left = v;
            }
        }
    }
    return buf[C - 1];
}

template <class T, class Cost>
double dtw_exact_short(const Cost& cost, index_t rows, index_t cols) {
    switch (cols) {
        case 1:
            return dtw_short_row<1, T>(cost, rows);
        case 2:
            return dtw_short_row<2, T>(cost, rows);
        case 3:
            return dtw_short_row<3, T>(cost, rows);
        case 4:
            return dtw_short_row<4, T>(cost, rows);
        case 5:
            return dtw_short_row<5, T>(cost, rows);
        case 6:
            return dtw_short_row<6, T>(cost, rows);
        case 7:
            return dtw_short_row<7, T>(cost, rows);
        default:
            return dtw_short_row<8, T>(cost, rows);
    }
}
constexpr index_t kShortRow = 8;

// Exact DTW of a node pair whose shorter side has at most kShortRow ids, the longer side on the
// rows (as dtw_pair orients it). Always inlined, so that kernels_avx2.cpp can compile a copy with
// VEX encoding (same operations, fewer register moves) for CPUs that have it.
template <class T, bool kTransposed, class I>
NAVDTW_ALWAYS_INLINE double dtw_matrix_short_cols(const MatrixCost<I>& cost, index_t rows, index_t cols) {
    switch (cols) {
        case 1:
            return dtw_short_row_matrix<1, T, kTransposed>(cost, rows);
        case 2:
            return dtw_short_row_matrix<2, T, kTransposed>(cost, rows);
        case 3:
            return dtw_short_row_matrix<3, T, kTransposed>(cost, rows);
        case 4:
            return dtw_short_row_matrix<4, T, kTransposed>(cost, rows);
        case 5:
            return dtw_short_row_matrix<5, T, kTransposed>(cost, rows);
        case 6:
            return dtw_short_row_matrix<6, T, kTransposed>(cost, rows);
        case 7:
            return dtw_short_row_matrix<7, T, kTransposed>(cost, rows);
        default:
            return dtw_short_row_matrix<8, T, kTransposed>(cost, rows);
    }
}

template <class T, class I>
NAVDTW_ALWAYS_INLINE double dtw_matrix_short(const MatrixCost<I>& cost, index_t n, index_t m) {
    return n >= m ? dtw_matrix_short_cols<T, false>(cost, n, m) : dtw_matrix_short_cols<T, true>(cost, m, n);
}

// Exact DTW of a pair whose shorter side has at most kShortRow points, the longer on the rows.
template <class T, class Cost>
double dtw_short_pair(const Cost& cost, index_t n, index_t m) {
    if (n >= m) return dtw_exact_short<T>(cost, n, m);
    return dtw_exact_short<T>(Transposed<Cost>{cost}, m, n);
}
template <class T, class I>
double dtw_short_pair(const MatrixCost<I>& cost, index_t n, index_t m) {
    return dtw_matrix_short<T>(cost, n, m);
}

// Exact or banded DTW with the longer sequence on the rows, so the rolling row holds min(n, m).
// T: the type of the sums, double (default) or float (precision="single").
template <class T = double, class Cost>
double dtw_pair(const Cost& cost, index_t n, index_t m, index_t window, Workspace& ws) {
    window = std::min(window, std::max(n, m));  // wider is exact anyway; keeps index arithmetic in range
    if (window < 0 && std::min(n, m) <= kShortRow) return dtw_short_pair<T>(cost, n, m);
    if (n >= m) {
        T* row = ws.rolling_row<T>(m);
        if (window < 0) return dtw_rolling(cost, n, m, FullWindow{m}, row);
        return dtw_rolling(cost, n, m, BandWindow{n, m, window}, row);
    }
    const Transposed<Cost> tc{cost};
    T* row = ws.rolling_row<T>(n);
    if (window < 0) return dtw_rolling(tc, m, n, FullWindow{n}, row);
    return dtw_rolling(tc, m, n, BandWindow{m, n, window}, row);
}

// FastDTW over float32 points, query on the rows as in VLN-CE's fastdtw(query, reference). The
// coarse levels average in double, as the package does, so they choose the same windows; the
// finest level measures the original float32 points like every other kernel, so FastDTW >=
// exact DTW holds bit for bit (and differs from the package's float64 sums by ~1e-7 relative).
inline double fastdtw_points(const float* ref, index_t n, const float* qry, index_t m, int dim, index_t radius,
                             Workspace& ws) {
    radius = std::min(radius, std::max(n, m));  // wider is exact anyway; keeps radius + 2 in range
    const EuclideanCost<float, 0> cost{qry, ref, dim};
    if (m < radius + 2 || n < radius + 2) return dtw_rolling(cost, m, n, FullWindow{n}, ws.rolling_row<double>(n));
    std::vector<double> x(qry, qry + m * dim), y(ref, ref + n * dim), xs, ys;
    reduce_by_half(x.data(), m, dim, xs);
    reduce_by_half(y.data(), n, dim, ys);
    std::vector<std::pair<index_t, index_t>> coarse;
    fastdtw_level(xs.data(), m / 2, ys.data(), n / 2, dim, radius, ws, &coarse);
    std::vector<index_t> lo, hi;
    expand_window(coarse, m / 2, m, n, radius, lo, hi);
    return dtw_rolling(cost, m, n, RangeWindow{lo.data(), hi.data()}, ws.rolling_row<double>(n));
}

// DTW(R, q_1..q_j) for every j: the query on the rows, the reference on the columns, and the
// last column of each row is the prefix score. O(|R|) memory.
template <class Cost>
void dtw_prefix(const Cost& cost, index_t n, index_t m, double* out, Workspace& ws) {
    const Transposed<Cost> tc{cost};
    dtw_rolling(tc, m, n, FullWindow{n}, ws.rolling_row<double>(n), [out](index_t t, double v) { out[t] = v; });
}

// Optimal alignment as (reference index, query index) pairs from (0, 0) to (n-1, m-1).
// Ties prefer the diagonal step, then advancing the reference, then the query.
template <class Cost>
double warping_path(const Cost& cost, index_t n, index_t m, Workspace& ws,
                    std::vector<std::pair<index_t, index_t>>& path) {
    return dtw_with_path(cost, n, m, FullWindow{m}, Ties::kDiagFirst, ws, path);
}

}  // namespace navdtw
