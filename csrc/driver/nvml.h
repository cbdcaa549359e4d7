// NVML (libnvidia-ml.so.1), loaded at run time: no NVML header or library is needed to build.
//
// The types and prototypes below mirror nvml.h (NVML 12.x, driver R535+) for the entry points the
// sampler calls. nvml.h renames unversioned calls to their newest ABI with macros
// (`#define nvmlInit nvmlInit_v2`) unless NVML_NO_UNVERSIONED_FUNC_DEFS is defined; we define it
// and name every versioned export explicitly, so the ABI we bind is the one written here. The
// prototypes are never called directly (nothing links against NVML): they type the entry-point
// table with decltype(&nvmlX) and check the simulated library in tests/sim against the same ABI.
#pragma once

#define NVML_NO_UNVERSIONED_FUNC_DEFS

#include <string>

extern "C" {

// ---- Types (nvml.h) --------------------------------------------------------------------------
typedef enum nvmlReturn_enum {
  NVML_SUCCESS = 0,
  NVML_ERROR_UNINITIALIZED = 1,
  NVML_ERROR_INVALID_ARGUMENT = 2,
  NVML_ERROR_NOT_SUPPORTED = 3,
  NVML_ERROR_NO_PERMISSION = 4,
  NVML_ERROR_ALREADY_INITIALIZED = 5,
  NVML_ERROR_NOT_FOUND = 6,
  NVML_ERROR_INSUFFICIENT_SIZE = 7,
  NVML_ERROR_INSUFFICIENT_POWER = 8,
  NVML_ERROR_DRIVER_NOT_LOADED = 9,
  NVML_ERROR_TIMEOUT = 10,
  NVML_ERROR_IRQ_ISSUE = 11,
  NVML_ERROR_LIBRARY_NOT_FOUND = 12,
  NVML_ERROR_FUNCTION_NOT_FOUND = 13,
  NVML_ERROR_CORRUPTED_INFOROM = 14,
  NVML_ERROR_GPU_IS_LOST = 15,
  NVML_ERROR_RESET_REQUIRED = 16,
  NVML_ERROR_OPERATING_SYSTEM = 17,
  NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
  NVML_ERROR_IN_USE = 19,
  NVML_ERROR_MEMORY = 20,
  NVML_ERROR_NO_DATA = 21,
  NVML_ERROR_VGPU_ECC_NOT_SUPPORTED = 22,
  NVML_ERROR_INSUFFICIENT_RESOURCES = 23,
  NVML_ERROR_FREQ_NOT_SUPPORTED = 24,
  NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
  NVML_ERROR_DEPRECATED = 26,
  NVML_ERROR_NOT_READY = 27,
  NVML_ERROR_GPU_NOT_FOUND = 28,
  NVML_ERROR_INVALID_STATE = 29,
  NVML_ERROR_UNKNOWN = 999
} nvmlReturn_t;

typedef struct nvmlDevice_st* nvmlDevice_t;

typedef enum nvmlClockType_enum {
  NVML_CLOCK_GRAPHICS = 0,
  NVML_CLOCK_SM = 1,
  NVML_CLOCK_MEM = 2,
  NVML_CLOCK_VIDEO = 3
} nvmlClockType_t;

typedef enum nvmlTemperatureSensors_enum { NVML_TEMPERATURE_GPU = 0 } nvmlTemperatureSensors_t;

typedef enum nvmlPerfPolicyType_enum {
  NVML_PERF_POLICY_POWER = 0,
  NVML_PERF_POLICY_THERMAL = 1,
  NVML_PERF_POLICY_SYNC_BOOST = 2,
  NVML_PERF_POLICY_BOARD_LIMIT = 3,
  NVML_PERF_POLICY_LOW_UTILIZATION = 4,
  NVML_PERF_POLICY_RELIABILITY = 5,
  NVML_PERF_POLICY_TOTAL_APP_CLOCKS = 10,
  NVML_PERF_POLICY_TOTAL_BASE_CLOCKS = 11
} nvmlPerfPolicyType_t;

typedef enum nvmlMemoryErrorType_enum {
  NVML_MEMORY_ERROR_TYPE_CORRECTED = 0,
  NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1
} nvmlMemoryErrorType_t;

typedef enum nvmlEccCounterType_enum {
  NVML_VOLATILE_ECC = 0,  // since the last driver reload
  NVML_AGGREGATE_ECC = 1  // lifetime of the board
} nvmlEccCounterType_t;

typedef enum nvmlValueType_enum {
  NVML_VALUE_TYPE_DOUBLE = 0,
  NVML_VALUE_TYPE_UNSIGNED_INT = 1,
  NVML_VALUE_TYPE_UNSIGNED_LONG = 2,
  NVML_VALUE_TYPE_UNSIGNED_LONG_LONG = 3,
  NVML_VALUE_TYPE_SIGNED_LONG_LONG = 4,
  NVML_VALUE_TYPE_SIGNED_INT = 5,
  NVML_VALUE_TYPE_UNSIGNED_SHORT = 6
} nvmlValueType_t;

typedef struct nvmlUtilization_st {
  unsigned int gpu;     // % of the last sample period with a kernel running
  unsigned int memory;  // % of the last sample period with device memory read or written
} nvmlUtilization_t;

typedef struct nvmlMemory_st {  // the v1 struct of nvmlDeviceGetMemoryInfo
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
} nvmlMemory_t;

typedef struct nvmlViolationTime_st {
  unsigned long long referenceTime;  // CPU timestamp, microseconds
  unsigned long long violationTime;  // cumulative time below the requested clocks, nanoseconds
} nvmlViolationTime_t;

typedef union nvmlValue_st {
  double dVal;
  unsigned int uiVal;
  unsigned long ulVal;
  unsigned long long ullVal;
  signed long long sllVal;
  signed int siVal;
  unsigned short usVal;
} nvmlValue_t;

// nvmlDeviceGetTemperatureV's versioned struct (R565+; nvmlDeviceGetTemperature is deprecated
// from CUDA 13.0 and answers NVML_ERROR_DEPRECATED once removed).
typedef struct nvmlTemperature_v1_st {
  unsigned int version;  // nvmlTemperature_v1
  nvmlTemperatureSensors_t sensorType;
  int temperature;
} nvmlTemperature_v1_t;
typedef nvmlTemperature_v1_t nvmlTemperature_t;
// NVML_STRUCT_VERSION(Temperature, 1): sizeof(nvmlTemperature_v1_t) | (1 << 24).
enum : unsigned int { nvmlTemperature_v1 = 0x100000C };

typedef struct nvmlFieldValue_st {
  unsigned int fieldId;  // NVML_FI_*
  unsigned int scopeId;  // e.g. an NVLink id; 0 for device-wide fields
  long long timestamp;   // CPU timestamp of the value, microseconds since 1970
  long long latencyUsec; // how long NVML took to read the value
  nvmlValueType_t valueType;
  nvmlReturn_t nvmlReturn;
  nvmlValue_t value;
} nvmlFieldValue_t;

// NVML_FI_* field ids read through nvmlDeviceGetFieldValues.
enum { NVML_FI_DEV_MEMORY_TEMP = 82 };

// nvmlClocksEventReasons (nvml.h "ClocksEventReasons"; same bits as the deprecated
// nvmlClocksThrottleReason* names).
enum : unsigned long long {
  nvmlClocksEventReasonGpuIdle = 0x1ULL,
  nvmlClocksEventReasonApplicationsClocksSetting = 0x2ULL,
  nvmlClocksEventReasonSwPowerCap = 0x4ULL,
  nvmlClocksEventReasonHwSlowdown = 0x8ULL,
  nvmlClocksEventReasonSyncBoost = 0x10ULL,
  nvmlClocksEventReasonSwThermalSlowdown = 0x20ULL,
  nvmlClocksEventReasonHwThermalSlowdown = 0x40ULL,
  nvmlClocksEventReasonHwPowerBrakeSlowdown = 0x80ULL,
  nvmlClocksEventReasonDisplayClockSetting = 0x100ULL
};

// Buffer sizes nvml.h documents for the identity strings.
enum {
  NVML_DEVICE_NAME_V2_BUFFER_SIZE = 96,
  NVML_DEVICE_UUID_V2_BUFFER_SIZE = 96,
  NVML_DEVICE_SERIAL_BUFFER_SIZE = 30,
  NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE = 80,
  NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE = 32
};

// ---- Prototypes (the ABI we bind; see the table below) --------------------------------------
nvmlReturn_t nvmlInit_v2(void);
nvmlReturn_t nvmlShutdown(void);
const char* nvmlErrorString(nvmlReturn_t result);
nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned int length);
nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char* pciBusId, nvmlDevice_t* device);
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned int length);
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid, unsigned int length);
nvmlReturn_t nvmlDeviceGetSerial(nvmlDevice_t device, char* serial, unsigned int length);
nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned int* clock);
nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t device, nvmlClockType_t type,
                                       unsigned int* clock);
nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int* power);
nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device, unsigned int* limit);
nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, nvmlTemperatureSensors_t sensorType,
                                      unsigned int* temp);
nvmlReturn_t nvmlDeviceGetTemperatureV(nvmlDevice_t device, nvmlTemperature_t* temperature);
nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t device, int valuesCount,
                                      nvmlFieldValue_t* values);
nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device,
                                                    unsigned long long* clocksEventReasons);
nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t device,
                                                       unsigned long long* clocksThrottleReasons);
nvmlReturn_t nvmlDeviceGetViolationStatus(nvmlDevice_t device, nvmlPerfPolicyType_t perfPolicyType,
                                          nvmlViolationTime_t* violTime);
nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t* utilization);
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory);
nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t device, unsigned int* currLinkGen);
nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t device, unsigned int* maxLinkGen);
nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t device, unsigned int* currLinkWidth);
nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t device, unsigned int* maxLinkWidth);
nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t device, nvmlMemoryErrorType_t errorType,
                                         nvmlEccCounterType_t counterType,
                                         unsigned long long* eccCounts);

}  // extern "C"

namespace straggler {

// X(name, required). Every symbol is dlsym'd by the exact name written here: the versioned
// ones (nvmlInit_v2, nvmlDeviceGetHandleByPciBusId_v2) are what nvml.h's macros bind; the
// unversioned ones have a single ABI. Required entries must resolve or NVML is unavailable;
// optional ones sit behind has_<name>() and a missing one leaves its field absent.
// nvmlDeviceGetCurrentClocksEventReasons is R535+; older drivers only have the (same-ABI)
// ...ThrottleReasons name, used as the fallback. Likewise nvmlDeviceGetTemperatureV (R565+)
// before the deprecated nvmlDeviceGetTemperature. nvmlDeviceGetViolationStatus is deprecated
// from CUDA 13.0 with no like-for-like successor: where a driver answers NVML_ERROR_DEPRECATED
// the violation counters are absent and the clocks-event reasons still tell throttling.
static_assert(sizeof(nvmlTemperature_v1_t) == 12, "nvmlTemperature_v1 encodes sizeof == 12");
// clang-format off
#define STRAGGLER_NVML_ENTRY_POINTS(X)                          \
  X(nvmlInit_v2,                              true)             \
  X(nvmlShutdown,                             true)             \
  X(nvmlErrorString,                          true)             \
  X(nvmlDeviceGetHandleByPciBusId_v2,         true)             \
  X(nvmlSystemGetDriverVersion,               false)            \
  X(nvmlDeviceGetName,                        false)            \
  X(nvmlDeviceGetUUID,                        false)            \
  X(nvmlDeviceGetSerial,                      false)            \
  X(nvmlDeviceGetClockInfo,                   false)            \
  X(nvmlDeviceGetMaxClockInfo,                false)            \
  X(nvmlDeviceGetPowerUsage,                  false)            \
  X(nvmlDeviceGetEnforcedPowerLimit,          false)            \
  X(nvmlDeviceGetTemperatureV,                false)            \
  X(nvmlDeviceGetTemperature,                 false)            \
  X(nvmlDeviceGetFieldValues,                 false)            \
  X(nvmlDeviceGetCurrentClocksEventReasons,   false)            \
  X(nvmlDeviceGetCurrentClocksThrottleReasons, false)           \
  X(nvmlDeviceGetViolationStatus,             false)            \
  X(nvmlDeviceGetUtilizationRates,            false)            \
  X(nvmlDeviceGetMemoryInfo,                  false)            \
  X(nvmlDeviceGetCurrPcieLinkGeneration,      false)            \
  X(nvmlDeviceGetMaxPcieLinkGeneration,       false)            \
  X(nvmlDeviceGetCurrPcieLinkWidth,           false)            \
  X(nvmlDeviceGetMaxPcieLinkWidth,            false)            \
  X(nvmlDeviceGetTotalEccErrors,              false)
// clang-format on

// The process-wide NVML table. Loaded and initialised (nvmlInit_v2) once, on first use, from
// $STRAGGLER_LIBNVML (default "libnvidia-ml.so.1"); never shut down or closed, since other
// threads (the sampler) and exit handlers may still call into it.
class Nvml {
 public:
  // Never throws; loads and initialises on the first call. Check available() before use.
  static const Nvml& instance();

