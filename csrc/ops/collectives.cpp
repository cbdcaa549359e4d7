// The collective observer: every c10d collective (dispatcher ops c10d::allreduce_, barrier,
// send, recv_, ...) passes through one boxed kernel that straggler registers, while enabled, at
// the BackendSelect key of each c10d op. That key is in every call's key set (torch's default
// TLS set; for ops with tensor arguments torch has only a fallthrough there), just above the
// backend's kernel (CPU, CUDA): Python's torch.distributed, DDP's reducer (autograd hooks),
// functional collectives (their inner c10d call), async_op=True calls and inference mode all go
// through it, on any process group; other ops never see it, so they pay nothing. The kernel notes the group, the arrival time and the group's sequence
// index, redispatches below autograd and, on the returned Work, adds a future callback that
// notes the completion time: the wait is completion - arrival (on gloo, when the work finished
// on its worker thread, whatever the caller does with wait()).
//
// Per group (the c10d group name, identical on every member; point-to-point ops get a pair
// "<group>:p2p:<a>-<b>" of group ranks) the observer keeps progress (the last collective's
// index and op, the unfinished ones with their arrivals) and the window's waits: count, sum,
// minimum and a log2 histogram from 1 µs. Python reads them (straggler/timing/collectives.py).
// Groups named in `exclude` (the detector's own) are passed through untouched.
//
// Never throws into the caller's collective: a failure of the bookkeeping is recorded (error())
// and the observer stops recording; the collective itself always runs, and its own exceptions
// propagate unchanged. Fake and meta tensors are handled above (no collective runs): not seen.
#include "ops/collectives.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/ivalue.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <pybind11/stl.h>
#include <torch/library.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "ops/gpu_waits.h"

namespace py = pybind11;

namespace straggler_ops {
namespace {

constexpr int kBins = 32;  // wait histogram: bin i holds [2^(i-1), 2^i) µs; bin 0 < 1 µs
// The keys below ours: the backend's kernel (CPU, CUDA, ...) runs next.
const c10::DispatchKeySet kBelow(c10::DispatchKeySet::FULL_AFTER, c10::DispatchKey::BackendSelect);
constexpr std::size_t kMaxGroups = 4096;  // groups (and p2p pairs) tracked; more are ignored
constexpr std::size_t kPollAt = 8;  // a group's finished GPU collectives are read from here
constexpr std::size_t kMaxGpuPending = 1024;  // per group; more: not measured
constexpr std::size_t kMaxSteps = 16384;  // own time per step kept per window (the last ones)
constexpr std::size_t kGapRing = 64;  // the last closed gaps, for a section that spans collectives
constexpr std::size_t kMaxCounted = 16;  // the last sections' spans, for nested sections

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int wait_bin(std::int64_t wait_ns) {
  if (wait_ns < 1000) return 0;
  // 1 + floor(log2(µs)): the bit width of the whole µs.
  const int b = 64 - __builtin_clzll(static_cast<unsigned long long>(wait_ns / 1000));
  return b < kBins ? b : kBins - 1;
}

// An issued, unfinished collective of a group: its sequence number (absolute, see
// Group::seq_base) and arrival (steady clock ns).
struct Pending {
  std::uint64_t seq;
  std::int64_t arrival;
  bool left = false;  // its caller resumed from wait() before the completion was noted
};

// One group (or p2p pair) as this rank sees it. Guarded by Observer::mu_. Never destroyed
// (Observer::by_name_ owns it, at most kMaxGroups): a completion callback holds a plain pointer.
struct Group {
  std::string name;
  std::string desc;  // the group's description (new_group(group_desc=...)); "" for a pair
  int size = 0;
  int rank = -1;
  bool excluded = false;
  std::uint64_t seq = 0;  // collectives issued, ever (absolute sequence numbers)
  // seq when observing last started: indices count from there (index = seq - seq_base), and a
  // completion of a collective from before (seq <= seq_base) is ignored.
  std::uint64_t seq_base = 0;
  std::string last_op;
  const char* last_op_name = nullptr;  // the kernel's name the string was copied from
  // The unfinished ones, in sequence order: they mostly finish in order, so a finished one is
  // the first, and the oldest unfinished one stays first.
  std::deque<Pending> pending;
  // From here on written by the completion (the backend's thread), above by the caller's: a
  // cache line of their own, so that the two threads do not pass more lines back and forth.
  alignas(64) std::uint64_t completed = 0;
  std::int64_t last_done_ns = 0;  // when the last collective finished (steady clock)
  // GPU collectives whose events are recorded, oldest first, and the last one read's end.
  std::deque<std::pair<std::uint64_t, EventPair>> gpu_pending;
  CUevent gpu_last_end = nullptr;
  int gpu_last_device = -1;
  // The window since the last take_window().
  std::uint64_t n = 0;
  std::int64_t wait_sum_ns = 0;
  std::int64_t wait_min_ns = std::numeric_limits<std::int64_t>::max();
  std::array<std::uint64_t, kBins> hist{};
};

// Removes the pending collective `seq` and returns it (false: not pending: abandoned, or from
// before a restart).
bool take_pending(Group& g, std::uint64_t seq, Pending* out) {
  if (!g.pending.empty() && g.pending.front().seq == seq) {
    *out = g.pending.front();
    g.pending.pop_front();
    return true;
  }
  for (auto it = g.pending.begin(); it != g.pending.end(); ++it) {
    if (it->seq == seq) {
      *out = *it;
      g.pending.erase(it);
      return true;
    }
  }
  return false;
}

// Group state of a new start: indices count from here, the window and progress restart.
void restart(Group& g) {
  g.seq_base = g.seq;  // GPU events: released by the caller
  g.pending.clear();
  g.completed = 0;
  g.last_done_ns = 0;
  g.n = 0;
  g.wait_sum_ns = 0;
  g.wait_min_ns = std::numeric_limits<std::int64_t>::max();
  g.hist.fill(0);
}

struct Key {
  const void* pg;
  int peer;  // group rank of the p2p peer; -1 for collectives
  bool operator==(const Key& o) const { return pg == o.pg && peer == o.peer; }
};
struct KeyHash {
  std::size_t operator()(const Key& k) const {
    return std::hash<const void*>()(k.pg) ^ (static_cast<std::size_t>(k.peer + 1) << 1);
  }
};

class Observer {
 public:
  static Observer& get() {
    static Observer* o = new Observer();  // never destroyed: callbacks may run at exit
    return *o;
  }

