// Scaling study (`parasim scale`): the best plan at each GPU count, in weak
// mode (fixed sequences per GPU) or strong mode (fixed global batch), with
// per-GPU throughput, efficiency against the smallest size, the marginal
// throughput each added GPU buys, and the knee where efficiency falls below
// a threshold. With an MTBF the figures are goodput-adjusted.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/cluster_spec.h"
#include "planner/planner.h"

namespace parasim::planner {

enum class ScaleMode { kWeak, kStrong };
ScaleMode ParseScaleMode(const std::string& text, const std::string& where = "--mode");
const char* ToString(ScaleMode mode);

struct ScaleOptions {
  ScaleMode mode = ScaleMode::kWeak;
  long long local_batch = 2;     // weak: sequences per GPU per step (global batch = local_batch × N)
  long long global_batch = 0;    // strong: sequences per step at every size
  double knee_threshold = 0.8;   // efficiency below which the knee is reported
};

struct ScalePoint {
  int gpus = 0;
  long long global_batch = 0;
  bool feasible = false;          // some plan fits
  Report best;                    // the best plan (when feasible)
  double objective_value = 0;
  double goodput = 1;             // fraction of wall time that trains
  double useful_tokens_per_s = 0; // best.tokens_per_s × goodput
  double efficiency = 0;          // useful tokens/s per GPU relative to the first feasible size
  double marginal_tokens_per_s_per_gpu = 0;   // Δ useful tokens/s / Δ GPUs from the previous size
  double marginal_fraction = 0;   // the above relative to the previous size's per-GPU rate
  int64_t searched = 0;
  int64_t feasible_configs = 0;
};

struct ScaleStudy {
  ScaleMode mode = ScaleMode::kWeak;
  std::vector<ScalePoint> points;
  int knee_gpus = 0;              // first size with efficiency < threshold (0 = none)
  double knee_threshold = 0.8;
};

// Makes the scorer for one size (tests inject fakes).
using ScorerFactory = std::function<Scorer(int gpus, const JobSpec& job)>;

ScaleStudy RunScaleStudy(const ModelSpec& model, const JobSpec& job, int gpus_per_node, const std::vector<int>& gpus,
                         const ScaleOptions& scale, const PlanOptions& plan, const ScorerFactory& factory);

// The product form: tier A on `cluster` resized to each GPU count.
ScaleStudy RunScaleStudy(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                         const std::vector<int>& gpus, const ScaleOptions& scale, const PlanOptions& plan);

// `cluster` with `gpus` GPUs: whole nodes, or one partial node below a node's size.
ClusterSpec ResizeCluster(const ClusterSpec& cluster, int gpus);

}  // namespace parasim::planner
