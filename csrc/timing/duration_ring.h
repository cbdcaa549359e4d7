// A bounded ring buffer of durations: the newest `capacity` samples of one timer.
#pragma once

#include <cstddef>
#include <vector>

namespace straggler {

// Keeps the newest `capacity` samples (ms). Storage grows with the samples up to `capacity` (a
// timer used a few times costs a few bytes), then is reused.
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
  [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }
  // Samples, oldest first.
  [[nodiscard]] std::vector<double> values() const;

 private:
  std::vector<double> data_;
  std::size_t capacity_;
  std::size_t head_ = 0;  // next write; head_ <= data_.size()
  std::size_t size_ = 0;
};

}  // namespace straggler
