// A stack's pipeline split rule (nanotron's compute balance) reaches every
// tier: a config without pp_layers prices as if the split were written out.
#include <catch2/catch.hpp>

#include "core/loaders.h"
#include "cost_model/evaluator.h"
#include "cost_model/nanotron_stage_split.h"
#include "cost_model/software_stack.h"
#include "simulator/simulate.h"

namespace parasim::simulator {
namespace {

using Catch::Matchers::WithinRel;

struct Tiers {
  double a = 0, b = 0;
};

Tiers StepOf(const AnalyticalEvaluator& eval, const ParallelConfig& c) {
  Tiers t;
  t.a = eval.Evaluate(c).step_time.si();
  t.b = SimulateStep(eval.BuildWorkload(c), eval.cluster(), SimulationOptions{}).report.step_time.si();
  return t;
}

TEST_CASE("simulator: the nanotron stack's compute-balanced split is the split every tier prices",
          "[simulator][pp_split]") {
  const ModelSpec model = LoadModel("llama3-8b");
  JobSpec job;
  job.global_batch = 64;
  job.seq_len = 4096;
  const SoftwareStack nanotron = LoadSoftwareStack("nanotron");
  REQUIRE(nanotron.pp_balance_by_compute);
  SoftwareStack even = nanotron;
  even.pp_balance_by_compute = false;
  const AnalyticalEvaluator balanced_eval(model, LoadCluster("dgx-h100", 4), job, nanotron);
  const AnalyticalEvaluator even_eval(model, LoadCluster("dgx-h100", 4), job, even);

  // 32 layers of 4·4096² + 3·14336·4096 against a head of 128256·4096 (2.2
  // layers): shares of 8.5 layers, each rank one layer past it, 6 + head last.
  const std::vector<int> split = NanotronBalancedStageLayers(model, 4).layers;
  REQUIRE(split == std::vector<int>{9, 9, 8, 6});

  const ParallelConfig open = ParseParallelConfig("dp=8,tp=1,pp=4,sharding=zero1");
  const ParallelConfig written = ParseParallelConfig("dp=8,tp=1,pp=4,sharding=zero1,pp_layers=9/9/8/6");
  const Tiers from_stack = StepOf(balanced_eval, open);
  const Tiers from_config = StepOf(balanced_eval, written);
  CHECK(from_stack.a == from_config.a);
  CHECK(from_stack.b == from_config.b);
  // The replay agrees with tier A on the uneven split.
  CHECK_THAT(from_stack.b, WithinRel(from_stack.a, 0.05));
  // The even-split stack prices the same config differently, and the written
  // split overrides either stack's rule.
  CHECK(StepOf(even_eval, open).a != from_stack.a);
  CHECK(StepOf(even_eval, written).a == from_config.a);
}

}  // namespace
}  // namespace parasim::simulator
