// One named timer's state in the current report window.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "timing/duration_ring.h"

namespace straggler {

struct Timer {
  Timer(std::string_view n, std::size_t capacity) : name(n), ring(capacity) {}
  std::string name;
  DurationRing ring;
  bool busy = false;           // start()/stop() open a busy scope (busy_time.h)
  long long idle_entries = 0;  // busy entries without GPU work, this window
};

}  // namespace straggler
