// The CUDA driver API, loaded at run time: no CUDA header or library is needed to build.
//
// The types and prototypes below mirror cuda.h (CUDA 12.x) for the few entry points we use.
// The prototypes are never called directly (nothing links against libcuda); they exist so the
// entry-point table can be typed with decltype(&cuX) and so the simulated driver in tests/sim
// is checked against the same ABI at compile time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

extern "C" {

// ---- Types (cuda.h: "Data types used by CUDA driver") ---------------------------------------
typedef enum cudaError_enum {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_OUT_OF_MEMORY = 2,
  CUDA_ERROR_NOT_INITIALIZED = 3,
  CUDA_ERROR_DEINITIALIZED = 4,
  CUDA_ERROR_STUB_LIBRARY = 34,
  CUDA_ERROR_INSUFFICIENT_DRIVER = 35,
  CUDA_ERROR_NO_DEVICE = 100,
  CUDA_ERROR_INVALID_DEVICE = 101,
  CUDA_ERROR_INVALID_IMAGE = 200,
  CUDA_ERROR_INVALID_CONTEXT = 201,
  CUDA_ERROR_INVALID_PTX = 218,
  CUDA_ERROR_INVALID_HANDLE = 400,
  CUDA_ERROR_NOT_FOUND = 500,
  CUDA_ERROR_NOT_READY = 600,
  CUDA_ERROR_ILLEGAL_ADDRESS = 700,
  CUDA_ERROR_LAUNCH_FAILED = 719,
  CUDA_ERROR_NOT_SUPPORTED = 801,
  CUDA_ERROR_UNKNOWN = 999
} CUresult;

typedef int CUdevice;                  // CUdevice_v1
typedef struct CUctx_st* CUcontext;
typedef struct CUevent_st* CUevent;
typedef struct CUstream_st* CUstream;
typedef struct CUmod_st* CUmodule;
typedef struct CUfunc_st* CUfunction;
typedef uint64_t cuuint64_t;

// CUevent_flags
enum { CU_EVENT_DEFAULT = 0x0, CU_EVENT_BLOCKING_SYNC = 0x1, CU_EVENT_DISABLE_TIMING = 0x2 };

// CUdevice_attribute: only the values we (or the probe) read; numbers as in cuda.h.
typedef enum CUdevice_attribute_enum {
  CU_DEVICE_ATTRIBUTE_CLOCK_RATE = 13,
  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
  CU_DEVICE_ATTRIBUTE_PCI_BUS_ID = 33,
  CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID = 34,
  CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE = 36,
  CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH = 37,
  CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID = 50,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76
} CUdevice_attribute;

// CUdriverProcAddress_flags (CUDA 11.3+)
enum {
  CU_GET_PROC_ADDRESS_DEFAULT = 0,
  CU_GET_PROC_ADDRESS_LEGACY_STREAM = 1 << 0,
  CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM = 1 << 1
};

// CUdriverProcAddressQueryResult (CUDA 12.0+)
typedef enum CUdriverProcAddressQueryResult_enum {
  CU_GET_PROC_ADDRESS_SUCCESS = 0,
  CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND = 1,
  CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT = 2
} CUdriverProcAddressQueryResult;

// ---- Prototypes (the ABI we pin; see kCudaAbiVersion) ----------------------------------------
CUresult cuGetErrorName(CUresult error, const char** pStr);
CUresult cuGetErrorString(CUresult error, const char** pStr);
CUresult cuInit(unsigned int Flags);
CUresult cuDriverGetVersion(int* driverVersion);
CUresult cuDeviceGet(CUdevice* device, int ordinal);
CUresult cuDeviceGetCount(int* count);
CUresult cuDeviceGetName(char* name, int len, CUdevice dev);
CUresult cuDeviceGetPCIBusId(char* pciBusId, int len, CUdevice dev);
CUresult cuDeviceGetAttribute(int* pi, CUdevice_attribute attrib, CUdevice dev);
CUresult cuDevicePrimaryCtxRetain(CUcontext* pctx, CUdevice dev);
CUresult cuDevicePrimaryCtxRelease(CUdevice dev);  // exported as cuDevicePrimaryCtxRelease_v2
CUresult cuCtxGetCurrent(CUcontext* pctx);
CUresult cuCtxSetCurrent(CUcontext ctx);
CUresult cuEventCreate(CUevent* phEvent, unsigned int Flags);
CUresult cuEventDestroy(CUevent hEvent);  // exported as cuEventDestroy_v2
CUresult cuEventRecord(CUevent hEvent, CUstream hStream);
CUresult cuEventQuery(CUevent hEvent);
CUresult cuEventSynchronize(CUevent hEvent);
CUresult cuEventElapsedTime(float* pMilliseconds, CUevent hStart, CUevent hEnd);
CUresult cuModuleLoadData(CUmodule* module, const void* image);
CUresult cuModuleUnload(CUmodule hmod);
CUresult cuModuleGetFunction(CUfunction* hfunc, CUmodule hmod, const char* name);
CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                        unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                        unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                        void** kernelParams, void** extra);

