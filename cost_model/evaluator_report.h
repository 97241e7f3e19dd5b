// Tier-A pass 5: the report of one config from its stage timing, step and
// memory: the critical stage's times and breakdowns, GPU power by stage,
// the memory verdict, and the metrics every tier shares (FinishReport).
#pragma once

#include <algorithm>

#include "cost_model/evaluator_context.h"
#include "cost_model/evaluator_finish.h"
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

// What the step measured (FinishReport's input), from the timed stages.
StepMeasures AnalyticalStepMeasures(const EvaluatorData& d, const ParallelConfig& c, const ConfigShape& cs,
                                    const StagePlan& stages, double step_s);

// Exposed communication over the step, from the critical stage (the report's
// exposed_comm_fraction).
inline double ExposedCommFraction(const StageResult& critical, double step_s) {
  return Seconds(std::min(critical.exposed, step_s)).si() / step_s;
}

// Whether the peak stage exceeds the GPU's memory (the memory verdict).
inline bool ExceedsMemory(const EvaluatorData& d, const MemoryPlan& memory) {
  return Bytes(memory.stage_bytes[memory.peak_stage]).si() > d.capacity;
}

void FinishAnalyticalReport(const EvaluatorData& d, const ParallelConfig& c, const ConfigShape& cs,
                            const StagePlan& stages, const PipelineStep& step, const MemoryPlan& memory, Report* rep);

}  // namespace parasim
