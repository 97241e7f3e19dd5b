#include "planner/plan_options_validate.h"

#include <cmath>

namespace parasim::planner {

std::vector<Issue> ValidatePlanOptions(const PlanOptions& o) {
  IssueList issues;
  auto finite = [&](double v, const char* flag) {
    if (!std::isfinite(v) || v < 0) issues.Add("", flag, StrCat("must be a finite number >= 0, got ", v));
  };
  finite(o.objective.gpu_hour_price, "--gpu-hour-price");
  finite(o.objective.energy_price, "--energy-price");
  finite(o.objective.tokens, "--tokens");
  finite(o.objective.goodput.mtbf_gpu_hours, "--mtbf-gpu-hours");
  finite(o.objective.goodput.checkpoint_cost.si(), "--checkpoint-cost");
  finite(o.objective.goodput.checkpoint_interval.si(), "--checkpoint-interval");
  finite(o.objective.goodput.restart_time.si(), "--restart-time");
  finite(o.time_budget_s, "--time-budget");
  if (o.top_k < 1) issues.Add("", "--top", StrCat("must be at least 1, got ", o.top_k));
  if (o.rescore_k < 0) issues.Add("", "--rescore", StrCat("must not be negative, got ", o.rescore_k));
  if (o.threads < 0) issues.Add("", "--threads", StrCat("must not be negative, got ", o.threads));
  if (o.max_configs < 0) issues.Add("", "--max-configs", StrCat("must not be negative, got ", o.max_configs));
  if (o.space.max_tp < 0) issues.Add("", "--max-tp", StrCat("must not be negative, got ", o.space.max_tp));
  if (issues.empty()) {
    // What the objective needs (a price, --tokens), once the numbers are sane.
    try {
      o.objective.Validate();
    } catch (const InvalidInput& e) {
      for (const Issue& issue : e.issues()) issues.Add(issue);
    }
  }
  return issues.issues();
}

}  // namespace parasim::planner
