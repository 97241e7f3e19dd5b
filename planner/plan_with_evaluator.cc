// The product path: the planner scored by the tier-A evaluator. Kept apart
// from planner.cc so the search links without the cost model's evaluator.
#include "cost_model/evaluator.h"
#include "planner/planner.h"

namespace parasim::planner {

PlanResult RunPlan(const AnalyticalEvaluator& evaluator, const PlanOptions& options) {
  const Scorer scorer = [&evaluator](const ParallelConfig& c) { return evaluator.Evaluate(c); };
  return RunPlan(evaluator.model(), evaluator.job(), evaluator.cluster().TotalGpus(), evaluator.cluster().gpus_per_node,
                 scorer, options);
}

}  // namespace parasim::planner
