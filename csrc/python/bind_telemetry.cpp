// The telemetry's Python API: the NVML sampler (nvml_status, cuda_device_pci_bus_id,
// NVML_FIELDS, NvmlSampler) and the GPU health probe (run_probe, PROBE_PTX, PROBE_PTX_ORIGIN).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "driver/cuda_driver.h"
#include "driver/nvml.h"
#include "python/bind.h"
#include "python/numpy_array.h"
#include "telemetry/nvml_sampler.h"
#include "telemetry/probe.h"

namespace py = pybind11;

namespace straggler::python {

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

}  // namespace straggler::python
