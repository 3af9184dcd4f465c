// pybind11 bindings of the streaming reward step (cpp/navdtw/reward.hpp) used by reward.py, and
// of PointStepper, one episode's step used by navdtw.habitat's measures. reward.py owns every state
// array and passes them in; this file checks shapes once per call and updates them in place with
// the GIL released.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <mutex>
#include <optional>
#include <sstream>
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
        return navdtw::extend_point_column(col, n, t, rv + off[b] * D, pv + b * D, D);
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

// navdtw::PointStepper for Python: one call per step with the point as a sequence of numbers
// (habitat's position as a list of floats), the state kept here. A call costs about as much as
// pybind11's dispatch, so this takes a plain handle and reads the numbers with the C API instead
// of converting an array. The GIL stays held: a step of |R| <= a few hundred points takes well
// under a microsecond, and releasing and re-taking the GIL around it (two atomic exchanges and, on
// a busy interpreter, a hand-over between threads) would cost more than the other threads gain.
// The lock keeps concurrent calls from interleaving on free-threaded Python, as LiveSequence's.
class LiveStepper {
public:
    LiveStepper(py::handle reference, double threshold, double limit) : limit_(limit) {
        if (!(limit > 0)) throw std::invalid_argument("limit must be > 0");
        const int dim = read_reference(reference);
        stepper_.emplace(values_.data(), static_cast<index_t>(values_.size()) / dim, dim, threshold);
        point_.resize(static_cast<std::size_t>(dim));
    }

    double step(py::handle point) {
        PyObject* seq = PySequence_Fast(point.ptr(), "a point must be a sequence of numbers");
        if (seq == nullptr) throw py::error_already_set();
        const py::object hold = py::reinterpret_steal<py::object>(seq);
        std::lock_guard<std::mutex> lock(lock_);
        const Py_ssize_t k = PySequence_Fast_GET_SIZE(seq);
        if (k != stepper_->dim())
            throw std::invalid_argument("the point has " + std::to_string(k) + " coordinates, the reference " +
                                        std::to_string(stepper_->dim()));
        PyObject** items = PySequence_Fast_ITEMS(seq);
        for (Py_ssize_t i = 0; i < k; ++i) {
            const double v = number(items[i]);
            if (!(std::fabs(v) <= limit_))
                throw std::invalid_argument("the point's coordinate " + std::to_string(i) + " = " + shown(v) +
                                            " is not finite or beyond +-" + shown(limit_));
            point_[static_cast<std::size_t>(i)] = static_cast<float>(v);
        }
        return stepper_->step(point_.data());
    }

    void reset(py::handle reference) {
        std::lock_guard<std::mutex> lock(lock_);
        if (reference.is_none()) return stepper_->reset();
        const int dim = read_reference(reference);
        stepper_->reset(values_.data(), static_cast<index_t>(values_.size()) / dim, dim);
        point_.resize(static_cast<std::size_t>(dim));
    }

    template <class T>
    T read(T (navdtw::PointStepper::*get)() const) const {
        std::lock_guard<std::mutex> lock(lock_);
        return ((*stepper_).*get)();
    }

private:
    static std::string shown(double v) {
        std::ostringstream out;
        out << v;
        return out.str();
    }

    static double number(PyObject* item) {
        const double v = PyFloat_AsDouble(item);
        if (v == -1.0 && PyErr_Occurred()) throw py::error_already_set();
        return v;
    }

