// GPU power per activity state, read through NVML by a host thread every
// ~20 ms: idle (context up, nothing running), a sustained large bf16 GEMM
// (tensor-core bound) and a sustained STREAM triad (HBM bound). Reports per
// state the mean of the sampled power (nvmlDeviceGetPowerUsage), the mean from
// the total-energy counter (nvmlDeviceGetTotalEnergyConsumption: ΔE/Δt, not
// subject to the sampling window of the power reading), the SM clock, the
// temperature and the throttle reasons seen, over a steady window that drops
// each state's first seconds (ramp), plus the power limit and the work rate
// sustained meanwhile (TFLOP/s, GB/s).
//
// Build: nvcc -O2 -std=c++17 -arch=sm_90 power_states.cu -lcublas -ldl -o power_states
// Run:   ./power_states [-o power_states.json] [--quick]
#include <cublas_v2.h>

#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

#include "bench_common.h"
#include "nvml_dyn.h"
#include "stream_kernels.cuh"

namespace {

using Clock = std::chrono::steady_clock;

struct Sample {
  double t_s;
  int state;
  double power_w, energy_j, sm_mhz, mem_mhz, temp_c;
  unsigned long long reasons;
};

const char* kStateNames[] = {"idle", "gemm", "memory", "idle_after"};

struct StateWindow {
  double start_s = 0, end_s = 0;
  double work = 0;  // FLOP or bytes done in the state
};

}  // namespace

