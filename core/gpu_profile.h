// One GPU model's hardware figures (datasheet or calibrated) and the
// efficiency/power parameters the cost model needs. Every field has a source
// recorded in the YAML profile (hw_profiles/*.yaml, key `sources`).
#pragma once

#include <map>
#include <string>

#include "core/units.h"

namespace parasim {

struct GpuProfile {
  std::string name;              // profile name, e.g. "h100-sxm"
  std::string display_name;      // "NVIDIA H100 SXM5 80GB"
  std::string architecture;      // volta | ampere | hopper | blackwell
  int compute_capability = 0;    // 70, 80, 90, 100

  // Dense tensor-core peaks (no 2:4 sparsity). Zero = not supported.
  FlopsPerSecond bf16_dense;
  FlopsPerSecond fp16_dense;
  FlopsPerSecond fp8_dense;
  FlopsPerSecond fp4_dense;      // NVFP4 / MXFP4 (Blackwell); zero on Hopper and older
  FlopsPerSecond tf32_dense;
  FlopsPerSecond fp32;           // non-tensor

  Bytes hbm_capacity;
  BytesPerSecond hbm_bandwidth;
  BytesPerSecond nvlink_bandwidth;  // per direction, all links together
  int nvlink_links = 0;
  BytesPerSecond pcie_bandwidth;    // per direction, host/NIC attachment
  Bytes l2_cache;
  int sm_count = 0;
  Watts tdp;
  Watts idle_power;

  // Efficiency model (defaults from published measurements; calibration refits).
  double gemm_max_efficiency = 0.8;   // best-shape GEMM / peak, sustained under the power cap
  // The same for FP8 GEMMs (E4M3, per-tensor scales) against fp8_dense, fitted
  // to the FP8 sweep (calibrate/cuda/gemm_sweep.cu --dtype fp8). 0 = not
  // measured: FP8 GEMMs use gemm_max_efficiency (GemmMaxEfficiencyFor).
  double gemm_max_fp8_efficiency = 0;
  // FP8 GEMMs with the split (2x) accumulator (cuBLASLt FAST_ACCUM off: the
  // tensor cores' partial sums promoted to FP32 in the main loop) over the same
  // GEMMs with fast accumulation, which gemm_max_fp8_efficiency is fitted to;
  // applied to the passes the stack runs that way (SoftwareStack
  // fp8_split_accum_*). 0 = not measured: 1, no slowdown.
  double gemm_fp8_split_accum_rate = 0;
  // Fused attention on this GPU over the stack's kernel figure for its
  // architecture, measured with the same kernel and software on both parts
  // (forward efficiency, backward efficiency): Blackwell Ultra (GB300) runs
  // cuDNN attention faster per peak FLOP than B200, whose figures the
  // Blackwell kernels are (twice the SFU exp rate). 0 = 1.
  double attention_forward_scale = 0;
  double attention_backward_scale = 0;
  // Sustained / short-burst tensor-core throughput: a training run holds the
  // GPU at its power cap, where clocks sit below the burst clocks that kernel
  // papers and microbenchmarks report. Scales burst-measured kernel figures
  // (the stacks' attention efficiencies).
  double sustained_fraction = 1.0;
  // Calibrated GEMM shape model (calibrate/gemm_shape_model.h): η = gemm_max ·
  // k/(k + gemm_k0) · mn/(mn + gemm_half_outputs). 0 = not measured: the cost
  // model's tile/wave quantization model applies instead.
  double gemm_k0 = 0;
  double gemm_half_outputs = 0;
  double memory_efficiency = 0.85;    // achievable / peak HBM bandwidth for streaming kernels
  double nvlink_efficiency = 0.82;    // achievable / spec NVLink per direction (NCCL's own link model)
  bool nvls = false;                  // NVLink SHARP in the NVSwitch (Hopper and later)

  // Power by activity state, as fractions of TDP (idle is idle_power).
  double power_matmul_fraction = 0.95;   // tensor-core bound kernels
  double power_memory_fraction = 0.75;   // memory-bound kernels
  double power_comm_fraction = 0.55;     // NCCL kernels alone

  std::map<std::string, std::string> sources;  // field -> source
  std::string file;                             // where it was loaded from ("" = built in)
};

}  // namespace parasim
