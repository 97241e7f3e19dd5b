#include "topology/traffic.h"

#include <algorithm>
#include <map>

#include "core/check.h"
#include "topology/hybrid_cube_mesh.h"
#include "topology/placement.h"

namespace parasim {

LinkLoad ComputeLinkLoad(const Topology& topo, const std::vector<Flow>& flows) {
  LinkLoad load;
  load.bytes.assign(topo.link_count(), 0.0);
  for (const Flow& f : flows) {
    load.injected_bytes += f.bytes;
    const Route r = topo.RouteBetween(f.src_gpu, f.dst_gpu, f.rail);
    for (int32_t l : r) load.bytes[l] += f.bytes;
    // Delivered: what the last link hands to the destination GPU.
    if (r.empty()) {
      load.delivered_bytes += f.bytes;
    } else if (topo.link_dst()[r[r.size() - 1]] == topo.GpuVertex(f.dst_gpu)) {
      load.delivered_bytes += f.bytes;
    }
  }
  const auto& cap = topo.capacity_Bps();
  for (int l = 0; l < topo.link_count(); ++l) {
    if (load.bytes[l] <= 0) continue;
    const double t = load.bytes[l] / cap[l];
    if (t > load.bottleneck_seconds * (1 + 1e-12)) {   // ties: lowest link id
      load.bottleneck_seconds = t;
      load.bottleneck_link = l;
    }
  }
  return load;
}

RingPlan PlanRing(const Topology& topo, const std::vector<int>& members) {
  RingPlan plan;
  plan.members = members;
  std::sort(plan.members.begin(), plan.members.end());
  const ClusterShape& s = topo.shape();
  const int D = s.domain_gpus;
  // Members per domain, in domain order.
  std::map<int, std::vector<int>> by_domain;
  for (int m : plan.members) by_domain[m / D].push_back(m);
  const bool mesh = s.intra == IntraNodeFabric::kHybridCubeMesh;

  // Intra-domain orders for a domain's members: mesh rings or rank order.
  auto intra_orders = [&](const std::vector<int>& dom) {
    std::vector<std::vector<int>> orders;
    if (mesh && dom.size() >= 2) {
      uint32_t mask = 0;
      for (int m : dom) mask |= 1u << (m % D);
      const int base = dom[0] / D * D;
      for (const auto& ring : HcmBestRings(mask).rings) {
        std::vector<int> o;
        for (int l : ring) o.push_back(base + l);
        orders.push_back(o);
      }
    }
    if (orders.empty()) orders.push_back(dom);
    return orders;
  };

  if (by_domain.size() == 1) {
    for (auto& o : intra_orders(plan.members)) plan.channels.push_back({o, -1});
    return plan;
  }
  // One channel per NIC the members of a domain own (regular placement: the
  // same local GPUs on every domain, so rails line up).
  const std::vector<int>& first = by_domain.begin()->second;
  std::vector<int> rails;
  for (int m : first)
    for (int j = 0; j < s.NicsPerGpu(); ++j) rails.push_back(s.FirstNic(m % D) + j);
  std::sort(rails.begin(), rails.end());
  rails.erase(std::unique(rails.begin(), rails.end()), rails.end());
  for (size_t c = 0; c < rails.size(); ++c) {
    const int rail = rails[c];
    RingChannel ch;
    ch.rail = rail;
    for (const auto& [domain, dom] : by_domain) {
      auto orders = intra_orders(dom);
      std::vector<int> o = orders[c % orders.size()];
      // Rotate so the domain is entered at the first member attached to the rail.
      auto attached = [&](int g) {
        const int f = s.FirstNic(g % D);
        return rail >= f && rail < f + s.NicsPerGpu();
      };
      auto it = std::find_if(o.begin(), o.end(), attached);
      if (it != o.end()) std::rotate(o.begin(), it, o.end());
      ch.order.insert(ch.order.end(), o.begin(), o.end());
    }
    plan.channels.push_back(ch);
  }
  return plan;
}

void AppendRingFlows(const RingPlan& plan, double bytes, std::vector<Flow>* flows) {
  if (plan.channels.empty() || plan.members.size() < 2) return;
  const double per_channel = bytes / plan.channels.size();
  for (const RingChannel& ch : plan.channels) {
    const size_t n = ch.order.size();
    for (size_t i = 0; i < n; ++i) flows->push_back({ch.order[i], ch.order[(i + 1) % n], per_channel, ch.rail});
  }
}

std::vector<std::pair<int32_t, double>> RingLinkWeights(const Topology& topo, const std::vector<int>& members) {
  std::vector<Flow> flows;
  AppendRingFlows(PlanRing(topo, members), 1.0, &flows);
  std::map<int32_t, double> w;
  for (const Flow& f : flows)
    for (int32_t l : topo.RouteBetween(f.src_gpu, f.dst_gpu, f.rail)) w[l] += f.bytes;
  return {w.begin(), w.end()};
}

RingAnalysis AnalyzeRings(const Topology& topo, const ParallelConfig& config, ParallelDim dim, SubGroup sub) {
  Placement placement(config, topo.gpu_count());
  const auto groups = placement.AllGroups(dim, sub);
  RingAnalysis a;
  a.groups = static_cast<int>(groups.size());
  const double bytes = 1e9;   // per rank per ring step; any value (the ratio is what counts)
  std::vector<Flow> flows;
  const int D = topo.shape().domain_gpus;
  for (size_t gi = 0; gi < groups.size(); ++gi) {
    const RingPlan plan = PlanRing(topo, groups[gi]);
    if (gi == 0) {
      std::vector<int> domains;
      for (int m : groups[gi]) domains.push_back(m / D);
      std::sort(domains.begin(), domains.end());
      a.nodes = static_cast<int>(std::unique(domains.begin(), domains.end()) - domains.begin());
      a.ranks_per_node = static_cast<int>(groups[gi].size()) / a.nodes;
      a.channels = static_cast<int>(plan.channels.size());
    }
    AppendRingFlows(plan, bytes, &flows);
  }
  for (const Flow& f : flows)
    if (f.src_gpu / D != f.dst_gpu / D)
      a.max_switch_hops = std::max(a.max_switch_hops, topo.SwitchHops(topo.RouteBetween(f.src_gpu, f.dst_gpu, f.rail)));
  a.load = ComputeLinkLoad(topo, flows);
  if (a.load.bottleneck_link < 0) return a;   // one-rank groups: no traffic
  a.bus_bandwidth = BytesPerSecond(bytes / a.load.bottleneck_seconds);
  a.bottleneck_class = topo.link_class()[a.load.bottleneck_link];
  return a;
}

namespace {

// ncclGetBtree (NCCL src/graph/trees.cc): parent of `rank` in a binary tree
// over 0..n-1 built on the in-order numbering (rank 0 is the root).
int BtreeParent(int n, int rank) {
  if (rank == 0) return -1;
  int bit = 1;
  while (bit < n && !(bit & rank)) bit <<= 1;
  int up = (rank ^ bit) | (bit << 1);
  if (up >= n) up = rank ^ bit;
  return up;
}

}  // namespace

TreePlan PlanDoubleBinaryTree(const Topology& topo, const std::vector<int>& members) {
  TreePlan plan;
  plan.members = members;
  std::sort(plan.members.begin(), plan.members.end());
  const int D = topo.shape().domain_gpus;
  for (int m : plan.members)
    if (plan.leaders.empty() || plan.leaders.back() / D != m / D) plan.leaders.push_back(m);
  const int n = static_cast<int>(plan.leaders.size());
  for (auto& p : plan.parent) p.assign(n, -1);
  for (int r = 0; r < n; ++r) {
    plan.parent[0][r] = BtreeParent(n, r);
    if (n % 2 == 1) {   // shift by one
      const int u = BtreeParent(n, (r - 1 + n) % n);
      plan.parent[1][r] = u < 0 ? -1 : (u + 1) % n;
    } else {            // mirror
      const int u = BtreeParent(n, n - 1 - r);
      plan.parent[1][r] = u < 0 ? -1 : n - 1 - u;
    }
  }
  return plan;
}

void AppendTreeFlows(const Topology& topo, const TreePlan& plan, double bytes, std::vector<Flow>* flows) {
  const int D = topo.shape().domain_gpus;
  const ClusterShape& s = topo.shape();
  // Intra-domain chains: reduce towards the leader and broadcast back, whole message.
  for (size_t i = 0; i + 1 < plan.members.size(); ++i) {
    const int a = plan.members[i], b = plan.members[i + 1];
    if (a / D != b / D) continue;
    flows->push_back({b, a, bytes, -1});
    flows->push_back({a, b, bytes, -1});
  }
  // Inter-domain trees: each carries half the message up (reduce) and down (broadcast),
  // on the leader's own NIC rail.
  for (int t = 0; t < 2; ++t)
    for (size_t r = 0; r < plan.leaders.size(); ++r) {
      const int p = plan.parent[t][r];
      if (p < 0) continue;
      const int child = plan.leaders[r], parent = plan.leaders[p];
      const int rail = s.FirstNic(child % D);
      flows->push_back({child, parent, bytes / 2, rail});
      flows->push_back({parent, child, bytes / 2, rail});
    }
}

}  // namespace parasim
