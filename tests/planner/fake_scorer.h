// A hand-made scorer for planner tests: simple, monotone physics-like rules
// (TP costs kernel efficiency and power, DP costs exposed communication that
// grows with the ring, PP costs a bubble, memory shrinks with sharding), so
// tests do not depend on the cost model.
#pragma once

#include <cmath>

#include "core/error.h"
#include "core/job_spec.h"
#include "core/parallel_config.h"
#include "cost_model/report.h"

namespace parasim::planner::testing {

struct FakeScorer {
  JobSpec job;
  double memory_limit_gb = 80;
  double weights_gb = 100;          // model state to divide by tp·pp·sharding
  double activation_gb_per_seq = 6;

  Report operator()(const ParallelConfig& c) const {
    Report r;
    r.config = c;
    const int n = c.WorldSize();
    const int m = static_cast<int>(job.global_batch / (static_cast<long long>(c.dp) * c.micro_batch));
    r.num_micro_batches = m;
    double shard = 1;
    switch (c.sharding) {
      case ShardingMode::kDdp: shard = 1; break;
      case ShardingMode::kZero1: shard = 1.6; break;
      case ShardingMode::kZero2Replicated: shard = 2.5; break;
      case ShardingMode::kZero2: shard = 4; break;
      case ShardingMode::kZero3: shard = 8; break;
      case ShardingMode::kHsdp: shard = 2 + c.hsdp_group / 4.0; break;
    }
    double act = activation_gb_per_seq * c.micro_batch / c.tp / c.cp;
    if (c.recompute == RecomputeMode::kSelective) act *= 0.5;
    if (c.recompute == RecomputeMode::kFull) act *= 0.1;
    if (c.sequence_parallel) act *= 0.8;
    const double mem_gb = weights_gb / (c.tp * c.pp * shard) + act * std::min(m, c.pp);
    r.memory_per_gpu = GB(mem_gb);
    if (mem_gb > memory_limit_gb) {
      r.feasible = false;
      r.infeasible_reason = StrCat("memory: needs ", mem_gb, " GB of ", memory_limit_gb, " GB");
      return r;
    }
    const double tokens = static_cast<double>(job.global_batch) * job.seq_len;
    const double recompute = c.recompute == RecomputeMode::kFull ? 1.33 : c.recompute == RecomputeMode::kSelective ? 1.05 : 1.0;
    const double kernel_eff = 0.6 / (1.0 + 0.08 * std::log2(c.tp)) * (c.micro_batch >= 2 ? 1.0 : 0.95);
    const double compute_s = tokens * 1e-6 / n / kernel_eff * recompute;
    const double ring = 2e-4 * (c.dp - 1) + (c.sharding == ShardingMode::kZero3 ? 0.02 : 0.0);
    const double exposed_s = std::max(0.0, ring - 0.2 * compute_s) + 0.01 * (c.tp > 8 ? c.tp : 0) + 0.003 * (c.cp - 1);
    const double bubble_s = c.pp > 1 ? compute_s * (c.pp - 1) / (c.vpp * m + c.pp - 1) : 0.0;
    const double step_s = compute_s + exposed_s + bubble_s;
    r.compute = Seconds(compute_s);
    r.comm = Seconds(exposed_s + 0.5 * compute_s);
    r.exposed_comm = Seconds(exposed_s);
    r.bubble = Seconds(bubble_s);
    r.step_time = Seconds(step_s);
    r.exposed_comm_fraction = exposed_s / step_s;
    r.tokens_per_s = tokens / step_s;
    r.tokens_per_s_per_gpu = r.tokens_per_s / n;
    r.mfu = kernel_eff * compute_s / step_s / recompute;
    r.hfu = kernel_eff * compute_s / step_s;
    // Power rises with TP (more time in dense kernels at high clocks): TP is
    // fast but less frugal, so throughput and tokens/J can disagree.
    const double power_w = 400 + 250 * (compute_s / step_s) + 30 * std::log2(c.tp);
    r.power_per_gpu = Watts(power_w);
    r.energy_per_step = Joules(power_w * n * step_s);
    r.tokens_per_joule = tokens / r.energy_per_step.si();
    return r;
  }
};

}  // namespace parasim::planner::testing
