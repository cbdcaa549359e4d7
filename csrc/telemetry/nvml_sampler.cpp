// The NVML sampler thread (see nvml_sampler.h).
#include "telemetry/nvml_sampler.h"

#include <cmath>
#include <exception>
#include <limits>
#include <stdexcept>

#include "driver/cuda_driver.h"

namespace straggler {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kMaxBackoffS = 60.0;

// An identity string ("" when the entry point is missing or fails); `size` as nvml.h documents.
std::string read_string(nvmlReturn_t (*fn)(nvmlDevice_t, char*, unsigned int), nvmlDevice_t device,
                        unsigned int size) {
  if (fn == nullptr) return "";
  std::string buf(size, '\0');
  if (fn(device, buf.data(), size) != NVML_SUCCESS) return "";
  return std::string(buf.c_str());
}

double seconds_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

std::string cuda_device_pci_bus_id(int ordinal) {
  const CudaDriver& cu = CudaDriver::instance();
  if (!cu.loaded()) throw std::runtime_error(cu.load_error());
  STRAGGLER_CU_CHECK(cu.cuInit(0));
  CUdevice device = 0;
  STRAGGLER_CU_CHECK(cu.cuDeviceGet(&device, ordinal));
  char bus_id[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE] = {};
  STRAGGLER_CU_CHECK(cu.cuDeviceGetPCIBusId(bus_id, sizeof(bus_id), device));
  return std::string(bus_id);
}

NvmlSampler::NvmlSampler(const std::string& pci_bus_id, double period_s, std::size_t capacity,
                         int max_consecutive_failures)
    : nvml_(Nvml::instance()),
      period_(period_s),
      capacity_(capacity),
      max_failures_(max_consecutive_failures) {
  if (!(period_s > 0.0) || !std::isfinite(period_s)) {
    throw std::invalid_argument("`period_s=" + std::to_string(period_s) +
                                "` must be a positive number of seconds");
  }
  if (capacity == 0) throw std::invalid_argument("`capacity=0` must be a positive integer");
  if (max_consecutive_failures < 1) {
    throw std::invalid_argument(
        "`max_consecutive_failures=" + std::to_string(max_consecutive_failures) +
        "` must be a positive integer");
  }
  if (!nvml_.available()) throw std::runtime_error(nvml_.error());

  const nvmlReturn_t rc = nvml_.nvmlDeviceGetHandleByPciBusId_v2(pci_bus_id.c_str(), &device_);
  if (rc != NVML_SUCCESS) {
    throw std::runtime_error("nvmlDeviceGetHandleByPciBusId_v2(\"" + pci_bus_id + "\") failed: " +
                             nvml_.describe(rc) + "; is this process allowed to see that GPU?");
  }

  identity_.pci_bus_id = pci_bus_id;
  identity_.name = read_string(nvml_.nvmlDeviceGetName, device_, NVML_DEVICE_NAME_V2_BUFFER_SIZE);
  identity_.uuid = read_string(nvml_.nvmlDeviceGetUUID, device_, NVML_DEVICE_UUID_V2_BUFFER_SIZE);
  identity_.serial =
      read_string(nvml_.nvmlDeviceGetSerial, device_, NVML_DEVICE_SERIAL_BUFFER_SIZE);
  if (nvml_.nvmlSystemGetDriverVersion != nullptr) {
    char version[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE] = {};
    if (nvml_.nvmlSystemGetDriverVersion(version, sizeof(version)) == NVML_SUCCESS) {
      identity_.driver_version = version;
    }
  }

  // Values that do not change while the board is up: read once, copied into every row.
  static_values_.fill(kNaN);
  read_nvml_fields(nvml_, device_, Sampling::kStatic, static_values_, absent_);
}

NvmlSampler::~NvmlSampler() { stop(); }

void NvmlSampler::start() {
  std::lock_guard<std::mutex> lock(mu_);
  if (running_ || !error_.empty()) return;
  if (thread_.joinable()) thread_.join();  // a thread that already left run(): reap it
  stop_requested_ = false;
  running_ = true;
  thread_ = std::thread([this] { run(); });
}

void NvmlSampler::stop() noexcept {
  std::thread thread;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_requested_ = true;
    thread = std::move(thread_);
  }
  cv_.notify_all();
  if (thread.joinable() && thread.get_id() != std::this_thread::get_id()) {
    try {
      thread.join();
    } catch (...) {  // join() only throws for a bad thread state; nothing left to do
    }
  } else if (thread.joinable()) {
    thread.detach();
  }
  std::lock_guard<std::mutex> lock(mu_);
  running_ = false;
}

