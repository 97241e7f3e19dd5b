#include <catch2/catch.hpp>

#include <random>
#include <set>

#include "core/error.h"
#include "test_clusters.h"
#include "topology/group_path.h"
#include "topology/placement.h"
#include "topology/topology.h"
#include "topology/traffic.h"

using namespace parasim;
using Catch::Matchers::WithinRel;

namespace {
ParallelConfig Cfg(int dp, int tp, int pp = 1, int cp = 1, int ep = 1, const char* order = "tp-cp-ep-dp-pp") {
  ParallelConfig c;
  c.dp = dp; c.tp = tp; c.pp = pp; c.cp = cp; c.ep = ep;
  c.order = order;
  return c;
}
double GBs(BytesPerSecond b) { return b.si() / 1e9; }

ClusterSpec B200Pod(int nodes) {
  ClusterSpec c = test::DgxH100(nodes);
  c.name = "dgx-b200";
  c.inter_node.tiers = 3;
  return c;
}
}  // namespace

TEST_CASE("topology: SuperPOD switch counts follow the reference architecture", "[topology]") {
  // H100 SuperPOD RA Table 4: 1 SU 8 leaf + 4 spine, 2 SU 16 + 8, 4 SU 32 + 16.
  for (auto [nodes, leaves, spines] : {std::tuple{32, 8, 4}, {64, 16, 8}, {128, 32, 16}}) {
    const Topology t = Topology::Build(test::DgxH100(nodes));
    CHECK(t.CountVertices(VertexKind::kLeaf) == leaves);
    CHECK(t.CountVertices(VertexKind::kSpine) == spines);
    CHECK(t.CountVertices(VertexKind::kCore) == 0);
    CHECK(t.CountVertices(VertexKind::kGpu) == nodes * 8);
    CHECK(t.CableCount(LinkClass::kNic) == nodes * 8);
  }
  // B200 SuperPOD 16 SU (512 nodes): 128 leaf, 128 spine, 64 core.
  const Topology b = Topology::Build(B200Pod(512));
  CHECK(b.CountVertices(VertexKind::kLeaf) == 128);
  CHECK(b.CountVertices(VertexKind::kSpine) == 128);
  CHECK(b.CountVertices(VertexKind::kCore) == 64);
}

