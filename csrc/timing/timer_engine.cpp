// TimerEngine and its two backends (CUDA events, host clock).
#include "timing/timer_engine.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <exception>
#include <limits>
#include <stdexcept>

namespace straggler {
namespace {

// Pending pairs beyond which stop() harvests finished pairs at the head of the queue, so a job
// that never calls harvest() still keeps a bounded event pool.
constexpr std::size_t kAutoHarvestPending = 256;
// Per-thread slot vectors kept across reset() before idle ones are forgotten.
constexpr std::size_t kMaxIdleThreadSlots = 64;
// 2**24 samples (128 MiB) per timer: larger is a typo, not a plan.
constexpr std::size_t kMaxCapacity = std::size_t{1} << 24;

// ---- Host clock --------------------------------------------------------------------------------

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

// ---- CUDA events -------------------------------------------------------------------------------

class CudaBackend final : public TimingBackend {
 public:
  explicit CudaBackend(int device) : drv_(CudaDriver::instance()) {
    const CudaStatus status = cuda_status(device);
    if (!status.available) {
      throw CudaError("CUDA backend unavailable: " + status.reason, CUDA_ERROR_NO_DEVICE);
    }
    STRAGGLER_CU_CHECK(drv_.cuDeviceGet(&device_, device));
    STRAGGLER_CU_CHECK(drv_.cuDevicePrimaryCtxRetain(&ctx_, device_));
    free_.reserve(64);
  }
  ~CudaBackend() override { close(); }

  const char* name() const noexcept override { return "cuda"; }
  bool synchronous() const noexcept override { return false; }

  // The driver keeps the current context per thread; cuCtxGetCurrent reads it (a thread-local
  // read), so a thread whose context someone else switched is put back on ours.
  void bind_thread() override {
    CUcontext current = nullptr;
    STRAGGLER_CU_CHECK(drv_.cuCtxGetCurrent(&current));
    if (current != ctx_) STRAGGLER_CU_CHECK(drv_.cuCtxSetCurrent(ctx_));
  }

  Mark record(std::uintptr_t stream) override {
    bind_thread();
    Mark m;
    if (free_.empty()) {
      // Timing enabled; blocking sync, so flush() sleeps instead of spinning a CPU core while a
      // report waits for the GPU (recording costs the same).
      STRAGGLER_CU_CHECK(drv_.cuEventCreate(&m.event, CU_EVENT_BLOCKING_SYNC));
    } else {
      m.event = free_.back();
      free_.pop_back();
    }
    const CUresult rc = drv_.cuEventRecord(m.event, reinterpret_cast<CUstream>(stream));
    if (rc != CUDA_SUCCESS) {
      release(m);
      throw CudaError(cuda_error_message("cuEventRecord(event, stream)", rc), rc);
    }
    return m;
  }

  bool elapsed(const Mark& start, const Mark& stop, double* ms) override {
    CUresult rc = drv_.cuEventQuery(stop.event);
    if (rc == CUDA_ERROR_NOT_READY) return false;
    if (rc != CUDA_SUCCESS) throw CudaError(cuda_error_message("cuEventQuery(stop)", rc), rc);
    float out = 0.0f;
    rc = drv_.cuEventElapsedTime(&out, start.event, stop.event);
    if (rc == CUDA_ERROR_NOT_READY) return false;  // start on another, slower stream
    if (rc != CUDA_SUCCESS) {
      throw CudaError(cuda_error_message("cuEventElapsedTime(&ms, start, stop)", rc), rc);
    }
    *ms = static_cast<double>(out);
    return true;
  }

  bool done(const Mark& mark) override {
    const CUresult rc = drv_.cuEventQuery(mark.event);
    if (rc == CUDA_SUCCESS) return true;
    if (rc == CUDA_ERROR_NOT_READY) return false;
    throw CudaError(cuda_error_message("cuEventQuery(mark)", rc), rc);
  }

  void wait(const Mark& mark) override {
    bind_thread();
    STRAGGLER_CU_CHECK(drv_.cuEventSynchronize(mark.event));
  }

  void release(const Mark& mark) noexcept override {
    try {
      free_.push_back(mark.event);
    } catch (...) {  // out of memory: do not pool it
      discard(mark);
    }
  }

  void discard(const Mark& mark) noexcept override {
    STRAGGLER_CU_LOG(drv_.cuEventDestroy(mark.event));
  }

