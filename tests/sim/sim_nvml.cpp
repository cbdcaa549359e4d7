// A simulated libnvidia-ml.so.1 for tests: the NVML entry points straggler calls, answering from a
// per-process scenario. Built by `make sim` into build/sim/libnvidia-ml.so.1.
//
// It includes the sampler's own declarations of the NVML ABI, so a signature that drifts between
// the two fails to compile here.
//
// Scenario: $SIMNVML_SCENARIO, either inline "key=value;key=value" or "@/path/to/file" (the same
// pairs, separated by ';' or newlines, '#' starts a comment). Read by nvmlInit_v2 and by
// simnvml_reload() (tests that switch scenarios in one process); a changed scenario resets the
// call counters. Keys (defaults: a healthy H100 SXM at full load):
//   name serial driver_version           identity strings
//   sm_clock sm_clock_max mem_clock mem_clock_max      MHz
//   power_w power_limit_w                 watts (reported in mW, as NVML does)
//   gpu_temp mem_temp                     degrees C
//   reasons                               clocks-event reasons bitmask (0x.. or decimal)
//   power_violation_frac thermal_violation_frac
//                                         share of wall time the violation counters advance
//   gpu_util mem_util                     percent
//   mem_used_mib mem_total_mib
//   pcie_gen pcie_gen_max pcie_width pcie_width_max
//   ecc_corrected ecc_uncorrected         volatile counts
//   unsupported=a,b,...                   groups answering NVML_ERROR_NOT_SUPPORTED: sm_clock,
//                                         mem_clock, max_clock, power, power_limit, gpu_temp,
//                                         mem_temp, reasons, violation, util, memory, pcie,
//                                         pcie_max, ecc, name, uuid, serial
//   deprecated=fn,...                     entry points answering NVML_ERROR_DEPRECATED (as a
//                                         driver that removed them), e.g.
//                                         nvmlDeviceGetViolationStatus
//   init_error=N                          nvmlInit_v2 returns N (e.g. 9: driver not loaded)
//   fail_from=N fail_code=M               from sample N (0-based) on, every device query returns
//                                         M (default 999, NVML_ERROR_UNKNOWN). A sample starts
//                                         with nvmlDeviceGetClockInfo(SM), as straggler's
//                                         sampler does; queries before the first (the identity,
//                                         read once) never fail
//   call_latency_us=X                     each call spins X microseconds (emulated NVML cost)
// Extra exports for tests: simnvml_call_count(name) -> calls of that entry point so far;
// simnvml_reload() -> re-read the scenario.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <string>

#include "driver/nvml.h"

struct nvmlDevice_st {
  unsigned domain, bus, device, function;
};

namespace {

struct Scenario {
  std::map<std::string, std::string> kv;
  std::set<std::string> unsupported;
  std::set<std::string> deprecated;  // entry point names

  double num(const std::string& key, double fallback) const {
    auto it = kv.find(key);
    if (it == kv.end()) return fallback;
    return std::strtod(it->second.c_str(), nullptr);
  }
  unsigned long long mask(const std::string& key) const {
    auto it = kv.find(key);
    return it == kv.end() ? 0ULL : std::strtoull(it->second.c_str(), nullptr, 0);
  }
  std::string str(const std::string& key, const std::string& fallback) const {
    auto it = kv.find(key);
    return it == kv.end() ? fallback : it->second;
  }
};

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

Scenario parse(const std::string& spec_in) {
  std::string spec = spec_in;
  if (!spec.empty() && spec[0] == '@') {
    std::ifstream in(spec.substr(1));
    std::stringstream ss;
    ss << in.rdbuf();
    spec = ss.str();
  }
  Scenario sc;
  std::string item;
  std::stringstream items(spec);
  while (std::getline(items, item)) {  // lines, then ';' inside a line
    item = item.substr(0, item.find('#'));
    std::stringstream parts(item);
    std::string pair;
    while (std::getline(parts, pair, ';')) {
      const auto eq = pair.find('=');
      if (eq == std::string::npos) continue;
      sc.kv[trim(pair.substr(0, eq))] = trim(pair.substr(eq + 1));
    }
  }
  for (auto [key, set] :
       {std::pair{"unsupported", &sc.unsupported}, std::pair{"deprecated", &sc.deprecated}}) {
    std::stringstream items_of(sc.str(key, ""));
    std::string g;
    while (std::getline(items_of, g, ',')) {
      if (!trim(g).empty()) set->insert(trim(g));
    }
  }
  return sc;
}

struct Sim {
  std::mutex mu;
  std::string spec = "\x01";  // never a real value: forces the first parse
  Scenario sc;
  std::map<std::string, long> calls;  // per entry point
  long samples = 0;  // nvmlDeviceGetClockInfo(SM) calls: the sampler opens each sample with one
  std::map<std::string, nvmlDevice_st*> devices;
  int init_count = 0;
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();

