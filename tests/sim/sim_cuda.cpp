// A simulated libcuda.so.1 for tests: the driver entry points straggler calls, with simulated
// streams on the real monotonic clock, a slowdown factor, error injection and counters.
// See tests/sim/README.md for the knobs. Built by `make sim` into build/sim/libcuda.so.1.
//
// It includes the engine's own declarations of the driver ABI, so a signature that drifts
// between the two fails to compile here.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "driver/cuda_driver.h"

namespace {

// ---- Entry points, for counters and error injection ---------------------------------------------
// One entry a line, left as written: clang-format folds an X-macro list unstably.
// clang-format off
#define SIM_FUNCTIONS(X)                \
  X(cuGetProcAddress)                   \
  X(cuGetProcAddress_v2)                \
  X(cuGetErrorName)                     \
  X(cuGetErrorString)                   \
  X(cuInit)                             \
  X(cuDriverGetVersion)                 \
  X(cuDeviceGet)                        \
  X(cuDeviceGetCount)                   \
  X(cuDeviceGetName)                    \
  X(cuDeviceGetPCIBusId)                \
  X(cuDeviceGetAttribute)               \
  X(cuDevicePrimaryCtxRetain)           \
  X(cuDevicePrimaryCtxRelease)          \
  X(cuDevicePrimaryCtxRelease_v2)       \
  X(cuCtxGetCurrent)                    \
  X(cuCtxSetCurrent)                    \
  X(cuEventCreate)                      \
  X(cuEventDestroy)                     \
  X(cuEventDestroy_v2)                  \
  X(cuEventRecord)                      \
  X(cuEventQuery)                       \
  X(cuEventSynchronize)                 \
  X(cuEventElapsedTime)                 \
  X(cuEventElapsedTime_v2)              \
  X(cuModuleLoadData)                   \
  X(cuModuleUnload)                     \
  X(cuModuleGetFunction)                \
  X(cuLaunchKernel)
// clang-format on

enum Fn {
#define SIM_ENUM(name) k_##name,
  SIM_FUNCTIONS(SIM_ENUM)
#undef SIM_ENUM
      kFnCount
};

const char* const kFnNames[kFnCount] = {
#define SIM_NAME(name) #name,
    SIM_FUNCTIONS(SIM_NAME)
#undef SIM_NAME
};

int fn_index(const char* name) {
  if (name == nullptr) return -1;
  for (int i = 0; i < kFnCount; ++i) {
    if (std::strcmp(kFnNames[i], name) == 0) return i;
  }
  return -1;
}

constexpr int kMaxDevices = 16;
constexpr uint32_t kEventMagic = 0x5e7e7e57;

double now_ms() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double env_double(const char* name, double fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || v[0] == '\0') return fallback;
  char* end = nullptr;
  const double d = std::strtod(v, &end);
  if (end == v || d < 0) {
    std::fprintf(stderr, "simcuda: ignoring %s=%s (want a number >= 0)\n", name, v);
    return fallback;
  }
  return d;
}

}  // namespace

struct CUctx_st {
  int device;
};
struct CUevent_st {
  uint32_t magic;
  CUcontext ctx;
  unsigned flags;
  bool recorded;
  double complete_at_ms;
  uint64_t serial;  // unique per event: a new event at a freed one's address is not mistaken for it
};
struct CUmod_st {
  CUcontext ctx;
  std::string image;  // the PTX text: cuModuleGetFunction finds only its `.entry` names
};
struct CUfunc_st {
  CUmodule module;
};

