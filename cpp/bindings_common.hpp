// Shared helpers of the pybind11 binding files: array views, checks, and the GIL-free runner.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "navdtw/batch.hpp"

namespace navdtw::bind {

namespace py = pybind11;

// No forcecast: the Python layer chooses dtypes; here only exact or safely castable input passes.
using F32Array = py::array_t<float, py::array::c_style>;
using I64Array = py::array_t<std::int64_t, py::array::c_style>;

// Warping paths store one byte per DP cell; refuse before allocating more than this.
constexpr index_t kMaxPathCells = index_t(1) << 32;

enum class NodeType { kInt32, kInt64 };

// precision="double" or "single" (float32 sums), as the Python API spells it.
inline bool single_precision(const std::string& precision) {
    if (precision == "double") return false;
    if (precision == "single") return true;
    throw std::invalid_argument("precision must be 'double' or 'single', not '" + precision + "'");
}

inline void check_offsets(const I64Array& off, index_t n_values, const char* name) {
    if (off.ndim() != 1 || off.shape(0) < 1)
        throw std::invalid_argument(std::string(name) + ": offsets must be 1-D with at least one element");
    const std::int64_t* o = off.data();
    const index_t n = off.shape(0) - 1;
    if (o[0] != 0) throw std::invalid_argument(std::string(name) + ": offsets[0] must be 0");
    for (index_t i = 0; i < n; ++i)
        if (o[i + 1] < o[i])
            throw std::invalid_argument(std::string(name) + ": offsets decrease at path " + std::to_string(i));
    if (o[n] != n_values)
        throw std::invalid_argument(std::string(name) + ": offsets[-1] = " + std::to_string(o[n]) + " but there are " +
                                    std::to_string(n_values) + " values");
}

inline navdtw::PointSet point_set(const F32Array& v, const I64Array& off, const char* name) {
    if (v.ndim() != 2 || v.shape(1) < 1)
        throw std::invalid_argument(std::string(name) + ": coordinate values must have shape [N, D], D >= 1");
    if (v.shape(1) > std::numeric_limits<int>::max()) throw std::invalid_argument("dimension too large");
    check_offsets(off, v.shape(0), name);
    return {v.data(), off.data(), off.shape(0) - 1, static_cast<int>(v.shape(1))};
}

inline NodeType node_type(const py::array& a, const py::array& b) {
    const auto i32 = py::dtype::of<std::int32_t>(), i64 = py::dtype::of<std::int64_t>();
    if (a.dtype().is(i32) && b.dtype().is(i32)) return NodeType::kInt32;
    if (a.dtype().is(i64) && b.dtype().is(i64)) return NodeType::kInt64;
    throw py::type_error("node paths must both be int32 or both int64");
}

template <class I>
navdtw::NodeSet<I> node_set(const py::array& v, const I64Array& off, const char* name) {
    if (v.ndim() != 1) throw std::invalid_argument(std::string(name) + ": node values must be 1-D");
    if (!(v.flags() & py::array::c_style))
        throw std::invalid_argument(std::string(name) + ": values must be contiguous");
    check_offsets(off, v.shape(0), name);
    return {static_cast<const I*>(v.data()), off.data(), off.shape(0) - 1};
}

inline std::vector<navdtw::DistanceMatrix> matrices(const std::vector<F32Array>& ds) {
    std::vector<navdtw::DistanceMatrix> out;
    out.reserve(ds.size());
    for (std::size_t k = 0; k < ds.size(); ++k) {
        const F32Array& d = ds[k];
        if (d.ndim() != 2 || d.shape(0) != d.shape(1))
            throw std::invalid_argument("distances[" + std::to_string(k) + "] must be a square [V, V] matrix");
        out.push_back({d.data(), d.shape(0)});
    }
    return out;
}

inline std::tuple<const float*, index_t, int> single_points(const F32Array& a, const char* name) {
    if (a.ndim() != 2 || a.shape(1) < 1 || a.shape(0) < 1)
        throw std::invalid_argument(std::string(name) + " must be a non-empty [n, D] array");
    return {a.data(), a.shape(0), static_cast<int>(a.shape(1))};
}

template <class I>
std::tuple<const I*, index_t> single_nodes(const py::array& a, const char* name) {
    if (a.ndim() != 1 || a.shape(0) < 1)
        throw std::invalid_argument(std::string(name) + " must be a non-empty 1-D node path");
    if (!(a.flags() & py::array::c_style)) throw std::invalid_argument(std::string(name) + " must be contiguous");
    return {static_cast<const I*>(a.data()), a.shape(0)};
}

template <class I>
void check_single_nodes(const I* p, index_t n, index_t n_nodes, const char* name) {
    for (index_t k = 0; k < n; ++k)
        if (p[k] < 0 || static_cast<index_t>(p[k]) >= n_nodes)
            throw std::invalid_argument(
                std::string(name) + " has node id " + std::to_string(static_cast<index_t>(p[k])) + " at position " +
                std::to_string(k) + ", outside [0, " + std::to_string(n_nodes) + ") of distances");
}

inline void check_path_memory(index_t n, index_t m) {
    if (n > kMaxPathCells / m)
        throw std::invalid_argument(
            "a warping path of " + std::to_string(n) + " x " + std::to_string(m) +
            " points needs one byte per DP cell, over the 4 GiB limit; use dtw() for the value");
}

inline navdtw::PairIndex make_pairs(const std::optional<I64Array>& pairs, bool all_pairs, index_t nr, index_t nq,
                                    index_t& B) {
    navdtw::PairIndex P;
    if (pairs && all_pairs) throw std::invalid_argument("pairs and all_pairs are mutually exclusive");
    if (pairs) {
        if (pairs->ndim() != 2 || pairs->shape(1) != 2)
            throw std::invalid_argument("pairs must have shape [B, 2] (reference index, query index)");
        P.mode = navdtw::PairMode::kExplicit;
        P.pairs = pairs->data();
        B = pairs->shape(0);
    } else if (all_pairs) {
        P.mode = navdtw::PairMode::kAll;
        P.n_queries = nq;
        if (nq > 0 && nr > std::numeric_limits<index_t>::max() / nq)
            throw std::invalid_argument("all_pairs: too many pairs");
        B = nr * nq;
    } else {
        if (nr != nq)
            throw std::invalid_argument(
                "references and queries must have the same length for element-wise pairs (got " + std::to_string(nr) +
                " and " + std::to_string(nq) + "); pass pairs= to choose pairs");
        B = nr;
    }
    return P;
}

// Runs fn(poll) with the GIL released. Safe because fn only touches buffers whose owners the
// caller holds for the whole call. poll() re-takes the GIL briefly to let Python see Ctrl-C;
// a pending KeyboardInterrupt is raised once the workers have stopped.
template <class Fn>
void run_without_gil(const Fn& fn) {
    bool interrupted = false;
    {
        py::gil_scoped_release nogil;
        const navdtw::Poll poll = [] {
            py::gil_scoped_acquire gil;
            return PyErr_CheckSignals() != 0;
        };
        try {
            fn(poll);
        } catch (const navdtw::Interrupted&) {
            interrupted = true;
        }
    }
    if (interrupted) throw py::error_already_set();
}

}  // namespace navdtw::bind
