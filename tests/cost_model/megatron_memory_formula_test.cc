// Megatron-Core's own memory accounting (NVIDIA/Megatron-LM
// megatron/training/theoretical_memory_usage.py; Korthikanti et al. 2022) as
// closed forms the memory model must reproduce: the interleaved schedule's
// in-flight micro-batches per rank, the weight + optimizer bytes per parameter
// of the distributed optimizer (nothing sharded at dp = 1) and with bf16 main
// gradients (NeMo's optim.grad_sync_dtype: bf16 → grad_reduce_in_fp32 False).
#include <catch2/catch.hpp>

#include "cost_model/memory.h"
#include "test_specs.h"

using namespace parasim;
using Catch::Matchers::WithinRel;

namespace {

// Chunk forwards rank `stage` has run but not yet run backward for, at most,
// counted by stepping Megatron's interleaved order: warm-up forwards, then
// one forward + one backward per step, then the cool-down backwards.
double SimulatedPeakChunks(int p, int m, int v, int stage) {
  const int total = m * v;
  int warmup = m == p ? total : std::min(total, 2 * (p - stage - 1) + (v - 1) * p);
  int held = 0, peak = 0, forwards = 0;
  for (; forwards < warmup; ++forwards) peak = std::max(peak, ++held);
  for (; forwards < total; ++forwards) {
    peak = std::max(peak, ++held);   // the steady state's forward, then its backward
    --held;
  }
  return peak;
}

}  // namespace

TEST_CASE("cost_model: interleaved 1F1B in-flight micro-batches match Megatron", "[cost_model][memory]") {
  for (int p : {2, 4, 8}) {
    for (int v : {2, 3, 6, 12}) {
      const int m = 8 * p;
      // Stage 0: theoretical_memory_usage.py's penalty 1 + (p − 1)/(p·v) on all
      // p·(L/p) layers = p + (p − 1)/v stage-equivalents.
      const double penalty = 1.0 + (p - 1.0) / (p * v);
      CHECK_THAT(MicroBatchesInFlight(PipelineSchedule::kInterleaved, p, m, v, 0), WithinRel(p * penalty, 1e-12));
      double previous = 1e300;
      for (int s = 0; s < p; ++s) {
        const double held = MicroBatchesInFlight(PipelineSchedule::kInterleaved, p, m, v, s);
        CHECK_THAT(held, WithinRel(SimulatedPeakChunks(p, m, v, s) / static_cast<double>(v), 1e-12));
        CHECK(held < previous);   // earlier ranks run more warm-up forwards
        previous = held;
        // Ranks s and p − 1 − s differ by 2·(p − 1 − 2s) chunks around p.
        const double mirror = MicroBatchesInFlight(PipelineSchedule::kInterleaved, p, m, v, p - 1 - s);
        CHECK_THAT(held + mirror, WithinRel(2.0 * p, 1e-12));
      }
      // The last rank holds p − (p − 1)/v: fewer than the non-interleaved stage 0's p.
      CHECK_THAT(MicroBatchesInFlight(PipelineSchedule::kInterleaved, p, m, v, p - 1), WithinRel(p - (p - 1.0) / v, 1e-12));
    }
  }
  // m = p: Megatron runs every chunk forward first; m < warm-up: never more than m.
  CHECK(MicroBatchesInFlight(PipelineSchedule::kInterleaved, 4, 4, 2, 3) == 4);
  CHECK(MicroBatchesInFlight(PipelineSchedule::kInterleaved, 8, 5, 12, 0) == 5);
}

TEST_CASE("cost_model: interleaved stage-0 activations equal Megatron's theoretical formula", "[cost_model][memory]") {
  // GPT-3 175B shape with dropout (Korthikanti's 34·s·b·h per layer, ÷ t with SP).
  const ModelSpec model = testing::Gpt(12288, 96, 96, 51200);
  const ActivationPerToken a = LayerActivationPerToken(model, /*dropout=*/true);
  const int p = 8, v = 6, t = 4, layers = 96;
  const double s = 2048, b = 1, h = 12288;
  const double ours = MicroBatchesInFlight(PipelineSchedule::kInterleaved, p, 64, v, 0) * (layers / p) *
                      LayerActivationBytes(a, s * b, t, true, RecomputeMode::kNone);
  // theoretical_memory_usage.py, transformer layers only: 34·sbh·L·penalty / t.
  const double megatron = 34.0 * s * b * h * layers * (1.0 + (p - 1.0) / (p * v)) / t;
  CHECK_THAT(ours, WithinRel(megatron, 1e-12));
}

TEST_CASE("cost_model: Megatron distributed optimizer bytes per parameter", "[cost_model][memory]") {
  SoftwareStack s = LoadSoftwareStack("megatron-core");
  const double n = 4e9;
  MemoryInputs in;
  in.sharding = ShardingMode::kZero1;
  in.params.dense = n;
  in.params.largest_layer = n / 20;
  auto per_param = [&](int dp) {
    in.shard_group = dp;
    const MemoryEstimate e = EstimateMemory(s, in);
    return (e.weights + e.grads + e.optimizer) / n;
  };
  // theoretical_memory_usage.py: 18 without the distributed optimizer, 6 + 12/dp with it.
  CHECK_THAT(per_param(1), WithinRel(18.0, 1e-12));   // dp = 1: nothing to shard
  CHECK_THAT(per_param(2), WithinRel(6.0 + 12.0 / 2, 1e-12));
  CHECK_THAT(per_param(64), WithinRel(6.0 + 12.0 / 64, 1e-12));
  // grad_reduce_in_fp32 = False: the gradient buffer takes the bf16 param dtype.
  s.grad_bytes = 2;
  s.comm_grad_bytes = 2;
  CHECK_THAT(per_param(2), WithinRel(4.0 + 12.0 / 2, 1e-12));
  CHECK_THAT(per_param(1), WithinRel(16.0, 1e-12));
}

TEST_CASE("cost_model: Megatron-Core's fused SwiGLU keeps its input, not SiLU(gate)", "[cost_model][memory]") {
  const ModelSpec m = testing::Llama2_7b();
  const double h = 4096, f = 11008, ad = 4096, gd = 4096;
  // fused_bias_swiglu.py SwiGLUFunction saves the fc1 output (gate and up, 4f
  // bytes); fc2 saves its input (2f): 6f, where the unfused chain keeps 8f.
  const ActivationPerToken fused = LayerActivationPerToken(m, LoadSoftwareStack("megatron-core"));
  CHECK(fused.split == 2 * ad + 4 * gd + 2 * ad + 6 * f);
  CHECK(fused.replicated == 8 * h);
  const ActivationPerToken unfused = LayerActivationPerToken(m, LoadSoftwareStack("pytorch-fsdp"));
  CHECK(unfused.split == 2 * ad + 4 * gd + 2 * ad + 8 * f);
  // A GELU MLP has nothing to fuse away.
  const ModelSpec gpt = testing::Gpt(12288, 96, 96, 51200);
  CHECK(LayerActivationPerToken(gpt, LoadSoftwareStack("megatron-core")).split ==
        LayerActivationPerToken(gpt, LoadSoftwareStack("pytorch-fsdp")).split);
}
