// The NVML field table (see nvml_fields.h): what each column is, which NVML query fills it, in
// which unit, and whether it is read once or in every sample.
#include "telemetry/nvml_fields.h"

#include <cmath>
#include <cstddef>
#include <limits>
#include <optional>
#include <string_view>

namespace straggler {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The values one NVML query gives: one, or two for nvmlDeviceGetUtilizationRates.
using QueryValues = std::array<double, 2>;

// Calls one NVML query for `device` into `out`: NVML's result, or nullopt when the driver
// exports no entry point for it.
using Query = std::optional<nvmlReturn_t> (*)(const Nvml& nvml, nvmlDevice_t device,
                                              QueryValues& out);

// A getter of one number of type T: (nvml.*Fn)(device, args..., &value).
template <class T, auto Fn, auto... Args>
std::optional<nvmlReturn_t> get_number(const Nvml& nvml, nvmlDevice_t device, QueryValues& out) {
  const auto fn = nvml.*Fn;
  if (fn == nullptr) return std::nullopt;
  T value{};
  const nvmlReturn_t rc = fn(device, Args..., &value);
  out[0] = static_cast<double>(value);
  return rc;
}
template <auto Fn, auto... Args>
constexpr Query kUint = get_number<unsigned int, Fn, Args...>;
template <nvmlMemoryErrorType_t Type>
constexpr Query kVolatileEccErrors =
    get_number<unsigned long long, &Nvml::nvmlDeviceGetTotalEccErrors, Type, NVML_VOLATILE_ECC>;

// The versioned call first; the deprecated one when it is missing or refuses (e.g. a struct
// version it does not know), so either driver generation gives the temperature.
std::optional<nvmlReturn_t> get_gpu_temperature(const Nvml& nvml, nvmlDevice_t device,
                                                QueryValues& out) {
  if (nvml.nvmlDeviceGetTemperatureV == nullptr && nvml.nvmlDeviceGetTemperature == nullptr) {
    return std::nullopt;
  }
  nvmlReturn_t rc = NVML_ERROR_FUNCTION_NOT_FOUND;
  if (nvml.nvmlDeviceGetTemperatureV != nullptr) {
    nvmlTemperature_t t{};
    t.version = nvmlTemperature_v1;
    t.sensorType = NVML_TEMPERATURE_GPU;
    rc = nvml.nvmlDeviceGetTemperatureV(device, &t);
    out[0] = t.temperature;
  }
  if (rc != NVML_SUCCESS && nvml.nvmlDeviceGetTemperature != nullptr) {
    unsigned int celsius = 0;
    rc = nvml.nvmlDeviceGetTemperature(device, NVML_TEMPERATURE_GPU, &celsius);
    out[0] = celsius;
  }
  return rc;
}

// A field value of any numeric type as a double; nullopt for a type this build cannot read.
std::optional<double> field_value_as_double(const nvmlFieldValue_t& fv) {
  switch (fv.valueType) {
    case NVML_VALUE_TYPE_DOUBLE:
      return fv.value.dVal;
    case NVML_VALUE_TYPE_UNSIGNED_INT:
      return fv.value.uiVal;
    case NVML_VALUE_TYPE_UNSIGNED_LONG:
      return static_cast<double>(fv.value.ulVal);
    case NVML_VALUE_TYPE_UNSIGNED_LONG_LONG:
      return static_cast<double>(fv.value.ullVal);
    case NVML_VALUE_TYPE_SIGNED_LONG_LONG:
      return static_cast<double>(fv.value.sllVal);
    case NVML_VALUE_TYPE_SIGNED_INT:
      return fv.value.siVal;
    case NVML_VALUE_TYPE_UNSIGNED_SHORT:
      return fv.value.usVal;
  }
  return std::nullopt;
}

// One NVML_FI_* field through nvmlDeviceGetFieldValues.
template <unsigned int FieldId>
std::optional<nvmlReturn_t> get_field_value(const Nvml& nvml, nvmlDevice_t device,
                                            QueryValues& out) {
  if (nvml.nvmlDeviceGetFieldValues == nullptr) return std::nullopt;
  nvmlFieldValue_t fv{};
  fv.fieldId = FieldId;
  const nvmlReturn_t rc = nvml.nvmlDeviceGetFieldValues(device, 1, &fv);
  if (rc != NVML_SUCCESS) return rc;
  if (fv.nvmlReturn != NVML_SUCCESS) return fv.nvmlReturn;
  const std::optional<double> value = field_value_as_double(fv);
  if (!value) return NVML_ERROR_NOT_SUPPORTED;
  out[0] = *value;
  return NVML_SUCCESS;
}

// R535+ drivers name it ...ClocksEventReasons; older ones only have the same-ABI
// ...ClocksThrottleReasons.
std::optional<nvmlReturn_t> get_clocks_event_reasons(const Nvml& nvml, nvmlDevice_t device,
                                                     QueryValues& out) {
  const auto fn = nvml.nvmlDeviceGetCurrentClocksEventReasons != nullptr
                      ? nvml.nvmlDeviceGetCurrentClocksEventReasons
                      : nvml.nvmlDeviceGetCurrentClocksThrottleReasons;
  if (fn == nullptr) return std::nullopt;
  unsigned long long mask = 0;
  const nvmlReturn_t rc = fn(device, &mask);
  out[0] = static_cast<double>(mask);  // a bitmask of 9 bits: exact in a double
  return rc;
}

template <nvmlPerfPolicyType_t Policy>
std::optional<nvmlReturn_t> get_violation_ns(const Nvml& nvml, nvmlDevice_t device,
                                             QueryValues& out) {
  if (nvml.nvmlDeviceGetViolationStatus == nullptr) return std::nullopt;
  nvmlViolationTime_t t{};
  const nvmlReturn_t rc = nvml.nvmlDeviceGetViolationStatus(device, Policy, &t);
  out[0] = static_cast<double>(t.violationTime);
  return rc;
}

// Two values: GPU (slot 0) and memory (slot 1) utilization.
std::optional<nvmlReturn_t> get_utilization(const Nvml& nvml, nvmlDevice_t device,
                                            QueryValues& out) {
  if (nvml.nvmlDeviceGetUtilizationRates == nullptr) return std::nullopt;
  nvmlUtilization_t u{};
  const nvmlReturn_t rc = nvml.nvmlDeviceGetUtilizationRates(device, &u);
  out[0] = u.gpu;
  out[1] = u.memory;
  return rc;
}

std::optional<nvmlReturn_t> get_memory_used(const Nvml& nvml, nvmlDevice_t device,
                                            QueryValues& out) {
  if (nvml.nvmlDeviceGetMemoryInfo == nullptr) return std::nullopt;
  nvmlMemory_t m{};
  const nvmlReturn_t rc = nvml.nvmlDeviceGetMemoryInfo(device, &m);
  out[0] = static_cast<double>(m.used);
  return rc;
}

struct Field {
  const char* name;      // the column, with its unit
  Sampling sampling;     // read once, or in every sample
  const char* call;      // the query as messages name it
  Query query;           // rows of one call are adjacent and share one query per pass
  int slot;              // which of the query's values is this field's
  double nvml_per_unit;  // NVML's units in one of the column's (1000 mW per W)
};

constexpr Sampling kStatic = Sampling::kStatic;
constexpr Sampling kSampled = Sampling::kSampled;
constexpr double kMilliwattsPerWatt = 1000.0;
constexpr double kBytesPerMib = 1024.0 * 1024.0;

// Counters (violations, ECC) are cumulative, as NVML reports them. The first row's query
// opens each sample: tests/sim/sim_nvml.cpp counts samples by it.
constexpr std::array<Field, kNvmlFieldCount> kFields = {{
    {"sm_clock_mhz", kSampled, "nvmlDeviceGetClockInfo(SM)",
     kUint<&Nvml::nvmlDeviceGetClockInfo, NVML_CLOCK_SM>, 0, 1.0},
    {"sm_clock_max_mhz", kStatic, "nvmlDeviceGetMaxClockInfo(SM)",
     kUint<&Nvml::nvmlDeviceGetMaxClockInfo, NVML_CLOCK_SM>, 0, 1.0},
    {"mem_clock_mhz", kSampled, "nvmlDeviceGetClockInfo(MEM)",
     kUint<&Nvml::nvmlDeviceGetClockInfo, NVML_CLOCK_MEM>, 0, 1.0},
    {"mem_clock_max_mhz", kStatic, "nvmlDeviceGetMaxClockInfo(MEM)",
     kUint<&Nvml::nvmlDeviceGetMaxClockInfo, NVML_CLOCK_MEM>, 0, 1.0},
    {"power_w", kSampled, "nvmlDeviceGetPowerUsage", kUint<&Nvml::nvmlDeviceGetPowerUsage>, 0,
     kMilliwattsPerWatt},
    {"power_limit_w", kSampled, "nvmlDeviceGetEnforcedPowerLimit",
     kUint<&Nvml::nvmlDeviceGetEnforcedPowerLimit>, 0, kMilliwattsPerWatt},
    {"gpu_temp_c", kSampled, "nvmlDeviceGetTemperature(GPU)", get_gpu_temperature, 0, 1.0},
    {"mem_temp_c", kSampled, "nvmlDeviceGetFieldValues(MEMORY_TEMP)",
     get_field_value<NVML_FI_DEV_MEMORY_TEMP>, 0, 1.0},
    {"clocks_event_reasons", kSampled, "nvmlDeviceGetCurrentClocksEventReasons",
     get_clocks_event_reasons, 0, 1.0},
    {"power_violation_ns", kSampled, "nvmlDeviceGetViolationStatus(POWER)",
     get_violation_ns<NVML_PERF_POLICY_POWER>, 0, 1.0},
    {"thermal_violation_ns", kSampled, "nvmlDeviceGetViolationStatus(THERMAL)",
     get_violation_ns<NVML_PERF_POLICY_THERMAL>, 0, 1.0},
    {"gpu_util_pct", kSampled, "nvmlDeviceGetUtilizationRates", get_utilization, 0, 1.0},
    {"mem_util_pct", kSampled, "nvmlDeviceGetUtilizationRates", get_utilization, 1, 1.0},
    {"mem_used_mib", kSampled, "nvmlDeviceGetMemoryInfo", get_memory_used, 0, kBytesPerMib},
    {"pcie_gen", kSampled, "nvmlDeviceGetCurrPcieLinkGeneration",
     kUint<&Nvml::nvmlDeviceGetCurrPcieLinkGeneration>, 0, 1.0},
    {"pcie_gen_max", kStatic, "nvmlDeviceGetMaxPcieLinkGeneration",
     kUint<&Nvml::nvmlDeviceGetMaxPcieLinkGeneration>, 0, 1.0},
    {"pcie_width", kSampled, "nvmlDeviceGetCurrPcieLinkWidth",
     kUint<&Nvml::nvmlDeviceGetCurrPcieLinkWidth>, 0, 1.0},
    {"pcie_width_max", kStatic, "nvmlDeviceGetMaxPcieLinkWidth",
     kUint<&Nvml::nvmlDeviceGetMaxPcieLinkWidth>, 0, 1.0},
    {"ecc_corrected_volatile", kSampled, "nvmlDeviceGetTotalEccErrors(CORRECTED, VOLATILE)",
     kVolatileEccErrors<NVML_MEMORY_ERROR_TYPE_CORRECTED>, 0, 1.0},
    {"ecc_uncorrected_volatile", kSampled, "nvmlDeviceGetTotalEccErrors(UNCORRECTED, VOLATILE)",
     kVolatileEccErrors<NVML_MEMORY_ERROR_TYPE_UNCORRECTED>, 0, 1.0},
}};

// Every row is filled in (kNvmlFieldCount rows, no more and no fewer), and rows naming the same
// call share one query per pass: they must be adjacent and of one sampling kind, with slots the
// query fills. (Checked by name, not by function address: GCC cannot compare those in a
// constant expression under -fsanitize=undefined.)
constexpr bool field_table_is_well_formed() {
  for (const Field& row : kFields) {
    if (row.name == nullptr || row.call == nullptr || !(row.nvml_per_unit > 0.0) || row.slot < 0 ||
        row.slot >= static_cast<int>(std::tuple_size<QueryValues>::value)) {
      return false;
    }
  }
  for (std::size_t i = 0; i < kFields.size(); ++i) {
    for (std::size_t j = i + 1; j < kFields.size(); ++j) {
      const std::string_view call = kFields[i].call;
      if (kFields[j].call != call) continue;
      if (kFields[j - 1].call != call || kFields[j].sampling != kFields[i].sampling) return false;
    }
  }
  return true;
}
static_assert(field_table_is_well_formed(),
              "kFields: a row is missing, or rows of one call are apart or disagree");

}  // namespace

