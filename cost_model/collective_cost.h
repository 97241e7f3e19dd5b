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

// The named parts of the scale-dependent model (DESIGN.md §4) that NCCL's own
// tuning constants leave out. Defaults: sources and fits in docs/DECISIONS.md
// ("Collectives:") and tests/cost_model/collective_fit_test.cc.
struct CollectiveModelParams {
  // Host cost of starting one collective: a kernel launch per GPU the calling
  // thread drives (NCCL group launch). Training runs one process per GPU.
  Seconds launch_per_gpu = Microseconds(2.86);  // fitted: nccl-tests 8xH100 -g 8, sizes <= 64 KB
  int gpus_per_launch_thread = 1;               // nccl-tests -g 8 = 8

  // Achieved fraction of a NIC's line rate: NCCL's inter-node channel ladder
  // tops out at 48 GB/s for a 50 GB/s (400 Gb/s) NIC (search.cc), and NCCL
  // maintainers quote 46-48 GB/s per NDR NIC (nccl-tests #290).
  double nic_efficiency = 0.96;
  // NCCL's inter-node per-channel bandwidth (top of the Hopper inter ladder);
  // the number of network channels is the NIC bandwidth / this.
  BytesPerSecond net_channel_bandwidth = GBps(48);
  // Extra latency the network plugin reports per network hop, added to NCCL's
  // NET constants (twice for Simple: "flush"). IB verbs: 0 (tuning.cc).
  Seconds net_plugin_latency = Microseconds(0);
  // NCCL's netOverhead: per intra step of a multi-node ring, x3 for Simple;
  // 1.0 us Intel/other CPUs, 2.0 AMD (tuning.cc).
  Seconds net_overhead = Microseconds(1.0);

  // Lock-step synchronization (DESIGN.md §4): every ring step waits for the
  // slowest of its m network hops. With per-hop delay jitter sigma the step
  // pays sigma * sqrt(2 ln m) (expected maximum of m Gaussian delays), and the
  // ring moves at the pace of its slowest link: bandwidth x (1 - cv * sqrt(2 ln m)).
  // sigma: the IB sweep's least-squares optimum is 0 (at the bound; its rms
  // grows 3.2% -> 3.4% -> 4.0% at 0, 0.5, 2 µs); we take 0.5 µs, the largest
  // value within one standard error of that optimum, since a lock-step ring
  // without any per-hop delay spread is not physical (µs-scale OS-noise
  // detours: Hoefler, Schneider, Lumsdaine, SC10; IB wire jitter is ~0.03 µs).
  Seconds hop_latency_jitter = Microseconds(0.5);
  // cv: least-squares fit to the B200 IB 16 GB and H100 EFA 256 MB node sweeps
  // (tests/cost_model/collective_fit_test.cc).
  double link_bandwidth_jitter = 0.063;
  // Switch traversal beyond the leaf: each extra tier (max_switch_hops > 1)
  // adds its port-to-port latency only through path.inter_hop_latency; ECMP
  // hash collisions on shared uplinks cut the bandwidth of traffic that
  // crosses the spine by this factor (1 = adaptive routing, as IB fabrics run;
  // static ECMP with one flow per uplink keeps ~1 - 1/e of it).
  double ecmp_uplink_efficiency = 1.0;
  // Per-peer cost of the grouped send/recv that AllToAll issues (proxy
  // progress and connection setup per peer): assumption, see DECISIONS.md.
  Seconds p2p_per_peer_latency = Microseconds(0.5);
  // Network chunk pipeline (DESIGN.md §4; docs/DECISIONS.md "Collectives:
  // chunk pipeline"). Across nodes NCCL moves each channel's data in chunks
  // of at most `net_chunk_bytes`; every chunk costs `net_chunk_latency` of
  // proxy post, completion poll and GPU flag on top of its wire time, and a
  // chunk enters a pipeline of D stages (ring: its lock-step steps; trees:
  // 2 log2(nodes) network stages plus the NVLink stages) — the number of
  // chunks grows with size; in steady state the chunk cost overlaps the
  // chunks in flight, so it and the fill of a pipeline that NCCL splits into
  // at least `min_pipeline_chunks` chunks cost mid sizes, not large ones.
  // Cold values: 512 KiB = NCCL's Simple step (NCCL_BUFFSIZE 4 MiB /
  // NCCL_STEPS 8, src/include/device.h); 8 = NCCL_STEPS slots; 2 µs =
  // UNCERTAIN ibv_post_send + CQ poll + flag write on a GPUDirect RDMA path.
  // Fitted values: a --hw-profile (calibrate/collective_fit.h).
  Seconds net_chunk_latency = Microseconds(2.0);
  // Scale on NCCL's per-hop NET latency constants (tuning.cc hwLat[NET]):
  // NCCL tunes them to pick algorithms, not to predict time; 1 = NCCL's.
  double net_hop_latency_scale = 1.0;
  Bytes net_chunk_bytes = Bytes(512.0 * 1024.0);
  double min_pipeline_chunks = 8.0;

  // LL128 needs 128-byte stores to arrive whole and in order: NCCL enables it
  // across nodes on InfiniBand/RoCE; the AWS EFA plugin leaves it off.
  bool network_ll128 = true;

  // Fabric presets for the measured sweeps (the defaults are an IB fabric).
  static CollectiveModelParams InfiniBand() { return {}; }
  static CollectiveModelParams AwsEfa();
};

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

// The parameters the 4-argument EstimateCollective uses for every fabric (a
// fitted --hw-profile); nullopt restores the presets (InfiniBand, AwsEfa by
// features.aws_efa). Process-wide: set it once, before any thread estimates.
void SetDefaultCollectiveModelParams(const std::optional<CollectiveModelParams>& params);

// One (algorithm, protocol) pair forced, as NCCL_ALGO / NCCL_PROTO do; empty
// when NCCL would not run it here (disabled feature, wrong op or placement).
std::optional<CollectiveCost> EstimateCollectiveWith(CollectiveOp op, Bytes size, const GroupPath& path,
                                                     const NcclFeatures& features,
                                                     const CollectiveModelParams& params,
                                                     CollectiveAlgo algo, Protocol proto);

// nccl-tests bus-bandwidth factor: busbw = algbw × factor (PERFORMANCE.md).
double BusBandwidthFactor(CollectiveOp op, int ranks);

}  // namespace parasim
