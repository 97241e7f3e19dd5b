// Tiers A and B finish their reports with the same FinishReport
// (cost_model/evaluator_finish.h): where the physics gives both the same
// step and the same time in each power state, they agree on energy, node
// overhead and fabric-switch power included.
#include <catch2/catch.hpp>

#include "core/loaders.h"
#include "cost_model/evaluator.h"
#include "cost_model/power.h"
#include "simulator/simulate.h"

namespace parasim::simulator {
namespace {

using Catch::Matchers::WithinRel;

// Two nodes of one GPU each on a fat tree, with node and switch power: a
// tp=2 group across the nodes. TP collectives block compute and dp=1 has no
// gradient traffic, so nothing overlaps: both tiers run the same serial
// chain of kernels and blocking collectives.
ClusterSpec TwoNodesOneGpuEach() {
  ClusterSpec c = LoadCluster("dgx-h100", 2);
  c.gpus_per_node = 1;
  c.intra_node.nvlink_domain_size = 1;
  c.node_overhead_power = Watts(1500);       // test values: make both facility terms nonzero
  c.network_power_per_switch = Watts(750);
  return c;
}

TEST_CASE("tiers A and B agree on energy per step when nothing overlaps", "[simulator][energy]") {
  const ClusterSpec cluster = TwoNodesOneGpuEach();
  REQUIRE(FabricSwitchCount(cluster) > 0);
  JobSpec job;
  job.global_batch = 4;
  job.seq_len = 2048;
  job.stack = "megatron-core";
  const AnalyticalEvaluator ev(LoadModel("llama2-1b"), cluster, job);
  const ParallelConfig config = ParseParallelConfig("tp=2,sharding=ddp");
  const Report a = ev.Evaluate(config);
  REQUIRE(a.feasible);
  SimulationOptions opt;
  opt.fidelity = Fidelity::kSimulated;
  const Report b = SimulateConfig(ev, config, opt).report;
  REQUIRE(b.feasible);
  CHECK_THAT(b.step_time.si(), WithinRel(a.step_time.si(), 1e-9));
  CHECK_THAT(b.power_per_gpu.si(), WithinRel(a.power_per_gpu.si(), 1e-9));
  CHECK_THAT(b.energy_per_step.si(), WithinRel(a.energy_per_step.si(), 1e-9));
  CHECK_THAT(b.tokens_per_joule, WithinRel(a.tokens_per_joule, 1e-9));
  // The facility terms are a visible share of the energy (the check above
  // would miss a dropped term otherwise).
  const double facility_j = (1500.0 * 2 + 750.0 * FabricSwitchCount(cluster)) * a.step_time.si();
  CHECK(facility_j > 1e-3 * a.energy_per_step.si());
}

}  // namespace
}  // namespace parasim::simulator
