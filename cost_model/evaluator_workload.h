// The step the simulator replays (tiers B and C): per stage and layer the
// unit costs, the recorded collectives with their durations, pipeline sends,
// optimizer time and memory peak (workload.h). Built from tier A's passes, so
// both tiers see the same units, collectives and memory.
#pragma once

#include <vector>

#include "cost_model/evaluator_comm.h"
#include "cost_model/evaluator_context.h"
#include "cost_model/evaluator_memory.h"
#include "cost_model/evaluator_stage_time.h"
#include "cost_model/workload.h"

namespace parasim {

void BuildStepWorkload(const EvaluatorData& d, const ParallelConfig& c, const ConfigShape& cs, const Units& u,
                       const TimedComm& comm, const CommRecord& record, const std::vector<int>& stage_layers,
                       const StagePlan& stages, const MemoryPlan& memory, StepWorkload* wl,
                       const Units* kept = nullptr);

}  // namespace parasim
