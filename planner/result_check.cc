#include "planner/result_check.h"

#include "core/error.h"
#include "cost_model/report_check.h"

namespace parasim::planner {

void CheckPlanResultFinite(const PlanResult& r) {
  for (size_t i = 0; i < r.plans.size(); ++i) CheckReportFinite(r.plans[i], StrCat("plan ", i + 1));
  for (size_t i = 0; i < r.plan_values.size(); ++i) CheckFinite(r.plan_values[i], "objective", StrCat("plan ", i + 1));
  for (size_t i = 0; i < r.pareto.size(); ++i) CheckReportFinite(r.pareto[i], StrCat("pareto point ", i + 1));
  if (r.baseline) {
    CheckReportFinite(*r.baseline, "baseline plan");
    CheckFinite(r.baseline_value, "objective", "baseline plan");
  }
  CheckFinite(r.goodput.fraction, "goodput.fraction", "plan");
  CheckFinite(r.goodput.cluster_mtbf.si(), "goodput.cluster_mtbf", "plan");
  CheckFinite(r.goodput.checkpoint_interval.si(), "goodput.checkpoint_interval", "plan");
}

}  // namespace parasim::planner
