// pybind11 bindings of the DTW engine: argument checks, dtype dispatch and GIL release only.
// The algorithms live in cpp/navdtw/. The Python layer (python/navdtw/engine.py) normalises
// user input (dtypes, contiguity, finiteness, matrix checks) before calling in here; the checks
// below guard every index the kernels follow, so a direct call cannot crash the process either.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "bindings_common.hpp"
#include "navdtw/batch.hpp"

// Safe without the GIL (free-threaded CPython): the module keeps no mutable state but the SIMD
// choice, two atomics, and the once-initialised CPU checks; every call works on the arrays it is
// given, as the batch functions already do with the GIL released. pybind11 2.13 knows the flag.
#if PYBIND11_VERSION_HEX >= 0x020D0000
#define NAVDTW_GIL_NOT_USED 1
#else
#define NAVDTW_GIL_NOT_USED 0
#endif

namespace py = pybind11;
using navdtw::index_t;
using namespace navdtw::bind;

namespace {

py::array_t<double> dtw_points(const F32Array& rv, const I64Array& ro, const F32Array& qv, const I64Array& qo,
                               const std::optional<I64Array>& pairs, bool all_pairs, index_t window, index_t radius,
                               int workers, const std::string& precision) {
    const navdtw::PointSet R = point_set(rv, ro, "references");
    const navdtw::PointSet Q = point_set(qv, qo, "queries");
    index_t B = 0;
    const navdtw::PairIndex P = make_pairs(pairs, all_pairs, R.size, Q.size, B);
    py::array_t<double> out(B);
    double* o = out.mutable_data();
    const navdtw::Method method{window, radius, single_precision(precision)};
    run_without_gil([&](const navdtw::Poll& poll) { navdtw::dtw_points_batch(R, Q, P, B, method, o, workers, poll); });
    return out;
}

template <class I>
void nodes_batch(const py::array& rv, const I64Array& ro, const py::array& qv, const I64Array& qo,
                 const std::vector<navdtw::DistanceMatrix>& mats, const index_t* env, const navdtw::PairIndex& P,
                 index_t B, const navdtw::Method& method, double* out, int workers) {
    const auto R = node_set<I>(rv, ro, "references");
    const auto Q = node_set<I>(qv, qo, "queries");
    run_without_gil([&](const navdtw::Poll& poll) {
        navdtw::dtw_nodes_batch<I>(R, Q, mats, env, P, B, method, out, workers, poll);
    });
}

py::array_t<double> dtw_nodes(const py::array& rv, const I64Array& ro, const py::array& qv, const I64Array& qo,
                              const std::vector<F32Array>& distances, const std::optional<I64Array>& env,
                              const std::optional<I64Array>& pairs, bool all_pairs, index_t window, int workers,
                              const std::string& precision) {
    const index_t nr = ro.size() - 1, nq = qo.size() - 1;
    if (nr < 0 || nq < 0) throw std::invalid_argument("offsets must hold at least one element");
    index_t B = 0;
    const navdtw::PairIndex P = make_pairs(pairs, all_pairs, nr, nq, B);
    const std::vector<navdtw::DistanceMatrix> mats = matrices(distances);
    if (env && (env->ndim() != 1 || env->shape(0) != B))
        throw std::invalid_argument("env must have one entry per pair (" + std::to_string(B) + ")");
    if (!env && mats.size() > 1) throw std::invalid_argument("several distance matrices need env=");
    const index_t* e = env ? env->data() : nullptr;
    py::array_t<double> out(B);
    double* o = out.mutable_data();
    const navdtw::Method method{window, -1, single_precision(precision)};
    const NodeType t = node_type(rv, qv);
    if (t == NodeType::kInt32)
        nodes_batch<std::int32_t>(rv, ro, qv, qo, mats, e, P, B, method, o, workers);
    else
        nodes_batch<std::int64_t>(rv, ro, qv, qo, mats, e, P, B, method, o, workers);
    return out;
}

// ---- single pairs: prefix scores and warping paths ----

py::array_t<double> prefix_points(const F32Array& r, const F32Array& q) {
    const auto [a, n, ad] = single_points(r, "reference");
    const auto [b, m, bd] = single_points(q, "query");
    if (ad != bd) throw std::invalid_argument("reference and query have different dimensions");
    py::array_t<double> out(m);
    double* o = out.mutable_data();
    {
        py::gil_scoped_release nogil;  // reads only the input buffers, which the caller keeps alive
        navdtw::Workspace ws;
        switch (ad) {
            case 2:
                navdtw::dtw_prefix(navdtw::EuclideanCost<float, 2>{a, b, 2}, n, m, o, ws);
                break;
            case 3:
                navdtw::dtw_prefix(navdtw::EuclideanCost<float, 3>{a, b, 3}, n, m, o, ws);
                break;
            default:
                navdtw::dtw_prefix(navdtw::EuclideanCost<float, 0>{a, b, ad}, n, m, o, ws);
        }
    }
    return out;
}

template <class I>
py::array_t<double> prefix_nodes_t(const py::array& r, const py::array& q, const F32Array& dist) {
    const auto [a, n] = single_nodes<I>(r, "reference");
    const auto [b, m] = single_nodes<I>(q, "query");
    const navdtw::DistanceMatrix M = matrices({dist})[0];
    check_single_nodes(a, n, M.n, "reference");
    check_single_nodes(b, m, M.n, "query");
    py::array_t<double> out(m);
    double* o = out.mutable_data();
    {
        py::gil_scoped_release nogil;
        navdtw::Workspace ws;
        navdtw::dtw_prefix(navdtw::MatrixCost<I>{M.data, M.n, a, b}, n, m, o, ws);
    }
    return out;
}

py::array_t<double> prefix_nodes(const py::array& r, const py::array& q, const F32Array& dist) {
    return node_type(r, q) == NodeType::kInt32 ? prefix_nodes_t<std::int32_t>(r, q, dist)
                                               : prefix_nodes_t<std::int64_t>(r, q, dist);
}

py::tuple path_result(double value, const std::vector<std::pair<index_t, index_t>>& path) {
    py::array_t<std::int64_t> out({static_cast<py::ssize_t>(path.size()), static_cast<py::ssize_t>(2)});
    auto w = out.mutable_unchecked<2>();
    for (std::size_t k = 0; k < path.size(); ++k) {
        w(static_cast<py::ssize_t>(k), 0) = path[k].first;
        w(static_cast<py::ssize_t>(k), 1) = path[k].second;
    }
    return py::make_tuple(value, out);
}

py::tuple warping_path_points(const F32Array& r, const F32Array& q) {
    const auto [a, n, ad] = single_points(r, "reference");
    const auto [b, m, bd] = single_points(q, "query");
    if (ad != bd) throw std::invalid_argument("reference and query have different dimensions");
    check_path_memory(n, m);
    std::vector<std::pair<index_t, index_t>> path;
    double value;
    {
        py::gil_scoped_release nogil;
        navdtw::Workspace ws;
        value = navdtw::warping_path(navdtw::EuclideanCost<float, 0>{a, b, ad}, n, m, ws, path);
    }
    return path_result(value, path);
}

template <class I>
py::tuple warping_path_nodes_t(const py::array& r, const py::array& q, const F32Array& dist) {
    const auto [a, n] = single_nodes<I>(r, "reference");
    const auto [b, m] = single_nodes<I>(q, "query");
    const navdtw::DistanceMatrix M = matrices({dist})[0];
    check_single_nodes(a, n, M.n, "reference");
    check_single_nodes(b, m, M.n, "query");
    check_path_memory(n, m);
    std::vector<std::pair<index_t, index_t>> path;
    double value;
    {
        py::gil_scoped_release nogil;
        navdtw::Workspace ws;
        value = navdtw::warping_path(navdtw::MatrixCost<I>{M.data, M.n, a, b}, n, m, ws, path);
    }
    return path_result(value, path);
}

py::tuple warping_path_nodes(const py::array& r, const py::array& q, const F32Array& dist) {
    return node_type(r, q) == NodeType::kInt32 ? warping_path_nodes_t<std::int32_t>(r, q, dist)
                                               : warping_path_nodes_t<std::int64_t>(r, q, dist);
}

// The compiler that built this module, e.g. "GCC 12.2.0", "Clang 14.0.6", "MSVC 1938".
std::string compiler_id() {
#if defined(__clang__)
    std::string id = "Clang " __clang_version__;
#elif defined(__GNUC__)
    std::string id = "GCC " __VERSION__;
#elif defined(_MSC_VER)
    std::string id = "MSVC " + std::to_string(_MSC_FULL_VER);
#else
    std::string id = "unknown";
#endif
    while (!id.empty() && id.back() == ' ') id.pop_back();
    return id;
}

// ---- the SIMD choice: set_simd() and NAVDTW_SIMD ----

constexpr navdtw::Simd kAllSimd[] = {navdtw::Simd::kAvx512, navdtw::Simd::kAvx2, navdtw::Simd::kNeon,
                                     navdtw::Simd::kPortable};

std::string choice_name(int choice) {
    return choice == navdtw::kSimdAuto ? "auto" : navdtw::simd_name(static_cast<navdtw::Simd>(choice));
}

// "auto" or a kernel's name -> the choice; nullopt for any other string.
std::optional<int> parse_choice(const std::string& name) {
    if (name == "auto") return navdtw::kSimdAuto;
    for (navdtw::Simd k : kAllSimd)
        if (name == navdtw::simd_name(k)) return static_cast<int>(k);
    return std::nullopt;
}

// The kernels this build and CPU run, widest first (the portable one last).
std::vector<std::string> runnable_kernels() {
    std::vector<std::string> names;
    for (navdtw::Simd k : kAllSimd)
        if (navdtw::simd_supported(k)) names.emplace_back(navdtw::simd_name(k));
    return names;
}

// What set_simd(True) restores: the choice made at import (NAVDTW_SIMD, else auto).
std::atomic<int>& import_choice() {
    static std::atomic<int> choice{navdtw::kSimdAuto};
    return choice;
}

void set_simd(const py::object& what) {
    int choice;
    if (py::isinstance<py::bool_>(what)) {
        choice = what.cast<bool>() ? import_choice().load() : static_cast<int>(navdtw::Simd::kPortable);
    } else if (py::isinstance<py::str>(what)) {
        const std::string name = what.cast<std::string>();
        const std::optional<int> parsed = parse_choice(name);
        if (!parsed)
            throw py::value_error("set_simd: unknown kernel '" + name +
                                  "'; expected True, False, 'auto', 'avx512', 'avx2', 'neon' or 'portable'");
        choice = *parsed;
    } else {
        throw py::type_error("set_simd: expected a bool or a kernel name (str), not " +
                             std::string(py::str(py::type::of(what).attr("__name__"))));
    }
    if (!navdtw::set_simd(choice)) {
        std::string runs;
        for (const std::string& k : runnable_kernels()) runs += (runs.empty() ? "" : ", ") + k;
        throw py::value_error("set_simd: this CPU or build has no " + choice_name(choice) + " kernel; it runs " + runs);
    }
}

// NAVDTW_SIMD at import: a kernel this CPU lacks becomes the widest one it runs that is not wider
// (results are identical with every kernel, so a wrong setting costs speed only and warns).
void choose_from_environment() {
    const char* env = std::getenv("NAVDTW_SIMD");
    if (env == nullptr || *env == '\0') return;
    const std::string value = env;
    std::optional<int> choice = parse_choice(value);
    std::string warning;
    if (!choice) {
        warning = "NAVDTW_SIMD='" + value + "' is not one of auto, avx512, avx2, neon, portable; using auto";
        choice = navdtw::kSimdAuto;
    } else if (*choice != navdtw::kSimdAuto && !navdtw::simd_supported(static_cast<navdtw::Simd>(*choice))) {
        const int wanted = navdtw::simd_lanes(static_cast<navdtw::Simd>(*choice));
        navdtw::Simd fallback = navdtw::Simd::kPortable;
        for (navdtw::Simd k : kAllSimd)
            if (navdtw::simd_supported(k) && navdtw::simd_lanes(k) <= wanted) {
                fallback = k;
                break;
            }
        warning = "NAVDTW_SIMD='" + value + "': this CPU or build has no " + value + " kernel; using " +
                  navdtw::simd_name(fallback);
        choice = static_cast<int>(fallback);
    }
    navdtw::set_simd(*choice);
    import_choice().store(*choice);
    if (!warning.empty() && PyErr_WarnEx(PyExc_RuntimeWarning, warning.c_str(), 1) != 0) throw py::error_already_set();
}

py::dict build_info() {
    py::dict d;
    d["simd_kernel"] = navdtw::simd_name(navdtw::simd_in_use());
    d["simd_choice"] = choice_name(navdtw::simd_choice().load());
    const bool per_batch = navdtw::simd_choice().load() == navdtw::kSimdAuto && navdtw::avx512_supported();
    d["simd_per_batch"] = per_batch ? "avx512 for double-precision batches whose pairs average >= " +
                                          std::to_string(static_cast<long>(navdtw::kAvx512MinCellsPerPair)) +
                                          " cells and fill 16-lane groups"
                                    : std::string();
    d["simd_kernels"] = py::cast(runnable_kernels());
    py::list compiled;
    for (navdtw::Simd k : navdtw::simd_compiled()) compiled.append(navdtw::simd_name(k));
    d["simd_compiled"] = compiled;
    d["cpu_avx2"] = navdtw::avx2_supported();
    d["cpu_avx512"] = navdtw::avx512_supported();
    d["compiler"] = compiler_id();
    d["hardware_threads"] = std::thread::hardware_concurrency();
    d["pybind11"] = std::to_string(PYBIND11_VERSION_MAJOR) + "." + std::to_string(PYBIND11_VERSION_MINOR) + "." +
                    std::to_string(PYBIND11_VERSION_PATCH);
    d["gil_not_used"] = static_cast<bool>(NAVDTW_GIL_NOT_USED);
    return d;
}

}  // namespace