bool NvmlSampler::running() const {
  std::lock_guard<std::mutex> lock(mu_);
  return running_;
}

void NvmlSampler::run() noexcept {
  try {
    run_loop();
  } catch (...) {
    // Only bookkeeping can throw here (bad_alloc building a message, system_error from a lock):
    // stop sampling, say so if possible, and never let it reach std::terminate.
    try {
      std::lock_guard<std::mutex> lock(mu_);
      running_ = false;
      if (error_.empty()) error_ = "NVML sampling stopped: internal error in the sampler thread";
    } catch (...) {
    }
  }
}

void NvmlSampler::run_loop() {
  int failures = 0;
  auto delay = period_;
  while (true) {
    std::string failure;
    try {
      failure = take_sample();
    } catch (const std::exception& e) {  // e.g. bad_alloc: count it like an NVML failure
      failure = e.what();
    } catch (...) {
      failure = "unknown exception while sampling";
    }

    std::unique_lock<std::mutex> lock(mu_);
    if (failure.empty()) {
      failures = 0;
      delay = period_;
    } else if (++failures >= max_failures_) {
      error_ = "NVML sampling stopped after " + std::to_string(failures) +
               " failing samples in a row; last: " + failure;
      running_ = false;
      return;
    } else {
      // Back off: a struggling driver should not be hammered at the sampling rate.
      delay = std::min(delay * 2.0, std::chrono::duration<double>(kMaxBackoffS));
    }
    if (cv_.wait_for(lock, delay, [this] { return stop_requested_; })) return;
  }
}

bool NvmlSampler::sample_now() noexcept {
  try {
    return take_sample().empty();
  } catch (...) {
    return false;
  }
}

std::string NvmlSampler::take_sample() {
  std::lock_guard<std::mutex> sample_lock(sample_mu_);
  NvmlRow row = static_values_;
  const NvmlRead read = read_nvml_fields(nvml_, device_, Sampling::kSampled, row, absent_);

  const double now = seconds_now();
  std::lock_guard<std::mutex> lock(mu_);
  ++samples_;
  // A sample where every call failed carries nothing: do not record a row of NaNs.
  if (read.any_value) {
    if (rows_.size() >= capacity_) {
      rows_.pop_front();
      timestamps_.pop_front();
      ++dropped_;
    }
    rows_.push_back(row);
    timestamps_.push_back(now);
  }
  return read.failure;
}

NvmlBatch NvmlSampler::drain() {
  NvmlBatch batch;
  std::lock_guard<std::mutex> lock(mu_);
  batch.timestamps_s.assign(timestamps_.begin(), timestamps_.end());
  batch.values.reserve(rows_.size() * kNvmlFieldCount);
  for (const NvmlRow& row : rows_) batch.values.insert(batch.values.end(), row.begin(), row.end());
  batch.dropped = dropped_;
  rows_.clear();
  timestamps_.clear();
  dropped_ = 0;
  return batch;
}

std::string NvmlSampler::error() const {
  std::lock_guard<std::mutex> lock(mu_);
  return error_;
}

std::vector<std::pair<std::string, std::string>> NvmlSampler::unsupported() const {
  std::lock_guard<std::mutex> sample_lock(sample_mu_);
  std::vector<std::pair<std::string, std::string>> out;
  const auto& names = nvml_field_names();
  for (std::size_t f = 0; f < absent_.size(); ++f) {
    if (!absent_[f].empty()) out.emplace_back(names[f], absent_[f]);
  }
  return out;
}

std::uint64_t NvmlSampler::samples_taken() const {
  std::lock_guard<std::mutex> lock(mu_);
  return samples_;
}

}  // namespace straggler
