// BusyTime: chains of marks, scopes and segments (docs/engine.md, "Busy time").
//
// A chain of marks per thread with an open busy scope. Each op ends with a tail mark; at an op's
// start the chain's last mark is queried without blocking: complete means the GPU caught up
// (it idles until this op's work arrives), so a resume mark is recorded and the op's segment
// starts there; otherwise the GPU is still busy and the segment starts at the last mark. The
// segments tile the GPU's busy time on the stream and leave out every idle gap.
#include "timing/busy_time.h"

#include <exception>
#include <stdexcept>
#include <string>

namespace straggler {

BusyTime::BusyTime(TimingBackend& backend, std::deque<Timer>& timers)
    : backend_(backend), synchronous_(backend.synchronous()), timers_(timers) {}

int BusyTime::new_slot(std::uintptr_t stream) {
  const Mark mark = backend_.record(stream);  // throws before anything changed
  int i = 0;
  if (!free_slots_.empty()) {
    i = free_slots_.back();
    free_slots_.pop_back();
  } else {
    try {
      slots_.emplace_back();
      free_slots_.reserve(slots_.capacity());  // so unref() never allocates
    } catch (...) {
      backend_.release(mark);
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

void BusyTime::unref(int i) noexcept {
  if (i < 0) return;
  MarkSlot& slot = slots_[static_cast<std::size_t>(i)];
  if (--slot.refs > 0) return;
  backend_.release(slot.mark);
  try {
    free_slots_.push_back(i);  // within the capacity reserved in new_slot()
  } catch (...) {
  }
}

BusyTime::Chain* BusyTime::own_chain(std::uint64_t thread) {
  for (Chain& c : chains_) {
    if (c.thread == thread) return &c;
  }
  return nullptr;
}

// The chain an op of `thread` belongs to: its own (it opened a busy scope), else the only open
// one (autograd runs backward ops on its own threads while the training thread waits in
// backward()), else none: with several threads' scopes open the owner is ambiguous.
BusyTime::Chain* BusyTime::chain_for_op(std::uint64_t thread) {
  Chain* own = own_chain(thread);
  if (own != nullptr) return own;
  return chains_.size() == 1 ? &chains_.front() : nullptr;
}

int BusyTime::new_scope(int timer, int parent) {
  int i = 0;
  if (!free_scopes_.empty()) {
    i = free_scopes_.back();
    free_scopes_.pop_back();
  } else {
    scopes_.emplace_back();
    free_scopes_.reserve(scopes_.capacity());  // so finish_scope() never allocates
    i = static_cast<int>(scopes_.size()) - 1;
  }
  scopes_[static_cast<std::size_t>(i)] = Scope{timer, parent, 0, false, false, false, 0.0};
  return i;
}

void BusyTime::scope_done(int scope, double ms, bool any) {
  Scope& s = scopes_[static_cast<std::size_t>(scope)];
  s.sum_ms += ms;
  s.any = s.any || any;
  --s.outstanding;
  finish_scope(scope);
}

void BusyTime::finish_scope(int scope) {
  const Scope s = scopes_[static_cast<std::size_t>(scope)];
  if (!s.closed || s.outstanding > 0) return;
  Timer& t = timers_[static_cast<std::size_t>(s.timer)];
  if (!s.dropped) {
    if (s.any) {
      t.ring.push(s.sum_ms);
    } else {
      ++t.idle_entries;
    }
  }
  try {
    free_scopes_.push_back(scope);
  } catch (...) {
  }
  if (s.parent >= 0) scope_done(s.parent, s.sum_ms, s.any);
}

void BusyTime::add_segment(int op_timer, int scope, int start, int stop) {
  ++scopes_[static_cast<std::size_t>(scope)].outstanding;
  const Segment seg{op_timer, scope, start, stop};
  if (synchronous_) {
    double ms = 0.0;
    backend_.elapsed(slots_[static_cast<std::size_t>(start)].mark,
                     slots_[static_cast<std::size_t>(stop)].mark, &ms);
    store_segment(seg, ms);
    return;
  }
  segments_.push_back(seg);  // may allocate while warming up only: the vector keeps capacity
  ++slots_[static_cast<std::size_t>(start)].refs;
  ++slots_[static_cast<std::size_t>(stop)].refs;
  if (segments_.size() >= kAutoHarvestPending) harvest(HarvestScope::kFront);
}

void BusyTime::store_segment(const Segment& seg, double ms) {
  if (seg.op_timer >= 0) timers_[static_cast<std::size_t>(seg.op_timer)].ring.push(ms);
  scope_done(seg.scope, ms, true);
}

std::size_t BusyTime::harvest(HarvestScope scope) {
  return harvest_queue(
      segments_, scope,
      [this](const Segment& seg) {
        double ms = 0.0;
        if (!backend_.elapsed(slots_[static_cast<std::size_t>(seg.start)].mark,
                              slots_[static_cast<std::size_t>(seg.stop)].mark, &ms)) {
          return false;
        }
        store_segment(seg, ms);
        unref(seg.start);
        unref(seg.stop);
        return true;
      },
      [this](const Segment& seg) noexcept {
        // The driver failed on this segment: no sample; its marks are shared, so they go back.
        unref(seg.start);
        unref(seg.stop);
        scope_done(seg.scope, 0.0, false);
      });
}

void BusyTime::marks_to_wait_on(std::vector<Mark>& out) const {
  for (const Segment& seg : segments_) {
    out.push_back(slots_[static_cast<std::size_t>(seg.start)].mark);
    out.push_back(slots_[static_cast<std::size_t>(seg.stop)].mark);
  }
}

int BusyTime::open_scope(int timer, std::uintptr_t stream, std::uint64_t thread) {
  Chain* chain = own_chain(thread);
  if (chain == nullptr) {
    // The section's start mark starts the chain: GPU work queued before it is not ours.
    const int first = new_slot(stream);  // throws before anything changed
    try {
      chains_.push_back(Chain{thread, first, -1, 0, stream});
    } catch (...) {
      unref(first);
      throw;
    }
    chain = &chains_.back();
  }
  const int scope = new_scope(timer, chain->scope);
  if (chain->scope >= 0) ++scopes_[static_cast<std::size_t>(chain->scope)].outstanding;
  chain->scope = scope;
  ++chain->depth;
  ++open_scopes_;
  return scope;
}

void BusyTime::close_scope(int scope, std::uintptr_t stream, std::uint64_t thread, bool drop) {
  Chain* chain = own_chain(thread);
  if (chain == nullptr) throw std::logic_error("no busy chain for this thread");
  std::exception_ptr failure;
  try {
    // Work after the last tail belongs to the section only if the GPU was still behind that
    // tail now: then it never idled between the tail and this stop, so the gap is busy time.
    if (chain->last >= 0 && !backend_.done(slots_[static_cast<std::size_t>(chain->last)].mark)) {
      const int stop = new_slot(stream);
      add_segment(-1, scope, chain->last, stop);
      unref(chain->last);
      chain->last = stop;
    }
  } catch (...) {
    failure = std::current_exception();  // close the scope anyway, then report
  }
  Scope& s = scopes_[static_cast<std::size_t>(scope)];
  s.closed = true;
  s.dropped = drop;
  chain->scope = s.parent;
  --chain->depth;
  --open_scopes_;
  if (chain->depth == 0) {
    unref(chain->last);
    chains_.erase(chains_.begin() + (chain - chains_.data()));  // keeps capacity
  }
  finish_scope(scope);
  if (failure) std::rethrow_exception(failure);
}

long long BusyTime::op_begin(std::uintptr_t stream, std::uint64_t thread) {
  Chain* chain = chain_for_op(thread);
  if (chain == nullptr) return -1;
  if (chain->last >= 0 && !backend_.done(slots_[static_cast<std::size_t>(chain->last)].mark)) {
    ++slots_[static_cast<std::size_t>(chain->last)].refs;  // the GPU is busy: start there
    return chain->last;
  }
  return new_slot(stream);  // the GPU is idle (or the chain restarts): resume mark
}

void BusyTime::op_end(long long token, int op_timer, std::uintptr_t stream, std::uint64_t thread) {
  int start = static_cast<int>(token);
  if (token >= static_cast<long long>(slots_.size()) ||
      slots_[static_cast<std::size_t>(start)].refs <= 0) {
    throw std::invalid_argument("`token=" + std::to_string(token) +
                                "` is not a token of op_begin() still open");
  }
  Chain* chain = chain_for_op(thread);
  if (chain == nullptr || chain->scope < 0) {  // the scope closed meanwhile: nothing to add to
    unref(start);
    return;
  }
  // Another thread's op (or a collective) ended since this one began: start after it, so that
  // no stretch of the stream is counted twice.
  if (chain->last >= 0 && slots_[static_cast<std::size_t>(chain->last)].serial >
                              slots_[static_cast<std::size_t>(start)].serial) {
    unref(start);
    start = chain->last;
    ++slots_[static_cast<std::size_t>(start)].refs;
  }
  int stop = -1;
  try {
    stop = new_slot(stream);
  } catch (...) {
    unref(start);
    throw;
  }
  add_segment(op_timer, chain->scope, start, stop);
  unref(start);
  unref(chain->last);
  chain->last = stop;
}

void BusyTime::comm_end(std::uintptr_t stream, std::uint64_t thread) {
  Chain* chain = chain_for_op(thread);
  if (chain == nullptr) return;
  const int fresh = new_slot(stream);
  unref(chain->last);
  chain->last = fresh;
}

void BusyTime::release_all() noexcept {
  // Every mark still referenced (segments, chains, open op tokens) goes back.
  for (MarkSlot& slot : slots_) {
    if (slot.refs > 0) backend_.release(slot.mark);
    slot.refs = 0;
  }
  slots_.clear();
  free_slots_.clear();
  segments_.clear();
  chains_.clear();
  scopes_.clear();
  free_scopes_.clear();
  open_scopes_ = 0;
}

}  // namespace straggler
