// The host-clock timing backend: std::chrono::steady_clock stamps; streams are ignored.
#pragma once

#include <chrono>
#include <cstdint>

#include "timing/timing_backend.h"

namespace straggler {

class HostBackend final : public TimingBackend {
 public:
  const char* name() const noexcept override { return "host"; }
  bool synchronous() const noexcept override { return true; }
  void bind_thread() override {}
  Mark record(std::uintptr_t /*stream*/) override {
    Mark m;
    m.host_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                    std::chrono::steady_clock::now().time_since_epoch())
                    .count();
    return m;
  }
  bool elapsed(const Mark& start, const Mark& stop, double* ms) override {
    *ms = static_cast<double>(stop.host_ns - start.host_ns) * 1e-6;
    return true;
  }
  bool done(const Mark& /*mark*/) override { return true; }
  void wait(const Mark& /*mark*/) override {}
  void release(const Mark& /*mark*/) noexcept override {}
  void discard(const Mark& /*mark*/) noexcept override {}
  void close() noexcept override {}
};

}  // namespace straggler
