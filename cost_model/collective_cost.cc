// NCCL-structured collective cost model. NCCL's tuning model (latency per
// algorithm and protocol, per-hop latency by link class, protocol efficiency,
// per-architecture caps) is the floor; the scale-dependent parts NCCL leaves
// out (lock-step synchronization jitter, slowest-link pace, physical hop
// latency, ECMP) are the named parameters of CollectiveModelParams.
// Formulas and their sources: docs/DECISIONS.md, "Collectives:" entries.
#include "cost_model/collective_cost.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "core/check.h"
#include "core/error.h"
#include "cost_model/internal/nccl_tuning.h"

namespace parasim {
namespace {

constexpr double kUs = 1e-6;
constexpr double kGB = 1e9;

// Lower bound on the slowest-link pace factor (keeps bandwidth positive for
// absurd jitter settings; never reached with the defaults below 10^30 nodes).
constexpr double kMinPaceFactor = 0.05;

// Expected maximum of m i.i.d. standard Gaussian delays, ~sqrt(2 ln m)
// (extreme-value asymptote; exact 0 for one hop).
double ExtremeFactor(int m) { return m <= 1 ? 0.0 : std::sqrt(2.0 * std::log(static_cast<double>(m))); }

int FloorLog2(int x) {
  int r = 0;
  while (x > 1) {
    x >>= 1;
    ++r;
  }
  return r;
}

// Everything about the group that does not depend on the algorithm, in raw
// doubles (s, B/s) for the inner loop.
struct Shape {
  int n = 1;                 // ranks
  int nodes = 1;             // N
  int g = 1;                 // ranks per node
  bool multi = false;        // crosses nodes
  nccl::Arch arch = nccl::kHopper;
  bool pcie_intra = false;
  double intra_Bps = 0;      // NCCL-model intra bandwidth per rank (NVLink × link fraction)
  double intra_raw_Bps = 0;
  double inter_Bps = 0;      // NIC share × NIC efficiency × ECMP (no jitter)
  double paced_inter_Bps = 0;  // × slowest-link pace of a lock-step ring
  double tree_inter_Bps = 0;   // paced, × tree_net_efficiency: what a tree's inter-node sends reach
  int net_channels = 1;      // NCCL network channels (NIC bandwidth / ladder top)
  int intra_channels = 2;
  double jitter_s = 0;       // σ · sqrt(2 ln N): the wait for the slowest network hop
  double inter_hop_s = 0;    // physical NIC + switches + wire
  double intra_hop_s = 0;    // physical NVLink / PCIe hop
  double plugin_s = 0;
  double net_scale = 1;      // × NCCL's NET hop constants
  double net_overhead_s = 0;
  double launch_s = 0;
  // Chunk pipeline constants (CollectiveModelParams).
  double chunk_alpha_s = 0;  // per-chunk cost
  double chunk_wire_s = 0;   // one full chunk on one network channel
  int tree_depth = 0;        // 2·ceil(log2 N) + 2 NVLink stages when g > 1
};

Shape MakeShape(const GroupPath& path, const NcclFeatures& f, const CollectiveModelParams& p) {
  Shape s;
  s.n = path.ranks;
  s.nodes = std::max(1, path.nodes);
  s.g = std::max(1, path.ranks_per_node);
  s.multi = path.crosses_nodes && s.nodes > 1;
  s.arch = nccl::ArchOf(f.compute_capability);
  // PCIe inside the node: the bottleneck is PCIe and it is the intra link
  // (across nodes a PCIe-limited NIC path also reports kPcie).
  s.pcie_intra = path.bottleneck_class == LinkClass::kPcie &&
                 (!path.crosses_nodes || path.ring_bandwidth.si() >= path.intra_bandwidth.si());
  s.intra_raw_Bps = path.intra_bandwidth.si();
  s.intra_Bps = s.intra_raw_Bps *
                (s.pcie_intra ? nccl::kPcieModelFraction : nccl::kNvlinkModelFraction[s.arch]);
  double ecmp = path.max_switch_hops >= 3 ? p.ecmp_uplink_efficiency : 1.0;
  s.inter_Bps = path.inter_bandwidth.si() * p.nic_efficiency * ecmp;
  const double extreme = ExtremeFactor(s.multi ? s.nodes : 1);
  double pace = std::max(kMinPaceFactor, 1.0 - p.link_bandwidth_jitter * extreme);
  s.paced_inter_Bps = s.inter_Bps * pace;
  s.tree_inter_Bps = s.paced_inter_Bps * p.tree_net_efficiency;
  s.net_channels = std::max(1, static_cast<int>(std::lround(s.inter_Bps / p.net_channel_bandwidth.si())));
  // NCCL's ring search on NVSwitch systems settles near 24 GB/s per channel
  // (Hopper intra ladder); only the per-channel caps use this count.
  s.intra_channels = std::max(2, static_cast<int>(std::ceil(s.intra_Bps / (24.0 * kGB))));
  s.jitter_s = p.hop_latency_jitter.si() * extreme;
  s.inter_hop_s = path.inter_hop_latency.si();
  s.intra_hop_s = path.intra_hop_latency.si();
  s.plugin_s = p.net_plugin_latency.si();
  s.net_scale = p.net_hop_latency_scale;
  s.net_overhead_s = p.net_overhead.si();
  s.launch_s = p.launch_per_gpu.si() * std::max(1, p.gpus_per_launch_thread);
  s.chunk_alpha_s = p.net_chunk_latency.si();
  s.chunk_wire_s = p.net_chunk_bytes.si() / (p.net_channel_bandwidth.si() * p.nic_efficiency);
  s.tree_depth = 2 * std::max(1, FloorLog2(2 * s.nodes - 1)) + (s.g > 1 ? 2 : 0);
  return s;
}

// Column of the per-channel cap tables: 1 node, 2 nodes, more.
int NodeColumn(const Shape& s) { return s.nodes <= 1 ? 0 : (s.nodes == 2 ? 1 : 2); }

double LLMax(const Shape& s) {
  if (!s.multi) return nccl::kLLMaxOneNode[s.arch] * kGB;
  return (s.nodes == 2 ? nccl::kLLMaxTwoNodes : nccl::kLLMaxManyNodes) * kGB;
}

// One network hop of an algorithm with NCCL NET constant `net_us`: NCCL's
// software/protocol cost, the plugin's latency (twice for Simple: flush), the
// physical path, and the wait for the slowest of the step's hops.
double NetHop(const Shape& s, double net_us, int proto) {
  double plugin = s.plugin_s * (proto == static_cast<int>(Protocol::kSimple) ? 2.0 : 1.0);
  return s.net_scale * net_us * kUs + plugin + s.inter_hop_s + s.jitter_s;
}

double IntraHop(const Shape& s, const double nvlink_us[3], const double pci_us[3], int proto) {
  double nccl_s = (s.pcie_intra ? pci_us[proto] : nvlink_us[proto]) * kUs;
  return std::max(nccl_s, s.intra_hop_s);
}

// Tree AllReduce bandwidth correction by log2(size / 64 B), interpolated
// between NCCL's power-of-two entries so that time stays monotone in size.
// NCCL applies no correction beyond its table (512 MB); we ramp the last
// entry to 1.0 over the next doubling instead of stepping (a step would make
// a larger message faster).
double TreeCorrection(double bytes, int proto) {
  double x = std::log2(std::max(bytes, 64.0) / 64.0);
  if (x >= 24.0) return 1.0;
  int i = static_cast<int>(x);
  double t = x - i;
  double hi = i + 1 < 24 ? nccl::kTreeCorrection[proto][i + 1] : 1.0;
  return nccl::kTreeCorrection[proto][i] * (1.0 - t) + hi * t;
}

struct Candidate {
  bool ok = false;
  double latency_s = 0;   // without launch
  double time_s = 0;      // without launch
};

Candidate Make(double latency_s, double bytes, double algbw_Bps) {
  Candidate c;
  if (!(algbw_Bps > 0)) return c;
  c.ok = true;
  c.latency_s = latency_s;
  c.time_s = latency_s + bytes / algbw_Bps;
  return c;
}

// Ring bus bandwidth of the given protocol from the link bus bandwidth.
double ProtoBus(const Shape& s, double bus_Bps, int proto, int channels) {
  switch (static_cast<Protocol>(proto)) {
    case Protocol::kLL: return std::min(LLMax(s), nccl::kLLEfficiency * bus_Bps);
    case Protocol::kLL128:
      return std::min(nccl::kLL128Efficiency * bus_Bps, channels * nccl::kPerChRingLL128[s.arch] * kGB);
    case Protocol::kSimple: return bus_Bps;
  }
  return bus_Bps;
}

// Steps of a ring and its nccl-tests bus factor.
int RingSteps(CollectiveOp op, int n) { return op == CollectiveOp::kAllReduce ? 2 * (n - 1) : n - 1; }

Candidate Ring(CollectiveOp op, double bytes, const Shape& s, int proto) {
  int steps = RingSteps(op, s.n);
  double bus;
  int channels;
  if (!s.multi) {
    bus = s.intra_Bps;
    channels = s.intra_channels;
  } else {
    bus = s.g > 1 ? std::min(s.intra_Bps, s.paced_inter_Bps) : s.paced_inter_Bps;
    channels = s.net_channels;
  }
  bus = ProtoBus(s, bus, proto, channels);
  double algbw = bus / BusBandwidthFactor(op, s.n);
  double base = nccl::kRingBaseUs[proto] * kUs;
  double latency;
  if (!s.multi) {
    latency = base + steps * IntraHop(s, nccl::kRingNvlinkUs, nccl::kRingPciUs, proto);
  } else {
    // Lock-step: every step waits for the step's slowest hop, a network hop
    // (NCCL itself charges intra steps at intraLat; see DECISIONS.md).
    const double* net = s.g == 1 ? nccl::kTreeNetUs : nccl::kRingNetUs;  // ppn = 1 uses Tree NET
    double intra = std::max(IntraHop(s, nccl::kRingNvlinkUs, nccl::kRingPciUs, proto),
                            s.net_overhead_s * (proto == static_cast<int>(Protocol::kSimple) ? 3.0 : 1.0));
    double hop_nccl = s.net_scale * net[proto] * kUs + s.plugin_s * (proto == static_cast<int>(Protocol::kSimple) ? 2.0 : 1.0);
    double hop_phys = s.inter_hop_s + s.jitter_s;
    if (hop_nccl + hop_phys < intra) {
      hop_nccl = intra;
      hop_phys = 0;
    }
    double nccl_part = base + steps * hop_nccl;
    if (op == CollectiveOp::kAllReduce && proto == static_cast<int>(Protocol::kSimple))
      nccl_part *= nccl::kRingPlateauFactor[s.arch];
    latency = nccl_part + steps * hop_phys;
  }
  return Make(latency, bytes, algbw);
}

Candidate Tree(double bytes, const Shape& s, int proto) {
  int col = NodeColumn(s);
  int channels = s.multi ? s.net_channels : s.intra_channels;
  double link;
  if (!s.multi) {
    link = s.intra_Bps;
  } else if (s.nodes <= 2) {
    // Two nodes: NCCL takes the intra bandwidth; each node's NICs carry S, not
    // 2S, so the network bound on the tree's bus bandwidth is twice the NIC.
    link = std::min(s.intra_Bps, 2.0 * s.tree_inter_Bps);
  } else {
    // The chain inside each node runs over NVLink: it binds when the node's
    // NICs outrun one GPU's NVLink (NVL72 racks: 72 NICs per domain).
    link = s.g > 1 ? std::min(s.intra_Bps, s.tree_inter_Bps) : s.tree_inter_Bps;
  }
  double bus = std::min(nccl::kLL128Efficiency * link, channels * nccl::kPerChTree[s.arch][col] * kGB);
  switch (static_cast<Protocol>(proto)) {
    case Protocol::kLL: bus = std::min(bus / nccl::kTreeLLDivisor, LLMax(s)); break;
    case Protocol::kLL128:
      bus = std::min(bus * (s.multi ? nccl::kTreeLL128MultiNode : nccl::kTreeLL128OneNode),
                     channels * nccl::kPerChTreeLL128[s.arch][col] * kGB);
      break;
    case Protocol::kSimple: break;
  }
  double algbw = 0.5 * bus * TreeCorrection(bytes, proto);
  double intra = IntraHop(s, nccl::kTreeNvlinkUs, nccl::kTreePciUs, proto);
  double latency = nccl::kTreeBaseUs[proto] * kUs + 2.0 * (s.g - 1) * intra;
  if (s.multi) latency += 2.0 * FloorLog2(s.nodes) * NetHop(s, nccl::kTreeNetUs[proto], proto);
  return Make(latency, bytes, algbw);
}

// NVLink SHARP inside a node: the switch reduces and multicasts. Per GPU port
// an AllReduce moves S(1 + 1/g) each way (multimem ld_reduce of every shard,
// then st of its own shard multicast back), so algbw = B·η·g/(g+1); an
// AllGather or ReduceScatter moves S each way on its busiest direction.
double NvlsIntraAlgbw(CollectiveOp op, const Shape& s) {
  double eff = nccl::kNvlsEfficiency[s.arch];
  double b = s.intra_Bps * eff;
  if (op == CollectiveOp::kAllReduce) return b * s.g / (s.g + 1.0);
  return b;
}

bool NvlsHardware(const GroupPath& path, const NcclFeatures& f, const Shape& s) {
  return f.nvls && nccl::kNvlsEfficiency[s.arch] > 0 && s.g >= 2 && !s.pcie_intra &&
         (path.nvls_capable || s.multi);
}

Candidate Nvls(CollectiveOp op, double bytes, const GroupPath& path, const NcclFeatures& f, const Shape& s) {
  if (!NvlsHardware(path, f, s)) return {};
  if (op != CollectiveOp::kAllReduce && s.g > nccl::kNvlsMaxArity) return {};
  double nvlink_hop = std::max(nccl::kNvlsNvlinkUs * kUs, s.intra_hop_s);
  if (!s.multi) {
    if (!path.nvls_capable) return {};
    return Make(nvlink_hop, bytes, NvlsIntraAlgbw(op, s));
  }
  // Across nodes NCCL runs NVLS only with the CollNet (SHARP) plugin, and
  // only for AllReduce (AllGather/ReduceScatter need plugin support).
  if (op != CollectiveOp::kAllReduce || !f.collnet || !path.sharp_capable) return {};
  // Two nodes: each node's NICs carry S, not 2S (as NCCL's NVLSTree "×2 for
  // ≤ 2 nodes"; the B200 sweep measures NVLS = NVLSTree = 717 GB/s there).
  double net_bus = s.paced_inter_Bps * (s.nodes <= 2 ? 2.0 : 1.0);
  double net_algbw = net_bus * s.n / (2.0 * (s.n - 1));
  double algbw = std::min(NvlsIntraAlgbw(op, s), net_algbw);
  return Make(nvlink_hop + NetHop(s, nccl::kNvlsNetUs, static_cast<int>(Protocol::kSimple)), bytes, algbw);
}

Candidate NvlsTree(double bytes, const GroupPath& path, const NcclFeatures& f, const Shape& s) {
  if (!f.nvls_tree || !s.multi || !NvlsHardware(path, f, s)) return {};
  int col = NodeColumn(s);
  int nvls_ch = nccl::kNvlsChannels[s.arch][1];
  double ring_conv = s.n / (2.0 * (s.n - 1));
  double net_bus = s.tree_inter_Bps * (s.nodes <= 2 ? 2.0 : 1.0);   // "×2 for NVLSTree with ≤ 2 nodes"
  double cap_bus = nvls_ch * nccl::kPerChNvlsTree[s.arch][col] * kGB;
  double algbw = std::min(NvlsIntraAlgbw(CollectiveOp::kAllReduce, s), std::min(net_bus, cap_bus) * ring_conv);
  double nvlink_hop = std::max(nccl::kNvlsNvlinkUs * kUs, s.intra_hop_s);
  double latency = nvlink_hop + 2.0 * FloorLog2(s.nodes) *
                                    NetHop(s, nccl::kNvlsTreeNetUs, static_cast<int>(Protocol::kSimple));
  return Make(latency, bytes, algbw);
}

// IB SHARP (CollNetDirect): reduction in the switches, so no lock-step ring
// pace; the wait for the slowest of the N inputs is paid once.
Candidate CollNet(CollectiveOp op, double bytes, const GroupPath& path, const NcclFeatures& f, const Shape& s) {
  if (!f.collnet || !path.sharp_capable || !s.multi || s.g > nccl::kCollNetMaxLocalRanks) return {};
  int simple = static_cast<int>(Protocol::kSimple);
  double intra_hop = std::max(nccl::kCollNetDirectIntraUs * kUs, s.intra_hop_s);
  double net_hop = NetHop(s, nccl::kCollNetDirectNetUs, simple);
  if (op == CollectiveOp::kAllReduce) {
    double net = s.inter_Bps * nccl::kCollNetNetFactor * (s.arch >= nccl::kHopper ? nccl::kCollNetHopperFactor : 1.0);
    // Intra-node reduce-scatter + all-gather of S over NVLink, pipelined.
    double intra = s.g > 1 ? s.intra_Bps * s.g / (2.0 * (s.g - 1)) : net;
    double latency = 2.0 * (std::min(1, s.g - 1) * intra_hop + (s.g - 1) * nccl::kCollNetArityUs * kUs) + net_hop;
    return Make(latency, bytes, std::min(net, intra));
  }
  if (op == CollectiveOp::kAllGather || op == CollectiveOp::kReduceScatter) {
    // NCCL: busBw = ppn × min(bwIntra, bwInter) per channel, i.e. the node's
    // NIC rate as bus bandwidth (the B200 SHARP sweep measures 376-385 GB/s
    // flat from 2 to 46 nodes = the NICs' 384); bounded by NVLink per rank.
    double bus = s.g > 1 ? std::min(s.inter_Bps, s.intra_Bps) : s.inter_Bps;
    return Make(intra_hop + net_hop, bytes, bus / BusBandwidthFactor(op, s.n));
  }
  return {};
}

// PAT (AllGather/ReduceScatter, one rank per node): NCCL's latency
// base + log2(N)·interLat/3.5 + 2.8 µs·n and bandwidth 0.75 × busBw, kept as
// algorithm bandwidth (NCCL skips the ring conversion for PAT).
Candidate Pat(double bytes, const NcclFeatures& f, const Shape& s) {
  if (!f.pat || !s.multi || s.g != 1) return {};
  int simple = static_cast<int>(Protocol::kSimple);
  double latency = nccl::kPatBaseUs * kUs + FloorLog2(s.nodes) * NetHop(s, nccl::kPatNetUs, simple) / nccl::kPatNetDivisor +
                   nccl::kPatPerRankUs * kUs * s.n;
  return Make(latency, bytes, nccl::kPatEfficiency * s.inter_Bps);
}

// Point-to-point and all-to-all: NCCL has no tuning model for them; alpha-beta
// with the protocol's efficiency, the hop latency by link class, and the
// group's bandwidth (across nodes: a rank's share of the node's NICs).
Candidate Direct(CollectiveOp op, double bytes, const Shape& s, const CollectiveModelParams& p, int proto) {
  double intra_bus = ProtoBus(s, s.intra_Bps, proto, s.intra_channels);
  double hop = s.multi ? NetHop(s, nccl::kRingNetUs[proto], proto)
                       : IntraHop(s, nccl::kRingNvlinkUs, nccl::kRingPciUs, proto);
  if (op == CollectiveOp::kSendRecv) {
    double bw = intra_bus;
    if (s.multi) bw = std::min(bw, ProtoBus(s, s.inter_Bps / s.g, proto, std::max(1, s.net_channels / s.g)));
    return Make(hop, bytes, bw);
  }
  // AllToAll: of a rank's S, (g-1)/n stays in the node, and each node sends
  // g(n-g)/n·S through its NICs; all flows run at once.
  double t_intra = s.g > 1 ? (s.g - 1.0) / s.n / intra_bus : 0.0;
  double t_net = 0.0;
  if (s.multi) {
    double net_bus = ProtoBus(s, s.paced_inter_Bps, proto, s.net_channels);
    t_net = s.g * (s.n - s.g) / static_cast<double>(s.n) / net_bus;
  }
  double latency = hop + (s.n - 1) * p.p2p_per_peer_latency.si();
  return Make(latency, bytes, 1.0 / std::max(t_intra, t_net));
}

Candidate Evaluate(CollectiveOp op, double bytes, const GroupPath& path, const NcclFeatures& f,
                   const CollectiveModelParams& p, const Shape& s, CollectiveAlgo algo, int proto) {
  if (proto == static_cast<int>(Protocol::kLL128) &&
      (!f.ll128 || f.compute_capability < 70 || (s.multi && !p.network_ll128)))
    return {};
  bool simple = proto == static_cast<int>(Protocol::kSimple);
  bool ar = op == CollectiveOp::kAllReduce;
  bool ag_rs = op == CollectiveOp::kAllGather || op == CollectiveOp::kReduceScatter;
  bool p2p = op == CollectiveOp::kAllToAll || op == CollectiveOp::kSendRecv;
  switch (algo) {
    case CollectiveAlgo::kRing: return p2p ? Candidate{} : Ring(op, bytes, s, proto);
    case CollectiveAlgo::kTree: return (ar && f.tree_allreduce) ? Tree(bytes, s, proto) : Candidate{};
    case CollectiveAlgo::kNvls: return (simple && (ar || ag_rs)) ? Nvls(op, bytes, path, f, s) : Candidate{};
    case CollectiveAlgo::kNvlsTree: return (simple && ar) ? NvlsTree(bytes, path, f, s) : Candidate{};
    case CollectiveAlgo::kCollNet: return (simple && (ar || ag_rs)) ? CollNet(op, bytes, path, f, s) : Candidate{};
    case CollectiveAlgo::kPat: return (simple && ag_rs) ? Pat(bytes, f, s) : Candidate{};
    case CollectiveAlgo::kDirect: return p2p ? Direct(op, bytes, s, p, proto) : Candidate{};
  }
  return {};
}

// Pipeline depth D of a multi-node algorithm: the stages a chunk passes
// through on the critical path (0: not pipelined over the network).
int PipelineDepth(CollectiveOp op, CollectiveAlgo algo, const Shape& s) {
  switch (algo) {
    case CollectiveAlgo::kRing: return op == CollectiveOp::kAllReduce ? 2 * (s.n - 1) : s.n - 1;
    case CollectiveAlgo::kTree:
    case CollectiveAlgo::kNvlsTree: return s.tree_depth;   // 2·ceil(log2 N) (+2 NVLink stages)
    case CollectiveAlgo::kNvls:
    case CollectiveAlgo::kCollNet: return s.g > 1 ? 4 : 2;
    case CollectiveAlgo::kPat: return std::max(1, FloorLog2(2 * s.nodes - 1));
    case CollectiveAlgo::kDirect: return 1;
  }
  return 1;
}

// The network chunk pipeline (CollectiveModelParams): a ring pays the chunk
// cost on each of its D lock-step steps; a tree-like pipeline of D stages
// pays its fill: D - 1 chunk wire times for k >= min_pipeline_chunks chunks
// and the cost of the first min_pipeline_chunks + D - 1 chunks.
Candidate WithChunkPipeline(Candidate c, CollectiveOp op, CollectiveAlgo algo, const Shape& s,
                            const CollectiveModelParams& p) {
  if (!c.ok || !s.multi) return c;
  const double t_bw = c.time_s - c.latency_s;
  const double alpha = s.chunk_alpha_s;
  const double chunk_s = s.chunk_wire_s;
  const int d = PipelineDepth(op, algo, s);
  double extra;
  if (algo == CollectiveAlgo::kRing) {
    // Later loops overlap in NCCL_STEPS slots: the chain of D steps pays the
    // chunk cost once per step, whatever the number of loops.
    extra = d * alpha;
  } else {
    // In steady state the chunk cost overlaps the wire time of the chunks in
    // flight; it shows in the fill: the first min_pipeline_chunks + D - 1
    // chunk costs, and D - 1 chunk wire times.
    const double k = std::max(p.min_pipeline_chunks, t_bw / chunk_s);
    const double chunk_costs = (p.min_pipeline_chunks + d - 1) * alpha;
    c.latency_s += chunk_costs;
    c.time_s += chunk_costs + (d - 1) * t_bw / k;
    return c;
  }
  c.latency_s += extra;
  c.time_s += extra;
  return c;
}

void CheckPath(const GroupPath& path) {
  PARASIM_CHECK(path.ranks >= 1, "group of ", path.ranks, " ranks");
  if (path.ranks == 1) return;
  PARASIM_CHECK(path.intra_bandwidth.si() > 0 || path.ranks_per_node <= 1, "intra bandwidth must be > 0");
  PARASIM_CHECK(!path.crosses_nodes || path.inter_bandwidth.si() > 0, "inter bandwidth must be > 0");
  PARASIM_CHECK(path.intra_hop_latency.si() >= 0 && path.inter_hop_latency.si() >= 0, "negative hop latency");
}

CollectiveCost Finish(CollectiveOp op, double bytes, const Shape& s, const Candidate& c, CollectiveAlgo algo,
                      int proto) {
  CollectiveCost out;
  out.algo = algo;
  out.protocol = static_cast<Protocol>(proto);
  out.latency = Seconds(s.launch_s + c.latency_s);
  out.time = Seconds(s.launch_s + c.time_s);
  out.algbw = BytesPerSecond(bytes / out.time.si());
  out.busbw = out.algbw * BusBandwidthFactor(op, s.n);
  return out;
}

CollectiveCost ZeroCost(CollectiveOp op) {
  CollectiveCost out;
  out.algo = (op == CollectiveOp::kAllToAll || op == CollectiveOp::kSendRecv) ? CollectiveAlgo::kDirect
                                                                              : CollectiveAlgo::kRing;
  return out;
}

}  // namespace


const char* ToString(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::kAllReduce: return "allreduce";
    case CollectiveOp::kAllGather: return "allgather";
    case CollectiveOp::kReduceScatter: return "reducescatter";
    case CollectiveOp::kBroadcast: return "broadcast";
    case CollectiveOp::kReduce: return "reduce";
    case CollectiveOp::kAllToAll: return "alltoall";
    case CollectiveOp::kSendRecv: return "sendrecv";
  }
  return "?";
}

