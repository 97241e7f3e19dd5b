// Tier B and C pay the host's per-micro-batch time where tier A does: before
// each micro-batch's forward on every stage of a host-synchronous pipeline.
#include <catch2/catch.hpp>

#include "core/loaders.h"
#include "cost_model/evaluator.h"
#include "cost_model/software_stack.h"
#include "simulator/simulate.h"

namespace parasim::simulator {
namespace {

using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

JobSpec Job64() {
  JobSpec job;
  job.global_batch = 64;
  job.seq_len = 4096;
  return job;
}

struct Steps {
  double a = 0, b = 0, c = 0;
};

Steps StepsWith(const SoftwareStack& stack, const char* config, Fidelity highest = Fidelity::kSimulated) {
  AnalyticalEvaluator eval(LoadModel("llama2-13b"), LoadCluster("dgx-h100", 4), Job64(), stack);
  const ParallelConfig c = ParseParallelConfig(config);
  Steps s;
  s.a = eval.Evaluate(c).step_time.si();
  const StepWorkload wl = eval.BuildWorkload(c);
  s.b = SimulateStep(wl, eval.cluster(), SimulationOptions{}).report.step_time.si();
  if (highest == Fidelity::kFull) {
    SimulationOptions full;
    full.fidelity = Fidelity::kFull;
    s.c = SimulateStep(wl, eval.cluster(), full).report.step_time.si();
  }
  return s;
}

TEST_CASE("simulator: a host-synchronous pipeline's host time moves tier B and C as it moves tier A",
          "[simulator][host]") {
  const SoftwareStack base = LoadSoftwareStack("nanotron");
  REQUIRE(base.pp_host_synchronous);
  SoftwareStack slow = base;
  slow.host_per_micro_batch_s = 5e-3;
  for (const char* config : {"dp=4,tp=2,pp=4,sharding=zero1", "dp=8,tp=1,pp=4,sharding=zero1"}) {
    INFO(config);
    const Steps without = StepsWith(base, config, Fidelity::kFull);
    const Steps with = StepsWith(slow, config, Fidelity::kFull);
    // The host time is on every stage's critical path: the step grows.
    REQUIRE(with.a > without.a);
    REQUIRE(with.b > without.b);
    REQUIRE_THAT(with.b, WithinRel(with.a, 0.05));
    REQUIRE_THAT(with.c, WithinRel(with.b, 0.05));
    // The growth itself, not only the total: every pass of a host-synchronous
    // 1F1B stage is (h + f) + b, so tier A adds (m + pp − 1)·h (m = 64 / dp
    // micro-batches). The replay adds at least the critical stage's own m·h
    // and at most tier A's; a little less than tier A where the host gap
    // takes communication out from under compute (no interference then).
    const int m = 64 / ParseParallelConfig(config).dp;
    const double h = slow.host_per_micro_batch_s;
    const double da = with.a - without.a, db = with.b - without.b, dc = with.c - without.c;
    REQUIRE_THAT(da, WithinRel((m + 4 - 1) * h, 1e-6));
    REQUIRE(db >= m * h);
    REQUIRE(db <= (m + 4 - 1) * h * (1 + 1e-9));
    REQUIRE_THAT(db, WithinRel(da, 0.05));
    REQUIRE_THAT(dc, WithinRel(db, 0.05));
  }
}

TEST_CASE("simulator: the host time of a pipeline whose host runs ahead stays hidden in every tier",
          "[simulator][host]") {
  // Asynchronous p2p (megatron-core): the host queues kernels ahead of the
  // GPU, so its per-micro-batch work hides behind earlier kernels.
  const SoftwareStack base = LoadSoftwareStack("megatron-core");
  REQUIRE_FALSE(base.pp_host_synchronous);
  SoftwareStack slow = base;
  slow.host_per_micro_batch_s = 5e-3;
  const Steps without = StepsWith(base, "dp=4,tp=2,pp=4,sharding=zero1");
  const Steps with = StepsWith(slow, "dp=4,tp=2,pp=4,sharding=zero1");
  REQUIRE(with.a == without.a);
  REQUIRE(with.b == without.b);
}

TEST_CASE("simulator: without pipeline stages a host-synchronous stack exposes no host time",
          "[simulator][host]") {
  // Tier A charges host_mb only with pp > 1 (no p2p to block on).
  SoftwareStack slow = LoadSoftwareStack("nanotron");
  slow.host_per_micro_batch_s = 5e-3;
  const Steps without = StepsWith(LoadSoftwareStack("nanotron"), "dp=16,tp=2,sharding=zero1");
  const Steps with = StepsWith(slow, "dp=16,tp=2,sharding=zero1");
  REQUIRE(with.a == without.a);
  REQUIRE(with.b == without.b);
}

TEST_CASE("simulator: host time idles the GPU: compute and exposed communication stay, idle grows",
          "[simulator][host]") {
  SoftwareStack slow = LoadSoftwareStack("nanotron");
  slow.host_per_micro_batch_s = 5e-3;
  auto run = [](const SoftwareStack& stack) {
    AnalyticalEvaluator eval(LoadModel("llama2-13b"), LoadCluster("dgx-h100", 4), Job64(), stack);
    const ParallelConfig c = ParseParallelConfig("dp=4,tp=2,pp=4,sharding=zero1");
    StepWorkload wl = eval.BuildWorkload(c);
    // Without the interference slowdown: a host gap with communication under
    // it would otherwise also spare compute that slowdown.
    wl.comm_interference = 1.0;
    return SimulateStep(wl, eval.cluster(), SimulationOptions{}).report;
  };
  const Report without = run(LoadSoftwareStack("nanotron"));
  const Report with = run(slow);
  // The host delay is neither GPU compute nor communication (tier A's compute excludes it too).
  REQUIRE_THAT(with.compute.si(), WithinRel(without.compute.si(), 1e-9));
  REQUIRE(with.bubble.si() > without.bubble.si());
  // An idle GPU draws less than a busy one: the average power falls.
  REQUIRE(with.power_per_gpu.si() < without.power_per_gpu.si());
}

}  // namespace
}  // namespace parasim::simulator
