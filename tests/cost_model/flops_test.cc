#include <catch2/catch.hpp>

#include "cost_model/flops.h"
#include "test_specs.h"

using namespace parasim;
using Catch::Matchers::WithinRel;

TEST_CASE("cost_model: Llama-2-7B model FLOPs per token is 6 N_matmul + 12 L h s", "[cost_model]") {
  const ModelFlops f = CountModelFlops(testing::Llama2_7b());
  // N_matmul = 32·(4·4096² + 3·4096·11008) + 4096·32000 (LM head once, no input embedding).
  const double n_matmul = 32.0 * (4.0 * 4096 * 4096 + 3.0 * 4096 * 11008) + 4096.0 * 32000;
  CHECK(f.n_matmul == n_matmul);
  CHECK(f.n_matmul == 6607077376.0);
  CHECK(f.ModelFlopsPerToken(4096) == 6.0 * n_matmul + 12.0 * 32 * 4096 * 4096);
  CHECK(f.ModelFlopsPerToken(4096) == 46084915200.0);
}

TEST_CASE("cost_model: per-op forward FLOPs add up to a third of the MFU count", "[cost_model]") {
  const ModelSpec m = testing::Llama2_7b();
  const ModelFlops f = CountModelFlops(m);
  const LayerOpFlops one = LayerForwardFlops(f, 1.0, 4096.0, 1);
  const double forward = m.num_layers * one.Total() + 2.0 * f.w.lm_head;
  CHECK_THAT(3.0 * forward, WithinRel(f.ModelFlopsPerToken(4096), 1e-12));
}

TEST_CASE("cost_model: tensor parallelism splits every matmul's FLOPs exactly", "[cost_model]") {
  const ModelFlops f = CountModelFlops(testing::Llama2_7b());
  const LayerOpFlops whole = LayerForwardFlops(f, 8192, 4096, 1);
  for (int tp : {2, 4, 8}) {
    const LayerOpFlops part = LayerForwardFlops(f, 8192, 4096, tp);
    CHECK(part.qkv * tp == whole.qkv);
    CHECK(part.out_proj * tp == whole.out_proj);
    CHECK(part.mlp * tp == whole.mlp);
    CHECK(part.attention * tp == whole.attention);
  }
}

TEST_CASE("cost_model: HFU FLOPs add the recomputed forward, never less than MFU", "[cost_model]") {
  const ModelFlops f = CountModelFlops(testing::Llama2_7b());
  const double model = f.ModelFlopsPerToken(4096);
  CHECK(f.HardwareFlopsPerToken(4096, RecomputeMode::kNone) == model);
  CHECK(f.HardwareFlopsPerToken(4096, RecomputeMode::kSelective) == model + 32.0 * 4 * 4096 * 4096);
  // Full recompute: one more forward of every layer (not the LM head).
  CHECK_THAT(f.HardwareFlopsPerToken(4096, RecomputeMode::kFull),
             WithinRel(model + 32.0 * (2.0 * f.w.Layer() + 4.0 * 4096 * 4096), 1e-12));
}

TEST_CASE("cost_model: GQA and MoE count only the weights a token uses", "[cost_model]") {
  ModelSpec m = testing::Llama2_7b();
  m.num_kv_heads = 8;
  const ModelFlops gqa = CountModelFlops(m);
  CHECK(gqa.w.kv == 2.0 * 4096 * 8 * 128);
  m.num_experts = 8;
  m.experts_per_token = 2;
  m.moe_ffn_hidden_size = 14336;
  const ModelFlops moe = CountModelFlops(m);
  CHECK(moe.w.mlp == 2.0 * 3 * 4096 * 14336);
  CHECK(moe.w.expert_total == 8.0 * 3 * 4096 * 14336);
  CHECK(moe.w.router == 4096.0 * 8);
}
