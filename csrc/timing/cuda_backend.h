// The CUDA timing backend: pooled events on the primary context of one device, through the
// dynamically loaded driver (driver/cuda_driver.h).
#pragma once

#include <cstdint>
#include <vector>

#include "driver/cuda_driver.h"
#include "timing/timing_backend.h"

namespace straggler {

class CudaBackend final : public TimingBackend {
 public:
  // Retains the primary context of `device`. Throws CudaError if unavailable (with why).
  explicit CudaBackend(int device);
  ~CudaBackend() override { close(); }

  const char* name() const noexcept override { return "cuda"; }
  bool synchronous() const noexcept override { return false; }
  void bind_thread() override;
  Mark record(std::uintptr_t stream) override;
  bool elapsed(const Mark& start, const Mark& stop, double* ms) override;
  bool done(const Mark& mark) override;
  void wait(const Mark& mark) override;
  void release(const Mark& mark) noexcept override;
  void discard(const Mark& mark) noexcept override;
  void close() noexcept override;

 private:
  const CudaDriver& drv_;
  CUdevice device_ = 0;
  CUcontext ctx_ = nullptr;
  std::vector<CUevent> free_;  // the event pool
};

}  // namespace straggler
