// pybind11 bindings of the per-pair path statistics (cpp/navdtw/stats.hpp) used by metrics.py.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <vector>

#include "bindings_common.hpp"
#include "navdtw/stats.hpp"

namespace py = pybind11;
using navdtw::index_t;
using namespace navdtw::bind;

namespace {

py::array_t<double> stats_array(index_t B) {
    return py::array_t<double>({static_cast<py::ssize_t>(navdtw::kNumStats), static_cast<py::ssize_t>(B)});
}

void check_stats_threshold(double threshold) {
    if (!(threshold > 0) || !std::isfinite(threshold)) throw std::invalid_argument("threshold must be finite and > 0");
}

py::array_t<double> stats_points(const F32Array& rv, const I64Array& ro, const F32Array& qv, const I64Array& qo,
                                 const std::optional<I64Array>& pairs, double threshold, int workers) {
    check_stats_threshold(threshold);
    const navdtw::PointSet R = point_set(rv, ro, "references");
    const navdtw::PointSet Q = point_set(qv, qo, "queries");
    index_t B = 0;
    const navdtw::PairIndex P = make_pairs(pairs, false, R.size, Q.size, B);
    auto out = stats_array(B);
    double* o = out.mutable_data();
    run_without_gil(
        [&](const navdtw::Poll& poll) { navdtw::stats_points_batch(R, Q, P, B, threshold, o, workers, poll); });
    return out;
}

template <class I>
void stats_nodes_t(const py::array& rv, const I64Array& ro, const py::array& qv, const I64Array& qo,
                   const std::vector<navdtw::DistanceMatrix>& mats, const index_t* env, const navdtw::PairIndex& P,
                   index_t B, double threshold, double* o, int workers) {
    const auto R = node_set<I>(rv, ro, "references");
    const auto Q = node_set<I>(qv, qo, "queries");
    run_without_gil([&](const navdtw::Poll& poll) {
        navdtw::stats_nodes_batch<I>(R, Q, mats, env, P, B, threshold, o, workers, poll);
    });
}

py::array_t<double> stats_nodes(const py::array& rv, const I64Array& ro, const py::array& qv, const I64Array& qo,
                                const std::vector<F32Array>& distances, const std::optional<I64Array>& env,
                                const std::optional<I64Array>& pairs, double threshold, int workers) {
    check_stats_threshold(threshold);
    const index_t nr = ro.size() - 1, nq = qo.size() - 1;
    if (nr < 0 || nq < 0) throw std::invalid_argument("offsets must hold at least one element");
    index_t B = 0;
    const navdtw::PairIndex P = make_pairs(pairs, false, nr, nq, B);
    const auto mats = matrices(distances);
    if (env && (env->ndim() != 1 || env->shape(0) != B))
        throw std::invalid_argument("env must have one entry per pair (" + std::to_string(B) + ")");
    if (!env && mats.size() > 1) throw std::invalid_argument("several distance matrices need env=");
    auto out = stats_array(B);
    double* o = out.mutable_data();
    const index_t* e = env ? env->data() : nullptr;
    if (node_type(rv, qv) == NodeType::kInt32)
        stats_nodes_t<std::int32_t>(rv, ro, qv, qo, mats, e, P, B, threshold, o, workers);
    else
        stats_nodes_t<std::int64_t>(rv, ro, qv, qo, mats, e, P, B, threshold, o, workers);
    return out;
}

}  // namespace

void init_stats(py::module_& m) {
    m.def("stats_points", &stats_points, py::arg("ref_values"), py::arg("ref_offsets"), py::arg("qry_values"),
          py::arg("qry_offsets"), py::kw_only(), py::arg("pairs") = py::none(), py::arg("threshold") = 3.0,
          py::arg("workers") = 1, "Per-pair path statistics [len(STATS), B] of coordinate paths.");
    m.def("stats_nodes", &stats_nodes, py::arg("ref_values"), py::arg("ref_offsets"), py::arg("qry_values"),
          py::arg("qry_offsets"), py::arg("distances"), py::kw_only(), py::arg("env") = py::none(),
          py::arg("pairs") = py::none(), py::arg("threshold") = 3.0, py::arg("workers") = 1,
          "Per-pair path statistics [len(STATS), B] of node paths.");
    // Statistic names in index order (row k of the stats arrays is STATS[k]), from stats.hpp's table.
    py::tuple names(static_cast<py::size_t>(navdtw::kNumStats));
    for (const auto& s : navdtw::kStatNames) names[static_cast<py::size_t>(s.stat)] = s.name;
    m.attr("STATS") = names;
}
