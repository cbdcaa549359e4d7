// Loads libnvidia-ml.so.1 with dlopen, resolves the entry-point table and initialises NVML once
// (see nvml.h).
#include "driver/nvml.h"

#include <exception>

#include "driver/dynamic_library.h"

namespace straggler {
namespace {

constexpr const char* kDefaultLibrary = "libnvidia-ml.so.1";

}  // namespace

const Nvml& Nvml::instance() {
  // Magic static: thread-safe initialisation; never destroyed, so a sampler thread that outlives
  // static destruction at exit still finds a valid table.
  static const Nvml* nvml = new Nvml();
  return *nvml;
}

Nvml::Nvml() {
  try {
    load();
  } catch (const std::exception& e) {  // allocation failure: report, do not throw
    available_ = false;
    error_ = e.what();
  }
}

void Nvml::load() {
  // Never closed: the sampler thread may still be inside NVML while the process exits.
  const DynamicLibrary lib("STRAGGLER_LIBNVML", kDefaultLibrary);
  path_ = lib.path();
  if (!lib.loaded()) {
    error_ = "cannot load NVML '" + path_ + "': " + lib.error() +
             " (no NVIDIA driver installed? set STRAGGLER_LIBNVML to its path)";
    return;
  }

  std::string missing;
#define STRAGGLER_NVML_RESOLVE(name, required)                             \
  name = lib.symbol_as<decltype(&::name)>(#name);                          \
  if (name == nullptr && (required) && missing.empty()) {                  \
    missing = std::string("NVML '") + path_ + "' lacks " + #name + ": " +  \
              DynamicLibrary::last_error() + " (driver older than R450?)"; \
  }
  STRAGGLER_NVML_ENTRY_POINTS(STRAGGLER_NVML_RESOLVE)
#undef STRAGGLER_NVML_RESOLVE
  if (!missing.empty()) {
    error_ = missing;
    return;
  }

  // Reference counted by NVML; we take one reference for the life of the process.
  const nvmlReturn_t rc = nvmlInit_v2();
  if (rc != NVML_SUCCESS) {
    error_ = "nvmlInit_v2() failed: " + describe(rc) +
             (rc == NVML_ERROR_DRIVER_NOT_LOADED ? " (is the NVIDIA kernel driver loaded?)" : "");
    return;
  }
  available_ = true;
}

std::string Nvml::describe(nvmlReturn_t code) const {
  std::string out = nvml_return_name(code);
  const char* text = nvmlErrorString != nullptr ? nvmlErrorString(code) : nullptr;
  if (text != nullptr && text[0] != '\0') out += std::string(" (") + text + ")";
  return out;
}

const char* nvml_return_name(nvmlReturn_t code) noexcept {
  switch (code) {
#define STRAGGLER_NVML_CASE(x) \
  case x:                      \
    return #x;
    STRAGGLER_NVML_CASE(NVML_SUCCESS)
    STRAGGLER_NVML_CASE(NVML_ERROR_UNINITIALIZED)
    STRAGGLER_NVML_CASE(NVML_ERROR_INVALID_ARGUMENT)
    STRAGGLER_NVML_CASE(NVML_ERROR_NOT_SUPPORTED)
    STRAGGLER_NVML_CASE(NVML_ERROR_NO_PERMISSION)
    STRAGGLER_NVML_CASE(NVML_ERROR_ALREADY_INITIALIZED)
    STRAGGLER_NVML_CASE(NVML_ERROR_NOT_FOUND)
    STRAGGLER_NVML_CASE(NVML_ERROR_INSUFFICIENT_SIZE)
    STRAGGLER_NVML_CASE(NVML_ERROR_INSUFFICIENT_POWER)
    STRAGGLER_NVML_CASE(NVML_ERROR_DRIVER_NOT_LOADED)
    STRAGGLER_NVML_CASE(NVML_ERROR_TIMEOUT)
    STRAGGLER_NVML_CASE(NVML_ERROR_IRQ_ISSUE)
    STRAGGLER_NVML_CASE(NVML_ERROR_LIBRARY_NOT_FOUND)
    STRAGGLER_NVML_CASE(NVML_ERROR_FUNCTION_NOT_FOUND)
    STRAGGLER_NVML_CASE(NVML_ERROR_CORRUPTED_INFOROM)
    STRAGGLER_NVML_CASE(NVML_ERROR_GPU_IS_LOST)
    STRAGGLER_NVML_CASE(NVML_ERROR_RESET_REQUIRED)
    STRAGGLER_NVML_CASE(NVML_ERROR_OPERATING_SYSTEM)
    STRAGGLER_NVML_CASE(NVML_ERROR_LIB_RM_VERSION_MISMATCH)
    STRAGGLER_NVML_CASE(NVML_ERROR_IN_USE)
    STRAGGLER_NVML_CASE(NVML_ERROR_MEMORY)
    STRAGGLER_NVML_CASE(NVML_ERROR_NO_DATA)
    STRAGGLER_NVML_CASE(NVML_ERROR_VGPU_ECC_NOT_SUPPORTED)
    STRAGGLER_NVML_CASE(NVML_ERROR_INSUFFICIENT_RESOURCES)
    STRAGGLER_NVML_CASE(NVML_ERROR_FREQ_NOT_SUPPORTED)
    STRAGGLER_NVML_CASE(NVML_ERROR_ARGUMENT_VERSION_MISMATCH)
    STRAGGLER_NVML_CASE(NVML_ERROR_DEPRECATED)
    STRAGGLER_NVML_CASE(NVML_ERROR_NOT_READY)
    STRAGGLER_NVML_CASE(NVML_ERROR_GPU_NOT_FOUND)
    STRAGGLER_NVML_CASE(NVML_ERROR_INVALID_STATE)
    STRAGGLER_NVML_CASE(NVML_ERROR_UNKNOWN)
#undef STRAGGLER_NVML_CASE
  }
  return "nvmlReturn_t (unknown code)";
}

bool nvml_is_unsupported(nvmlReturn_t code) noexcept {
  // NO_PERMISSION: some values need root on some boards; FUNCTION_NOT_FOUND: an older driver.
  // None of these changes while the job runs, so the sampler stops asking for that field.
  // DEPRECATED: a call removed from this driver (CUDA 14 removes some of ours).
  return code == NVML_ERROR_NOT_SUPPORTED || code == NVML_ERROR_NO_PERMISSION ||
         code == NVML_ERROR_FUNCTION_NOT_FOUND || code == NVML_ERROR_VGPU_ECC_NOT_SUPPORTED ||
         code == NVML_ERROR_DEPRECATED;
}

}  // namespace straggler
