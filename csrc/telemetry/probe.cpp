// The GPU health probe (see probe.h).
#include "telemetry/probe.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

#include "driver/cuda_driver.h"

namespace straggler {
namespace {

constexpr unsigned int kBlock = 256;
constexpr unsigned int kComputeBlocksPerSm = 4;
constexpr unsigned int kMemoryBlocksPerSm = 8;
constexpr double kMemoryBytesPerPass = 2.0 * (128.0 * 1024 * 1024);  // read half, write half

// The primary context of `device`, retained and current for this object's life; the caller's
// current context comes back afterwards.
class ScopedPrimaryContext {
 public:
  ScopedPrimaryContext(const CudaDriver& cu, int ordinal) : cu_(cu) {
    STRAGGLER_CU_CHECK(cu_.cuInit(0));
    STRAGGLER_CU_CHECK(cu_.cuDeviceGet(&device_, ordinal));
    STRAGGLER_CU_CHECK(cu_.cuCtxGetCurrent(&previous_));
    STRAGGLER_CU_CHECK(cu_.cuDevicePrimaryCtxRetain(&ctx_, device_));
    const CUresult rc = cu_.cuCtxSetCurrent(ctx_);
    if (rc != CUDA_SUCCESS) {
      STRAGGLER_CU_LOG(cu_.cuDevicePrimaryCtxRelease(device_));
      throw CudaError(cuda_error_message("cuCtxSetCurrent(ctx)", rc), rc);
    }
  }
  ~ScopedPrimaryContext() {
    STRAGGLER_CU_LOG(cu_.cuCtxSetCurrent(previous_));
    STRAGGLER_CU_LOG(cu_.cuDevicePrimaryCtxRelease(device_));
  }
  ScopedPrimaryContext(const ScopedPrimaryContext&) = delete;
  ScopedPrimaryContext& operator=(const ScopedPrimaryContext&) = delete;
  [[nodiscard]] CUdevice device() const noexcept { return device_; }

 private:
  const CudaDriver& cu_;
  CUdevice device_ = 0;
  CUcontext previous_ = nullptr;
  CUcontext ctx_ = nullptr;
};

class ScopedModule {
 public:
  ScopedModule(const CudaDriver& cu, const char* image) : cu_(cu) {
    STRAGGLER_CU_CHECK(cu_.cuModuleLoadData(&module_, image));
  }
  ~ScopedModule() { STRAGGLER_CU_LOG(cu_.cuModuleUnload(module_)); }
  ScopedModule(const ScopedModule&) = delete;
  ScopedModule& operator=(const ScopedModule&) = delete;

  [[nodiscard]] CUfunction function(const char* name) const {
    CUfunction f = nullptr;
    const CUresult rc = cu_.cuModuleGetFunction(&f, module_, name);
    if (rc != CUDA_SUCCESS) {
      throw CudaError(
          cuda_error_message(("cuModuleGetFunction(module, \"" + std::string(name) + "\")").c_str(),
                             rc),
          rc);
    }
    return f;
  }

 private:
  const CudaDriver& cu_;
  CUmodule module_ = nullptr;
};

class ScopedEvent {
 public:
  explicit ScopedEvent(const CudaDriver& cu) : cu_(cu) {
    // Blocking sync, as the engine's events: the wait (behind the job's queued work on the
    // legacy stream) sleeps instead of spinning a CPU core the job needs.
    STRAGGLER_CU_CHECK(cu_.cuEventCreate(&event_, CU_EVENT_BLOCKING_SYNC));
  }
  ~ScopedEvent() { STRAGGLER_CU_LOG(cu_.cuEventDestroy(event_)); }
  ScopedEvent(const ScopedEvent&) = delete;
  ScopedEvent& operator=(const ScopedEvent&) = delete;
  [[nodiscard]] CUevent get() const noexcept { return event_; }

 private:
  const CudaDriver& cu_;
  CUevent event_ = nullptr;
};

}  // namespace

ProbeResult run_probe(int device, const ProbeOptions& options) {
  if (options.compute_iterations == 0) {
    throw std::invalid_argument("`compute_iterations=0` must be a positive integer");
  }
  if (options.memory_passes == 0) {
    throw std::invalid_argument("`memory_passes=0` must be a positive integer");
  }
  if (options.repeats <= 0) {
    throw std::invalid_argument("`repeats=" + std::to_string(options.repeats) +
                                "` must be a positive integer");
  }
  const CudaDriver& cu = CudaDriver::instance();
  if (!cu.loaded()) throw std::runtime_error(cu.load_error());
  if (!cu.has_cuModuleLoadData() || !cu.has_cuModuleUnload() || !cu.has_cuModuleGetFunction() ||
      !cu.has_cuLaunchKernel()) {
    throw std::runtime_error("the CUDA driver '" + cu.library_path() +
                             "' lacks the module/launch entry points the probe needs");
  }

  ScopedPrimaryContext context(cu, device);
  int sms = 0;
  STRAGGLER_CU_CHECK(
      cu.cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, context.device()));
  sms = std::max(sms, 1);

  ScopedModule module(cu, kProbePtx);
  const CUfunction compute = module.function("straggler_probe_compute");
  const CUfunction memory = module.function("straggler_probe_memory");
  ScopedEvent start(cu);
  ScopedEvent stop(cu);
  CUstream stream = nullptr;  // legacy default stream: runs after the job's queued work

  // Launches `f` once with one unsigned parameter; returns the GPU time in ms.
  auto timed = [&](CUfunction f, unsigned int grid, unsigned int param) {
    void* args[] = {&param};
    STRAGGLER_CU_CHECK(cu.cuEventRecord(start.get(), stream));
    STRAGGLER_CU_CHECK(cu.cuLaunchKernel(f, grid, 1, 1, kBlock, 1, 1, 0, stream, args, nullptr));
    STRAGGLER_CU_CHECK(cu.cuEventRecord(stop.get(), stream));
    STRAGGLER_CU_CHECK(cu.cuEventSynchronize(stop.get()));
    float ms = 0;
    STRAGGLER_CU_CHECK(cu.cuEventElapsedTime(&ms, start.get(), stop.get()));
    return static_cast<double>(ms);
  };

  const unsigned int compute_grid = static_cast<unsigned int>(sms) * kComputeBlocksPerSm;
  const unsigned int memory_grid = static_cast<unsigned int>(sms) * kMemoryBlocksPerSm;
  ProbeResult result;
  result.sm_count = sms;
  result.compute_ms = std::numeric_limits<double>::infinity();
  result.memory_ms = std::numeric_limits<double>::infinity();
  // Launch 0 is the warm-up (clocks up, buffer paged in); launches 1..repeats are timed.
  for (int i = 0; i <= options.repeats; ++i) {
    const double c = timed(compute, compute_grid, options.compute_iterations);
    const double m = timed(memory, memory_grid, options.memory_passes);
    if (i > 0) {
      result.compute_ms = std::min(result.compute_ms, c);
      result.memory_ms = std::min(result.memory_ms, m);
    }
  }
  result.compute_gflop =
      static_cast<double>(compute_grid) * kBlock * options.compute_iterations * 16.0 / 1e9;
  result.memory_gbyte = options.memory_passes * kMemoryBytesPerPass / 1e9;
  return result;
}

}  // namespace straggler
