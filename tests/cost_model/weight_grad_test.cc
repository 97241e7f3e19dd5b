// cost_model: a zero-bubble schedule's weight-gradient pass (W) runs the dW
// GEMMs only: half the backward's own GEMMs; the attention core's backward
// and the recomputed forward stay in the input-gradient pass.
#include <catch2/catch.hpp>

#include "cost_model/layer_cost.h"
#include "cost_model/software_stack.h"

using namespace parasim;

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
  SoftwareStack megatron;   // attention-only selective recompute
  megatron.sac_matmul_recompute_fraction = 0;
  SoftwareStack sac;        // op-level SAC re-running half the matmuls
  sac.sac_matmul_recompute_fraction = 0.5;
  const double g = 1.0, a = 0.4;
  UnitCost none = Layer(g, a);
  // No recomputation: the forward's GEMM time (dW has its FLOPs), no attention.
  CHECK(WeightGradSeconds(none, RecomputeMode::kNone, megatron) == Approx(g).epsilon(1e-12));
  // Full: the backward re-runs the forward; W does not grow.
  UnitCost full = none;
  full.bwd += full.fwd;
  CHECK(WeightGradSeconds(full, RecomputeMode::kFull, megatron) == Approx(g).epsilon(1e-12));
  // Attention-only selective: the attention core again, in B.
  UnitCost selective = none;
  selective.bwd.attention += a;
  CHECK(WeightGradSeconds(selective, RecomputeMode::kSelective, megatron) == Approx(g).epsilon(1e-12));
  // Op-level SAC: half the matmuls again, in B.
  UnitCost op_level = none;
  op_level.bwd.gemm += 0.5 * g;
  CHECK(WeightGradSeconds(op_level, RecomputeMode::kSelective, sac) == Approx(g).epsilon(1e-12));
  // Partial full recompute: a stage's mean layer, 3 of 4 layers recomputed.
  UnitCost mean = none;
  mean.bwd.gemm += 0.75 * g;
  CHECK(WeightGradSeconds(mean, RecomputeMode::kFull, megatron, 0.75) == Approx(g).epsilon(1e-12));
  // The embedding (no GEMMs): no W.
  UnitCost emb;
  emb.bwd.elementwise = 0.2;
  CHECK(WeightGradSeconds(emb, RecomputeMode::kNone, megatron) == 0.0);
  // Always less than the backward it comes out of.
  CHECK(WeightGradSeconds(full, RecomputeMode::kFull, megatron) < full.bwd.Total());
}
