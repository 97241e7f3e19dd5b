#include <catch2/catch.hpp>

#include "core/loaders.h"
#include "cost_model/kernel_time.h"
#include "cost_model/software_stack.h"
#include "test_specs.h"

using namespace parasim;

namespace {
DeviceRates H100Rates() {
  const GpuProfile g = testing::H100();
  DeviceRates d;
  d.peak_flops = g.bf16_dense.si();
  d.gemm_max_efficiency = g.gemm_max_efficiency;
  d.hbm_Bps = g.hbm_bandwidth.si() * g.memory_efficiency;
  d.sm_count = g.sm_count;
  return d;
}
}  // namespace

TEST_CASE("cost_model: big GEMMs approach the best-shape efficiency, skinny ones fall below", "[cost_model]") {
  const DeviceRates d = H100Rates();
  const double big = GemmEfficiency(d, 8192, 12288, 4096);
  CHECK(big <= d.gemm_max_efficiency);
  CHECK(big > 0.9 * d.gemm_max_efficiency);
  // Llama-7B output projection forward at tp=8: K = 512.
  CHECK(GemmEfficiency(d, 8192, 4096, 512) < big);
  // One wave of 132 SMs half used.
  CHECK(GemmEfficiency(d, 128 * 66, 128, 4096) < 0.6 * d.gemm_max_efficiency);
}

TEST_CASE("cost_model: GEMM time never beats the FLOP or HBM roofline", "[cost_model]") {
  const DeviceRates d = H100Rates();
  for (double m : {1.0, 64.0, 4096.0, 16384.0}) {
    const double t = GemmSeconds(d, m, 4096, 4096);
    CHECK(t >= 2.0 * m * 4096 * 4096 / d.peak_flops);
    CHECK(t >= 2.0 * (m * 4096 + 4096.0 * 4096 + m * 4096) / d.hbm_Bps);
  }
}

TEST_CASE("cost_model: more HBM bandwidth is never slower", "[cost_model]") {
  DeviceRates d = H100Rates();
  const double slow = GemmSeconds(d, 16, 4096, 4096) + MemorySeconds(d, 1e9);
  d.hbm_Bps *= 1.5;
  const double fast = GemmSeconds(d, 16, 4096, 4096) + MemorySeconds(d, 1e9);
  CHECK(fast < slow);
}

TEST_CASE("cost_model: attention backward takes 2.5x forward with the default kernel ratio", "[cost_model]") {
  DeviceRates d = H100Rates();
  d.attention_fwd_efficiency = 0.35;
  d.attention_bwd_efficiency = 0.35 * 0.8;
  const FwdBwd t = AttentionSeconds(d, 1e12, 4096);
  CHECK(t.bwd / t.fwd == Approx(2.5));
  CHECK(AttentionSeconds(d, 1e12, 512).fwd > t.fwd);   // short sequences run less efficiently
}

TEST_CASE("cost_model: a measured GEMM shape model replaces the tile model in closed form", "[cost_model]") {
  DeviceRates d;
  d.peak_flops = 989e12;
  d.hbm_Bps = 3.0e12;
  d.sm_count = 132;
  d.gemm_max_efficiency = 0.75;
  d.gemm_k0 = 234;
  d.gemm_half_outputs = 4.2e5;
  const double m = 8192, n = 512, k = 4096;
  CHECK_THAT(GemmEfficiency(d, m, n, k),
             Catch::Matchers::WithinRel(0.75 * k / (k + 234) * (m * n) / (m * n + 4.2e5), 1e-12));
  // Smooth: no wave steps between neighbouring N (the tile model has them).
  const double a = GemmEfficiency(d, m, 128 * 66, k), b = GemmEfficiency(d, m, 128 * 67, k);
  CHECK(b >= a);
  CHECK(b / a < 1.01);
  // Short K loops and few outputs cost efficiency; never above gemm_max.
  CHECK(GemmEfficiency(d, m, n, 256) < 0.55 * 0.75);
  CHECK(GemmEfficiency(d, 64, 64, k) < 0.01 * 0.75);
  CHECK(GemmEfficiency(d, 1e6, 1e6, 1e6) <= 0.75);
  // Absent (0) means the tile/wave model.
  DeviceRates tile = d;
  tile.gemm_k0 = tile.gemm_half_outputs = 0;
  CHECK(GemmEfficiency(tile, m, n, k) != GemmEfficiency(d, m, n, k));
}

// FP8/NVFP4 casts (precision.h): each linear adds exactly the cast traffic of
// its streamed operands at the HBM rate; a high-precision GEMM adds none and
// runs at the BF16 rate.
TEST_CASE("cost_model: low-precision casts add the input and output-gradient traffic", "[cost_model][precision]") {
  DeviceRates bf16 = H100Rates();
  bf16.attention_peak_flops = bf16.peak_flops;
  DeviceRates fp8 = bf16;
  fp8.peak_flops = 2.0 * bf16.peak_flops;
  const FwdBwd no_cast = LinearSeconds(fp8, 8192, 4096, 11008);
  fp8.quantize_bytes = 4.0;
  const FwdBwd cast = LinearSeconds(fp8, 8192, 4096, 11008);
  CHECK_THAT(cast.fwd - no_cast.fwd, Catch::Matchers::WithinRel(8192.0 * 4096 * 4.0 / fp8.hbm_Bps, 1e-9));
  CHECK_THAT(cast.bwd - no_cast.bwd, Catch::Matchers::WithinRel(8192.0 * 11008 * 4.0 / fp8.hbm_Bps, 1e-9));
  // The output head and routers: BF16 rate, no casts, whatever the recipe.
  const FwdBwd head = LinearSeconds(HighPrecisionRates(fp8), 8192, 4096, 32000);
  const FwdBwd head_bf16 = LinearSeconds(bf16, 8192, 4096, 32000);
  CHECK(head.fwd == head_bf16.fwd);
  CHECK(head.bwd == head_bf16.bwd);
  CHECK(LinearSeconds(fp8, 0, 4096, 4096).fwd == 0.0);
}

