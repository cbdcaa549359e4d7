// The timing backend interface: what the timer engine asks of a clock (CUDA events or the host
// clock), and the choice between the two by kind. The engine holds one backend and calls it
// under its lock (except wait()); tests hand it a fake (tests/cpp/fake_backend.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "driver/cuda_driver.h"

namespace straggler {

// One end of a timed pair: a CUDA event, or a host time stamp (a fake backend's mark id).
struct Mark {
  CUevent event = nullptr;
  int64_t host_ns = 0;
};

// What a backend does. record() is the only call per event on the hot path; the engine asks
// synchronous() once, at construction.
class TimingBackend {
 public:
  TimingBackend() = default;
  TimingBackend(const TimingBackend&) = delete;
  TimingBackend& operator=(const TimingBackend&) = delete;
  virtual ~TimingBackend() = default;

  // "cuda" or "host" (TimerEngine.backend); a fake names itself.
  [[nodiscard]] virtual const char* name() const noexcept = 0;
  // True if a mark is complete when recorded and owns nothing (host clock): pairs are stored at
  // stop(), and the engine drops their marks without release().
  [[nodiscard]] virtual bool synchronous() const noexcept = 0;
  // Makes the backend usable from the calling thread (CUDA: its primary context current).
  virtual void bind_thread() = 0;
  // Records a mark on `stream` (host: reads the clock). Throws CudaError.
  virtual Mark record(std::uintptr_t stream) = 0;
  // Never blocks: false while either mark is still running, else true and *ms set. Throws
  // CudaError.
  virtual bool elapsed(const Mark& start, const Mark& stop, double* ms) = 0;
  // Never blocks: whether the work before `mark` on its stream has finished (host: always).
  virtual bool done(const Mark& mark) = 0;
  // Blocks until `mark` completed; callers drop the GIL and engine locks first.
  virtual void wait(const Mark& mark) = 0;
  // Returns a healthy mark's resources to the pool. Never throws.
  virtual void release(const Mark& mark) noexcept = 0;
  // Frees a mark a driver call failed on (not pooled again). Never throws.
  virtual void discard(const Mark& mark) noexcept = 0;
  // Frees every pooled resource and context reference. Idempotent, never throws.
  virtual void close() noexcept = 0;
};

// Which backend a TimerEngine uses.
enum class BackendKind {
  kAuto,  // CUDA if cuda_status(device) is true and its set-up works, else the host clock
  kCuda,  // CUDA events; CudaError (with why) if unavailable
  kHost,  // std::chrono::steady_clock; never touches the driver
};

// "auto", "cuda" or "host" (Python's spelling). Throws std::invalid_argument naming the value.
BackendKind parse_backend_kind(std::string_view name);

// A backend of `kind` on CUDA device `device` (ignored by the host clock). Throws CudaError for
// kCuda when CUDA is unavailable; kAuto logs the reason and falls back to the host clock.
std::unique_ptr<TimingBackend> make_backend(BackendKind kind, int device);

}  // namespace straggler
