// TimerEngine: named timers, their open pairs per thread, the pending queue and the window.
#include "timing/timer_engine.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <stdexcept>
#include <utility>

#include "timing/harvest_queue.h"

namespace straggler {
namespace {

// Per-thread slot vectors kept across reset() before idle ones are forgotten.
constexpr std::size_t kMaxIdleThreadSlots = 64;
// 2**24 samples (128 MiB) per timer: larger is a typo, not a plan.
constexpr std::size_t kMaxCapacity = std::size_t{1} << 24;

std::string quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

// A number for the calling thread, unique for the life of the process.
std::uint64_t thread_serial() noexcept {
  static std::atomic<std::uint64_t> next{1};
  thread_local const std::uint64_t serial = next.fetch_add(1, std::memory_order_relaxed);
  return serial;
}

std::size_t checked_capacity(long long capacity) {
  if (capacity < 1 || static_cast<unsigned long long>(capacity) > kMaxCapacity) {
    throw std::invalid_argument("`capacity=" + std::to_string(capacity) +
                                "` must be an integer in [1, " + std::to_string(kMaxCapacity) +
                                "]");
  }
  return static_cast<std::size_t>(capacity);
}

std::unique_ptr<TimingBackend> checked_backend(std::unique_ptr<TimingBackend> backend) {
  if (backend == nullptr) throw std::invalid_argument("`backend=nullptr` must be a backend");
  return backend;
}

// Every argument checked before a backend is made (a CUDA one retains a context).
std::unique_ptr<TimingBackend> open_backend(BackendKind kind, long long capacity, int device) {
  checked_capacity(capacity);
  if (device < 0) {
    throw std::invalid_argument("`device=" + std::to_string(device) +
                                "` must be a non-negative CUDA device ordinal");
  }
  return make_backend(kind, device);
}

}  // namespace

TimerEngine::TimerEngine(std::unique_ptr<TimingBackend> backend, long long capacity)
    : capacity_(checked_capacity(capacity)),
      backend_(checked_backend(std::move(backend))),
      backend_name_(backend_->name()),
      synchronous_(backend_->synchronous()),
      busy_(*backend_, timers_) {
  pending_.reserve(kAutoHarvestPending * 2);
}

TimerEngine::TimerEngine(BackendKind kind, long long capacity, int device)
    : TimerEngine(open_backend(kind, capacity, device), capacity) {}

TimerEngine::TimerEngine(const std::string& backend, long long capacity, int device)
    : TimerEngine(parse_backend_kind(backend), capacity, device) {}

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
  const std::uint64_t me = thread_serial();
  std::vector<Open>& open = open_[me];
  if (open.size() <= static_cast<std::size_t>(timer)) open.resize(timers_.size());
  Open& slot = open[static_cast<std::size_t>(timer)];
  const Timer& t = timers_[static_cast<std::size_t>(timer)];
  if (slot.active) {
    throw std::invalid_argument("timer " + quoted(t.name) +
                                " is already started in this thread; stop() it first (one "
                                "name cannot be nested within itself)");
  }
  if (t.busy) {
    slot.scope = busy_.open_scope(timer, stream, me);  // throws before anything changed
  } else {
    slot.start = backend_->record(stream);  // throws before anything changed
  }
  slot.stream = stream;
  slot.active = true;
}

TimerEngine::Open& TimerEngine::take_open_locked(int timer, std::uint64_t me) {
  auto it = open_.find(me);
  if (it == open_.end() || static_cast<std::size_t>(timer) >= it->second.size() ||
      !it->second[static_cast<std::size_t>(timer)].active) {
    throw std::invalid_argument("timer " + quoted(timers_[static_cast<std::size_t>(timer)].name) +
                                " was not started in this thread; call start() first");
  }
  Open& slot = it->second[static_cast<std::size_t>(timer)];
  slot.active = false;  // on a failure after this the pair is dropped: the timer can start again
  return slot;
}

