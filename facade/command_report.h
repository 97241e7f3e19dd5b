// What a CLI command's library side hands back to print: the report in the
// format asked for, JSON as values (cli/output renders them), a table or CSV
// as the text the module lays out. Not installed.
#pragma once

#include <string>

#include "facade/value.h"

namespace parasim {

enum class ReportFormat { kTable, kJson, kCsv };

struct CommandReport {
  ReportFormat format = ReportFormat::kTable;
  Value json;          // kJson: the report
  std::string text;    // kTable, kCsv: the report, newline-terminated
};

// A report of `format`: JSON from `json`, else `text`.
inline CommandReport MakeReport(ReportFormat format, Value json, std::string text) {
  CommandReport r;
  r.format = format;
  r.json = std::move(json);
  r.text = std::move(text);
  return r;
}

}  // namespace parasim
