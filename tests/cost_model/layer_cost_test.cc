#include <catch2/catch.hpp>

#include "core/parallel_config.h"
#include "cost_model/layer_cost.h"
#include "cost_model/software_stack.h"
#include "test_specs.h"

using namespace parasim;
using Catch::Matchers::WithinRel;

namespace {
DeviceRates H100Rates() {
  DeviceRates d;
  d.peak_flops = 989e12;
  d.hbm_Bps = 3.0e12;
  d.sm_count = 132;
  return d;
}
}  // namespace

TEST_CASE("cost_model: context parallelism adds exactly the ring merge's HBM traffic", "[cost_model]") {
  const ModelSpec model = testing::Llama2_7b();
  const SoftwareStack stack = LoadSoftwareStack("pytorch-fsdp");
  const LayerCostModel m = MakeLayerCostModel(model, H100Rates(), stack, 4096);
  // Same tokens per GPU (2 × 4096 / cp), same kernels: only the merge differs.
  const double h = static_cast<double>(model.hidden_size);
  for (int cp : {2, 4, 8}) {
    const double T = 8192.0 / cp;
    ParallelConfig base = ParseParallelConfig("dp=1");
    ParallelConfig ring = ParseParallelConfig(StrCat("dp=1,cp=", cp));
    const UnitCost a = TransformerLayerCost(m, base, T);
    const UnitCost b = TransformerLayerCost(m, ring, T);
    // Llama-2-7B is multi-head: q, k, v and the output are T×h each.
    const double fwd = T * h * (stack.cp_merge_bytes_fixed + (cp - 1) * stack.cp_merge_bytes_per_step);
    const double bwd = 3.0 * T * h * (stack.cp_grad_bytes_fixed + cp * stack.cp_grad_bytes_per_step);
    CHECK_THAT(b.fwd_bytes - a.fwd_bytes, WithinRel(fwd, 1e-12));
    CHECK_THAT(b.bwd_bytes - a.bwd_bytes, WithinRel(bwd, 1e-12));
    CHECK_THAT(b.fwd.elementwise - a.fwd.elementwise, WithinRel(fwd / 3.0e12, 1e-9));
    // Forward FLOPs are the same work split differently (attention over the full keys).
    CHECK_THAT(b.fwd_flops, WithinRel(a.fwd_flops, 1e-12));
  }
  // More ring steps, more merging per token.
  const UnitCost c2 = TransformerLayerCost(m, ParseParallelConfig("dp=1,cp=2"), 2048);
  const UnitCost c4 = TransformerLayerCost(m, ParseParallelConfig("dp=1,cp=4"), 2048);
  CHECK(c4.fwd.elementwise > c2.fwd.elementwise);
  CHECK(c4.bwd.elementwise > c2.bwd.elementwise);
}
