// Tier-A pass 1: the compute of the three kinds of unit (transformer layer,
// embedding, LM head + loss) of one config, memoized per thread: a planner
// asks for many configs that share them.
#pragma once

#include "cost_model/evaluator_context.h"

namespace parasim {

// Valid until the next call on this thread.
const Units& UnitCostsOf(const EvaluatorData& d, const ParallelConfig& c, const ConfigShape& cs);

}  // namespace parasim
