// pybind11 bindings of the seeded random walker (cpp/navdtw/walks.hpp) used by baseline.py.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <string>

#include "bindings_common.hpp"
#include "navdtw/walks.hpp"

namespace py = pybind11;
using namespace navdtw::bind;

namespace {

// Every index the walker follows is checked here once, so a walk can never leave the arrays.
navdtw::WalkSpec walk_spec(const I64Array& indptr, const I64Array& indices, const I64Array& starts,
                           const I64Array& base, const I64Array& steps, std::uint64_t seed) {
    if (indptr.ndim() != 1 || indptr.shape(0) < 2) throw std::invalid_argument("indptr must be 1-D with >= 2 entries");
    const std::int64_t n = indptr.shape(0) - 1, nnz = indices.shape(0);
    const std::int64_t* p = indptr.data();
    if (p[0] != 0 || p[n] != nnz) throw std::invalid_argument("indptr must start at 0 and end at len(indices)");
    for (std::int64_t i = 0; i < n; ++i)
        if (p[i + 1] < p[i]) throw std::invalid_argument("indptr decreases at node " + std::to_string(i));
    for (std::int64_t k = 0; k < nnz; ++k)
        if (indices.data()[k] < 0 || indices.data()[k] >= n)
            throw std::invalid_argument("indices[" + std::to_string(k) + "] is not a node id");
    if (starts.shape(0) != base.shape(0)) throw std::invalid_argument("starts and base differ in length");
    for (py::ssize_t r = 0; r < starts.shape(0); ++r) {
        const std::int64_t s = starts.data()[r], b = base.data()[r];
        if (s < 0 || s >= n || b < 0 || b > s)
            throw std::invalid_argument("reference " + std::to_string(r) + ": start or base node out of range");
    }
    for (py::ssize_t k = 0; k < steps.shape(0); ++k)
        if (steps.data()[k] < 0) throw std::invalid_argument("step counts must be >= 0");
    return {p, indices.data(), n, starts.data(), base.data(), starts.shape(0), steps.data(), steps.shape(0), seed};
}

py::tuple random_walks(const I64Array& indptr, const I64Array& indices, const I64Array& starts, const I64Array& base,
                       const I64Array& steps, std::int64_t first, std::int64_t count, std::uint64_t seed, int workers) {
    if (first < 0 || count < 0) throw std::invalid_argument("first and count must be >= 0");
    const navdtw::WalkSpec spec = walk_spec(indptr, indices, starts, base, steps, seed);
    I64Array offsets(count + 1), refs(count);
    std::int64_t* o = offsets.mutable_data();
    std::int64_t* r = refs.mutable_data();
    run_without_gil([&](const navdtw::Poll& poll) { navdtw::walk_lengths(spec, first, count, o, r, workers, poll); });
    I64Array values(o[count]);
    std::int64_t* v = values.mutable_data();
    run_without_gil([&](const navdtw::Poll& poll) { navdtw::walk_fill(spec, first, count, o, r, v, workers, poll); });
    return py::make_tuple(values, offsets, refs);
}

}  // namespace

void init_walks(py::module_& m) {
    m.def("random_walks", &random_walks, py::arg("indptr"), py::arg("indices"), py::arg("starts"), py::arg("base"),
          py::arg("step_counts"), py::arg("first"), py::arg("count"), py::arg("seed"), py::arg("workers") = 1,
          "Seeded random walks; returns (local node ids, offsets, reference index of each walk).");
}
