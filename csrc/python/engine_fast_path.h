// TimerEngine's methods that bypass pybind11's dispatcher for speed (engine_fast_path.cpp):
// start/stop, op_begin/op_end/comm_end, the __init__ that fills the instance's engine slot, and
// the C table straggler._ops calls (ENGINE_API). bind_engine.cpp makes the class and calls these.
#pragma once

#include <Python.h>
#include <pybind11/pybind11.h>

#include "timing/timer_engine.h"

namespace straggler::python {

// The py::custom_type_setup hook of the TimerEngine class: appends to its instances the slot
// where __init__ stores the C++ object (the fast path reads it there).
void add_engine_slot(PyHeapTypeObject* heap_type);

// A timer given as an int id (no string is built: the hot path) or as a str name; raises
// ValueError/TypeError naming a bad `timer`.
int timer_arg(TimerEngine& engine, pybind11::handle timer);

// Adds the fast methods to `engine`, whose pybind11 __init__ must be defined already (it is
// wrapped), and ENGINE_API to `m`. `cuda_error` is the CudaError type the methods raise; it must
// stay alive (the module attribute keeps it).
void add_engine_fast_path(pybind11::module_& m, pybind11::class_<TimerEngine>& engine,
                          pybind11::handle cuda_error);

}  // namespace straggler::python
