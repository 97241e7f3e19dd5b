// Shared helpers of the standalone CUDA calibration programs: error checks
// (exit code 3 = environment error, as the parasim CLI), a tiny JSON writer,
// a deterministic non-zero fill, medians and the device description.
// Depends only on the CUDA runtime, the C++ standard library and the
// header-only core/statistics.h.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <sstream>
#include <string>
#include <vector>

#include "core/statistics.h"

// Environment failures (no GPU, CUDA error) end the program with exit code 3,
// the same code `parasim calibrate` uses for environment errors.
#define BENCH_CUDA_CHECK(expr)                                                          \
  do {                                                                                  \
    cudaError_t bench_err_ = (expr);                                                    \
    if (bench_err_ != cudaSuccess) {                                                    \
      std::fprintf(stderr, "error: %s:%d: %s: %s\n", __FILE__, __LINE__, #expr,         \
                   cudaGetErrorString(bench_err_));                                     \
      std::exit(3);                                                                     \
    }                                                                                   \
  } while (0)

#define BENCH_LAUNCH_CHECK() BENCH_CUDA_CHECK(cudaGetLastError())

namespace bench {

using parasim::Median;

inline double MinOf(const std::vector<double>& v) {
  return v.empty() ? 0.0 : *std::min_element(v.begin(), v.end());
}

inline std::string UtcNow() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

inline std::string JsonEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

// Finite numbers only: JSON has no NaN/inf.
inline std::string Num(double x) {
  if (!std::isfinite(x)) return "null";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return buf;
}

inline std::string Str(const std::string& s) { return "\"" + JsonEscape(s) + "\""; }

// The description every program puts under "device".
inline std::string DeviceJson(int dev) {
  cudaDeviceProp p{};
  BENCH_CUDA_CHECK(cudaGetDeviceProperties(&p, dev));
  int driver = 0, runtime = 0;
  BENCH_CUDA_CHECK(cudaDriverGetVersion(&driver));
  BENCH_CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  int sm_clock_khz = 0, mem_clock_khz = 0, bus_width = 0;
  cudaDeviceGetAttribute(&sm_clock_khz, cudaDevAttrClockRate, dev);
  cudaDeviceGetAttribute(&mem_clock_khz, cudaDevAttrMemoryClockRate, dev);
  cudaDeviceGetAttribute(&bus_width, cudaDevAttrGlobalMemoryBusWidth, dev);
  std::ostringstream o;
  o << "{\"name\": " << Str(p.name) << ", \"compute_capability\": " << p.major * 10 + p.minor
    << ", \"sm_count\": " << p.multiProcessorCount
    << ", \"memory_bytes\": " << static_cast<unsigned long long>(p.totalGlobalMem)
    << ", \"l2_bytes\": " << p.l2CacheSize << ", \"max_sm_clock_mhz\": " << sm_clock_khz / 1000
    << ", \"memory_clock_mhz\": " << mem_clock_khz / 1000
    << ", \"memory_bus_width_bits\": " << bus_width
    << ", \"cuda_driver_version\": " << driver << ", \"cuda_runtime_version\": " << runtime
    << "}";
  return o.str();
}

// Non-zero pseudo-random value in [-1, 1) from a hash of the index: zeros can
// run faster than real data on tensor cores, so never time on them.
__device__ inline float HashedValue(size_t i, unsigned seed) {
  unsigned x = static_cast<unsigned>(i) * 2654435761u ^ seed ^ static_cast<unsigned>(i >> 32);
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  const float v = (x >> 8) * (1.0f / 8388608.0f) - 1.0f;
  return v == 0.0f ? 0.5f : v;
}

__global__ void FillBf16(__nv_bfloat16* p, size_t n, unsigned seed) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x)
    p[i] = __float2bfloat16(HashedValue(i, seed));
}

__global__ void FillFloat(float* p, size_t n, float base) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    p[i] = base + static_cast<float>(i % 1024) * 1e-3f;
  }
}

// Writes `text` to `path`, or to stdout when path is empty.
inline void Emit(const std::string& text, const std::string& path) {
  if (path.empty()) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return;
  }
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) {
    std::fprintf(stderr, "error: cannot write %s\n", path.c_str());
    std::exit(3);
  }
  std::fwrite(text.data(), 1, text.size(), f);
  std::fclose(f);
}

// "-o FILE" is the only option every program shares.
inline std::string OutPath(int argc, char** argv) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "-o") == 0) return argv[i + 1];
  return "";
}

inline std::string OptionValue(int argc, char** argv, const char* name, const char* fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return argv[i + 1];
  return fallback;
}

inline bool HasFlag(int argc, char** argv, const char* flag) {
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], flag) == 0) return true;
  return false;
}

}  // namespace bench