  void close() noexcept override {
    if (ctx_ == nullptr) return;
    CUcontext current = nullptr;
    if (drv_.cuCtxGetCurrent(&current) == CUDA_SUCCESS && current != ctx_) {
      STRAGGLER_CU_LOG(drv_.cuCtxSetCurrent(ctx_));
    }
    for (CUevent ev : free_) STRAGGLER_CU_LOG(drv_.cuEventDestroy(ev));
    free_.clear();
    // Leave no dangling context current in this thread once our reference is gone.
    if (current != ctx_) {
      STRAGGLER_CU_LOG(drv_.cuCtxSetCurrent(current));
    }
    STRAGGLER_CU_LOG(drv_.cuDevicePrimaryCtxRelease(device_));
    ctx_ = nullptr;
  }

 private:
  const CudaDriver& drv_;
  CUdevice device_ = 0;
  CUcontext ctx_ = nullptr;
  std::vector<CUevent> free_;  // the event pool
};

std::string quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

// A number for the calling thread, unique for the life of the process.
std::uint64_t thread_serial() noexcept {
  static std::atomic<std::uint64_t> next{1};
  thread_local const std::uint64_t serial = next.fetch_add(1, std::memory_order_relaxed);
  return serial;
}

}  // namespace

std::unique_ptr<TimingBackend> make_host_backend() { return std::make_unique<HostBackend>(); }

std::unique_ptr<TimingBackend> make_cuda_backend(int device) {
  return std::make_unique<CudaBackend>(device);
}

// ---- Statistics --------------------------------------------------------------------------------

std::vector<double> DurationRing::values() const {
  std::vector<double> out;
  out.reserve(size_);
  // Fewer than capacity_ samples since the last clear(): they sit in [0, head_). Otherwise the
  // ring is full and the oldest is at head_.
  const std::size_t first = size_ < capacity_ ? head_ - size_ : head_;
  for (std::size_t i = 0; i < size_; ++i) out.push_back(data_[(first + i) % capacity_]);
  return out;
}

void summarize(std::vector<double>& samples, double* row) {
  const std::size_t n = samples.size();
  if (n == 0) {
    std::fill(row, row + kNumColumns, std::numeric_limits<double>::quiet_NaN());
    row[kNum] = 0.0;
    row[kTotal] = 0.0;
    return;
  }
  double lo = samples[0], hi = samples[0], sum = 0.0;
  for (double x : samples) {
    lo = std::min(lo, x);
    hi = std::max(hi, x);
    sum += x;
  }
  const double mean = sum / static_cast<double>(n);
  double ss = 0.0;  // two passes, as numpy.std does
  for (double x : samples) ss += (x - mean) * (x - mean);
  // Median as numpy.median: the mean of the two middle values when n is even.
  const std::size_t mid = n / 2;
  std::nth_element(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(mid),
                   samples.end());
  double median = samples[mid];
  if (n % 2 == 0) {
    const double lower =
        *std::max_element(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(mid));
    median = 0.5 * (lower + median);
  }
  row[kMin] = lo;
  row[kMax] = hi;
  row[kMed] = median;
  row[kAvg] = mean;
  // Sample standard deviation (ddof=1), as NVRx (torch.std) and the sections' statistics.
  row[kStd] =
      n > 1 ? std::sqrt(ss / static_cast<double>(n - 1)) : std::numeric_limits<double>::quiet_NaN();
  row[kNum] = static_cast<double>(n);
  row[kTotal] = sum;
}

// ---- Engine ------------------------------------------------------------------------------------

TimerEngine::TimerEngine(const std::string& backend, long long capacity, int device)
    : capacity_(capacity > 0 ? static_cast<std::size_t>(capacity) : 0) {
  if (backend != "auto" && backend != "cuda" && backend != "host") {
    throw std::invalid_argument("`backend=" + quoted(backend) +
                                "` must be one of 'auto', 'cuda', 'host'");
  }
  if (capacity < 1 || static_cast<unsigned long long>(capacity) > kMaxCapacity) {
    throw std::invalid_argument("`capacity=" + std::to_string(capacity) +
                                "` must be an integer in [1, " + std::to_string(kMaxCapacity) +
                                "]");
  }
  if (device < 0) {
    throw std::invalid_argument("`device=" + std::to_string(device) +
                                "` must be a non-negative CUDA device ordinal");
  }
  if (backend == "host") {
    backend_ = make_host_backend();
  } else if (backend == "cuda") {
    backend_ = make_cuda_backend(device);
  } else if (cuda_status(device).available) {
    try {
      backend_ = make_cuda_backend(device);
    } catch (const CudaError& e) {  // "auto" fails open to the host clock
      log_warning(std::string("CUDA timers unavailable, using the host clock: ") + e.what());
      backend_ = make_host_backend();
    }
  } else {
    backend_ = make_host_backend();
  }
  backend_name_ = backend_->name();
  pending_.reserve(kAutoHarvestPending * 2);
}

TimerEngine::~TimerEngine() { close(); }

int TimerEngine::timer_id(std::string_view name) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = ids_.find(name);
  if (it != ids_.end()) return it->second;
  if (name.empty()) throw std::invalid_argument("`name=''` must be a non-empty timer name");
  const int id = static_cast<int>(timers_.size());
  timers_.emplace_back(name, capacity_);
  ids_.emplace(std::string_view(timers_.back().name), id);
  return id;
}