  // Reads $SIMNVML_SCENARIO; a changed scenario resets the counters. Only nvmlInit_v2 and
  // simnvml_reload() call it: getenv is not safe while another thread runs setenv, and the
  // sampler thread must never race the test's own environment changes.
  void refresh_locked() {
    const char* env = std::getenv("SIMNVML_SCENARIO");
    const std::string now = env != nullptr ? env : "";
    if (now == spec) return;
    spec = now;
    sc = parse(spec);
    calls.clear();
    samples = 0;
    t0 = std::chrono::steady_clock::now();
  }
};

Sim& sim() {
  static Sim* s = new Sim();  // never destroyed: calls may come from threads at exit
  return *s;
}

void spin_us(double us) {
  if (us <= 0) return;
  const auto until =
      std::chrono::steady_clock::now() + std::chrono::duration<double, std::micro>(us);
  while (std::chrono::steady_clock::now() < until) {
  }
}

// The emulated cost of an NVML call, spun before the call takes the simulator's lock: spun with
// the lock held, a thread reading the counters (simnvml_call_count) could lose the lock to
// the sampling thread at every one of its calls and see nothing until the sample ended.
void call_latency(Sim& s) {
  double us = 0;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    us = s.sc.num("call_latency_us", 0);
  }
  spin_us(us);
}

