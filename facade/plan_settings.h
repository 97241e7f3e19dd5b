// The planner's settings as `plan`, `scale` and `whatif` take them
// (objective, constraints, prices, goodput, threads, fidelity, bounds): the
// typed text of each flag, checked and turned into the planner's options by
// the facade (facade/plan_options.h). Errors name the flags. Not installed.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace parasim {

struct PlanSettings {
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
  void Validate() const;

  // `--rescore N`, the count's old spelling, still works (an alias of
  // --rescore-top N, without a warning: scripts that use it keep working).
  // -1 when --rescore names a mode.
  int RescoreCount() const;

  // What re-scores the best plans, for the progress line: "tier C (coarse)".
  std::string RescoreModeName() const;
};

// Progress of a long run (done, total), for the CLI's progress line; none
// changes the answer.
using ProgressCallback = std::function<void(int64_t done, int64_t total)>;

struct PlanProgress {
  ProgressCallback search;    // configs scored
  ProgressCallback rescore;   // best plans re-scored by tier B or C
  ProgressCallback sweep;     // points of a scale or what-if sweep
};

}  // namespace parasim