std::string TimerEngine::timer_name(int timer) const {
  std::lock_guard<std::mutex> lock(mu_);
  check_timer_locked(timer);
  return timers_[static_cast<std::size_t>(timer)].name;
}

void TimerEngine::check_timer_locked(int timer) const {
  if (timer < 0 || static_cast<std::size_t>(timer) >= timers_.size()) {
    throw std::invalid_argument("`timer=" + std::to_string(timer) +
                                "` is not a timer id of this engine (use timer_id(name))");
  }
}

void TimerEngine::check_open_locked() const {
  if (closed_) throw std::runtime_error("this TimerEngine is closed; create a new one");
}

void TimerEngine::start(int timer, std::uintptr_t stream) {
  std::lock_guard<std::mutex> lock(mu_);
  check_open_locked();
  check_timer_locked(timer);
  std::vector<Open>& open = open_[thread_serial()];
  if (open.size() <= static_cast<std::size_t>(timer)) open.resize(timers_.size());
  Open& slot = open[static_cast<std::size_t>(timer)];
  if (slot.active) {
    throw std::invalid_argument("timer " + quoted(timers_[static_cast<std::size_t>(timer)].name) +
                                " is already started in this thread; stop() it first (one "
                                "name cannot be nested within itself)");
  }
  if (timers_[static_cast<std::size_t>(timer)].busy) {
    busy_start_locked(timer, stream, slot);  // throws before anything changed
    return;
  }
  slot.start = backend_->record(stream);  // throws before anything changed
  slot.stream = stream;
  slot.active = true;
}

void TimerEngine::stop(int timer, std::uintptr_t stream) {
  std::lock_guard<std::mutex> lock(mu_);
  check_open_locked();
  check_timer_locked(timer);
  auto it = open_.find(thread_serial());
  Open* slot = nullptr;
  if (it != open_.end() && static_cast<std::size_t>(timer) < it->second.size()) {
    slot = &it->second[static_cast<std::size_t>(timer)];
  }
  if (slot == nullptr || !slot->active) {
    throw std::invalid_argument("timer " + quoted(timers_[static_cast<std::size_t>(timer)].name) +
                                " was not started in this thread; call start() first");
  }
  slot->active = false;  // on failure below the pair is dropped, so the timer can start again
  if (slot->scope >= 0) {
    busy_stop_locked(*slot, stream);
    return;
  }
  Mark stop_mark;
  try {
    stop_mark = backend_->record(stream);
  } catch (...) {
    backend_->release(slot->start);
    throw;
  }
  if (backend_->synchronous()) {
    double ms = 0.0;
    backend_->elapsed(slot->start, stop_mark, &ms);
    timers_[static_cast<std::size_t>(timer)].ring.push(ms);
    return;
  }
  pending_.push_back(Pending{timer, slot->start, stop_mark, slot->stream, stream});
  if (pending_.size() >= kAutoHarvestPending) harvest_front_locked();
}

// ---- Busy time ---------------------------------------------------------------------------------
//
// A chain of marks per thread with an open busy scope. Each op ends with a tail mark; at an op's
// start the chain's last mark is queried without blocking: complete means the GPU caught up
// (it idles until this op's work arrives), so a resume mark is recorded and the op's segment
// starts there; otherwise the GPU is still busy and the segment starts at the last mark. The
// segments tile the GPU's busy time on the stream and leave out every idle gap.

