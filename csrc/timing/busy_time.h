// Busy time: the GPU time of the ops inside a busy scope, idle gaps left out (docs/engine.md,
// "Busy time"). Owned by a TimerEngine and called under its lock; not thread-safe by itself.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

#include "timing/harvest_queue.h"
#include "timing/timer.h"
#include "timing/timing_backend.h"

namespace straggler {

class BusyTime {
 public:
  // Samples go to `timers` (the engine's; entries without GPU work count as idle entries).
  BusyTime(TimingBackend& backend, std::deque<Timer>& timers);
  BusyTime(const BusyTime&) = delete;
  BusyTime& operator=(const BusyTime&) = delete;

  // Opens a scope of `timer` in `thread`'s chain (a new chain starts with a mark on `stream`).
  // Returns the scope for close_scope(). Throws the backend's error before anything changed.
  int open_scope(int timer, std::uintptr_t stream, std::uint64_t thread);
  // Closes `scope` (of `thread`): its sample is stored once its segments are in (`drop`: no
  // sample and no idle entry; the enclosing scope still gets its sum). A backend failure is
  // rethrown after the scope closed.
  void close_scope(int scope, std::uintptr_t stream, std::uint64_t thread, bool drop = false);
  // TimerEngine::op_begin/op_end/comm_end for the calling `thread`.
  long long op_begin(std::uintptr_t stream, std::uint64_t thread);
  void op_end(long long token, int op_timer, std::uintptr_t stream, std::uint64_t thread);
  void comm_end(std::uintptr_t stream, std::uint64_t thread);

  [[nodiscard]] int open_scopes() const noexcept { return open_scopes_; }
  // Segments recorded and not yet stored.
  [[nodiscard]] std::size_t pending() const noexcept { return segments_.size(); }
  // Stores finished segments (harvest_queue.h); returns how many.
  std::size_t harvest(HarvestScope scope);
  // Appends the marks a flush() waits on.
  void marks_to_wait_on(std::vector<Mark>& out) const;
  // Gives every mark back to the backend and forgets all scopes (engine close). Never throws.
  void release_all() noexcept;

 private:
  // A pooled mark shared by up to two segments and a chain (reference counted).
  struct MarkSlot {
    Mark mark;
    int refs = 0;
    std::uint64_t serial = 0;  // increases with every record: orders marks of one chain
  };
  // One open or finishing busy scope: the sum of its segments, stored when all are in.
  struct Scope {
    int timer = -1;
    int parent = -1;      // enclosing scope of the same chain (gets this one's sum too)
    int outstanding = 0;  // segments and child scopes not yet finished
    bool closed = false;
    bool any = false;  // saw at least one segment
    bool dropped = false;  // closed by TimerEngine::cancel(): stores nothing of its own
    double sum_ms = 0.0;
  };
  // The chain of marks of one thread's open busy scopes.
  struct Chain {
    std::uint64_t thread = 0;
    int last = -1;  // MarkSlot index of the newest mark, -1 when none
    int scope = -1;  // innermost open scope
    int depth = 0;
    std::uintptr_t stream = 0;
  };
  struct Segment {
    int op_timer;  // -1: scope only
    int scope;
    int start;  // MarkSlot indices
    int stop;
  };

  int new_slot(std::uintptr_t stream);  // records a mark; refs 1
  void unref(int slot) noexcept;
  Chain* own_chain(std::uint64_t thread);
  Chain* chain_for_op(std::uint64_t thread);
  int new_scope(int timer, int parent);
  void scope_done(int scope, double ms, bool any);  // one child finished
  void finish_scope(int scope);
  void add_segment(int op_timer, int scope, int start, int stop);
  void store_segment(const Segment& seg, double ms);

  TimingBackend& backend_;
  const bool synchronous_;  // backend_.synchronous(), asked once
  std::deque<Timer>& timers_;
  // Pools reused once warm (free lists), so ops allocate nothing.
  std::vector<MarkSlot> slots_;
  std::vector<int> free_slots_;
  std::uint64_t next_serial_ = 1;
  std::vector<Scope> scopes_;
  std::vector<int> free_scopes_;
  std::vector<Chain> chains_;  // one per thread that opened a busy scope (few)
  int open_scopes_ = 0;
  std::vector<Segment> segments_;  // FIFO of unfinished segments; keeps its capacity
};

}  // namespace straggler