  void enable(const std::vector<std::string>& exclude);
  void disable() noexcept;
  void set_excluded(const std::vector<std::string>& names);
  [[nodiscard]] bool enabled() const { return enabled_.load(std::memory_order_acquire); }
  [[nodiscard]] bool failed() const { return failed_.load(std::memory_order_acquire); }
  [[nodiscard]] std::string error() const {
    std::lock_guard<std::mutex> lock(mu_);
    return error_;
  }
  [[nodiscard]] long long observed() const { return observed_.load(std::memory_order_relaxed); }

  // Called by the kernel before the collective; returns the group and the collective's
  // sequence number, or nullptr (not observed).
  Group* arrive(const c10d::ProcessGroup& pg, int peer, const char* op,
                std::uint64_t* seq) noexcept;
  // The collective `seq` finished (`ok`: its wait is measured); from before a restart: ignored.
  void complete(Group& g, std::uint64_t seq, bool ok) noexcept;
  void abandon(Group& g, std::uint64_t seq) noexcept;
  // The caller of the host collective `seq` returned from its Work's wait() at `t`, having
  // entered it at `entered` (ResumeWork): the own time's gap starts there.
  void resumed(Group& g, std::uint64_t seq, std::int64_t entered, std::int64_t t) noexcept;
  void fail(const char* what) noexcept;

  // The GPU path (gpu_waits.h): the device a collective's tensors are on (-1: host), the
  // stream to record on, and the pair of a finished enqueue.
  [[nodiscard]] int gpu_device(const at::Tensor& t) const;
  [[nodiscard]] CUstream gpu_stream(int device) const;
  GpuWaits& gpu() { return gpu_; }
  void gpu_enqueued(Group& g, std::uint64_t seq, const EventPair& pair) noexcept;
  [[nodiscard]] long long gpu_read() const { return gpu_read_.load(std::memory_order_relaxed); }

  py::list progress() const;
  py::list take_window();
  // The window's own time per step (ns, oldest first, as raw int64 bytes), how many steps
  // there were (more than the bytes hold when the ring wrapped) and whether a GPU collective
  // voided them; the window restarts.
  py::tuple take_own_time();
  // The group named `name` restarts (not reported until its next collective).
  void forget(const std::string& name) noexcept;
  // The own time noted so far is dropped (the bench's).
  void drop_own_time() noexcept {
    std::lock_guard<std::mutex> lock(mu_);
    steps_.clear();
    outside_.clear();
    steps_n_ = 0;
    step_own_ns_ = step_own_done_ns_ = 0;
    step_unseen_ = false;
    step_sections_ns_ = open_sections_ns_ = 0;
    step_gaps_ = 0;
    step_started_ = step_valid_ = false;
  }
  // A step ended (the caller's training loop): the own time since the last step that had a
  // gap becomes one sample.
  void mark_step() noexcept;
  // A timed section ran from `start` to `stop` (steady clock ns, on the caller's thread): its
  // part inside this rank's gaps is taken off the own time of the step that holds the gap.
  void section(std::int64_t start, std::int64_t stop) noexcept;

 private:
  Observer() = default;
  Group* lookup(const c10d::ProcessGroup& pg, int peer);
  void add_wait_locked(Group& g, std::int64_t wait_ns);
  void poll_gpu_locked(Group& g) noexcept;
  // The rank's own time (docs/culprits.md): a collective of a group of 2+ ranks arrives
  // (`arrived`) or leaves (`left`, at `t`) the set of those in flight.
  void arrived_locked(const Group& g, std::int64_t t);
  // `seq`: the collective leaving; `resumed`: at its caller's resume from wait() (else at its
  // completion).
  void left_locked(const Group& g, std::int64_t t, std::uint64_t seq, bool resumed);
  // The part of [start, stop] inside the gaps: the open one (`open`) and the closed ones.
  void in_gaps_locked(std::int64_t start, std::int64_t stop, std::int64_t* open,
                      std::int64_t* closed) const;

  std::atomic<bool> enabled_{false};
  std::atomic<bool> failed_{false};
  std::atomic<long long> observed_{0};
  std::atomic<long long> gpu_read_{0};
  // Tests: collectives on CPU tensors are timed as GPU ones on this stream of device 0 (the
  // simulated driver's); -1: only CUDA tensors take the GPU path.
  std::atomic<long long> cpu_as_gpu_stream_{-1};
  GpuWaits gpu_;

 public:
  void set_cpu_as_gpu_stream(long long stream) { cpu_as_gpu_stream_.store(stream); }

