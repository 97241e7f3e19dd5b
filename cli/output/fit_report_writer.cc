// A fit report (facade/fitted_profiles.h) as text: the summary line, the
// fitted parameters and the residuals as aligned tables, then the notes.
#include "cli/output/writers.h"

namespace parasim::cli {

std::string WriteFitReport(const Value& report) {
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

}  // namespace parasim::cli