    // Reads a reference into values_ and returns its dimension D: a numpy array [n, D] (of a dtype
    // numpy casts safely to float64), or a sequence of n points of D numbers each (an episode's
    // reference_path as JSON gives it: reading the lists here costs a tenth of numpy's conversion).
    // Refused unless n, D >= 1 and every coordinate is within +-limit; nothing changes on refusal
    // but values_, which only reset() and the constructor read.
    int read_reference(py::handle reference) {
        values_.clear();
        index_t n = 0, dim = 0;
        if (py::isinstance<py::array>(reference)) {
            const auto a = F64Array::ensure(reference);
            if (!a) throw py::type_error("the reference must be an array of real numbers");
            if (a.ndim() != 2) throw std::invalid_argument("the reference must be a non-empty [n, D] path");
            n = a.shape(0);
            dim = a.shape(1);
            values_.assign(a.data(), a.data() + a.size());
        } else {
            PyObject* rows = PySequence_Fast(reference.ptr(), "the reference must be a sequence of points");
            if (rows == nullptr) throw py::error_already_set();
            const py::object hold = py::reinterpret_steal<py::object>(rows);
            n = PySequence_Fast_GET_SIZE(rows);
            for (index_t r = 0; r < n; ++r) {
                PyObject* row = PySequence_Fast(PySequence_Fast_GET_ITEM(rows, r),
                                                "each point of the reference must be a sequence of numbers");
                if (row == nullptr) throw py::error_already_set();
                const py::object keep = py::reinterpret_steal<py::object>(row);
                const index_t k = PySequence_Fast_GET_SIZE(row);
                if (r == 0) dim = k;
                if (k != dim)
                    throw std::invalid_argument("the reference's point " + std::to_string(r) + " has " +
                                                std::to_string(k) + " coordinates, its point 0 " + std::to_string(dim));
                PyObject** items = PySequence_Fast_ITEMS(row);
                for (index_t i = 0; i < k; ++i) values_.push_back(number(items[i]));
            }
        }
        if (n < 1 || dim < 1) throw std::invalid_argument("the reference must be a non-empty [n, D] path");
        if (dim > (index_t(1) << 24)) throw std::invalid_argument("the reference has too many dimensions");
        for (std::size_t i = 0; i < values_.size(); ++i)
            if (!(std::fabs(values_[i]) <= limit_))
                throw std::invalid_argument("the reference's point " + std::to_string(static_cast<index_t>(i) / dim) +
                                            " has a coordinate that is not finite or beyond +-" + shown(limit_));
        return static_cast<int>(dim);
    }

    double limit_;
    std::optional<navdtw::PointStepper> stepper_;  // set by the constructor, never empty after it
    std::vector<double> values_;                   // the reference being read (reused)
    std::vector<float> point_;
    mutable std::mutex lock_;
};

}  // namespace

void init_reward(py::module_& m) {
    m.def("reward_step_points", &step_points, py::arg("ref_values"), py::arg("columns"), py::arg("ref_offsets"),
          py::arg("steps"), py::arg("dtw"), py::arg("ndtw"), py::arg("active"), py::arg("points"), py::arg("rewards"),
          py::arg("threshold"), py::arg("workers") = 1, "Streaming nDTW reward step over coordinate references.");
    m.def("reward_step_nodes", &step_nodes, py::arg("ref_values"), py::arg("columns"), py::arg("ref_offsets"),
          py::arg("steps"), py::arg("dtw"), py::arg("ndtw"), py::arg("active"), py::arg("points"), py::arg("rewards"),
          py::arg("distances"), py::arg("env") = py::none(), py::arg("threshold") = 3.0, py::arg("workers") = 1,
          "Streaming nDTW reward step over node references.");
    py::class_<LiveStepper>(
        m, "PointStepper",
        "One episode's streaming nDTW against a coordinate reference ([n, D] array or sequence of points, "
        "rounded to float32): the last DP column, extended by one point per step (as reward_step_points steps a "
        "batch); limit: the largest coordinate magnitude accepted (navdtw.engine.MAX_COORDINATE).")
        .def(py::init<py::handle, double, double>(), py::arg("reference"), py::arg("threshold"), py::arg("limit"))
        .def("step", &LiveStepper::step, py::arg("point"),
             "Appends a point (a sequence of D numbers) and returns the episode's nDTW after it.")
        .def("reset", &LiveStepper::reset, py::arg("reference") = py::none(),
             "Starts the episode again, against a new reference if given.")
        .def_property_readonly("dtw", [](const LiveStepper& s) { return s.read(&navdtw::PointStepper::dtw); })
        .def_property_readonly("ndtw", [](const LiveStepper& s) { return s.read(&navdtw::PointStepper::ndtw); })
        .def_property_readonly("gain", [](const LiveStepper& s) { return s.read(&navdtw::PointStepper::gain); })
        .def_property_readonly("steps", [](const LiveStepper& s) { return s.read(&navdtw::PointStepper::steps); })
        .def_property_readonly("size", [](const LiveStepper& s) { return s.read(&navdtw::PointStepper::size); })
        .def_property_readonly("dim", [](const LiveStepper& s) { return s.read(&navdtw::PointStepper::dim); })
        .def_property_readonly("threshold",
                               [](const LiveStepper& s) { return s.read(&navdtw::PointStepper::threshold); });
}
