#include <cmath>

#include "core/error.h"
#include "core/unit_parse.h"
#include "facade/plan_options.h"

namespace parasim {

void PlanSettings::Validate() const {
  IssueList issues;
  auto real = [&](double v, const char* flag, double max) {
    if (!(std::isfinite(v) && v >= 0 && v <= max)) {
      issues.Add("", flag, StrCat("must be a finite number in [0, ", max, "], got ", v));
    }
  };
  auto count = [&](int v, const char* flag, int min, int max) {
    if (v < min || v > max) issues.Add("", flag, StrCat("must be in [", min, ", ", max, "], got ", v));
  };
  real(gpu_hour_price, "--gpu-hour-price", 1e6);
  real(energy_price, "--energy-price", 1e6);
  real(tokens, "--tokens", 1e18);
  real(mtbf_gpu_hours, "--mtbf-gpu-hours", 1e12);
  count(top, "--top", 1, 1000000);
  count(threads, "--threads", 0, 4096);
  count(max_tp, "--max-tp", 0, 1000000);
  count(rescore_top, "--rescore-top", 0, 1000000);
  if (RescoreCount() < 0 && rescore != "coarse" && rescore != "detailed") {
    issues.Add("", "--rescore", StrCat("must be coarse, detailed or a count, got '", rescore, "'"));
  }
  if (rescore == "detailed" && fidelity != "full") {
    issues.Add("", "--rescore", "detailed is tier C's mode: it needs --fidelity full");
  }
  if (max_configs < 0) issues.Add("", "--max-configs", StrCat("must be >= 0, got ", max_configs));
  issues.ThrowIfAny();
}

int PlanSettings::RescoreCount() const {
  if (rescore.empty() || rescore.size() > 7 || rescore.find_first_not_of("0123456789") != std::string::npos) return -1;
  return std::stoi(rescore);
}

std::string PlanSettings::RescoreModeName() const {
  if (fidelity == "simulated") return "tier B";
  return rescore == "detailed" ? "tier C (detailed)" : "tier C (coarse)";
}

planner::PlanOptions ToPlanOptions(const PlanSettings& s, const PlanProgress& progress) {
  s.Validate();
  planner::PlanOptions o;
  o.objective.objective = planner::ParseObjective(s.objective);
  o.constraints = planner::ConstraintSet::Parse(s.constrain);
  o.top_k = s.top;
  o.threads = s.threads;
  o.space.max_tp = s.max_tp;
  o.objective.gpu_hour_price = s.gpu_hour_price;
  o.objective.energy_price = s.energy_price;
  o.objective.tokens = s.tokens;
  o.objective.goodput.mtbf_gpu_hours = s.mtbf_gpu_hours;
  o.objective.goodput.checkpoint_cost = ParseDuration(s.checkpoint_cost, "--checkpoint-cost");
  if (!s.checkpoint_interval.empty()) {
    o.objective.goodput.checkpoint_interval = ParseDuration(s.checkpoint_interval, "--checkpoint-interval");
  }
  o.objective.goodput.restart_time = ParseDuration(s.restart_time, "--restart-time");
  if (s.fidelity == "simulated") o.fidelity = Fidelity::kSimulated;
  else if (s.fidelity == "full") o.fidelity = Fidelity::kFull;
  o.rescore_k = s.RescoreCount() >= 0 ? s.RescoreCount() : s.rescore_top;
  o.rescore_detailed = s.rescore == "detailed";
  o.max_configs = s.max_configs;
  if (!s.time_budget.empty()) o.time_budget_s = ParseDuration(s.time_budget, "--time-budget").si();
  o.objective.Validate();
  o.progress = progress.search;
  o.rescore_progress = progress.rescore;
  o.sweep_progress = progress.sweep;
  return o;
}

}  // namespace parasim