 private:
  std::unique_ptr<torch::Library> library_;  // the registrations; destroyed = unregistered
  mutable std::mutex mu_;  // everything below
  std::string error_;
  std::unordered_set<std::string> excluded_;
  std::unordered_map<Key, Group*, KeyHash> by_key_;  // a cache over by_name_
  std::map<std::string, std::unique_ptr<Group>> by_name_;  // never erased: see Group
  // Own time: the gaps between this rank's collectives (groups of 2+ ranks, any group), each
  // from the moment none was in flight to the next arrival, summed per step (mark_step); the
  // window's last kMaxSteps in a ring. A GPU collective in the window voids them (the host's
  // gaps are not the GPU's).
  int in_flight_ = 0;
  std::int64_t idle_since_ns_ = -1;  // -1: not known (nothing finished since the start)
  std::int64_t step_own_ns_ = 0;  // this step's gaps so far
  // The open gap as the completion began it (before a caller's resume moved it), the
  // collective whose completion began it, and whether its caller's wait() was seen (a gap
  // begun at a resume: seen). A caller that waits on the Work's future instead (DDP's reducer)
  // is not seen resuming: its wake-up stays in the gap. A step with such a gap takes every gap
  // from the completions (`step_own_done_ns_`), so that each rank's wake-ups count alike: in
  // DDP with a broadcast a step from rank 0 (Lightning's), rank 0 waits in DDP's all-reduce
  // (wake-up unseen) and the others in the broadcast (seen), and rank 0 looked slower.
  std::int64_t idle_done_ns_ = -1;
  const Group* idle_group_ = nullptr;
  std::uint64_t idle_seq_ = 0;
  bool idle_seen_ = true;
  std::int64_t step_own_done_ns_ = 0;
  bool step_unseen_ = false;  // a gap of this step began at a completion nobody waited on
  std::uint64_t step_gaps_ = 0;
  // The step's first arrival found nothing in flight. When it did not (a completion callback
  // that ran after the training thread resumed and issued the next collective, or collectives
  // overlapping the step boundary), the step's gap before it is unknown: the step is dropped.
  bool step_started_ = false;
  bool step_valid_ = false;
  std::vector<std::int64_t> steps_;
  std::uint64_t steps_n_ = 0;  // steps in the window (the ring holds the last kMaxSteps)
  bool steps_gpu_ = false;
  // The own time outside the sections (docs/culprits.md): the sections' time inside the gaps,
  // of the open gap (moved to its step when the gap closes) and of this step's closed ones; per
  // step, the own time less it (`outside_`, beside `steps_`). The last closed gaps (a ring) and
  // the last sections' spans (merged, so that a section around another counts once).
  std::int64_t open_sections_ns_ = 0;
  std::int64_t step_sections_ns_ = 0;
  std::vector<std::int64_t> outside_;
  std::array<std::pair<std::int64_t, std::int64_t>, kGapRing> gaps_{};
  std::uint64_t gaps_n_ = 0;
  std::vector<std::pair<std::int64_t, std::int64_t>> counted_;
};

// One observed collective between its call and its Work (begin_collective/finish_collective).
struct Call {
  Group* group = nullptr;  // null: not observed
  std::uint64_t seq = 0;
  EventPair pair;  // the GPU path's events (start == nullptr: host path)
};

// Runs `body`; an exception never reaches the collective: `undo` runs, then the observer
// turns off with the exception's message (`unknown` when it is no std::exception).
template <typename Body, typename Undo>
void run_or_fail(Observer& o, const char* unknown, Body&& body, Undo&& undo) noexcept {
  try {
    body();
  } catch (const c10::Error& e) {
    undo();
    o.fail(e.what_without_backtrace());
  } catch (const std::exception& e) {
    undo();
    o.fail(e.what());
  } catch (...) {
    undo();
    o.fail(unknown);
  }
}

// Runs `read` (reading a collective's arguments or state) under `run_or_fail`.
template <typename Read>
void read_or_fail(Observer& o, Read&& read) noexcept {
  run_or_fail(o, "unknown exception reading a collective's arguments", std::forward<Read>(read),
              [] {});
}

// Before the collective: the group, its index, the arrival, and on a GPU the start event.
// `first` is the collective's first tensor (null: none); `measure` whether a Work will tell
// its end. Never throws: a failure is recorded and the collective runs unobserved.
Call begin_collective(Observer& o, const c10d::ProcessGroup& pg, int peer, const char* op,
                      const at::Tensor* first, bool measure) noexcept {
  Call c;
  read_or_fail(o, [&] {
    c.group = o.arrive(pg, peer, op, &c.seq);
    if (c.group && measure && first != nullptr) {
      const int device = o.gpu_device(*first);
      if (device >= 0) c.pair = o.gpu().start(device, o.gpu_stream(device));
    }
  });
  return c;
}

// The collective threw: it is not in flight any more.
void abandon_collective(Observer& o, Call& c) noexcept {
  if (c.group) o.abandon(*c.group, c.seq);
  o.gpu().release(c.pair.device, c.pair.start);
}

// A host collective's Work as its caller holds it: every call goes to torch's Work, and wait()
// also tells the observer when the caller resumed. The own time's gap starts there rather than
// at the completion on the backend's thread: the caller's wake-up after gloo's worker finished
// is not time of its own, and a caller woken before the worker's callback ran no longer voids
// its step (docs/culprits.md, "How it is measured").
class ResumeWork final : public c10d::Work {
 public:
  ResumeWork(c10::intrusive_ptr<c10d::Work> inner, Group* group, std::uint64_t seq)
      : c10d::Work(-1, inner->retrieveOpType()),
        inner_(std::move(inner)),
        group_(group),
        seq_(seq) {}
  bool isCompleted() override { return inner_->isCompleted(); }
  bool isSuccess() const override { return inner_->isSuccess(); }
  std::exception_ptr exception() const override { return inner_->exception(); }
  int sourceRank() const override { return inner_->sourceRank(); }
  std::vector<at::Tensor> result() override { return inner_->result(); }
  void synchronize() override { inner_->synchronize(); }
  bool wait(std::chrono::milliseconds timeout) override {
    const std::int64_t entered = now_ns();
    const bool done = inner_->wait(timeout);  // throws the collective's error, unchanged
    Observer::get().resumed(*group_, seq_, entered, now_ns());
    return done;
  }
  void blockCurrentStream() override { inner_->blockCurrentStream(); }
  void abort() override { inner_->abort(); }
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override { return inner_->getFuture(); }
  c10::intrusive_ptr<c10::ivalue::Future> getFutureResult() override {
    return inner_->getFutureResult();
  }
  float getDuration() const override { return inner_->getDuration(); }
  std::uint64_t getSequencenumber() const override { return inner_->getSequencenumber(); }

