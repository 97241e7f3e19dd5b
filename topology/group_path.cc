// ResolveGroupPath: the closed form of what a placed group's ring sees. It
// reads only the cluster's regular structure (ClusterShape) and the group's
// strided layout (GroupLayout), so it costs about a microsecond; the tests
// check it against ring flows routed on the Topology graph.
#include "topology/group_path.h"

#include <algorithm>
#include <cstdint>
#include <numeric>

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

// Members of the group with lowest rank `base` that lie below `limit`
// (bounded enumeration: at most `limit` values, whatever the group size).
void MembersBelow(const GroupLayout& l, size_t factor, long long offset, long long limit, std::vector<int>* out) {
  if (factor == l.factors.size()) {
    out->push_back(static_cast<int>(offset));
    return;
  }
  const GroupFactor& f = l.factors[factor];
  for (int c = 0; c < f.size && offset + c * f.stride < limit; ++c)
    MembersBelow(l, factor + 1, offset + c * f.stride, limit, out);
}

// Local indices (within domain 0) of the members of the group holding local rank r.
uint64_t LocalMask(const GroupLayout& l, int r, int d) {
  long long base = r;
  for (const auto& f : l.factors) base -= ((r / f.stride) % f.size) * f.stride;
  std::vector<int> members;
  MembersBelow(l, 0, base, d, &members);
  uint64_t mask = 0;
  for (int m : members)
    if (m < 64) mask |= uint64_t{1} << m;
  return mask;
}

// True when every group has the same number of members in every NVLink
// domain it touches (each factor stays inside a domain, strides whole
// domains, or tiles whole domains).
bool RegularOnDomains(const GroupLayout& l, long long d) {
  for (const auto& f : l.factors) {
    const long long span = f.stride * f.size;
    const bool inside = d % span == 0;
    const bool across = f.stride % d == 0;
    const bool tiles = f.stride < d && d % f.stride == 0 && span % d == 0;
    if (!inside && !across && !tiles) return false;
  }
  return true;
}

struct Pieces {
  int min_piece = 1;    // fewest members a group has in one domain
  int max_domains = 1;  // most domains one group spans
};
// Irregular layouts: scan one period (lcm of the group tile and the domain)
// of groups; their per-domain pieces repeat after it.
Pieces ScanPieces(const GroupLayout& l, long long d) {
  const long long period = std::lcm(l.extent, d);
  Pieces out{l.size, 1};
  if (period > (1LL << 18)) {   // too long to scan: assume the worst split
    out.min_piece = 1;
    out.max_domains = std::min<long long>(l.size, (l.extent + d - 1) / d + 1);
    return out;
  }
  for (long long b = 0; b < period; ++b) {
    bool base = true;
    for (const auto& f : l.factors) base = base && (b / f.stride) % f.size == 0;
    if (!base) continue;
    std::vector<int> members;
    MembersBelow(l, 0, b, b + l.extent, &members);
    int run = 0, domains = 0;
    for (size_t i = 0; i < members.size(); ++i) {
      ++run;
      if (i + 1 == members.size() || members[i + 1] / d != members[i] / d) {
        out.min_piece = std::min(out.min_piece, run);
        ++domains;
        run = 0;
      }
    }
    out.max_domains = std::max(out.max_domains, domains);
  }
  return out;
}

}  // namespace