const std::vector<std::string>& nvml_field_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const Field& field : kFields) out.emplace_back(field.name);
    return out;
  }();
  return names;
}

NvmlRead read_nvml_fields(const Nvml& nvml, nvmlDevice_t device, Sampling sampling, NvmlRow& row,
                          NvmlAbsence& absent) {
  NvmlRead read;
  std::string_view last_call;
  std::optional<nvmlReturn_t> rc;
  QueryValues values{};
  for (std::size_t f = 0; f < kFields.size(); ++f) {
    const Field& field = kFields[f];
    if (field.sampling != sampling || !absent[f].empty()) continue;
    if (field.call != last_call) {  // adjacent rows of one call share its query
      values.fill(kNaN);
      rc = field.query(nvml, device, values);
      last_call = field.call;
    }
    if (rc == NVML_SUCCESS) {
      row[f] = values[field.slot] / field.nvml_per_unit;
      read.any_value = read.any_value || !std::isnan(row[f]);
    } else if (!rc.has_value()) {
      absent[f] = std::string(field.call) + ": not exported by this driver";
    } else if (sampling == Sampling::kStatic || nvml_is_unsupported(*rc)) {
      // Never asked again: "not offered" does not change while the job runs, and a static
      // field is read only once anyway.
      absent[f] = std::string(field.call) + ": " + nvml_return_name(*rc);
    } else if (read.failure.empty()) {
      read.failure = std::string(field.call) + " failed: " + nvml.describe(*rc);
    }
  }
  return read;
}

}  // namespace straggler
