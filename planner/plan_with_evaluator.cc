// The product path: the planner scored by the tier-A evaluator and, when asked,
// re-scored by the simulator (tier B or C). Kept apart from planner.cc so the
// search links without the cost model's evaluator.
#include <algorithm>

#include "cost_model/evaluator.h"
#include "planner/planner.h"
#include "simulator/simulate.h"

namespace parasim::planner {

PlanResult RunPlan(const AnalyticalEvaluator& evaluator, const PlanOptions& stack_free_options) {
  // The space is what the stack's framework supports.
  PlanOptions options = stack_free_options;
  options.space = SpaceFor(evaluator.stack(), options.space);
  const Scorer scorer = [&evaluator](const ParallelConfig& c) { return evaluator.Evaluate(c); };
  const MetricScorer ranker = [&evaluator](const ParallelConfig& c) { return evaluator.Metrics(c); };
  const double capacity = evaluator.cluster().gpu.hbm_capacity.si();
  // The search's "node" is the NVLink domain when it spans several nodes:
  // tensor parallelism stays on NVLink up to the domain's size.
  const int nvlink_gpus = std::max(evaluator.cluster().gpus_per_node, evaluator.cluster().intra_node.nvlink_domain_size);
  if (options.fidelity == Fidelity::kAnalytical) {
    PlanResult r = RunPlan(evaluator.model(), evaluator.job(), evaluator.cluster().TotalGpus(),
                           nvlink_gpus, scorer, options, nullptr, &ranker);
    r.gpu_capacity_bytes = capacity;
    return r;
  }
  simulator::SimulationOptions sim;
  sim.fidelity = options.fidelity;
  const Scorer rescorer = [&evaluator, sim](const ParallelConfig& c) {
    return simulator::SimulateConfig(evaluator, c, sim).report;
  };
  PlanResult r = RunPlan(evaluator.model(), evaluator.job(), evaluator.cluster().TotalGpus(),
                         nvlink_gpus, scorer, options, &rescorer, &ranker);
  r.gpu_capacity_bytes = capacity;
  return r;
}

}  // namespace parasim::planner
