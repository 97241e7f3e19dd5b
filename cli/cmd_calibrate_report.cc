#include "cli/cmd_calibrate_report.h"

#include <iostream>

#include "cli/output/writers.h"

namespace parasim::cli {

void WriteFittedProfile(const OutputOptions& out, const FittedProfile& fitted) {
  WriteOutput(out, WriteYaml(fitted.profile.body, fitted.profile.comment));
  std::cerr << (out.Parsed() == Format::kJson ? WriteJson(fitted.report) + "\n" : WriteFitReport(fitted.report));
}

}  // namespace parasim::cli
