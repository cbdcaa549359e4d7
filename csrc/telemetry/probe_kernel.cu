// The GPU health probe: fixed work that depends on the GPU alone, never on the training job.
//
// Shipped as PTX (csrc/telemetry/probe_kernel.ptx, embedded in the extension) and loaded at run time with
// cuModuleLoadData, so the build needs no CUDA toolkit. CMakeLists.txt recompiles this file with
// nvcc when one is installed (`nvcc -ptx -arch=compute_75`, then the PTX ISA version lowered to
// 6.3 so drivers back to CUDA 10 can JIT it); tests/telemetry/test_probe.py checks that the committed PTX
// and a fresh compile agree. The kernels use only instructions PTX 6.3 has; keep it that way.
//
// - straggler_probe_compute: eight independent FMA chains per thread, `iterations` long (FP32
//   throughput of the SMs, no memory traffic): 16 * iterations FLOP per thread.
// - straggler_probe_memory: copies half of a 256 MiB module-scope buffer into the other half and
//   back, `passes` times (HBM bandwidth: far larger than any L2): 256 MiB moved per pass.
//
// The buffer is a __device__ array, allocated by the driver when the module loads and freed when
// it unloads: the probe needs no cuMemAlloc and leaves nothing behind.

constexpr unsigned int kBufferFloat4s = 1u << 24;  // 16 Mi float4 = 256 MiB

__device__ float straggler_probe_sink;
__device__ float4 straggler_probe_buffer[kBufferFloat4s];

extern "C" __global__ void straggler_probe_compute(unsigned int iterations) {
  const float seed = 1e-3f * static_cast<float>(threadIdx.x + blockIdx.x);
  float x0 = seed, x1 = seed + 1.f, x2 = seed + 2.f, x3 = seed + 3.f;
  float x4 = seed + 4.f, x5 = seed + 5.f, x6 = seed + 6.f, x7 = seed + 7.f;
  const float a = 0.999999f, b = 1e-7f;  // converges to 0.1: no overflow, no denormals
  for (unsigned int i = 0; i < iterations; ++i) {
    x0 = fmaf(x0, a, b);
    x1 = fmaf(x1, a, b);
    x2 = fmaf(x2, a, b);
    x3 = fmaf(x3, a, b);
    x4 = fmaf(x4, a, b);
    x5 = fmaf(x5, a, b);
    x6 = fmaf(x6, a, b);
    x7 = fmaf(x7, a, b);
  }
  const float s = ((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7));
  if (s == -1.0f) straggler_probe_sink = s;  // never true; keeps the chains from being removed
}

extern "C" __global__ void straggler_probe_memory(unsigned int passes) {
  const unsigned int half = kBufferFloat4s / 2;
  const unsigned int stride = blockDim.x * gridDim.x;
  float4* src = straggler_probe_buffer;
  float4* dst = straggler_probe_buffer + half;
  for (unsigned int p = 0; p < passes; ++p) {
    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < half; i += stride) {
      float4 v = src[i];
      v.x = v.x * 0.5f + 1.f;
      v.y = v.y * 0.5f + 1.f;
      v.z = v.z * 0.5f + 1.f;
      v.w = v.w * 0.5f + 1.f;
      dst[i] = v;
    }
    float4* t = src;
    src = dst;
    dst = t;
  }
}
