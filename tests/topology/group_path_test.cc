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

TEST_CASE("topology: the ends of a group are its first and last member, one pair per group", "[topology]") {
  const ParallelConfig c = Cfg(2, 2, 4);   // 16 ranks: tp stride 1, dp 2, pp 4
  Placement pl(c, 16);
  CHECK(pl.Members(ParallelDim::kPp, 1) == std::vector<int>{1, 5, 9, 13});
  CHECK(pl.Members(ParallelDim::kPp, 1, GroupEnds()) == std::vector<int>{1, 13});
  CHECK(pl.GroupCount(ParallelDim::kPp, GroupEnds()) == 4);
  const auto pairs = pl.AllGroups(ParallelDim::kPp, GroupEnds());
  REQUIRE(pairs.size() == 4);
  std::vector<int> seen(16, 0);
  for (size_t g = 0; g < pairs.size(); ++g) {
    CHECK(pairs[g] == std::vector<int>{static_cast<int>(g), static_cast<int>(g) + 12});
    for (int r : pairs[g]) ++seen[r];
  }
  // Stages 1 and 2 (ranks 4-11) are in no pair.
  for (int r = 0; r < 16; ++r) CHECK(seen[r] == (r < 4 || r >= 12 ? 1 : 0));
  CHECK(GroupMembersAt(LayoutOf(c, ParallelDim::kPp, GroupEnds()), 2) == std::vector<int>{2, 14});
  // A dp group of two factors (dp inside ep): first and last of all of them.
  const ParallelConfig e = Cfg(8, 2, 1, 1, 4);
  CHECK(Placement(e, 16).Members(ParallelDim::kDp, 0, GroupEnds()) == std::vector<int>{0, 14});
  // pp = 3, pp = 2 (the whole group) and pp = 1 (the member alone).
  CHECK(Placement(Cfg(2, 1, 3), 6).AllGroups(ParallelDim::kPp, GroupEnds()) ==
        std::vector<std::vector<int>>{{0, 4}, {1, 5}});
  Placement two(Cfg(4, 1, 2), 8);
  CHECK(two.AllGroups(ParallelDim::kPp, GroupEnds()) == two.AllGroups(ParallelDim::kPp));
  Placement one(Cfg(4, 1, 1), 4);
  CHECK(one.AllGroups(ParallelDim::kPp, GroupEnds()) == one.AllGroups(ParallelDim::kPp));
  CHECK(one.GroupCount(ParallelDim::kPp, GroupEnds()) == 4);
}

TEST_CASE("topology: the ends' path is the whole group's with two ranks and their share of the NICs", "[topology]") {
  // pp = 4 over 2 nodes, two stages per node: the pair has one member per
  // node, each with its own GPU's share of the NICs where the group's two
  // members per node shared two; at pp = 2 it is the whole group's path.
  const ClusterSpec cl = test::DgxH100(2);
  const GroupPath whole = ResolveGroupPath(cl, Cfg(4, 1, 4), ParallelDim::kPp);
  const GroupPath ends = ResolveGroupPath(cl, Cfg(4, 1, 4), ParallelDim::kPp, GroupEnds());
  REQUIRE(whole.ranks_per_node == 2);
  CHECK(ends.ranks == 2);
  CHECK(ends.nodes == 2);
  CHECK(ends.ranks_per_node == 1);
  CHECK(ends.groups_sharing_node == 2 * whole.groups_sharing_node);
  CHECK_THAT(GBs(ends.inter_bandwidth), WithinRel(GBs(whole.inter_bandwidth) / 2, 1e-12));
  CHECK_THAT(GBs(ends.ring_bandwidth), WithinRel(GBs(ends.inter_bandwidth), 1e-12));
  const GroupPath pp2 = ResolveGroupPath(cl, Cfg(8, 1, 2), ParallelDim::kPp);
  const GroupPath pp2_ends = ResolveGroupPath(cl, Cfg(8, 1, 2), ParallelDim::kPp, GroupEnds());
  CHECK(pp2_ends.ranks == pp2.ranks);
  CHECK(pp2_ends.nodes == pp2.nodes);
  CHECK(pp2_ends.groups_sharing_node == pp2.groups_sharing_node);
  CHECK_THAT(GBs(pp2_ends.ring_bandwidth), WithinRel(GBs(pp2.ring_bandwidth), 1e-12));
}

TEST_CASE("topology: a GPU profile without NVLink bandwidth is bad input, never an infinite time", "[topology]") {
  ClusterSpec c = test::DgxH100(1);
  c.gpu.nvlink_bandwidth = BytesPerSecond(0);
  CHECK_THROWS_AS(ResolveGroupPath(c, Cfg(1, 8), ParallelDim::kTp), InvalidInput);
}