// The resolver itself, found with dlsym. cuGetProcAddress (11.3) takes 4 arguments; the _v2
// export (12.0, what cuda.h 12.x calls cuGetProcAddress) adds the symbol status.
CUresult cuGetProcAddress(const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags);
CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags,
                             CUdriverProcAddressQueryResult* symbolStatus);

}  // extern "C"

namespace straggler {

// The driver ABI version we ask cuGetProcAddress for (capped at the installed driver's
// version). 12.0 binds, for each base name below, the ABI our prototypes declare:
// cuEventDestroy -> cuEventDestroy_v2 (4.0), cuDevicePrimaryCtxRelease -> _v2 (11.0), and
// cuEventElapsedTime -> v1 (its _v2 from 12.8 has the same signature; drivers keep serving the
// ABI a version asks for, so binaries built against older toolkits keep working on 13.x).
constexpr int kCudaAbiVersion = 12000;

// X(name, exported symbol for dlsym fallback, required)
//   The exported symbol is the versioned ABI pinned above: plain dlsym("cuEventDestroy") would
//   bind the legacy ABI, so the fallback names the versioned export explicitly. Required entries
//   must resolve or the backend is unavailable; optional ones sit behind has_<name>().
// clang-format off
#define STRAGGLER_CUDA_DRIVER_ENTRY_POINTS(X)                                                  \
  X(cuGetErrorName,            "cuGetErrorName",               true)                          \
  X(cuGetErrorString,          "cuGetErrorString",             true)                          \
  X(cuInit,                    "cuInit",                       true)                          \
  X(cuDriverGetVersion,        "cuDriverGetVersion",           true)                          \
  X(cuDeviceGet,               "cuDeviceGet",                  true)                          \
  X(cuDeviceGetCount,          "cuDeviceGetCount",             true)                          \
  X(cuDeviceGetName,           "cuDeviceGetName",              true)                          \
  X(cuDeviceGetPCIBusId,       "cuDeviceGetPCIBusId",          true)                          \
  X(cuDeviceGetAttribute,      "cuDeviceGetAttribute",         true)                          \
  /* _v2: what cuda.h binds since 11.0 (#define cuDevicePrimaryCtxRelease ..._v2). */          \
  X(cuDevicePrimaryCtxRetain,  "cuDevicePrimaryCtxRetain",     true)                          \
  X(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", true)                          \
  X(cuCtxGetCurrent,           "cuCtxGetCurrent",              true)                          \
  X(cuCtxSetCurrent,           "cuCtxSetCurrent",              true)                          \
  X(cuEventCreate,             "cuEventCreate",                true)                          \
  /* _v2: what cuda.h binds since 4.0; the unversioned export is the legacy ABI. */           \
  X(cuEventDestroy,            "cuEventDestroy_v2",            true)                          \
  /* legacy default stream: stream 0 means what it means to PyTorch (see resolve()). */       \
  X(cuEventRecord,             "cuEventRecord",                true)                          \
  X(cuEventQuery,              "cuEventQuery",                 true)                          \
  X(cuEventSynchronize,        "cuEventSynchronize",           true)                          \
  X(cuEventElapsedTime,        "cuEventElapsedTime",           true)                          \
  /* The probe's kernel: optional, the timers work without it. */                             \
  X(cuModuleLoadData,          "cuModuleLoadData",             false)                         \
  X(cuModuleUnload,            "cuModuleUnload",               false)                         \
  X(cuModuleGetFunction,       "cuModuleGetFunction",          false)                         \
  X(cuLaunchKernel,            "cuLaunchKernel",               false)
// clang-format on

// A failed driver call: names the call and carries the driver's error name and string.
class CudaError : public std::runtime_error {
 public:
  CudaError(const std::string& message, CUresult code) : std::runtime_error(message), code_(code) {}
  [[nodiscard]] CUresult code() const noexcept { return code_; }

 private:
  CUresult code_;
};

// The process-wide driver table. Loaded once, on first use, from $STRAGGLER_LIBCUDA (default
// "libcuda.so.1"); the library is never closed (callbacks and exit handlers may still run).
class CudaDriver {
 public:
  // Never throws; loads on first call. Check loaded() before using an entry point.
  static const CudaDriver& instance();

  [[nodiscard]] bool loaded() const noexcept { return loaded_; }
  // Why loading failed ("" when loaded): the library path and dlerror(), or a missing symbol.
  [[nodiscard]] const std::string& load_error() const noexcept { return load_error_; }
  [[nodiscard]] const std::string& library_path() const noexcept { return path_; }
  // How the entry points were found: "cuGetProcAddress_v2", "cuGetProcAddress", "dlsym", or a
  // getter plus "dlsym for N" when some symbols were only exported.
  [[nodiscard]] const std::string& resolver() const noexcept { return resolver_; }

  // "CUDA_ERROR_NOT_READY (device not ready)"; works even if cuGetErrorName is unusable.
  [[nodiscard]] std::string describe(CUresult code) const;

  // Typed entry points: driver.cuEventRecord(ev, stream).
#define STRAGGLER_CUDA_MEMBER(name, symbol, required) decltype(&::name) name = nullptr;
  STRAGGLER_CUDA_DRIVER_ENTRY_POINTS(STRAGGLER_CUDA_MEMBER)
#undef STRAGGLER_CUDA_MEMBER

#define STRAGGLER_CUDA_HAS(name, symbol, required) \
  [[nodiscard]] bool has_##name() const noexcept { return name != nullptr; }
  STRAGGLER_CUDA_DRIVER_ENTRY_POINTS(STRAGGLER_CUDA_HAS)
#undef STRAGGLER_CUDA_HAS

  CudaDriver(const CudaDriver&) = delete;
  CudaDriver& operator=(const CudaDriver&) = delete;

 private:
  CudaDriver();
  void load();

  bool loaded_ = false;
  std::string load_error_;
  std::string path_;
  std::string resolver_ = "none";
};

// cuda_status(): loads the driver, cuInit(0), and checks that `device` exists. Never throws.
struct CudaStatus {
  bool available = false;
  std::string reason;
};
CudaStatus cuda_status(int device) noexcept;

// Message for a failed call, e.g. "cuEventRecord(ev, stream) failed: CUDA_ERROR_INVALID_HANDLE
// (invalid resource handle)".
std::string cuda_error_message(const char* call, CUresult code);

// Writes one line to stderr, prefixed "[straggler] ". Never throws.
void log_warning(const std::string& message) noexcept;

// Logs cuda_error_message(call, code); never throws (a message that cannot be built, e.g. out of
// memory, is logged as the bare call), so destructors and threads can use it.
void log_cuda_error(const char* call, CUresult code) noexcept;

}  // namespace straggler

// Throwing check, for calls made on behalf of Python: raises CudaError naming the call.
#define STRAGGLER_CU_CHECK(call)                                                             \
  do {                                                                                       \
    const CUresult straggler_cu_rc_ = (call);                                                \
    if (straggler_cu_rc_ != CUDA_SUCCESS) {                                                  \
      throw ::straggler::CudaError(::straggler::cuda_error_message(#call, straggler_cu_rc_), \
                                   straggler_cu_rc_);                                        \
    }                                                                                        \
  } while (0)

// Logging check, for destructors, threads and exit paths: logs and goes on, never throws.
// CUDA_ERROR_DEINITIALIZED (the driver is shutting down at exit) is silent.
#define STRAGGLER_CU_LOG(call)                                                              \
  do {                                                                                      \
    const CUresult straggler_cu_rc_ = (call);                                               \
    if (straggler_cu_rc_ != CUDA_SUCCESS && straggler_cu_rc_ != CUDA_ERROR_DEINITIALIZED) { \
      ::straggler::log_cuda_error(#call, straggler_cu_rc_);                                 \
    }                                                                                       \
  } while (0)
