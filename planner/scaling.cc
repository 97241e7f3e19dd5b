#include "planner/scaling.h"

#include <algorithm>

#include "core/error.h"

namespace parasim::planner {

ScaleMode ParseScaleMode(const std::string& text, const std::string& where) {
  if (text == "weak") return ScaleMode::kWeak;
  if (text == "strong") return ScaleMode::kStrong;
  throw InvalidInput("", where, StrCat("unknown mode '", text, "' (valid: weak, strong)"));
}

const char* ToString(ScaleMode mode) { return mode == ScaleMode::kWeak ? "weak" : "strong"; }

ClusterSpec ResizeCluster(const ClusterSpec& cluster, int gpus) {
  if (gpus < 1) throw InvalidInput("", "--gpus", StrCat(gpus, " is not a positive GPU count"));
  ClusterSpec c = cluster;
  if (gpus % cluster.gpus_per_node == 0) {
    c.nodes = gpus / cluster.gpus_per_node;
  } else if (gpus < cluster.gpus_per_node) {
    c.gpus_per_node = gpus;   // part of one node
    c.nodes = 1;
    c.intra_node.nvlink_domain_size = std::min(c.intra_node.nvlink_domain_size, gpus);
  } else {
    throw InvalidInput("", "--gpus",
                StrCat(gpus, " is neither a multiple of the ", cluster.gpus_per_node, " GPUs per node nor below it"));
  }
  return c;
}

ScaleStudy RunScaleStudy(const ModelSpec& model, const JobSpec& job, int gpus_per_node, const std::vector<int>& gpus,
                         const ScaleOptions& scale, const PlanOptions& plan, const ScorerFactory& factory) {
  if (gpus.empty()) throw InvalidInput("", "--gpus", "give at least one GPU count");
  for (size_t i = 1; i < gpus.size(); ++i) {
    if (gpus[i] <= gpus[i - 1]) throw InvalidInput("", "--gpus", "GPU counts must increase");
  }
  if (scale.mode == ScaleMode::kWeak && scale.local_batch < 1) {
    throw InvalidInput("", "--local-batch", "weak scaling needs --local-batch >= 1");
  }
  if (scale.mode == ScaleMode::kStrong && scale.global_batch < 1) {
    throw InvalidInput("", "--global-batch", "strong scaling needs --global-batch >= 1");
  }
  if (!(scale.knee_threshold > 0 && scale.knee_threshold <= 1)) {
    throw InvalidInput("", "--knee", "the efficiency threshold must be in (0, 1]");
  }
  ScaleStudy study;
  study.mode = scale.mode;
  study.knee_threshold = scale.knee_threshold;
  PlanOptions options = plan;
  options.top_k = 1;
  options.baseline = false;
  const ScalePoint* first = nullptr;
  const ScalePoint* previous = nullptr;
  study.points.reserve(gpus.size());
  for (int n : gpus) {
    JobSpec point_job = job;
    point_job.global_batch = scale.mode == ScaleMode::kWeak ? scale.local_batch * n : scale.global_batch;
    const int per_node = n < gpus_per_node ? n : gpus_per_node;
    const PlanResult r = RunPlan(model, point_job, n, per_node, factory(n, point_job), options);
    ScalePoint p;
    p.gpus = n;
    p.global_batch = point_job.global_batch;
    p.searched = r.searched;
    p.feasible_configs = r.feasible;
    p.goodput = r.goodput.fraction;
    if (!r.plans.empty()) {
      p.feasible = true;
      p.best = r.plans.front();
      p.objective_value = r.plan_values.front();
      p.useful_tokens_per_s = p.best.tokens_per_s * p.goodput;
      if (first == nullptr) {
        p.efficiency = 1.0;
      } else {
        p.efficiency = (p.useful_tokens_per_s / n) / (first->useful_tokens_per_s / first->gpus);
      }
      if (previous != nullptr) {
        p.marginal_tokens_per_s_per_gpu =
            (p.useful_tokens_per_s - previous->useful_tokens_per_s) / (n - previous->gpus);
        p.marginal_fraction = p.marginal_tokens_per_s_per_gpu / (previous->useful_tokens_per_s / previous->gpus);
      }
      if (study.knee_gpus == 0 && p.efficiency < scale.knee_threshold) study.knee_gpus = n;
    }
    study.points.push_back(p);
    if (plan.sweep_progress) {
      plan.sweep_progress(static_cast<int64_t>(study.points.size()), static_cast<int64_t>(gpus.size()));
    }
    if (p.feasible) {
      previous = &study.points.back();
      if (first == nullptr) first = previous;
    }
  }
  return study;
}

}  // namespace parasim::planner