TEST_CASE("topology: closed-form group paths agree with rings routed on the graph", "[topology]") {
  struct Case {
    ClusterSpec cluster;
    ParallelConfig config;
    ParallelDim dim;
    SubGroup sub;
  };
  ClusterSpec over = test::DgxH100(128);
  over.inter_node.switch_radix = 48;
  over.inter_node.oversubscription = 2.0;
  ClusterSpec plain = test::DgxH100(16);
  plain.inter_node.rail_optimized = false;
  ClusterSpec a100 = test::DgxH100(140);   // A100 SuperPOD-like: HDR, 40-port switches, 20-node SUs
  a100.name = "dgx-a100";
  a100.inter_node.nic_bandwidth = Gbps(200);
  a100.inter_node.switch_radix = 40;
  a100.inter_node.scalable_unit_nodes = 20;
  a100.inter_node.tiers = 3;
  std::vector<Case> cases = {
      {a100, Cfg(140, 8), ParallelDim::kDp, {}},
      {a100, Cfg(35, 8, 4), ParallelDim::kPp, {}},
      {a100, Cfg(140 * 8, 1), ParallelDim::kDp, {}},
      {test::DgxH100(32), Cfg(256, 1), ParallelDim::kDp, {}},
      {test::DgxH100(32), Cfg(32, 8), ParallelDim::kDp, {}},
      {test::DgxH100(32), Cfg(32, 8), ParallelDim::kTp, {}},
      {test::DgxH100(32), Cfg(128, 2), ParallelDim::kDp, {}},
      {test::DgxH100(32), Cfg(16, 4, 4), ParallelDim::kPp, {}},
      {test::DgxH100(32), Cfg(64, 2, 1, 2), ParallelDim::kCp, {}},
      {test::DgxH100(32), Cfg(256, 1), ParallelDim::kDp, {8, 1}},
      {test::DgxH100(32), Cfg(256, 1), ParallelDim::kDp, {32, 8}},
      {test::DgxH100(128), Cfg(32, 8, 4), ParallelDim::kPp, {}},
      {test::DgxH100(128), Cfg(128, 8), ParallelDim::kDp, {}},
      {over, Cfg(32, 8, 4), ParallelDim::kPp, {}},
      {over, Cfg(128, 8), ParallelDim::kDp, {}},
      {plain, Cfg(16, 8), ParallelDim::kDp, {}},
      {plain, Cfg(2, 8, 8), ParallelDim::kPp, {}},
      {B200Pod(512), Cfg(64, 8, 8), ParallelDim::kPp, {}},
      {B200Pod(512), Cfg(512, 8), ParallelDim::kDp, {}},
      {test::Dgx1(4), Cfg(32, 1), ParallelDim::kDp, {}},
      {test::Dgx1(4), Cfg(4, 8), ParallelDim::kDp, {}},
      {test::Dgx1(4), Cfg(16, 2), ParallelDim::kDp, {}},
      {test::Dgx1(1), Cfg(8, 1), ParallelDim::kDp, {}},
      {test::Dgx1(1), Cfg(2, 4), ParallelDim::kTp, {}},
      {test::Dgx1(1), Cfg(4, 2), ParallelDim::kDp, {}},
      {test::Nvl72(4), Cfg(4, 72), ParallelDim::kDp, {}},
      {test::Nvl72(4), Cfg(32, 9), ParallelDim::kDp, {}},
      {test::DgxH100(16), Cfg(16, 8, 1, 1, 4), ParallelDim::kEp, {}},
      {test::DgxH100(16), Cfg(32, 4, 1, 1, 8, "tp-ep-cp-dp-pp"), ParallelDim::kEp, {}},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    INFO("case " << i << " " << c.cluster.name << " dim " << ToString(c.dim));
    const GroupPath p = ResolveGroupPath(c.cluster, c.config, c.dim, c.sub);
    const Topology t = Topology::Build(c.cluster);
    const RingAnalysis r = AnalyzeRings(t, c.config, c.dim, c.sub);
    CHECK(r.nodes == p.nodes);
    CHECK(r.ranks_per_node == p.ranks_per_node);
    CHECK(r.groups * p.ranks == t.gpu_count());
    CHECK(r.max_switch_hops == p.max_switch_hops);
    CHECK_THAT(GBs(r.bus_bandwidth), WithinRel(GBs(p.ring_bandwidth), 1e-9));
    CHECK(r.bottleneck_class == p.bottleneck_class);
  }
}

