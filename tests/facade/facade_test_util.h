// Exact equality of two facade predictions (every field), for tests that
// check the same answer comes back by another path.
#pragma once

#include "parasim/parasim.h"

inline bool SamePrediction(const parasim::Prediction& a, const parasim::Prediction& b) {
  return a.config == b.config && a.feasible == b.feasible && a.infeasible_reason == b.infeasible_reason &&
         a.fidelity == b.fidelity && a.num_micro_batches == b.num_micro_batches && a.step_time_s == b.step_time_s &&
         a.tokens_per_s == b.tokens_per_s && a.tokens_per_s_per_gpu == b.tokens_per_s_per_gpu && a.mfu == b.mfu &&
         a.hfu == b.hfu && a.compute_s == b.compute_s && a.comm_s == b.comm_s && a.exposed_comm_s == b.exposed_comm_s &&
         a.exposed_comm_fraction == b.exposed_comm_fraction && a.bubble_s == b.bubble_s &&
         a.memory_bytes_per_gpu == b.memory_bytes_per_gpu && a.power_w_per_gpu == b.power_w_per_gpu &&
         a.energy_j_per_step == b.energy_j_per_step && a.tokens_per_joule == b.tokens_per_joule &&
         a.comm_s_by_dimension == b.comm_s_by_dimension && a.memory_bytes_per_stage == b.memory_bytes_per_stage &&
         a.memory_peak_stage == b.memory_peak_stage;
}
