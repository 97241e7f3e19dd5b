// Validate() for plan options: every problem of a PlanOptions at once (ranges,
// finiteness, what the objective needs), named by the CLI flag that sets it.
// RunPlan calls it before any work, so a library caller's NaN price or zero
// top-k is bad input (exit 2), not a NaN ranking.
#pragma once

#include <vector>

#include "core/error.h"
#include "planner/planner.h"

namespace parasim::planner {

std::vector<Issue> ValidatePlanOptions(const PlanOptions& options);

}  // namespace parasim::planner