TEST_CASE("topology: the ends of a pp group: closed form agrees with the pairs routed on the graph", "[topology]") {
  // GroupEnds(): stage 0 and stage pp − 1 of every pipeline, one pair per
  // pp group. Its path is GroupEndsPath of the whole group; routed on the
  // graph, every pair at once must give the same shape and bandwidth.
  struct Case {
    ClusterSpec cluster;
    ParallelConfig config;
  };
  ClusterSpec over = test::DgxH100(128);
  over.inter_node.switch_radix = 48;
  over.inter_node.oversubscription = 2.0;
  const std::vector<Case> cases = {
      {test::DgxH100(32), Cfg(16, 4, 4)},                            // one stage per node
      {test::DgxH100(128), Cfg(32, 8, 4)},                           // pipelines across scalable units
      {over, Cfg(32, 8, 4)},
      {test::DgxH100(2), Cfg(4, 1, 4)},                              // two stages per node
      {test::DgxH100(6), Cfg(16, 1, 3)},                             // odd pp
      {test::DgxH100(12), Cfg(32, 1, 3)},
      {test::DgxH100(4), Cfg(8, 1, 4, 1, 1, "pp-tp-cp-ep-dp")},      // the pipeline inside a node
      {test::DgxH100(2), Cfg(2, 2, 4)},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    INFO("case " << i);
    const GroupPath whole = ResolveGroupPath(c.cluster, c.config, ParallelDim::kPp);
    const GroupPath p = ResolveGroupPath(c.cluster, c.config, ParallelDim::kPp, GroupEnds());
    CHECK(p.ranks == 2);
    CHECK(p.crosses_nodes == whole.crosses_nodes);
    const Topology t = Topology::Build(c.cluster);
    const RingAnalysis r = AnalyzeRings(t, c.config, ParallelDim::kPp, GroupEnds());
    CHECK(r.groups * c.config.pp == t.gpu_count());   // one pair per pipeline
    CHECK(r.nodes == p.nodes);
    CHECK(r.ranks_per_node == p.ranks_per_node);
    CHECK_THAT(GBs(r.bus_bandwidth), WithinRel(GBs(p.ring_bandwidth), 1e-9));
    CHECK(r.bottleneck_class == p.bottleneck_class);
    // The pair's hop is the group's widest (its ring's closing hop), routed
    // and in closed form, odd pp included (a 3-stage group's extent does not
    // divide a leaf's, but on 6 or 12 nodes it never leaves the leaf).
    CHECK(r.max_switch_hops == AnalyzeRings(t, c.config, ParallelDim::kPp, {}).max_switch_hops);
    CHECK(p.max_switch_hops == whole.max_switch_hops);
    CHECK(p.max_switch_hops == r.max_switch_hops);
  }
}

TEST_CASE("topology: bytes injected are delivered, and every switch forwards what it receives", "[topology]") {
  for (const ClusterSpec& c : {test::DgxH100(64), test::Dgx1(4), B200Pod(512), test::Nvl72(2)}) {
    const Topology t = Topology::Build(c);
    std::mt19937 rng(7);
    std::uniform_int_distribution<int> gpu(0, t.gpu_count() - 1);
    std::uniform_int_distribution<int> rail(-1, t.shape().nics_per_domain - 1);
    std::vector<Flow> flows;
    for (int i = 0; i < 2000; ++i) flows.push_back({gpu(rng), gpu(rng), 1.0 + i % 7, rail(rng)});
    const LinkLoad load = ComputeLinkLoad(t, flows);
    CHECK_THAT(load.delivered_bytes, WithinRel(load.injected_bytes, 1e-12));
    std::vector<double> net(t.vertex_count(), 0.0);   // in - out per vertex
    for (int l = 0; l < t.link_count(); ++l) {
      net[t.link_dst()[l]] += load.bytes[l];
      net[t.link_src()[l]] -= load.bytes[l];
    }
    for (const Flow& f : flows) {
      if (f.src_gpu == f.dst_gpu) continue;
      net[f.dst_gpu] -= f.bytes;
      net[f.src_gpu] += f.bytes;
    }
    for (int v = 0; v < t.vertex_count(); ++v) CHECK(std::abs(net[v]) < 1e-6);
  }
}

TEST_CASE("topology: ECMP choices are deterministic and spread a shift over the spines", "[topology]") {
  const Topology a = Topology::Build(test::DgxH100(128));
  const Topology b = Topology::Build(test::DgxH100(128));
  std::set<int> spines;
  for (int node = 0; node < 32; ++node) {
    const int src = node * 8, dst = (node + 32) * 8;   // SU 0 -> SU 1, rail 0
    const Route r1 = a.RouteBetween(src, dst), r2 = b.RouteBetween(src, dst), r3 = a.RouteBetween(src, dst);
    REQUIRE(r1.size() == r2.size());
    for (int i = 0; i < r1.size(); ++i) CHECK(r1[i] == r2[i]);
    for (int i = 0; i < r1.size(); ++i) CHECK(r1[i] == r3[i]);
    CHECK(a.SwitchHops(r1) == 3);
    spines.insert(a.link_dst()[r1[2]]);
  }
  CHECK(spines.size() == 16);   // 32 flows over 16 spines, two each
}

