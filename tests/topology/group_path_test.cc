#include <catch2/catch.hpp>

#include "core/error.h"
#include "test_clusters.h"
#include "topology/group_path.h"
#include "topology/placement.h"

using namespace parasim;
using Catch::Matchers::WithinRel;

namespace {
ParallelConfig Cfg(int dp, int tp, int pp = 1, int cp = 1, int ep = 1) {
  ParallelConfig c;
  c.dp = dp; c.tp = tp; c.pp = pp; c.cp = cp; c.ep = ep;
  return c;
}
double GBs(BytesPerSecond b) { return b.si() / 1e9; }
}  // namespace

TEST_CASE("topology: DGX H100 x32, ring over all 256 GPUs is bound by the node's NIC aggregate", "[topology]") {
  const GroupPath p = ResolveGroupPath(test::DgxH100(32), Cfg(256, 1), ParallelDim::kDp);
  CHECK(p.ranks == 256);
  CHECK(p.nodes == 32);
  CHECK(p.ranks_per_node == 8);
  CHECK(p.crosses_nodes);
  CHECK_FALSE(p.single_rail);
  CHECK(p.groups_sharing_node == 1);
  CHECK(p.max_switch_hops == 1);            // 32 nodes = one scalable unit: rails stay on their leaf
  CHECK_THAT(GBs(p.inter_bandwidth), WithinRel(400.0, 1e-12));
  CHECK_THAT(GBs(p.intra_bandwidth), WithinRel(450.0, 1e-12));
  CHECK_THAT(GBs(p.ring_bandwidth), WithinRel(400.0, 1e-12));
  CHECK(p.bottleneck_class == LinkClass::kNic);
  CHECK_FALSE(p.nvls_capable);
}

TEST_CASE("topology: one GPU per node on one rail is bound by that GPU's NIC", "[topology]") {
  const GroupPath p = ResolveGroupPath(test::DgxH100(32), Cfg(32, 8), ParallelDim::kDp);
  CHECK(p.ranks_per_node == 1);
  CHECK(p.single_rail);
  CHECK(p.groups_sharing_node == 8);
  CHECK_THAT(GBs(p.ring_bandwidth), WithinRel(50.0, 1e-12));
  CHECK(p.bottleneck_class == LinkClass::kNic);
}

TEST_CASE("topology: 8-GPU TP ring inside a node runs at NVLink speed", "[topology]") {
  const GroupPath p = ResolveGroupPath(test::DgxH100(32), Cfg(32, 8), ParallelDim::kTp);
  CHECK_FALSE(p.crosses_nodes);
  CHECK(p.nodes == 1);
  CHECK_THAT(GBs(p.ring_bandwidth), WithinRel(450.0, 1e-12));
  CHECK(p.bottleneck_class == LinkClass::kNvLink);
  CHECK(p.nvls_capable);
  CHECK(p.max_switch_hops == 0);
}

TEST_CASE("topology: groups sharing a node split its NICs", "[topology]") {
  // tp=2: each DP group has 4 members per node, owning 4 of the 8 NICs.
  const GroupPath p = ResolveGroupPath(test::DgxH100(32), Cfg(128, 2), ParallelDim::kDp);
  CHECK(p.ranks_per_node == 4);
  CHECK(p.groups_sharing_node == 2);
  CHECK_THAT(GBs(p.inter_bandwidth), WithinRel(200.0, 1e-12));
  // DGX-1: two GPUs per NIC, 4 NICs; tp=8 DP group: 8 groups share 4 NICs.
  const GroupPath v = ResolveGroupPath(test::Dgx1(4), Cfg(4, 8), ParallelDim::kDp);
  CHECK_THAT(GBs(v.inter_bandwidth), WithinRel(12.5 / 2, 1e-12));
}

TEST_CASE("topology: V100 hybrid cube mesh ring uses three edge-disjoint NVLink cycles", "[topology]") {
  const GroupPath p = ResolveGroupPath(test::Dgx1(1), Cfg(8, 1), ParallelDim::kDp);
  CHECK_THAT(GBs(p.ring_bandwidth), WithinRel(150.0, 1e-12));   // 6 directed rings x 25 GB/s
  const GroupPath q = ResolveGroupPath(test::Dgx1(1), Cfg(2, 4), ParallelDim::kTp);   // GPUs 0-3
  CHECK_THAT(GBs(q.ring_bandwidth), WithinRel(100.0, 1e-12));   // two cycles on the doubled quad
  const GroupPath r = ResolveGroupPath(test::Dgx1(1), Cfg(4, 2), ParallelDim::kDp);   // GPUs 0,2,4,6
  CHECK_THAT(GBs(r.ring_bandwidth), WithinRel(50.0, 1e-12));    // one cycle 0-2-6-4
  CHECK_FALSE(r.nvls_capable);
}

