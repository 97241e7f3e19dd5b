// Reports as the DESIGN.md §5 JSON contract, and as table and CSV rows. One
// place defines field names and units, so every command prints the same.
#pragma once

#include <string>
#include <vector>

#include "cost_model/report.h"

namespace parasim {

// One report as a JSON object text (keys in DESIGN.md §5, SI units in names);
// `indent` < 0 gives one line. Non-finite numbers never appear (a check fails).
std::string ReportToJson(const Report& report, int indent = 2);

// Column headers and rows for many reports (rank order kept).
std::string ReportsToTable(const std::vector<Report>& reports);
std::string ReportsToCsv(const std::vector<Report>& reports);

// Each pipeline stage's peak memory per GPU in GB, one line per stage, the
// peak stage marked (simulate --explain).
std::string StageMemoryText(const Report& report);

}  // namespace parasim
