// Why the winner wins: a few lines comparing it with the runner-up and with
// the pure-FSDP baseline on step time and its parts (exposed communication,
// pipeline bubble, compute and its kernel efficiency) and memory.
#pragma once

#include <string>
#include <vector>

#include "cost_model/report.h"
#include "planner/objective.h"

namespace parasim::planner {

// `runner_up` and `baseline` may be null. Lines carry no trailing newline.
std::vector<std::string> ExplainPlan(const Report& winner, const Report* runner_up, const Report* baseline,
                                     Objective objective);

// Compute-phase efficiency: hardware FLOPs over compute time, as a fraction of peak.
double KernelEfficiency(const Report& r);

// Short config string for people: only the keys that differ from defaults
// that matter (dp, tp, pp, cp, ep, mbs, sharding, recompute, sp, vpp, schedule).
std::string ShortConfig(const ParallelConfig& c);

}  // namespace parasim::planner
