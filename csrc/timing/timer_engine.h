// Named timers with pooled CUDA events (or the host clock), bounded per-name ring buffers and
// statistics. Plain C++: csrc/python/ is the only folder that knows about Python. The parts live
// in their own headers: the backend interface (timing_backend.h) and its two implementations
// (cuda_backend.h, host_backend.h), the ring buffer (duration_ring.h), the statistics
// (summary.h), busy time (busy_time.h) and the harvest loop (harvest_queue.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "driver/cuda_driver.h"
#include "timing/busy_time.h"
#include "timing/duration_ring.h"
#include "timing/summary.h"
#include "timing/timer.h"
#include "timing/timing_backend.h"

namespace straggler {

class TimerEngine {
 public:
  // Times with `backend` (tests pass a fake). Throws std::invalid_argument for a null backend or
  // a capacity outside [1, 2**24].
  TimerEngine(std::unique_ptr<TimingBackend> backend, long long capacity);
  // A backend of `kind` on `device` (make_backend). Throws std::invalid_argument for bad values
  // (checked before any backend is made), CudaError if kCuda is unavailable.
  TimerEngine(BackendKind kind, long long capacity, int device);
  // backend: "auto", "cuda" or "host" (parse_backend_kind), as Python spells it.
  TimerEngine(const std::string& backend, long long capacity, int device);
  ~TimerEngine();  // close(); never throws
  TimerEngine(const TimerEngine&) = delete;
  TimerEngine& operator=(const TimerEngine&) = delete;

  [[nodiscard]] const char* backend() const noexcept { return backend_name_; }
  [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }

  // Stable id for `name`; creates the timer (and its ring buffer) on first use.
  int timer_id(std::string_view name);
  [[nodiscard]] std::string timer_name(int timer) const;

  // Hot path: after warm-up no allocation and no event creation. A timer may be open once per
  // thread at a time; start() on one already open in this thread throws std::invalid_argument.
  void start(int timer, std::uintptr_t stream);
  void stop(int timer, std::uintptr_t stream);
  // Closes `timer` like stop() but stores no sample (its section's body raised: the interval is
  // partial). Busy mode: the scope stores nothing and counts no idle entry; its ops' own
  // per-op samples and the enclosing scope's sum keep the GPU work that did run.
  void cancel(int timer, std::uintptr_t stream);

  // ---- Busy time (docs/engine.md, "Busy time") ---------------------------------------------
  // In busy mode, start()/stop() of `timer` open/close a busy scope: its sample is the GPU time
  // of the ops reported with op_begin()/op_end() while it is open (idle gaps excluded), and an
  // entry that saw no GPU work stores no sample (it is counted by idle_entries()).
  void set_busy(int timer, bool busy);
  [[nodiscard]] bool busy(int timer) const;
  // A compute op starts on `stream`. Returns a token for op_end(), or -1 when no busy scope is
  // open for the calling thread (the op is not timed).
  long long op_begin(std::uintptr_t stream);
  // The op of `token` ended: its GPU segment goes to the open scope and, if op_timer >= 0, to
  // that timer as one sample. token -1 is a no-op.
  void op_end(long long token, int op_timer, std::uintptr_t stream);
  // A collective (or any untimed op) ended on `stream`: the chain restarts after it, so its
  // time belongs to no segment.
  void comm_end(std::uintptr_t stream);
  // Busy scopes opened and not yet closed, over all threads.
  [[nodiscard]] int open_scopes() const;
  // Entries of busy timers in this window that saw no GPU work (no sample stored), per timer.
  [[nodiscard]] std::vector<std::pair<std::string, long long>> idle_entries() const;

  // Non-blocking: stores every finished pair; returns how many.
  std::size_t harvest();
  // Blocks until this engine's pending pairs finished, then harvests them. No device- or
  // context-wide synchronisation. Call without holding the GIL.
  void flush();
  [[nodiscard]] std::size_t pending() const;

  // Harvests, then one row per timer with samples in the current window.
  Summaries summaries();
  // The ring buffer's samples (ms), oldest first.
  std::vector<double> durations(int timer) const;
  // New report window: clears samples; pending pairs land in the next window.
  void reset();
  // Releases events and the context reference; idempotent; never throws.
  void close() noexcept;
  [[nodiscard]] bool closed() const;

 private:
  // A timer open in one thread: a start mark, or a busy scope.
  struct Open {
    Mark start;
    std::uintptr_t stream = 0;
    bool active = false;
    int scope = -1;  // busy mode: the scope (BusyTime::open_scope)
  };
  // A stopped pair not yet finished on the GPU.
  struct Pending {
    int timer;
    Mark start;
    Mark stop;
    std::uintptr_t start_stream;
    std::uintptr_t stop_stream;
  };

  void check_timer_locked(int timer) const;
  void check_open_locked() const;
  // The timer's slot open in thread `me`, marked inactive (stop and cancel end it); throws
  // std::invalid_argument when the timer was not started in that thread.
  Open& take_open_locked(int timer, std::uint64_t me);
  std::size_t harvest_locked();
  std::size_t harvest_pairs_locked(HarvestScope scope);
  // Destroys the events of a pair the driver failed on; during a flush(), after it (flush()
  // waits on events without the lock, so none of them may be destroyed meanwhile).
  void discard_locked(const Mark& mark) noexcept;

  std::size_t capacity_;
  std::unique_ptr<TimingBackend> backend_;
  const char* backend_name_;
  bool synchronous_;  // backend_->synchronous(), asked once: no virtual call for it per stop()

  mutable std::mutex mu_;  // everything below, and calls into backend_
  std::mutex flush_mu_;    // one flush at a time; close() waits for it
  bool closed_ = false;
  std::deque<Timer> timers_;  // deque: names stay put, so ids_ can view them
  std::unordered_map<std::string_view, int> ids_;
  // Open timers per thread, keyed by thread_serial(): unlike std::thread::id (a pthread_t the
  // system reuses), a serial is never reused, so a new thread cannot inherit a dead one's timers.
  std::unordered_map<std::uint64_t, std::vector<Open>> open_;
  std::vector<Pending> pending_;   // FIFO; keeps its capacity, so no allocation once warm
  std::vector<Mark> flush_marks_;  // guarded by flush_mu_
  bool flushing_ = false;          // flush() is waiting on flush_marks_
  std::vector<Mark> deferred_discards_;  // discard_locked() during a flush
  BusyTime busy_;
};

}  // namespace straggler
