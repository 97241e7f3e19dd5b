#include <catch2/catch.hpp>

#include "cost_model/power.h"
#include "test_specs.h"

using namespace parasim;
using Catch::Matchers::WithinRel;

TEST_CASE("cost_model: average power is the time-weighted state power", "[cost_model]") {
  GpuProfile g = testing::H100();
  g.power_matmul_fraction = 0.9;
  g.power_comm_fraction = 0.5;
  const PowerStates p = PowerStatesOf(g);
  StateTimes t;
  t.matmul_s = 1.0;
  PowerEstimate e = EstimatePower(p, t, 16, 8, 0);
  CHECK_THAT(e.gpu_avg_w, WithinRel(630.0, 1e-12));
  CHECK_THAT(e.energy_per_step_j, WithinRel(630.0 * 16, 1e-12));
  t.comm_only_s = 1.0;
  e = EstimatePower(p, t, 16, 8, 1000);
  CHECK_THAT(e.gpu_avg_w, WithinRel((630.0 + 350.0) / 2, 1e-12));
  CHECK_THAT(e.energy_per_step_j, WithinRel((630.0 + 350.0) * 16 + 1000.0 * 2 * 2, 1e-12));
  CHECK_THAT(e.comm_only_energy_j, WithinRel(350.0 * 16, 1e-12));
}

TEST_CASE("cost_model: fat-tree switch count for network power", "[cost_model]") {
  ClusterSpec c = testing::Dgx(testing::H100(), 32);
  c.inter_node.switch_radix = 64;
  c.inter_node.tiers = 2;
  // 256 NICs: 8 leaves of 32 down-ports, 4 spines.
  CHECK(FabricSwitchCount(c) == 12);
  c.nodes = 1;
  CHECK(FabricSwitchCount(c) == 0);
}
