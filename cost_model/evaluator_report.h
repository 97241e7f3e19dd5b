// Tier-A pass 5: the report of one config from its stage timing, step and
// memory: the critical stage's times and breakdowns, GPU power by stage,
// the memory verdict, and the metrics every tier shares (FinishReport).
#pragma once

#include "cost_model/evaluator_context.h"
#include "cost_model/evaluator_memory.h"
#include "cost_model/evaluator_stage_time.h"
#include "cost_model/report.h"

namespace parasim {

// Tokens and FLOPs of one step, whole job.
struct StepFlops {
  double tokens = 0;
  double model = 0;      // MFU basis
  double hardware = 0;   // + recomputation (HFU basis)
};
StepFlops StepFlopsOf(const EvaluatorData& d, const ParallelConfig& c);

void FinishAnalyticalReport(const EvaluatorData& d, const ParallelConfig& c, const ConfigShape& cs,
                            const StagePlan& stages, const PipelineStep& step, const MemoryPlan& memory, Report* rep);

}  // namespace parasim
