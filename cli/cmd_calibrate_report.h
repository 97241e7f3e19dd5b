// How `calibrate fit` and `calibrate fit-stack` hand over what they fitted:
// the profile as YAML (cli/output's writer) to -o FILE or stdout, the fit
// report to stderr as a table or, with --format json, as JSON.
#pragma once

#include "cli/command.h"
#include "facade/calibration.h"

namespace parasim::cli {

// Writes the profile (whole or not at all), then the report.
void WriteFittedProfile(const OutputOptions& out, const FittedProfile& fitted);

}  // namespace parasim::cli
