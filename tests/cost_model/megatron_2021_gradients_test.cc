// The 2021 Megatron-LM code's fp16 gradients (megatron-lm-2021): autograd
// adds every micro-batch's fp16 weight gradient into param.grad (6 B per
// local parameter, eager), and the data-parallel all-reduce carries fp16;
// the 2022 code (tests/data/stacks/megatron-lm-2022.yaml, bf16) fuses the
// accumulation into the wgrad GEMM and reduces in fp32.
#include <catch2/catch.hpp>

#include "core/parallel_config.h"
#include "cost_model/comm_plan.h"
#include "cost_model/layer_cost.h"
#include "cost_model/software_stack.h"
#include "tests/cost_model/collective_test_util.h"
#include "test_specs.h"

using namespace parasim;
using Catch::Matchers::WithinRel;

namespace {
constexpr double kEager = testing::kEagerMemoryBound;
}  // namespace

TEST_CASE("cost_model: megatron-lm-2021 accumulates fp16 gradients per micro-batch, 6 B per local parameter",
          "[cost_model]") {
  const ModelSpec model = testing::Gpt(4096, 4, 32, 51200);
  const SoftwareStack sc21 = LoadSoftwareStack("megatron-lm-2021");
  const SoftwareStack later = LoadSoftwareStack(testing::DataPath("stacks/megatron-lm-2022.yaml"));
  REQUIRE(later.grad_fold_passes == 0);
  const LayerCostModel a = MakeLayerCostModel(model, testing::NominalH100Rates(), sc21, 2048);
  const LayerCostModel b = MakeLayerCostModel(model, testing::NominalH100Rates(), later, 2048);
  for (const char* cfg : {"dp=1", "dp=1,tp=2", "dp=1,tp=4,pp=2"}) {
    INFO(cfg);
    const ParallelConfig c = ParseParallelConfig(cfg);
    for (double tokens : {2048.0, 8192.0}) {
      const UnitCost x = TransformerLayerCost(a, c, tokens);
      const UnitCost y = TransformerLayerCost(b, c, tokens);
      CHECK_THAT(x.bwd_bytes - y.bwd_bytes, WithinRel(6.0 * kEager * x.params, 1e-12));
      CHECK(x.fwd_bytes == y.fwd_bytes);
    }
  }
  // The gradient all-reduce moves half the bytes of the fp32 one.
  CommPlanInputs in;
  in.tokens = 2048;
  in.hidden = 4096;
  in.layer_dense_params = 1e8;
  in.num_micro_batches = 4;
  const ParallelConfig c = ParseParallelConfig("dp=8,sharding=ddp");
  const CommPlan p21 = BuildCommPlan(c, sc21, in);
  const CommPlan p22 = BuildCommPlan(c, later, in);
  REQUIRE(p21.layer.size() == 1);
  REQUIRE(p22.layer.size() == 1);
  CHECK(p21.layer[0].size.si() == 2e8);
  CHECK(p22.layer[0].size.si() == 4e8);
}
