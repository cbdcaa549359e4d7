// A background thread that samples one GPU's NVML telemetry at a fixed period into a bounded
// buffer; Python drains it once per report window (see straggler/telemetry/nvml.py).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "driver/nvml.h"
#include "telemetry/nvml_fields.h"

namespace straggler {

// The PCI bus id ("0000:3B:00.0") of CUDA device `ordinal` as the CUDA driver numbers it, i.e.
// after CUDA_VISIBLE_DEVICES; NVML indices differ, bus ids do not. Throws std::runtime_error.
std::string cuda_device_pci_bus_id(int ordinal);

// Samples drained from the sampler: rows of kNvmlFieldCount values, oldest first.
struct NvmlBatch {
  std::vector<double> timestamps_s;  // steady clock, seconds
  std::vector<double> values;        // row-major, timestamps_s.size() x kNvmlFieldCount
  std::uint64_t dropped = 0;         // samples lost to the bounded buffer since the last drain
};

class NvmlSampler {
 public:
  // Finds the GPU by PCI bus id. Throws std::invalid_argument for a bad period or capacity and
  // std::runtime_error when NVML is unavailable or knows no GPU with that bus id.
  NvmlSampler(const std::string& pci_bus_id, double period_s, std::size_t capacity,
              int max_consecutive_failures);
  ~NvmlSampler();  // stops and joins; never throws

  NvmlSampler(const NvmlSampler&) = delete;
  NvmlSampler& operator=(const NvmlSampler&) = delete;

  // Starts the thread (no-op when running, or after it stopped itself on a persistent error).
  void start();
  // Stops and joins the thread; safe to call any number of times. Blocks at most one NVML call.
  void stop() noexcept;
  [[nodiscard]] bool running() const;

  // Takes one sample on the calling thread into the buffer; true when it had no NVML failure.
  bool sample_now() noexcept;
  // Everything sampled since the last drain.
  [[nodiscard]] NvmlBatch drain();

  [[nodiscard]] const NvmlIdentity& identity() const noexcept { return identity_; }
  [[nodiscard]] double period_s() const noexcept { return period_.count(); }
  // "" while healthy; after a persistent NVML failure, why the thread stopped.
  [[nodiscard]] std::string error() const;
  // Fields this GPU does not offer, with the NVML result that said so.
  [[nodiscard]] std::vector<std::pair<std::string, std::string>> unsupported() const;
  [[nodiscard]] std::uint64_t samples_taken() const;

 private:
  void run() noexcept;  // the thread: run_loop(), and nothing escapes it
  void run_loop();
  // One sample of the sampled fields; appends a row. Returns "" or the first hard NVML failure
  // ("call failed: error").
  std::string take_sample();

  const Nvml& nvml_;
  nvmlDevice_t device_ = nullptr;
  NvmlIdentity identity_;
  std::chrono::duration<double> period_;
  std::size_t capacity_;
  int max_failures_;
  // The static fields, read once (maximum clocks and PCIe link), copied into every row.
  NvmlRow static_values_{};

  mutable std::mutex sample_mu_;  // one sample at a time (thread and sample_now())
  NvmlAbsence absent_;            // guarded by sample_mu_: why a field is absent for good

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_requested_ = false;
  bool running_ = false;
  std::string error_;
  std::deque<double> timestamps_;  // guarded by mu_
  std::deque<NvmlRow> rows_;
  std::uint64_t dropped_ = 0;
  std::uint64_t samples_ = 0;
  std::thread thread_;
};

}  // namespace straggler
