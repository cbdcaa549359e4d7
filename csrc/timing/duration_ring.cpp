// DurationRing::values(): the samples in the order they came.
#include "timing/duration_ring.h"

namespace straggler {

std::vector<double> DurationRing::values() const {
  std::vector<double> out;
  out.reserve(size_);
  // Fewer than capacity_ samples since the last clear(): they sit in [0, head_). Otherwise the
  // ring is full and the oldest is at head_.
  const std::size_t first = size_ < capacity_ ? head_ - size_ : head_;
  for (std::size_t i = 0; i < size_; ++i) out.push_back(data_[(first + i) % capacity_]);
  return out;
}

}  // namespace straggler
