// What the planner ranks one config on, without the full Report: whether it
// fits (and if not, the reason's category), throughput, energy efficiency
// and exposed communication. AnalyticalEvaluator::Metrics() gives these
// bit-identical to the same fields of Evaluate()'s Report; the planner builds
// full Reports only for the plans it returns.
#pragma once

#include <string>

namespace parasim {

struct ConfigMetrics {
  bool feasible = false;
  std::string reason_category;   // infeasible: the reason's text before ':' ("memory", "config")
  double tokens_per_s = 0;
  double tokens_per_joule = 0;
  double exposed_comm_fraction = 0;
};

}  // namespace parasim