void TimerEngine::stop(int timer, std::uintptr_t stream) {
  std::lock_guard<std::mutex> lock(mu_);
  check_open_locked();
  check_timer_locked(timer);
  const std::uint64_t me = thread_serial();
  Open* slot = &take_open_locked(timer, me);
  if (slot->scope >= 0) {
    const int scope = slot->scope;
    slot->scope = -1;
    busy_.close_scope(scope, stream, me);
    return;
  }
  Mark stop_mark;
  try {
    stop_mark = backend_->record(stream);
  } catch (...) {
    backend_->release(slot->start);
    throw;
  }
  if (synchronous_) {
    double ms = 0.0;
    backend_->elapsed(slot->start, stop_mark, &ms);
    timers_[static_cast<std::size_t>(timer)].ring.push(ms);
    return;
  }
  pending_.push_back(Pending{timer, slot->start, stop_mark, slot->stream, stream});
  if (pending_.size() >= kAutoHarvestPending) harvest_pairs_locked(HarvestScope::kFront);
}

void TimerEngine::cancel(int timer, std::uintptr_t stream) {
  std::lock_guard<std::mutex> lock(mu_);
  check_open_locked();
  check_timer_locked(timer);
  const std::uint64_t me = thread_serial();
  Open* slot = &take_open_locked(timer, me);
  if (slot->scope >= 0) {
    const int scope = slot->scope;
    slot->scope = -1;
    busy_.close_scope(scope, stream, me, /*drop=*/true);
    return;
  }
  if (!synchronous_) backend_->release(slot->start);
}

// ---- Busy time: BusyTime does the work, under this engine's lock ------------------------------

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
  return busy_.open_scopes();
}

std::vector<std::pair<std::string, long long>> TimerEngine::idle_entries() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::pair<std::string, long long>> out;
  for (const Timer& t : timers_) {
    if (t.idle_entries > 0) out.emplace_back(t.name, t.idle_entries);
  }
  return out;
}

long long TimerEngine::op_begin(std::uintptr_t stream) {
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return -1;
  return busy_.op_begin(stream, thread_serial());
}

void TimerEngine::op_end(long long token, int op_timer, std::uintptr_t stream) {
  std::lock_guard<std::mutex> lock(mu_);
  if (token < 0 || closed_) return;
  if (op_timer >= 0) check_timer_locked(op_timer);
  busy_.op_end(token, op_timer, stream, thread_serial());
}

void TimerEngine::comm_end(std::uintptr_t stream) {
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return;
  busy_.comm_end(stream, thread_serial());
}

// ---- Harvest -----------------------------------------------------------------------------------

std::size_t TimerEngine::harvest_pairs_locked(HarvestScope scope) {
  return harvest_queue(
      pending_, scope,
      [this](const Pending& p) {
        double ms = 0.0;
        if (!backend_->elapsed(p.start, p.stop, &ms)) return false;
        timers_[static_cast<std::size_t>(p.timer)].ring.push(ms);
        backend_->release(p.start);
        backend_->release(p.stop);
        return true;
      },
      [this](const Pending& p) noexcept {
        // A pair the driver failed on cannot be timed: its events are destroyed, not pooled.
        discard_locked(p.start);
        discard_locked(p.stop);
      });
}

std::size_t TimerEngine::harvest_locked() {
  if (pending_.empty() && busy_.pending() == 0) return 0;
  backend_->bind_thread();
  // Each throws after dropping the item the driver failed on, keeping the rest.
  const std::size_t segments = busy_.harvest(HarvestScope::kAll);
  return segments + harvest_pairs_locked(HarvestScope::kAll);
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
    busy_.marks_to_wait_on(flush_marks_);
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
  return pending_.size() + busy_.pending();
}

// ---- The window --------------------------------------------------------------------------------

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
    const bool any = it->first == caller || std::any_of(it->second.begin(), it->second.end(),
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
    busy_.release_all();
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
