// The bind_*() functions PYBIND11_MODULE (module.cpp) calls: one per component, each in its own
// file. csrc/python/ is the only folder that includes pybind11: it converts between Python and
// the C++ core, which never sees a Python type.
#pragma once

#include <pybind11/pybind11.h>

namespace straggler::python {

// cuda_status, CudaError, SUMMARY_COLUMNS, TimerEngine (bind_engine.cpp).
void bind_timer_engine(pybind11::module_& m);

// nvml_status, cuda_device_pci_bus_id, NVML_FIELDS, NvmlSampler (bind_telemetry.cpp).
void bind_nvml(pybind11::module_& m);

// run_probe, PROBE_PTX, PROBE_PTX_ORIGIN (bind_telemetry.cpp).
void bind_probe(pybind11::module_& m);

}  // namespace straggler::python
