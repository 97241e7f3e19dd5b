// One pipeline boundary's time on a stage's stream, per micro-batch and
// direction (DESIGN.md §4 Communication per parallelism, pipeline). How many
// transfers and tp all-gathers a stage runs in turn per micro-batch is the
// engine's (SoftwareStack::pp_transfers_per_micro_batch,
// pp_tp_gathers_per_micro_batch): a micro-batch crosses the stage's two
// boundaries once each way, so the evaluator charges this time twice.
#pragma once

#include "cost_model/software_stack.h"

namespace parasim {

struct PipelineBoundaryParts {
  double send = 0;        // one transfer of the boundary tensor (its 1/tp part when partitioned), s
  double meta = 0;        // one small shape message, s
  double meta_count = 0;  // shape messages before each transfer
  double gather = 0;      // one tp all-gather of the partitioned tensor, s (0: not partitioned)
};

// transfers/2 × (send + meta_count × meta) + gathers/2 × gather: the
// stack's transfers and gathers of one micro-batch, split over its two
// directions. Megatron's two paired exchanges and two gathers give
// send + meta + gather.
double PipelineBoundaryTime(const SoftwareStack& stack, const PipelineBoundaryParts& parts);

}  // namespace parasim