GroupPath ResolveGroupPath(const ClusterSpec& cluster, const ParallelConfig& config, ParallelDim dim,
                           SubGroup sub) {
  if (config.WorldSize() != cluster.TotalGpus())
    throw InvalidInput("", "config", StrCat("dp*tp*pp*cp = ", config.WorldSize(), " does not equal the cluster's ",
                                     cluster.TotalGpus(), " GPUs"));
  if (sub.ends) return GroupEndsPath(ResolveGroupPath(cluster, config, dim, SubGroup{}));
  const ClusterShape s = MakeClusterShape(cluster);
  const GroupLayout l = LayoutOf(config, dim, sub);
  const int d = s.domain_gpus;
  const GpuProfile& gpu = cluster.gpu;

  GroupPath p;
  p.ranks = l.size;
  // Members of the lowest group inside domain 0 (groups are regular translates).
  std::vector<int> local;
  MembersBelow(l, 0, 0, d, &local);
  int k = static_cast<int>(local.size());
  k = std::max(1, std::min(k, l.size));
  p.crosses_nodes = !FitsBlocks(l, d);
  p.nodes = (l.size + k - 1) / k;
  if (p.crosses_nodes && !RegularOnDomains(l, d)) {
    // Groups straddle domain boundaries unevenly: the worst group sets the pace.
    const Pieces pieces = ScanPieces(l, d);
    k = pieces.min_piece;
    p.nodes = pieces.max_domains;
  }
  p.ranks_per_node = k;
  p.groups_sharing_node = std::max(1, d / k);
  bool strides_whole_domains = true;
  for (const auto& f : l.factors) {
    strides_whole_domains = strides_whole_domains && f.stride % d == 0;
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

  if (!(p.intra_bandwidth.si() > 0) && l.size > 1 && k > 1)
    throw InvalidInput(gpu.file, intra_class == LinkClass::kPcie ? "pcie_bandwidth" : "nvlink_bandwidth",
                StrCat("GPU profile '", gpu.name, "' needs a positive ", intra_class == LinkClass::kPcie ? "PCIe" : "NVLink",
                       " bandwidth for its ", cluster.name, " intra-node fabric"));
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
    for (int g : local)
      for (int j = 0; j < s.NicsPerGpu(); ++j) used[s.FirstNic(g) + j] = 1;
    for (char u : used) channels += u;
    channels = std::max(1, channels);
  }
  if (gpu.pcie_bandwidth.si() > 0 && gpu.pcie_bandwidth * channels < inter) {
    inter = gpu.pcie_bandwidth * channels;
    inter_class = LinkClass::kPcie;
  }

  // Where the ring's node-to-node hops go in the fabric. A group fits a
  // block when every translate does: aligned (the block a multiple of its
  // extent) or the whole cluster inside one block (3 nodes under one leaf:
  // a pp = 3 group's extent does not divide the leaf's, but it never leaves it).
  const long long world = cluster.TotalGpus();
  const auto fits = [&](long long block) { return FitsBlocks(l, block) || (l.extent <= block && world <= block); };
  if (s.tiers <= 1) {
    p.max_switch_hops = 1;
  } else if (fits(static_cast<long long>(s.LeafBlockDomains()) * d)) {
    p.max_switch_hops = 1;
  } else {
    p.max_switch_hops = (s.tiers == 2 || fits(static_cast<long long>(s.PodBlockDomains()) * d)) ? 3 : 5;
    // Fraction of a leaf's ring hops that leave it: a hop from domain x to
    // x + t leaves the leaf once per block of B domains (every hop if t >= B).
    // Domains between consecutive ring nodes: 1 when a factor runs across
    // domain boundaries, else the smallest factor stride in domains.
    long long step_domains = 0;
    for (const auto& f : l.factors) {
      const long long step = f.stride >= d ? f.stride / d : (f.stride * f.size > d ? 1 : 0);
      if (step > 0) step_domains = step_domains == 0 ? step : std::min(step_domains, step);
    }
    step_domains = std::max<long long>(1, step_domains);
    const double leaving = std::min(1.0, static_cast<double>(step_domains) / s.LeafBlockDomains());
    // Uplink load per port: D-mod-K spreads a full leaf's ports over the
    // spines, ceil(down / spines) flows per trunk of up / spines ports.
    const double per_trunk = std::ceil(static_cast<double>(s.leaf_down) / s.spines_per_pod - 1e-9);
    const double up_ratio = std::max(in.oversubscription, per_trunk / s.leaf_spine_ports);
    const double factor = std::min(1.0, 1.0 / (leaving * up_ratio));
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

GroupPath GroupEndsPath(const GroupPath& whole) {
  GroupPath p = whole;
  p.ranks = std::min(whole.ranks, 2);
  if (!whole.crosses_nodes) {
    p.nodes = 1;
    p.ranks_per_node = p.ranks;
    return p;
  }
  const int k = std::max(1, whole.ranks_per_node);
  p.nodes = 2;
  p.ranks_per_node = 1;
  p.groups_sharing_node = whole.groups_sharing_node * k;
  p.single_rail = k == 1 && whole.single_rail;
  p.inter_bandwidth = whole.inter_bandwidth / static_cast<double>(k);
  p.ring_bandwidth = p.inter_bandwidth;   // one member per node: no NVLink leg
  if (whole.ring_bandwidth < whole.inter_bandwidth) p.bottleneck_class = LinkClass::kNic;
  return p;
}

}  // namespace parasim
