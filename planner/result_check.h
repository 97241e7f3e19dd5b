// The planner's outputs are finite: every plan, Pareto point and baseline
// report, their objective values and the goodput (cost_model/report_check.h).
#pragma once

#include "planner/planner.h"

namespace parasim::planner {

// Throws InternalError naming the first non-finite field.
void CheckPlanResultFinite(const PlanResult& result);

}  // namespace parasim::planner
