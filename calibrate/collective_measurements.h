// Collective measurements: one row per (run, op, size) with the group's
// rank-to-node layout, as `calibrate import --nccl-tests` writes them and
// `calibrate fit` reads them (schema: hw_profiles/SCHEMA.md, "Collective
// measurement files"). nccl-tests logs and the project's own NCCL
// microbenchmark both produce this kind ("nccl-collectives").
#pragma once

#include <string>
#include <vector>

#include "calibrate/nccl_tests_log.h"
#include "core/units.h"
#include "cost_model/collective_cost.h"

namespace parasim::calibrate {

inline constexpr const char* kCollectiveMeasurementKind = "nccl-collectives";

struct CollectiveMeasurement {
  std::string source;        // the log (file name) or benchmark the row comes from
  int run = 0;               // the table's index in its source (several runs per log)
  CollectiveOp op = CollectiveOp::kAllReduce;
  int ranks = 0;
  int nodes = 0;
  int gpus_per_node = 0;     // ranks per node (1 for one-GPU-per-node runs)
  int nccl_version = 0;      // major*10000 + minor*100 + patch; 0 = not recorded
  std::string algo, proto;   // forced NCCL_ALGO / NCCL_PROTO ("" = NCCL's choice)
  bool in_place = false;
  std::string dtype;         // nccl-tests type column (float, double, ...)
  Bytes size;                // as nccl-tests counts it (collective_cost.h)
  Seconds time;
  BytesPerSecond algbw, busbw;
};

struct CollectiveMeasurementSet {
  std::vector<CollectiveMeasurement> rows;
};

// Layout overrides for logs whose device lines are excerpted or absent.
struct ImportLayout {
  int nodes = 0;          // 0: from the device lines
  int gpus_per_node = 0;  // 0: from the device lines
  bool in_place = false;  // also import the in-place columns
};

// Every table of the log (every run, every op), every size > 0. The rank
// count comes from the device lines when they list every rank, else from the
// bus factor busbw/algbw; nodes from the distinct hosts, else from the
// highest device index (GPUs per node). Throws InvalidInput naming the file
// when the layout cannot be known and no override gives it.
CollectiveMeasurementSet ImportNcclTests(const std::vector<NcclTestsTable>& tables, const std::string& source,
                                         const ImportLayout& layout = {});
CollectiveMeasurementSet ImportNcclTestsFile(const std::string& path, const ImportLayout& layout = {});

// JSON round trip: {"kind": "nccl-collectives", "schema_version": 1, "rows": [...]}.
std::string CollectiveMeasurementsToJson(const CollectiveMeasurementSet& set);
CollectiveMeasurementSet ParseCollectiveMeasurementsJson(const std::string& text, const std::string& file);
CollectiveMeasurementSet ReadCollectiveMeasurementsFile(const std::string& path);
// The "kind" a measurement JSON declares ("" when it has none or is not JSON).
std::string MeasurementKindOf(const std::string& path);

}  // namespace parasim::calibrate