TEST_CASE("topology: rail-optimized same-rail traffic inside a scalable unit never touches a spine", "[topology]") {
  const Topology t = Topology::Build(test::DgxH100(64));
  std::vector<Flow> flows;
  for (int su = 0; su < 2; ++su)
    for (int x = 0; x < 32; ++x)
      for (int rail = 0; rail < 8; ++rail) {
        const int y = (x + 5) % 32;
        flows.push_back({(su * 32 + x) * 8 + rail, (su * 32 + y) * 8 + rail, 1e6});
      }
  const LinkLoad load = ComputeLinkLoad(t, flows);
  for (int l = 0; l < t.link_count(); ++l)
    if (t.link_class()[l] == LinkClass::kLeafSpine) CHECK(load.bytes[l] == 0.0);
  // Cross-rail traffic in the same SU does go up.
  const Route cross = t.RouteBetween(0, 9);   // node 0 rail 0 -> node 1 rail 1
  CHECK(t.SwitchHops(cross) == 3);
}

namespace {
// Throughput of half the NICs each sending to a partner in the other half.
double HalfToHalf_GBs(const Topology& t) {
  const int domains = t.shape().domains, nn = t.shape().nics_per_domain;
  std::vector<Flow> flows;
  for (int d = 0; d < domains / 2; ++d)
    for (int k = 0; k < nn; ++k) flows.push_back({d * nn + k, (d + domains / 2) * nn + k, 1e9});
  const LinkLoad load = ComputeLinkLoad(t, flows);
  return load.injected_bytes / load.bottleneck_seconds / 1e9;
}
}  // namespace

TEST_CASE("topology: full-bisection fat-tree bisection = N x injection / 2; 2:1 halves cross-leaf bandwidth", "[topology]") {
  const Topology full = Topology::Build(test::DgxH100(64));
  const double n_inj_half = 512 * GBs(full.InjectionBandwidth()) / 2;
  CHECK_THAT(GBs(full.InjectionBandwidth()), WithinRel(50.0, 1e-12));
  CHECK_THAT(GBs(full.BisectionBandwidth()), WithinRel(n_inj_half, 1e-12));
  CHECK_THAT(HalfToHalf_GBs(full), WithinRel(n_inj_half, 1e-9));
  ClusterSpec c = test::DgxH100(64);
  c.inter_node.switch_radix = 48;   // 32 down, 16 up
  c.inter_node.oversubscription = 2.0;
  const Topology over = Topology::Build(c);
  CHECK_THAT(GBs(over.BisectionBandwidth()), WithinRel(n_inj_half / 2, 1e-12));
  CHECK_THAT(HalfToHalf_GBs(over), WithinRel(n_inj_half / 2, 1e-9));
  // 3 tiers: non-blocking above the leaf.
  const Topology three = Topology::Build(B200Pod(512));
  CHECK_THAT(HalfToHalf_GBs(three), WithinRel(4096 * 50.0 / 2, 1e-9));
}

