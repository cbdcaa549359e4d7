// The only file that includes pybind11: converts between Python and the C++ core.
#include <pybind11/pybind11.h>

namespace py = pybind11;

PYBIND11_MODULE(_core, m) {
  m.doc() = "straggler's C++ core: GPU/host timers, NVML sampler, health probe.";
}
