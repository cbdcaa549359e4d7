// The one harvest loop: stores the finished items of a FIFO of timed pairs (the engine's plain
// pairs and its busy-time segments alike) and keeps the others, in order.
#pragma once

#include <cstddef>
#include <exception>
#include <vector>

namespace straggler {

// Unfinished pairs (or segments) beyond which stop() (or op_end()) harvests the head of its
// queue, so a job that never calls harvest() still keeps a bounded event pool.
inline constexpr std::size_t kAutoHarvestPending = 256;

enum class HarvestScope {
  // Every item. A backend failure drops the failed item, keeps the rest and is rethrown.
  kAll,
  // From the head up to the first unfinished item (stop()/op_end() bound their queues so).
  // A failure stops the loop and is swallowed: the item stays for a kAll harvest to report.
  kFront,
};

// try_store(item) -> bool: stores a finished item and returns true, false while it runs; throws
// (storing nothing) when the backend fails. drop(item) frees a failed item; never throws.
// Returns how many were stored. Allocates nothing (the queue only shrinks).
template <class Item, class TryStore, class Drop>
std::size_t harvest_queue(std::vector<Item>& queue, HarvestScope scope, TryStore&& try_store,
                          Drop&& drop) {
  std::size_t stored = 0, kept = 0, i = 0;
  std::exception_ptr failure;
  for (; i < queue.size(); ++i) {
    bool finished = false;
    try {
      finished = try_store(queue[i]);
    } catch (...) {
      if (scope == HarvestScope::kFront) break;
      drop(queue[i]);
      failure = std::current_exception();
      ++i;
      break;
    }
    if (finished) {
      ++stored;
      continue;
    }
    if (scope == HarvestScope::kFront) break;
    queue[kept++] = queue[i];
  }
  for (; i < queue.size(); ++i) queue[kept++] = queue[i];
  queue.erase(queue.begin() + static_cast<std::ptrdiff_t>(kept), queue.end());
  if (failure) std::rethrow_exception(failure);
  return stored;
}

}  // namespace straggler