// Common prologue of a device query (after `call_latency`): counts the call, then checks
// initialisation, the handle, the fail_from rule and the unsupported group. Returns
// NVML_SUCCESS to go on.
nvmlReturn_t enter(Sim& s, const char* fn, nvmlDevice_t dev, const char* group) {
  s.calls[fn]++;
  const long n = s.samples - 1;  // the sample this call belongs to (-1: before the first)
  if (s.init_count <= 0) return NVML_ERROR_UNINITIALIZED;
  if (dev == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  const double fail_from = s.sc.num("fail_from", -1);
  if (fail_from >= 0 && n >= static_cast<long>(fail_from)) {
    return static_cast<nvmlReturn_t>(static_cast<int>(s.sc.num("fail_code", NVML_ERROR_UNKNOWN)));
  }
  if (group != nullptr && s.sc.unsupported.count(group) != 0) return NVML_ERROR_NOT_SUPPORTED;
  if (s.sc.deprecated.count(fn) != 0) return NVML_ERROR_DEPRECATED;
  return NVML_SUCCESS;
}

#define SIM_DEVICE_CALL(fn, dev, group)   \
  Sim& s = sim();                         \
  call_latency(s);                        \
  std::lock_guard<std::mutex> lock(s.mu); \
  if (nvmlReturn_t rc_ = enter(s, fn, dev, group); rc_ != NVML_SUCCESS) return rc_

nvmlReturn_t put_uint(unsigned int* out, double value) {
  if (out == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *out = static_cast<unsigned int>(value);
  return NVML_SUCCESS;
}

nvmlReturn_t put_string(char* out, unsigned int length, const std::string& value) {
  if (out == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (length < value.size() + 1) return NVML_ERROR_INSUFFICIENT_SIZE;
  std::memcpy(out, value.c_str(), value.size() + 1);
  return NVML_SUCCESS;
}

}  // namespace

extern "C" {

nvmlReturn_t nvmlInit_v2(void) {
  Sim& s = sim();
  std::lock_guard<std::mutex> lock(s.mu);
  s.refresh_locked();
  s.calls["nvmlInit_v2"]++;
  const int err = static_cast<int>(s.sc.num("init_error", 0));
  if (err != 0) return static_cast<nvmlReturn_t>(err);
  ++s.init_count;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlShutdown(void) {
  Sim& s = sim();
  std::lock_guard<std::mutex> lock(s.mu);
  s.calls["nvmlShutdown"]++;
  if (s.init_count <= 0) return NVML_ERROR_UNINITIALIZED;
  --s.init_count;
  return NVML_SUCCESS;
}

const char* nvmlErrorString(nvmlReturn_t result) {
  switch (result) {
    case NVML_SUCCESS:
      return "Success";
    case NVML_ERROR_UNINITIALIZED:
      return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT:
      return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED:
      return "Not Supported";
    case NVML_ERROR_NOT_FOUND:
      return "Not Found";
    case NVML_ERROR_DRIVER_NOT_LOADED:
      return "Driver Not Loaded";
    case NVML_ERROR_GPU_IS_LOST:
      return "GPU is lost";
    case NVML_ERROR_UNKNOWN:
      return "Unknown Error";
    default:
      return "Simulated error";
  }
}

nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned int length) {
  Sim& s = sim();
  std::lock_guard<std::mutex> lock(s.mu);
  s.calls["nvmlSystemGetDriverVersion"]++;
  if (s.init_count <= 0) return NVML_ERROR_UNINITIALIZED;
  return put_string(version, length, s.sc.str("driver_version", "555.42.06"));
}

// Any well-formed domain:bus:device.function (or bus:device.function) names a simulated GPU.
nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char* pciBusId, nvmlDevice_t* device) {
  Sim& s = sim();
  std::lock_guard<std::mutex> lock(s.mu);
  s.calls["nvmlDeviceGetHandleByPciBusId_v2"]++;
  if (s.init_count <= 0) return NVML_ERROR_UNINITIALIZED;
  if (pciBusId == nullptr || device == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  unsigned d = 0, b = 0, dv = 0, f = 0;
  char tail = 0;
  if (std::sscanf(pciBusId, "%x:%x:%x.%x%c", &d, &b, &dv, &f, &tail) != 4) {
    d = 0;
    if (std::sscanf(pciBusId, "%x:%x.%x%c", &b, &dv, &f, &tail) != 3) {
      return NVML_ERROR_INVALID_ARGUMENT;
    }
  }
  if (b > 0xff || dv > 31 || f > 7) return NVML_ERROR_NOT_FOUND;
  char key[64];
  std::snprintf(key, sizeof(key), "%08X:%02X:%02X.%X", d, b, dv, f);
  auto& slot = s.devices[key];
  if (slot == nullptr) slot = new nvmlDevice_st{d, b, dv, f};
  *device = slot;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned int length) {
  SIM_DEVICE_CALL("nvmlDeviceGetName", device, "name");
  return put_string(name, length, s.sc.str("name", "NVIDIA H100 80GB HBM3 (simulated)"));
}

// The UUID and serial encode the bus, so tests can tell which physical GPU a rank found.
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid, unsigned int length) {
  SIM_DEVICE_CALL("nvmlDeviceGetUUID", device, "uuid");
  char buf[80];
  std::snprintf(buf, sizeof(buf), "GPU-51a00000-0000-0000-0000-%04x%02x%02x%02x%02x",
                device->domain & 0xffff, device->bus, device->device, device->function, 0);
  return put_string(uuid, length, buf);
}

nvmlReturn_t nvmlDeviceGetSerial(nvmlDevice_t device, char* serial, unsigned int length) {
  SIM_DEVICE_CALL("nvmlDeviceGetSerial", device, "serial");
  char buf[32];
  std::snprintf(buf, sizeof(buf), "16509230%05u", device->bus);
  return put_string(serial, length, s.sc.str("serial", buf));
}

nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type,
                                    unsigned int* clock) {
  if (type == NVML_CLOCK_SM || type == NVML_CLOCK_GRAPHICS) {
    {
      std::lock_guard<std::mutex> lock(sim().mu);
      ++sim().samples;
    }
    SIM_DEVICE_CALL("nvmlDeviceGetClockInfo", device, "sm_clock");
    return put_uint(clock, s.sc.num("sm_clock", 1980));
  }
  if (type == NVML_CLOCK_MEM) {
    SIM_DEVICE_CALL("nvmlDeviceGetClockInfo", device, "mem_clock");
    return put_uint(clock, s.sc.num("mem_clock", 2619));
  }
  return NVML_ERROR_INVALID_ARGUMENT;
}

nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t device, nvmlClockType_t type,
                                       unsigned int* clock) {
  SIM_DEVICE_CALL("nvmlDeviceGetMaxClockInfo", device, "max_clock");
  if (type == NVML_CLOCK_SM || type == NVML_CLOCK_GRAPHICS) {
    return put_uint(clock, s.sc.num("sm_clock_max", 1980));
  }
  if (type == NVML_CLOCK_MEM) return put_uint(clock, s.sc.num("mem_clock_max", 2619));
  return NVML_ERROR_INVALID_ARGUMENT;
}

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int* power) {
  SIM_DEVICE_CALL("nvmlDeviceGetPowerUsage", device, "power");
  return put_uint(power, s.sc.num("power_w", 450) * 1000.0);
}

nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device, unsigned int* limit) {
  SIM_DEVICE_CALL("nvmlDeviceGetEnforcedPowerLimit", device, "power_limit");
  return put_uint(limit, s.sc.num("power_limit_w", 700) * 1000.0);
}

nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, nvmlTemperatureSensors_t sensorType,
                                      unsigned int* temp) {
  SIM_DEVICE_CALL("nvmlDeviceGetTemperature", device, "gpu_temp");
  if (sensorType != NVML_TEMPERATURE_GPU) return NVML_ERROR_INVALID_ARGUMENT;
  return put_uint(temp, s.sc.num("gpu_temp", 55));
}

nvmlReturn_t nvmlDeviceGetTemperatureV(nvmlDevice_t device, nvmlTemperature_t* temperature) {
  SIM_DEVICE_CALL("nvmlDeviceGetTemperatureV", device, "gpu_temp");
  if (temperature == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (temperature->version != nvmlTemperature_v1) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  if (temperature->sensorType != NVML_TEMPERATURE_GPU) return NVML_ERROR_INVALID_ARGUMENT;
  temperature->temperature = static_cast<int>(s.sc.num("gpu_temp", 55));
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t device, int valuesCount,
                                      nvmlFieldValue_t* values) {
  SIM_DEVICE_CALL("nvmlDeviceGetFieldValues", device, nullptr);
  if (values == nullptr || valuesCount < 0) return NVML_ERROR_INVALID_ARGUMENT;
  for (int i = 0; i < valuesCount; ++i) {
    nvmlFieldValue_t& v = values[i];
    v.latencyUsec = 0;
    v.timestamp = 0;
    if (v.fieldId == NVML_FI_DEV_MEMORY_TEMP && s.sc.unsupported.count("mem_temp") == 0) {
      v.nvmlReturn = NVML_SUCCESS;
      v.valueType = NVML_VALUE_TYPE_UNSIGNED_INT;
      v.value.uiVal = static_cast<unsigned int>(s.sc.num("mem_temp", 60));
    } else {
      v.nvmlReturn = NVML_ERROR_NOT_SUPPORTED;  // per-value result, as NVML reports it
    }
  }
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device,
                                                    unsigned long long* clocksEventReasons) {
  SIM_DEVICE_CALL("nvmlDeviceGetCurrentClocksEventReasons", device, "reasons");
  if (clocksEventReasons == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *clocksEventReasons = s.sc.mask("reasons");
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t device,
                                                       unsigned long long* clocksThrottleReasons) {
  SIM_DEVICE_CALL("nvmlDeviceGetCurrentClocksThrottleReasons", device, "reasons");
  if (clocksThrottleReasons == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *clocksThrottleReasons = s.sc.mask("reasons");
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetViolationStatus(nvmlDevice_t device, nvmlPerfPolicyType_t perfPolicyType,
                                          nvmlViolationTime_t* violTime) {
  SIM_DEVICE_CALL("nvmlDeviceGetViolationStatus", device, "violation");
  if (violTime == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  double frac = 0;
  if (perfPolicyType == NVML_PERF_POLICY_POWER) {
    frac = s.sc.num("power_violation_frac", 0);
  } else if (perfPolicyType == NVML_PERF_POLICY_THERMAL) {
    frac = s.sc.num("thermal_violation_frac", 0);
  } else {
    return NVML_ERROR_NOT_SUPPORTED;
  }
  const auto now = std::chrono::steady_clock::now();
  const double elapsed_ns = std::chrono::duration<double, std::nano>(now - s.t0).count();
  violTime->referenceTime = static_cast<unsigned long long>(
      std::chrono::duration<double, std::micro>(now.time_since_epoch()).count());
  violTime->violationTime = static_cast<unsigned long long>(frac * elapsed_ns);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t* utilization) {
  SIM_DEVICE_CALL("nvmlDeviceGetUtilizationRates", device, "util");
  if (utilization == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  utilization->gpu = static_cast<unsigned int>(s.sc.num("gpu_util", 98));
  utilization->memory = static_cast<unsigned int>(s.sc.num("mem_util", 40));
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory) {
  SIM_DEVICE_CALL("nvmlDeviceGetMemoryInfo", device, "memory");
  if (memory == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  const double mib = 1024.0 * 1024.0;
  memory->total = static_cast<unsigned long long>(s.sc.num("mem_total_mib", 81559) * mib);
  memory->used = static_cast<unsigned long long>(s.sc.num("mem_used_mib", 40000) * mib);
  memory->free = memory->total > memory->used ? memory->total - memory->used : 0;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t device, unsigned int* currLinkGen) {
  SIM_DEVICE_CALL("nvmlDeviceGetCurrPcieLinkGeneration", device, "pcie");
  return put_uint(currLinkGen, s.sc.num("pcie_gen", 5));
}

nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t device, unsigned int* maxLinkGen) {
  SIM_DEVICE_CALL("nvmlDeviceGetMaxPcieLinkGeneration", device, "pcie_max");
  return put_uint(maxLinkGen, s.sc.num("pcie_gen_max", 5));
}

nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t device, unsigned int* currLinkWidth) {
  SIM_DEVICE_CALL("nvmlDeviceGetCurrPcieLinkWidth", device, "pcie");
  return put_uint(currLinkWidth, s.sc.num("pcie_width", 16));
}

nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t device, unsigned int* maxLinkWidth) {
  SIM_DEVICE_CALL("nvmlDeviceGetMaxPcieLinkWidth", device, "pcie_max");
  return put_uint(maxLinkWidth, s.sc.num("pcie_width_max", 16));
}

nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t device, nvmlMemoryErrorType_t errorType,
                                         nvmlEccCounterType_t counterType,
                                         unsigned long long* eccCounts) {
  SIM_DEVICE_CALL("nvmlDeviceGetTotalEccErrors", device, "ecc");
  if (eccCounts == nullptr || counterType != NVML_VOLATILE_ECC) return NVML_ERROR_INVALID_ARGUMENT;
  *eccCounts = static_cast<unsigned long long>(s.sc.num(
      errorType == NVML_MEMORY_ERROR_TYPE_CORRECTED ? "ecc_corrected" : "ecc_uncorrected", 0));
  return NVML_SUCCESS;
}

// Test hook: how many times entry point `name` was called since the scenario last changed.
long simnvml_call_count(const char* name) {
  Sim& s = sim();
  std::lock_guard<std::mutex> lock(s.mu);
  auto it = s.calls.find(name != nullptr ? name : "");
  return it == s.calls.end() ? 0 : it->second;
}

// Test hook: re-read $SIMNVML_SCENARIO now (call it with no sampler thread running).
void simnvml_reload(void) {
  Sim& s = sim();
  std::lock_guard<std::mutex> lock(s.mu);
  s.refresh_locked();
}

}  // extern "C"
