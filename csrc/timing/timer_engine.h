// Named timers with pooled CUDA events (or the host clock), bounded per-name ring buffers and
// statistics. Plain C++: bindings.cpp is the only file that knows about Python.
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

namespace straggler {

// One end of a timed pair: a CUDA event, or a host time stamp.
struct Mark {
  CUevent event = nullptr;
  int64_t host_ns = 0;
};

// What a backend does; the engine holds one and serialises calls to it (except wait()).
class TimingBackend {
 public:
  virtual ~TimingBackend() = default;
  [[nodiscard]] virtual const char* name() const noexcept = 0;
  // True if a mark is complete when recorded (host clock): pairs are stored at stop().
  [[nodiscard]] virtual bool synchronous() const noexcept = 0;
  // Makes the backend usable from the calling thread (CUDA: its primary context current).
  virtual void bind_thread() = 0;
  // Records a mark on `stream` (host: reads the clock). Throws CudaError.
  virtual Mark record(std::uintptr_t stream) = 0;
  // Never blocks: false while either mark is still running, else true and *ms set.
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

// Host clock: std::chrono::steady_clock; streams are ignored.
std::unique_ptr<TimingBackend> make_host_backend();
// CUDA events on the primary context of `device`. Throws CudaError if unavailable (with why).
std::unique_ptr<TimingBackend> make_cuda_backend(int device);

// Statistics columns, in this order, durations in milliseconds.
enum SummaryColumn : int { kMin = 0, kMax, kMed, kAvg, kStd, kNum, kTotal, kNumColumns };
inline constexpr const char* kSummaryColumns[kNumColumns] = {"MIN", "MAX", "MED", "AVG",
                                                             "STD", "NUM", "TOTAL"};

// One row per timer with at least one sample: values is rows x kNumColumns, row-major.
struct Summaries {
  std::vector<std::string> names;
  std::vector<double> values;
};

// Bounded ring buffer of durations (ms); keeps the newest `capacity` samples. Storage grows with
// the samples up to `capacity` (a timer used a few times costs a few bytes), then is reused.
class DurationRing {
 public:
  explicit DurationRing(std::size_t capacity) : capacity_(capacity) {}
  void push(double ms) noexcept {
    if (head_ < data_.size()) {
      data_[head_] = ms;
    } else {
      try {
        data_.push_back(ms);  // head_ == data_.size() < capacity_: still growing
      } catch (...) {
        return;  // out of memory: drop the sample rather than fail the caller
      }
    }
    head_ = (head_ + 1) % capacity_;
    if (size_ < capacity_) ++size_;
  }
  void clear() noexcept { head_ = size_ = 0; }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  // Samples, oldest first.
  [[nodiscard]] std::vector<double> values() const;

 private:
  std::vector<double> data_;
  std::size_t capacity_;
  std::size_t head_ = 0;  // next write; head_ <= data_.size()
  std::size_t size_ = 0;
};

// Statistics of `samples` (reordered in place), written to row[0..kNumColumns).
void summarize(std::vector<double>& samples, double* row);

class TimerEngine {
 public:
  // backend: "auto" (cuda if available, else host), "cuda" or "host". Throws
  // std::invalid_argument for bad values, CudaError if "cuda" is unavailable.
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
  struct Timer {
    explicit Timer(std::string_view n, std::size_t capacity) : name(n), ring(capacity) {}
    std::string name;
    DurationRing ring;
    bool busy = false;
    long long idle_entries = 0;  // busy entries without GPU work, this window
  };
  struct Open {
    Mark start;
    std::uintptr_t stream = 0;
    bool active = false;
    int scope = -1;  // busy mode: the scope's index in scopes_
  };
  // A pooled mark shared by up to two segments and a chain (reference counted).
  struct MarkSlot {
    Mark mark;
    int refs = 0;
    std::uint64_t serial = 0;  // increases with every record: orders marks of one chain
  };
  // One open or finishing busy scope: the sum of its segments, stored when all are in.
  struct Scope {
    int timer = -1;
    int parent = -1;       // enclosing scope of the same chain (gets this one's sum too)
    int outstanding = 0;   // segments and child scopes not yet finished
    bool closed = false;
    bool any = false;      // saw at least one segment
    double sum_ms = 0.0;
  };
  // The chain of marks of one thread's open busy scopes.
  struct Chain {
    std::uint64_t thread = 0;
    int last = -1;         // MarkSlot index of the newest mark, -1 when none
    int scope = -1;        // innermost open scope
    int depth = 0;
    std::uintptr_t stream = 0;
  };
  struct Segment {
    int op_timer;  // -1: scope only
    int scope;
    int start;     // MarkSlot indices
    int stop;
  };
  struct Pending {
    int timer;
    Mark start;
    Mark stop;
    std::uintptr_t start_stream;
    std::uintptr_t stop_stream;
  };

  void check_timer_locked(int timer) const;
  void check_open_locked() const;
  std::size_t harvest_locked();
  // Destroys the events of a pair the driver failed on; during a flush(), after it (flush()
  // waits on events without the lock, so none of them may be destroyed meanwhile).
  void discard_locked(const Mark& mark) noexcept;
  // Harvests finished pairs at the head of the queue; stops at the first unfinished one.
  void harvest_front_locked();

  int new_slot_locked(std::uintptr_t stream);  // records a mark; refs 1
  void unref_locked(int slot) noexcept;
  Chain* chain_for_op_locked();
  Chain& own_chain_locked();
  int new_scope_locked(int timer, int parent);
  void scope_done_locked(int scope, double ms, bool any);  // one child finished
  void finish_scope_locked(int scope);
  void add_segment_locked(int op_timer, int scope, int start, int stop);
  void store_segment_locked(const Segment& seg, double ms);
  bool harvest_segments_locked(bool front_only);  // true if all finished
  void busy_start_locked(int timer, std::uintptr_t stream, Open& slot);
  void busy_stop_locked(Open& slot, std::uintptr_t stream);

  const char* backend_name_ = "host";
  std::size_t capacity_;
  std::unique_ptr<TimingBackend> backend_;

  mutable std::mutex mu_;          // everything below, and calls into backend_
  std::mutex flush_mu_;            // one flush at a time; close() waits for it
  bool closed_ = false;
  std::deque<Timer> timers_;       // deque: names stay put, so ids_ can view them
  std::unordered_map<std::string_view, int> ids_;
  // Open timers per thread, keyed by thread_serial(): unlike std::thread::id (a pthread_t the
  // system reuses), a serial is never reused, so a new thread cannot inherit a dead one's timers.
  std::unordered_map<std::uint64_t, std::vector<Open>> open_;
  std::vector<Pending> pending_;   // FIFO; keeps its capacity, so no allocation once warm
  std::vector<Mark> flush_marks_;  // guarded by flush_mu_
  bool flushing_ = false;          // flush() is waiting on flush_marks_
  std::vector<Mark> deferred_discards_;  // discard_locked() during a flush

  // Busy time: pools reused once warm (free lists), so ops allocate nothing.
  std::vector<MarkSlot> slots_;
  std::vector<int> free_slots_;
  std::uint64_t next_serial_ = 1;
  std::vector<Scope> scopes_;
  std::vector<int> free_scopes_;
  std::vector<Chain> chains_;     // one per thread that opened a busy scope (few)
  int open_scopes_ = 0;
  std::vector<Segment> segments_;  // FIFO of unfinished segments; keeps its capacity
};

}  // namespace straggler
