// The measurements of parasim's CUDA calibration programs (calibrate/cuda/),
// read from their JSON: the GEMM sweep, HBM bandwidth, launch overhead and
// NVML power states. A directory holds one file per program under its fixed
// name (gemm_sweep.json, gemm_sweep_sustained.json,
// gemm_sweep_fp8_sustained.json, hbm_bandwidth.json, launch_overhead.json,
// power_states.json); missing files are simply absent.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/units.h"

namespace parasim::calibrate {

struct GemmSample {
  std::string model, layer, pass;  // "" / "square" / "fwd" ... as the sweep wrote them
  std::string dtype = "bf16";      // operand type: "bf16" or "fp8" (E4M3, bf16 output)
  int tokens = 0, tp = 1;
  int64_t m = 0, n = 0, k = 0;     // C is m×n, reduction over k
  Seconds time;                    // median per GEMM
  // FP8 rows: cuBLASLt CUBLASLT_MATMUL_DESC_FAST_ACCUM on (the forward pass as
  // Transformer Engine runs it); false = the split accumulator (dgrad, wgrad).
  // Files without the column: every row fast.
  bool fast_accumulate = true;

  double Flop() const { return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k); }
};

struct GemmSweep {
  std::string file, device, timestamp;
  double preheat_s = 0;  // > 0: measured after a preheat, at sustained clocks
  std::string dtype = "bf16";  // the file's "dtype"; a row's own "dtype" wins
  std::vector<GemmSample> samples;
};

struct BandwidthSample {
  std::string op;  // memcpy_d2d, copy, scale, triad
  Bytes array;     // bytes per array
  Bytes moved;     // bytes read + written
  Seconds time;
  BytesPerSecond Rate() const { return moved / time; }
};

struct BandwidthSweep {
  std::string file, device, timestamp;
  std::vector<BandwidthSample> samples;
};

struct LaunchOverhead {
  std::string file, device;
  Seconds host_enqueue;  // host time per launch call
  Seconds queued;        // device-side cost per kernel of a pre-queued stream
  Seconds graph;         // per kernel in a CUDA graph replay
  Seconds round_trip;    // launch + synchronize
};

struct PowerState {
  std::string state;          // idle, gemm, memory, idle_after
  Seconds duration;
  Watts sampled;              // mean of nvmlDeviceGetPowerUsage samples
  Watts from_energy;          // ΔE/Δt from the energy counter; 0 if unavailable
  double sm_clock_mhz = 0;
  uint64_t throttle_mask = 0;
  // The better estimate: the energy counter when present (the sampled value
  // is a ~1 s moving average that lags state changes).
  Watts Mean() const { return from_energy.si() > 0 ? from_energy : sampled; }
};

struct PowerStates {
  std::string file, device, driver;
  Watts limit;
  std::vector<PowerState> states;
  const PowerState* Find(const std::string& state) const;
};

struct MicrobenchData {
  std::string device;  // from the first file read
  std::string date;    // YYYY-MM-DD of the first file's timestamp
  std::optional<GemmSweep> gemm, gemm_sustained;
  std::optional<GemmSweep> gemm_fp8_sustained;  // gemm_sweep --dtype fp8, after a preheat
  std::optional<BandwidthSweep> hbm;
  std::optional<LaunchOverhead> launch;
  std::optional<PowerStates> power;
};

// Each throws parasim::Error naming the file and key for unreadable or
// malformed input. A GEMM row's dtype is its own "dtype", else the file's,
// else bf16 (files written before the FP8 mode); anything but bf16/fp8 is an error.
GemmSweep LoadGemmSweep(const std::string& path);
BandwidthSweep LoadBandwidthSweep(const std::string& path);
LaunchOverhead LoadLaunchOverhead(const std::string& path);
PowerStates LoadPowerStates(const std::string& path);
// Reads whichever of the programs' files the directory holds; an error if none.
MicrobenchData LoadMicrobenchDir(const std::string& dir);

// The rows of `samples` whose dtype is `dtype`, in order.
std::vector<GemmSample> SamplesOfDtype(const std::vector<GemmSample>& samples, const std::string& dtype);

// The rows of `samples` timed with (true) or without (false) fast accumulation, in order.
std::vector<GemmSample> SamplesWithFastAccumulate(const std::vector<GemmSample>& samples, bool fast);

}  // namespace parasim::calibrate
