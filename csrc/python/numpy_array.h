// Flat C++ vectors handed to Python as NumPy arrays: one copy per batch (the bindings cross the
// boundary once per report, with plain data).
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstring>
#include <vector>

namespace straggler::python {

// A float64 array of `rows` x `cols` (shape (rows,) when cols is 0) copied from row-major
// `values`, which holds exactly that many.
inline pybind11::array_t<double> to_numpy(const std::vector<double>& values, pybind11::ssize_t rows,
                                          pybind11::ssize_t cols) {
  pybind11::array_t<double> out(cols > 0 ? std::vector<pybind11::ssize_t>{rows, cols}
                                         : std::vector<pybind11::ssize_t>{rows});
  if (!values.empty())
    std::memcpy(out.mutable_data(), values.data(), values.size() * sizeof(double));
  return out;
}

}  // namespace straggler::python
