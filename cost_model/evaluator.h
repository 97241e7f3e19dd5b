// Tier-A analytical evaluator: built once per (model, cluster, job) so that
// everything independent of the parallel config is precomputed, then asked
// for many configs. Evaluate() is const and thread-safe.
#pragma once

#include <memory>

#include "core/cluster_spec.h"
#include "core/job_spec.h"
#include "core/model_spec.h"
#include "core/parallel_config.h"
#include "cost_model/config_metrics.h"
#include "cost_model/report.h"

namespace parasim {

struct StepWorkload;       // cost_model/workload.h: what the simulator replays
class Topology;            // topology/topology.h
struct SoftwareStack;      // cost_model/software_stack.h

class AnalyticalEvaluator {
 public:
  // Throws parasim::Error for inputs that cannot be evaluated at all (unknown stack, ...).
  AnalyticalEvaluator(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job);
  // With a stack given as a value (calibration evaluates candidate stacks);
  // job.stack is then only its name in reports.
  AnalyticalEvaluator(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                      const SoftwareStack& stack);
  ~AnalyticalEvaluator();
  AnalyticalEvaluator(AnalyticalEvaluator&&) noexcept;
  AnalyticalEvaluator& operator=(AnalyticalEvaluator&&) noexcept;

  // A config that violates a rule or does not fit memory comes back with
  // feasible = false and the reason; no exception.
  Report Evaluate(const ParallelConfig& config) const;

  // The planner's ranking metrics of Evaluate(config), bit-identical to its
  // Report's (feasible, reason category, tokens_per_s, tokens_per_joule,
  // exposed_comm_fraction), cheaper: memory is sized before the stages are
  // timed, and a config that does not fit is not timed; no breakdowns.
  ConfigMetrics Metrics(const ParallelConfig& config) const;

  // The per-layer ops of one step, for the simulator (tiers B and C).
  StepWorkload BuildWorkload(const ParallelConfig& config) const;

  const ModelSpec& model() const;
  const ClusterSpec& cluster() const;
  const JobSpec& job() const;
  const SoftwareStack& stack() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace parasim
