// Fitting the fabric parameters of the collective model (CollectiveModelParams)
// to collective measurements (calibrate/collective_measurements.h) taken on
// clusters described by cluster files: each measured group is placed on its
// cluster as nccl-tests places it (ranks packed gpus_per_node to a node, or
// one per node on the same rail), so the cluster says which link classes the
// group crossed. The fit is global: one value per parameter for all the
// measurements given, never one per log.
#pragma once

#include <functional>
#include <optional>
#include <map>
#include <string>
#include <vector>

#include "calibrate/collective_measurements.h"
#include "core/cluster_spec.h"
#include "cost_model/collective_cost.h"
#include "topology/group_path.h"

namespace parasim::calibrate {

// A measurement placed on its cluster (the path does not depend on the
// fitted parameters, so it is resolved once).
struct CollectiveCase {
  CollectiveMeasurement m;
  std::string cluster;   // cluster name (leave-one-cluster-out groups by it)
  GroupPath path;
  NcclFeatures features;
  bool forced = false;   // NCCL_ALGO / NCCL_PROTO set in the run
  CollectiveAlgo algo = CollectiveAlgo::kRing;
  std::optional<Protocol> proto;
};

// The group of `ranks` with `gpus_per_node` per node on `cluster` (already
// sized to the nodes the group needs), as `parasim collective` and nccl-tests place it.
// gpus_per_node 1 puts one rank per node, all on the same rail. Throws
// InvalidInput when gpus_per_node exceeds the cluster's or does not divide.
GroupPath MeasuredGroupPath(const ClusterSpec& cluster, int ranks, int gpus_per_node);

// The measurement placed on the cluster file (or preset) `cluster`, loaded at
// the node count the group needs; NCCL version of the measurement, or
// `fallback` when it was not recorded.
CollectiveCase MakeCase(const std::string& cluster, const CollectiveMeasurement& m, int fallback_nccl_version);

// Predicted collective on the case's group with `params`: the forced
// algorithm/protocol where the run set one (and NCCL could run it), else
// NCCL's choice.
CollectiveCost PredictCase(const CollectiveCase& c, const CollectiveModelParams& params);

// One fitted parameter: its name in the profile, SI getter/setter, bounds.
struct FitParameter {
  std::string name;
  std::function<double(const CollectiveModelParams&)> get;
  std::function<void(CollectiveModelParams&, double)> set;
  double lo = 0, hi = 0;
  // Fitted unless named otherwise: the scale-loss parameters (jitter) need
  // sweeps over many node counts to be identified, so they keep their
  // sourced values unless a fit names them.
  bool default_fitted = true;
};
// The parameters `calibrate fit` fits (their meaning: collective_cost.h).
const std::vector<FitParameter>& CollectiveFitParameters();

struct CollectiveFitResult {
  CollectiveModelParams params;
  std::map<std::string, double> values;   // fitted parameter -> SI value
  double mean_abs_log_error = 0;          // objective at the optimum (mean of band medians of |log error|)
  int cases = 0;
  std::vector<std::string> sources;       // measurements fitted (source names)
};

// Fits the named parameters (default: those default_fitted) from
// `start` by minimizing the mean over (source, size band: below / from
// 64 MiB) of the median |log(predicted/measured time)|. Deterministic.
CollectiveFitResult FitCollectiveParams(const std::vector<CollectiveCase>& cases, const CollectiveModelParams& start,
                                        const std::vector<std::string>& names = {});

// |predicted / measured − 1| of the case's time.
double RelativeError(const CollectiveCase& c, const CollectiveModelParams& params);

}  // namespace parasim::calibrate
