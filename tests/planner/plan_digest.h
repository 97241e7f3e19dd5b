// Everything a plan's JSON report holds (facade/plan_value.cc prints it), as
// one string: tests compare two plan results exactly without the facade.
#pragma once

#include <string>

#include "core/error.h"
#include "core/number_format.h"
#include "cost_model/report_format.h"
#include "planner/planner.h"

namespace parasim_test {

inline std::string PlanDigest(const parasim::planner::PlanResult& r) {
  using parasim::FormatShortest;
  using parasim::ReportToJson;
  using parasim::StrCat;
  std::string out = StrCat("gpus ", r.gpus, " searched ", r.searched, " scored ", r.scored, " feasible ", r.feasible,
                           " cut_by ", r.cut_by, "\n");
  for (const auto& [reason, n] : r.rejected) out += StrCat("rejected ", reason, " ", n, "\n");
  out += StrCat("goodput ", FormatShortest(r.goodput.fraction), " ", FormatShortest(r.goodput.cluster_mtbf.si()), " ",
                FormatShortest(r.goodput.checkpoint_interval.si()), "\n");
  for (size_t i = 0; i < r.plans.size(); ++i) {
    out += StrCat("plan ", i + 1, " ", FormatShortest(r.plan_values.at(i)), " ", r.plans[i].config.ToString(), " ",
                  ReportToJson(r.plans[i]), "\n");
  }
  for (const parasim::Report& p : r.pareto) out += StrCat("pareto ", ReportToJson(p), "\n");
  if (r.baseline) out += StrCat("baseline ", FormatShortest(r.baseline_value), " ", ReportToJson(*r.baseline), "\n");
  return out;
}

}  // namespace parasim_test
