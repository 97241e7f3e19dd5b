#include "facade/plan_value.h"

#include <cmath>

#include "core/check.h"
#include "cost_model/report_json.h"
#include "facade/json_value.h"
#include "planner/objective.h"

namespace parasim {
namespace {

double Finite(double v) {
  PARASIM_CHECK(std::isfinite(v), "non-finite number in plan output");
  return v;
}

Value Strings(const std::vector<std::string>& lines) {
  return ArrayOf(lines, [](const std::string& l) { return Value(l); });
}

// A report preceded by the planner's own fields (rank 0: unranked, as the
// Pareto front and the baseline are).
Value RankedReport(const Report& r, int rank, double objective_value) {
  Value out = Value::Object();
  if (rank > 0) {
    out.Set("rank", rank);
    out.Set("objective_value", Finite(objective_value));
  }
  out.Set("config_string", r.config.ToString());
  const Value report = JsonToValue(ReportToJsonValue(r));
  for (const auto& [key, value] : report.members()) out.Set(key, value);
  return out;
}

}  // namespace

Value PlanToValue(const planner::PlanResult& r, const planner::PlanExtras& extras) {
  Value j = Value::Object();
  j.Set("objective", planner::ToString(r.objective.objective));
  j.Set("objective_unit", planner::ObjectiveUnit(r.objective.objective, r.objective.tokens));
  j.Set("gpus", r.gpus);
  j.Set("fidelity", r.plans.empty() ? "analytical" : ToString(r.plans.front().fidelity));
  j.Set("searched", r.searched);
  j.Set("scored", r.scored);
  j.Set("feasible", r.feasible);
  if (!r.cut_by.empty()) j.Set("cut_by", r.cut_by);   // a resource bound stopped the search
  Value rejected = Value::Object();
  for (const auto& [reason, n] : r.rejected) rejected.Set(reason, n);
  j.Set("rejected", std::move(rejected));
  if (r.objective.goodput.mtbf_gpu_hours > 0) {
    j.Set("goodput", Value::Record({{"fraction", Finite(r.goodput.fraction)},
                                    {"cluster_mtbf_s", Finite(r.goodput.cluster_mtbf.si())},
                                    {"checkpoint_interval_s", Finite(r.goodput.checkpoint_interval.si())}}));
  }
  Value plans = Value::Array();
  for (size_t i = 0; i < r.plans.size(); ++i) {
    plans.Push(RankedReport(r.plans[i], static_cast<int>(i + 1), r.plan_values[i]));
  }
  j.Set("plans", std::move(plans));
  j.Set("pareto", ArrayOf(r.pareto, [](const Report& p) { return RankedReport(p, 0, 0); }));
  Value baseline;
  if (r.baseline) {
    baseline = RankedReport(*r.baseline, 0, 0);
    baseline.Set("objective_value", Finite(r.baseline_value));
  }
  j.Set("baseline", std::move(baseline));
  if (!extras.explanation.empty()) j.Set("explanation", Strings(extras.explanation));
  if (extras.launch != nullptr) {
    Value launch = Value::Record({{"framework", planner::ToString(extras.launch->framework)},
                                  {"text", extras.launch->text},
                                  {"notes", Strings(extras.launch->notes)}});
    if (!extras.launch->target.empty()) launch.Set("target", extras.launch->target);
    j.Set("launch", std::move(launch));
  }
  return j;
}

Value UncertaintyToValue(const planner::UncertaintyResult& r) {
  Value j = Value::Object();
  j.Set("samples", r.samples);
  j.Set("seed", r.seed);
  j.Set("fields_perturbed", r.fields.size());
  j.Set("fields", ArrayOf(r.fields, [](const planner::UncertainField& f) {
          return Value::Record({{"key", f.key}, {"relative_sigma", f.sigma}});
        }));
  j.Set("plans", ArrayOf(r.plans, [](const planner::PlanSpread& p) {
          return Value::Record({{"config_string", p.config},
                                {"tokens_per_s", p.base_tokens_per_s},
                                {"p10_tokens_per_s", p.p10},
                                {"p50_tokens_per_s", p.p50},
                                {"p90_tokens_per_s", p.p90},
                                {"ranked_first", p.ranked_first}});
        }));
  j.Set("other_first", r.other_first);
  return j;
}

}  // namespace parasim
