// The planner tests' small job: Llama-2-7B, global batch 128 x 4096 tokens,
// on 64 DGX H100 GPUs (a space of a few thousand configs, seconds to plan).
#pragma once

#include "core/cluster_spec.h"
#include "core/job_spec.h"
#include "core/loaders.h"
#include "core/model_spec.h"
#include "cost_model/evaluator.h"
#include "planner/scaling.h"

namespace parasim::testing {

struct Llama7bOn64H100 {
  ModelSpec model = LoadModel("llama2-7b");
  ClusterSpec cluster = planner::ResizeCluster(LoadCluster("dgx-h100"), 64);
  JobSpec job;
  Llama7bOn64H100() {
    job.global_batch = 128;
    job.seq_len = 4096;
  }
  AnalyticalEvaluator Evaluator() const { return AnalyticalEvaluator(model, cluster, job); }
};

}  // namespace parasim::testing
