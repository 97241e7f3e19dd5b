// The state a Planner and its copies share: the specs and the cache of
// evaluators by (GPU count, global batch). The cache is under a mutex; an
// evaluator is const and thread-safe once built, and its answers do not
// depend on what else the cache holds.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "core/cluster_spec.h"
#include "core/job_spec.h"
#include "core/model_spec.h"
#include "cost_model/evaluator.h"
#include "cost_model/software_stack.h"

namespace parasim::detail {

struct Engine {
  ModelSpec model;
  ClusterSpec cluster;         // as loaded
  std::string cluster_source;  // preset or file, loaded again per node count (switch tiers follow it)
  SoftwareStack stack;
  JobSpec job;

  // The evaluator for `gpus` GPUs and `global_batch` sequences (0 = the job's);
  // `field` names the query field a bad GPU count came from.
  std::shared_ptr<const AnalyticalEvaluator> For(int gpus, int64_t global_batch, const char* field);
  // The cluster with `gpus` GPUs (whole nodes), as `--gpus` loads it.
  ClusterSpec Sized(int gpus, const char* field) const;

 private:
  static constexpr size_t kMaxEvaluators = 256;   // a scheduler's distinct sizes; cleared when full
  std::mutex mutex_;
  std::map<std::pair<int, int64_t>, std::shared_ptr<const AnalyticalEvaluator>> evaluators_;
};

}  // namespace parasim::detail