TEST_CASE("topology: V100 hybrid cube mesh ring NCCL would build", "[topology]") {
  const Topology t = Topology::Build(test::Dgx1(1));
  Placement pl(Cfg(8, 1), 8);
  const RingPlan plan = PlanRing(t, pl.Members(ParallelDim::kDp, 0));
  CHECK(plan.channels.size() == 6);   // 3 edge-disjoint Hamiltonian cycles, both directions
  for (const RingChannel& ch : plan.channels) {
    REQUIRE(ch.order.size() == 8);
    for (size_t i = 0; i < 8; ++i) {
      const Route r = t.RouteBetween(ch.order[i], ch.order[(i + 1) % 8]);
      CHECK(r.size() == 1);                                 // a direct NVLink
      CHECK(t.link_class()[r[0]] == LinkClass::kNvLink);
    }
  }
  const RingAnalysis a = AnalyzeRings(t, Cfg(8, 1), ParallelDim::kDp);
  CHECK_THAT(GBs(a.bus_bandwidth), WithinRel(150.0, 1e-9));
  // GPUs without an NVLink between them go through the host bridge (found by search).
  const Route via_host = t.RouteBetween(0, 5);
  CHECK(via_host.size() == 2);
  CHECK(t.link_class()[via_host[0]] == LinkClass::kPcie);
}

TEST_CASE("topology: builders cover single switch, NVL domains and three tiers", "[topology]") {
  ClusterSpec small = test::DgxH100(4);
  small.inter_node.fabric = InterNodeFabric::kSingleSwitch;
  const Topology s = Topology::Build(small);
  CHECK(s.CountVertices(VertexKind::kLeaf) == 1);
  CHECK(s.SwitchHops(s.RouteBetween(0, 31)) == 1);
  small.nodes = 16;   // 128 NICs on a 64-port switch
  CHECK_THROWS_AS(Topology::Build(small), InvalidInput);

  const Topology nvl = Topology::Build(test::Nvl72(2));
  CHECK(nvl.CountVertices(VertexKind::kNvSwitch) == 2);
  CHECK(nvl.RouteBetween(0, 71).size() == 2);   // inside the domain: GPU -> NVSwitch -> GPU
  CHECK(nvl.SwitchHops(nvl.RouteBetween(0, 72)) >= 1);

  ClusterSpec huge = test::DgxH100(2048);       // 16,384 GPUs, 2-tier asked: promoted to 3 tiers
  const Topology h = Topology::Build(huge);
  CHECK(h.shape().tiers == 3);
  CHECK(h.shape().promoted_to_3_tiers);
  CHECK(h.SwitchHops(h.RouteBetween(0, 16383 - 7)) == 5);
  CHECK_THAT(h.RouteLatency(h.RouteBetween(0, 16376)).si(),
             WithinRel((huge.inter_node.nic_latency + 5.0 * huge.inter_node.switch_latency).si(), 1e-9));
}

TEST_CASE("topology: Graphviz output names every vertex and cable", "[topology]") {
  const Topology t = Topology::Build(test::DgxH100(2));
  const std::string dot = t.ToDot();
  CHECK(dot.rfind("digraph", 0) == std::string::npos);
  CHECK(dot.find("graph G {") != std::string::npos);
  CHECK(dot.find("gpu15") != std::string::npos);
  CHECK(dot.find("nic1.7") != std::string::npos);
  CHECK(dot.find("leaf7") != std::string::npos);
  size_t edges = 0;
  for (size_t p = dot.find("--"); p != std::string::npos; p = dot.find("--", p + 2)) ++edges;
  CHECK(static_cast<int>(edges) == t.link_count() / 2);
}

TEST_CASE("topology: concurrent groups share NICs, and the link loads show it", "[topology]") {
  // DGX-1, tp=2: the two DP groups of a node use the same 4 NICs.
  const Topology t = Topology::Build(test::Dgx1(4));
  const ParallelConfig cfg = Cfg(16, 2);
  Placement pl(cfg, 32);
  std::vector<Flow> alone;
  AppendRingFlows(PlanRing(t, pl.Members(ParallelDim::kDp, 0)), 1e9, &alone);
  const LinkLoad one = ComputeLinkLoad(t, alone);
  const RingAnalysis both = AnalyzeRings(t, cfg, ParallelDim::kDp);
  CHECK_THAT(1e9 / one.bottleneck_seconds / 1e9, WithinRel(50.0, 1e-9));
  CHECK_THAT(GBs(both.bus_bandwidth), WithinRel(25.0, 1e-9));
  CHECK(t.link_class()[both.load.bottleneck_link] == LinkClass::kNic);
}

