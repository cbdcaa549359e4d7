// The only file that includes pybind11: converts between Python and the C++ core.
//
// One block per component, each in its own bind_*() function; PYBIND11_MODULE only calls them.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "driver/cuda_driver.h"
#include "driver/nvml.h"
#include "telemetry/nvml_sampler.h"
#include "telemetry/probe.h"
#include "timing/engine_api.h"
#include "timing/timer_engine.h"

namespace py = pybind11;

namespace {

// ================================================================================================
// Timing engine: cuda_status, CudaError, TimerEngine, SUMMARY_COLUMNS   (timer_engine.h)
// ================================================================================================

// A timer given as an int id (no string is built: the hot path) or as a str name.
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

// ---- start()/stop(): the hot path as METH_FASTCALL methods -------------------------------------
// pybind11's generic dispatcher costs more than the engine's own work here, so these two parse
// (timer, stream=0) themselves. The method descriptor has already checked that `self` is a
// TimerEngine (or subclass) when they run.

PyObject* g_cuda_error = nullptr;  // the CudaError type, kept alive by the module attribute

// Each TimerEngine instance has one extra pointer-sized slot after pybind11's own layout, added
// to the type through the public py::custom_type_setup hook: its C++ object, stored by
// __init__. The hot path reads it there; py::cast would cost more than the engine's work, and
// pybind11's instance layout is not public. Its offset is fixed once the type is made.
Py_ssize_t g_engine_slot_offset = 0;

straggler::TimerEngine*& engine_slot(PyObject* self) {
  return *reinterpret_cast<straggler::TimerEngine**>(reinterpret_cast<char*>(self) +
                                                     g_engine_slot_offset);
}

// Appends the slot to the type's instances (zeroed by tp_alloc: null until __init__ stores it).
void add_engine_slot(PyHeapTypeObject* heap_type) {
  PyTypeObject* type = &heap_type->ht_type;
  g_engine_slot_offset = type->tp_basicsize;
  type->tp_basicsize += static_cast<Py_ssize_t>(sizeof(straggler::TimerEngine*));
}

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

// ---- op_begin()/op_end()/comm_end(): busy time, once per op (the Python observer's path) -------

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

// ---- __init__: stores the C++ object in the instance's slot ----------------------------------

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

// ---- The C table for straggler._ops (engine_api.h) ---------------------------------------------

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

py::array_t<double> to_numpy(const std::vector<double>& values, py::ssize_t rows,
                             py::ssize_t cols) {
  py::array_t<double> out(cols > 0 ? std::vector<py::ssize_t>{rows, cols}
                                   : std::vector<py::ssize_t>{rows});
  if (!values.empty())
    std::memcpy(out.mutable_data(), values.data(), values.size() * sizeof(double));
  return out;
}

void bind_timer_engine(py::module_& m) {
  using straggler::TimerEngine;

  g_cuda_error =
      py::register_exception<straggler::CudaError>(m, "CudaError", PyExc_RuntimeError).ptr();
  py::setattr(g_cuda_error, "__doc__",
              py::str("A CUDA driver call failed; the message names the call and the driver's "
                      "error."));

  py::tuple columns(static_cast<std::size_t>(straggler::kNumColumns));
  for (int i = 0; i < straggler::kNumColumns; ++i) columns[i] = straggler::kSummaryColumns[i];
  m.attr("SUMMARY_COLUMNS") = columns;

  m.def(
      "cuda_status",
      [](int device) {
        straggler::CudaStatus status;
        {
          py::gil_scoped_release release;  // cuInit can take seconds on a real machine
          status = straggler::cuda_status(device);
        }
        return std::make_tuple(status.available, status.reason);
      },
      py::arg("device") = 0,
      "(available, reason): whether the CUDA driver loads, initialises and has `device`. "
      "Never raises.");

  py::class_<TimerEngine> engine(m, "TimerEngine",
                                 "Named start/stop timers on CUDA streams (pooled events) or the "
                                 "host clock, with bounded per-name ring buffers and statistics "
                                 "in ms.",
                                 py::custom_type_setup(add_engine_slot));
  engine
      // Makes the C++ object; wrapped below by engine_init (the slot).
      .def(py::init([](const std::string& backend, long long capacity, int device) {
             py::gil_scoped_release release;  // may load and initialise the driver
             return std::make_unique<TimerEngine>(backend, capacity, device);
           }),
           py::arg("backend") = "auto", py::arg("capacity") = 8192, py::arg("device") = 0,
           "backend: 'auto' (cuda if available, else host), 'cuda' (CudaError if unavailable) "
           "or 'host'; capacity: samples kept per timer; device: CUDA ordinal.")
      .def_property_readonly("backend", &TimerEngine::backend, "'cuda' or 'host'.")
      .def_property_readonly("capacity", &TimerEngine::capacity,
                             "Ring-buffer length (samples kept) per timer.")
      .def_property_readonly("closed", &TimerEngine::closed, "Whether close() was called.")
      .def(
          "timer_id", [](TimerEngine& e, std::string_view name) { return e.timer_id(name); },
          py::arg("name"), "Stable small int id for `name`; creates the timer.")
      .def("timer_name", &TimerEngine::timer_name, py::arg("timer"),
           "The name of timer id `timer`.")
      .def("harvest", &TimerEngine::harvest,
           "Store every finished pair without blocking; returns how many.")
      // Blocks on this engine's events only; other Python threads run meanwhile.
      .def("flush", &TimerEngine::flush, py::call_guard<py::gil_scoped_release>(),
           "Wait for this engine's pending pairs and store them.")
      .def("pending", &TimerEngine::pending, "Pairs recorded but not yet finished/harvested.")
      .def(
          "summaries",
          [](TimerEngine& e) {
            straggler::Summaries s = e.summaries();
            const auto rows = static_cast<py::ssize_t>(s.names.size());
            return py::make_tuple(py::cast(s.names),
                                  to_numpy(s.values, rows, straggler::kNumColumns));
          },
          "Harvest, then (names, float64 array (n, 7)) with columns SUMMARY_COLUMNS, in ms.")
      .def(
          "durations",
          [](TimerEngine& e, py::handle timer) {
            const std::vector<double> v = e.durations(timer_arg(e, timer));
            return to_numpy(v, static_cast<py::ssize_t>(v.size()), 0);
          },
          py::arg("timer"), "The ring buffer's samples (ms), oldest first.")
      .def("set_busy", &TimerEngine::set_busy, py::arg("timer"), py::arg("busy") = true,
           "Busy mode for `timer`: start/stop open/close a busy scope whose sample is the GPU "
           "time of the ops reported inside it (idle gaps and collectives excluded).")
      .def("busy", &TimerEngine::busy, py::arg("timer"), "Whether `timer` is in busy mode.")
      .def("open_scopes", &TimerEngine::open_scopes, "Busy scopes open now, over all threads.")
      .def(
          "idle_entries",
          [](const TimerEngine& e) {
            py::dict d;
            for (const auto& [name, n] : e.idle_entries()) d[py::str(name)] = n;
            return d;
          },
          "{timer: entries this window that saw no GPU work (so stored no sample)}.")
      .def(
          "_address", [](const TimerEngine& e) { return reinterpret_cast<std::uintptr_t>(&e); },
          "This engine's address, for straggler._ops (ENGINE_API); keep the engine alive.")
      .def("reset", &TimerEngine::reset,
           "New report window: clear samples; pending pairs land in the next window.")
      // May wait for a flush() running in another thread.
      .def("close", &TimerEngine::close, py::call_guard<py::gil_scoped_release>(),
           "Release events and the context reference. Idempotent.")
      .def(
          "__enter__", [](py::object self) { return self; }, "Return self.")
      .def(
          "__exit__",
          [](TimerEngine& e, py::args) {
            py::gil_scoped_release release;
            e.close();
          },
          "close().");

  // __init__: pybind11's (above), then the new C++ object's address goes to the slot.
  g_engine_construct = py::object(engine.attr("__init__")).release().ptr();  // kept for good
  add_methods(engine, g_init_method);
  m.attr("ENGINE_API") =
      py::capsule(static_cast<const void*>(&g_engine_api), STRAGGLER_ENGINE_API_CAPSULE);
  add_methods(engine, g_op_methods);
  add_methods(engine, g_hot_methods);
}

// ================================================================================================
// NVML sampler: nvml_status, cuda_device_pci_bus_id, NVML_FIELDS, NvmlSampler   (nvml_sampler.h)
// ================================================================================================

void bind_nvml(py::module_& m) {
  using straggler::NvmlSampler;

  m.def(
      "nvml_status",
      [] {
        py::gil_scoped_release release;  // nvmlInit can take a while on a real machine
        const straggler::Nvml& nvml = straggler::Nvml::instance();
        return std::make_tuple(nvml.available(), nvml.error());
      },
      "(available, reason): whether NVML loads ($STRAGGLER_LIBNVML or libnvidia-ml.so.1) and "
      "initialises. Never raises.");
  m.def(
      "cuda_device_pci_bus_id",
      [](int ordinal) {
        py::gil_scoped_release release;  // may load and initialise the driver
        return straggler::cuda_device_pci_bus_id(ordinal);
      },
      py::arg("ordinal"),
      "PCI bus id of CUDA device `ordinal` (after CUDA_VISIBLE_DEVICES), from the CUDA driver.");
  m.attr("NVML_FIELDS") = py::tuple(py::cast(straggler::nvml_field_names()));

  py::class_<NvmlSampler>(m, "NvmlSampler",
                          "Background thread sampling one GPU's NVML telemetry every period_s "
                          "seconds into a bounded buffer; drain() once per report window.")
      .def(py::init([](const std::string& pci_bus_id, double period_s, long long capacity,
                       int max_consecutive_failures) {
             if (capacity <= 0) {
               throw py::value_error("`capacity=" + std::to_string(capacity) +
                                     "` must be a positive integer");
             }
             py::gil_scoped_release release;  // loads and initialises NVML on first use
             return std::make_unique<NvmlSampler>(pci_bus_id, period_s,
                                                  static_cast<std::size_t>(capacity),
                                                  max_consecutive_failures);
           }),
           py::arg("pci_bus_id"), py::arg("period_s") = 1.0, py::arg("capacity") = 4096,
           py::arg("max_consecutive_failures") = 3,
           "Find the GPU with bus id `pci_bus_id` in NVML; sample it every `period_s` seconds "
           "into a buffer of `capacity` samples once started.")
      .def("start", &NvmlSampler::start, "Start the thread (no-op when running or failed).")
      // Joins the thread, which may be inside one NVML call.
      .def("stop", &NvmlSampler::stop, py::call_guard<py::gil_scoped_release>(),
           "Stop and join the thread. Idempotent.")
      .def_property_readonly("running", &NvmlSampler::running, "Whether the thread is alive.")
      .def("sample_now", &NvmlSampler::sample_now, py::call_guard<py::gil_scoped_release>(),
           "Take one sample on this thread; False when an NVML call failed.")
      .def(
          "drain",
          [](NvmlSampler& s) {
            const straggler::NvmlBatch b = s.drain();
            const auto rows = static_cast<py::ssize_t>(b.timestamps_s.size());
            return py::make_tuple(to_numpy(b.timestamps_s, rows, 0),
                                  to_numpy(b.values, rows, straggler::kNvmlFieldCount), b.dropped);
          },
          "(timestamps_s (n,), values (n, len(NVML_FIELDS)), dropped): samples since the last "
          "drain, oldest first; NaN = absent.")
      .def_property_readonly(
          "identity",
          [](const NvmlSampler& s) {
            const straggler::NvmlIdentity& id = s.identity();
            py::dict d;
            d["name"] = id.name;
            d["uuid"] = id.uuid;
            d["serial"] = id.serial;
            d["pci_bus_id"] = id.pci_bus_id;
            d["driver_version"] = id.driver_version;
            return d;
          },
          "Name, UUID, serial, PCI bus id and driver version ('' where unavailable).")
      .def_property_readonly("period_s", &NvmlSampler::period_s,
                             "Seconds between samples of the thread.")
      .def_property_readonly("error", &NvmlSampler::error,
                             "'' while healthy; why the thread stopped after persistent errors.")
      .def_property_readonly(
          "unsupported",
          [](const NvmlSampler& s) {
            std::vector<std::pair<std::string, std::string>> fields;
            {
              py::gil_scoped_release release;  // waits for a sample in progress (NVML calls)
              fields = s.unsupported();
            }
            py::dict d;
            for (const auto& [field, why] : fields) d[py::str(field)] = why;
            return d;
          },
          "{field: NVML result} for fields this GPU does not offer.")
      .def_property_readonly("samples_taken", &NvmlSampler::samples_taken,
                             "Samples attempted so far (thread and sample_now()).")
      .def(
          "__enter__", [](py::object self) { return self; }, "Return self.")
      .def(
          "__exit__",
          [](NvmlSampler& s, py::args) {
            py::gil_scoped_release release;
            s.stop();
          },
          "stop().");
}

// ================================================================================================
// Health probe: run_probe, PROBE_PTX, PROBE_PTX_ORIGIN   (probe.h)
// ================================================================================================

void bind_probe(py::module_& m) {
  m.attr("PROBE_PTX") = py::str(straggler::kProbePtx);
  m.attr("PROBE_PTX_ORIGIN") = py::str(straggler::kProbePtxOrigin);
  m.def(
      "run_probe",
      [](int device, long long compute_iterations, long long memory_passes, int repeats) {
        auto check = [](const char* name, long long v) {
          if (v <= 0 || v > 0xffffffffLL) {
            throw py::value_error(std::string("`") + name + "=" + std::to_string(v) +
                                  "` must be a positive 32-bit integer");
          }
          return static_cast<unsigned int>(v);
        };
        straggler::ProbeOptions options;
        options.compute_iterations = check("compute_iterations", compute_iterations);
        options.memory_passes = check("memory_passes", memory_passes);
        options.repeats = repeats;
        straggler::ProbeResult r;
        {
          py::gil_scoped_release release;  // waits for the GPU: a few milliseconds
          r = straggler::run_probe(device, options);
        }
        py::dict d;
        d["compute_ms"] = r.compute_ms;
        d["memory_ms"] = r.memory_ms;
        d["compute_gflop"] = r.compute_gflop;
        d["memory_gbyte"] = r.memory_gbyte;
        d["sm_count"] = r.sm_count;
        return d;
      },
      py::arg("device") = 0, py::arg("compute_iterations") = 16384, py::arg("memory_passes") = 16,
      py::arg("repeats") = 3,
      "Run the fixed-work probe kernels on CUDA device `device`; dict of the fastest times (ms) "
      "and the work per launch (GFLOP, GB). Raises CudaError naming a failed driver call.");
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "straggler's C++ core: GPU/host timers, NVML sampler, health probe.";

  bind_timer_engine(m);

  // ==============================================================================================
  // NVML sampler and probe: bind_nvml(m) / bind_probe(m) go here (owned by the NVML/probe work).
  // ==============================================================================================
  bind_nvml(m);
  bind_probe(m);
}
