// Kernel time on one GPU (DESIGN.md §4 Kernel time): roofline per op.
// GEMMs: 2MNK / (peak × η(M,N,K)), η a physical model of tile and wave
// quantization over the SMs plus the arithmetic intensity of the tile cuBLAS
// would pick and the pipeline fill of short K loops — small and skinny GEMMs
// (high TP) land below the best-shape efficiency gemm_max_efficiency (MAMF).
// Attention: FLOPs with causal masking over the stack's attention kernel
// efficiency. Memory-bound ops: bytes / (HBM bandwidth × memory_efficiency).
#pragma once

#include "core/gpu_profile.h"
#include "core/job_spec.h"
#include "cost_model/software_stack.h"

namespace parasim {

// Rates a kernel model needs, in SI doubles for the hot loop.
struct DeviceRates {
  double peak_flops = 0;        // GEMM rate of the job's precision (linear layers), FLOP/s
  double attention_peak_flops = 0;  // attention core (BF16 in every recipe); 0 = peak_flops
  double gemm_max_efficiency = 0.8;   // of the linear layers' precision (GemmMaxEfficiencyFor)
  // gemm_max of the GEMMs a recipe keeps in BF16 (HighPrecisionRates); 0 = gemm_max_efficiency.
  double high_precision_gemm_max_efficiency = 0;
  double hbm_Bps = 0;           // achievable HBM bandwidth (peak × memory_efficiency)
  int sm_count = 132;
  double gemm_k0 = 0;              // calibrated shape model (GpuProfile); 0 = tile/wave model
  double gemm_half_outputs = 0;
  double attention_fwd_efficiency = 0.35;
  double attention_bwd_efficiency = 0.28;
  double attention_non_causal_speedup = 1;   // AttentionKernel::non_causal_speedup
  // Bytes of one activation element: 2 (bf16; fp8/fp4 GEMMs keep bf16
  // activations), 4 for fp32 training. Scales the GEMM roofline's operands and
  // the memory-bound ops, whose stack bytes are stated for bf16 elements.
  double element_bytes = 2;
  // Low-precision recipes (FP8, NVFP4): HBM bytes per element of the cast
  // kernel that quantizes each linear layer's input (forward) and output
  // gradient (backward) before its GEMM; 0 for bf16/fp32 (PrecisionRates).
  double quantize_bytes = 0;
  // FP8: compute rate of each pass of a linear layer relative to fast
  // accumulation, GpuProfile::gemm_fp8_split_accum_rate for the passes the
  // stack runs with the split accumulator, else 1 (SplitAccumRates).
  double fprop_rate = 1, dgrad_rate = 1, wgrad_rate = 1;
};

// The three GEMMs of a linear layer.
enum class GemmPass { kFprop, kDgrad, kWgrad };

// The per-pass accumulator rates of a job in precision p on g with `stack`:
// all 1 unless p is FP8 and the profile measures the split accumulator.
void SetSplitAccumRates(DeviceRates& d, const GpuProfile& g, const SoftwareStack& stack, Precision p);

// The best-shape sustained GEMM efficiency of the linear layers in precision
// p: the measured FP8 value for FP8 when the profile has one, else the BF16
// gemm_max_efficiency (NVFP4 and FP32 have no sweep of their own).
double GemmMaxEfficiencyFor(const GpuProfile& g, Precision p);

// The rates of a GEMM the recipe keeps in high precision (the output head,
// an MoE router): the BF16 tensor rate (attention_peak_flops), no casts.
DeviceRates HighPrecisionRates(const DeviceRates& d);

// Efficiency of a (M×K)·(K×N) bf16 GEMM relative to the dense peak, in (0, gemm_max_efficiency].
double GemmEfficiency(const DeviceRates& d, double m, double n, double k);
// Time of the GEMM: max(compute at η, HBM roofline of its operands and result).
double GemmSeconds(const DeviceRates& d, double m, double n, double k);
// The same GEMM as one pass of a linear layer: its compute at that pass's
// accumulator rate (DeviceRates::fprop_rate, dgrad_rate, wgrad_rate).
double GemmSeconds(const DeviceRates& d, double m, double n, double k, GemmPass pass);
// Forward + backward (dgrad and wgrad) of a linear layer with `tokens` rows,
// `in` → `out` features; forward and backward seconds. With quantize_bytes,
// each direction adds the cast of its streamed operand: the tokens×in input
// forward, the tokens×out output gradient backward (weights: see precision.h).
struct FwdBwd {
  double fwd = 0, bwd = 0;
};
FwdBwd LinearSeconds(const DeviceRates& d, double tokens, double in, double out);

// Flash-attention style core: `flops_full` forward FLOPs counted without the
// causal mask; the kernel does half. Efficiency rises with the sequence as
// diagonal tiles and per-block prologues amortize: s / (s + 2·128).
// `non_causal_share` of the work runs in calls without the causal mask (a
// load-balanced CP ring's later steps), at attention_non_causal_speedup.
FwdBwd AttentionSeconds(const DeviceRates& d, double flops_full, double seq_len, double non_causal_share = 0);

// Streaming op moving `bytes` through HBM.
inline double MemorySeconds(const DeviceRates& d, double bytes) { return bytes / d.hbm_Bps; }

}  // namespace parasim