  // True when the library loaded, every required symbol resolved and nvmlInit_v2 succeeded.
  [[nodiscard]] bool available() const noexcept { return available_; }
  // Why NVML is unavailable ("" when available), with what to do about it.
  [[nodiscard]] const std::string& error() const noexcept { return error_; }
  [[nodiscard]] const std::string& library_path() const noexcept { return path_; }

  // "NVML_ERROR_NOT_SUPPORTED (Not Supported)"; safe when nvmlErrorString is unusable.
  [[nodiscard]] std::string describe(nvmlReturn_t code) const;

#define STRAGGLER_NVML_MEMBER(name, required) decltype(&::name) name = nullptr;
  STRAGGLER_NVML_ENTRY_POINTS(STRAGGLER_NVML_MEMBER)
#undef STRAGGLER_NVML_MEMBER

#define STRAGGLER_NVML_HAS(name, required) \
  [[nodiscard]] bool has_##name() const noexcept { return name != nullptr; }
  STRAGGLER_NVML_ENTRY_POINTS(STRAGGLER_NVML_HAS)
#undef STRAGGLER_NVML_HAS

  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

 private:
  Nvml();
  void load();

  bool available_ = false;
  std::string error_;
  std::string path_;
};

// Symbolic name of an nvmlReturn_t ("NVML_ERROR_GPU_IS_LOST"); "nvmlReturn_t <n>" if unknown.
const char* nvml_return_name(nvmlReturn_t code) noexcept;

// True for results meaning "this GPU or driver does not offer that value" (the field is left
// absent, sampling goes on), as opposed to a failure of NVML or of the GPU.
bool nvml_is_unsupported(nvmlReturn_t code) noexcept;

// Who the GPU is, read once: the report names the physical board to pull from the cluster.
struct NvmlIdentity {
  std::string name;
  std::string uuid;
  std::string serial;
  std::string pci_bus_id;
  std::string driver_version;
};

}  // namespace straggler