 private:
  c10::intrusive_ptr<c10d::Work> inner_;
  Group* group_;  // never destroyed (Observer::by_name_)
  std::uint64_t seq_;
};

// Attaches the end of `c` to `work`'s future (a callback), or notes it now when the Work has
// no future; throws what getFuture or addCallback throw. True: a host collective's end comes
// from the callback (its caller's wait() is then worth seeing: ResumeWork).
bool attach_end(Observer& o, Call& c, c10d::Work& work, std::atomic<bool>& no_future) {
  c10::intrusive_ptr<c10::ivalue::Future> future;
  try {
    future = work.getFuture();
  } catch (const c10::Error&) {
    future.reset();  // this op's Work has no future (gloo's barrier): not measured
  }
  if (!future) {
    no_future.store(true, std::memory_order_relaxed);
    o.gpu().release(c.pair.device, c.pair.start);
    o.complete(*c.group, c.seq, false);
    return false;
  }
  // Runs on the backend's thread when the work finishes (inline if it already has). The host
  // path's callback holds 16 trivially copyable bytes: std::function keeps them inline (no
  // allocation per collective), and it does not use the future's value (uses_future=false:
  // no device guard or stream synchronisation around it). A CUDA future (NCCL) is done at
  // enqueue and runs a callback that uses it with a current stream that waits for the
  // collective's end: the GPU path's end event goes there.
  Group* group = c.group;
  const std::uint64_t seq = c.seq;
  if (c.pair.start == nullptr) {
    future->addCallback(
        [group, seq](c10::ivalue::Future& f) {
          Observer::get().complete(*group, seq, !f.hasError());
        },
        /*uses_future=*/false);
    return true;
  }
  future->addCallback([group, seq, pair = c.pair](c10::ivalue::Future& f) mutable {
    Observer& ob = Observer::get();
    const bool ok = !f.hasError();
    bool ended = false;
    try {
      ended = ok && ob.gpu().end(pair, ob.gpu_stream(pair.device));
    } catch (...) {  // the stream getter: never into the backend's thread
    }
    if (ended) {
      ob.gpu_enqueued(*group, seq, pair);
      ob.complete(*group, seq, false);  // progress; the wait is the GPU's
      return;
    }
    ob.gpu().release(pair.device, pair.start, pair.end);
    ob.complete(*group, seq, ok);
  });
  return false;
}

// After the collective returned its Work (null: it returns none and finished on return):
// the end is noted by a callback on the Work's future, and a host collective's Work is handed
// to its caller as a ResumeWork (`*work` replaced). `no_future` is the op's flag: its Work had
// no future once (gloo's barrier), so only progress is kept from then on.
void finish_collective(Observer& o, Call& c, c10::intrusive_ptr<c10d::Work>* work,
                       std::atomic<bool>& no_future) noexcept {
  if (!c.group) return;
  if (work == nullptr || no_future.load(std::memory_order_relaxed)) {
    o.gpu().release(c.pair.device, c.pair.start);
    o.complete(*c.group, c.seq, work == nullptr);  // without a Work: synchronous
    return;
  }
  bool host = false;
  run_or_fail(
      o, "unknown exception attaching to a collective's Work",
      [&] { host = attach_end(o, c, **work, no_future); }, [&] { o.abandon(*c.group, c.seq); });
  if (!host) return;
  try {
    *work = c10::make_intrusive<ResumeWork>(*work, c.group, c.seq);
  } catch (...) {  // no memory: the caller keeps torch's Work, the gap starts at the completion
  }
}

// The first tensor among a boxed call's arguments (a tensor, or a tensor list's first).
const at::Tensor* first_tensor(const torch::jit::Stack& stack, std::size_t base, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    const c10::IValue& v = stack[base + i];
    if (v.isTensor()) return &v.toTensor();
    if (v.isTensorList()) {
      const auto list = v.toListRef();
      if (!list.empty() && list[0].isTensor()) return &list[0].toTensor();
    }
  }
  return nullptr;
}

// The boxed kernel of one c10d op at the BackendSelect key.
class Kernel final : public c10::OperatorKernel {
 public:
  Kernel(std::string op, int pg_arg, int peer_arg, bool returns_work)
      : op_(std::move(op)), pg_arg_(pg_arg), peer_arg_(peer_arg), returns_work_(returns_work) {}

  void operator()(const c10::OperatorHandle& handle, c10::DispatchKeySet keys,
                  torch::jit::Stack* stack) {
    Observer& o = Observer::get();
    Call c;
    if (o.enabled() && !o.failed()) {
      read_or_fail(o, [&] {
        const std::size_t n = handle.schema().arguments().size();
        const std::size_t base = stack->size() - n;
        const int peer = peer_arg_ >= 0 ? static_cast<int>((*stack)[base + peer_arg_].toInt()) : -1;
        const auto pg = (*stack)[base + pg_arg_].toCustomClass<c10d::ProcessGroup>();
        const bool measure = returns_work_ && !no_future_.load(std::memory_order_relaxed);
        c = begin_collective(o, *pg, peer, op_.c_str(),
                             measure ? first_tensor(*stack, base, n) : nullptr, measure);
      });
    }
    try {
      handle.redispatchBoxed(keys & kBelow, stack);
    } catch (...) {
      abandon_collective(o, c);
      throw;  // the collective's own error, unchanged
    }
    if (!c.group) return;
    if (!returns_work_) {  // synchronous (monitored_barrier_): finished on return
      finish_collective(o, c, nullptr, no_future_);
      return;
    }
    c10::intrusive_ptr<c10d::Work> work;
    try {
      work = stack->back().toCustomClass<c10d::Work>();
    } catch (...) {
      abandon_collective(o, c);
      o.fail("a collective returned no Work");
      return;
    }
    const c10d::Work* returned = work.get();
    finish_collective(o, c, &work, no_future_);
    if (work.get() != returned) stack->back() = c10::IValue(std::move(work));
  }

