// pybind11 bindings of anchored DTW (cpp/navdtw/anchored.hpp): argument checks, dtype dispatch and
// GIL release only. The Python layer (navdtw.engine.dtw_anchored_batch) checks the anchors first,
// for messages naming the argument; the checks here guard every index the kernels follow.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <vector>

#include "bindings_common.hpp"
#include "navdtw/anchored.hpp"

namespace py = pybind11;
using navdtw::index_t;
using namespace navdtw::bind;

namespace {

navdtw::AnchorSet anchor_set(const I64Array& values, const I64Array& offsets, index_t B) {
    if (values.ndim() != 2 || values.shape(1) != 2)
        throw std::invalid_argument("anchors: values must have shape [A, 2] (reference index, query index)");
    if (offsets.ndim() != 1 || offsets.shape(0) != B + 1)
        throw std::invalid_argument("anchors: offsets must have one entry per pair plus one (" + std::to_string(B + 1) +
                                    ")");
    const index_t* o = offsets.data();
    if (o[B] != values.shape(0))
        throw std::invalid_argument("anchors: offsets[-1] = " + std::to_string(o[B]) + " but there are " +
                                    std::to_string(values.shape(0)) + " anchors");
    return {values.data(), o};
}

py::array_t<double> anchored_points(const F32Array& rv, const I64Array& ro, const F32Array& qv, const I64Array& qo,
                                    const I64Array& av, const I64Array& ao, const std::optional<I64Array>& pairs,
                                    bool exclusive, index_t window, int workers) {
    const navdtw::PointSet R = point_set(rv, ro, "references");
    const navdtw::PointSet Q = point_set(qv, qo, "queries");
    index_t B = 0;
    const navdtw::PairIndex P = make_pairs(pairs, false, R.size, Q.size, B);
    const navdtw::AnchorSet A = anchor_set(av, ao, B);
    py::array_t<double> out(B);
    double* o = out.mutable_data();
    window = std::min(window, index_t(1) << 62);
    run_without_gil([&](const navdtw::Poll& poll) {
        navdtw::dtw_anchored_points_batch(R, Q, P, B, A, exclusive, window, o, workers, poll);
    });
    return out;
}

template <class I>
void anchored_nodes_t(const py::array& rv, const I64Array& ro, const py::array& qv, const I64Array& qo,
                      const std::vector<navdtw::DistanceMatrix>& mats, const index_t* env, const navdtw::PairIndex& P,
                      index_t B, const navdtw::AnchorSet& A, bool exclusive, index_t window, double* out, int workers) {
    const auto R = node_set<I>(rv, ro, "references");
    const auto Q = node_set<I>(qv, qo, "queries");
    run_without_gil([&](const navdtw::Poll& poll) {
        navdtw::dtw_anchored_nodes_batch<I>(R, Q, mats, env, P, B, A, exclusive, window, out, workers, poll);
    });
}

py::array_t<double> anchored_nodes(const py::array& rv, const I64Array& ro, const py::array& qv, const I64Array& qo,
                                   const std::vector<F32Array>& distances, const I64Array& av, const I64Array& ao,
                                   const std::optional<I64Array>& env, const std::optional<I64Array>& pairs,
                                   bool exclusive, index_t window, int workers) {
    const index_t nr = ro.size() - 1, nq = qo.size() - 1;
    if (nr < 0 || nq < 0) throw std::invalid_argument("offsets must hold at least one element");
    index_t B = 0;
    const navdtw::PairIndex P = make_pairs(pairs, false, nr, nq, B);
    const navdtw::AnchorSet A = anchor_set(av, ao, B);
    const std::vector<navdtw::DistanceMatrix> mats = matrices(distances);
    if (env && (env->ndim() != 1 || env->shape(0) != B))
        throw std::invalid_argument("env must have one entry per pair (" + std::to_string(B) + ")");
    if (!env && mats.size() > 1) throw std::invalid_argument("several distance matrices need env=");
    const index_t* e = env ? env->data() : nullptr;
    py::array_t<double> out(B);
    double* o = out.mutable_data();
    window = std::min(window, index_t(1) << 62);
    if (node_type(rv, qv) == NodeType::kInt32)
        anchored_nodes_t<std::int32_t>(rv, ro, qv, qo, mats, e, P, B, A, exclusive, window, o, workers);
    else
        anchored_nodes_t<std::int64_t>(rv, ro, qv, qo, mats, e, P, B, A, exclusive, window, o, workers);
    return out;
}

}  // namespace

void init_anchored(py::module_& m) {
    m.def("dtw_anchored_points", &anchored_points, py::arg("ref_values"), py::arg("ref_offsets"), py::arg("qry_values"),
          py::arg("qry_offsets"), py::arg("anchor_values"), py::arg("anchor_offsets"), py::kw_only(),
          py::arg("pairs") = py::none(), py::arg("exclusive") = false, py::arg("window") = -1, py::arg("workers") = 1,
          "Anchored DTW of float32 coordinate paths over a ragged batch of pairs; anchors [A, 2] (reference "
          "index, query index) with offsets [B + 1].");
    m.def("dtw_anchored_nodes", &anchored_nodes, py::arg("ref_values"), py::arg("ref_offsets"), py::arg("qry_values"),
          py::arg("qry_offsets"), py::arg("distances"), py::arg("anchor_values"), py::arg("anchor_offsets"),
          py::kw_only(), py::arg("env") = py::none(), py::arg("pairs") = py::none(), py::arg("exclusive") = false,
          py::arg("window") = -1, py::arg("workers") = 1,
          "Anchored DTW of node-index paths over float32 distance matrices.");
}
