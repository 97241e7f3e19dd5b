#include "cost_model/evaluator_finish.h"

#include <algorithm>

#include "cost_model/power.h"
#include "cost_model/report_check.h"

namespace parasim {

FacilityPower FacilityPowerOf(const ClusterSpec& cluster) {
  FacilityPower f;
  f.node_overhead_w = cluster.node_overhead_power.si();
  f.gpus_per_node = cluster.gpus_per_node;
  f.switch_w = cluster.network_power_per_switch.si();
  f.switches = FabricSwitchCount(cluster);
  return f;
}

void FinishReport(const StepMeasures& s, const FacilityPower& facility, Report* rep) {
  const double step = s.step_s;
  const double world = s.world;
  rep->step_time = Seconds(step);
  rep->tokens_per_s = s.tokens / step;
  rep->tokens_per_s_per_gpu = rep->tokens_per_s / world;
  rep->tflops_per_gpu = s.model_flops / step / world / 1e12;
  rep->hardware_tflops_per_gpu = s.hardware_flops / step / world / 1e12;
  rep->mfu = s.peak_flops > 0 ? s.model_flops / (step * world * s.peak_flops) : 0;
  rep->hfu = s.peak_flops > 0 ? s.hardware_flops / (step * world * s.peak_flops) : 0;
  const double own = s.own_peak_flops > 0 ? s.own_peak_flops : s.peak_flops;
  rep->mfu_own_precision = own > 0 ? s.model_flops / (step * world * own) : 0;

  const double gpu_w = s.gpu.per_gpu_average ? s.gpu.value : s.gpu.value / (world * step);
  const double gpu_j = s.gpu.per_gpu_average ? s.gpu.value * world * step : s.gpu.value;
  const double nodes = world / std::max(1, facility.gpus_per_node);
  const double energy =
      gpu_j + facility.node_overhead_w * nodes * step + facility.switch_w * facility.switches * step;
  rep->power_per_gpu = Watts(gpu_w);
  rep->energy_per_step = Joules(energy);
  rep->tokens_per_joule = energy > 0 ? s.tokens / energy : 0;
  rep->exposed_comm_energy_per_token = Joules(s.tokens > 0 ? s.comm_only_energy_j / s.tokens : 0);
  CheckReportFinite(*rep, "FinishReport");
}

}  // namespace parasim
