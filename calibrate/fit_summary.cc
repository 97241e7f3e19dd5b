#include "calibrate/fit_summary.h"

namespace parasim::calibrate {

const char* ToString(FitStatus status) {
  switch (status) {
    case FitStatus::kConverged: return "converged";
    case FitStatus::kPoorFit: return "poor-fit";
    case FitStatus::kInsufficientData: return "insufficient-data";
    case FitStatus::kIllConditioned: return "ill-conditioned";
  }
  return "unknown";
}

}  // namespace parasim::calibrate
