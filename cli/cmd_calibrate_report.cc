#include "cli/cmd_calibrate_report.h"

#include <iostream>

#include "cli/output/writers.h"

namespace parasim::cli {

std::string FitReportTable(const Value& report) {
  std::string out;
  if (const Value* summary = report.Find("summary")) out += summary->as_string() + "\n";
  // Fitted values at 6 digits (enough to tell base from fitted), residuals at 4.
  if (const Value* rows = report.Find("parameters")) out += WriteRecords(*rows, 6, 2);
  if (const Value* rows = report.Find("residuals")) {
    if (!rows->items().empty()) out += "  residuals:\n";
    out += WriteRecords(*rows, 4, 4);
  }
  if (const Value* notes = report.Find("notes"))
    for (const Value& note : notes->items()) out += "  note: " + note.as_string() + "\n";
  return out;
}

void WriteFittedProfile(const OutputOptions& out, const FittedProfile& fitted) {
  WriteOutput(out, WriteYaml(fitted.profile.body, fitted.profile.comment));
  std::cerr << (out.Parsed() == Format::kJson ? WriteJson(fitted.report) + "\n" : FitReportTable(fitted.report));
}

}  // namespace parasim::cli
