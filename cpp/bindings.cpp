// pybind11 bindings of the DTW engine: argument checks, dtype dispatch and GIL release only.
// The algorithms live in cpp/navdtw/. The Python layer (python/navdtw/engine.py) normalises
// user input (dtypes, contiguity, finiteness, matrix checks) before calling in here; the checks
// below guard every index the kernels follow, so a direct call cannot crash the process either.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "bindings_common.hpp"
#include "navdtw/batch.hpp"

// Safe without the GIL (free-threaded CPython): the module keeps no mutable state but the SIMD
// switch, an atomic, and the once-initialised CPU check; every call works on the arrays it is
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

py::dict build_info() {
    py::dict d;
    const char* lanes = navdtw::lanes_kernel_name();
    d["simd_kernel"] = navdtw::use_lanes() ? lanes : "portable";
    py::list compiled;
    if (*navdtw::lanes_kernels_compiled() != '\0') compiled.append(navdtw::lanes_kernels_compiled());
    d["simd_compiled"] = compiled;
    d["cpu_avx2"] = navdtw::avx2_supported();
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
    m.def(
        "simd_available", [] { return navdtw::lanes_kernel_name() != nullptr; },
        "True when this build and CPU have a SIMD lane kernel (AVX2 or NEON).");
    m.def(
        "set_simd", [](bool on) { navdtw::simd_enabled().store(on); }, py::arg("enabled"),
        "Enable or disable the SIMD kernels (tests and benchmarks; results are identical).");
    m.def("simd_enabled", &navdtw::use_lanes, "True when batches use a SIMD lane kernel.");
    m.def("build_info", &build_info, "How this build was made and which kernels it uses (see _core.pyi).");
    init_stats(m);
    init_walks(m);
    init_reward(m);
}