namespace {

struct Failure {
  int code = 0;
  long remaining = 0;  // < 0: until simcuda_reset()
};

// All simulator state: one instance, one lock.
struct Sim {
  Sim()
      : device_count(static_cast<int>(env_double("SIMCUDA_DEVICE_COUNT", 1))),
        slowdown(env_double("SIMCUDA_SLOWDOWN", 1.0)),
        kernel_ms(env_double("SIMCUDA_KERNEL_MS", 1.0)),
        driver_version(static_cast<int>(env_double("SIMCUDA_DRIVER_VERSION", 12040))),
        proc_address(env_double("SIMCUDA_PROC_ADDRESS", 1) != 0) {
    device_count = std::min(device_count, kMaxDevices);
    for (int i = 0; i < kMaxDevices; ++i) contexts[i].device = i;
    for (int i = 0; i < kMaxDevices; ++i) physical[i] = i;
    // SIMCUDA_VISIBLE_DEVICES plays CUDA_VISIBLE_DEVICES (a separate name, so a CI machine's own
    // setting cannot change the simulator): "5,2" shows physical GPUs 5 and 2 as ordinals 0, 1;
    // the list ends at the first entry that is not a physical GPU, as the driver's does.
    if (const char* visible = std::getenv("SIMCUDA_VISIBLE_DEVICES")) {
      int n = 0;
      for (const char* p = visible; *p != '\0' && n < kMaxDevices;) {
        char* end = nullptr;
        const long id = std::strtol(p, &end, 10);
        if (end == p || id < 0 || id >= device_count) break;
        physical[n++] = static_cast<int>(id);
        p = (*end == ',') ? end + 1 : end;
        if (*end != ',') break;
      }
      device_count = n;
    }
  }

  std::mutex mu;
  int device_count;
  int physical[kMaxDevices];  // ordinal -> simulated physical GPU (SIMCUDA_VISIBLE_DEVICES)
  double slowdown;
  double kernel_ms;
  int driver_version;
  bool proc_address;
  std::atomic<bool> initialized{false};
  CUctx_st contexts[kMaxDevices];
  int ctx_refs[kMaxDevices] = {};
  std::unordered_set<CUevent> events;
  uint64_t next_event_serial = 1;
  // cuEventSynchronize waits on this; simcuda_complete() bumps `completions` and wakes it.
  std::condition_variable work_done;
  uint64_t completions = 0;
  std::unordered_set<CUmodule> modules;
  std::unordered_set<CUfunction> functions;
  std::unordered_map<std::uintptr_t, double> stream_tail_ms;
  Failure failures[kFnCount];
  std::atomic<bool> any_failure{false};
  std::atomic<long> calls[kFnCount] = {};

