// DeepSpeed's BF16_Optimizer folds every micro-batch's bf16 gradients into
// the fp32 ones (hp_grad.add_(lp.grad.to(fp32)): 18 B per local parameter,
// eager); the megatron-deepspeed preset prices it, fp32 stacks do not.
#include <catch2/catch.hpp>

#include "core/parallel_config.h"
#include "cost_model/layer_cost.h"
#include "cost_model/precision.h"
#include "cost_model/software_stack.h"
#include "tests/cost_model/collective_test_util.h"
#include "test_specs.h"

using namespace parasim;
using Catch::Matchers::WithinRel;

namespace {
constexpr double kEager = testing::kEagerMemoryBound;
}  // namespace

TEST_CASE("cost_model: megatron-deepspeed's bf16 gradient fold is 18 B per local parameter per micro-batch",
          "[cost_model]") {
  const ModelSpec model = testing::Gpt(4096, 4, 32, 51200);
  const SoftwareStack ds = LoadSoftwareStack("megatron-deepspeed");
  SoftwareStack base = LoadSoftwareStack("megatron-lm-2021");   // the model code it runs,
  base.grad_fold_passes = 0;                                     // without the 2021 code's own fp16 fold
  const LayerCostModel with = MakeLayerCostModel(model, testing::NominalH100Rates(), ds, 2048);
  const LayerCostModel without = MakeLayerCostModel(model, testing::NominalH100Rates(), base, 2048);
  for (const char* cfg : {"dp=1", "dp=1,tp=2", "dp=1,tp=4,pp=2"}) {
    INFO(cfg);
    const ParallelConfig c = ParseParallelConfig(cfg);
    for (double tokens : {2048.0, 8192.0}) {
      const UnitCost a = TransformerLayerCost(with, c, tokens);
      const UnitCost b = TransformerLayerCost(without, c, tokens);
      // Once per micro-batch over the rank's parameters, whatever the tokens.
      CHECK_THAT(a.bwd_bytes - b.bwd_bytes, WithinRel(18.0 * kEager * a.params, 1e-12));
      CHECK(a.fwd_bytes == b.fwd_bytes);
      CHECK(a.bwd.copy > 0);
      CHECK(b.bwd.copy == 0);
    }
  }
  // Split over tp: half the local parameters, half the fold.
  const UnitCost tp1 = TransformerLayerCost(with, ParseParallelConfig("dp=1"), 2048);
  const UnitCost tp2 = TransformerLayerCost(with, ParseParallelConfig("dp=1,tp=2"), 2048);
  CHECK(tp2.bwd.copy < tp1.bwd.copy);
}

TEST_CASE("cost_model: fp32 training has no bf16 gradient fold", "[cost_model]") {
  // fp32 training builds no BF16_Optimizer: autograd accumulates into the fp32 .grad.
  const SoftwareStack ds = LoadSoftwareStack("megatron-deepspeed");
  CHECK(ds.grad_fold_passes == Approx(18.0 / 4.0 * kEager));
  CHECK(ds.copy_passes_backward == LoadSoftwareStack("megatron-lm-2021").copy_passes_backward);
  CHECK(StackForPrecision(ds, Precision::kFp32).grad_fold_passes == 0);
  CHECK(StackForPrecision(ds, Precision::kBf16).grad_fold_passes == ds.grad_fold_passes);
  const SoftwareStack sailor = LoadSoftwareStack(testing::DataPath("stacks/sailor-megatron-deepspeed-fp32.yaml"));
  CHECK(StackForPrecision(sailor, Precision::kFp32).grad_fold_passes == 0);
  // nanotron's FP32GradientAccumulator is the same fold (10 B per parameter).
  CHECK(LoadSoftwareStack("nanotron").grad_fold_passes == Approx(10.0 / 4.0 * kEager));
}