int main(int argc, char** argv) {
  const std::string out_path = bench::OutPath(argc, argv);
  const bool quick = bench::HasFlag(argc, argv, "--quick");
  const double idle_s = quick ? 2.0 : 5.0, busy_s = quick ? 3.0 : 10.0, after_s = quick ? 1.0 : 3.0;
  const double ramp_s = quick ? 0.5 : 2.0;  // dropped from each state's steady window

  BENCH_CUDA_CHECK(cudaSetDevice(0));
  char bus_id[32] = {0};
  BENCH_CUDA_CHECK(cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, 0));
  bench::Nvml nvml(bus_id);
  if (!nvml.ok()) {
    std::fprintf(stderr, "error: NVML: %s\n", nvml.error().c_str());
    return 3;
  }
  cudaStream_t stream;
  BENCH_CUDA_CHECK(cudaStreamCreate(&stream));
  cublasHandle_t h;
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "error: cublasCreate failed\n");
    return 3;
  }
  cublasSetStream(h, stream);
  void* workspace;
  BENCH_CUDA_CHECK(cudaMalloc(&workspace, size_t{32} << 20));
  cublasSetWorkspace(h, workspace, size_t{32} << 20);

  // GEMM operands: 8192^3 bf16 (a large, best-case shape), two sets.
  const int64_t g = 8192;
  const size_t mat = static_cast<size_t>(g * g);
  __nv_bfloat16* gbuf;
  BENCH_CUDA_CHECK(cudaMalloc(&gbuf, mat * 2 * 6));
  bench::FillBf16<<<4096, 256, 0, stream>>>(gbuf, mat * 6, 777u);
  // Triad arrays: 1 GiB each, far beyond L2.
  const size_t tri_bytes = size_t{1} << 30, n4 = tri_bytes / sizeof(float4);
  float4 *ta, *tb, *tc;
  BENCH_CUDA_CHECK(cudaMalloc(&ta, tri_bytes));
  BENCH_CUDA_CHECK(cudaMalloc(&tb, tri_bytes));
  BENCH_CUDA_CHECK(cudaMalloc(&tc, tri_bytes));
  bench::FillFloat<<<4096, 256, 0, stream>>>(reinterpret_cast<float*>(tb), tri_bytes / 4, 1.0f);
  bench::FillFloat<<<4096, 256, 0, stream>>>(reinterpret_cast<float*>(tc), tri_bytes / 4, 2.0f);
  BENCH_LAUNCH_CHECK();
  BENCH_CUDA_CHECK(cudaStreamSynchronize(stream));

  auto gemm = [&](int set) {
    const float alpha = 1.0f, beta = 0.0f;
    __nv_bfloat16* base = gbuf + static_cast<size_t>(set) * 3 * mat;
    if (cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, g, g, g, &alpha, base, CUDA_R_16BF, g, base + mat,
                     CUDA_R_16BF, g, &beta, base + 2 * mat, CUDA_R_16BF, g, CUBLAS_COMPUTE_32F,
                     CUBLAS_GEMM_DEFAULT) != CUBLAS_STATUS_SUCCESS) {
      std::fprintf(stderr, "error: cublasGemmEx failed\n");
      std::exit(3);
    }
  };
  auto triad = [&] {
    bench::TriadKernel<<<bench::StreamGrid(n4), bench::kStreamBlock, 0, stream>>>(ta, tb, tc, 0.4f, n4);
  };
  gemm(0);
  gemm(1);
  triad();
  BENCH_LAUNCH_CHECK();
  BENCH_CUDA_CHECK(cudaStreamSynchronize(stream));

  // Sampler thread.
  std::atomic<int> state{0};
  std::atomic<bool> stop{false};
  std::vector<Sample> samples;
  std::mutex mu;
  const auto t0 = Clock::now();
  auto now_s = [&] { return std::chrono::duration<double>(Clock::now() - t0).count(); };
  std::thread sampler([&] {
    while (!stop.load()) {
      Sample s{now_s(), state.load(), nvml.PowerW(), nvml.EnergyJ(), nvml.ClockMhz(bench::Nvml::kClockSm),
               nvml.ClockMhz(bench::Nvml::kClockMem), nvml.TemperatureC(), nvml.ThrottleReasons()};
      {
        std::lock_guard<std::mutex> lock(mu);
        samples.push_back(s);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });

  StateWindow win[4];
  auto run_state = [&](int st, double seconds) {
    state.store(st);
    win[st].start_s = now_s();
    const double end = win[st].start_s + seconds;
    int set = 0;
    while (now_s() < end) {
      if (st == 1) {
        for (int i = 0; i < 8; ++i) gemm(set ^= 1);
        win[st].work += 8 * 2.0 * g * g * g;
      } else if (st == 2) {
        for (int i = 0; i < 20; ++i) triad();
        win[st].work += 20 * 3.0 * tri_bytes;
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        continue;
      }
      BENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
    }
    BENCH_LAUNCH_CHECK();
    win[st].end_s = now_s();
  };
  run_state(0, idle_s);
  run_state(1, busy_s);
  run_state(2, busy_s);
  run_state(3, after_s);
  stop.store(true);
  sampler.join();

  std::ostringstream states;
  for (int st = 0; st < 4; ++st) {
    const double from = win[st].start_s + (st == 3 ? 0.0 : ramp_s), to = win[st].end_s;
    double p_sum = 0, clk_sum = 0, mem_clk_sum = 0, temp_max = -1;
    int n = 0;
    unsigned long long reasons = 0;
    const Sample *first = nullptr, *last = nullptr;
    for (const auto& s : samples) {
      if (s.state != st || s.t_s < from || s.t_s > to) continue;
      p_sum += s.power_w;
      clk_sum += s.sm_mhz;
      mem_clk_sum += s.mem_mhz;
      temp_max = std::max(temp_max, s.temp_c);
      reasons |= s.reasons;
      ++n;
      if (!first) first = &s;
      last = &s;
    }
    double energy_w = -1;
    if (first && last && last->t_s > first->t_s && first->energy_j >= 0 && last->energy_j >= 0)
      energy_w = (last->energy_j - first->energy_j) / (last->t_s - first->t_s);
    const double dur = win[st].end_s - win[st].start_s;
    if (st) states << ",\n";
    states << "    {\"state\": " << bench::Str(kStateNames[st]) << ", \"duration_s\": " << bench::Num(dur)
           << ", \"steady_from_s\": " << bench::Num(from - win[st].start_s) << ", \"samples\": " << n
           << ", \"mean_power_w\": " << bench::Num(n ? p_sum / n : -1)
           << ", \"energy_counter_power_w\": " << bench::Num(energy_w)
           << ", \"mean_sm_clock_mhz\": " << bench::Num(n ? clk_sum / n : -1)
           << ", \"mean_mem_clock_mhz\": " << bench::Num(n ? mem_clk_sum / n : -1)
           << ", \"max_temperature_c\": " << bench::Num(temp_max)
           << ", \"throttle_reasons_mask\": " << reasons;
    if (st == 1) states << ", \"sustained_tflops\": " << bench::Num(win[st].work / dur * 1e-12);
    if (st == 2) states << ", \"sustained_bandwidth_Bps\": " << bench::Num(win[st].work / dur);
    states << "}";
    std::fprintf(stderr, "power %s: %.1f W sampled, %.1f W from energy, SM %.0f MHz\n", kStateNames[st],
                 n ? p_sum / n : -1, energy_w, n ? clk_sum / n : -1);
  }
  std::ostringstream trace;
  for (size_t i = 0; i < samples.size(); ++i) {
    const auto& s = samples[i];
    if (i) trace << ",";
    trace << "[" << bench::Num(s.t_s) << "," << s.state << "," << bench::Num(s.power_w) << ","
          << bench::Num(s.energy_j) << "," << bench::Num(s.sm_mhz) << "," << bench::Num(s.temp_c) << "]";
  }

  std::ostringstream o;
  o << "{\n  \"benchmark\": \"power_states\",\n  \"timestamp_utc\": " << bench::Str(bench::UtcNow())
    << ",\n  \"device\": " << bench::DeviceJson(0) << ",\n  \"driver_version\": " << bench::Str(nvml.DriverVersion())
    << ",\n  \"power_limit_w\": " << bench::Num(nvml.PowerLimitW())
    << ", \"default_power_limit_w\": " << bench::Num(nvml.DefaultPowerLimitW())
    << ", \"max_sm_clock_mhz\": " << bench::Num(nvml.MaxClockMhz(bench::Nvml::kClockSm))
    << ", \"max_mem_clock_mhz\": " << bench::Num(nvml.MaxClockMhz(bench::Nvml::kClockMem))
    << ",\n  \"workloads\": {\"gemm\": \"cublasGemmEx bf16 8192x8192x8192, fp32 accumulate\", \"memory\": \"STREAM triad, 3 x 1 GiB fp32 arrays\"},"
    << "\n  \"throttle_reason_bits\": \"1 gpu_idle, 2 app_clocks, 4 sw_power_cap, 8 hw_slowdown, 32 sw_thermal, 64 hw_thermal, 128 hw_power_brake\","
    << "\n  \"sample_period_s\": 0.02,\n  \"states\": [\n" << states.str() << "\n  ],"
    << "\n  \"trace_columns\": [\"t_s\", \"state\", \"power_w\", \"energy_j\", \"sm_clock_mhz\", \"temperature_c\"],"
    << "\n  \"trace\": [" << trace.str() << "]\n}\n";
  bench::Emit(o.str(), out_path);
  return 0;
}
