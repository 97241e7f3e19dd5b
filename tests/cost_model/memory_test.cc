#include <catch2/catch.hpp>

#include "cost_model/memory.h"
#include "test_specs.h"

using namespace parasim;
using Catch::Matchers::WithinRel;

TEST_CASE("cost_model: GPT layer activations match Korthikanti et al. 2022", "[cost_model]") {
  const ModelSpec m = testing::Gpt(12288, 96, 96, 51200);
  const ActivationPerToken a = LayerActivationPerToken(m, /*dropout=*/true);
  const double h = 12288, tokens = 2048.0 * 1;
  // Flash attention removes the 5as/h term: 34·s·b·h without TP.
  CHECK_THAT(LayerActivationBytes(a, tokens, 1, false, RecomputeMode::kNone), WithinRel(34.0 * tokens * h, 1e-12));
  // TP without SP: sbh·(10 + 24/t); with SP: 34·sbh/t (their eq. 2 and 4, s² terms dropped).
  CHECK_THAT(LayerActivationBytes(a, tokens, 8, false, RecomputeMode::kNone),
             WithinRel(tokens * h * (10.0 + 24.0 / 8), 1e-12));
  CHECK_THAT(LayerActivationBytes(a, tokens, 8, true, RecomputeMode::kNone), WithinRel(34.0 * tokens * h / 8, 1e-12));
  // Full recomputation keeps the layer input only: 2sbh (÷ t with SP).
  CHECK_THAT(LayerActivationBytes(a, tokens, 8, true, RecomputeMode::kFull), WithinRel(2.0 * tokens * h / 8, 1e-12));
}

TEST_CASE("cost_model: SwiGLU layer keeps 16h + 8f bytes per token", "[cost_model]") {
  const ActivationPerToken a = LayerActivationPerToken(testing::Llama2_7b());
  const double h = 4096, f = 11008;
  CHECK(a.replicated + a.split == 8 * h + 8 * h + 8 * f);   // norms/inputs, Q K V O, MLP
  CHECK(LayerActivationBytes(a, 1, 1, false, RecomputeMode::kSelective) <
        LayerActivationBytes(a, 1, 1, false, RecomputeMode::kNone));
}

TEST_CASE("cost_model: pipeline micro-batches in flight", "[cost_model]") {
  CHECK(MicroBatchesInFlight(PipelineSchedule::k1F1B, 1, 16, 1, 0) == 1);
  CHECK(MicroBatchesInFlight(PipelineSchedule::k1F1B, 4, 16, 1, 0) == 4);
  CHECK(MicroBatchesInFlight(PipelineSchedule::k1F1B, 4, 16, 1, 3) == 1);
  CHECK(MicroBatchesInFlight(PipelineSchedule::k1F1B, 8, 2, 1, 0) == 2);
  CHECK(MicroBatchesInFlight(PipelineSchedule::kGpipe, 4, 16, 1, 0) == 16);
  CHECK_THAT(MicroBatchesInFlight(PipelineSchedule::kInterleaved, 4, 16, 2, 0), WithinRel(4.0 + 3.0 / 2, 1e-12));
}

TEST_CASE("cost_model: zero2 memory falls with dp, each doubling saving less (F12)", "[cost_model]") {
  const SoftwareStack s = LoadSoftwareStack("pytorch-fsdp");
  MemoryInputs in;
  in.sharding = ShardingMode::kZero2;
  in.params.dense = 6.74e9;
  in.params.largest_layer = 2.02e8;
  in.params.layers = 32;
  in.activation_bytes = 32 * 37.5 * 8192 * 4096;
  double previous = 0, previous_saving = 0;
  for (int dp = 8; dp <= 2048; dp *= 2) {
    in.shard_group = dp;
    const double total = EstimateMemory(s, in).total;
    if (previous > 0) {
      const double saving = previous - total;
      CHECK(saving > 0);
      if (previous_saving > 0) CHECK(saving < previous_saving);
      previous_saving = saving;
    }
    previous = total;
  }
}

TEST_CASE("cost_model: sharding modes order memory ddp > zero1 > zero2-replicated > zero3", "[cost_model]") {
  const SoftwareStack s = LoadSoftwareStack("megatron-core");
  MemoryInputs in;
  in.params.dense = 7e9;
  in.params.largest_layer = 2e8;
  in.shard_group = 64;
  auto total = [&](ShardingMode m) {
    in.sharding = m;
    return EstimateMemory(s, in).total;
  };
  const double ddp = total(ShardingMode::kDdp), z1 = total(ShardingMode::kZero1),
               z2r = total(ShardingMode::kZero2Replicated), z2 = total(ShardingMode::kZero2),
               z3 = total(ShardingMode::kZero3);
  CHECK(ddp > z1);
  CHECK(z1 > z2r);
  CHECK(z2 > z3);
  // Megatron DDP: 2 + 4 + 12 = 18 bytes per parameter, plus the reserve.
  CHECK_THAT(ddp - s.reserve_bytes, WithinRel(18.0 * 7e9, 1e-12));
}
