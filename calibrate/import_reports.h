// The reports of `calibrate import-nccl-tests`, `import-trace` and `import`:
// measurements read from nccl-tests logs and profiler traces, as JSON text
// and as an aligned text table, so the CLI only chooses and writes one.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace parasim::calibrate {

struct ImportReport {
  std::string json;    // with a trailing newline
  std::string table;
};

struct NcclTestsImportOptions {
  std::vector<std::string> logs;   // nccl-tests stdout logs or `calibrate nccl` JSON files
  std::string min_size = "1 B", max_size = "1000 TB";
  bool in_place = false;
};
// An alpha-beta fit per table of every log, with its rows.
ImportReport NcclTestsReport(const NcclTestsImportOptions& opt);

struct TraceImportOptions {
  std::string trace;
  int skip_steps = 0;
  int device = -1;  // -1: every device
};
// The steps of a profiler (Kineto) trace or a parasim timeline, summarized.
ImportReport TraceReport(const TraceImportOptions& opt);

struct CollectiveImportOptions {
  std::vector<std::string> logs;
  int nodes = 0, gpus_per_node = 0;
  bool in_place = false;
};
// The rows of every log as collective measurements (JSON text); a line per
// log to `log`.
std::string ImportCollectiveMeasurements(const CollectiveImportOptions& opt, std::ostream& log);

}  // namespace parasim::calibrate
