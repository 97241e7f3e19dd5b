// What each rank did over a simulated step: time computing, communicating,
// communicating with no compute beside it (exposed), idle, and the energy
// and power steps that follow from its activity state (DESIGN.md §4 Power:
// matmul-bound, memory-bound, comm kernels alone, idle).
#pragma once

#include <vector>

#include "simulator/engine.h"
#include "simulator/task_graph.h"

namespace parasim::simulator {

// Per-GPU power by activity state, watts. When compute and comm overlap the
// compute state sets the power (comm kernels add little beside a GEMM).
struct PowerModel {
  double matmul_W = 0;
  double memory_W = 0;
  double comm_W = 0;
  double idle_W = 0;
};

struct RankSummary {
  double compute_s = 0;        // a compute kernel running
  double comm_s = 0;           // any comm kernel running (union over streams)
  double exposed_comm_s = 0;   // comm running and no compute
  double idle_s = 0;           // nothing running
  double energy_J = 0;         // over [0, end_s]
};

// A power step: `watts` from `start_s` until the next step (or the end).
struct PowerStep {
  double start_s = 0;
  double watts = 0;
};

// Summaries over [0, end_s] (end_s >= the timeline's makespan), one per rank.
// `power_steps`, when given, receives each rank's power steps, merged where
// the power does not change.
std::vector<RankSummary> SummarizeRanks(const TaskGraph& graph, const Timeline& timeline,
                                        const PowerModel& power, double end_s,
                                        std::vector<std::vector<PowerStep>>* power_steps = nullptr);

}  // namespace parasim::simulator
