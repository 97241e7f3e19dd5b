// What-if sweeps (`parasim whatif`): vary cluster or job fields — a GPU
// profile figure, the fabric, the node count, the sequence — and find the
// best plan at each point of the grid, so an architect sees what a faster
// NIC or more HBM bandwidth would buy once the plan adapts to it.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/cluster_spec.h"
#include "core/job_spec.h"
#include "core/model_spec.h"
#include "planner/planner.h"

namespace parasim::planner {

// One varied key and its values, from "key=v1,v2,v3" (values carry units).
struct Variation {
  std::string key;
  std::vector<std::string> values;
};
// Throws parasim::Error naming the key when it is unknown or has no values.
Variation ParseVariation(const std::string& text, const std::string& where = "--vary");
// The keys ApplyVariation knows.
std::vector<std::string> WhatifKeys();
// Sets `key` to `value` (parsed with its unit) on the cluster or the job.
void ApplyVariation(ClusterSpec& cluster, JobSpec& job, const std::string& key, const std::string& value);

struct WhatifPoint {
  std::vector<std::pair<std::string, std::string>> setting;   // key, value of this grid point
  int gpus = 0;
  bool feasible = false;
  Report best;
  double objective_value = 0;
  int64_t searched = 0;
  int64_t feasible_configs = 0;
};

// The grid is the cartesian product of the variations, first key outermost.
std::vector<WhatifPoint> RunWhatif(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                                   const std::vector<Variation>& variations, const PlanOptions& options);

}  // namespace parasim::planner
