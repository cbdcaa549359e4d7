// straggler._core: the module only calls one bind_*() function per component (bind.h).
#include <pybind11/pybind11.h>

#include "python/bind.h"

PYBIND11_MODULE(_core, m) {
  m.doc() = "straggler's C++ core: GPU/host timers, NVML sampler, health probe.";

  straggler::python::bind_timer_engine(m);  // bind_engine.cpp (fast path: engine_fast_path.cpp)
  straggler::python::bind_nvml(m);          // bind_telemetry.cpp
  straggler::python::bind_probe(m);         // bind_telemetry.cpp
}