void TimerEngine::set_busy(int timer, bool busy) {
  std::lock_guard<std::mutex> lock(mu_);
  check_timer_locked(timer);
  timers_[static_cast<std::size_t>(timer)].busy = busy;
}

bool TimerEngine::busy(int timer) const {
  std::lock_guard<std::mutex> lock(mu_);
  check_timer_locked(timer);
  return timers_[static_cast<std::size_t>(timer)].busy;
}

int TimerEngine::open_scopes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return open_scopes_;
}

std::vector<std::pair<std::string, long long>> TimerEngine::idle_entries() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::pair<std::string, long long>> out;
  for (const Timer& t : timers_) {
    if (t.idle_entries > 0) out.emplace_back(t.name, t.idle_entries);
  }
  return out;
}

int TimerEngine::new_slot_locked(std::uintptr_t stream) {
  const Mark mark = backend_->record(stream);  // throws before anything changed
  int i = 0;
  if (!free_slots_.empty()) {
    i = free_slots_.back();
    free_slots_.pop_back();
  } else {
    try {
      slots_.emplace_back();
      free_slots_.reserve(slots_.capacity());  // so unref_locked() never allocates
    } catch (...) {
      backend_->release(mark);
      throw;
    }
    i = static_cast<int>(slots_.size()) - 1;
  }
  MarkSlot& slot = slots_[static_cast<std::size_t>(i)];
  slot.mark = mark;
  slot.refs = 1;
  slot.serial = next_serial_++;
  return i;
}

void TimerEngine::unref_locked(int i) noexcept {
  if (i < 0) return;
  MarkSlot& slot = slots_[static_cast<std::size_t>(i)];
  if (--slot.refs > 0) return;
  backend_->release(slot.mark);
  try {
    free_slots_.push_back(i);  // within the capacity reserved in new_slot_locked()
  } catch (...) {
  }
}

TimerEngine::Chain& TimerEngine::own_chain_locked() {
  const std::uint64_t me = thread_serial();
  for (Chain& c : chains_) {
    if (c.thread == me) return c;
  }
  throw std::logic_error("no busy chain for this thread");
}

// The chain an op of the calling thread belongs to: its own (it opened a busy scope), else the
// only open one (autograd runs backward ops on its own threads while the training thread waits
// in backward()), else none: with several threads' scopes open the owner is ambiguous.
TimerEngine::Chain* TimerEngine::chain_for_op_locked() {
  const std::uint64_t me = thread_serial();
  for (Chain& c : chains_) {
    if (c.thread == me) return &c;
  }
  return chains_.size() == 1 ? &chains_.front() : nullptr;
}

int TimerEngine::new_scope_locked(int timer, int parent) {
  int i = 0;
  if (!free_scopes_.empty()) {
    i = free_scopes_.back();
    free_scopes_.pop_back();
  } else {
    scopes_.emplace_back();
    free_scopes_.reserve(scopes_.capacity());  // so finish_scope_locked() never allocates
    i = static_cast<int>(scopes_.size()) - 1;
  }
  scopes_[static_cast<std::size_t>(i)] = Scope{timer, parent, 0, false, false, 0.0};
  return i;
}

void TimerEngine::scope_done_locked(int scope, double ms, bool any) {
  Scope& s = scopes_[static_cast<std::size_t>(scope)];
  s.sum_ms += ms;
  s.any = s.any || any;
  --s.outstanding;
  finish_scope_locked(scope);
}

void TimerEngine::finish_scope_locked(int scope) {
  const Scope s = scopes_[static_cast<std::size_t>(scope)];
  if (!s.closed || s.outstanding > 0) return;
  Timer& t = timers_[static_cast<std::size_t>(s.timer)];
  if (s.any) {
    t.ring.push(s.sum_ms);
  } else {
    ++t.idle_entries;
  }
  try {
    free_scopes_.push_back(scope);
  } catch (...) {
  }
  if (s.parent >= 0) scope_done_locked(s.parent, s.sum_ms, s.any);
}