 private:
  std::string op_;
  int pg_arg_;
  int peer_arg_;
  bool returns_work_;
  std::atomic<bool> no_future_{false};  // its Work had no future once: only progress is kept
};

// allreduce_ (DDP's bucket all-reduces, most collectives of a data-parallel job) unboxed: the
// boxed kernel above costs its arguments' boxing (a list of the tensors) and unboxing.
using AllreduceResult = std::tuple<std::vector<at::Tensor>, c10::intrusive_ptr<c10d::Work>>;
using AllreduceSig = AllreduceResult(at::TensorList, const c10::intrusive_ptr<c10d::ProcessGroup>&,
                                     const c10::intrusive_ptr<c10d::ReduceOp>&,
                                     const std::optional<at::Tensor>&, bool, int64_t);
std::atomic<bool> g_allreduce_no_future{false};

AllreduceResult allreduce_kernel(c10::DispatchKeySet keys, at::TensorList tensors,
                                 const c10::intrusive_ptr<c10d::ProcessGroup>& pg,
                                 const c10::intrusive_ptr<c10d::ReduceOp>& reduce_op,
                                 const std::optional<at::Tensor>& sparse_indices, bool async_op,
                                 int64_t timeout) {
  static const auto handle =
      c10::Dispatcher::singleton().findSchemaOrThrow("c10d::allreduce_", "").typed<AllreduceSig>();
  Observer& o = Observer::get();
  Call c;
  if (o.enabled() && !o.failed()) {
    const bool measure = !g_allreduce_no_future.load(std::memory_order_relaxed);
    c = begin_collective(o, *pg, -1, "allreduce_",
                         measure && !tensors.empty() ? &tensors[0] : nullptr, measure);
  }
  AllreduceResult result;
  try {
    result =
        handle.redispatch(keys & kBelow, tensors, pg, reduce_op, sparse_indices, async_op, timeout);
  } catch (...) {
    abandon_collective(o, c);
    throw;  // the collective's own error, unchanged
  }
  finish_collective(o, c, &std::get<1>(result), g_allreduce_no_future);
  return result;
}

Group* Observer::lookup(const c10d::ProcessGroup& pg, int peer) {
  const std::string& name = pg.getGroupName();
  const Key key{&pg, peer};
  auto it = by_key_.find(key);
  // A process group destroyed and another made at the same address: the name tells them apart.
  if (it != by_key_.end()) {
    const std::string& have = it->second->name;
    if (peer < 0 ? have == name
                 : have.size() > name.size() && have.compare(0, name.size(), name) == 0 &&
                       have[name.size()] == ':') {
      return it->second;
    }
  }
  std::string full = name;
  int size = pg.getSize();
  int rank = pg.getRank();
  if (peer >= 0) {
    const int a = std::min(rank, peer), b = std::max(rank, peer);
    full += ":p2p:" + std::to_string(a) + "-" + std::to_string(b);
    size = 2;
    rank = rank == a ? 0 : 1;
  }
  auto named = by_name_.find(full);
  Group* g = nullptr;
  if (named != by_name_.end()) {
    g = named->second.get();
  } else {
    if (by_name_.size() >= kMaxGroups) return nullptr;
    auto made = std::make_unique<Group>();
    g = made.get();
    g->name = full;
    g->excluded = excluded_.count(name) != 0;
    by_name_.emplace(full, std::move(made));
  }
  g->size = size;
  g->rank = rank;
  if (peer < 0) g->desc = pg.getGroupDesc();
  if (by_key_.size() >= kMaxGroups) by_key_.clear();  // a cache over by_name_
  by_key_[key] = g;
  return g;
}

Group* Observer::arrive(const c10d::ProcessGroup& pg, int peer, const char* op,
                        std::uint64_t* seq) noexcept {
  try {
    const std::int64_t t = now_ns();
    std::lock_guard<std::mutex> lock(mu_);
    Group* g = lookup(pg, peer);
    if (g == nullptr || g->excluded) return nullptr;
    *seq = ++g->seq;
    if (g->last_op_name != op) {  // copied only when the op changes
      g->last_op = op;
      g->last_op_name = op;
    }
    g->pending.push_back(Pending{*seq, t, false});
    arrived_locked(*g, t);
    observed_.fetch_add(1, std::memory_order_relaxed);
    return g;
  } catch (const std::exception& e) {
    fail(e.what());
  } catch (...) {
    fail("unknown exception recording a collective's arrival");
  }
  return nullptr;
}

void Observer::complete(Group& g, std::uint64_t seq, bool ok) noexcept {
  const std::int64_t done = now_ns();
  std::lock_guard<std::mutex> lock(mu_);
  Pending p{};
  if (seq <= g.seq_base || !take_pending(g, seq, &p)) return;  // from before a restart
  if (!p.left) left_locked(g, done, seq, false);
  ++g.completed;
  // A group's collectives finish in order: time spent before the previous one finished was
  // spent waiting for that one (DDP's bucket all-reduces overlap), so it is counted there once.
  const std::int64_t wait = std::max<std::int64_t>(0, done - std::max(p.arrival, g.last_done_ns));
  g.last_done_ns = std::max(g.last_done_ns, done);
  if (!ok) return;  // failed, or no future to tell its end: no wait measured
  add_wait_locked(g, wait);
}

void Observer::arrived_locked(const Group& g, std::int64_t t) {
  if (g.size < 2) return;
  if (!step_started_) {
    step_started_ = true;
    step_valid_ = in_flight_ == 0 && idle_since_ns_ >= 0;
  }
  if (in_flight_++ > 0 || idle_since_ns_ < 0) return;
  step_own_ns_ += std::max<std::int64_t>(0, t - idle_since_ns_);
  step_own_done_ns_ += std::max<std::int64_t>(0, t - idle_done_ns_);
  if (!idle_seen_) step_unseen_ = true;
  ++step_gaps_;
  gaps_[gaps_n_++ % kGapRing] = {idle_since_ns_, t};
  step_sections_ns_ += open_sections_ns_;
  open_sections_ns_ = 0;
}

void Observer::mark_step() noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  if (!step_started_) return;  // no collective in this step: its time goes to the next one's
  const bool keep = step_valid_ && step_gaps_ > 0;
  step_started_ = step_valid_ = false;
  if (!keep) {
    // Its sections' time goes with it: carried into the next step, it was taken off that
    // step's own time too (the rank dropping more steps, the non-root of a per-step broadcast
    // such as Lightning's, then looked faster outside its sections than its peers).
    step_own_ns_ = step_own_done_ns_ = 0;
    step_unseen_ = false;
    step_sections_ns_ = 0;
    step_gaps_ = 0;
    return;
  }
  const std::int64_t own = step_unseen_ ? step_own_done_ns_ : step_own_ns_;
  const std::int64_t outside = std::max<std::int64_t>(0, own - step_sections_ns_);
  step_sections_ns_ = 0;
  if (steps_.size() < kMaxSteps) {
    steps_.push_back(own);
    outside_.push_back(outside);
  } else {
    steps_[steps_n_ % kMaxSteps] = own;
    outside_[steps_n_ % kMaxSteps] = outside;
  }
  ++steps_n_;
  step_own_ns_ = step_own_done_ns_ = 0;
  step_unseen_ = false;
  step_gaps_ = 0;
}

void Observer::left_locked(const Group& g, std::int64_t t, std::uint64_t seq, bool resumed) {
  if (g.size < 2 || in_flight_ <= 0) return;
  if (--in_flight_ == 0) {
    idle_since_ns_ = idle_done_ns_ = t;
    idle_group_ = &g;
    idle_seq_ = seq;
    idle_seen_ = resumed;
    open_sections_ns_ = 0;
  }
}

void Observer::in_gaps_locked(std::int64_t start, std::int64_t stop, std::int64_t* open,
                              std::int64_t* closed) const {
  *open = *closed = 0;
  if (stop <= start) return;
  if (in_flight_ == 0 && idle_since_ns_ >= 0) {
    *open = std::max<std::int64_t>(0, stop - std::max(start, idle_since_ns_));
    if (idle_since_ns_ <= start) return;  // the usual section: no collective inside
  }
  // Newest first, back to the first gap that ended before the section began.
  const std::uint64_t held = std::min<std::uint64_t>(gaps_n_, kGapRing);
  for (std::uint64_t i = 1; i <= held; ++i) {
    const auto& [begin, end] = gaps_[(gaps_n_ - i) % kGapRing];
    if (end <= start) break;
    *closed += std::max<std::int64_t>(0, std::min(end, stop) - std::max(begin, start));
  }
}

