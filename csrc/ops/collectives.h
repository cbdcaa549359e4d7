// The collective observer of straggler._ops (collectives.cpp): see that file's comment.
#pragma once

#include <pybind11/pybind11.h>

namespace straggler_ops {

// Adds the collective observer's functions to the module (called from observer.cpp's module).
void bind_collectives(pybind11::module_& m);

}  // namespace straggler_ops
