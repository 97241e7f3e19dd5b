#include "cost_model/precision.h"

#include <algorithm>

#include <cmath>

#include "core/error.h"

namespace parasim {

const char* ToString(Precision p) {
  switch (p) {
    case Precision::kBf16: return "bf16";
    case Precision::kFp8: return "fp8";
    case Precision::kFp4: return "fp4";
    case Precision::kFp32: return "fp32";
  }
  return "?";
}

Bf16Layers Nvfp4Bf16Layers(int64_t num_layers, double share) {
  const double kept = std::clamp(share, 0.0, 1.0) * static_cast<double>(num_layers);
  Bf16Layers b;
  b.first = std::llround(kept * 2.0 / 10.0);
  b.last = std::llround(kept * 8.0 / 10.0);
  if (b.first + b.last > num_layers) b = {0, num_layers};
  return b;
}

namespace {

// fp32 training: one rate for every matmul, 4-byte activations.
PrecisionRates Fp32Rates(const GpuProfile& g, PrecisionRates r, bool tf32) {
  r.own_peak = tf32 ? g.tf32_dense.si() : g.fp32.si();
  if (r.own_peak <= 0) {
    throw InvalidInput("", "--precision",
                       StrCat("fp32 with fp32_matmul_tf32 needs TF32 tensor cores (Ampere or later); GPU '", g.name,
                              "' (", g.display_name, ") has no tf32 rate in its profile (peak.tf32)"));
  }
  r.gemm_peak = r.own_peak;
  r.attention_peak = r.own_peak;
  r.element_bytes = 4;
  return r;
}

}  // namespace

PrecisionRates PrecisionRatesOf(const GpuProfile& g, Precision p, int64_t num_layers, bool fp32_matmul_tf32,
                                double nvfp4_bf16_layer_share) {
  PrecisionRates r;
  r.mfu_peak = g.bf16_dense.si() > 0 ? g.bf16_dense.si() : g.fp16_dense.si();
  if (r.mfu_peak <= 0) {
    throw InvalidInput(g.file, "peak.bf16", StrCat("GPU profile '", g.name, "' has no BF16 or FP16 tensor peak"));
  }
  r.attention_peak = r.mfu_peak;
  if (p == Precision::kFp32) return Fp32Rates(g, r, fp32_matmul_tf32);
  switch (p) {
    case Precision::kBf16: r.own_peak = r.mfu_peak; break;
    case Precision::kFp8: r.own_peak = g.fp8_dense.si(); break;
    case Precision::kFp4: r.own_peak = g.fp4_dense.si(); break;
    case Precision::kFp32: break;   // Fp32Rates
  }
  if (r.own_peak <= 0) {
    const char* needs = p == Precision::kFp4 ? "NVFP4/MXFP4 tensor cores (Blackwell: b200, b300, gb200, gb300)"
                                             : "FP8 tensor cores (Hopper, Ada or Blackwell)";
    throw InvalidInput("", "--precision",
                       StrCat(ToString(p), " needs ", needs, "; GPU '", g.name, "' (", g.display_name,
                              ") has no ", ToString(p), " rate in its profile (peak.", ToString(p), ")"));
  }
  r.gemm_peak = r.own_peak;
  if (p == Precision::kFp8) r.quantize_bytes = g.architecture == "blackwell" ? kMxfp8CastBytes : kFp8CastBytes;
  if (p == Precision::kFp4) {
    // The BF16-kept blocks run at the BF16 rate: time adds, so rates combine harmonically.
    const Bf16Layers kept = Nvfp4Bf16Layers(num_layers, nvfp4_bf16_layer_share);
    const double f = num_layers > 0 ? static_cast<double>(kept.first + kept.last) / num_layers : 0.0;
    r.gemm_peak = 1.0 / ((1.0 - f) / r.own_peak + f / r.mfu_peak);
    r.quantize_bytes = (1.0 - f) * kNvfp4CastBytes;   // the BF16 blocks cast nothing
  }
  return r;
}

double ParamGatherBytes(const SoftwareStack& stack, Precision p) {
  if (p == Precision::kFp8 && stack.fp8_param_gather) return 1.0;
  if (p == Precision::kFp4 && stack.fp4_param_gather) return kNvfp4BytesPerElement;
  return stack.comm_param_bytes;
}

SoftwareStack StackForPrecision(const SoftwareStack& stack, Precision p) {
  if (p != Precision::kFp32) return stack;
  SoftwareStack s = stack;
  constexpr double kFp32 = 4;
  s.param_bytes_at_rest = kFp32;
  s.grad_bytes = kFp32;
  s.optimizer_bytes = 2 * kFp32;   // exp_avg, exp_avg_sq
  s.compute_param_bytes = kFp32;
  s.comm_grad_bytes = std::max(s.comm_grad_bytes, kFp32);
  s.comm_param_bytes = kFp32;
  s.separate_compute_copy = false;
  s.activation_bytes = kFp32;
  s.grad_fold_passes = 0;   // no low-precision gradient to fold
  return s;
}

}  // namespace parasim
