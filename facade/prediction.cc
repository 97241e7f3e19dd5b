// Reports of the cost model and simulator as the facade's plain Prediction.
#include "core/units.h"
#include "facade/access.h"

namespace parasim::detail {

Prediction ToPrediction(const Report& r) {
  Prediction p;
  p.config = r.config.ToString();
  p.feasible = r.feasible;
  p.infeasible_reason = r.infeasible_reason;
  p.fidelity = ToString(r.fidelity);
  p.num_micro_batches = r.num_micro_batches;
  p.step_time_s = r.step_time.si();
  p.tokens_per_s = r.tokens_per_s;
  p.tokens_per_s_per_gpu = r.tokens_per_s_per_gpu;
  p.mfu = r.mfu;
  p.hfu = r.hfu;
  p.compute_s = r.compute.si();
  p.comm_s = r.comm.si();
  p.exposed_comm_s = r.exposed_comm.si();
  p.exposed_comm_fraction = r.exposed_comm_fraction;
  p.bubble_s = r.bubble.si();
  p.memory_bytes_per_gpu = r.memory_per_gpu.si();
  p.memory_bytes_per_stage = r.memory_bytes_per_stage;
  p.memory_peak_stage = r.memory_peak_stage;
  p.power_w_per_gpu = r.power_per_gpu.si();
  p.energy_j_per_step = r.energy_per_step.si();
  p.tokens_per_joule = r.tokens_per_joule;
  for (const TimeBreakdownEntry& e : r.by_dimension) p.comm_s_by_dimension.emplace_back(e.name, e.total.si());
  return p;
}

}  // namespace parasim::detail
