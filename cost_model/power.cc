#include "cost_model/power.h"

#include <algorithm>
#include <cmath>

namespace parasim {

PowerStates PowerStatesOf(const GpuProfile& g) {
  PowerStates p;
  const double tdp = g.tdp.si();
  p.matmul = Watts(tdp * g.power_matmul_fraction);
  p.memory_bound = Watts(tdp * g.power_memory_fraction);
  p.comm_only = Watts(tdp * g.power_comm_fraction);
  p.idle = g.idle_power;
  return p;
}

int FabricSwitchCount(const ClusterSpec& c) {
  if (c.nodes <= 1) return 0;
  if (c.inter_node.fabric == InterNodeFabric::kSingleSwitch) return 1;
  const double nics = static_cast<double>(c.nodes) * std::max(1, c.inter_node.nics_per_node);
  const double half = std::max(1, c.inter_node.switch_radix / 2);
  double tier = std::ceil(nics / half);
  double total = tier;
  for (int t = 1; t < std::max(1, c.inter_node.tiers); ++t) {
    tier = std::ceil(tier / 2.0);
    total += tier;
  }
  return static_cast<int>(total);
}

PowerEstimate EstimatePower(const PowerStates& p, const StateTimes& t, int world_size, int gpus_per_node,
                            double node_overhead_w) {
  PowerEstimate e;
  const double total = t.Total();
  if (total <= 0) return e;
  const double gpu_j = p.matmul.si() * t.matmul_s + p.memory_bound.si() * t.memory_s +
                       p.comm_only.si() * t.comm_only_s + p.idle.si() * t.idle_s;
  e.gpu_avg_w = gpu_j / total;
  const double nodes = static_cast<double>(world_size) / std::max(1, gpus_per_node);
  e.energy_per_step_j = gpu_j * world_size + node_overhead_w * nodes * total;
  e.comm_only_energy_j = p.comm_only.si() * t.comm_only_s * world_size;
  return e;
}

}  // namespace parasim
