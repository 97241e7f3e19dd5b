#include "cost_model/workload.h"

namespace parasim {

const char* ToString(CommPhase p) {
  switch (p) {
    case CommPhase::kForwardPrefetch: return "forward_prefetch";
    case CommPhase::kForward: return "forward";
    case CommPhase::kBackwardPrefetch: return "backward_prefetch";
    case CommPhase::kBackward: return "backward";
    case CommPhase::kGradientReduce: return "gradient_reduce";
    case CommPhase::kStepEnd: return "step_end";
  }
  return "?";
}

}  // namespace parasim