void Observer::section(std::int64_t start, std::int64_t stop) noexcept {
  try {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop <= start) return;
    std::int64_t open = 0, closed = 0;
    in_gaps_locked(start, stop, &open, &closed);
    // A section around sections counted already (an outer one exits after its inner ones):
    // their part is not taken twice. Spans are kept merged, newest last.
    std::int64_t lo = start, hi = stop;
    while (!counted_.empty() && counted_.back().second > start) {
      const auto [b, e] = counted_.back();
      counted_.pop_back();
      std::int64_t o = 0, c = 0;
      in_gaps_locked(std::max(b, start), std::min(e, stop), &o, &c);
      open -= o;
      closed -= c;
      lo = std::min(lo, b);
      hi = std::max(hi, e);
    }
    if (counted_.size() >= kMaxCounted) {  // the oldest half: no section is that deep
      counted_.erase(counted_.begin(), counted_.begin() + kMaxCounted / 2);
    }
    counted_.emplace_back(lo, hi);
    open_sections_ns_ += std::max<std::int64_t>(0, open);
    step_sections_ns_ += std::max<std::int64_t>(0, closed);
  } catch (...) {  // no memory for a span: this section is not taken off
  }
}

void Observer::add_wait_locked(Group& g, std::int64_t wait_ns) {
  ++g.n;
  g.wait_sum_ns += wait_ns;
  if (wait_ns < g.wait_min_ns) g.wait_min_ns = wait_ns;
  ++g.hist[wait_bin(wait_ns)];
}

int Observer::gpu_device(const at::Tensor& t) const {
  if (!t.defined()) return -1;
  if (t.is_cuda()) return std::max<int>(0, t.device().index());
  return cpu_as_gpu_stream_.load(std::memory_order_relaxed) >= 0 && t.is_cpu() ? 0 : -1;
}

CUstream Observer::gpu_stream(int device) const {
  const long long cpu_stream = cpu_as_gpu_stream_.load(std::memory_order_relaxed);
  if (cpu_stream >= 0) return reinterpret_cast<CUstream>(static_cast<std::uintptr_t>(cpu_stream));
  // The raw getter (0.2-0.5 µs on an H100), not torch.cuda.current_stream() (4-7 µs).
  const c10::impl::DeviceGuardImplInterface* impl =
      c10::impl::getDeviceGuardImpl(c10::DeviceType::CUDA);
  return static_cast<CUstream>(
      impl->getStream(c10::Device(c10::DeviceType::CUDA, static_cast<c10::DeviceIndex>(device)))
          .native_handle());
}

void Observer::gpu_enqueued(Group& g, std::uint64_t seq, const EventPair& pair) noexcept {
  try {
    std::lock_guard<std::mutex> lock(mu_);
    // Full, or a collective from before a restart: not measured.
    if (g.gpu_pending.size() >= kMaxGpuPending || seq <= g.seq_base) {
      gpu_.release(pair.device, pair.start, pair.end);
      return;
    }
    g.gpu_pending.emplace_back(seq, pair);
    steps_gpu_ = true;
    if (g.gpu_pending.size() >= kPollAt) poll_gpu_locked(g);
  } catch (...) {
    gpu_.release(pair.device, pair.start, pair.end);
  }
}

// Reads the group's finished GPU collectives, oldest first. As on the host, a collective's wait
// starts no earlier than the previous one's end (overlapping collectives count it once).
void Observer::poll_gpu_locked(Group& g) noexcept {
  while (!g.gpu_pending.empty()) {
    const EventPair pair = g.gpu_pending.front().second;
    float ms = 0.0f, since_ms = 0.0f;
    const int r = gpu_.read(pair, g.gpu_last_end, &ms, &since_ms);
    if (r == 0) break;
    g.gpu_pending.pop_front();
    if (r < 0) {  // the GPU path is off: give the events back
      gpu_.release(pair.device, pair.start, pair.end);
      continue;
    }
    const double wait_ms = std::max(0.0f, std::min(ms, since_ms));
    add_wait_locked(g, static_cast<std::int64_t>(wait_ms * 1e6));
    gpu_read_.fetch_add(1, std::memory_order_relaxed);
    gpu_.release(g.gpu_last_device, g.gpu_last_end);  // none before the group's first read
    gpu_.release(pair.device, pair.start);
    g.gpu_last_end = pair.end;
    g.gpu_last_device = pair.device;
  }
}

void Observer::abandon(Group& g, std::uint64_t seq) noexcept {
  const std::int64_t t = now_ns();
  std::lock_guard<std::mutex> lock(mu_);
  Pending p{};
  if (take_pending(g, seq, &p) && !p.left) left_locked(g, t, seq, true);
}

void Observer::resumed(Group& g, std::uint64_t seq, std::int64_t entered, std::int64_t t) noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  if (seq <= g.seq_base) return;  // from before a restart
  for (Pending& p : g.pending) {
    if (p.seq != seq) continue;
    // Done for its caller before gloo's worker noted it (the woken caller ran first).
    if (!p.left) {
      p.left = true;
      left_locked(g, t, seq, true);
    }
    return;
  }
  // Noted already. When the caller was waiting for it, its wake-up is not its own time: the gap
  // starts at the resume. A wait() entered after the completion (an async op waited for after
  // other work) leaves the gap where it began. Either way the gap's caller was seen.
  if (&g == idle_group_ && seq == idle_seq_) idle_seen_ = true;
  if (g.size >= 2 && in_flight_ == 0 && idle_since_ns_ >= entered && t > idle_since_ns_) {
    idle_since_ns_ = t;
  }
}

void Observer::forget(const std::string& name) noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = by_name_.find(name);
  if (it == by_name_.end()) return;
  for (const Pending& p : it->second->pending) {
    if (!p.left) left_locked(*it->second, now_ns(), p.seq, true);
  }
  restart(*it->second);
}

void Observer::fail(const char* what) noexcept {
  try {
    std::lock_guard<std::mutex> lock(mu_);
    if (error_.empty()) error_ = what;
  } catch (...) {
  }
  failed_.store(true, std::memory_order_release);
}