const char* ToString(CollectiveAlgo algo) {
  switch (algo) {
    case CollectiveAlgo::kRing: return "ring";
    case CollectiveAlgo::kTree: return "tree";
    case CollectiveAlgo::kNvls: return "nvls";
    case CollectiveAlgo::kNvlsTree: return "nvlstree";
    case CollectiveAlgo::kCollNet: return "collnet";
    case CollectiveAlgo::kPat: return "pat";
    case CollectiveAlgo::kDirect: return "direct";
  }
  return "?";
}

const char* ToString(Protocol proto) {
  switch (proto) {
    case Protocol::kLL: return "LL";
    case Protocol::kLL128: return "LL128";
    case Protocol::kSimple: return "Simple";
  }
  return "?";
}

CollectiveOp ParseCollectiveOp(const std::string& text, const std::string& where) {
  std::string t;
  for (char c : text) {
    if (c == '_' || c == '-') continue;
    t.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  for (CollectiveOp op : {CollectiveOp::kAllReduce, CollectiveOp::kAllGather, CollectiveOp::kReduceScatter,
                          CollectiveOp::kBroadcast, CollectiveOp::kReduce, CollectiveOp::kAllToAll,
                          CollectiveOp::kSendRecv}) {
    if (t == ToString(op)) return op;
  }
  throw InvalidInput("", where,
              StrCat("unknown collective '", text,
                     "' (allreduce, allgather, reducescatter, broadcast, reduce, alltoall, sendrecv)"));
}

NcclFeatures NcclFeaturesFor(const ClusterSpec& cluster, int version) {
  NcclFeatures f;
  f.compute_capability = cluster.gpu.compute_capability;
  f.tree_allreduce = true;
  f.nvls = cluster.gpu.nvls && version >= 21700;
  f.nvls_tree = cluster.gpu.nvls && version >= 21800;
  f.pat = version >= 22300;
  f.collnet = cluster.inter_node.sharp;
  f.ll128 = true;
  f.aws_efa = cluster.inter_node.transport == NetworkTransport::kAwsEfa;
  f.fitted = cluster.collective_params;
  return f;
}

int ParseNcclVersion(const std::string& text, const std::string& where) {
  if (text == "paper") return kNcclPaperVersion;
  if (text == "current") return kNcclCurrentVersion;
  int part[3] = {0, 0, 0};
  int count = 0;
  size_t i = 0;
  while (i < text.size() && count < 3) {
    size_t j = i;
    while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) ++j;
    if (j == i || j - i > 3) break;
    part[count++] = std::stoi(text.substr(i, j - i));
    if (j == text.size()) {
      i = j;
      break;
    }
    if (text[j] != '.') break;
    i = j + 1;
  }
  if (count < 2 || i != text.size() || part[0] != 2 || part[1] > 99 || part[2] > 99)
    throw InvalidInput("", where, StrCat("'", text, "' is not an NCCL version (2.MINOR[.PATCH], paper, current)"));
  return part[0] * 10000 + part[1] * 100 + part[2];
}