TEST_CASE("topology: irregular placements on NVL72 use the worst group's split", "[topology]") {
  // pp=9 stages 32 GPUs apart on 72-GPU domains: stages split 3/2/3/... over domains.
  ClusterSpec c = test::Nvl72(4);
  c.gpus_per_node = 72;
  c.nodes = 4;
  c.inter_node.nics_per_node = 72;
  c.inter_node.scalable_unit_nodes = 8;
  const ParallelConfig cfg = Cfg(8, 4, 9);
  const GroupPath p = ResolveGroupPath(c, cfg, ParallelDim::kPp);
  CHECK(p.ranks_per_node == 2);
  const RingAnalysis r = AnalyzeRings(Topology::Build(c), cfg, ParallelDim::kPp);
  CHECK_THAT(GBs(r.bus_bandwidth), WithinRel(GBs(p.ring_bandwidth), 1e-9));
}

TEST_CASE("topology: NCCL double binary tree spans every domain twice, interior in at most one tree", "[topology]") {
  for (int nodes : {1, 2, 3, 4, 5, 8, 13, 16, 31, 32}) {
    const Topology t = Topology::Build(test::DgxH100(nodes));
    std::vector<int> members(t.gpu_count());
    for (int i = 0; i < t.gpu_count(); ++i) members[i] = i;
    const TreePlan plan = PlanDoubleBinaryTree(t, members);
    REQUIRE(static_cast<int>(plan.leaders.size()) == nodes);
    std::vector<int> interior(nodes, 0);
    for (int tree = 0; tree < 2; ++tree) {
      int roots = 0;
      std::vector<int> children(nodes, 0);
      for (int r = 0; r < nodes; ++r) {
        const int p = plan.parent[tree][r];
        if (p < 0) { ++roots; continue; }
        ++children[p];
        // Walking up reaches the root: no cycles.
        int v = r, steps = 0;
        while (plan.parent[tree][v] >= 0 && steps <= nodes) { v = plan.parent[tree][v]; ++steps; }
        CHECK(steps <= nodes);
      }
      CHECK(roots == 1);
      for (int r = 0; r < nodes; ++r) {
        CHECK(children[r] <= 2);
        interior[r] += children[r] > 0;
      }
    }
    if (nodes % 2 == 0)
      for (int r = 0; r < nodes; ++r) CHECK(interior[r] <= 1);
    // Tree AllReduce traffic is conserved like any flow set.
    std::vector<Flow> flows;
    AppendTreeFlows(t, plan, 1e6, &flows);
    const LinkLoad load = ComputeLinkLoad(t, flows);
    CHECK_THAT(load.delivered_bytes, WithinRel(load.injected_bytes, 1e-12));
  }
}

TEST_CASE("topology: a 256-GPU ring crosses each node boundary once per channel, one channel per NIC", "[topology]") {
  const Topology t = Topology::Build(test::DgxH100(32));
  std::vector<int> all(256);
  for (int i = 0; i < 256; ++i) all[i] = i;
  const RingPlan plan = PlanRing(t, all);
  REQUIRE(plan.channels.size() == 8);
  std::set<int> rails;
  for (const RingChannel& ch : plan.channels) {
    rails.insert(ch.rail);
    REQUIRE(ch.order.size() == 256);
    int crossings = 0;
    for (size_t i = 0; i < 256; ++i) {
      const int a = ch.order[i], b = ch.order[(i + 1) % 256];
      if (a / 8 == b / 8) continue;
      ++crossings;
      CHECK(b % 8 == ch.rail);   // enters the next node on the channel's rail
    }
    CHECK(crossings == 32);
  }
  CHECK(rails.size() == 8);
  std::vector<Flow> flows;
  AppendRingFlows(plan, 8e9, &flows);
  const LinkLoad load = ComputeLinkLoad(t, flows);
  for (int l = 0; l < t.link_count(); ++l)
    if (t.link_class()[l] == LinkClass::kNic) CHECK_THAT(load.bytes[l], WithinRel(1e9, 1e-12));
}