void TimerEngine::add_segment_locked(int op_timer, int scope, int start, int stop) {
  ++scopes_[static_cast<std::size_t>(scope)].outstanding;
  const Segment seg{op_timer, scope, start, stop};
  if (backend_->synchronous()) {
    double ms = 0.0;
    backend_->elapsed(slots_[static_cast<std::size_t>(start)].mark,
                      slots_[static_cast<std::size_t>(stop)].mark, &ms);
    store_segment_locked(seg, ms);
    return;
  }
  segments_.push_back(seg);  // may allocate while warming up only: the vector keeps capacity
  ++slots_[static_cast<std::size_t>(start)].refs;
  ++slots_[static_cast<std::size_t>(stop)].refs;
  if (segments_.size() >= kAutoHarvestPending) harvest_segments_locked(true);
}

void TimerEngine::store_segment_locked(const Segment& seg, double ms) {
  if (seg.op_timer >= 0) timers_[static_cast<std::size_t>(seg.op_timer)].ring.push(ms);
  scope_done_locked(seg.scope, ms, true);
}

bool TimerEngine::harvest_segments_locked(bool front_only) {
  std::size_t kept = 0, i = 0;
  bool all = true;
  try {
    for (; i < segments_.size(); ++i) {
      const Segment seg = segments_[i];
      double ms = 0.0;
      bool finished = false;
      try {
        finished = backend_->elapsed(slots_[static_cast<std::size_t>(seg.start)].mark,
                                     slots_[static_cast<std::size_t>(seg.stop)].mark, &ms);
      } catch (...) {
        // The driver failed on this segment: drop it (no sample), keep the rest.
        unref_locked(seg.start);
        unref_locked(seg.stop);
        scope_done_locked(seg.scope, 0.0, false);
        ++i;
        throw;
      }
      if (finished) {
        store_segment_locked(seg, ms);
        unref_locked(seg.start);
        unref_locked(seg.stop);
        continue;
      }
      all = false;
      if (front_only) break;
      segments_[kept++] = seg;
    }
  } catch (...) {
    for (; i < segments_.size(); ++i) segments_[kept++] = segments_[i];
    segments_.resize(kept);
    if (front_only) return false;  // inside op_end(), which succeeded: harvest() reports it
    throw;
  }
  for (; i < segments_.size(); ++i) segments_[kept++] = segments_[i];
  segments_.resize(kept);
  return all;
}

void TimerEngine::busy_start_locked(int timer, std::uintptr_t stream, Open& slot) {
  const std::uint64_t me = thread_serial();
  Chain* chain = nullptr;
  for (Chain& c : chains_) {
    if (c.thread == me) chain = &c;
  }
  if (chain == nullptr) {
    // The section's start mark starts the chain: GPU work queued before it is not ours.
    const int first = new_slot_locked(stream);  // throws before anything changed
    try {
      chains_.push_back(Chain{me, first, -1, 0, stream});
    } catch (...) {
      unref_locked(first);
      throw;
    }
    chain = &chains_.back();
  }
  const int scope = new_scope_locked(timer, chain->scope);
  if (chain->scope >= 0) ++scopes_[static_cast<std::size_t>(chain->scope)].outstanding;
  chain->scope = scope;
  ++chain->depth;
  ++open_scopes_;
  slot.scope = scope;
  slot.stream = stream;
  slot.active = true;
}

void TimerEngine::busy_stop_locked(Open& slot, std::uintptr_t stream) {
  const int scope = slot.scope;
  slot.scope = -1;
  Chain& chain = own_chain_locked();
  std::exception_ptr failure;
  try {
    // Work after the last tail belongs to the section only if the GPU was still behind that
    // tail now: then it never idled between the tail and this stop, so the gap is busy time.
    if (chain.last >= 0 && !backend_->done(slots_[static_cast<std::size_t>(chain.last)].mark)) {
      const int stop = new_slot_locked(stream);
      add_segment_locked(-1, scope, chain.last, stop);
      unref_locked(chain.last);
      chain.last = stop;
    }
  } catch (...) {
    failure = std::current_exception();  // close the scope anyway, then report
  }
  Scope& s = scopes_[static_cast<std::size_t>(scope)];
  s.closed = true;
  chain.scope = s.parent;
  --chain.depth;
  --open_scopes_;
  if (chain.depth == 0) {
    unref_locked(chain.last);
    chains_.erase(chains_.begin() + (&chain - chains_.data()));  // keeps capacity
  }
  finish_scope_locked(scope);
  if (failure) std::rethrow_exception(failure);
}

