// A vendor library (libcuda.so.1, libnvidia-ml.so.1) opened with dlopen, once, and never closed:
// the CUDA driver and NVML tables both load this way (cuda_driver.cpp, nvml.cpp).
//
// Deliberately not RAII: the handle is never dlclose()d, because the sampler thread, the driver's
// callbacks and exit handlers may still run code in the library until the process ends.
#pragma once

#include <dlfcn.h>

#include <cstdlib>
#include <string>

namespace straggler {

class DynamicLibrary {
 public:
  // Opens $`env_var` when set and non-empty, else `default_path`. Never throws for a missing
  // library: check loaded(), and error() says why.
  DynamicLibrary(const char* env_var, const char* default_path) {
    const char* env = std::getenv(env_var);
    path_ = (env != nullptr && env[0] != '\0') ? env : default_path;
    dlerror();  // clear a stale error, so error() describes this dlopen
    handle_ = dlopen(path_.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle_ == nullptr) error_ = last_error();
  }

  [[nodiscard]] bool loaded() const noexcept { return handle_ != nullptr; }
  // The path given to dlopen (from the environment variable or the default).
  [[nodiscard]] const std::string& path() const noexcept { return path_; }
  // dlerror() of the failed dlopen ("" when loaded).
  [[nodiscard]] const std::string& error() const noexcept { return error_; }

  // The exported symbol `name`, or nullptr; after a nullptr, last_error() says why.
  [[nodiscard]] void* symbol(const char* name) const noexcept {
    if (handle_ == nullptr) return nullptr;
    dlerror();
    return dlsym(handle_, name);
  }
  // The same, typed: lib.symbol_as<decltype(&::cuInit)>("cuInit").
  template <class Fn>
  [[nodiscard]] Fn symbol_as(const char* name) const noexcept {
    return reinterpret_cast<Fn>(symbol(name));
  }

  // dlerror(), or "unknown dlerror" when there is none pending.
  [[nodiscard]] static std::string last_error() {
    const char* err = dlerror();
    return err != nullptr ? err : "unknown dlerror";
  }

 private:
  std::string path_;
  std::string error_;
  void* handle_ = nullptr;  // never dlclose()d
};

}  // namespace straggler