void Observer::set_excluded(const std::vector<std::string>& names) {
  std::lock_guard<std::mutex> lock(mu_);
  excluded_ = std::unordered_set<std::string>(names.begin(), names.end());
  for (auto& [full, g] : by_name_) {
    const std::string base = full.substr(0, full.find(":p2p:"));
    g->excluded = excluded_.count(base) != 0;
  }
}

void Observer::enable(const std::vector<std::string>& exclude) {
  if (!enabled()) {  // a new start: indices count from it (every member starts together)
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [name, g] : by_name_) {  // kept (callbacks may still hold them), restarted
      for (const auto& [seq, pair] : g->gpu_pending) {
        gpu_.release(pair.device, pair.start, pair.end);
      }
      g->gpu_pending.clear();
      gpu_.release(g->gpu_last_device, g->gpu_last_end);
      g->gpu_last_end = nullptr;
      g->gpu_last_device = -1;
      restart(*g);
    }
    in_flight_ = 0;
    idle_since_ns_ = idle_done_ns_ = -1;
    idle_group_ = nullptr;
    idle_seen_ = true;
    step_own_ns_ = step_own_done_ns_ = 0;
    step_unseen_ = false;
    step_gaps_ = 0;
    step_started_ = step_valid_ = false;
    steps_.clear();
    outside_.clear();
    steps_n_ = 0;
    steps_gpu_ = false;
    step_sections_ns_ = open_sections_ns_ = 0;
    gaps_n_ = 0;
    counted_.clear();
    by_key_.clear();  // process groups may have been destroyed: their addresses reused
  }
  set_excluded(exclude);
  if (library_ == nullptr) {
    auto lib = std::make_unique<torch::Library>(
        torch::Library::IMPL, "c10d", c10::DispatchKey::BackendSelect, __FILE__, __LINE__);
    for (const c10::OperatorName& name : c10::Dispatcher::singleton().getAllOpNames()) {
      if (name.name.rfind("c10d::", 0) != 0) continue;
      const auto handle = c10::Dispatcher::singleton().findOp(name);
      if (!handle) continue;
      const c10::FunctionSchema& schema = handle->schema();
      int pg_arg = -1, peer_arg = -1;
      for (std::size_t i = 0; i < schema.arguments().size(); ++i) {
        const c10::Argument& a = schema.arguments()[i];
        if (a.name() == "process_group") pg_arg = static_cast<int>(i);
        const std::string& n = a.name();
        if (n == "dst" || n == "src" || n == "dstRank" || n == "srcRank") {
          peer_arg = static_cast<int>(i);
        }
      }
      if (pg_arg < 0) continue;  // not a collective (check_for_nan)
      bool returns_work = false;
      for (const c10::Argument& r : schema.returns()) {
        returns_work = returns_work || r.type()->str().find("Work") != std::string::npos;
      }
      const std::string op = name.name.substr(6);
      std::string qualified = op;
      if (!name.overload_name.empty()) qualified += "." + name.overload_name;
      if (qualified == "allreduce_") {
        lib->impl("allreduce_", TORCH_FN(allreduce_kernel));
        continue;
      }
      lib->impl(qualified.c_str(),
                torch::CppFunction::makeFromBoxedFunctor(
                    std::make_unique<Kernel>(op, pg_arg, peer_arg, returns_work)));
    }
    library_ = std::move(lib);
  }
  failed_.store(false, std::memory_order_release);
  {
    std::lock_guard<std::mutex> lock(mu_);
    error_.clear();
  }
  enabled_.store(true, std::memory_order_release);
}

void Observer::disable() noexcept {
  enabled_.store(false, std::memory_order_release);
  try {
    library_.reset();  // unregisters: collectives go straight to torch's kernels again
  } catch (...) {
  }
}

py::list Observer::progress() const {
  std::lock_guard<std::mutex> lock(mu_);
  py::list out;
  for (const auto& [name, g] : by_name_) {
    if (g->excluded || g->seq == g->seq_base) continue;  // nothing since the start
    const std::int64_t since = g->pending.empty() ? -1 : g->pending.front().arrival;
    out.append(py::make_tuple(name, g->size, g->rank, g->seq - g->seq_base, g->last_op,
                              g->pending.size(), since, g->completed));
  }
  return out;
}

py::list Observer::take_window() {
  std::lock_guard<std::mutex> lock(mu_);
  py::list out;
  for (auto& [name, g] : by_name_) {
    poll_gpu_locked(*g);
    if (g->excluded || g->n == 0) continue;
    py::list hist;
    for (std::uint64_t c : g->hist) hist.append(c);
    out.append(py::make_tuple(name, g->size, g->rank, g->n, g->wait_sum_ns, g->wait_min_ns, hist,
                              g->desc));
    g->n = 0;
    g->wait_sum_ns = 0;
    g->wait_min_ns = std::numeric_limits<std::int64_t>::max();
    g->hist.fill(0);
  }
  return out;
}

py::tuple Observer::take_own_time() {
  std::string bytes, outside;
  std::uint64_t n = 0;
  bool gpu = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const std::size_t held = steps_.size();
    bytes.resize(held * sizeof(std::int64_t));
    outside.resize(held * sizeof(std::int64_t));
    // Oldest first: once the ring wrapped, the oldest is where the next one would go.
    const std::size_t start = steps_n_ > held ? steps_n_ % held : 0;
    for (std::size_t i = 0; i < held; ++i) {
      std::memcpy(&bytes[i * sizeof(std::int64_t)], &steps_[(start + i) % held],
                  sizeof(std::int64_t));
      std::memcpy(&outside[i * sizeof(std::int64_t)], &outside_[(start + i) % held],
                  sizeof(std::int64_t));
    }
    n = steps_n_;
    gpu = steps_gpu_;
    steps_.clear();
    outside_.clear();
    steps_n_ = 0;
    steps_gpu_ = false;
  }
  return py::make_tuple(py::bytes(bytes), n, gpu, py::bytes(outside));
}

// collectives_section(start_ns, stop_ns): a plain CPython METH_FASTCALL function, called at
// every timed section's exit: pybind11's generic dispatcher would cost more than the work.
PyObject* section_fast(PyObject* /*self*/, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 2) {
    PyErr_SetString(PyExc_TypeError, "collectives_section(start_ns, stop_ns) takes 2 ints");
    return nullptr;
  }
  const long long start = PyLong_AsLongLong(args[0]);
  if (start == -1 && PyErr_Occurred()) return nullptr;
  const long long stop = PyLong_AsLongLong(args[1]);
  if (stop == -1 && PyErr_Occurred()) return nullptr;
  Observer::get().section(start, stop);
  Py_RETURN_NONE;
}

