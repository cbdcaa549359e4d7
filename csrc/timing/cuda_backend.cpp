// CudaBackend: events from a pool, recorded and queried through the driver table.
#include "timing/cuda_backend.h"

namespace straggler {

CudaBackend::CudaBackend(int device) : drv_(CudaDriver::instance()) {
  const CudaStatus status = cuda_status(device);
  if (!status.available) {
    throw CudaError("CUDA backend unavailable: " + status.reason, CUDA_ERROR_NO_DEVICE);
  }
  STRAGGLER_CU_CHECK(drv_.cuDeviceGet(&device_, device));
  STRAGGLER_CU_CHECK(drv_.cuDevicePrimaryCtxRetain(&ctx_, device_));
  free_.reserve(64);
}

// The driver keeps the current context per thread; cuCtxGetCurrent reads it (a thread-local
// read), so a thread whose context someone else switched is put back on ours.
void CudaBackend::bind_thread() {
  CUcontext current = nullptr;
  STRAGGLER_CU_CHECK(drv_.cuCtxGetCurrent(&current));
  if (current != ctx_) STRAGGLER_CU_CHECK(drv_.cuCtxSetCurrent(ctx_));
}

Mark CudaBackend::record(std::uintptr_t stream) {
  bind_thread();
  Mark m;
  if (free_.empty()) {
    // Timing enabled; blocking sync, so flush() sleeps instead of spinning a CPU core while a
    // report waits for the GPU (recording costs the same).
    STRAGGLER_CU_CHECK(drv_.cuEventCreate(&m.event, CU_EVENT_BLOCKING_SYNC));
  } else {
    m.event = free_.back();
    free_.pop_back();
  }
  const CUresult rc = drv_.cuEventRecord(m.event, reinterpret_cast<CUstream>(stream));
  if (rc != CUDA_SUCCESS) {
    release(m);
    throw CudaError(cuda_error_message("cuEventRecord(event, stream)", rc), rc);
  }
  return m;
}

bool CudaBackend::elapsed(const Mark& start, const Mark& stop, double* ms) {
  CUresult rc = drv_.cuEventQuery(stop.event);
  if (rc == CUDA_ERROR_NOT_READY) return false;
  if (rc != CUDA_SUCCESS) throw CudaError(cuda_error_message("cuEventQuery(stop)", rc), rc);
  float out = 0.0f;
  rc = drv_.cuEventElapsedTime(&out, start.event, stop.event);
  if (rc == CUDA_ERROR_NOT_READY) return false;  // start on another, slower stream
  if (rc != CUDA_SUCCESS) {
    throw CudaError(cuda_error_message("cuEventElapsedTime(&ms, start, stop)", rc), rc);
  }
  *ms = static_cast<double>(out);
  return true;
}

bool CudaBackend::done(const Mark& mark) {
  const CUresult rc = drv_.cuEventQuery(mark.event);
  if (rc == CUDA_SUCCESS) return true;
  if (rc == CUDA_ERROR_NOT_READY) return false;
  throw CudaError(cuda_error_message("cuEventQuery(mark)", rc), rc);
}

void CudaBackend::wait(const Mark& mark) {
  bind_thread();
  STRAGGLER_CU_CHECK(drv_.cuEventSynchronize(mark.event));
}

void CudaBackend::release(const Mark& mark) noexcept {
  try {
    free_.push_back(mark.event);
  } catch (...) {  // out of memory: do not pool it
    discard(mark);
  }
}

void CudaBackend::discard(const Mark& mark) noexcept {
  STRAGGLER_CU_LOG(drv_.cuEventDestroy(mark.event));
}

void CudaBackend::close() noexcept {
  if (ctx_ == nullptr) return;
  CUcontext current = nullptr;
  if (drv_.cuCtxGetCurrent(&current) == CUDA_SUCCESS && current != ctx_) {
    STRAGGLER_CU_LOG(drv_.cuCtxSetCurrent(ctx_));
  }
  for (CUevent ev : free_) STRAGGLER_CU_LOG(drv_.cuEventDestroy(ev));
  free_.clear();
  // Leave no dangling context current in this thread once our reference is gone.
  if (current != ctx_) {
    STRAGGLER_CU_LOG(drv_.cuCtxSetCurrent(current));
  }
  STRAGGLER_CU_LOG(drv_.cuDevicePrimaryCtxRelease(device_));
  ctx_ = nullptr;
}

}  // namespace straggler
