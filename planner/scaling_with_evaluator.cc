// The product path of the scaling study: one tier-A evaluator per size.
#include <memory>

#include "cost_model/evaluator.h"
#include "planner/scaling.h"

namespace parasim::planner {

ScaleStudy RunScaleStudy(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                         const std::vector<int>& gpus, const ScaleOptions& scale, const PlanOptions& plan) {
  const ScorerFactory factory = [&](int n, const JobSpec& point_job) -> Scorer {
    auto evaluator = std::make_shared<const AnalyticalEvaluator>(model, ResizeCluster(cluster, n), point_job);
    return [evaluator](const ParallelConfig& c) { return evaluator->Evaluate(c); };
  };
  return RunScaleStudy(model, job, cluster.gpus_per_node, gpus, scale, plan, factory);
}

}  // namespace parasim::planner