// The Hopper attention kernels against the FlashAttention-3 paper's causal,
// head-dim-128 forward curves (arXiv:2407.08608 Fig. 5, burst, H100 SXM5):
// megatron-core (TE -> cuDNN fused attention) 518 TFLOP/s at 4k, FA2 319.
TEST_CASE("cost_model: Hopper attention kernels reproduce the FA3 paper's causal forward rates", "[cost_model]") {
  const GpuProfile h100 = LoadGpuProfile("h100-sxm");
  auto forward_tflops = [&](const std::string& stack, double seq) {
    const SoftwareStack s = LoadSoftwareStack(stack);   // the kernel is a reference into it
    const AttentionKernel& k = s.AttentionFor(h100);
    DeviceRates d;
    d.peak_flops = h100.bf16_dense.si();
    d.attention_fwd_efficiency = k.forward_efficiency;   // burst, as the paper measured
    d.attention_bwd_efficiency = k.forward_efficiency * k.backward_ratio;
    const double full = 1e15;
    return 0.5 * full / AttentionSeconds(d, full, seq).fwd / 1e12;
  };
  CHECK(LoadSoftwareStack("megatron-core").AttentionFor(h100).name == "cudnn-fused-attn");
  CHECK(LoadSoftwareStack("nanotron").AttentionFor(h100).name == "flash-attn-2");
  CHECK_THAT(forward_tflops("megatron-core", 4096), Catch::Matchers::WithinRel(518.0, 0.02));
  CHECK_THAT(forward_tflops("megatron-core", 16384), Catch::Matchers::WithinRel(539.0, 1e-9));
  CHECK_THAT(forward_tflops("nanotron", 4096), Catch::Matchers::WithinRel(319.0, 0.05));
  // Longer sequences never run slower.
  CHECK(forward_tflops("megatron-core", 8192) > forward_tflops("megatron-core", 2048));
}

// Blackwell: megatron-core's cuDNN kernel and Blackwell Ultra's profile scales
// against the cudnn-frontend training SDPA benchmark they come from (burst,
// seq 8192, causal, head dim 128, NGC PyTorch 25.09 / cuDNN 9.13): B200 1171.3
// forward / 942.5 backward TFLOP/s, GB300 1495.7 / 1130.1 (backward TFLOP/s
// count 2.5x the causal forward FLOPs). B200 and GB200 have no scale (1).
TEST_CASE("cost_model: Blackwell attention reproduces cuDNN's measured rates on B200 and GB300", "[cost_model]") {
  const SoftwareStack mc = LoadSoftwareStack("megatron-core");
  auto rates = [&](const GpuProfile& g, double seq) {
    const AttentionKernel& k = mc.AttentionFor(g);
    const double fs = g.attention_forward_scale > 0 ? g.attention_forward_scale : 1.0;
    const double bs = g.attention_backward_scale > 0 ? g.attention_backward_scale : 1.0;
    DeviceRates d;
    d.peak_flops = g.bf16_dense.si();
    d.attention_fwd_efficiency = k.forward_efficiency * fs;   // burst, as measured
    d.attention_bwd_efficiency = k.forward_efficiency * k.backward_ratio * bs;
    const double full = 1e15;
    const FwdBwd t = AttentionSeconds(d, full, seq);
    return std::make_pair(0.5 * full / t.fwd / 1e12, 2.5 * 0.5 * full / t.bwd / 1e12);
  };
  const GpuProfile b200 = LoadGpuProfile("b200"), gb200 = LoadGpuProfile("gb200"), gb300 = LoadGpuProfile("gb300");
  CHECK(mc.AttentionFor(b200).name == "cudnn-fused-attn");
  CHECK(b200.attention_forward_scale == 0);
  CHECK(gb200.attention_forward_scale == 0);
  CHECK(LoadGpuProfile("h100-sxm").attention_forward_scale == 0);
  CHECK_THAT(rates(b200, 8192).first, Catch::Matchers::WithinRel(1171.278, 1e-9));
  CHECK_THAT(rates(b200, 8192).second, Catch::Matchers::WithinRel(942.509, 1e-9));
  // The profile's scales are rounded to 3 digits.
  CHECK_THAT(rates(gb300, 8192).first, Catch::Matchers::WithinRel(1495.674, 1e-3));
  CHECK_THAT(rates(gb300, 8192).second, Catch::Matchers::WithinRel(1130.076, 1e-3));
  // Blackwell Ultra's doubled SFU exp rate: a larger fraction of the same peak than GB200.
  CHECK(rates(gb300, 8192).first > rates(gb200, 8192).first);
}

