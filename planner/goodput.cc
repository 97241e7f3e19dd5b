#include "planner/goodput.h"

#include <cmath>

#include "core/error.h"

namespace parasim::planner {

Seconds YoungOptimalInterval(Seconds checkpoint_cost, Seconds mtbf) {
  return Seconds(std::sqrt(2.0 * checkpoint_cost.si() * mtbf.si()));
}

Seconds DalyOptimalInterval(Seconds checkpoint_cost, Seconds mtbf) {
  const double delta = checkpoint_cost.si();
  const double m = mtbf.si();
  if (delta >= 2.0 * m) return mtbf;
  const double r = delta / (2.0 * m);
  return Seconds(std::sqrt(2.0 * delta * m) * (1.0 + std::sqrt(r) / 3.0 + r / 9.0) - delta);
}

Goodput ComputeGoodput(int gpus, const GoodputOptions& options) {
  if (options.mtbf_gpu_hours < 0) throw InvalidInput("", "--mtbf-gpu-hours", "must not be negative");
  if (options.checkpoint_cost < Seconds(0)) throw InvalidInput("", "--checkpoint-cost", "must not be negative");
  if (options.restart_time < Seconds(0)) throw InvalidInput("", "--restart-time", "must not be negative");
  if (options.checkpoint_interval < Seconds(0)) throw InvalidInput("", "--checkpoint-interval", "must not be negative");
  Goodput g;
  if (options.mtbf_gpu_hours == 0 || gpus < 1) return g;
  // Independent GPU failures: the cluster fails N times as often as one GPU.
  g.cluster_mtbf = Seconds(options.mtbf_gpu_hours * 3600.0 / gpus);
  const double m = g.cluster_mtbf.si();
  g.checkpoint_interval = options.checkpoint_interval > Seconds(0)
                              ? options.checkpoint_interval
                              : DalyOptimalInterval(options.checkpoint_cost, g.cluster_mtbf);
  const double tau = g.checkpoint_interval.si();
  const double delta = options.checkpoint_cost.si();
  const double restart = options.restart_time.si();
  if (tau <= 0) {   // δ = 0 and τ = 0: checkpoints are free and continuous; only restarts cost
    g.fraction = std::exp(-restart / m);
    return g;
  }
  // Daly 2006's expected wall time, in a form that stays finite for large exponents.
  const double log_wall_per_solve = std::log(m) + restart / m + std::log(std::expm1((tau + delta) / m)) - std::log(tau);
  g.fraction = std::exp(-log_wall_per_solve);
  if (!std::isfinite(g.fraction) || g.fraction < 0) g.fraction = 0;
  if (g.fraction > 1) g.fraction = 1;
  return g;
}

}  // namespace parasim::planner
