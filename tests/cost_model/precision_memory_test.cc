// cost_model: what FP8 / NVFP4 keep in memory (issue 15 part 6): the linear
// layers' saved inputs quantized, everything else at the BF16 bytes.
#include <map>
#include <tuple>
#include <string>

#include <catch2/catch.hpp>

#include "core/parallel_config.h"
#include "cost_model/evaluator.h"
#include "cost_model/memory.h"
#include "cost_model/precision.h"
#include "cost_model/precision_memory.h"
#include "cost_model/software_stack.h"
#include "tests/cost_model/test_specs.h"

using namespace parasim;
using Catch::Matchers::WithinRel;

namespace {

GpuProfile H100Fp8() {
  GpuProfile g = testing::H100();
  g.fp8_dense = TFlops(1979);   // H100 SXM datasheet, dense FP8
  return g;
}

GpuProfile B200() {
  GpuProfile g = testing::H100();
  g.name = "b200";
  g.architecture = "blackwell";
  g.compute_capability = 100;
  g.bf16_dense = TFlops(2250);   // B200 datasheet, dense
  g.fp8_dense = TFlops(4500);
  g.fp4_dense = TFlops(9000);
  g.hbm_capacity = GB(180);
  return g;
}

std::map<std::string, double> Breakdown(const GpuProfile& g, Precision p, const std::string& stack_name,
                                        const std::string& config = "dp=8,tp=1,pp=1,mbs=1,sharding=zero3,recompute=none") {
  JobSpec job = testing::Job(16, 4096);
  job.precision = p;
  job.stack = stack_name;
  const SoftwareStack stack = LoadSoftwareStack(stack_name);
  const Report r = AnalyticalEvaluator(testing::Llama2_7b(), testing::Dgx(g, 1), job, stack)
                       .Evaluate(ParseParallelConfig(config));
  REQUIRE(r.feasible);
  std::map<std::string, double> out(r.memory_breakdown_bytes.begin(), r.memory_breakdown_bytes.end());
  out["total"] = r.memory_per_gpu.si();
  return out;
}

}  // namespace

TEST_CASE("cost_model: quantized saved inputs: closed form per token", "[cost_model][precision][memory]") {
  const ModelSpec m = testing::Llama2_7b();
  const double h = 4096, ad = 4096, f = 11008;
  const SoftwareStack mc = LoadSoftwareStack("megatron-core");
  REQUIRE(mc.saves_quantized_inputs);
  const ActivationPerToken bf16 = LayerActivationPerToken(m, mc);
  for (const auto& [p, block, bytes] : {std::tuple{Precision::kFp8, false, 1.0}, std::tuple{Precision::kFp8, true, 1.03125},
                                        std::tuple{Precision::kFp4, false, 0.5625}}) {
    const ActivationPerToken q = QuantizedActivations(bf16, m, mc, p, block, 0.0);
    const double saved = 2.0 - bytes;
    CHECK_THAT(bf16.replicated - q.replicated, WithinRel(2 * h * saved, 1e-12));   // two norm outputs
    CHECK_THAT(bf16.split - q.split, WithinRel((ad + f) * saved, 1e-12));          // out-proj and down inputs
    CHECK_THAT(bf16.attention_out - q.attention_out, WithinRel(ad * saved, 1e-12));
    CHECK(q.layer_input == bf16.layer_input);   // the residual stream stays BF16
  }
  // NVFP4's BF16-kept blocks save nothing: a share s keeps (1 - s) of the saving.
  const ActivationPerToken q4 = QuantizedActivations(bf16, m, mc, Precision::kFp4, false, 0.25);
  CHECK_THAT(bf16.split - q4.split, WithinRel(0.75 * (ad + f) * (2.0 - 0.5625), 1e-12));
  // BF16 jobs, and stacks that save BF16 inputs, are unchanged.
  const ActivationPerToken same = QuantizedActivations(bf16, m, mc, Precision::kBf16, false, 0.0);
  CHECK(same.split == bf16.split);
  CHECK(same.replicated == bf16.replicated);
  const SoftwareStack fsdp = LoadSoftwareStack("pytorch-fsdp");
  CHECK_FALSE(fsdp.saves_quantized_inputs);
  CHECK(QuantizedActivations(bf16, m, fsdp, Precision::kFp8, false, 0.0).split == bf16.split);
}

