// PlanSettings (facade/plan_settings.h) as the planner's options, inside the
// facade. Not installed.
#pragma once

#include "facade/plan_settings.h"
#include "planner/planner.h"

namespace parasim {

// Validates first (throws InvalidInput naming the flags).
planner::PlanOptions ToPlanOptions(const PlanSettings& settings, const PlanProgress& progress = {});

}  // namespace parasim
