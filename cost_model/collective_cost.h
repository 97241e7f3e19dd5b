// Time of one NCCL-style collective on a placed group: ring, double-binary
// tree, NVLS, PAT, CollNet, hierarchical, point-to-point and all-to-all, with
// the LL / LL128 / Simple protocols, and NCCL's choice of the fastest allowed
// (algorithm, protocol) pair. Per-step latency grows with the ring as DESIGN.md
// §4 says (named, documented parts); bandwidth is the group's bottleneck as
// placed (topology/group_path.h). Bus bandwidth follows nccl-tests.
#pragma once

#include <optional>
#include <string>

#include "core/cluster_spec.h"
#include "core/collective_params.h"
#include "core/units.h"
#include "topology/group_path.h"

namespace parasim {

enum class CollectiveOp { kAllReduce, kAllGather, kReduceScatter, kBroadcast, kReduce, kAllToAll, kSendRecv };
enum class CollectiveAlgo { kRing, kTree, kNvls, kNvlsTree, kCollNet, kPat, kDirect };
enum class Protocol { kLL, kLL128, kSimple };
inline constexpr int kNumCollectiveAlgos = 7;
inline constexpr int kNumProtocols = 3;
const char* ToString(CollectiveOp op);
const char* ToString(CollectiveAlgo algo);
const char* ToString(Protocol proto);
// Parse "allreduce" | "allgather" | "reducescatter" | "broadcast" | "reduce" |
// "alltoall" | "sendrecv"; throws parasim::Error naming `where`.
CollectiveOp ParseCollectiveOp(const std::string& text, const std::string& where);

// Which algorithms the stack's NCCL version may use (DESIGN.md §4: the
// paper's NCCL has AllGather/ReduceScatter ring-only; newer adds PAT, NVLS).
struct NcclFeatures {
  bool tree_allreduce = true;
  bool nvls = false;            // NVLink SHARP inside an NVSwitch domain (when the hardware has it)
  bool nvls_tree = false;       // NVLS inside nodes + tree across
  bool pat = false;             // PAT AllGather/ReduceScatter, one GPU per node
  bool collnet = false;         // IB SHARP (when the fabric has it)
  bool ll128 = true;
  // GPU generation (CUDA compute capability: 70 Volta, 80 Ampere, 90 Hopper,
  // 100 Blackwell). NCCL's link model, protocol caps and NVLS efficiency are
  // per architecture (tuning.cc); pass cluster.gpu.compute_capability.
  int compute_capability = 90;
  // Between nodes over AWS EFA (inter_node.transport: efa): the fitted EFA
  // parameters (CollectiveModelParams::AwsEfa) replace the InfiniBand ones.
  bool aws_efa = false;
  // A fitted --hw-profile's parameters (ClusterSpec::collective_params):
  // they replace the transport presets in the 4-argument EstimateCollective.
  std::optional<CollectiveModelParams> fitted;
};

// The algorithm set of an NCCL release on a cluster's hardware (release
// notes): NVLS from 2.17 and NVLSTree from 2.18 where the NVSwitch has SHARP
// (gpu.nvls); PAT from 2.23; CollNet where the fabric has IB SHARP
// (inter_node.sharp, i.e. the plugin is installed). `version` is
// major*10000 + minor*100 + patch (2.20.5 -> 22005, the NCCL of PyTorch 2.3).
NcclFeatures NcclFeaturesFor(const ClusterSpec& cluster, int version);
inline constexpr int kNcclPaperVersion = 22005;     // PyTorch 2.3 (the seed paper's stack)
inline constexpr int kNcclCurrentVersion = 23007;   // the constants' release
// "2.20.5" | "2.23" | "paper" | "current"; throws parasim::Error naming `where`.
int ParseNcclVersion(const std::string& text, const std::string& where);


struct CollectiveCost {
  Seconds time;                 // whole collective, on every rank
  CollectiveAlgo algo = CollectiveAlgo::kRing;
  Protocol protocol = Protocol::kSimple;
  Seconds latency;              // the latency part of `time`
  BytesPerSecond algbw;         // size / time (nccl-tests algbw)
  BytesPerSecond busbw;         // nccl-tests bus bandwidth
};

// `size` follows nccl-tests: AllReduce/Broadcast/Reduce the per-rank buffer;
// AllGather/ReduceScatter the whole gathered array (per-rank chunk × n);
// AllToAll a rank's whole send buffer; SendRecv the message.
// A group of one rank costs zero. Pure and thread-safe.
CollectiveCost EstimateCollective(CollectiveOp op, Bytes size, const GroupPath& path,
                                  const NcclFeatures& features);
CollectiveCost EstimateCollective(CollectiveOp op, Bytes size, const GroupPath& path,
                                  const NcclFeatures& features, const CollectiveModelParams& params);


// One (algorithm, protocol) pair forced, as NCCL_ALGO / NCCL_PROTO do; empty
// when NCCL would not run it here (disabled feature, wrong op or placement).
std::optional<CollectiveCost> EstimateCollectiveWith(CollectiveOp op, Bytes size, const GroupPath& path,
                                                     const NcclFeatures& features,
                                                     const CollectiveModelParams& params,
                                                     CollectiveAlgo algo, Protocol proto);

// nccl-tests bus-bandwidth factor: busbw = algbw × factor (PERFORMANCE.md).
double BusBandwidthFactor(CollectiveOp op, int ranks);

}  // namespace parasim
