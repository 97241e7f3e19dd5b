// `parasim plan --format json` as a Value (DESIGN.md §5): {"objective",
// "objective_unit", "gpus", "fidelity", "searched", "scored", "feasible",
// ["cut_by"], "rejected", ["goodput"], "plans", "pareto", "baseline",
// ["explanation"], ["launch"]}, then "uncertainty" when asked. Counts are
// integers, measures doubles. Not installed.
#pragma once

#include "facade/value.h"
#include "planner/plan_format.h"
#include "planner/planner.h"
#include "planner/uncertainty.h"

namespace parasim {

Value PlanToValue(const planner::PlanResult& result, const planner::PlanExtras& extras = {});

// The "uncertainty" object: what was drawn and each plan's spread.
Value UncertaintyToValue(const planner::UncertaintyResult& result);

}  // namespace parasim
