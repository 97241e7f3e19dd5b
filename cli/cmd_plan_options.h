// Planner flags shared by `plan` and `scale` (objective, constraints, prices,
// goodput, threads), filled into planner::PlanOptions.
#pragma once

#include <cmath>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "core/error.h"
#include "core/unit_parse.h"
#include "planner/planner.h"

namespace parasim::cli {

struct PlannerFlags {
  std::string objective = "tokens-per-joule";
  std::string constrain;
  int top = 16;
  int threads = 0;
  int max_tp = 0;
  double gpu_hour_price = 0;
  double energy_price = 0;
  double tokens = 0;
  double mtbf_gpu_hours = 0;
  std::string checkpoint_cost = "60 s";
  std::string checkpoint_interval;   // "" = Young/Daly optimum
  std::string restart_time = "10 min";
  std::string fidelity = "analytical";
  std::string rescore = "coarse";    // coarse | detailed | N (alias of --rescore-top N)
  int rescore_top = 16;
  long long max_configs = 0;         // 0 = no bound
  std::string time_budget;           // "" = no bound

  // Every number in range before any use: NaN, inf and negatives never reach
  // a report. All problems at once.
  void Validate() const {
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

  // `--rescore N`, the count's old spelling, still works (an alias of
  // --rescore-top N, without a warning: scripts that use it keep working).
  // -1 when --rescore names a mode.
  int RescoreCount() const {
    if (rescore.empty() || rescore.size() > 7 || rescore.find_first_not_of("0123456789") != std::string::npos) return -1;
    return std::stoi(rescore);
  }

  planner::PlanOptions ToOptions() const {
    Validate();
    planner::PlanOptions o;
    o.objective.objective = planner::ParseObjective(objective);
    o.constraints = planner::ConstraintSet::Parse(constrain);
    o.top_k = top;
    o.threads = threads;
    o.space.max_tp = max_tp;
    o.objective.gpu_hour_price = gpu_hour_price;
    o.objective.energy_price = energy_price;
    o.objective.tokens = tokens;
    o.objective.goodput.mtbf_gpu_hours = mtbf_gpu_hours;
    o.objective.goodput.checkpoint_cost = ParseDuration(checkpoint_cost, "--checkpoint-cost");
    if (!checkpoint_interval.empty()) {
      o.objective.goodput.checkpoint_interval = ParseDuration(checkpoint_interval, "--checkpoint-interval");
    }
    o.objective.goodput.restart_time = ParseDuration(restart_time, "--restart-time");
    if (fidelity == "simulated") o.fidelity = Fidelity::kSimulated;
    else if (fidelity == "full") o.fidelity = Fidelity::kFull;
    o.rescore_k = RescoreCount() >= 0 ? RescoreCount() : rescore_top;
    o.rescore_detailed = rescore == "detailed";
    o.max_configs = max_configs;
    if (!time_budget.empty()) o.time_budget_s = ParseDuration(time_budget, "--time-budget").si();
    o.objective.Validate();
    return o;
  }
};

// What re-scores the best plans, for the progress line: "tier C (coarse)".
inline std::string RescoreModeName(const planner::PlanOptions& o) {
  if (o.fidelity == Fidelity::kSimulated) return "tier B";
  return o.rescore_detailed ? "tier C (detailed)" : "tier C (coarse)";
}

inline void AddPlannerFlags(CLI::App& cmd, PlannerFlags& f, bool with_top = true) {
  cmd.add_option("--objective", f.objective,
                 "What to optimize: tokens-per-joule | throughput | exposed-comm | cost | time-to-train")
      ->capture_default_str();
  cmd.add_option("--constrain", f.constrain,
                 "Fix or bound config keys, e.g. \"tp=8,pp<=4,sharding=zero2,recompute=none\" or \"tp in 1|2|4\"");
  if (with_top) cmd.add_option("--top", f.top, "How many ranked plans to print")->capture_default_str();
  cmd.add_option("--threads", f.threads, "Planner threads (0 = hardware concurrency)")->capture_default_str();
  cmd.add_option("--max-tp", f.max_tp, "Largest tensor-parallel degree searched (0 = two nodes' worth)");
  cmd.add_option("--gpu-hour-price", f.gpu_hour_price, "Price of one GPU-hour in $ (cost objective)");
  cmd.add_option("--energy-price", f.energy_price, "Price of energy in $ per kWh (cost objective)");
  cmd.add_option("--tokens", f.tokens, "Tokens to train (time-to-train; cost per run)");
  cmd.add_option("--mtbf-gpu-hours", f.mtbf_gpu_hours,
                 "Mean time between failures of one GPU, in GPU-hours (0 = no failures). Llama 3's 419 "
                 "interruptions in 54 days on 16,384 GPUs give about 50,700");
  cmd.add_option("--checkpoint-cost", f.checkpoint_cost, "Time one checkpoint stalls training (duration)")
      ->capture_default_str();
  cmd.add_option("--checkpoint-interval", f.checkpoint_interval,
                 "Checkpoint interval (duration; default: Young/Daly optimum)");
  cmd.add_option("--restart-time", f.restart_time, "Time to restart after a failure (duration)")->capture_default_str();
  cmd.add_option("--fidelity", f.fidelity,
                 "analytical (tier A only) | simulated (re-score the best with tier B) | full (tier C)")
      ->check(CLI::IsMember({"analytical", "simulated", "full"}))
      ->capture_default_str();
  cmd.add_option("--rescore", f.rescore,
                 "Tier C's mode for re-scoring (--fidelity full): coarse (one flow set per collective) | detailed "
                 "(NCCL step schedules, up to 16,384 GPUs); a number N is --rescore-top N")
      ->capture_default_str();
  cmd.add_option("--rescore-top", f.rescore_top, "How many of tier A's best plans the simulator re-scores")
      ->capture_default_str();
  cmd.add_option("--max-configs", f.max_configs,
                 "Score at most N candidates, the first in the fixed enumeration order (deterministic; 0 = all)");
  cmd.add_option("--time-budget", f.time_budget,
                 "Stop scoring after this long (duration, e.g. \"30 s\"); the output says it was cut");
}

}  // namespace parasim::cli
