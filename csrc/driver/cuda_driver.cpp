// Loads libcuda.so.1 with dlopen and resolves the entry-point table (see cuda_driver.h).
#include "driver/cuda_driver.h"

#include <algorithm>
#include <cstdio>
#include <string_view>

#include "driver/dynamic_library.h"

namespace straggler {
namespace {

constexpr const char* kDefaultLibrary = "libcuda.so.1";

}  // namespace

const CudaDriver& CudaDriver::instance() {
  // Magic static: thread-safe initialisation, never destroyed before exit handlers run.
  static const CudaDriver* driver = new CudaDriver();
  return *driver;
}

CudaDriver::CudaDriver() {
  try {
    load();
  } catch (const std::exception& e) {  // allocation failure: report, do not throw
    loaded_ = false;
    load_error_ = e.what();
  }
}

void CudaDriver::load() {
  // Never closed: the driver may run our callbacks or exit handlers until the very end.
  const DynamicLibrary lib("STRAGGLER_LIBCUDA", kDefaultLibrary);
  path_ = lib.path();
  if (!lib.loaded()) {
    load_error_ = "cannot load the CUDA driver '" + path_ + "': " + lib.error() +
                  " (no NVIDIA driver installed? set STRAGGLER_LIBCUDA to its path)";
    return;
  }

  // cuDriverGetVersion has one ABI; we need the version to cap what we ask cuGetProcAddress for
  // (an older driver does not know newer ABI versions).
  int version = kCudaAbiVersion;
  if (auto* get_version = lib.symbol_as<decltype(&::cuDriverGetVersion)>("cuDriverGetVersion")) {
    int v = 0;
    if (get_version(&v) == CUDA_SUCCESS && v > 0) version = std::min(v, kCudaAbiVersion);
  }

  auto* get_proc_v2 = lib.symbol_as<decltype(&::cuGetProcAddress_v2)>("cuGetProcAddress_v2");
  auto* get_proc_v1 = lib.symbol_as<decltype(&::cuGetProcAddress)>("cuGetProcAddress");
  const char* getter = get_proc_v2 != nullptr   ? "cuGetProcAddress_v2"
                       : get_proc_v1 != nullptr ? "cuGetProcAddress"
                                                : nullptr;
  int by_getter = 0, by_dlsym = 0;

  // The base name and a version give the ABI that version's cuda.h binds; the legacy-stream flag
  // makes stream 0 the legacy default stream, as in PyTorch (per-thread variants are *_ptsz).
  auto resolve = [&](const char* base, const char* symbol) -> void* {
    void* fn = nullptr;
    if (get_proc_v2 != nullptr) {
      CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
      if (get_proc_v2(base, &fn, version, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &status) !=
              CUDA_SUCCESS ||
          status != CU_GET_PROC_ADDRESS_SUCCESS) {
        fn = nullptr;
      }
    } else if (get_proc_v1 != nullptr) {
      if (get_proc_v1(base, &fn, version, CU_GET_PROC_ADDRESS_LEGACY_STREAM) != CUDA_SUCCESS) {
        fn = nullptr;
      }
    }
    if (fn != nullptr) {
      ++by_getter;
    } else if ((fn = lib.symbol(symbol)) != nullptr) {  // the pinned, versioned export
      ++by_dlsym;
    }
    return fn;
  };

  std::string missing;
#define STRAGGLER_CUDA_RESOLVE(name, symbol, required)                                      \
  name = reinterpret_cast<decltype(&::name)>(resolve(#name, symbol));                       \
  if (name == nullptr && (required) && missing.empty()) {                                   \
    missing = std::string("the CUDA driver '") + path_ + "' lacks " + #name + " (symbol " + \
              symbol + "): " + DynamicLibrary::last_error();                                \
  }
  STRAGGLER_CUDA_DRIVER_ENTRY_POINTS(STRAGGLER_CUDA_RESOLVE)
#undef STRAGGLER_CUDA_RESOLVE

  if (!missing.empty()) {
    load_error_ = missing;
    return;
  }
  if (by_dlsym == 0) {
    resolver_ = getter;
  } else if (by_getter == 0) {
    resolver_ = "dlsym";
  } else {
    resolver_ = std::string(getter) + ", dlsym for " + std::to_string(by_dlsym);
  }
  loaded_ = true;
}

std::string CudaDriver::describe(CUresult code) const {
  const char* name = nullptr;
  const char* text = nullptr;
  if (cuGetErrorName == nullptr || cuGetErrorName(code, &name) != CUDA_SUCCESS) name = nullptr;
  if (cuGetErrorString == nullptr || cuGetErrorString(code, &text) != CUDA_SUCCESS) text = nullptr;
  std::string out = name != nullptr ? name : "CUresult " + std::to_string(static_cast<int>(code));
  if (text != nullptr) out += std::string(" (") + text + ")";
  return out;
}

std::string cuda_error_message(const char* call, CUresult code) {
  std::string_view text(call);
  // The check macros stringify the expression: "drv_.cuEventCreate(...)" reads "cuEventCreate(...)".
  const std::size_t dot = text.find(".cu");
  if (dot != std::string_view::npos && dot < text.find('(')) text.remove_prefix(dot + 1);
  std::string msg = std::string(text) + " failed: " + CudaDriver::instance().describe(code);
  if (code == CUDA_ERROR_NOT_READY) msg += "; the work is still running: call flush() first";
  return msg;
}

void log_warning(const std::string& message) noexcept {
  std::fprintf(stderr, "[straggler] %s\n", message.c_str());
  std::fflush(stderr);
}

void log_cuda_error(const char* call, CUresult code) noexcept {
  try {
    log_warning(cuda_error_message(call, code));
  } catch (...) {
    std::fprintf(stderr, "[straggler] %s failed: CUresult %d\n", call, static_cast<int>(code));
    std::fflush(stderr);
  }
}

CudaStatus cuda_status(int device) noexcept {
  CudaStatus status;
  try {
    const CudaDriver& drv = CudaDriver::instance();
    if (!drv.loaded()) {
      status.reason = drv.load_error();
      return status;
    }
    CUresult rc = drv.cuInit(0);
    if (rc != CUDA_SUCCESS) {
      status.reason = cuda_error_message("cuInit(0)", rc);
      return status;
    }
    int count = 0;
    rc = drv.cuDeviceGetCount(&count);
    if (rc != CUDA_SUCCESS) {
      status.reason = cuda_error_message("cuDeviceGetCount(&count)", rc);
      return status;
    }
    if (count <= 0) {
      status.reason = "no CUDA device visible (cuDeviceGetCount returned 0)";
      return status;
    }
    if (device < 0 || device >= count) {
      status.reason = "`device=" + std::to_string(device) +
                      "` is not a CUDA device: " + std::to_string(count) + " visible";
      return status;
    }
    int version = 0;
    if (drv.cuDriverGetVersion(&version) != CUDA_SUCCESS) version = 0;  // shown as "0.0"
    char name[256] = {0};
    CUdevice dev = 0;
    if (drv.cuDeviceGet(&dev, device) != CUDA_SUCCESS ||
        drv.cuDeviceGetName(name, sizeof(name) - 1, dev) != CUDA_SUCCESS) {
      name[0] = '\0';
    }
    status.available = true;
    status.reason = "CUDA driver " + std::to_string(version / 1000) + "." +
                    std::to_string((version % 1000) / 10) + " (" + drv.library_path() + ", via " +
                    drv.resolver() + "), " + std::to_string(count) + " device(s); device " +
                    std::to_string(device) + ": " + (name[0] != '\0' ? name : "unnamed");
  } catch (const std::exception& e) {
    status.available = false;
    status.reason = e.what();
  }
  return status;
}

}  // namespace straggler
