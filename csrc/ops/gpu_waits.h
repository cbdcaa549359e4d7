// Collective waits on a GPU, from two CUDA events per collective (gpu_waits.cpp).
//
// On a GPU the host-side Work completes when the collective is enqueued (NCCL), so the wait is
// read on the device: `start` is recorded on the stream the collective is issued on (the GPU
// reached it: its inputs are ready), `end` on a stream that waits for the collective to finish
// (the stream c10d's CUDA future hands its callbacks: it waits on the collective's own end
// events). end - start is the time from the GPU reaching the collective to its end: the wait
// for the peers plus the transfer. The driver is loaded at run time (csrc/driver/), so the
// simulated driver of tests/sim runs this code unchanged.
//
// Never throws. Any driver error turns the GPU path off (error() says why); the collective and
// the host-side progress go on.
#pragma once

#include <array>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "driver/cuda_driver.h"

namespace straggler_ops {

// One collective's events; start == nullptr: not measured.
struct EventPair {
  CUevent start = nullptr;
  CUevent end = nullptr;
  int device = -1;
};

class GpuWaits {
 public:
  static constexpr int kMaxDevices = 64;
  static constexpr std::size_t kMaxEvents = 16384;  // live events in all; more: not measured

  // Records `start` on `stream` of `device` (a pair that is not measured when the driver is
  // missing, the pool is full, or after a failure).
  EventPair start(int device, CUstream stream) noexcept;
  // Records `end` on `stream`; false (and the pair released) when that fails.
  bool end(EventPair& pair, CUstream stream) noexcept;
  // A finished pair's times: 1 with `ms` = end - start and `since_ms` = end - `prev_end` (or
  // `ms` when prev_end is null); 0 when not finished yet; -1 on a driver error.
  int read(const EventPair& pair, CUevent prev_end, float* ms, float* since_ms) noexcept;
  // Returns events to the pool (null ones are ignored).
  void release(int device, CUevent a, CUevent b = nullptr) noexcept;

  [[nodiscard]] bool failed() const noexcept;
  [[nodiscard]] std::string error() const;
  [[nodiscard]] long long recorded() const noexcept;  // pairs started (start recorded)

 private:
  // With `device`'s primary context current (restored after): records `ev` (or a new event
  // from the pool into *ev when *ev is null) on `stream`. Caller holds mu_.
  bool record_locked(int device, CUevent* ev, CUstream stream) noexcept;
  bool ready_locked(int device) noexcept;
  void fail_locked(const std::string& what) noexcept;

  mutable std::mutex mu_;
  bool tried_ = false;
  bool failed_ = false;
  std::string error_;
  std::array<CUcontext, kMaxDevices> contexts_{};
  std::array<std::vector<CUevent>, kMaxDevices> free_{};
  std::size_t live_ = 0;
  long long recorded_ = 0;
};

}  // namespace straggler_ops
