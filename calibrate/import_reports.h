// The reports of `calibrate import-nccl-tests`, `import-trace` and `import`:
// measurements read from nccl-tests logs and profiler traces, with their
// aligned text table; the facade builds the JSON report from the same data
// (facade/import_report_value.h), so the CLI only chooses and writes one.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "calibrate/alpha_beta_fit.h"
#include "calibrate/kineto_trace.h"
#include "calibrate/nccl_tests_log.h"

namespace parasim::calibrate {

struct NcclTestsImportOptions {
  std::vector<std::string> logs;   // nccl-tests stdout logs or `calibrate nccl` JSON files
  std::string min_size = "1 B", max_size = "1000 TB";
  bool in_place = false;
};
// One table of a log and its alpha-beta fit.
struct FittedNcclTable {
  NcclTestsTable table;
  AlphaBetaFit fit;
};

struct NcclTestsImport {
  std::vector<FittedNcclTable> tables;   // every log's tables, in order
  bool in_place = false;                 // the rows' in-place results were fitted (else out-of-place)
  std::string table;                     // the text report
};
// An alpha-beta fit per table of every log, with its rows.
NcclTestsImport NcclTestsReport(const NcclTestsImportOptions& opt);

struct TraceImportOptions {
  std::string trace;
  int skip_steps = 0;
  int device = -1;  // -1: every device
};
struct TraceImport {
  StepTraceSummary summary;
  std::string table;   // the text report
};
// The steps of a profiler (Kineto) trace or a parasim timeline, summarized.
TraceImport TraceReport(const TraceImportOptions& opt);

struct CollectiveImportOptions {
  std::vector<std::string> logs;
  int nodes = 0, gpus_per_node = 0;
  bool in_place = false;
};
// The rows of every log as collective measurements (JSON text); a line per
// log to `log`.
std::string ImportCollectiveMeasurements(const CollectiveImportOptions& opt, std::ostream& log);

}  // namespace parasim::calibrate