TEST_CASE("cost_model: FP8 memory breakdown against the closed form (H100, per-tensor)",
          "[cost_model][precision][memory]") {
  auto bf16 = Breakdown(H100Fp8(), Precision::kBf16, "megatron-core");
  auto fp8 = Breakdown(H100Fp8(), Precision::kFp8, "megatron-core");
  // Llama-2-7B per token and layer (bf16): 8h replicated + 8h + 6f split
  // (Megatron-Core's fused SwiGLU keeps its input, not SiLU(gate));
  // FP8 saves 1 B on 2h + a·d + f of it.
  const double h = 4096, f = 11008;
  const double ratio = (16 * h + 6 * f - (3 * h + f)) / (16 * h + 6 * f);
  CHECK_THAT(fp8["activations"], WithinRel(bf16["activations"] * ratio, 1e-9));
  for (const char* same : {"weights", "gradients", "optimizer", "reserve", "cuda_context"}) {
    CHECK(fp8[same] == bf16[same]);   // master weights, gradients, Adam states as in BF16
  }
  CHECK(fp8["total"] < bf16["total"]);
  // A stack that saves BF16 inputs keeps the BF16 activations under FP8.
  auto fsdp_bf16 = Breakdown(H100Fp8(), Precision::kBf16, "pytorch-fsdp");
  auto fsdp_fp8 = Breakdown(H100Fp8(), Precision::kFp8, "pytorch-fsdp");
  CHECK(fsdp_fp8["activations"] == fsdp_bf16["activations"]);
}

TEST_CASE("cost_model: MXFP8 and NVFP4 memory breakdown against the closed form (B200)",
          "[cost_model][precision][memory]") {
  auto bf16 = Breakdown(B200(), Precision::kBf16, "megatron-core");
  auto fp8 = Breakdown(B200(), Precision::kFp8, "megatron-core");
  auto fp4 = Breakdown(B200(), Precision::kFp4, "megatron-core");
  const double h = 4096, f = 11008, all = 16 * h + 6 * f, linear = 3 * h + f;   // fused SwiGLU: 6f
  CHECK_THAT(fp8["activations"], WithinRel(bf16["activations"] * (all - linear * (2 - 1.03125)) / all, 1e-9));
  // 32 layers: round(0.16·32·0.2) = 1 first and round(0.16·32·0.8) = 4 last kept in BF16.
  const double share = 5.0 / 32.0;
  CHECK_THAT(fp4["activations"],
             WithinRel(bf16["activations"] * (all - (1 - share) * linear * (2 - 0.5625)) / all, 1e-9));
  CHECK(fp4["activations"] < fp8["activations"]);
  CHECK(fp8["activations"] < bf16["activations"]);
  CHECK(fp4["optimizer"] == bf16["optimizer"]);
  CHECK(fp4["total"] <= fp8["total"]);
  CHECK(fp8["total"] <= bf16["total"]);
}

TEST_CASE("cost_model: NVFP4's BF16 blocks count on the stages that hold them", "[cost_model][precision][memory]") {
  // pp=2, 1F1B: stage 0 (layers 0-15, two micro-batches in flight) holds the
  // one first BF16 block; the four last ones sit on stage 1. Stage 0 peaks.
  const std::string config = "dp=4,tp=1,pp=2,mbs=1,sharding=zero1,recompute=none,schedule=1f1b";
  auto bf16 = Breakdown(B200(), Precision::kBf16, "megatron-core", config);
  auto fp4 = Breakdown(B200(), Precision::kFp4, "megatron-core", config);
  const double h = 4096, f = 11008, all = 16 * h + 6 * f, linear = 3 * h + f;   // fused SwiGLU: 6f
  const double q = (all - linear * (2 - 0.5625)) / all;   // an NVFP4 layer against a BF16 one
  CHECK_THAT(fp4["activations"], WithinRel(bf16["activations"] * (15 * q + 1) / 16, 1e-9));
}

