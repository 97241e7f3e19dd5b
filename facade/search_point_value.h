// The part of a scale or what-if point's JSON that describes its search: how
// many configs were searched and fitted, and the best plan where one fits.
// Shared so both studies print the same fields the same way. Not installed.
#pragma once

#include <utility>

#include "cost_model/report_json.h"
#include "facade/json_value.h"
#include "facade/value.h"

namespace parasim {

template <class Point>
void SetSearchCounts(Value& out, const Point& p) {
  out.Set("feasible", p.feasible);
  out.Set("searched", p.searched);
  out.Set("feasible_configs", p.feasible_configs);
}

template <class Point>
void SetBestPlan(Value& out, const Point& p) {
  if (!p.feasible) return;
  out.Set("objective_value", p.objective_value);
  out.Set("config_string", p.best.config.ToString());
  out.Set("best", JsonToValue(ReportToJsonValue(p.best)));
}

}  // namespace parasim
