// cost_model: a zero-bubble schedule's weight-gradient pass (W) runs the dW
// GEMMs only: half the backward's own GEMMs; the attention core's backward
// and the recomputed forward stay in the input-gradient pass.
#include <catch2/catch.hpp>

#include "core/parallel_config.h"
#include "cost_model/layer_cost.h"
#include "cost_model/software_stack.h"
#include "test_specs.h"

using namespace parasim;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

namespace {

// A layer with forward GEMMs G and attention A: backward GEMMs 2G, attention 2A.
UnitCost Layer(double g, double a) {
  UnitCost u;
  u.fwd.gemm = g;
  u.fwd.attention = a;
  u.bwd.gemm = 2 * g;
  u.bwd.attention = 2 * a;
  u.bwd.elementwise = 0.3;
  return u;
}

}  // namespace

TEST_CASE("cost_model: W is half the backward's own GEMMs", "[cost_model][zero_bubble]") {
  const double g = 1.0, a = 0.4;
  UnitCost none = Layer(g, a);
  // No recomputation: the forward's GEMM time (dW has its FLOPs), no attention.
  CHECK(WeightGradSeconds(none) == Approx(g).epsilon(1e-12));
  // Full: the backward re-runs the forward; W does not grow.
  UnitCost full = none;
  full.bwd += full.fwd;
  full.recomputed_gemm = full.fwd.gemm;
  full.recomputed_attention = full.fwd.attention;
  CHECK(WeightGradSeconds(full) == Approx(g).epsilon(1e-12));
  // Attention-only selective: the attention core again, in B.
  UnitCost selective = none;
  selective.bwd.attention += a;
  selective.recomputed_attention = a;
  CHECK(WeightGradSeconds(selective) == Approx(g).epsilon(1e-12));
  // Op-level SAC: half the matmuls again, in B.
  UnitCost op_level = none;
  op_level.bwd.gemm += 0.5 * g;
  op_level.recomputed_gemm = 0.5 * g;
  CHECK(WeightGradSeconds(op_level) == Approx(g).epsilon(1e-12));
  // Partial full recompute: a stage's mean layer, 3 of 4 layers recomputed
  // (AddScaled of its recomputed and kept layers, as the stage timing blends them).
  UnitCost mean;
  AddScaled(mean, full, 0.75);
  AddScaled(mean, none, 0.25);
  CHECK(mean.recomputed_gemm == Approx(0.75 * g).epsilon(1e-12));
  CHECK(WeightGradSeconds(mean) == Approx(g).epsilon(1e-12));
  // The embedding (no GEMMs): no W.
  UnitCost emb;
  emb.bwd.elementwise = 0.2;
  CHECK(WeightGradSeconds(emb) == 0.0);
  // Always less than the backward it comes out of.
  CHECK(WeightGradSeconds(full) < full.bwd.Total());
}

// LayerCost's recomputation rule (RecomputeScopeOf) sets what of the
// backward is the recomputed forward: whatever the mode, W and the
// backward's own attention core are those of the layer without recompute.
TEST_CASE("cost_model: LayerCost's recomputed GEMMs and attention leave W and the own backward attention unchanged",
          "[cost_model][zero_bubble]") {
  const ModelSpec model = testing::Llama2_7b();
  const SoftwareStack megatron = LoadSoftwareStack("megatron-core");   // attention-only selective
  const SoftwareStack titan = LoadSoftwareStack("torchtitan");         // op-level SAC
  REQUIRE(megatron.sac_matmul_recompute_fraction == 0);
  REQUIRE(titan.sac_matmul_recompute_fraction > 0);
  const double T = 4096;
  for (const SoftwareStack* stack : {&megatron, &titan}) {
    const LayerCostModel m = MakeLayerCostModel(model, testing::NominalH100Rates(), *stack, 4096);
    const UnitCost none = TransformerLayerCost(m, ParseParallelConfig("dp=1,tp=2"), T);
    CHECK(none.recomputed_gemm == 0.0);
    CHECK(none.recomputed_attention == 0.0);
    for (const char* mode : {"selective", "full"}) {
      INFO(stack->name << " recompute=" << mode);
      const ParallelConfig c = ParseParallelConfig(StrCat("dp=1,tp=2,recompute=", mode));
      const UnitCost u = TransformerLayerCost(m, c, T);
      const RecomputeScope scope = RecomputeScopeOf(c.recompute, *stack);
      // The forward is the same; the backward grows by the recomputed part.
      CHECK(u.fwd.gemm == none.fwd.gemm);
      CHECK_THAT(u.bwd.gemm - none.bwd.gemm, WithinAbs(u.recomputed_gemm, 1e-15));
      CHECK_THAT(u.bwd.attention - none.bwd.attention, WithinAbs(u.recomputed_attention, 1e-15));
      switch (scope) {
        case RecomputeScope::kWholeForward:
          CHECK(u.recomputed_gemm == u.fwd.gemm);
          CHECK(u.recomputed_attention == u.fwd.attention);
          break;
        case RecomputeScope::kSacOps:
          CHECK_THAT(u.recomputed_gemm, WithinRel(stack->sac_matmul_recompute_fraction * u.fwd.gemm, 1e-12));
          CHECK(u.recomputed_attention == 0.0);
          break;
        case RecomputeScope::kAttentionCore:
          CHECK(u.recomputed_gemm == 0.0);
          CHECK(u.recomputed_attention == u.fwd.attention);
          break;
        case RecomputeScope::kNothing: FAIL("recompute=" << mode << " recomputes nothing"); break;
      }
      CHECK(RecomputesAttention(c.recompute, *stack) == (u.recomputed_attention > 0));
      CHECK_THAT(WeightGradSeconds(u), WithinRel(WeightGradSeconds(none), 1e-12));
      CHECK_THAT(OwnBackwardAttention(u), WithinRel(OwnBackwardAttention(none), 1e-12));
    }
  }
}
