// ResolveGroupPath: the closed form of what a placed group's ring sees. It
// reads only the cluster's regular structure (ClusterShape) and the group's
// strided layout (GroupLayout), so it costs about a microsecond; the tests
// check it against ring flows routed on the Topology graph.
#include "topology/group_path.h"

#include <algorithm>
#include <cstdint>

#include "core/error.h"
#include "topology/cluster_shape.h"
#include "topology/hybrid_cube_mesh.h"
#include "topology/link_params.h"
#include "topology/placement.h"

namespace parasim {

const char* ToString(LinkClass c) {
  switch (c) {
    case LinkClass::kNvLink: return "nvlink";
    case LinkClass::kPcie: return "pcie";
    case LinkClass::kNic: return "nic";
    case LinkClass::kLeafSpine: return "leaf-spine";
    case LinkClass::kSpineCore: return "spine-core";
  }
  return "?";
}

const char* ToString(ParallelDim d) {
  switch (d) {
    case ParallelDim::kTp: return "tp";
    case ParallelDim::kCp: return "cp";
    case ParallelDim::kEp: return "ep";
    case ParallelDim::kDp: return "dp";
    case ParallelDim::kPp: return "pp";
  }
  return "?";
}

namespace {

// True when every group of the layout lies inside aligned blocks of `block` ranks.
bool FitsBlocks(const GroupLayout& l, long long block) {
  return l.extent <= block && block % l.extent == 0;
}

// Local indices (within domain 0) of the members of the group holding local rank r.
uint64_t LocalMask(const GroupLayout& l, int r, int d) {
  long long base = r;
  for (const auto& f : l.factors) base -= ((r / f.stride) % f.size) * f.stride;
  uint64_t mask = 0;
  for (int m : GroupMembersAt(l, base))
    if (m >= 0 && m < d && m < 64) mask |= uint64_t{1} << m;
  return mask;
}

int Popcount(uint64_t x) { return __builtin_popcountll(x); }

}  // namespace

GroupPath ResolveGroupPath(const ClusterSpec& cluster, const ParallelConfig& config, ParallelDim dim,
                           SubGroup sub) {
  if (config.WorldSize() != cluster.TotalGpus())
    throw Error("", "config", StrCat("dp*tp*pp*cp = ", config.WorldSize(), " does not equal the cluster's ",
                                     cluster.TotalGpus(), " GPUs"));
  const ClusterShape s = MakeClusterShape(cluster);
  const GroupLayout l = LayoutOf(config, dim, sub);
  const int d = s.domain_gpus;
  const GpuProfile& gpu = cluster.gpu;

  GroupPath p;
  p.ranks = l.size;
  // Members of the lowest group inside domain 0 (groups are regular translates).
  const uint64_t base_mask = d <= 64 ? LocalMask(l, 0, d) : 0;
  int k = 0;
  if (d <= 64) {
    k = Popcount(base_mask);
  } else {
    for (int m : GroupMembersAt(l, 0)) k += m < d;
  }
  k = std::max(1, std::min(k, l.size));
  p.crosses_nodes = !FitsBlocks(l, d);
  if (p.crosses_nodes && k == l.size) k = std::max(1, l.size / 2);   // straddles a boundary irregularly
  p.ranks_per_node = k;
  p.nodes = (l.size + k - 1) / k;
  p.groups_sharing_node = std::max(1, d / k);
  bool strides_whole_domains = true;
  long long min_stride = 0;
  for (const auto& f : l.factors) {
    strides_whole_domains = strides_whole_domains && f.stride % d == 0;
    min_stride = min_stride == 0 ? f.stride : std::min(min_stride, f.stride);
  }
  p.single_rail = p.crosses_nodes && k == 1 && strides_whole_domains;

  // --- inside the NVLink domain ---
  LinkClass intra_class = LinkClass::kNvLink;
  p.intra_hop_latency = cluster.intra_node.nvlink_latency;
  switch (s.intra) {
    case IntraNodeFabric::kNvSwitch:
    case IntraNodeFabric::kNvlDomain:
      p.intra_bandwidth = gpu.nvlink_bandwidth;
      break;
    case IntraNodeFabric::kHybridCubeMesh: {
      p.intra_bandwidth = gpu.nvlink_bandwidth;
      if (k > 1) {
        const BytesPerSecond per_link = NvLinkPerLink(gpu);
        int units = 1 << 30;
        for (int r = 0; r < d; ++r) units = std::min(units, HcmBestRings(static_cast<uint32_t>(LocalMask(l, r, d))).link_units);
        if (units > 0) {
          p.intra_bandwidth = per_link * units;
        } else {   // no NVLink ring over these GPUs: NCCL falls back to PCIe/host memory
          p.intra_bandwidth = gpu.pcie_bandwidth;
          intra_class = LinkClass::kPcie;
          p.intra_hop_latency = kPcieHopLatency;
        }
      }
      break;
    }
    case IntraNodeFabric::kPcie:
      p.intra_bandwidth = gpu.pcie_bandwidth;
      intra_class = LinkClass::kPcie;
      p.intra_hop_latency = kPcieHopLatency;
      break;
  }

  if (!p.crosses_nodes) {
    p.ring_bandwidth = p.intra_bandwidth;
    p.bottleneck_class = intra_class;
    p.nvls_capable = l.size > 1 && gpu.nvls &&
                     (s.intra == IntraNodeFabric::kNvSwitch || s.intra == IntraNodeFabric::kNvlDomain);
    return p;
  }

  // --- at the node boundary ---
  const InterNodeSpec& in = cluster.inter_node;
  // The group's channels spread over the NICs its k members own; all groups
  // of the dimension run at once, so each gets its members' share of the NICs.
  BytesPerSecond inter = in.nic_bandwidth * (static_cast<double>(s.nics_per_domain) * k / d);
  LinkClass inter_class = LinkClass::kNic;
  // Channels = distinct NICs owned by the members (each enters via its own PCIe link).
  int channels = 0;
  {
    std::vector<char> used(std::max(1, s.nics_per_domain), 0);
    for (int g = 0; g < std::min(d, 64); ++g)
      if (base_mask & (uint64_t{1} << g))
        for (int j = 0; j < s.NicsPerGpu(); ++j) used[s.FirstNic(g) + j] = 1;
    for (char u : used) channels += u;
    channels = std::max(1, channels);
  }
  if (gpu.pcie_bandwidth.si() > 0 && gpu.pcie_bandwidth * channels < inter) {
    inter = gpu.pcie_bandwidth * channels;
    inter_class = LinkClass::kPcie;
  }

  // Where the ring's node-to-node hops go in the fabric.
  if (s.tiers <= 1) {
    p.max_switch_hops = 1;
  } else if (FitsBlocks(l, static_cast<long long>(s.LeafBlockDomains()) * d)) {
    p.max_switch_hops = 1;
  } else {
    p.max_switch_hops = (s.tiers == 2 || FitsBlocks(l, static_cast<long long>(s.PodBlockDomains()) * d)) ? 3 : 5;
    // Fraction of a leaf's ring hops that leave it: a hop from domain x to
    // x + t leaves the leaf once per block of B domains (every hop if t >= B).
    const long long step_domains = k == 1 ? std::max<long long>(1, min_stride / d) : 1;
    const double leaving = std::min(1.0, static_cast<double>(step_domains) / s.LeafBlockDomains());
    const double factor = std::min(1.0, 1.0 / (leaving * in.oversubscription));
    if (factor < 1.0) {
      inter = inter * factor;
      inter_class = LinkClass::kLeafSpine;
    }
  }
  p.inter_bandwidth = inter;
  p.inter_hop_latency = in.nic_latency + in.switch_latency * p.max_switch_hops;
  if (k > 1 && p.intra_bandwidth < inter) {
    p.ring_bandwidth = p.intra_bandwidth;
    p.bottleneck_class = intra_class;
  } else {
    p.ring_bandwidth = inter;
    p.bottleneck_class = inter_class;
  }
  p.sharp_capable = in.sharp;
  return p;
}

}  // namespace parasim
