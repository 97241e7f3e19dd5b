#include "cost_model/pipeline_boundary.h"

namespace parasim {

double PipelineBoundaryTime(const SoftwareStack& stack, const PipelineBoundaryParts& parts) {
  const double transfers = 0.5 * stack.pp_transfers_per_micro_batch;
  const double gathers = 0.5 * stack.pp_tp_gathers_per_micro_batch;
  return transfers * (parts.send + parts.meta_count * parts.meta) + gathers * parts.gather;
}

}  // namespace parasim