TEST_CASE("cost_model: Transformer Engine's cached quantized weights: closed form per element",
          "[cost_model][precision][memory]") {
  const SoftwareStack mc = LoadSoftwareStack("megatron-core");
  REQUIRE(mc.quantized_weight_cache);
  // Row-wise + column-wise copies: FP8 data + transpose (Hopper), MXFP8 and NVFP4 blocks both ways.
  CHECK(QuantizedWeightCacheBytes(mc, Precision::kFp8, false, false) == 2.0);
  CHECK(QuantizedWeightCacheBytes(mc, Precision::kFp8, true, false) == 2.0 * (1.0 + 1.0 / 32.0));
  CHECK(QuantizedWeightCacheBytes(mc, Precision::kFp4, false, false) == 2.0 * 0.5625);
  // None at BF16/FP32, with quantized primary weights, or on a stack without TE modules.
  CHECK(QuantizedWeightCacheBytes(mc, Precision::kBf16, false, false) == 0.0);
  CHECK(QuantizedWeightCacheBytes(mc, Precision::kFp32, false, false) == 0.0);
  CHECK(QuantizedWeightCacheBytes(mc, Precision::kFp8, false, true) == 0.0);
  for (const char* other : {"pytorch-fsdp", "pytorch-fsdp2", "deepspeed-zero", "megatron-lm-2021", "nanotron"}) {
    INFO(other);
    const SoftwareStack s = LoadSoftwareStack(other);
    CHECK_FALSE(s.quantized_weight_cache);
    CHECK(QuantizedWeightCacheBytes(s, Precision::kFp8, false, false) == 0.0);
  }
}

TEST_CASE("cost_model: cached FP8/NVFP4 weight copies in the memory breakdown", "[cost_model][precision][memory]") {
  // Llama-2-7B, tp=8, DDP (no --fp8-param-gather without a sharded optimizer):
  // every layer's weights on the GPU (attention and MLP ÷ 8, the two norms whole)
  // gain 2 B per element under FP8 on Hopper.
  const ModelSpec m = testing::Llama2_7b();
  const double h = 4096;
  const double layer = (static_cast<double>(m.LayerParameters()) - 2 * h) / 8 + 2 * h;
  const std::string ddp = "dp=1,tp=8,pp=1,mbs=1,sharding=ddp,recompute=full";
  auto bf16 = Breakdown(H100Fp8(), Precision::kBf16, "megatron-core", ddp);
  auto fp8 = Breakdown(H100Fp8(), Precision::kFp8, "megatron-core", ddp);
  CHECK_THAT(fp8["weights"] - bf16["weights"], WithinRel(2.0 * 32 * layer, 1e-9));
  // NVFP4 on B200: 0.5625 B each way on the 27 NVFP4 layers (1 first, 4 last in BF16).
  auto b_bf16 = Breakdown(B200(), Precision::kBf16, "megatron-core", ddp);
  auto b_fp4 = Breakdown(B200(), Precision::kFp4, "megatron-core", ddp);
  CHECK_THAT(b_fp4["weights"] - b_bf16["weights"], WithinRel(1.125 * 27 * layer, 1e-9));
  // With a sharded optimizer the weights are FP8 themselves (--fp8-param-gather): no extra copy.
  const std::string zero1 = "dp=1,tp=8,pp=1,mbs=1,sharding=zero1,recompute=full";
  CHECK(Breakdown(H100Fp8(), Precision::kFp8, "megatron-core", zero1)["weights"] ==
        Breakdown(H100Fp8(), Precision::kBf16, "megatron-core", zero1)["weights"]);
}

