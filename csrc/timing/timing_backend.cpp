// The backend choice: Python's string parsed once into a BackendKind, then a backend by kind.
#include "timing/timing_backend.h"

#include <stdexcept>
#include <string>

#include "timing/cuda_backend.h"
#include "timing/host_backend.h"

namespace straggler {

BackendKind parse_backend_kind(std::string_view name) {
  if (name == "auto") return BackendKind::kAuto;
  if (name == "cuda") return BackendKind::kCuda;
  if (name == "host") return BackendKind::kHost;
  throw std::invalid_argument("`backend='" + std::string(name) +
                              "'` must be one of 'auto', 'cuda', 'host'");
}

std::unique_ptr<TimingBackend> make_backend(BackendKind kind, int device) {
  switch (kind) {
    case BackendKind::kHost:
      return std::make_unique<HostBackend>();
    case BackendKind::kCuda:
      return std::make_unique<CudaBackend>(device);
    case BackendKind::kAuto:
      break;
  }
  if (!cuda_status(device).available) return std::make_unique<HostBackend>();
  try {
    return std::make_unique<CudaBackend>(device);
  } catch (const CudaError& e) {  // "auto" fails open to the host clock
    log_warning(std::string("CUDA timers unavailable, using the host clock: ") + e.what());
    return std::make_unique<HostBackend>();
  }
}

}  // namespace straggler