TEST_CASE("topology: ring link weights give the ring's bandwidth to a single-flow solver", "[topology]") {
  const Topology t = Topology::Build(test::DgxH100(32));
  std::vector<int> all(256);
  for (int i = 0; i < 256; ++i) all[i] = i;
  double worst = 0;   // seconds per byte-per-rank at full link rates
  for (const auto& [link, weight] : RingLinkWeights(t, all)) worst = std::max(worst, weight / t.capacity_Bps()[link]);
  CHECK_THAT(1.0 / worst / 1e9, WithinRel(400.0, 1e-9));
}

TEST_CASE("topology: closed form matches the graph on random power-of-two configs and orders", "[topology]") {
  std::mt19937 rng(99);
  ClusterSpec plain = test::DgxH100(16);
  plain.inter_node.rail_optimized = false;
  ClusterSpec small_radix = test::DgxH100(32);
  small_radix.inter_node.switch_radix = 16;   // 8 down: one node per rail leaf group... 3 tiers
  small_radix.inter_node.scalable_unit_nodes = 4;
  small_radix.inter_node.tiers = 3;
  ClusterSpec over = test::DgxH100(64);
  over.inter_node.switch_radix = 48;          // 32 down, 16 up: 2:1
  over.inter_node.oversubscription = 2.0;
  ClusterSpec over_plain = over;
  over_plain.inter_node.rail_optimized = false;
  const std::vector<ClusterSpec> clusters = {test::DgxH100(4), test::DgxH100(16), test::DgxH100(64), plain,
                                             small_radix, test::Dgx1(4), over, over_plain};
  const char* orders[] = {"tp-cp-ep-dp-pp", "tp-pp-cp-ep-dp", "cp-tp-ep-dp-pp", "tp-cp-dp-ep-pp", "ep-tp-cp-dp-pp",
                          "pp-tp-cp-ep-dp"};
  int checked = 0;
  for (const ClusterSpec& c : clusters) {
    const Topology t = Topology::Build(c);
    const int world = t.gpu_count();
    for (int trial = 0; trial < 80; ++trial) {
      // Split log2(world) bits over dp, tp, pp, cp.
      int bits = 0;
      while ((1 << bits) < world) ++bits;
      int e[4] = {0, 0, 0, 0};
      for (int b = 0; b < bits; ++b) ++e[rng() % 4];
      ParallelConfig cfg = Cfg(1 << e[0], 1 << e[1], 1 << e[2], 1 << e[3]);
      cfg.ep = 1 << (rng() % (e[0] + 1));
      cfg.order = orders[rng() % 6];
      for (ParallelDim d : {ParallelDim::kTp, ParallelDim::kCp, ParallelDim::kEp, ParallelDim::kDp, ParallelDim::kPp}) {
        INFO(c.name << " nodes " << c.nodes << " dp=" << cfg.dp << " tp=" << cfg.tp << " pp=" << cfg.pp
                    << " cp=" << cfg.cp << " ep=" << cfg.ep << " order " << cfg.order << " dim " << ToString(d));
        const GroupPath p = ResolveGroupPath(c, cfg, d);
        if (p.ranks == 1) continue;
        const RingAnalysis r = AnalyzeRings(t, cfg, d);
        CHECK(r.nodes == p.nodes);
        CHECK(r.max_switch_hops == p.max_switch_hops);
        CHECK_THAT(GBs(r.bus_bandwidth), WithinRel(GBs(p.ring_bandwidth), 1e-9));
        ++checked;
      }
    }
  }
  CHECK(checked > 100);
}