// NVFP4's BF16 blocks are the stack's setting (SoftwareStack::nvfp4_bf16_layer_share):
// one share prices the GEMM rate, the cast traffic and the saved activations.
TEST_CASE("cost_model: NVFP4's BF16 layer share: rates, time and memory from the one setting",
          "[cost_model][precision][memory]") {
  const GpuProfile b200 = B200();
  // The default is the paper's recipe, bit for bit (0.16 of 62 -> 2 + 8).
  CHECK(SoftwareStack{}.nvfp4_bf16_layer_share == kNvfp4Bf16LayerShare);
  CHECK(LoadSoftwareStack("megatron-core").nvfp4_bf16_layer_share == kNvfp4Bf16LayerShare);
  const PrecisionRates dflt = PrecisionRatesOf(b200, Precision::kFp4, 62);
  const PrecisionRates same = PrecisionRatesOf(b200, Precision::kFp4, 62, false, kNvfp4Bf16LayerShare);
  CHECK(dflt.gemm_peak == same.gemm_peak);
  CHECK(dflt.quantize_bytes == same.quantize_bytes);
  // Share 0: every block in NVFP4, at the FP4 peak, casting every operand.
  const Bf16Layers none = Nvfp4Bf16Layers(80, 0.0);
  CHECK(none.first + none.last == 0);
  const PrecisionRates all_fp4 = PrecisionRatesOf(b200, Precision::kFp4, 80, false, 0.0);
  CHECK_THAT(all_fp4.gemm_peak, WithinRel(b200.fp4_dense.si(), 1e-12));
  CHECK(all_fp4.quantize_bytes == kNvfp4CastBytes);
  // Share 1: every block in BF16, at the BF16 peak, casting nothing.
  const PrecisionRates all_bf16 = PrecisionRatesOf(b200, Precision::kFp4, 80, false, 1.0);
  CHECK_THAT(all_bf16.gemm_peak, WithinRel(b200.bf16_dense.si(), 1e-12));
  CHECK(all_bf16.quantize_bytes == 0.0);
  // A share never moves FP8 or BF16.
  CHECK(PrecisionRatesOf(b200, Precision::kFp8, 80, false, 0.5).gemm_peak == b200.fp8_dense.si());
  CHECK(PrecisionRatesOf(b200, Precision::kBf16, 80, false, 0.5).gemm_peak == b200.bf16_dense.si());

  // Through the evaluator: more BF16 blocks, a slower step and more saved activations.
  JobSpec job = testing::Job(16, 4096);
  job.precision = Precision::kFp4;
  job.stack = "megatron-core";
  const ParallelConfig c = ParseParallelConfig("dp=8,tp=1,pp=1,mbs=1,sharding=zero3,recompute=none");
  auto price = [&](double share) {
    SoftwareStack s = LoadSoftwareStack("megatron-core");
    s.nvfp4_bf16_layer_share = share;
    const Report r = AnalyticalEvaluator(testing::Llama2_7b(), testing::Dgx(b200, 1), job, s).Evaluate(c);
    REQUIRE(r.feasible);
    return r;
  };
  const Report r0 = price(0.0), r16 = price(kNvfp4Bf16LayerShare), r50 = price(0.5), r100 = price(1.0);
  CHECK(r0.step_time.si() < r16.step_time.si());
  CHECK(r16.step_time.si() < r50.step_time.si());
  CHECK(r50.step_time.si() < r100.step_time.si());
  const auto act = [](const Report& r) {
    for (const auto& [k, v] : r.memory_breakdown_bytes)
      if (k == "activations") return v;
    FAIL("no activations entry");
    return 0.0;
  };
  CHECK(act(r0) < act(r16));
  CHECK(act(r16) < act(r50));
  CHECK(act(r50) < act(r100));
  // The closed form at share 0: every block saves NVFP4 inputs (the B200 breakdown test's form).
  const auto bf16 = Breakdown(b200, Precision::kBf16, "megatron-core");
  const double h = 4096, f = 11008, all = 16 * h + 6 * f, linear = 3 * h + f;
  CHECK_THAT(act(r0), WithinRel(bf16.at("activations") * (all - linear * (2 - 0.5625)) / all, 1e-9));
  // The default stack prices as the share it carries.
  CHECK(price(LoadSoftwareStack("megatron-core").nvfp4_bf16_layer_share).step_time.si() == r16.step_time.si());
}
