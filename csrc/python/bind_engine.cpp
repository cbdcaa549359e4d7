// TimerEngine's Python class (cuda_status, CudaError, SUMMARY_COLUMNS, TimerEngine): the
// pybind11 class and its methods that run once per report or less. The per-call methods
// (start/stop, the op methods, __init__) and ENGINE_API are engine_fast_path.cpp's.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "driver/cuda_driver.h"
#include "python/bind.h"
#include "python/engine_fast_path.h"
#include "python/numpy_array.h"
#include "timing/timer_engine.h"

namespace py = pybind11;

namespace straggler::python {

void bind_timer_engine(py::module_& m) {
  using straggler::TimerEngine;

  const py::handle cuda_error =
      py::register_exception<straggler::CudaError>(m, "CudaError", PyExc_RuntimeError);
  py::setattr(cuda_error, "__doc__",
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
      // Makes the C++ object; wrapped by the fast path's __init__ (the slot).
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
      // Off the hot path (a section whose body raised), so through pybind11's dispatcher.
      .def(
          "cancel",
          [](TimerEngine& e, py::handle timer, std::uintptr_t stream) {
            e.cancel(timer_arg(e, timer), stream);
          },
          py::arg("timer"), py::arg("stream") = 0,
          "Close `timer` (started in this thread) like stop() but keep no sample: the interval "
          "was cut short (its section's body raised).")
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

  add_engine_fast_path(m, engine, cuda_error);
}

}  // namespace straggler::python
