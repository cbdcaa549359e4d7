// TimerEngine's fast path: the methods pybind11's generic dispatcher would make slower than the
// engine's own work (start/stop, the hot path; op_begin/op_end/comm_end, once per op), the
// __init__ that fills the instance's engine slot they read, and the C table straggler._ops calls
// without Python (ENGINE_API). All are plain CPython METH_FASTCALL methods or C functions; they
// sit in this one translation unit with the argument parsing they call, so nothing on the hot
// path is an out-of-line call into another file.
//
// Why hand-parsed (benchmarks/README.md, "Timer engine"; CPU, quiet runs): a start/stop pair by
// id costs 307 ns here against 665 ns through pybind11's generic dispatcher (host backend; the
// bare perf_counter_ns pair is 182 ns), 657 vs 817 ns on the simulated CUDA driver: dispatch,
// not the engine, was most of the cost. The GPU floor per timed entry is the event pair
// (5.1-5.8 us on the H100), the section's Python 0.47 us above it (benchmarks/gpu/README.md).
#include "python/engine_fast_path.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "timing/engine_api.h"

namespace py = pybind11;

namespace straggler::python {
namespace {

// ---- The engine slot ----------------------------------------------------------------------------

// Each TimerEngine instance has one extra pointer-sized slot after pybind11's own layout, added
// to the type through the public py::custom_type_setup hook: its C++ object, stored by
// __init__. The hot path reads it there; py::cast would cost more than the engine's work, and
// pybind11's instance layout is not public. Its offset is fixed once the type is made.
Py_ssize_t g_engine_slot_offset = 0;

straggler::TimerEngine*& engine_slot(PyObject* self) {
  return *reinterpret_cast<straggler::TimerEngine**>(reinterpret_cast<char*>(self) +
                                                     g_engine_slot_offset);
}

}  // namespace

// Appends the slot to the type's instances (zeroed by tp_alloc: null until __init__ stores it).
void add_engine_slot(PyHeapTypeObject* heap_type) {
  PyTypeObject* type = &heap_type->ht_type;
  g_engine_slot_offset = type->tp_basicsize;
  type->tp_basicsize += static_cast<Py_ssize_t>(sizeof(straggler::TimerEngine*));
}

// ---- Arguments (a timer, a stream) and exceptions -----------------------------------------------

int timer_arg(straggler::TimerEngine& engine, py::handle timer) {
  if (PyLong_Check(timer.ptr()) && !PyBool_Check(timer.ptr())) {
    int overflow = 0;
    const long long id = PyLong_AsLongLongAndOverflow(timer.ptr(), &overflow);
    if (overflow != 0 || id < INT_MIN || id > INT_MAX) {
      throw py::value_error("`timer=" + py::repr(timer).cast<std::string>() +
                            "` is not a timer id of this engine (use timer_id(name))");
    }
    return static_cast<int>(id);
  }
  if (PyUnicode_Check(timer.ptr())) {
    Py_ssize_t size = 0;
    const char* data = PyUnicode_AsUTF8AndSize(timer.ptr(), &size);
    if (data == nullptr) throw py::error_already_set();
    return engine.timer_id(std::string_view(data, static_cast<std::size_t>(size)));
  }
  throw py::type_error("`timer` must be an int id or a str name, got " +
                       py::repr(py::type::handle_of(timer)).cast<std::string>());
}

namespace {

straggler::TimerEngine& engine_of(PyObject* self) {
  straggler::TimerEngine* engine = engine_slot(self);
  if (engine == nullptr) throw py::type_error("TimerEngine.__init__() was not called");
  return *engine;
}

std::uintptr_t stream_arg(PyObject* stream) {
  if (stream == nullptr) return 0;
  if (PyLong_Check(stream) && !PyBool_Check(stream)) {
    const unsigned long long v = PyLong_AsUnsignedLongLong(stream);
    if (!(v == static_cast<unsigned long long>(-1) && PyErr_Occurred())) {
      return static_cast<std::uintptr_t>(v);
    }
    PyErr_Clear();
  }
  throw py::value_error("`stream=" + py::repr(stream).cast<std::string>() +
                        "` must be a CUstream handle as a non-negative int (0: default stream)");
}

// (timer, stream=0) from a vectorcall, positional or by keyword.
void parse_timer_stream(const char* fn, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames,
                        PyObject** timer, PyObject** stream) {
  PyObject* slots[2] = {nullptr, nullptr};
  if (nargs > 2) {
    throw py::type_error(std::string(fn) + "() takes at most 2 arguments (" +
                         std::to_string(nargs) + " given)");
  }
  for (Py_ssize_t i = 0; i < nargs; ++i) slots[i] = args[i];
  const Py_ssize_t nkw = kwnames != nullptr ? PyTuple_GET_SIZE(kwnames) : 0;
  for (Py_ssize_t k = 0; k < nkw; ++k) {
    PyObject* key = PyTuple_GET_ITEM(kwnames, k);
    int slot = -1;
    if (PyUnicode_CompareWithASCIIString(key, "timer") == 0) slot = 0;
    if (PyUnicode_CompareWithASCIIString(key, "stream") == 0) slot = 1;
    if (slot < 0) {
      throw py::type_error(std::string(fn) + "() got an unexpected keyword argument " +
                           py::repr(key).cast<std::string>());
    }
    if (slots[slot] != nullptr) {
      throw py::type_error(std::string(fn) + "() got multiple values for argument '" +
                           (slot == 0 ? "timer" : "stream") + "'");
    }
    slots[slot] = args[nargs + k];
  }
  if (slots[0] == nullptr) {
    throw py::type_error(std::string(fn) + "() missing required argument 'timer'");
  }
  *timer = slots[0];
  *stream = slots[1];
}

PyObject* g_cuda_error = nullptr;  // the CudaError type, kept alive by the module attribute

// Runs `body`, turning C++ exceptions into the Python ones the rest of the module raises.
template <class Body>
PyObject* guarded(Body&& body) {
  try {
    body();
    Py_RETURN_NONE;
  } catch (const straggler::CudaError& e) {
    PyErr_SetString(g_cuda_error, e.what());
  } catch (const std::invalid_argument& e) {
    PyErr_SetString(PyExc_ValueError, e.what());
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (const py::builtin_exception& e) {
    e.set_error();
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  }
  return nullptr;
}

// ---- start()/stop(): the hot path as METH_FASTCALL methods --------------------------------------
// pybind11's generic dispatcher costs more than the engine's own work here, so these two parse
// (timer, stream=0) themselves. The method descriptor has already checked that `self` is a
// TimerEngine (or subclass) when they run.

// engine.start(timer, stream=0) / engine.stop(timer, stream=0): `Name` for the messages.
template <void (straggler::TimerEngine::*Method)(int, std::uintptr_t), const char* Name>
PyObject* engine_call(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return guarded([&] {
    PyObject *timer = nullptr, *stream = nullptr;
    parse_timer_stream(Name, args, nargs, kwnames, &timer, &stream);
    straggler::TimerEngine& e = engine_of(self);
    (e.*Method)(timer_arg(e, timer), stream_arg(stream));
  });
}
constexpr char kStart[] = "start";
constexpr char kStop[] = "stop";
constexpr auto engine_start = engine_call<&straggler::TimerEngine::start, kStart>;
constexpr auto engine_stop = engine_call<&straggler::TimerEngine::stop, kStop>;

PyMethodDef g_hot_methods[] = {
    {"start", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(engine_start)),
     METH_FASTCALL | METH_KEYWORDS,
     "start($self, timer, stream=0)\n--\n\nRecord the start of `timer` (an int id or a str name) "
     "on `stream` (a raw CUstream as int; 0: default stream)."},
    {"stop", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(engine_stop)),
     METH_FASTCALL | METH_KEYWORDS,
     "stop($self, timer, stream=0)\n--\n\nRecord the stop of `timer` on `stream`."},
};

// ---- op_begin()/op_end()/comm_end(): busy time, once per op (the Python observer's path) --------

long long int_arg(const char* name, PyObject* v) {
  if (PyLong_Check(v) && !PyBool_Check(v)) {
    int overflow = 0;
    const long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (overflow == 0 && !(x == -1 && PyErr_Occurred())) return x;
    PyErr_Clear();
  }
  throw py::value_error(std::string("`") + name + "=" + py::repr(v).cast<std::string>() +
                        "` must be an int");
}

void check_nargs(const char* fn, Py_ssize_t nargs, Py_ssize_t lo, Py_ssize_t hi) {
  if (nargs < lo || nargs > hi) {
    throw py::type_error(std::string(fn) + "() takes " + std::to_string(lo) + " to " +
                         std::to_string(hi) + " positional arguments (" + std::to_string(nargs) +
                         " given)");
  }
}

PyObject* engine_op_begin(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  long long token = -1;
  PyObject* ok = guarded([&] {
    check_nargs("op_begin", nargs, 0, 1);
    token = engine_of(self).op_begin(stream_arg(nargs > 0 ? args[0] : nullptr));
  });
  if (ok == nullptr) return nullptr;
  Py_DECREF(ok);
  return PyLong_FromLongLong(token);
}

PyObject* engine_op_end(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  return guarded([&] {
    check_nargs("op_end", nargs, 1, 3);
    const long long token = int_arg("token", args[0]);
    const long long op_timer = nargs > 1 ? int_arg("op_timer", args[1]) : -1;
    if (op_timer < -1 || op_timer > INT_MAX) {
      throw py::value_error("`op_timer=" + std::to_string(op_timer) + "` must be a timer id or -1");
    }
    engine_of(self).op_end(token, static_cast<int>(op_timer),
                           stream_arg(nargs > 2 ? args[2] : nullptr));
  });
}

PyObject* engine_comm_end(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  return guarded([&] {
    check_nargs("comm_end", nargs, 0, 1);
    engine_of(self).comm_end(stream_arg(nargs > 0 ? args[0] : nullptr));
  });
}

PyMethodDef g_op_methods[] = {
    {"op_begin", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(engine_op_begin)),
     METH_FASTCALL,
     "op_begin($self, stream=0, /)\n--\n\nA compute op starts on `stream`: a token for "
     "op_end(), or -1 when no busy scope is open (the op is not timed)."},
    {"op_end", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(engine_op_end)),
     METH_FASTCALL,
     "op_end($self, token, op_timer=-1, stream=0, /)\n--\n\nThe op of `token` ended: its GPU "
     "segment goes to the open busy scope and, if op_timer >= 0, to that timer."},
    {"comm_end", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(engine_comm_end)),
     METH_FASTCALL,
     "comm_end($self, stream=0, /)\n--\n\nA collective ended on `stream`: the busy chain "
     "restarts after it, so its time is in no segment."},
};

