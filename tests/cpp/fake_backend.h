// A scriptable TimingBackend for the engine's unit tests: no driver, no simulator. A mark is an
// id (Mark::host_ns) with the fake clock's time when it was recorded; it stays "running" until
// the test completes it (or wait() does, as the GPU would). Synchronous, it is a host clock on
// the fake time: a mark is its stamp, complete and owning nothing. Every mark must be released or
// discarded exactly once: live() and bad_frees() check it. Thread-safe (tests call it from
// several threads while the engine does too).
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "timing/timing_backend.h"

namespace fake {

// A backend operation a test can make fail.
enum class Op { kBindThread, kRecord, kElapsed, kDone, kWait };

class FakeBackend final : public straggler::TimingBackend {
 public:
  explicit FakeBackend(bool synchronous = false) : synchronous_(synchronous) {}

  const char* name() const noexcept override { return "fake"; }
  bool synchronous() const noexcept override { return synchronous_; }
  void bind_thread() override { maybe_fail(Op::kBindThread, "bind_thread"); }

  straggler::Mark record(std::uintptr_t stream) override {
    std::lock_guard<std::mutex> lock(mu_);
    maybe_fail_locked(Op::kRecord, "record");
    ++recorded_;
    straggler::Mark m;
    if (synchronous_) {  // a stamp, as the host clock's: owns nothing
      m.host_ns = std::llround(now_ms_ * 1e6);
      return m;
    }
    const std::int64_t id = next_id_++;
    marks_[id] = State{now_ms_, complete_on_record_, stream};
    m.host_ns = id;
    return m;
  }

  bool elapsed(const straggler::Mark& start, const straggler::Mark& stop, double* ms) override {
    std::lock_guard<std::mutex> lock(mu_);
    maybe_fail_locked(Op::kElapsed, "elapsed");
    if (synchronous_) {
      *ms = static_cast<double>(stop.host_ns - start.host_ns) * 1e-6;
      return true;
    }
    const State& a = state_locked(start);
    const State& b = state_locked(stop);
    if (!a.done || !b.done) return false;
    *ms = b.time_ms - a.time_ms;
    return true;
  }

  bool done(const straggler::Mark& mark) override {
    std::lock_guard<std::mutex> lock(mu_);
    maybe_fail_locked(Op::kDone, "done");
    return synchronous_ || state_locked(mark).done;
  }

  // The GPU finishes the work before `mark` (after the wait hook, if any, ran).
  void wait(const straggler::Mark& mark) override {
    if (on_wait_) on_wait_();  // set before the engine runs, so read without the lock
    std::lock_guard<std::mutex> lock(mu_);
    maybe_fail_locked(Op::kWait, "wait");
    if (marks_.count(mark.host_ns) == 1) complete_locked(mark.host_ns);  // else freed meanwhile
    ++waits_;
  }

  void release(const straggler::Mark& mark) noexcept override { free(mark, &released_); }
  void discard(const straggler::Mark& mark) noexcept override { free(mark, &discarded_); }
  void close() noexcept override {
    std::lock_guard<std::mutex> lock(mu_);
    ++closes_;
  }

  // ---- Test controls ------------------------------------------------------------------------
  void set_now(double ms) {
    std::lock_guard<std::mutex> lock(mu_);
    now_ms_ = ms;
  }
  // New marks are complete when recorded (the GPU keeps up), or running until completed.
  void set_complete_on_record(bool on) {
    std::lock_guard<std::mutex> lock(mu_);
    complete_on_record_ = on;
  }
  // Completes mark `id` and, a stream being in order, the earlier marks on its stream (their
  // times stay the record times).
  void complete(std::int64_t id) {
    std::lock_guard<std::mutex> lock(mu_);
    complete_locked(id);
  }
  void complete_all() {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [id, s] : marks_) s.done = true;
  }
  // The next `times` calls of `op` throw CudaError (as a failing driver would).
  void fail(Op op, int times = 1) {
    std::lock_guard<std::mutex> lock(mu_);
    fail_[op] = times;
  }
  // Runs at the start of every wait(), while flush() waits without the engine's lock.
  void set_wait_hook(std::function<void()> hook) { on_wait_ = std::move(hook); }
  // The id the next record() returns.
  std::int64_t next_id() const {
    std::lock_guard<std::mutex> lock(mu_);
    return next_id_;
  }
  // Marks recorded and neither released nor discarded.
  int live() const {
    std::lock_guard<std::mutex> lock(mu_);
    return static_cast<int>(marks_.size());
  }
  int recorded() const { return get(recorded_); }
  int released() const { return get(released_); }
  int discarded() const { return get(discarded_); }
  int waits() const { return get(waits_); }
  int closes() const { return get(closes_); }
  // Frees of a mark that was not live (double release, or never recorded): must stay 0.
  int bad_frees() const { return get(bad_frees_); }

 private:
  struct State {
    double time_ms;
    bool done;
    std::uintptr_t stream;
  };

  void maybe_fail(Op op, const char* what) {
    std::lock_guard<std::mutex> lock(mu_);
    maybe_fail_locked(op, what);
  }
  void maybe_fail_locked(Op op, const char* what) {
    auto it = fail_.find(op);
    if (it == fail_.end() || it->second <= 0) return;
    --it->second;
    throw straggler::CudaError(std::string("fake ") + what + " failed", CUDA_ERROR_LAUNCH_FAILED);
  }
  void complete_locked(std::int64_t id) {
    const std::uintptr_t stream = marks_.at(id).stream;
    for (auto& [other, s] : marks_) {
      if (other <= id && s.stream == stream) s.done = true;
    }
  }
  const State& state_locked(const straggler::Mark& m) const { return marks_.at(m.host_ns); }
  void free(const straggler::Mark& mark, int* counter) noexcept {
    std::lock_guard<std::mutex> lock(mu_);
    if (synchronous_) return;  // its marks own nothing (TimingBackend::synchronous())
    if (marks_.erase(mark.host_ns) == 1) {
      ++*counter;
    } else {
      ++bad_frees_;
    }
  }
  int get(const int& counter) const {
    std::lock_guard<std::mutex> lock(mu_);
    return counter;
  }

  const bool synchronous_;
  mutable std::mutex mu_;
  double now_ms_ = 0.0;
  bool complete_on_record_ = false;
  std::int64_t next_id_ = 1;
  std::map<std::int64_t, State> marks_;
  std::map<Op, int> fail_;
  std::function<void()> on_wait_;
  int recorded_ = 0, released_ = 0, discarded_ = 0, waits_ = 0, closes_ = 0, bad_frees_ = 0;
};

}  // namespace fake
