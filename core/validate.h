// Validate(): every spec's issues at once, from one place. The numeric
// ranges of GPU profiles, clusters and jobs come from the field registry
// (core/field_registry.h), the stack's from cost_model/stack_field_registry.h,
// the layout rules of a parallel config from core/layout_rules.h.
#pragma once

#include <string>
#include <vector>

#include "core/cluster_spec.h"
#include "core/error.h"
#include "core/job_spec.h"
#include "core/model_spec.h"

namespace parasim {

// Sizes, positivity and the shape rules of a model (heads divide hidden, ...).
std::vector<Issue> ValidateModel(const ModelSpec& model, const std::string& file);

// The model's, the cluster's (with its GPU's) and the job's issues, in that order.
std::vector<Issue> ValidateSpecs(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job);

}  // namespace parasim
