// HBM bandwidth: device-to-device cudaMemcpyAsync and STREAM copy/scale/triad
// kernels over array sizes 1 MiB … 4 GiB (bytes per array). Bandwidth counts
// bytes read plus bytes written (copy, scale, memcpy: 2 × size; triad: 3 ×
// size), as STREAM and BabelStream do. Sizes at or below the 50 MB L2 measure
// the cache, not HBM; the calibration uses the large sizes only.
//
// Build: nvcc -O2 -std=c++17 -arch=sm_90 hbm_bandwidth.cu -o hbm_bandwidth
// Run:   ./hbm_bandwidth [-o hbm_bandwidth.json] [--quick]
#include <vector>

#include "bench_common.h"
#include "stream_kernels.cuh"

int main(int argc, char** argv) {
  const std::string out_path = bench::OutPath(argc, argv);
  const bool quick = bench::HasFlag(argc, argv, "--quick");
  BENCH_CUDA_CHECK(cudaSetDevice(0));
  cudaStream_t stream;
  BENCH_CUDA_CHECK(cudaStreamCreate(&stream));

  const size_t max_bytes = quick ? (size_t{256} << 20) : (size_t{4} << 30);
  float4 *a, *b, *c;
  BENCH_CUDA_CHECK(cudaMalloc(&a, max_bytes));
  BENCH_CUDA_CHECK(cudaMalloc(&b, max_bytes));
  BENCH_CUDA_CHECK(cudaMalloc(&c, max_bytes));
  bench::FillFloat<<<4096, 256, 0, stream>>>(reinterpret_cast<float*>(a), max_bytes / 4, 0.5f);
  bench::FillFloat<<<4096, 256, 0, stream>>>(reinterpret_cast<float*>(b), max_bytes / 4, 1.5f);
  bench::FillFloat<<<4096, 256, 0, stream>>>(reinterpret_cast<float*>(c), max_bytes / 4, 2.5f);
  BENCH_LAUNCH_CHECK();
  BENCH_CUDA_CHECK(cudaStreamSynchronize(stream));

  cudaEvent_t e0, e1;
  BENCH_CUDA_CHECK(cudaEventCreate(&e0));
  BENCH_CUDA_CHECK(cudaEventCreate(&e1));

  const char* kOps[] = {"memcpy_d2d", "copy", "scale", "triad"};
  const double kTraffic[] = {2.0, 2.0, 2.0, 3.0};  // bytes moved per byte of array
  std::ostringstream rows;
  bool first = true;
  for (size_t bytes = size_t{1} << 20; bytes <= max_bytes; bytes *= 2) {
    const size_t n4 = bytes / sizeof(float4);
    for (int op = 0; op < 4; ++op) {
      auto launch = [&] {
        switch (op) {
          case 0: BENCH_CUDA_CHECK(cudaMemcpyAsync(a, b, bytes, cudaMemcpyDeviceToDevice, stream)); break;
          case 1: bench::CopyKernel<<<bench::StreamGrid(n4), bench::kStreamBlock, 0, stream>>>(a, b, n4); break;
          case 2: bench::ScaleKernel<<<bench::StreamGrid(n4), bench::kStreamBlock, 0, stream>>>(a, b, 0.4f, n4); break;
          case 3: bench::TriadKernel<<<bench::StreamGrid(n4), bench::kStreamBlock, 0, stream>>>(a, b, c, 0.4f, n4); break;
        }
      };
      for (int i = 0; i < 3; ++i) launch();
      BENCH_LAUNCH_CHECK();
      // Estimate, then batch so each timed interval is >= ~0.5 ms.
      BENCH_CUDA_CHECK(cudaEventRecord(e0, stream));
      launch();
      BENCH_CUDA_CHECK(cudaEventRecord(e1, stream));
      BENCH_CUDA_CHECK(cudaEventSynchronize(e1));
      float est_ms = 0;
      BENCH_CUDA_CHECK(cudaEventElapsedTime(&est_ms, e0, e1));
      const int batch = static_cast<int>(std::clamp(std::ceil(0.5 / std::max(1e-4, (double)est_ms)), 1.0, 500.0));
      const int repeats = 11;
      std::vector<double> per_op_s;
      for (int r = 0; r < repeats; ++r) {
        BENCH_CUDA_CHECK(cudaEventRecord(e0, stream));
        for (int i = 0; i < batch; ++i) launch();
        BENCH_CUDA_CHECK(cudaEventRecord(e1, stream));
        BENCH_CUDA_CHECK(cudaEventSynchronize(e1));
        float ms = 0;
        BENCH_CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
        per_op_s.push_back(ms * 1e-3 / batch);
      }
      BENCH_LAUNCH_CHECK();
      const double t = bench::Median(per_op_s);
      const double moved = kTraffic[op] * static_cast<double>(bytes);
      if (!first) rows << ",\n";
      first = false;
      rows << "    {\"op\": " << bench::Str(kOps[op]) << ", \"array_bytes\": " << bytes
           << ", \"bytes_moved\": " << bench::Num(moved) << ", \"time_s\": " << bench::Num(t)
           << ", \"time_min_s\": " << bench::Num(bench::MinOf(per_op_s))
           << ", \"bandwidth_Bps\": " << bench::Num(moved / t) << ", \"batch\": " << batch << "}";
      std::fprintf(stderr, "hbm %s %zu MiB: %.1f GB/s\n", kOps[op], bytes >> 20, moved / t * 1e-9);
    }
  }
  // Spot check that the triad wrote what it should: a = b + 0.4 c.
  std::vector<float> ha(8), hb(8), hc(8);
  BENCH_CUDA_CHECK(cudaMemcpy(ha.data(), a, 32, cudaMemcpyDeviceToHost));
  BENCH_CUDA_CHECK(cudaMemcpy(hb.data(), b, 32, cudaMemcpyDeviceToHost));
  BENCH_CUDA_CHECK(cudaMemcpy(hc.data(), c, 32, cudaMemcpyDeviceToHost));
  for (int i = 0; i < 8; ++i)
    if (std::fabs(ha[i] - (hb[i] + 0.4f * hc[i])) > 1e-5f) {
      std::fprintf(stderr, "error: triad result wrong at %d\n", i);
      return 1;
    }

  std::ostringstream o;
  o << "{\n  \"benchmark\": \"hbm_bandwidth\",\n  \"timestamp_utc\": " << bench::Str(bench::UtcNow())
    << ",\n  \"device\": " << bench::DeviceJson(0)
    << ",\n  \"bytes_convention\": \"bytes read + bytes written (memcpy/copy/scale 2x array, triad 3x)\","
    << "\n  \"timing\": \"median of 11 repeats of a batch (>= 0.5 ms) between CUDA events\","
    << "\n  \"results\": [\n" << rows.str() << "\n  ]\n}\n";
  bench::Emit(o.str(), out_path);
  return 0;
}
