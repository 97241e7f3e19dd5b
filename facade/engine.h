// The state a Planner and its copies share: the specs and the caches, under
// one mutex. What a query reuses, by key (an evaluator is const and
// thread-safe once built; no answer depends on what a cache holds):
//   evaluators_       (GPU count, global batch) -> tier-A evaluator;
//   sized_            GPU count -> the cluster loaded at that size (a YAML
//                     load per size; the batch does not change it);
//   base_             the first evaluator built: every later one is its
//                     Resized() copy, so the per-thread memo tables keep unit
//                     costs across GPU counts and batches, and group paths and
//                     collective times across batches at one GPU count
//                     (cost_model/evaluator_context.h: kernel_id, fabric_id).
// Nothing is invalidated: the specs are fixed for the Planner's life.
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
  // The same, cached per GPU count.
  std::shared_ptr<const ClusterSpec> SizedCached(int gpus, const char* field);

 private:
  static constexpr size_t kMaxEvaluators = 256;   // a scheduler's distinct sizes; cleared when full
  std::mutex mutex_;
  std::map<std::pair<int, int64_t>, std::shared_ptr<const AnalyticalEvaluator>> evaluators_;
  std::map<int, std::shared_ptr<const ClusterSpec>> sized_;
  std::shared_ptr<const AnalyticalEvaluator> base_;
};

}  // namespace parasim::detail
