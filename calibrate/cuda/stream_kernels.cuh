// STREAM-style memory-bound kernels (McCalpin's copy/scale/triad, as in
// BabelStream): one 16-byte float4 per thread, coalesced, no reuse, so the
// time is set by HBM bandwidth once the arrays are much larger than L2.
#pragma once

#include <cuda_runtime.h>

namespace bench {

__global__ void CopyKernel(float4* __restrict__ a, const float4* __restrict__ b, size_t n4) {
  const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n4) a[i] = b[i];
}

__global__ void ScaleKernel(float4* __restrict__ a, const float4* __restrict__ b, float s, size_t n4) {
  const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n4) {
    const float4 x = b[i];
    a[i] = make_float4(s * x.x, s * x.y, s * x.z, s * x.w);
  }
}

__global__ void TriadKernel(float4* __restrict__ a, const float4* __restrict__ b,
                            const float4* __restrict__ c, float s, size_t n4) {
  const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n4) {
    const float4 x = b[i], y = c[i];
    a[i] = make_float4(x.x + s * y.x, x.y + s * y.y, x.z + s * y.z, x.w + s * y.w);
  }
}

constexpr int kStreamBlock = 256;

inline unsigned StreamGrid(size_t n4) {
  return static_cast<unsigned>((n4 + kStreamBlock - 1) / kStreamBlock);
}

}  // namespace bench