  // Work of `ms` (already scaled) on `stream`: returns when it will be done.
  double enqueue_locked(CUstream stream, double ms) {
    double& tail = stream_tail_ms[reinterpret_cast<std::uintptr_t>(stream)];
    tail = std::max(tail, now_ms()) + ms;
    return tail;
  }
  double tail_locked(CUstream stream) {
    auto it = stream_tail_ms.find(reinterpret_cast<std::uintptr_t>(stream));
    return std::max(now_ms(), it == stream_tail_ms.end() ? 0.0 : it->second);
  }
};

Sim& sim() {
  static Sim* s = new Sim();  // never destroyed: calls may arrive during exit
  return *s;
}

thread_local CUcontext tls_current = nullptr;

// Counts the call and returns an injected error, or CUDA_SUCCESS.
CUresult enter(Fn fn) {
  Sim& s = sim();
  s.calls[fn].fetch_add(1, std::memory_order_relaxed);
  if (!s.any_failure.load(std::memory_order_acquire)) return CUDA_SUCCESS;
  std::lock_guard<std::mutex> lock(s.mu);
  Failure& f = s.failures[fn];
  if (f.remaining == 0) return CUDA_SUCCESS;
  if (f.remaining > 0) --f.remaining;
  return static_cast<CUresult>(f.code);
}

#define SIM_ENTER(name)                              \
  do {                                               \
    const CUresult injected_ = enter(k_##name);      \
    if (injected_ != CUDA_SUCCESS) return injected_; \
  } while (0)

// Valid context current in this thread (caller holds the lock).
bool context_ok_locked(Sim& s) {
  return tls_current != nullptr && s.ctx_refs[tls_current->device] > 0;
}

bool event_ok_locked(Sim& s, CUevent ev) {
  return ev != nullptr && s.events.count(ev) != 0 && ev->magic == kEventMagic;
}

struct ErrorText {
  CUresult code;
  const char* name;
  const char* text;
};
const ErrorText kErrors[] = {
    {CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {CUDA_ERROR_DEINITIALIZED, "CUDA_ERROR_DEINITIALIZED", "driver shutting down"},
    {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
    {CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {CUDA_ERROR_INVALID_PTX, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
    {CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {CUDA_ERROR_NOT_READY, "CUDA_ERROR_NOT_READY", "device not ready"},
    {CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS",
     "an illegal memory access was encountered"},
    {CUDA_ERROR_LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
    {CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
    {CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

const ErrorText* find_error(CUresult code) {
  for (const ErrorText& e : kErrors) {
    if (e.code == code) return &e;
  }
  return nullptr;
}

}  // namespace

extern "C" {

// ---- Errors, init, version -----------------------------------------------------------------------

CUresult cuGetErrorName(CUresult error, const char** pStr) {
  SIM_ENTER(cuGetErrorName);
  if (pStr == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const ErrorText* e = find_error(error);
  *pStr = e != nullptr ? e->name : nullptr;
  return e != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuGetErrorString(CUresult error, const char** pStr) {
  SIM_ENTER(cuGetErrorString);
  if (pStr == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const ErrorText* e = find_error(error);
  *pStr = e != nullptr ? e->text : nullptr;
  return e != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuInit(unsigned int Flags) {
  SIM_ENTER(cuInit);
  if (Flags != 0) return CUDA_ERROR_INVALID_VALUE;
  Sim& s = sim();
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.device_count <= 0) return CUDA_ERROR_NO_DEVICE;
  s.initialized = true;
  return CUDA_SUCCESS;
}

CUresult cuDriverGetVersion(int* driverVersion) {
  SIM_ENTER(cuDriverGetVersion);
  if (driverVersion == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *driverVersion = sim().driver_version;
  return CUDA_SUCCESS;
}

#define SIM_REQUIRE_INIT(s) \
  if (!(s).initialized) return CUDA_ERROR_NOT_INITIALIZED

// ---- Devices -------------------------------------------------------------------------------------

CUresult cuDeviceGetCount(int* count) {
  SIM_ENTER(cuDeviceGetCount);
  Sim& s = sim();
  std::lock_guard<std::mutex> lock(s.mu);
  SIM_REQUIRE_INIT(s);
  if (count == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *count = s.device_count;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice* device, int ordinal) {
  SIM_ENTER(cuDeviceGet);
  Sim& s = sim();
  std::lock_guard<std::mutex> lock(s.mu);
  SIM_REQUIRE_INIT(s);
  if (device == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (ordinal < 0 || ordinal >= s.device_count) return CUDA_ERROR_INVALID_DEVICE;
  *device = ordinal;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetName(char* name, int len, CUdevice dev) {
  SIM_ENTER(cuDeviceGetName);
  Sim& s = sim();
  std::lock_guard<std::mutex> lock(s.mu);
  SIM_REQUIRE_INIT(s);
  if (name == nullptr || len <= 0) return CUDA_ERROR_INVALID_VALUE;
  if (dev < 0 || dev >= s.device_count) return CUDA_ERROR_INVALID_DEVICE;
  std::snprintf(name, static_cast<size_t>(len), "Simulated GPU %d", dev);
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetPCIBusId(char* pciBusId, int len, CUdevice dev) {
  SIM_ENTER(cuDeviceGetPCIBusId);
  Sim& s = sim();
  std::lock_guard<std::mutex> lock(s.mu);
  SIM_REQUIRE_INIT(s);
  if (pciBusId == nullptr || len < 13) return CUDA_ERROR_INVALID_VALUE;
  if (dev < 0 || dev >= s.device_count) return CUDA_ERROR_INVALID_DEVICE;
  // domain:bus:device.function, as the driver formats it; bus = 0x10 + physical GPU index.
  std::snprintf(pciBusId, static_cast<size_t>(len), "0000:%02X:00.0", 0x10 + s.physical[dev]);
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetAttribute(int* pi, CUdevice_attribute attrib, CUdevice dev) {
  SIM_ENTER(cuDeviceGetAttribute);
  Sim& s = sim();
  std::lock_guard<std::mutex> lock(s.mu);
  SIM_REQUIRE_INIT(s);
  if (pi == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (dev < 0 || dev >= s.device_count) return CUDA_ERROR_INVALID_DEVICE;
  switch (attrib) {  // an H100 SXM's values
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE:
      *pi = 1980000;
      break;  // kHz
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
      *pi = 132;
      break;
    case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID:
      *pi = 0x10 + dev;
      break;
    case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID:
      *pi = 0;
      break;
    case CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID:
      *pi = 0;
      break;
    case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE:
      *pi = 2619000;
      break;  // kHz
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH:
      *pi = 5120;
      break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
      *pi = 9;
      break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
      *pi = 0;
      break;
    default:
      return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

// ---- Contexts ------------------------------------------------------------------------------------

CUresult cuDevicePrimaryCtxRetain(CUcontext* pctx, CUdevice dev) {
  SIM_ENTER(cuDevicePrimaryCtxRetain);
  Sim& s = sim();
  std::lock_guard<std::mutex> lock(s.mu);
  SIM_REQUIRE_INIT(s);
  if (pctx == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (dev < 0 || dev >= s.device_count) return CUDA_ERROR_INVALID_DEVICE;
  ++s.ctx_refs[dev];
  *pctx = &s.contexts[dev];
  return CUDA_SUCCESS;
}

static CUresult primary_ctx_release(CUdevice dev) {
  Sim& s = sim();
  std::lock_guard<std::mutex> lock(s.mu);
  SIM_REQUIRE_INIT(s);
  if (dev < 0 || dev >= s.device_count) return CUDA_ERROR_INVALID_DEVICE;
  if (s.ctx_refs[dev] <= 0) return CUDA_ERROR_INVALID_CONTEXT;
  --s.ctx_refs[dev];
  return CUDA_SUCCESS;
}

// The legacy ABI (before 11.0): exported so a wrongly bound table shows up in the counters.
CUresult cuDevicePrimaryCtxRelease(CUdevice dev) {
  SIM_ENTER(cuDevicePrimaryCtxRelease);
  return primary_ctx_release(dev);
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev) {
  SIM_ENTER(cuDevicePrimaryCtxRelease_v2);
  return primary_ctx_release(dev);
}

CUresult cuCtxGetCurrent(CUcontext* pctx) {
  SIM_ENTER(cuCtxGetCurrent);
  if (pctx == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (!sim().initialized) return CUDA_ERROR_NOT_INITIALIZED;
  *pctx = tls_current;
  return CUDA_SUCCESS;
}

CUresult cuCtxSetCurrent(CUcontext ctx) {
  SIM_ENTER(cuCtxSetCurrent);
  Sim& s = sim();
  std::lock_guard<std::mutex> lock(s.mu);
  SIM_REQUIRE_INIT(s);
  if (ctx != nullptr && (ctx < &s.contexts[0] || ctx >= &s.contexts[kMaxDevices])) {
    return CUDA_ERROR_INVALID_CONTEXT;
  }
  tls_current = ctx;
  return CUDA_SUCCESS;
}

// ---- Events --------------------------------------------------------------------------------------

CUresult cuEventCreate(CUevent* phEvent, unsigned int Flags) {
  SIM_ENTER(cuEventCreate);
  Sim& s = sim();
  std::lock_guard<std::mutex> lock(s.mu);
  SIM_REQUIRE_INIT(s);
  if (phEvent == nullptr || (Flags & ~0x7u) != 0) return CUDA_ERROR_INVALID_VALUE;
  if (!context_ok_locked(s)) return CUDA_ERROR_INVALID_CONTEXT;
  CUevent ev = new CUevent_st{kEventMagic, tls_current, Flags, false, 0.0, s.next_event_serial++};
  s.events.insert(ev);
  *phEvent = ev;
  return CUDA_SUCCESS;
}

static CUresult event_destroy(CUevent ev) {
  Sim& s = sim();
  std::lock_guard<std::mutex> lock(s.mu);
  SIM_REQUIRE_INIT(s);
  if (!event_ok_locked(s, ev)) return CUDA_ERROR_INVALID_HANDLE;
  s.events.erase(ev);
  ev->magic = 0;
  delete ev;
  return CUDA_SUCCESS;
}

// The legacy ABI (before 4.0): exported so a wrongly bound table shows up in the counters.
CUresult cuEventDestroy(CUevent hEvent) {
  SIM_ENTER(cuEventDestroy);
  return event_destroy(hEvent);
}

CUresult cuEventDestroy_v2(CUevent hEvent) {
  SIM_ENTER(cuEventDestroy_v2);
  return event_destroy(hEvent);
}

CUresult cuEventRecord(CUevent hEvent, CUstream hStream) {
  SIM_ENTER(cuEventRecord);
  Sim& s = sim();
  std::lock_guard<std::mutex> lock(s.mu);
  SIM_REQUIRE_INIT(s);
  if (!context_ok_locked(s)) return CUDA_ERROR_INVALID_CONTEXT;
  if (!event_ok_locked(s, hEvent) || hEvent->ctx != tls_current) return CUDA_ERROR_INVALID_HANDLE;
  hEvent->recorded = true;
  hEvent->complete_at_ms = s.tail_locked(hStream);
  return CUDA_SUCCESS;
}

CUresult cuEventQuery(CUevent hEvent) {
  SIM_ENTER(cuEventQuery);
  Sim& s = sim();
  std::lock_guard<std::mutex> lock(s.mu);
  SIM_REQUIRE_INIT(s);
  if (!event_ok_locked(s, hEvent)) return CUDA_ERROR_INVALID_HANDLE;
  if (!hEvent->recorded) return CUDA_SUCCESS;  // as the driver: nothing to wait for
  return now_ms() >= hEvent->complete_at_ms ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

CUresult cuEventSynchronize(CUevent hEvent) {
  SIM_ENTER(cuEventSynchronize);
  Sim& s = sim();
  std::unique_lock<std::mutex> lock(s.mu);
  SIM_REQUIRE_INIT(s);
  if (!event_ok_locked(s, hEvent)) return CUDA_ERROR_INVALID_HANDLE;
  if (!hEvent->recorded) return CUDA_SUCCESS;
  const double until = hEvent->complete_at_ms;  // the record this call waits for
  const uint64_t serial = hEvent->serial;
  const uint64_t completions = s.completions;
  const auto deadline =
      std::chrono::steady_clock::time_point(std::chrono::ceil<std::chrono::steady_clock::duration>(
          std::chrono::duration<double, std::milli>(until)));
  // Sleeps without the lock; simcuda_complete() ends the wait early.
  while (now_ms() < until && s.completions == completions) s.work_done.wait_until(lock, deadline);
  // Destroyed while this thread waited on it: a use after free in a real driver.
  if (!event_ok_locked(s, hEvent) || hEvent->serial != serial) return CUDA_ERROR_INVALID_HANDLE;
  return CUDA_SUCCESS;
}

static CUresult event_elapsed(float* pMilliseconds, CUevent hStart, CUevent hEnd) {
  Sim& s = sim();
  std::lock_guard<std::mutex> lock(s.mu);
  SIM_REQUIRE_INIT(s);
  if (pMilliseconds == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (!event_ok_locked(s, hStart) || !event_ok_locked(s, hEnd)) return CUDA_ERROR_INVALID_HANDLE;
  if (!hStart->recorded || !hEnd->recorded) return CUDA_ERROR_INVALID_HANDLE;
  if (((hStart->flags | hEnd->flags) & CU_EVENT_DISABLE_TIMING) != 0) {
    return CUDA_ERROR_INVALID_HANDLE;
  }
  const double now = now_ms();
  if (now < hStart->complete_at_ms || now < hEnd->complete_at_ms) return CUDA_ERROR_NOT_READY;
  *pMilliseconds = static_cast<float>(hEnd->complete_at_ms - hStart->complete_at_ms);
  return CUDA_SUCCESS;
}

CUresult cuEventElapsedTime(float* pMilliseconds, CUevent hStart, CUevent hEnd) {
  SIM_ENTER(cuEventElapsedTime);
  return event_elapsed(pMilliseconds, hStart, hEnd);
}

// CUDA 12.8's ABI (same signature); exported as the real driver does.
CUresult cuEventElapsedTime_v2(float* pMilliseconds, CUevent hStart, CUevent hEnd) {
  SIM_ENTER(cuEventElapsedTime_v2);
  return event_elapsed(pMilliseconds, hStart, hEnd);
}

// ---- Modules and kernels (the probe) -------------------------------------------------------------

CUresult cuModuleLoadData(CUmodule* module, const void* image) {
  SIM_ENTER(cuModuleLoadData);
  Sim& s = sim();
  std::lock_guard<std::mutex> lock(s.mu);
  SIM_REQUIRE_INIT(s);
  if (module == nullptr || image == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (!context_ok_locked(s)) return CUDA_ERROR_INVALID_CONTEXT;
  // Any PTX text is accepted; its `.entry` names are what cuModuleGetFunction can find.
  CUmodule m = new CUmod_st{tls_current, static_cast<const char*>(image)};
  s.modules.insert(m);
  *module = m;
  return CUDA_SUCCESS;
}

CUresult cuModuleUnload(CUmodule hmod) {
  SIM_ENTER(cuModuleUnload);
  Sim& s = sim();
  std::lock_guard<std::mutex> lock(s.mu);
  SIM_REQUIRE_INIT(s);
  if (s.modules.erase(hmod) == 0) return CUDA_ERROR_INVALID_HANDLE;
  for (auto it = s.functions.begin(); it != s.functions.end();) {
    if ((*it)->module == hmod) {
      delete *it;
      it = s.functions.erase(it);
    } else {
      ++it;
    }
  }
  delete hmod;
  return CUDA_SUCCESS;
}

CUresult cuModuleGetFunction(CUfunction* hfunc, CUmodule hmod, const char* name) {
  SIM_ENTER(cuModuleGetFunction);
  Sim& s = sim();
  std::lock_guard<std::mutex> lock(s.mu);
  SIM_REQUIRE_INIT(s);
  if (hfunc == nullptr || name == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (s.modules.count(hmod) == 0) return CUDA_ERROR_INVALID_HANDLE;
  if (hmod->image.find(".entry " + std::string(name) + "(") == std::string::npos) {
    return CUDA_ERROR_NOT_FOUND;  // as the driver answers for a name the module lacks
  }
  CUfunction f = new CUfunc_st{hmod};
  s.functions.insert(f);
  *hfunc = f;
  return CUDA_SUCCESS;
}

CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                        unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                        unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                        void** kernelParams, void** extra) {
  SIM_ENTER(cuLaunchKernel);
  (void)sharedMemBytes;
  (void)kernelParams;
  (void)extra;
  Sim& s = sim();
  std::lock_guard<std::mutex> lock(s.mu);
  SIM_REQUIRE_INIT(s);
  if (!context_ok_locked(s)) return CUDA_ERROR_INVALID_CONTEXT;
  if (s.functions.count(f) == 0) return CUDA_ERROR_INVALID_HANDLE;
  if (gridDimX * gridDimY * gridDimZ == 0 || blockDimX * blockDimY * blockDimZ == 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  s.enqueue_locked(hStream, s.kernel_ms * s.slowdown);
  return CUDA_SUCCESS;
}

}  // extern "C"

// ---- cuGetProcAddress: base name + ABI version -> the versioned entry point ----------------------

namespace {

struct ProcEntry {
  const char* name;
  int since;  // the CUDA version whose cuda.h binds this ABI
  void* fn;
};

const ProcEntry kProcs[] = {
    {"cuGetProcAddress", 11030, reinterpret_cast<void*>(&cuGetProcAddress)},
    {"cuGetProcAddress", 12000, reinterpret_cast<void*>(&cuGetProcAddress_v2)},
    {"cuGetErrorName", 6000, reinterpret_cast<void*>(&cuGetErrorName)},
    {"cuGetErrorString", 6000, reinterpret_cast<void*>(&cuGetErrorString)},
    {"cuInit", 2000, reinterpret_cast<void*>(&cuInit)},
    {"cuDriverGetVersion", 2020, reinterpret_cast<void*>(&cuDriverGetVersion)},
    {"cuDeviceGet", 2000, reinterpret_cast<void*>(&cuDeviceGet)},
    {"cuDeviceGetCount", 2000, reinterpret_cast<void*>(&cuDeviceGetCount)},
    {"cuDeviceGetName", 2000, reinterpret_cast<void*>(&cuDeviceGetName)},
    {"cuDeviceGetPCIBusId", 4010, reinterpret_cast<void*>(&cuDeviceGetPCIBusId)},
    {"cuDeviceGetAttribute", 2000, reinterpret_cast<void*>(&cuDeviceGetAttribute)},
    {"cuDevicePrimaryCtxRetain", 7000, reinterpret_cast<void*>(&cuDevicePrimaryCtxRetain)},
    {"cuDevicePrimaryCtxRelease", 7000, reinterpret_cast<void*>(&cuDevicePrimaryCtxRelease)},
    {"cuDevicePrimaryCtxRelease", 11000, reinterpret_cast<void*>(&cuDevicePrimaryCtxRelease_v2)},
    {"cuCtxGetCurrent", 4000, reinterpret_cast<void*>(&cuCtxGetCurrent)},
    {"cuCtxSetCurrent", 4000, reinterpret_cast<void*>(&cuCtxSetCurrent)},
    {"cuEventCreate", 2000, reinterpret_cast<void*>(&cuEventCreate)},
    {"cuEventDestroy", 2000, reinterpret_cast<void*>(&cuEventDestroy)},
    {"cuEventDestroy", 4000, reinterpret_cast<void*>(&cuEventDestroy_v2)},
    {"cuEventRecord", 2000, reinterpret_cast<void*>(&cuEventRecord)},
    {"cuEventQuery", 2000, reinterpret_cast<void*>(&cuEventQuery)},
    {"cuEventSynchronize", 2000, reinterpret_cast<void*>(&cuEventSynchronize)},
    {"cuEventElapsedTime", 2000, reinterpret_cast<void*>(&cuEventElapsedTime)},
    {"cuEventElapsedTime", 12080, reinterpret_cast<void*>(&cuEventElapsedTime_v2)},
    {"cuModuleLoadData", 2000, reinterpret_cast<void*>(&cuModuleLoadData)},
    {"cuModuleUnload", 2000, reinterpret_cast<void*>(&cuModuleUnload)},
    {"cuModuleGetFunction", 2000, reinterpret_cast<void*>(&cuModuleGetFunction)},
    {"cuLaunchKernel", 4000, reinterpret_cast<void*>(&cuLaunchKernel)},
};

CUresult get_proc(const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags,
                  CUdriverProcAddressQueryResult* status) {
  if (status != nullptr) *status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  if (symbol == nullptr || pfn == nullptr || flags > 2) return CUDA_ERROR_INVALID_VALUE;
  *pfn = nullptr;
  if (!sim().proc_address) return CUDA_ERROR_NOT_FOUND;  // SIMCUDA_PROC_ADDRESS=0
  const ProcEntry* best = nullptr;
  bool known = false;
  for (const ProcEntry& e : kProcs) {
    if (std::strcmp(e.name, symbol) != 0) continue;
    known = true;
    if (e.since <= cudaVersion && (best == nullptr || e.since > best->since)) best = &e;
  }
  if (best == nullptr) {
    if (status != nullptr && known) *status = CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
    return CUDA_ERROR_NOT_FOUND;
  }
  *pfn = best->fn;
  if (status != nullptr) *status = CU_GET_PROC_ADDRESS_SUCCESS;
  return CUDA_SUCCESS;
}

}  // namespace

extern "C" {

CUresult cuGetProcAddress(const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags) {
  SIM_ENTER(cuGetProcAddress);
  return get_proc(symbol, pfn, cudaVersion, flags, nullptr);
}

CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags,
                             CUdriverProcAddressQueryResult* symbolStatus) {
  SIM_ENTER(cuGetProcAddress_v2);
  return get_proc(symbol, pfn, cudaVersion, flags, symbolStatus);
}

// ---- Test controls (tests/sim/simcuda.py wraps them) ---------------------------------------------

// Enqueues `ms` of work (x SIMCUDA_SLOWDOWN) on `stream`. 0, or CUDA_ERROR_INVALID_VALUE.
int simcuda_enqueue(CUstream stream, double ms) {
  if (!(ms >= 0)) return CUDA_ERROR_INVALID_VALUE;
  Sim& s = sim();
  std::lock_guard<std::mutex> lock(s.mu);
  s.enqueue_locked(stream, ms * s.slowdown);
  return CUDA_SUCCESS;
}

// All work queued so far ends now: recorded events complete, cuEventSynchronize returns. Lets a
// test hold the engine in a wait (on long work) for exactly as long as it needs, however loaded.
void simcuda_complete(void) {
  Sim& s = sim();
  std::lock_guard<std::mutex> lock(s.mu);
  const double now = now_ms();
  for (CUevent ev : s.events) ev->complete_at_ms = std::min(ev->complete_at_ms, now);
  for (auto& entry : s.stream_tail_ms) entry.second = std::min(entry.second, now);
  ++s.completions;
  s.work_done.notify_all();
}

// Events created and not destroyed.
int simcuda_live_events(void) {
  Sim& s = sim();
  std::lock_guard<std::mutex> lock(s.mu);
  return static_cast<int>(s.events.size());
}

// References held on device `dev`'s primary context.
int simcuda_primary_ctx_refs(int dev) {
  Sim& s = sim();
  std::lock_guard<std::mutex> lock(s.mu);
  return dev >= 0 && dev < kMaxDevices ? s.ctx_refs[dev] : -1;
}

// The next `count` calls of entry point `fn` return `code` (count < 0: until simcuda_reset).
// Returns 0, or -1 if `fn` is not an entry point of this library.
int simcuda_fail(const char* fn, int code, int count) {
  const int i = fn_index(fn);
  if (i < 0) return -1;
  Sim& s = sim();
  std::lock_guard<std::mutex> lock(s.mu);
  s.failures[i] = Failure{code, count};
  s.any_failure.store(true, std::memory_order_release);
  return 0;
}

// Calls of entry point `fn` since load or simcuda_reset(); -1 if `fn` is unknown.
long simcuda_calls(const char* fn) {
  const int i = fn_index(fn);
  return i < 0 ? -1 : sim().calls[i].load(std::memory_order_relaxed);
}

// Seconds-free knob readback: the slowdown factor in effect.
double simcuda_slowdown(void) { return sim().slowdown; }

// Clears injected failures, call counters and stream timelines (not events or contexts).
void simcuda_reset(void) {
  Sim& s = sim();
  std::lock_guard<std::mutex> lock(s.mu);
  for (Failure& f : s.failures) f = Failure{};
  s.any_failure.store(false, std::memory_order_release);
  for (auto& c : s.calls) c.store(0, std::memory_order_relaxed);
  s.stream_tail_ms.clear();
}

}  // extern "C"
