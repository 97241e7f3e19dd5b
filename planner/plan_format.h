// `parasim plan` output: a ranked table whose config strings replay through
// `simulate --config`, and CSV rows. The JSON object of DESIGN.md §5 is built
// as a value by the facade (facade/plan_value.h).
#pragma once

#include <string>
#include <vector>

#include "planner/launch_flags.h"
#include "planner/planner.h"

namespace parasim::planner {

struct PlanExtras {
  std::vector<std::string> explanation;   // empty: not asked
  const LaunchFlags* launch = nullptr;    // null: not asked
  std::string stack;                      // the software stack planned for; empty: not shown
};

std::string PlanToTable(const PlanResult& result, const PlanExtras& extras = {});
std::string PlanToCsv(const PlanResult& result);

// Fixed-width text table (header + rows), columns left-aligned, two spaces apart.
std::string RenderTable(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows);
// "%.*g"-style number text for tables.
std::string FormatNumber(double v, int significant = 4);

}  // namespace parasim::planner
