#include "cost_model/kernel_time.h"

#include <algorithm>
#include <cmath>

namespace parasim {
namespace {

// Output tiles cuBLAS/CUTLASS choose among for bf16 tensor-core GEMMs on
// sm80/sm90 (CUTLASS default tile shapes 128×256, 128×128, 64×128; the
// heuristic picks the best per shape). A tile's arithmetic intensity per
// K-step is tm·tn/(tm+tn) FLOP per byte of operands read from L2; smaller
// tiles need more L2 bandwidth per FLOP, so their throughput is scaled by
// their intensity relative to the largest tile (they are L2-bound when the
// largest tile is just compute-bound: the reason the largest tile is the
// default for big GEMMs).
struct Tile {
  double tm, tn;
};
constexpr Tile kTiles[] = {{128, 256}, {128, 128}, {64, 128}};
constexpr double IntensityOf(Tile t) { return t.tm * t.tn / (t.tm + t.tn); }
constexpr double kBestIntensity = IntensityOf(kTiles[0]);

// Mainloop pipeline fill: each output tile first loads its operand pipeline
// (CUTLASS multistage: ≈ one 64-deep K block) before tensor cores run, so a
// K loop of length k runs at k / (k + 64) of its steady rate.
constexpr double kPipelineFillK = 64.0;

// FlashAttention-2/3 use 128-wide key/query blocks; the causal diagonal
// blocks are computed in full and each query block pays a prologue, worth
// about two blocks: η(s) = s / (s + 2·128).
constexpr double kAttentionBlockOverhead = 256.0;

}  // namespace

double GemmEfficiency(const DeviceRates& d, double m, double n, double k) {
  if (d.gemm_k0 > 0 && d.gemm_half_outputs > 0) {
    // Measured on this GPU (calibrate/gemm_shape_model.h): per-tile fixed cost
    // and occupancy, smooth because cuBLAS splits work stream-K style.
    const double mn = m * n;
    return std::max(1e-3, d.gemm_max_efficiency * k / (k + d.gemm_k0) * mn / (mn + d.gemm_half_outputs));
  }
  const double sms = static_cast<double>(d.sm_count > 0 ? d.sm_count : 1);
  double best = 0.0;
  for (const Tile& t : kTiles) {
    const double tiles_m = std::ceil(m / t.tm), tiles_n = std::ceil(n / t.tn);
    const double tiles = tiles_m * tiles_n;
    const double waves = std::ceil(tiles / sms);
    const double wave_eff = tiles / (waves * sms);             // idle SMs in the last wave
    const double pad_eff = (m * n) / (tiles_m * t.tm * tiles_n * t.tn);  // partial tiles
    const double intensity_eff = IntensityOf(t) / kBestIntensity;
    best = std::max(best, wave_eff * pad_eff * intensity_eff);
  }
  const double fill = k / (k + kPipelineFillK);
  return std::max(1e-3, d.gemm_max_efficiency * best * fill);
}

namespace {

double GemmSecondsAt(const DeviceRates& d, double m, double n, double k, double rate) {
  if (m <= 0 || n <= 0 || k <= 0) return 0.0;
  const double compute = 2.0 * m * n * k / (d.peak_flops * GemmEfficiency(d, m, n, k) * rate);
  const double memory = d.element_bytes * (m * k + k * n + m * n) / d.hbm_Bps;   // operands and result
  return std::max(compute, memory);
}

double PassRate(const DeviceRates& d, GemmPass pass) {
  switch (pass) {
    case GemmPass::kFprop: return d.fprop_rate;
    case GemmPass::kDgrad: return d.dgrad_rate;
    case GemmPass::kWgrad: return d.wgrad_rate;
  }
  return 1.0;
}

}  // namespace

double GemmSeconds(const DeviceRates& d, double m, double n, double k) { return GemmSecondsAt(d, m, n, k, 1.0); }

double GemmSeconds(const DeviceRates& d, double m, double n, double k, GemmPass pass) {
  return GemmSecondsAt(d, m, n, k, PassRate(d, pass));
}

void SetSplitAccumRates(DeviceRates& d, const GpuProfile& g, const SoftwareStack& stack, Precision p) {
  // The split accumulator is a cuBLASLt FP8 mode (CUBLASLT_MATMUL_DESC_FAST_ACCUM);
  // other precisions accumulate in FP32 whatever the stack says.
  const double split = p == Precision::kFp8 && g.gemm_fp8_split_accum_rate > 0 ? g.gemm_fp8_split_accum_rate : 1.0;
  d.fprop_rate = stack.fp8_split_accum_fprop ? split : 1.0;
  d.dgrad_rate = stack.fp8_split_accum_dgrad ? split : 1.0;
  d.wgrad_rate = stack.fp8_split_accum_wgrad ? split : 1.0;
}

double GemmMaxEfficiencyFor(const GpuProfile& g, Precision p) {
  return p == Precision::kFp8 && g.gemm_max_fp8_efficiency > 0 ? g.gemm_max_fp8_efficiency : g.gemm_max_efficiency;
}

DeviceRates HighPrecisionRates(const DeviceRates& d) {
  DeviceRates r = d;
  if (d.attention_peak_flops > 0) r.peak_flops = d.attention_peak_flops;
  if (d.high_precision_gemm_max_efficiency > 0) r.gemm_max_efficiency = d.high_precision_gemm_max_efficiency;
  r.quantize_bytes = 0;
  r.fprop_rate = r.dgrad_rate = r.wgrad_rate = 1.0;   // BF16: no FP8 accumulator mode
  return r;
}

FwdBwd LinearSeconds(const DeviceRates& d, double tokens, double in, double out) {
  FwdBwd r;
  r.fwd = GemmSeconds(d, tokens, out, in, GemmPass::kFprop);   // Y = X·W
  r.bwd = GemmSeconds(d, tokens, in, out, GemmPass::kDgrad) +   // dX = dY·Wᵀ
          GemmSeconds(d, in, out, tokens, GemmPass::kWgrad);    // dW = Xᵀ·dY
  if (d.quantize_bytes > 0 && tokens > 0) {
    // The cast kernels run on the stream before the GEMM, at the HBM rate.
    r.fwd += MemorySeconds(d, tokens * in * d.quantize_bytes);
    r.bwd += MemorySeconds(d, tokens * out * d.quantize_bytes);
  }
  return r;
}

FwdBwd AttentionSeconds(const DeviceRates& d, double flops_full, double seq_len, double non_causal_share) {
  FwdBwd r;
  if (flops_full <= 0) return r;
  const double causal = 0.5 * flops_full;
  const double eta_s = seq_len / (seq_len + kAttentionBlockOverhead);
  const double peak = d.attention_peak_flops > 0 ? d.attention_peak_flops : d.peak_flops;
  // The unmasked calls' share at their own speed (the backward scaled as the forward).
  const double mask = 1.0 - non_causal_share + non_causal_share / d.attention_non_causal_speedup;
  r.fwd = causal / (peak * d.attention_fwd_efficiency * eta_s) * mask;
  r.bwd = 2.0 * causal / (peak * d.attention_bwd_efficiency * eta_s) * mask;
  return r;
}

}  // namespace parasim