// ---- __init__: stores the C++ object in the instance's slot -------------------------------------

PyObject* g_engine_construct = nullptr;  // pybind11's __init__ for TimerEngine (makes the object)

// Calls pybind11's __init__ with the same arguments, then stores the object it made in `self`'s
// slot. The method descriptor has checked that `self` is a TimerEngine.
PyObject* engine_init(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  const Py_ssize_t nkw = kwnames != nullptr ? PyTuple_GET_SIZE(kwnames) : 0;
  std::vector<PyObject*> call(static_cast<std::size_t>(1 + nargs + nkw));
  call[0] = self;
  std::copy(args, args + nargs + nkw, call.begin() + 1);
  PyObject* none = PyObject_Vectorcall(g_engine_construct, call.data(),
                                       static_cast<std::size_t>(1 + nargs), kwnames);
  if (none == nullptr) return nullptr;
  Py_DECREF(none);
  return guarded([&] { engine_slot(self) = py::cast<straggler::TimerEngine*>(py::handle(self)); });
}

PyMethodDef g_init_method[] = {
    {"__init__", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(engine_init)),
     METH_FASTCALL | METH_KEYWORDS,
     "__init__($self, /, backend='auto', capacity=8192, device=0)\n--\n\nbackend: 'auto' (cuda "
     "if available, else host), 'cuda' (CudaError if unavailable) or 'host'; capacity: samples "
     "kept per timer; device: CUDA ordinal."},
};

