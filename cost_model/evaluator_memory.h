// Tier-A pass 4: memory per GPU of every pipeline stage (memory.h), and the
// peak stage's breakdown.
#pragma once

#include <limits>
#include <vector>

#include "cost_model/evaluator_context.h"
#include "cost_model/memory.h"

namespace parasim {

struct MemoryPlan {
  std::vector<double> stage_bytes;   // per stage, peak per GPU
  std::vector<double> stage_allocated_after_backward;   // per stage, MemoryEstimate::allocated_after_backward
  MemoryEstimate peak;               // of the peak stage
  int peak_stage = 0;                // the first stage at the peak
};

// Sizes every stage into `out` (reused between calls). With `stop_above`,
// sizing stops at the first stage above it, made the peak stage: the memory
// verdict (ExceedsMemory at stop_above) is the full sizing's, nothing else is.
void SizeStageMemory(const EvaluatorData& d, const ParallelConfig& c, const ConfigShape& cs, const Units& u,
                     const std::vector<int>& stage_layers, MemoryPlan* out,
                     double stop_above = std::numeric_limits<double>::infinity());

}  // namespace parasim
