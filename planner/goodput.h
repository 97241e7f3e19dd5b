// Goodput under failures: the fraction of wall time that advances training
// when the job checkpoints every τ seconds, a checkpoint costs δ, a failure
// costs the work since the last checkpoint plus a restart R, and failures
// arrive as a Poisson process with cluster MTBF M = (MTBF per GPU) / N.
//
// Optimal interval: Daly's higher-order estimate (J. T. Daly, "A higher order
// estimate of the optimum checkpoint interval for restart dumps", Future
// Generation Computer Systems 22(3), 2006), which refines Young's
// τ = sqrt(2 δ M) (J. W. Young, "A first order approximation to the optimum
// checkpoint interval", CACM 17(9), 1974). Expected wall time per unit of
// solve time (Daly 2006, exponential failures): T_w / T_s = M e^{R/M} (e^{(τ+δ)/M} − 1) / τ.
#pragma once

#include "core/units.h"

namespace parasim::planner {

struct GoodputOptions {
  double mtbf_gpu_hours = 0;        // 0 = failures not modelled (goodput 1)
  // δ: time one checkpoint stalls training. Assumed default (no published
  // figure used; docs/DECISIONS.md): set it from your own checkpoint timing.
  Seconds checkpoint_cost = Seconds(60);
  Seconds checkpoint_interval;      // τ; 0 = Daly's optimum
  // R: detect, reschedule, reload. Assumed default, as for δ.
  Seconds restart_time = Seconds(600);
};

struct Goodput {
  double fraction = 1.0;            // useful time / wall time, in (0, 1]
  Seconds cluster_mtbf;             // M (0 when failures are not modelled)
  Seconds checkpoint_interval;      // τ used (0 when failures are not modelled)
};

// Daly's optimum τ for checkpoint cost δ and MTBF M (τ = M when δ >= 2M).
Seconds DalyOptimalInterval(Seconds checkpoint_cost, Seconds mtbf);
// Young's first-order optimum sqrt(2 δ M).
Seconds YoungOptimalInterval(Seconds checkpoint_cost, Seconds mtbf);

// Goodput of a job on `gpus` GPUs. Throws parasim::Error for negative inputs.
Goodput ComputeGoodput(int gpus, const GoodputOptions& options);

}  // namespace parasim::planner