double BusBandwidthFactor(CollectiveOp op, int ranks) {
  if (ranks <= 1) return 0.0;
  double n = ranks;
  switch (op) {
    case CollectiveOp::kAllReduce: return 2.0 * (n - 1.0) / n;
    case CollectiveOp::kAllGather:
    case CollectiveOp::kReduceScatter:
    case CollectiveOp::kAllToAll: return (n - 1.0) / n;
    case CollectiveOp::kBroadcast:
    case CollectiveOp::kReduce:
    case CollectiveOp::kSendRecv: return 1.0;
  }
  return 1.0;
}

namespace {
const CollectiveModelParams kDefaultParams{};
const CollectiveModelParams kEfaParams = CollectiveModelParams::AwsEfa();
}  // namespace

CollectiveCost EstimateCollective(CollectiveOp op, Bytes size, const GroupPath& path,
                                  const NcclFeatures& features) {
  if (features.fitted) return EstimateCollective(op, size, path, features, *features.fitted);
  return EstimateCollective(op, size, path, features, features.aws_efa ? kEfaParams : kDefaultParams);
}

CollectiveCost EstimateCollective(CollectiveOp op, Bytes size, const GroupPath& path,
                                  const NcclFeatures& features, const CollectiveModelParams& params) {
  CheckPath(path);
  double bytes = size.si();
  PARASIM_CHECK(bytes >= 0 && std::isfinite(bytes), "collective size ", bytes);
  if (path.ranks <= 1 || bytes <= 0) return ZeroCost(op);
  Shape s = MakeShape(path, features, params);
  // NCCL's tuner chooses by its own prediction, which has no tree deficit of
  // the fabric (tree_net_efficiency): choose without it, price with it.
  Shape chooser = s;
  chooser.tree_inter_Bps = s.paced_inter_Bps;
  Candidate best;
  CollectiveAlgo best_algo = CollectiveAlgo::kRing;
  int best_proto = static_cast<int>(Protocol::kSimple);
  for (int a = 0; a < kNumCollectiveAlgos; ++a) {
    for (int pr = 0; pr < kNumProtocols; ++pr) {
      Candidate c = Evaluate(op, bytes, path, features, params, chooser, static_cast<CollectiveAlgo>(a), pr);
      // The pipeline only adds time: a candidate already slower cannot win.
      if (!c.ok || (best.ok && c.time_s >= best.time_s)) continue;
      c = WithChunkPipeline(c, op, static_cast<CollectiveAlgo>(a), chooser, params);
      if (c.ok && (!best.ok || c.time_s < best.time_s)) {   // ties keep the lower index
        best = c;
        best_algo = static_cast<CollectiveAlgo>(a);
        best_proto = pr;
      }
    }
  }
  PARASIM_CHECK(best.ok, "no collective algorithm for ", ToString(op));
  if (s.tree_inter_Bps != chooser.tree_inter_Bps &&
      (best_algo == CollectiveAlgo::kTree || best_algo == CollectiveAlgo::kNvlsTree)) {
    best = WithChunkPipeline(Evaluate(op, bytes, path, features, params, s, best_algo, best_proto), op, best_algo, s,
                             params);
  }
  return Finish(op, bytes, s, best, best_algo, best_proto);
}

std::optional<CollectiveCost> EstimateCollectiveWith(CollectiveOp op, Bytes size, const GroupPath& path,
                                                     const NcclFeatures& features,
                                                     const CollectiveModelParams& params,
                                                     CollectiveAlgo algo, Protocol proto) {
  CheckPath(path);
  double bytes = size.si();
  PARASIM_CHECK(bytes >= 0 && std::isfinite(bytes), "collective size ", bytes);
  if (path.ranks <= 1 || bytes <= 0) {
    CollectiveCost z = ZeroCost(op);
    z.algo = algo;
    z.protocol = proto;
    return z;
  }
  Shape s = MakeShape(path, features, params);
  Candidate c = WithChunkPipeline(Evaluate(op, bytes, path, features, params, s, algo, static_cast<int>(proto)), op,
                                  algo, s, params);
  if (!c.ok) return std::nullopt;
  return Finish(op, bytes, s, c, algo, static_cast<int>(proto));
}

}  // namespace parasim
