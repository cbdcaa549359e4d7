// TimerEngine and its two backends (CUDA events, host clock).
#include "timer_engine.h"

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
  row[kStd] = std::sqrt(ss / static_cast<double>(n));  // population (ddof=0)
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
  if (pending_.empty()) return 0;
  backend_->bind_thread();
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
  return done;
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
  return pending_.size();
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
  for (Timer& t : timers_) t.ring.clear();
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
    for (auto& [thread, open] : open_) {
      for (Open& o : open) {
        if (o.active) backend_->release(o.start);
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