// Adds `defs` to the class as method descriptors (they check `self`'s type before running).
template <std::size_t N>
void add_methods(py::class_<straggler::TimerEngine>& cls, PyMethodDef (&defs)[N]) {
  for (PyMethodDef& def : defs) {
    PyObject* descr = PyDescr_NewMethod(reinterpret_cast<PyTypeObject*>(cls.ptr()), &def);
    if (descr == nullptr) throw py::error_already_set();
    cls.attr(def.ml_name) = py::reinterpret_steal<py::object>(descr);
  }
}

// ---- The C table for straggler._ops (engine_api.h) ----------------------------------------------

template <class Body>
int c_guarded(char* err, std::size_t errlen, Body&& body) noexcept {
  try {
    body();
    return 0;
  } catch (const std::exception& e) {
    if (err != nullptr && errlen > 0) {
      std::strncpy(err, e.what(), errlen - 1);
      err[errlen - 1] = '\0';
    }
  } catch (...) {
    if (err != nullptr && errlen > 0) std::strncpy(err, "unknown C++ exception", errlen - 1);
  }
  return -1;
}

straggler::TimerEngine* as_engine(void* p) { return static_cast<straggler::TimerEngine*>(p); }

const StragglerEngineApi g_engine_api = {
    STRAGGLER_ENGINE_API_VERSION,
    [](void* e, uintptr_t stream, long long* token, char* err, size_t errlen) {
      return c_guarded(err, errlen, [&] { *token = as_engine(e)->op_begin(stream); });
    },
    [](void* e, long long token, int op_timer, uintptr_t stream, char* err, size_t errlen) {
      return c_guarded(err, errlen, [&] { as_engine(e)->op_end(token, op_timer, stream); });
    },
    [](void* e, uintptr_t stream, char* err, size_t errlen) {
      return c_guarded(err, errlen, [&] { as_engine(e)->comm_end(stream); });
    },
    [](void* e, const char* name, size_t len, int* id, char* err, size_t errlen) {
      return c_guarded(err, errlen,
                       [&] { *id = as_engine(e)->timer_id(std::string_view(name, len)); });
    },
    [](void* e) {
      try {
        return as_engine(e)->open_scopes();
      } catch (...) {
        return 0;
      }
    },
};

}  // namespace

void add_engine_fast_path(py::module_& m, py::class_<straggler::TimerEngine>& engine,
                          py::handle cuda_error) {
  g_cuda_error = cuda_error.ptr();
  // __init__: pybind11's (defined by the caller), then the new C++ object's address goes to the
  // slot.
  g_engine_construct = py::object(engine.attr("__init__")).release().ptr();  // kept for good
  add_methods(engine, g_init_method);
  m.attr("ENGINE_API") =
      py::capsule(static_cast<const void*>(&g_engine_api), STRAGGLER_ENGINE_API_CAPSULE);
  add_methods(engine, g_op_methods);
  add_methods(engine, g_hot_methods);
}

}  // namespace straggler::python