TEST_CASE("topology: pipeline groups spread over scalable units cross the spine", "[topology]") {
  // 128 nodes = 4 SUs; pp=4 outermost: stages 32 nodes apart, every hop leaves the SU.
  const GroupPath p = ResolveGroupPath(test::DgxH100(128), Cfg(32, 8, 4), ParallelDim::kPp);
  CHECK(p.single_rail);
  CHECK(p.max_switch_hops == 3);
  CHECK_THAT(GBs(p.ring_bandwidth), WithinRel(50.0, 1e-12));
  ClusterSpec over = test::DgxH100(128);
  over.inter_node.switch_radix = 48;            // 32 down, 16 up: 2:1
  over.inter_node.oversubscription = 2.0;
  const GroupPath q = ResolveGroupPath(over, Cfg(32, 8, 4), ParallelDim::kPp);
  CHECK_THAT(GBs(q.ring_bandwidth), WithinRel(25.0, 1e-12));
  CHECK(q.bottleneck_class == LinkClass::kLeafSpine);
  CHECK_THAT(q.inter_hop_latency.si(), WithinRel((over.inter_node.nic_latency + 3.0 * over.inter_node.switch_latency).si(), 1e-12));
}

TEST_CASE("topology: NVL72 keeps 72-GPU groups inside the NVLink domain", "[topology]") {
  const ClusterSpec c = test::Nvl72(2);
  const GroupPath tp = ResolveGroupPath(c, Cfg(2, 72), ParallelDim::kTp);
  CHECK_FALSE(tp.crosses_nodes);
  CHECK(tp.nvls_capable);
  CHECK_THAT(GBs(tp.ring_bandwidth), WithinRel(900.0, 1e-12));
  const GroupPath dp = ResolveGroupPath(c, Cfg(2, 72), ParallelDim::kDp);
  CHECK(dp.crosses_nodes);
  CHECK(dp.nodes == 2);
  CHECK(dp.single_rail);
  CHECK_THAT(GBs(dp.ring_bandwidth), WithinRel(50.0, 1e-12));
}

TEST_CASE("topology: sub-groups and degenerate groups", "[topology]") {
  // hsdp:8 on 256 GPUs: shard group of 8 stays in a node, replica group crosses.
  const ClusterSpec c = test::DgxH100(32);
  const GroupPath shard = ResolveGroupPath(c, Cfg(256, 1), ParallelDim::kDp, SubGroup{8, 1});
  CHECK_FALSE(shard.crosses_nodes);
  CHECK(shard.ranks == 8);
  const GroupPath rep = ResolveGroupPath(c, Cfg(256, 1), ParallelDim::kDp, SubGroup{32, 8});
  CHECK(rep.ranks == 32);
  CHECK(rep.single_rail);
  CHECK_THAT(GBs(rep.ring_bandwidth), WithinRel(50.0, 1e-12));
  const GroupPath one = ResolveGroupPath(c, Cfg(256, 1), ParallelDim::kTp);
  CHECK(one.ranks == 1);
  CHECK_FALSE(one.crosses_nodes);
  CHECK(one.ring_bandwidth.si() > 0);
}

TEST_CASE("topology: placement checks world size and order", "[topology]") {
  CHECK_THROWS_AS(ResolveGroupPath(test::DgxH100(2), Cfg(8, 1), ParallelDim::kDp), InvalidInput);
  ParallelConfig bad = Cfg(16, 1);
  bad.order = "tp-dp-xx";
  CHECK_THROWS_AS(ResolveGroupPath(test::DgxH100(2), bad, ParallelDim::kDp), InvalidInput);
  ParallelConfig ep = Cfg(16, 1, 1, 1, 3);
  CHECK_THROWS_AS(ResolveGroupPath(test::DgxH100(2), ep, ParallelDim::kEp), InvalidInput);
}

TEST_CASE("topology: placement follows the order, innermost first", "[topology]") {
  ParallelConfig c = Cfg(4, 2, 2);   // 16 ranks: tp inner, dp, pp outer
  Placement pl(c, 16);
  CHECK(pl.Members(ParallelDim::kTp, 0) == std::vector<int>{0, 1});
  CHECK(pl.Members(ParallelDim::kDp, 0) == std::vector<int>{0, 2, 4, 6});
  CHECK(pl.Members(ParallelDim::kPp, 1) == std::vector<int>{1, 9});
  CHECK(pl.GroupCount(ParallelDim::kDp) == 4);
  c.order = "dp-tp-pp";
  Placement p2(c, 16);
  CHECK(p2.Members(ParallelDim::kDp, 0) == std::vector<int>{0, 1, 2, 3});
  CHECK(p2.Members(ParallelDim::kTp, 0) == std::vector<int>{0, 4});
  // ep splits dp: ep group = consecutive ep ranks of the dp group.
  ParallelConfig m = Cfg(8, 2, 1, 1, 4);
  Placement p3(m, 16);
  CHECK(p3.Members(ParallelDim::kEp, 0) == std::vector<int>{0, 2, 4, 6});
  CHECK(p3.Members(ParallelDim::kDp, 0) == std::vector<int>{0, 2, 4, 6, 8, 10, 12, 14});
  for (ParallelDim d : {ParallelDim::kTp, ParallelDim::kDp, ParallelDim::kEp, ParallelDim::kPp}) {
    std::vector<int> seen(16, 0);
    for (const auto& g : p3.AllGroups(d))
      for (int r : g) ++seen[r];
    CHECK(std::count(seen.begin(), seen.end(), 1) == 16);
  }
}

TEST_CASE("topology: a GPU profile without NVLink bandwidth is bad input, never an infinite time", "[topology]") {
  ClusterSpec c = test::DgxH100(1);
  c.gpu.nvlink_bandwidth = BytesPerSecond(0);
  CHECK_THROWS_AS(ResolveGroupPath(c, Cfg(1, 8), ParallelDim::kTp), InvalidInput);
}
