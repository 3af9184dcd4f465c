// pybind11 bindings of the streaming reward step (cpp/navdtw/reward.hpp) used by reward.py.
// reward.py owns every state array and passes them in; this file checks shapes once per call and
// updates them in place with the GIL released.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <vector>

#include "bindings_common.hpp"
#include "navdtw/reward.hpp"

namespace py = pybind11;
using navdtw::index_t;
using namespace navdtw::bind;

namespace {

using F64Array = py::array_t<double, py::array::c_style>;
using U8Array = py::array_t<std::uint8_t, py::array::c_style>;

template <class T>
T* writable(py::array_t<T, py::array::c_style>& a, index_t n, const char* name) {
    if (a.ndim() != 1 || a.shape(0) != n) throw std::invalid_argument(std::string(name) + " has the wrong shape");
    return a.mutable_data();
}

navdtw::RewardState state(F64Array& columns, const I64Array& ref_offsets, I64Array& steps, F64Array& dtw,
                          F64Array& ndtw, const U8Array& active, double threshold) {
    const index_t B = ref_offsets.shape(0) - 1;
    if (ref_offsets.ndim() != 1 || B < 0) throw std::invalid_argument("ref_offsets must be 1-D");
    check_offsets(ref_offsets, columns.shape(0), "columns");
    for (index_t b = 0; b < B; ++b)
        if (ref_offsets.data()[b + 1] == ref_offsets.data()[b])
            throw std::invalid_argument("reference " + std::to_string(b) + " is empty");
    if (active.ndim() != 1 || active.shape(0) != B) throw std::invalid_argument("active has the wrong shape");
    if (!(threshold > 0) || !std::isfinite(threshold)) throw std::invalid_argument("threshold must be finite and > 0");
    return {columns.mutable_data(),
            ref_offsets.data(),
            writable(steps, B, "steps"),
            writable(dtw, B, "dtw"),
            writable(ndtw, B, "ndtw"),
            active.data(),
            B,
            threshold};
}

void step_points(const F32Array& ref_values, F64Array& columns, const I64Array& ref_offsets, I64Array& steps,
                 F64Array& dtw, F64Array& ndtw, const U8Array& active, const F32Array& points, F64Array& rewards,
                 double threshold, int workers) {
    navdtw::RewardState s = state(columns, ref_offsets, steps, dtw, ndtw, active, threshold);
    if (ref_values.ndim() != 2 || ref_values.shape(0) != columns.shape(0))
        throw std::invalid_argument("reference values and columns differ in length");
    const int D = static_cast<int>(ref_values.shape(1));
    if (points.ndim() != 2 || points.shape(0) != s.size || points.shape(1) != D)
        throw std::invalid_argument("points must have shape [B, " + std::to_string(D) + "]");
    double* r = writable(rewards, s.size, "rewards");
    const float* rv = ref_values.data();
    const float* pv = points.data();
    const index_t* off = ref_offsets.data();
    auto cost = [&](index_t b, double* col, index_t n, index_t t) {
        const float* ref = rv + off[b] * D;
        const float* p = pv + b * D;
        return navdtw::extend_column(col, n, t,
                                     [&](index_t i) { return navdtw::EuclideanCost<float, 0>{ref, p, D}(i, 0); });
    };
    run_without_gil([&](const navdtw::Poll& poll) { navdtw::reward_step(s, r, cost, workers, poll); });
}

void step_nodes(const I64Array& ref_values, F64Array& columns, const I64Array& ref_offsets, I64Array& steps,
                F64Array& dtw, F64Array& ndtw, const U8Array& active, const I64Array& points, F64Array& rewards,
                const std::vector<F32Array>& distances, const std::optional<I64Array>& env, double threshold,
                int workers) {
    navdtw::RewardState s = state(columns, ref_offsets, steps, dtw, ndtw, active, threshold);
    if (ref_values.ndim() != 1 || ref_values.shape(0) != columns.shape(0))
        throw std::invalid_argument("reference values and columns differ in length");
    if (points.ndim() != 1 || points.shape(0) != s.size) throw std::invalid_argument("points must have shape [B]");
    const auto mats = matrices(distances);
    if (env && (env->ndim() != 1 || env->shape(0) != s.size)) throw std::invalid_argument("env must have shape [B]");
    if (!env && mats.size() != 1) throw std::invalid_argument("several distance matrices need env");
    const index_t* e = env ? env->data() : nullptr;
    const std::int64_t* rv = ref_values.data();
    const std::int64_t* pv = points.data();
    const index_t* off = ref_offsets.data();
    // Every id the kernel follows is checked before the step changes any state.
    for (index_t b = 0; b < s.size; ++b) {
        if (!s.active[b]) continue;
        const index_t k = e ? e[b] : 0;
        if (k < 0 || k >= static_cast<index_t>(mats.size()))
            throw std::invalid_argument("env[" + std::to_string(b) + "] is out of range");
        const index_t V = mats[static_cast<std::size_t>(k)].n;
        if (pv[b] < 0 || pv[b] >= V)
            throw std::invalid_argument("points[" + std::to_string(b) + "] = " + std::to_string(pv[b]) +
                                        " is outside [0, " + std::to_string(V) + ")");
        for (index_t i = off[b]; i < off[b + 1]; ++i)
            if (rv[i] < 0 || rv[i] >= V)
                throw std::invalid_argument("reference " + std::to_string(b) + " has node id " + std::to_string(rv[i]) +
                                            " outside [0, " + std::to_string(V) + ")");
    }
    double* r = writable(rewards, s.size, "rewards");
    auto cost = [&](index_t b, double* col, index_t n, index_t t) {
        const navdtw::DistanceMatrix& M = mats[static_cast<std::size_t>(e ? e[b] : 0)];
        const std::int64_t* ref = rv + off[b];
        const float* row = M.data + pv[b];  // column pv[b] of row ref[i]: M[ref[i] * V + p]
        return navdtw::extend_column(col, n, t, [&](index_t i) { return static_cast<double>(row[ref[i] * M.n]); });
    };
    run_without_gil([&](const navdtw::Poll& poll) { navdtw::reward_step(s, r, cost, workers, poll); });
}

}  // namespace

void init_reward(py::module_& m) {
    m.def("reward_step_points", &step_points, py::arg("ref_values"), py::arg("columns"), py::arg("ref_offsets"),
          py::arg("steps"), py::arg("dtw"), py::arg("ndtw"), py::arg("active"), py::arg("points"), py::arg("rewards"),
          py::arg("threshold"), py::arg("workers") = 1, "Streaming nDTW reward step over coordinate references.");
    m.def("reward_step_nodes", &step_nodes, py::arg("ref_values"), py::arg("columns"), py::arg("ref_offsets"),
          py::arg("steps"), py::arg("dtw"), py::arg("ndtw"), py::arg("active"), py::arg("points"), py::arg("rewards"),
          py::arg("distances"), py::arg("env") = py::none(), py::arg("threshold") = 3.0, py::arg("workers") = 1,
          "Streaming nDTW reward step over node references.");
}
