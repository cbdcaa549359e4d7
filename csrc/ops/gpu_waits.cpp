// Collective waits on a GPU from two CUDA events per collective: see gpu_waits.h.
#include "ops/gpu_waits.h"

#include <algorithm>

namespace straggler_ops {

bool GpuWaits::ready_locked(int device) noexcept {
  if (failed_ || device < 0 || device >= kMaxDevices) return false;
  const straggler::CudaDriver& d = straggler::CudaDriver::instance();
  if (!tried_) {
    tried_ = true;
    if (!d.loaded()) {
      fail_locked(d.load_error());
      return false;
    }
    const CUresult rc = d.cuInit(0);
    if (rc != CUDA_SUCCESS) {
      fail_locked(straggler::cuda_error_message("cuInit(0)", rc));
      return false;
    }
  }
  if (contexts_[device] != nullptr) return true;
  CUdevice dev = 0;
  CUresult rc = d.cuDeviceGet(&dev, device);
  if (rc == CUDA_SUCCESS) {
    // The context torch runs on (the runtime uses primary contexts); kept for the process.
    rc = d.cuDevicePrimaryCtxRetain(&contexts_[device], dev);
  }
  if (rc != CUDA_SUCCESS) {
    contexts_[device] = nullptr;
    fail_locked(straggler::cuda_error_message("cuDevicePrimaryCtxRetain(&ctx, device)", rc));
    return false;
  }
  return true;
}

bool GpuWaits::record_locked(int device, CUevent* ev, CUstream stream) noexcept {
  const straggler::CudaDriver& d = straggler::CudaDriver::instance();
  CUcontext current = nullptr;
  CUresult rc = d.cuCtxGetCurrent(&current);
  if (rc != CUDA_SUCCESS) {
    fail_locked(straggler::cuda_error_message("cuCtxGetCurrent(&ctx)", rc));
    return false;
  }
  const CUcontext want = contexts_[device];
  // A thread with no (or another device's) context, e.g. a backend's worker running the
  // completion callback: ours for the call, the caller's back after it.
  if (current != want && (rc = d.cuCtxSetCurrent(want)) != CUDA_SUCCESS) {
    fail_locked(straggler::cuda_error_message("cuCtxSetCurrent(ctx)", rc));
    return false;
  }
  bool ok = true;
  if (*ev == nullptr) {
    std::vector<CUevent>& pool = free_[device];
    if (!pool.empty()) {
      *ev = pool.back();
      pool.pop_back();
    } else if (live_ < kMaxEvents) {
      rc = d.cuEventCreate(ev, CU_EVENT_DEFAULT);
      if (rc == CUDA_SUCCESS) {
        ++live_;
      } else {
        *ev = nullptr;
        fail_locked(straggler::cuda_error_message("cuEventCreate(&ev, CU_EVENT_DEFAULT)", rc));
      }
    }
    ok = *ev != nullptr;  // a full pool: not measured, not a failure
  }
  if (ok && (rc = d.cuEventRecord(*ev, stream)) != CUDA_SUCCESS) {
    fail_locked(straggler::cuda_error_message("cuEventRecord(ev, stream)", rc));
    free_[device].push_back(*ev);
    *ev = nullptr;
    ok = false;
  }
  if (current != want) {
    rc = d.cuCtxSetCurrent(current);
    if (rc != CUDA_SUCCESS) fail_locked(straggler::cuda_error_message("cuCtxSetCurrent", rc));
  }
  return ok;
}

EventPair GpuWaits::start(int device, CUstream stream) noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  EventPair pair;
  if (!ready_locked(device)) return pair;
  CUevent ev = nullptr;
  if (!record_locked(device, &ev, stream)) return pair;
  ++recorded_;
  pair.start = ev;
  pair.device = device;
  return pair;
}

bool GpuWaits::end(EventPair& pair, CUstream stream) noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  if (pair.start == nullptr) return false;
  if (failed_ || !record_locked(pair.device, &pair.end, stream)) {
    free_[pair.device].push_back(pair.start);
    if (pair.end != nullptr) free_[pair.device].push_back(pair.end);
    pair = EventPair{};
    return false;
  }
  return true;
}

int GpuWaits::read(const EventPair& pair, CUevent prev_end, float* ms, float* since_ms) noexcept {
  const straggler::CudaDriver& d = straggler::CudaDriver::instance();
  std::lock_guard<std::mutex> lock(mu_);
  if (failed_) return -1;
  CUresult rc = d.cuEventQuery(pair.end);
  if (rc == CUDA_ERROR_NOT_READY) return 0;
  if (rc == CUDA_SUCCESS) rc = d.cuEventElapsedTime(ms, pair.start, pair.end);
  *since_ms = *ms;
  if (rc == CUDA_SUCCESS && prev_end != nullptr) {
    rc = d.cuEventElapsedTime(since_ms, prev_end, pair.end);
  }
  if (rc != CUDA_SUCCESS) {
    fail_locked(straggler::cuda_error_message("cuEventElapsedTime(&ms, start, end)", rc));
    return -1;
  }
  return 1;
}

void GpuWaits::release(int device, CUevent a, CUevent b) noexcept {
  if (device < 0 || device >= kMaxDevices) return;
  std::lock_guard<std::mutex> lock(mu_);
  try {
    if (a != nullptr) free_[device].push_back(a);
    if (b != nullptr) free_[device].push_back(b);
  } catch (...) {  // out of memory: the events stay alive, unused
  }
}

void GpuWaits::fail_locked(const std::string& what) noexcept {
  try {
    if (error_.empty()) error_ = what;
  } catch (...) {
  }
  failed_ = true;
}

bool GpuWaits::failed() const noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  return failed_;
}

std::string GpuWaits::error() const {
  std::lock_guard<std::mutex> lock(mu_);
  return error_;
}

long long GpuWaits::recorded() const noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  return recorded_;
}

}  // namespace straggler_ops
