// The outcome of a fit, as a value (STYLE.md §4.3, after Ceres' Summary):
// callers decide what a poor fit means; nothing here throws for numerics.
#pragma once

#include <string>

namespace parasim::calibrate {

enum class FitStatus {
  kConverged,         // parameters found; residuals within the fit's tolerance
  kPoorFit,           // parameters found, but the model misses the data (see rms_rel_error)
  kInsufficientData,  // too few usable points to determine the parameters
  kIllConditioned,    // the data do not determine the parameters (e.g. time falls with size)
};

const char* ToString(FitStatus status);

struct FitSummary {
  FitStatus status = FitStatus::kInsufficientData;
  std::string message;
  int iterations = 0;          // solver iterations (1 for a closed-form linear solve)
  double rms_rel_error = 0.0;  // sqrt(mean(((model - measured) / measured)^2))

  // Parameters are usable (converged or merely a poor fit).
  bool usable() const { return status == FitStatus::kConverged || status == FitStatus::kPoorFit; }
};

}  // namespace parasim::calibrate