long long TimerEngine::op_begin(std::uintptr_t stream) {
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return -1;
  Chain* chain = chain_for_op_locked();
  if (chain == nullptr) return -1;
  if (chain->last >= 0 && !backend_->done(slots_[static_cast<std::size_t>(chain->last)].mark)) {
    ++slots_[static_cast<std::size_t>(chain->last)].refs;  // the GPU is busy: start there
    return chain->last;
  }
  return new_slot_locked(stream);  // the GPU is idle (or the chain restarts): resume mark
}

void TimerEngine::op_end(long long token, int op_timer, std::uintptr_t stream) {
  std::lock_guard<std::mutex> lock(mu_);
  if (token < 0 || closed_) return;
  int start = static_cast<int>(token);
  if (start >= static_cast<int>(slots_.size()) || slots_[static_cast<std::size_t>(start)].refs <= 0) {
    throw std::invalid_argument("`token=" + std::to_string(token) +
                                "` is not a token of op_begin() still open");
  }
  if (op_timer >= 0) check_timer_locked(op_timer);
  Chain* chain = chain_for_op_locked();
  if (chain == nullptr || chain->scope < 0) {  // the scope closed meanwhile: nothing to add to
    unref_locked(start);
    return;
  }
  // Another thread's op (or a collective) ended since this one began: start after it, so that
  // no stretch of the stream is counted twice.
  if (chain->last >= 0 &&
      slots_[static_cast<std::size_t>(chain->last)].serial >
          slots_[static_cast<std::size_t>(start)].serial) {
    unref_locked(start);
    start = chain->last;
    ++slots_[static_cast<std::size_t>(start)].refs;
  }
  int stop = -1;
  try {
    stop = new_slot_locked(stream);
  } catch (...) {
    unref_locked(start);
    throw;
  }
  add_segment_locked(op_timer, chain->scope, start, stop);
  unref_locked(start);
  unref_locked(chain->last);
  chain->last = stop;
}

void TimerEngine::comm_end(std::uintptr_t stream) {
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return;
  Chain* chain = chain_for_op_locked();
  if (chain == nullptr) return;
  const int fresh = new_slot_locked(stream);
  unref_locked(chain->last);
  chain->last = fresh;
}

// ---- Harvest -----------------------------------------------------------------------------------

void TimerEngine::harvest_front_locked() {
  std::size_t done = 0;
  try {
    for (; done < pending_.size(); ++done) {
      Pending& p = pending_[done];
      double ms = 0.0;
      if (!backend_->elapsed(p.start, p.stop, &ms)) break;
      timers_[static_cast<std::size_t>(p.timer)].ring.push(ms);
      backend_->release(p.start);
      backend_->release(p.stop);
    }
  } catch (const CudaError&) {
    // Inside stop(), which succeeded: the failed pair stays for harvest() to report and drop.
  }
  pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(done));
}

std::size_t TimerEngine::harvest_locked() {
  if (pending_.empty() && segments_.empty()) return 0;
  backend_->bind_thread();
  const std::size_t segments_before = segments_.size();
  harvest_segments_locked(false);  // throws after dropping the segment the driver failed on
  const std::size_t segments_done = segments_before - segments_.size();
  std::size_t done = 0, kept = 0, i = 0;
  try {
    for (; i < pending_.size(); ++i) {
      Pending p = pending_[i];
      double ms = 0.0;
      bool finished = false;
      try {
        finished = backend_->elapsed(p.start, p.stop, &ms);
      } catch (...) {
        // A pair the driver failed on cannot be timed: drop it (its events are destroyed, not
        // pooled), keep the rest, and report the error.
        discard_locked(p.start);
        discard_locked(p.stop);
        ++i;
        throw;
      }
      if (finished) {
        timers_[static_cast<std::size_t>(p.timer)].ring.push(ms);
        backend_->release(p.start);
        backend_->release(p.stop);
        ++done;
      } else {
        pending_[kept++] = p;
      }
    }
  } catch (...) {
    for (; i < pending_.size(); ++i) pending_[kept++] = pending_[i];
    pending_.resize(kept);
    throw;
  }
  pending_.resize(kept);
  return done + segments_done;
}

void TimerEngine::discard_locked(const Mark& mark) noexcept {
  if (flushing_) {
    try {
      deferred_discards_.push_back(mark);
    } catch (...) {  // out of memory: leak the event rather than destroy one being waited on
    }
    return;
  }
  backend_->discard(mark);
}

std::size_t TimerEngine::harvest() {
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return 0;
  return harvest_locked();
}

