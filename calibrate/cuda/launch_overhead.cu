// Kernel launch overhead with an empty kernel <<<1, 1>>>:
//  host_enqueue_s   host time per cudaLaunchKernel call, back to back (what an
//                   eager framework's CPU pays per kernel);
//  stream_s         GPU time per launch between CUDA events while the host
//                   issues them (host-bound when the host is slower);
//  queued_s         GPU time per launch for launches queued behind a spin
//                   kernel (the device-side cost of back-to-back kernels);
//  graph_s          the same launches captured in a CUDA graph and replayed;
//  round_trip_s     launch + cudaStreamSynchronize, one at a time.
// Medians over repeats after warm-up.
//
// Build: nvcc -O2 -std=c++17 -arch=sm_90 launch_overhead.cu -o launch_overhead
// Run:   ./launch_overhead [-o launch_overhead.json]
#include <vector>

#include "bench_common.h"

__global__ void EmptyKernel() {}

// Keeps the GPU busy for about `cycles` SM cycles so the host can queue the
// launches ahead of it; the GPU then drains them at its own rate.
__global__ void Spin(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

int main(int argc, char** argv) {
  const std::string out_path = bench::OutPath(argc, argv);
  BENCH_CUDA_CHECK(cudaSetDevice(0));
  cudaStream_t stream;
  BENCH_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaEvent_t e0, e1;
  BENCH_CUDA_CHECK(cudaEventCreate(&e0));
  BENCH_CUDA_CHECK(cudaEventCreate(&e1));
  using Clock = std::chrono::steady_clock;
  const int kLaunches = 2000, kRepeats = 21;

  for (int i = 0; i < 1000; ++i) EmptyKernel<<<1, 1, 0, stream>>>();
  BENCH_LAUNCH_CHECK();
  BENCH_CUDA_CHECK(cudaStreamSynchronize(stream));

  std::vector<double> host_s, stream_s, graph_s, round_trip_s;
  for (int r = 0; r < kRepeats; ++r) {
    BENCH_CUDA_CHECK(cudaEventRecord(e0, stream));
    const auto t0 = Clock::now();
    for (int i = 0; i < kLaunches; ++i) EmptyKernel<<<1, 1, 0, stream>>>();
    const auto t1 = Clock::now();
    BENCH_CUDA_CHECK(cudaEventRecord(e1, stream));
    BENCH_CUDA_CHECK(cudaEventSynchronize(e1));
    BENCH_LAUNCH_CHECK();
    float ms = 0;
    BENCH_CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    host_s.push_back(std::chrono::duration<double>(t1 - t0).count() / kLaunches);
    stream_s.push_back(ms * 1e-3 / kLaunches);
  }

  // Device-side drain rate: 500 launches queued behind a ~20 ms spin (the
  // queue holds about a thousand launches before the host blocks).
  std::vector<double> queued_s;
  const int kQueued = 500;
  for (int r = 0; r < kRepeats; ++r) {
    Spin<<<1, 1, 0, stream>>>(40'000'000);
    BENCH_CUDA_CHECK(cudaEventRecord(e0, stream));
    for (int i = 0; i < kQueued; ++i) EmptyKernel<<<1, 1, 0, stream>>>();
    BENCH_CUDA_CHECK(cudaEventRecord(e1, stream));
    BENCH_CUDA_CHECK(cudaEventSynchronize(e1));
    BENCH_LAUNCH_CHECK();
    float ms = 0;
    BENCH_CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    queued_s.push_back(ms * 1e-3 / kQueued);
  }

  cudaGraph_t graph;
  cudaGraphExec_t exec;
  BENCH_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  for (int i = 0; i < kLaunches; ++i) EmptyKernel<<<1, 1, 0, stream>>>();
  BENCH_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  BENCH_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  BENCH_CUDA_CHECK(cudaGraphLaunch(exec, stream));
  BENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
  for (int r = 0; r < kRepeats; ++r) {
    BENCH_CUDA_CHECK(cudaEventRecord(e0, stream));
    BENCH_CUDA_CHECK(cudaGraphLaunch(exec, stream));
    BENCH_CUDA_CHECK(cudaEventRecord(e1, stream));
    BENCH_CUDA_CHECK(cudaEventSynchronize(e1));
    float ms = 0;
    BENCH_CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    graph_s.push_back(ms * 1e-3 / kLaunches);
  }

  for (int r = 0; r < 200; ++r) {
    const auto t0 = Clock::now();
    EmptyKernel<<<1, 1, 0, stream>>>();
    BENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
    round_trip_s.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  BENCH_LAUNCH_CHECK();

  std::ostringstream o;
  o << "{\n  \"benchmark\": \"launch_overhead\",\n  \"timestamp_utc\": " << bench::Str(bench::UtcNow())
    << ",\n  \"device\": " << bench::DeviceJson(0) << ",\n  \"kernel\": \"empty <<<1,1>>>\", \"launches_per_repeat\": "
    << kLaunches << ", \"repeats\": " << kRepeats
    << ",\n  \"host_enqueue_s\": " << bench::Num(bench::Median(host_s))
    << ",\n  \"stream_s\": " << bench::Num(bench::Median(stream_s))
    << ",\n  \"queued_s\": " << bench::Num(bench::Median(queued_s))
    << ",\n  \"graph_s\": " << bench::Num(bench::Median(graph_s))
    << ",\n  \"round_trip_s\": " << bench::Num(bench::Median(round_trip_s))
    << ",\n  \"round_trip_min_s\": " << bench::Num(bench::MinOf(round_trip_s)) << "\n}\n";
  bench::Emit(o.str(), out_path);
  std::fprintf(stderr, "launch: host %.2f us, stream %.2f us, queued %.2f us, graph %.2f us, round trip %.2f us\n",
               bench::Median(host_s) * 1e6, bench::Median(stream_s) * 1e6, bench::Median(queued_s) * 1e6, bench::Median(graph_s) * 1e6,
               bench::Median(round_trip_s) * 1e6);
  return 0;
}
