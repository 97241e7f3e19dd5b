// The nanotron sweep's start-up collective measurements
// (tests/data/collective_nanotron_startup_h100_efa.csv; docs/accuracy.md
// "Collectives: the nanotron sweep's start-up measurements") and their pricing
// on the aws-p5 preset, shared by the start-up comparison, the EFA fit and the
// node-sweep shape check.
//
// Two cluster states: the node-local AllReduce (a measurement the world
// collectives do not enter) is trimodal, ~45 GB/s, 385-439.3 GB/s and
// 449.0-465 GB/s, with no run between 439.3 and 449.0. "Healthy" = node-local
// AllReduce >= 444 GB/s, the middle of that gap: the split is made on the
// node-local measurement, never on the value judged or fitted.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/loaders.h"
#include "core/parallel_config.h"
#include "core/statistics.h"
#include "cost_model/collective_cost.h"
#include "cost_model/software_stack.h"
#include "tests/cost_model/collective_test_util.h"
#include "topology/group_path.h"

namespace parasim::testing {

inline constexpr double kHealthyIntraAllReduceGBps = 444.0;
inline constexpr const char* kNanotronStartupCsv = "collective_nanotron_startup_h100_efa.csv";

// measure_bandwidth: 256M fp32 elements per call (nanotron a756526 trainer.py).
inline Bytes NanotronStartupMessage() { return GiB(1); }

inline bool IsHealthyStartupRun(const std::map<std::string, std::string>& row) {
  return std::stod(row.at("intra_allreduce_busbw_gbps")) >= kHealthyIntraAllReduceGBps;
}

// measure_bandwidth passes lists of chunks to reduce_scatter and all_gather;
// ProcessGroupNCCL copies the list into a flat buffer before the
// ReduceScatter and the flat result out to the list after the AllGather
// (pytorch torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp, reduce_scatter
// and allgather: "Flatten a vector of tensors into a single, stacked tensor",
// "Copy the flattened output tensors to the outputs"), on the NCCL stream and
// so inside the timed loop: one read and one write of the whole message at the
// GPU's streaming memory bandwidth. The collective model prices NCCL only.
inline double ListApiStagingSeconds(const ClusterSpec& c, CollectiveOp op, double bytes) {
  if (op == CollectiveOp::kAllReduce) return 0.0;
  return 2.0 * bytes / (c.gpu.hbm_bandwidth.si() * c.gpu.memory_efficiency);
}

// One group of the measurement: every GPU of an aws-p5 job of `nodes` nodes
// ("world"), or the 8 GPUs of one node (nodes = 1), placed as the planner
// places a data-parallel group.
struct StartupGroup {
  ClusterSpec cluster;
  GroupPath path;
  NcclFeatures features;
};

inline StartupGroup AwsP5Group(int nodes) {
  StartupGroup g{LoadCluster("aws-p5", nodes), {}, {}};
  g.path = ResolveGroupPath(g.cluster, ParseParallelConfig("dp=" + std::to_string(g.cluster.TotalGpus())),
                            ParallelDim::kDp);
  g.features = NcclFeaturesFor(g.cluster, FindSoftwareStackPreset("nanotron")->nccl_version);
  return g;
}

// Predicted busbw (GB/s) as measure_bandwidth reports it: NCCL's collective at
// the model's own algorithm and protocol choice plus the list-API copy.
inline double PredictedStartupBusBw(const StartupGroup& g, CollectiveOp op, const CollectiveModelParams& p,
                                    CollectiveCost* cost_out = nullptr) {
  const double bytes = NanotronStartupMessage().si();
  const CollectiveCost cost = EstimateCollective(op, NanotronStartupMessage(), g.path, g.features, p);
  if (cost_out) *cost_out = cost;
  const double seconds = cost.time.si() + ListApiStagingSeconds(g.cluster, op, bytes);
  return bytes / seconds * BusBandwidthFactor(op, g.path.ranks) / 1e9;
}

// Median of the healthy runs' world busbw (GB/s) per node count, for one op.
struct StartupMedian {
  CollectiveOp op;
  int nodes;
  double busbw_GBps;
  size_t runs;
};

inline std::vector<StartupMedian> HealthyWorldMedians(CollectiveOp op) {
  const char* column = op == CollectiveOp::kAllReduce   ? "allreduce_busbw_gbps"
                       : op == CollectiveOp::kAllGather ? "allgather_busbw_gbps"
                                                        : "reducescatter_busbw_gbps";
  std::map<int, std::vector<double>> by_nodes;
  for (const auto& r : ReadCsv(DataPath(kNanotronStartupCsv)))
    if (IsHealthyStartupRun(r)) by_nodes[std::stoi(r.at("nodes"))].push_back(std::stod(r.at(column)));
  std::vector<StartupMedian> out;
  for (const auto& [nodes, v] : by_nodes) out.push_back({op, nodes, Median(v), v.size()});
  return out;
}

}  // namespace parasim::testing
