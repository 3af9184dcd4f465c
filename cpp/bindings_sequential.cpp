// pybind11 bindings of the without-replacement confidence sequences (cpp/navdtw/sequential.hpp)
// used by sequential.py.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <mutex>

#include "bindings_common.hpp"
#include "navdtw/sequential.hpp"

namespace py = pybind11;
using namespace navdtw::bind;

namespace {

using F64Array = py::array_t<double, py::array::c_style>;

// One confidence sequence fed value by value; the lock keeps concurrent calls from interleaving
// (the module runs without the GIL on free-threaded Python).
class LiveSequence {
public:
    LiveSequence(std::int64_t population, double alpha, std::int64_t grid) : cs_(population, alpha, grid) {}

    void extend(const F64Array& x) {
        if (x.ndim() != 1) throw std::invalid_argument("values must be 1-D");
        const double* v = x.data();
        const std::int64_t n = x.shape(0);
        std::lock_guard<std::mutex> hold(lock_);
        if (n > cs_.population() - cs_.count()) throw std::invalid_argument("more values than the population holds");
        for (std::int64_t i = 0; i < n; ++i)
            if (!(v[i] >= 0 && v[i] <= 1)) throw std::invalid_argument("values must lie in [0, 1]");
        py::gil_scoped_release nogil;
        for (std::int64_t i = 0; i < n; ++i) cs_.update(v[i]);
    }
    void update(double x) {
        std::lock_guard<std::mutex> hold(lock_);
        cs_.update(x);
    }
    py::tuple interval() const {
        std::lock_guard<std::mutex> hold(lock_);
        return py::make_tuple(cs_.lower(), cs_.upper());
    }
    std::int64_t count() const {
        std::lock_guard<std::mutex> hold(lock_);
        return cs_.count();
    }
    double sum() const {
        std::lock_guard<std::mutex> hold(lock_);
        return cs_.sum();
    }
    std::int64_t emptied() const {
        std::lock_guard<std::mutex> hold(lock_);
        return cs_.emptied();
    }

private:
    navdtw::WorConfidenceSequence cs_;
    mutable std::mutex lock_;
};

py::tuple wor_path(const F64Array& x, std::int64_t population, double alpha, std::int64_t grid) {
    if (x.ndim() != 1) throw std::invalid_argument("values must be 1-D");
    const std::int64_t n = x.shape(0);
    if (n > population) throw std::invalid_argument("more values than the population holds");
    const double* v = x.data();
    for (std::int64_t i = 0; i < n; ++i)
        if (!(v[i] >= 0 && v[i] <= 1)) throw std::invalid_argument("values must lie in [0, 1]");
    navdtw::WorConfidenceSequence check(population, alpha, grid);  // refuses bad settings before allocating
    (void)check;
    F64Array lower(n), upper(n);
    double* lo = lower.mutable_data();
    double* hi = upper.mutable_data();
    std::int64_t emptied = 0;
    run_without_gil(
        [&](const navdtw::Poll&) { emptied = navdtw::wor_confidence_path(v, n, population, alpha, grid, lo, hi); });
    return py::make_tuple(lower, upper, emptied);
}

}  // namespace

void init_sequential(py::module_& m) {
    py::class_<LiveSequence>(m, "WorConfidenceSequence",
                             "A confidence sequence for the mean of a finite population of values in [0, 1] sampled "
                             "without replacement.")
        .def(py::init<std::int64_t, double, std::int64_t>(), py::arg("population"), py::arg("alpha"), py::arg("grid"))
        .def("update", &LiveSequence::update, py::arg("x"))
        .def("extend", &LiveSequence::extend, py::arg("x"))
        .def("interval", &LiveSequence::interval)
        .def_property_readonly("count", &LiveSequence::count)
        .def_property_readonly("sum", &LiveSequence::sum)
        .def_property_readonly("emptied", &LiveSequence::emptied);
    m.def("wor_confidence_path", &wor_path, py::arg("x"), py::kw_only(), py::arg("population"), py::arg("alpha"),
          py::arg("grid"),
          "The confidence sequence's (lower, upper) after each value of x, in [0, 1], and the count at which no "
          "mean was left (0: never).");
}
