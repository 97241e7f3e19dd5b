// The collective model's accuracy on a pool of measured logs: per log and
// size band, the median relative error of the predicted time when the fabric
// parameters are fitted on the whole pool ("fitted"), fitted on the other
// clusters only ("left out"), and not fitted at all ("cold": cluster file and
// datasheet defaults). docs/accuracy.md holds the table this writes; the
// accuracy test regenerates it.
#pragma once

#include <string>
#include <vector>

#include "calibrate/collective_fit.h"

namespace parasim::calibrate {

struct AccuracyLog {
  std::string log;        // file name of an nccl-tests log
  std::string cluster;    // cluster file (its stem names the cluster)
  bool fabric_documented = true;  // cold errors are held to target only where it is
  int nccl_version = 0;   // when the log does not print it (0: NCCL current)
};

// Size bands: 1-64 MiB and >= 64 MiB (rows below 1 MiB are not scored).
enum class SizeBand { kMid, kLarge };
inline constexpr int kNumSizeBands = 2;
const char* ToString(SizeBand b);
int BandOf(double bytes);   // -1 below 1 MiB

struct BandErrors {
  int points = 0;
  double fitted = 0, left_out = 0, cold = 0;   // median relative time error
};

struct AccuracyRow {
  AccuracyLog log;
  std::string cluster_name;
  BandErrors band[kNumSizeBands];
};

struct AccuracyReport {
  std::vector<AccuracyRow> rows;
  CollectiveFitResult pool_fit;    // the "fitted" parameters
  // Median over logs (of each log's median) per band: fitted, left out, cold
  // (cold: documented fabrics only).
  BandErrors summary[kNumSizeBands];
};

AccuracyReport RunCollectiveAccuracy(const std::vector<AccuracyLog>& pool, const std::string& log_dir,
                                     const std::string& cluster_dir);

// The "## Collectives" section of docs/accuracy.md.
std::string AccuracyMarkdown(const AccuracyReport& report);

}  // namespace parasim::calibrate
