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

using Row = std::array<double, kNvmlFieldCount>;

// An identity string ("" when the entry point is missing or fails); `size` as nvml.h documents.
std::string read_string(nvmlReturn_t (*fn)(nvmlDevice_t, char*, unsigned int), nvmlDevice_t device,
                        unsigned int size) {
  if (fn == nullptr) return "";
  std::string buf(size, '\0');
  if (fn(device, buf.data(), size) != NVML_SUCCESS) return "";
  return std::string(buf.c_str());
}

double seconds_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

const std::vector<std::string>& nvml_field_names() {
  static const std::vector<std::string> names = {
#define STRAGGLER_NVML_FIELD_NAME(id, name) name,
      STRAGGLER_NVML_FIELDS(STRAGGLER_NVML_FIELD_NAME)
#undef STRAGGLER_NVML_FIELD_NAME
  };
  return names;
}

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
    throw std::invalid_argument("`max_consecutive_failures=" +
                                std::to_string(max_consecutive_failures) +
                                "` must be a positive integer");
  }
  if (!nvml_.available()) throw std::runtime_error(nvml_.error());

  const nvmlReturn_t rc = nvml_.nvmlDeviceGetHandleByPciBusId_v2(pci_bus_id.c_str(), &device_);
  if (rc != NVML_SUCCESS) {
    throw std::runtime_error("nvmlDeviceGetHandleByPciBusId_v2(\"" + pci_bus_id +
                             "\") failed: " + nvml_.describe(rc) +
                             "; is this process allowed to see that GPU?");
  }

  identity_.pci_bus_id = pci_bus_id;
  identity_.name = read_string(nvml_.nvmlDeviceGetName, device_,
                               NVML_DEVICE_NAME_V2_BUFFER_SIZE);
  identity_.uuid = read_string(nvml_.nvmlDeviceGetUUID, device_,
                               NVML_DEVICE_UUID_V2_BUFFER_SIZE);
  identity_.serial = read_string(nvml_.nvmlDeviceGetSerial, device_,
                                 NVML_DEVICE_SERIAL_BUFFER_SIZE);
  if (nvml_.nvmlSystemGetDriverVersion != nullptr) {
    char version[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE] = {};
    if (nvml_.nvmlSystemGetDriverVersion(version, sizeof(version)) == NVML_SUCCESS) {
      identity_.driver_version = version;
    }
  }

  // Values that do not change while the board is up: read once, copied into every row.
  static_values_.fill(kNaN);
  auto read_static = [&](const char* call, int field, auto fn, auto... args) {
    unsigned int v = 0;
    const nvmlReturn_t rc = fn != nullptr ? fn(device_, args..., &v) : NVML_ERROR_FUNCTION_NOT_FOUND;
    if (rc == NVML_SUCCESS) {
      static_values_[field] = static_cast<double>(v);
    } else {
      unsupported_[field] = std::string(call) + ": " + nvml_return_name(rc);
    }
  };
  read_static("nvmlDeviceGetMaxClockInfo(SM)", kSmClockMaxMhz, nvml_.nvmlDeviceGetMaxClockInfo,
              NVML_CLOCK_SM);
  read_static("nvmlDeviceGetMaxClockInfo(MEM)", kMemClockMaxMhz, nvml_.nvmlDeviceGetMaxClockInfo,
              NVML_CLOCK_MEM);
  read_static("nvmlDeviceGetMaxPcieLinkGeneration", kPcieGenMax,
              nvml_.nvmlDeviceGetMaxPcieLinkGeneration);
  read_static("nvmlDeviceGetMaxPcieLinkWidth", kPcieWidthMax, nvml_.nvmlDeviceGetMaxPcieLinkWidth);
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
  Row row = static_values_;
  std::string failure;
  const nvmlDevice_t dev = device_;

  // One NVML call filling `fields`: absent when the symbol is missing or the GPU says "not
  // supported" (then never asked again); any other result is a failure of this sample.
  auto read = [&](const char* call, std::initializer_list<int> fields, auto&& fn) {
    const int first = *fields.begin();
    if (!unsupported_[first].empty()) return;
    const nvmlReturn_t rc = fn();
    if (rc == NVML_SUCCESS) return;
    for (int f : fields) row[f] = kNaN;
    if (nvml_is_unsupported(rc)) {
      for (int f : fields) unsupported_[f] = std::string(call) + ": " + nvml_return_name(rc);
    } else if (failure.empty()) {
      failure = std::string(call) + " failed: " + nvml_.describe(rc);
    }
  };
  auto missing = [&](const char* call, std::initializer_list<int> fields) {
    for (int f : fields) {
      row[f] = kNaN;
      unsupported_[f] = std::string(call) + ": not exported by this driver";
    }
  };
  auto uint_call = [&](const char* call, int field, auto fn, auto... args) {
    if (fn == nullptr) return missing(call, {field});
    read(call, {field}, [&] {
      unsigned int v = 0;
      const nvmlReturn_t rc = fn(dev, args..., &v);
      row[field] = static_cast<double>(v);
      return rc;
    });
  };

  uint_call("nvmlDeviceGetClockInfo(SM)", kSmClockMhz, nvml_.nvmlDeviceGetClockInfo,
            NVML_CLOCK_SM);
  uint_call("nvmlDeviceGetClockInfo(MEM)", kMemClockMhz, nvml_.nvmlDeviceGetClockInfo,
            NVML_CLOCK_MEM);
  // The versioned call first; the deprecated one when it is missing or refuses (e.g. a struct
  // version it does not know), so either driver generation gives the temperature.
  if (nvml_.nvmlDeviceGetTemperatureV == nullptr && nvml_.nvmlDeviceGetTemperature == nullptr) {
    missing("nvmlDeviceGetTemperature(GPU)", {kGpuTempC});
  } else {
    read("nvmlDeviceGetTemperature(GPU)", {kGpuTempC}, [&] {
      nvmlReturn_t rc = NVML_ERROR_FUNCTION_NOT_FOUND;
      if (nvml_.nvmlDeviceGetTemperatureV != nullptr) {
        nvmlTemperature_t t{};
        t.version = nvmlTemperature_v1;
        t.sensorType = NVML_TEMPERATURE_GPU;
        rc = nvml_.nvmlDeviceGetTemperatureV(dev, &t);
        row[kGpuTempC] = t.temperature;
      }
      if (rc != NVML_SUCCESS && nvml_.nvmlDeviceGetTemperature != nullptr) {
        unsigned int v = 0;
        rc = nvml_.nvmlDeviceGetTemperature(dev, NVML_TEMPERATURE_GPU, &v);
        row[kGpuTempC] = v;
      }
      return rc;
    });
  }
  uint_call("nvmlDeviceGetCurrPcieLinkGeneration", kPcieGen,
            nvml_.nvmlDeviceGetCurrPcieLinkGeneration);
  uint_call("nvmlDeviceGetCurrPcieLinkWidth", kPcieWidth, nvml_.nvmlDeviceGetCurrPcieLinkWidth);

  // Power: NVML reports milliwatts.
  uint_call("nvmlDeviceGetPowerUsage", kPowerW, nvml_.nvmlDeviceGetPowerUsage);
  uint_call("nvmlDeviceGetEnforcedPowerLimit", kPowerLimitW,
            nvml_.nvmlDeviceGetEnforcedPowerLimit);
  row[kPowerW] /= 1000.0;
  row[kPowerLimitW] /= 1000.0;

  if (nvml_.nvmlDeviceGetFieldValues == nullptr) {
    missing("nvmlDeviceGetFieldValues(MEMORY_TEMP)", {kMemTempC});
  } else {
    read("nvmlDeviceGetFieldValues(MEMORY_TEMP)", {kMemTempC}, [&] {
      nvmlFieldValue_t fv{};
      fv.fieldId = NVML_FI_DEV_MEMORY_TEMP;
      nvmlReturn_t rc = nvml_.nvmlDeviceGetFieldValues(dev, 1, &fv);
      if (rc != NVML_SUCCESS) return rc;
      if (fv.nvmlReturn != NVML_SUCCESS) return fv.nvmlReturn;
      switch (fv.valueType) {
        case NVML_VALUE_TYPE_DOUBLE: row[kMemTempC] = fv.value.dVal; break;
        case NVML_VALUE_TYPE_UNSIGNED_INT: row[kMemTempC] = fv.value.uiVal; break;
        case NVML_VALUE_TYPE_UNSIGNED_LONG: row[kMemTempC] = static_cast<double>(fv.value.ulVal); break;
        case NVML_VALUE_TYPE_UNSIGNED_LONG_LONG: row[kMemTempC] = static_cast<double>(fv.value.ullVal); break;
        case NVML_VALUE_TYPE_SIGNED_LONG_LONG: row[kMemTempC] = static_cast<double>(fv.value.sllVal); break;
        case NVML_VALUE_TYPE_SIGNED_INT: row[kMemTempC] = fv.value.siVal; break;
        case NVML_VALUE_TYPE_UNSIGNED_SHORT: row[kMemTempC] = fv.value.usVal; break;
        default: return NVML_ERROR_NOT_SUPPORTED;  // a value type this build cannot read
      }
      return NVML_SUCCESS;
    });
  }

  auto reasons_fn = nvml_.nvmlDeviceGetCurrentClocksEventReasons != nullptr
                        ? nvml_.nvmlDeviceGetCurrentClocksEventReasons
                        : nvml_.nvmlDeviceGetCurrentClocksThrottleReasons;
  if (reasons_fn == nullptr) {
    missing("nvmlDeviceGetCurrentClocksEventReasons", {kClocksEventReasons});
  } else {
    read("nvmlDeviceGetCurrentClocksEventReasons", {kClocksEventReasons}, [&] {
      unsigned long long mask = 0;
      const nvmlReturn_t rc = reasons_fn(dev, &mask);
      row[kClocksEventReasons] = static_cast<double>(mask);
      return rc;
    });
  }

  auto violation = [&](const char* call, int field, nvmlPerfPolicyType_t policy) {
    if (nvml_.nvmlDeviceGetViolationStatus == nullptr) return missing(call, {field});
    read(call, {field}, [&] {
      nvmlViolationTime_t t{};
      const nvmlReturn_t rc = nvml_.nvmlDeviceGetViolationStatus(dev, policy, &t);
      row[field] = static_cast<double>(t.violationTime);
      return rc;
    });
  };
  violation("nvmlDeviceGetViolationStatus(POWER)", kPowerViolationNs, NVML_PERF_POLICY_POWER);
  violation("nvmlDeviceGetViolationStatus(THERMAL)", kThermalViolationNs,
            NVML_PERF_POLICY_THERMAL);

  if (nvml_.nvmlDeviceGetUtilizationRates == nullptr) {
    missing("nvmlDeviceGetUtilizationRates", {kGpuUtilPct, kMemUtilPct});
  } else {
    read("nvmlDeviceGetUtilizationRates", {kGpuUtilPct, kMemUtilPct}, [&] {
      nvmlUtilization_t u{};
      const nvmlReturn_t rc = nvml_.nvmlDeviceGetUtilizationRates(dev, &u);
      row[kGpuUtilPct] = u.gpu;
      row[kMemUtilPct] = u.memory;
      return rc;
    });
  }

  if (nvml_.nvmlDeviceGetMemoryInfo == nullptr) {
    missing("nvmlDeviceGetMemoryInfo", {kMemUsedMib});
  } else {
    read("nvmlDeviceGetMemoryInfo", {kMemUsedMib}, [&] {
      nvmlMemory_t m{};
      const nvmlReturn_t rc = nvml_.nvmlDeviceGetMemoryInfo(dev, &m);
      row[kMemUsedMib] = static_cast<double>(m.used) / (1024.0 * 1024.0);
      return rc;
    });
  }

  auto ecc = [&](const char* call, int field, nvmlMemoryErrorType_t type) {
    if (nvml_.nvmlDeviceGetTotalEccErrors == nullptr) return missing(call, {field});
    read(call, {field}, [&] {
      unsigned long long count = 0;
      const nvmlReturn_t rc =
          nvml_.nvmlDeviceGetTotalEccErrors(dev, type, NVML_VOLATILE_ECC, &count);
      row[field] = static_cast<double>(count);
      return rc;
    });
  };
  ecc("nvmlDeviceGetTotalEccErrors(CORRECTED, VOLATILE)", kEccCorrected,
      NVML_MEMORY_ERROR_TYPE_CORRECTED);
  ecc("nvmlDeviceGetTotalEccErrors(UNCORRECTED, VOLATILE)", kEccUncorrected,
      NVML_MEMORY_ERROR_TYPE_UNCORRECTED);

  const double now = seconds_now();
  std::lock_guard<std::mutex> lock(mu_);
  ++samples_;
  // A sample where every call failed carries nothing: do not record a row of NaNs.
  bool any = false;
  for (int f = 0; f < kNvmlFieldCount; ++f) {
    if (f == kSmClockMaxMhz || f == kMemClockMaxMhz || f == kPcieGenMax || f == kPcieWidthMax) {
      continue;
    }
    any = any || !std::isnan(row[f]);
  }
  if (any) {
    if (rows_.size() >= capacity_) {
      rows_.pop_front();
      timestamps_.pop_front();
      ++dropped_;
    }
    rows_.push_back(row);
    timestamps_.push_back(now);
  }
  return failure;
}

NvmlBatch NvmlSampler::drain() {
  NvmlBatch batch;
  std::lock_guard<std::mutex> lock(mu_);
  batch.timestamps_s.assign(timestamps_.begin(), timestamps_.end());
  batch.values.reserve(rows_.size() * kNvmlFieldCount);
  for (const Row& row : rows_) batch.values.insert(batch.values.end(), row.begin(), row.end());
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
  for (int f = 0; f < kNvmlFieldCount; ++f) {
    if (!unsupported_[f].empty()) out.emplace_back(names[f], unsupported_[f]);
  }
  return out;
}

std::uint64_t NvmlSampler::samples_taken() const {
  std::lock_guard<std::mutex> lock(mu_);
  return samples_;
}

}  // namespace straggler
