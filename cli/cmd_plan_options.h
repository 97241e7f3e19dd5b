// Planner flags shared by `plan`, `scale` and `whatif` (objective,
// constraints, prices, goodput, threads), filled into the facade's
// PlanSettings (facade/plan_settings.h), which checks them.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "facade/plan_settings.h"

namespace parasim::cli {

inline void AddPlannerFlags(CLI::App& cmd, PlanSettings& f, bool with_top = true) {
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