PyMethodDef g_section_def = {
    "collectives_section",
    reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(section_fast)), METH_FASTCALL,
    "A timed section ran from start_ns to stop_ns (time.perf_counter_ns, the steady clock): its "
    "part inside this rank's gaps is taken off its step's own time outside the sections."};

// -- the observer's own cost per collective, without a backend (benchmarks/collectives.py) --

constexpr const char* kBenchGroup = "straggler-bench";

// A process group with no backend: only its name is read (by lookup, as a real group's).
class BenchGroup final : public c10d::ProcessGroup {
 public:
  // Two ranks: the own-time tracking (groups of 2+ ranks) is in the measured path.
  BenchGroup() : c10d::ProcessGroup(0, 2) {}
  [[nodiscard]] const std::string& getGroupName() const override { return name_; }
  [[nodiscard]] const std::string& getGroupDesc() const override { return desc_; }

 private:
  std::string name_ = kBenchGroup;
  std::string desc_ = "undefined";
};

// A Work whose future the caller completes.
class BenchWork final : public c10d::Work {
 public:
  explicit BenchWork(c10::intrusive_ptr<c10::ivalue::Future> f) : future_(std::move(f)) {}
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override { return future_; }
  bool wait(std::chrono::milliseconds /*timeout*/) override {
    future_->wait();
    return true;
  }

 private:
  c10::intrusive_ptr<c10::ivalue::Future> future_;
};

std::int64_t thread_cpu_ns() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<std::int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
}

// CPU ns per iteration of what a collective's Work costs (a future made, completed, waited for)
// with, when `observe`, what the observer adds to it: the arrival (lookup, sequence, pending
// entry), the callback attached to the future, the completion (wait, histogram), the caller's
// Work (ResumeWork) and its wait() noting the resume, all on this thread. The
// dispatcher's hop to the kernel and the backend's thread are not in it (the gloo rounds of
// benchmarks/collectives.py have them). The bench group is restarted after: not reported.
double bench(long long n, bool observe) {
  if (n <= 0) throw py::value_error("`n=" + std::to_string(n) + "` must be > 0");
  Observer& o = Observer::get();
  const auto pg = c10::make_intrusive<BenchGroup>();
  std::atomic<bool> no_future{false};
  const c10::TypePtr none = c10::NoneType::get();
  const std::int64_t t0 = thread_cpu_ns();
  for (long long i = 0; i < n; ++i) {
    auto future = c10::make_intrusive<c10::ivalue::Future>(none);
    c10::intrusive_ptr<c10d::Work> work = c10::make_intrusive<BenchWork>(future);
    if (observe) {
      Call c = begin_collective(o, *pg, -1, "bench", nullptr, true);
      finish_collective(o, c, &work, no_future);
    }
    future->markCompleted(c10::IValue());
    work->wait();
  }
  const std::int64_t t1 = thread_cpu_ns();
  o.forget(kBenchGroup);
  o.drop_own_time();
  return static_cast<double>(t1 - t0) / static_cast<double>(n);
}

}  // namespace

void bind_collectives(py::module_& m) {
  m.def(
      "collectives_enable",
      [](const std::vector<std::string>& exclude, long long cpu_as_gpu_stream) {
        Observer::get().set_cpu_as_gpu_stream(cpu_as_gpu_stream);
        Observer::get().enable(exclude);
      },
      py::arg("exclude") = std::vector<std::string>{}, py::arg("cpu_as_gpu_stream") = -1,
      "Observe every c10d collective; groups named in `exclude` are passed through. Tests: "
      "`cpu_as_gpu_stream` >= 0 times collectives on CPU tensors as GPU ones on that stream of "
      "device 0 (the simulated driver's).");
  m.def(
      "collectives_gpu",
      [] {
        Observer& o = Observer::get();
        return py::make_tuple(o.gpu().recorded(), o.gpu_read(), o.gpu().error());
      },
      "(collectives whose start event was recorded, waits read from events, the GPU path's "
      "first error or '').");
  m.def(
      "collectives_disable", [] { Observer::get().disable(); },
      "Stop observing collectives (the kernels are unregistered).");
  m.def(
      "collectives_exclude",
      [](const std::vector<std::string>& names) { Observer::get().set_excluded(names); },
      py::arg("names"), "Replace the set of excluded group names.");
  m.def(
      "collectives_enabled", [] { return Observer::get().enabled(); },
      "Whether collectives are observed.");
  m.def(
      "collectives_error", [] { return Observer::get().error(); },
      "The first bookkeeping failure ('' when none); after one nothing is recorded.");
  m.def(
      "collectives_observed", [] { return Observer::get().observed(); },
      "Collectives recorded so far in this process.");
  m.def(
      "collectives_progress", [] { return Observer::get().progress(); },
      "[(group, size, rank, last index, last op, unfinished, oldest arrival ns or -1, "
      "completed)] per group.");
  m.def(
      "collectives_take_window", [] { return Observer::get().take_window(); },
      "[(group, size, rank, count, wait sum ns, wait min ns, log2 histogram from 1 µs, group "
      "description)] per group with waits since the last call; the window restarts.");
  m.def(
      "collectives_take_own_time", [] { return Observer::get().take_own_time(); },
      "(own time per step since the last call as native int64 ns bytes, oldest first; steps in "
      "the window; whether a GPU collective voided them; the same steps' own time outside the "
      "timed sections, as bytes): per step, the gaps from none of this rank's collectives "
      "(groups of 2+ ranks) in flight to its next arrival, summed. The window restarts.");
  m.add_object("collectives_section", py::reinterpret_steal<py::object>(PyCFunction_NewEx(
                                          &g_section_def, nullptr, m.attr("__name__").ptr())));
  m.def(
      "collectives_mark_step", [] { Observer::get().mark_step(); },
      "A training step ended: its own time (the gaps since the last step) becomes one sample.");
  m.def("collectives_bench", &bench, py::arg("n"), py::arg("observe"),
        py::call_guard<py::gil_scoped_release>(),
        "CPU ns per iteration of a collective's Work made and completed, with (`observe`) or "
        "without the observer's bookkeeping around it, on this thread, no backend "
        "(benchmarks/collectives.py).");
  m.attr("COLLECTIVE_WAIT_BINS") = kBins;
}

}  // namespace straggler_ops