void TimerEngine::flush() {
  std::lock_guard<std::mutex> flush_lock(flush_mu_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return;
    flush_marks_.clear();
    for (const Pending& p : pending_) {
      if (p.start_stream != p.stop_stream) flush_marks_.push_back(p.start);
      flush_marks_.push_back(p.stop);
    }
    for (const Segment& seg : segments_) {
      flush_marks_.push_back(slots_[static_cast<std::size_t>(seg.start)].mark);
      flush_marks_.push_back(slots_[static_cast<std::size_t>(seg.stop)].mark);
    }
    flushing_ = true;
  }
  // Wait without the engine lock, so other threads keep timing. If another thread harvests one
  // of these pairs meanwhile, its event may be pooled and recorded again; waiting on it then
  // waits for that newer work, which is bounded, and never for anything outside this engine.
  // A pair another thread drops meanwhile keeps its events until the wait is over
  // (discard_locked), and close() waits for flush_mu_: no event here is destroyed under us.
  std::exception_ptr failure;
  try {
    for (const Mark& m : flush_marks_) backend_->wait(m);
  } catch (...) {
    failure = std::current_exception();
  }
  std::lock_guard<std::mutex> lock(mu_);
  flushing_ = false;
  for (const Mark& m : deferred_discards_) backend_->discard(m);
  deferred_discards_.clear();
  if (failure) std::rethrow_exception(failure);
  if (!closed_) harvest_locked();
}

std::size_t TimerEngine::pending() const {
  std::lock_guard<std::mutex> lock(mu_);
  return pending_.size() + segments_.size();
}

Summaries TimerEngine::summaries() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!closed_) harvest_locked();
  Summaries out;
  std::vector<double> samples;
  for (const Timer& t : timers_) {
    if (t.ring.size() == 0) continue;
    samples = t.ring.values();
    out.names.push_back(t.name);
    out.values.resize(out.values.size() + kNumColumns);
    summarize(samples, out.values.data() + out.values.size() - kNumColumns);
  }
  return out;
}

std::vector<double> TimerEngine::durations(int timer) const {
  std::lock_guard<std::mutex> lock(mu_);
  check_timer_locked(timer);
  return timers_[static_cast<std::size_t>(timer)].ring.values();
}

void TimerEngine::reset() {
  std::lock_guard<std::mutex> lock(mu_);
  for (Timer& t : timers_) {
    t.ring.clear();
    t.idle_entries = 0;
  }
  // Forget threads with nothing open once there are many (threads come and go over a long job).
  // Below the bound the slots stay, so a thread timing across windows does not allocate its slot
  // again in start() after every report (the hot path allocates nothing once warm).
  if (open_.size() <= kMaxIdleThreadSlots) return;
  const std::uint64_t caller = thread_serial();
  for (auto it = open_.begin(); it != open_.end();) {
    const bool any = it->first == caller ||
                     std::any_of(it->second.begin(), it->second.end(),
                                 [](const Open& o) { return o.active; });
    it = any ? std::next(it) : open_.erase(it);
  }
}

void TimerEngine::close() noexcept {
  try {
    std::lock_guard<std::mutex> flush_lock(flush_mu_);
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return;
    closed_ = true;
    try {
      harvest_locked();  // keep what already finished
    } catch (const std::exception& e) {
      log_warning(std::string("TimerEngine.close(): ") + e.what());
    }
    for (const Pending& p : pending_) {
      backend_->release(p.start);
      backend_->release(p.stop);
    }
    pending_.clear();
    // Busy time: every mark still referenced (segments, chains, open op tokens) goes back.
    for (MarkSlot& slot : slots_) {
      if (slot.refs > 0) backend_->release(slot.mark);
      slot.refs = 0;
    }
    slots_.clear();
    free_slots_.clear();
    segments_.clear();
    chains_.clear();
    scopes_.clear();
    free_scopes_.clear();
    open_scopes_ = 0;
    for (auto& [thread, open] : open_) {
      for (Open& o : open) {
        if (o.active && o.scope < 0) backend_->release(o.start);
        o.active = false;
      }
    }
    open_.clear();
    backend_->close();
  } catch (const std::exception& e) {  // e.g. std::system_error from a mutex: log, never throw
    log_warning(std::string("TimerEngine.close(): ") + e.what());
  }
}

bool TimerEngine::closed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return closed_;
}

}  // namespace straggler