void init_stats(py::module_& m);
void init_walks(py::module_& m);
void init_reward(py::module_& m);
void init_sequential(py::module_& m);
void init_anchored(py::module_& m);

#if NAVDTW_GIL_NOT_USED
PYBIND11_MODULE(_core, m, py::mod_gil_not_used()) {
#else
PYBIND11_MODULE(_core, m) {
#endif
    m.doc() = "navdtw's compiled engine. Use the navdtw package API; these functions expect prepared arrays.";
    m.def("dtw_points", &dtw_points, py::arg("ref_values"), py::arg("ref_offsets"), py::arg("qry_values"),
          py::arg("qry_offsets"), py::kw_only(), py::arg("pairs") = py::none(), py::arg("all_pairs") = false,
          py::arg("window") = -1, py::arg("radius") = -1, py::arg("workers") = 1, py::arg("precision") = "double",
          "DTW of float32 coordinate paths (Euclidean cost) over a ragged batch of pairs; precision: \"double\" "
          "or \"single\" (float32 sums).");
    m.def("dtw_nodes", &dtw_nodes, py::arg("ref_values"), py::arg("ref_offsets"), py::arg("qry_values"),
          py::arg("qry_offsets"), py::arg("distances"), py::kw_only(), py::arg("env") = py::none(),
          py::arg("pairs") = py::none(), py::arg("all_pairs") = false, py::arg("window") = -1, py::arg("workers") = 1,
          py::arg("precision") = "double",
          "DTW of node-index paths over float32 distance matrices; precision: \"double\" or \"single\".");
    m.def("prefix_points", &prefix_points, py::arg("reference"), py::arg("query"));
    m.def("prefix_nodes", &prefix_nodes, py::arg("reference"), py::arg("query"), py::arg("distances"));
    m.def("warping_path_points", &warping_path_points, py::arg("reference"), py::arg("query"));
    m.def("warping_path_nodes", &warping_path_nodes, py::arg("reference"), py::arg("query"), py::arg("distances"));
    m.attr("MAX_PATH_CELLS") = kMaxPathCells;
    choose_from_environment();
    m.def(
        "simd_available", [] { return navdtw::simd_widest() != navdtw::Simd::kPortable; },
        "True when this build and CPU have a SIMD lane kernel (AVX-512, AVX2 or NEON).");
    m.def("simd_kernels", &runnable_kernels,
          "The kernels this build and CPU run, widest first: e.g. ['avx512', 'avx2', 'portable'].");
    m.def("set_simd", &set_simd, py::arg("kernel"),
          "Chooses the kernels batches use (tests and benchmarks; results are identical): a kernel's name, "
          "'auto' (per batch, the fastest for its shape), True (the choice made at import: NAVDTW_SIMD, else "
          "'auto') or False ('portable').");
    m.def(
        "simd_enabled", [] { return navdtw::simd_in_use() != navdtw::Simd::kPortable; },
        "True when batches use a SIMD lane kernel.");
    m.def(
        "simd_kernel_for",
        [](index_t pairs, double cells_per_pair, const std::string& precision) {
            return navdtw::simd_name(navdtw::simd_for_batch(single_precision(precision), cells_per_pair, pairs));
        },
        py::arg("pairs"), py::arg("cells_per_pair"), py::arg("precision") = "double",
        "The lane kernel an exact coordinate batch of this many pairs averaging this many cells (``|R| |Q|``) runs "
        "now, if it takes the lanes at all (at least 2 pairs of 64 cells on average).");
    m.def("build_info", &build_info, "How this build was made and which kernels it uses (see _core.pyi).");
    init_stats(m);
    init_walks(m);
    init_reward(m);
    init_sequential(m);
    init_anchored(m);
}
