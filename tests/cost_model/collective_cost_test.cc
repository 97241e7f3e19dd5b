#include "cost_model/collective_cost.h"

#include <cmath>
#include <vector>

#include <catch2/catch.hpp>

#include "core/error.h"
#include "core/loaders.h"
#include "core/parallel_config.h"
#include "tests/cost_model/collective_test_util.h"
#include "topology/group_path.h"

namespace parasim {
namespace {

using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;
using testing::DgxGroup;
using testing::HopperRingTree;
using testing::RailGroup;

constexpr CollectiveOp kAllOps[] = {CollectiveOp::kAllReduce, CollectiveOp::kAllGather, CollectiveOp::kReduceScatter,
                                    CollectiveOp::kBroadcast, CollectiveOp::kReduce,    CollectiveOp::kAllToAll,
                                    CollectiveOp::kSendRecv};
constexpr CollectiveAlgo kAllAlgos[] = {CollectiveAlgo::kRing,    CollectiveAlgo::kTree, CollectiveAlgo::kNvls,
                                        CollectiveAlgo::kNvlsTree, CollectiveAlgo::kCollNet, CollectiveAlgo::kPat,
                                        CollectiveAlgo::kDirect};
constexpr Protocol kAllProtos[] = {Protocol::kLL, Protocol::kLL128, Protocol::kSimple};

NcclFeatures Everything(int cc = 90) {
  NcclFeatures f;
  f.nvls = f.nvls_tree = f.pat = f.collnet = true;
  f.compute_capability = cc;
  return f;
}

CollectiveModelParams NoLaunch() {
  CollectiveModelParams p;
  p.launch_per_gpu = Seconds(0);
  return p;
}

// Shapes every property test runs over: one node, a few nodes, many nodes,
// one rank per node, a PCIe box, a partial node, SHARP fabric.
std::vector<GroupPath> Shapes() {
  std::vector<GroupPath> v = {DgxGroup(1), DgxGroup(2), DgxGroup(3), DgxGroup(16), DgxGroup(512), RailGroup(2),
                              RailGroup(64)};
  GroupPath pcie = DgxGroup(1, 64, 400);
  pcie.bottleneck_class = LinkClass::kPcie;
  pcie.nvls_capable = false;
  v.push_back(pcie);
  GroupPath half = DgxGroup(4, 450, 200, 4);   // 4 ranks per node, half the NICs
  v.push_back(half);
  GroupPath sharp = DgxGroup(8);
  sharp.sharp_capable = true;
  v.push_back(sharp);
  GroupPath nvl72 = DgxGroup(8, 900, 72 * 50.0, 72);   // racks whose NICs outrun one GPU's NVLink
  nvl72.ring_bandwidth = GBps(900);
  nvl72.bottleneck_class = LinkClass::kNvLink;
  v.push_back(nvl72);
  return v;
}

std::vector<double> Sizes() {
  std::vector<double> s;
  for (double b = 1; b <= 64e9; b *= 1.41421356) s.push_back(std::floor(b));
  return s;
}

TEST_CASE("cost_model: collective bus bandwidth follows nccl-tests", "[cost_model]") {
  CHECK_THAT(BusBandwidthFactor(CollectiveOp::kAllReduce, 8), WithinRel(2.0 * 7 / 8, 1e-12));
  CHECK_THAT(BusBandwidthFactor(CollectiveOp::kAllGather, 8), WithinRel(7.0 / 8, 1e-12));
  CHECK_THAT(BusBandwidthFactor(CollectiveOp::kReduceScatter, 32), WithinRel(31.0 / 32, 1e-12));
  CHECK_THAT(BusBandwidthFactor(CollectiveOp::kAllToAll, 16), WithinRel(15.0 / 16, 1e-12));
  CHECK(BusBandwidthFactor(CollectiveOp::kSendRecv, 64) == 1.0);
  CHECK(BusBandwidthFactor(CollectiveOp::kBroadcast, 64) == 1.0);
  CHECK(BusBandwidthFactor(CollectiveOp::kReduce, 64) == 1.0);
  // And every estimate reports busbw = algbw × factor, algbw = size / time.
  for (CollectiveOp op : kAllOps) {
    CollectiveCost c = EstimateCollective(op, MB(64), DgxGroup(4), Everything());
    CHECK_THAT(c.algbw.si(), WithinRel(64e6 / c.time.si(), 1e-12));
    CHECK_THAT(c.busbw.si(), WithinRel(c.algbw.si() * BusBandwidthFactor(op, 32), 1e-12));
  }
}

TEST_CASE("cost_model: a collective over one rank or of zero bytes costs nothing", "[cost_model]") {
  GroupPath one;   // ranks = 1
  for (CollectiveOp op : kAllOps) {
    CollectiveCost c = EstimateCollective(op, GB(1), one, Everything());
    CHECK(c.time.si() == 0.0);
    CHECK(c.busbw.si() == 0.0);
    CHECK(c.algbw.si() == 0.0);
    CHECK(EstimateCollective(op, Bytes(0), DgxGroup(4), Everything()).time.si() == 0.0);
  }
}

TEST_CASE("cost_model: collective time never decreases with size", "[cost_model]") {
  for (const NcclFeatures& f : {HopperRingTree(), Everything(), Everything(100), Everything(80)}) {
    for (const GroupPath& p : Shapes()) {
      for (CollectiveOp op : kAllOps) {
        double prev = 0;
        for (double s : Sizes()) {
          double t = EstimateCollective(op, Bytes(s), p, f).time.si();
          INFO(ToString(op) << " ranks " << p.ranks << " size " << s);
          REQUIRE(std::isfinite(t));
          REQUIRE(t >= prev);
          prev = t;
        }
      }
    }
  }
}

TEST_CASE("cost_model: more bandwidth is never slower", "[cost_model]") {
  for (const GroupPath& p : Shapes()) {
    GroupPath more_intra = p, more_inter = p;
    more_intra.intra_bandwidth = p.intra_bandwidth * 1.5;
    more_inter.inter_bandwidth = p.inter_bandwidth * 1.5;
    for (CollectiveOp op : kAllOps) {
      for (double s : {1e3, 1e6, 64e6, 4e9}) {
        INFO(ToString(op) << " ranks " << p.ranks << " size " << s);
        double t = EstimateCollective(op, Bytes(s), p, Everything()).time.si();
        CHECK(EstimateCollective(op, Bytes(s), more_intra, Everything()).time.si() <= t);
        CHECK(EstimateCollective(op, Bytes(s), more_inter, Everything()).time.si() <= t);
      }
    }
  }
}

TEST_CASE("cost_model: bus bandwidth never exceeds the raw bottleneck", "[cost_model]") {
  // Without in-network reduction every algorithm moves at least the ring's
  // bytes over the bottleneck link, except a tree over two nodes, whose NICs
  // carry S instead of 2S (nccl-tests #160: "on 2 nodes tree mixes NVLink
  // and NIC bandwidth"): bounded by twice the raw bottleneck.
  for (const GroupPath& p : Shapes()) {
    for (CollectiveOp op : kAllOps) {
      for (double s : {1e6, 256e6, 16e9}) {
        CollectiveCost c = EstimateCollective(op, Bytes(s), p, HopperRingTree());
        double raw = p.ring_bandwidth.si();
        if (op == CollectiveOp::kSendRecv && p.crosses_nodes)
          raw = std::min(p.intra_bandwidth.si(), p.inter_bandwidth.si() / p.ranks_per_node);
        double bound = (c.algo == CollectiveAlgo::kTree && p.nodes == 2) ? 2 * raw : raw;
        INFO(ToString(op) << " " << ToString(c.algo) << " ranks " << p.ranks << " size " << s);
        CHECK(c.busbw.si() <= bound);
      }
    }
  }
  // NVLS reduces in the switch: its bus bandwidth may pass NVLink's rate
  // (nccl-tests #212), but its algorithm bandwidth cannot.
  CollectiveCost nvls = EstimateCollective(CollectiveOp::kAllReduce, GB(8), DgxGroup(1), Everything());
  CHECK(nvls.algo == CollectiveAlgo::kNvls);
  CHECK(nvls.busbw.si() > DgxGroup(1).intra_bandwidth.si());
  CHECK(nvls.algbw.si() < DgxGroup(1).intra_bandwidth.si());
}

TEST_CASE("cost_model: NCCL's single-node latencies are the floor of the model", "[cost_model]") {
  // hardware-and-collectives.md §3.2 worked example, 1 node × 8 H100 AllReduce.
  struct Case {
    CollectiveAlgo algo;
    Protocol proto;
    double us;
  };
  const Case cases[] = {{CollectiveAlgo::kRing, Protocol::kLL, 15.0},    {CollectiveAlgo::kRing, Protocol::kLL128, 40.6},
                        {CollectiveAlgo::kRing, Protocol::kSimple, 56.0}, {CollectiveAlgo::kTree, Protocol::kLL, 15.2},
                        {CollectiveAlgo::kTree, Protocol::kLL128, 31.5},  {CollectiveAlgo::kTree, Protocol::kSimple, 64.4},
                        {CollectiveAlgo::kNvls, Protocol::kSimple, 25.0}};
  // A physical hop slower than NCCL's constant would raise the floor: none here.
  GroupPath g = DgxGroup(1);
  g.intra_hop_latency = Microseconds(0.3);
  for (const Case& c : cases) {
    auto r = EstimateCollectiveWith(CollectiveOp::kAllReduce, KB(1), g, Everything(), NoLaunch(), c.algo, c.proto);
    REQUIRE(r.has_value());
    INFO(ToString(c.algo) << "/" << ToString(c.proto));
    CHECK_THAT(r->latency.si() * 1e6, WithinRel(c.us, 1e-9));
  }
}

TEST_CASE("cost_model: ring AllGather on one node is alpha-beta with NCCL's link model", "[cost_model]") {
  // Simple: base 8.4 µs + 7 steps × 3.4 µs; bus bandwidth 18 links × 20.6 GB/s
  // (NCCL's sm90 per-link figure) = 450 GB/s × 20.6/25.
  double s = 1e9;
  auto r = EstimateCollectiveWith(CollectiveOp::kAllGather, Bytes(s), DgxGroup(1), HopperRingTree(), NoLaunch(),
                                  CollectiveAlgo::kRing, Protocol::kSimple);
  REQUIRE(r);
  double expect = 8.4e-6 + 7 * 3.4e-6 + (7.0 / 8.0) * s / 370.8e9;
  CHECK_THAT(r->time.si(), WithinRel(expect, 1e-9));
  CHECK_THAT(r->busbw.si(), WithinRel((7.0 / 8.0) * s / expect, 1e-9));
  // LL halves the bandwidth and caps it at Hopper's 141 GB/s; LL128 keeps 0.92.
  auto ll = EstimateCollectiveWith(CollectiveOp::kAllGather, Bytes(s), DgxGroup(1), HopperRingTree(), NoLaunch(),
                                   CollectiveAlgo::kRing, Protocol::kLL);
  auto ll128 = EstimateCollectiveWith(CollectiveOp::kAllGather, Bytes(s), DgxGroup(1), HopperRingTree(), NoLaunch(),
                                      CollectiveAlgo::kRing, Protocol::kLL128);
  CHECK_THAT(ll->time.si() - ll->latency.si(), WithinRel((7.0 / 8.0) * s / 141e9, 1e-9));
  CHECK_THAT(ll128->time.si() - ll128->latency.si(), WithinRel((7.0 / 8.0) * s / (0.92 * 370.8e9), 1e-9));
}

TEST_CASE("cost_model: multi-node ring steps wait for the slowest network hop", "[cost_model]") {
  // 16 nodes × 8: every one of the 127 AllGather steps pays NCCL's NET Simple
  // 14 µs + the physical hop + σ·sqrt(2 ln 16); bandwidth = NICs × 0.96 × pace.
  CollectiveModelParams p = NoLaunch();
  GroupPath g = DgxGroup(16);
  double s = 1e9;
  auto r = EstimateCollectiveWith(CollectiveOp::kAllGather, Bytes(s), g, HopperRingTree(), p, CollectiveAlgo::kRing,
                                  Protocol::kSimple);
  REQUIRE(r);
  double x = std::sqrt(2 * std::log(16.0));
  double hop = 14e-6 + g.inter_hop_latency.si() + p.hop_latency_jitter.si() * x;
  double bw = 400e9 * p.nic_efficiency * (1 - p.link_bandwidth_jitter * x);
  // + the network chunk cost on each lock-step step (chunk pipeline).
  const double chunk = p.net_chunk_latency.si();
  CHECK_THAT(r->latency.si(), WithinRel(8.4e-6 + 127 * (hop + chunk), 1e-9));
  CHECK_THAT(r->time.si(), WithinRel(8.4e-6 + 127 * (hop + chunk) + (127.0 / 128.0) * s / bw, 1e-9));
  // AllReduce: 254 steps, and NCCL's 1.4× ring plateau on its own constants.
  auto ar = EstimateCollectiveWith(CollectiveOp::kAllReduce, Bytes(s), g, HopperRingTree(), p, CollectiveAlgo::kRing,
                                   Protocol::kSimple);
  double nccl_part = 1.4 * (8.4e-6 + 254 * 14e-6);
  CHECK_THAT(ar->latency.si(), WithinRel(nccl_part + 254 * (hop - 14e-6 + chunk), 1e-9));
}

TEST_CASE("cost_model: tree AllReduce latency grows with log2 of the nodes", "[cost_model]") {
  CollectiveModelParams p = NoLaunch();
  for (int nodes : {4, 64, 512}) {
    GroupPath g = DgxGroup(nodes);
    auto t = EstimateCollectiveWith(CollectiveOp::kAllReduce, MB(1), g, HopperRingTree(), p, CollectiveAlgo::kTree,
                                    Protocol::kSimple);
    REQUIRE(t);
    double hop = 14e-6 + g.inter_hop_latency.si() +
                 p.hop_latency_jitter.si() * std::sqrt(2 * std::log(static_cast<double>(nodes)));
    // + the chunk pipeline's fill: (min chunks + D - 1) chunk costs, D = 2 log2 N + 2.
    const double depth = 2 * std::log2(nodes) + 2;
    double expect = 8.4e-6 + 2 * (7 * 4.0e-6 + std::log2(nodes) * hop) +
                    (p.min_pipeline_chunks + depth - 1) * p.net_chunk_latency.si();
    CHECK_THAT(t->latency.si(), WithinRel(expect, 1e-9));
  }
}

TEST_CASE("cost_model: NVLS AllReduce moves S(1+1/g) per NVLink port", "[cost_model]") {
  auto r = EstimateCollectiveWith(CollectiveOp::kAllReduce, GB(64), DgxGroup(1), Everything(), NoLaunch(),
                                  CollectiveAlgo::kNvls, Protocol::kSimple);
  REQUIRE(r);
  double algbw = 370.8e9 * 0.85 * 8.0 / 9.0;   // NCCL link model × Hopper NVLS efficiency
  CHECK_THAT(r->algbw.si(), WithinRel(algbw, 1e-3));
  auto b200 = EstimateCollectiveWith(CollectiveOp::kAllReduce, GB(64), DgxGroup(1, 900), Everything(100), NoLaunch(),
                                     CollectiveAlgo::kNvls, Protocol::kSimple);
  CHECK_THAT(b200->algbw.si(), WithinRel(900e9 * 40.1 / 50 * 0.74 * 8.0 / 9.0, 1e-3));
  // Only Simple, only with the feature and an NVLS-capable switch, never on Ampere.
  CHECK_FALSE(EstimateCollectiveWith(CollectiveOp::kAllReduce, GB(1), DgxGroup(1), Everything(), NoLaunch(),
                                     CollectiveAlgo::kNvls, Protocol::kLL));
  CHECK_FALSE(EstimateCollectiveWith(CollectiveOp::kAllReduce, GB(1), DgxGroup(1), HopperRingTree(), NoLaunch(),
                                     CollectiveAlgo::kNvls, Protocol::kSimple));
  CHECK_FALSE(EstimateCollectiveWith(CollectiveOp::kAllReduce, GB(1), DgxGroup(1), Everything(80), NoLaunch(),
                                     CollectiveAlgo::kNvls, Protocol::kSimple));
}

TEST_CASE("cost_model: algorithms are enabled as NCCL enables them", "[cost_model]") {
  NcclFeatures all = Everything();
  auto with = [&](CollectiveOp op, const GroupPath& g, const NcclFeatures& f, CollectiveAlgo a) {
    return EstimateCollectiveWith(op, MB(64), g, f, CollectiveModelParams{}, a, Protocol::kSimple).has_value();
  };
  // Tree is AllReduce-only; the paper's stack has AllGather/ReduceScatter ring-only.
  CHECK(with(CollectiveOp::kAllReduce, DgxGroup(4), all, CollectiveAlgo::kTree));
  CHECK_FALSE(with(CollectiveOp::kAllGather, DgxGroup(4), all, CollectiveAlgo::kTree));
  for (CollectiveAlgo a : kAllAlgos) {
    bool ok = with(CollectiveOp::kAllGather, DgxGroup(64), HopperRingTree(), a);
    CHECK(ok == (a == CollectiveAlgo::kRing));
  }
  // PAT: one GPU per node only.
  CHECK(with(CollectiveOp::kAllGather, RailGroup(64), all, CollectiveAlgo::kPat));
  CHECK_FALSE(with(CollectiveOp::kAllGather, DgxGroup(64), all, CollectiveAlgo::kPat));
  // CollNet needs SHARP on the fabric and the feature; NVLSTree needs nodes > 1.
  GroupPath sharp = DgxGroup(8);
  sharp.sharp_capable = true;
  CHECK(with(CollectiveOp::kAllReduce, sharp, all, CollectiveAlgo::kCollNet));
  CHECK_FALSE(with(CollectiveOp::kAllReduce, DgxGroup(8), all, CollectiveAlgo::kCollNet));
  CHECK(with(CollectiveOp::kAllReduce, DgxGroup(8), all, CollectiveAlgo::kNvlsTree));
  CHECK_FALSE(with(CollectiveOp::kAllReduce, DgxGroup(1), all, CollectiveAlgo::kNvlsTree));
  // Multi-node NVLS only with SHARP (CollNet plugin), and only for AllReduce.
  CHECK(with(CollectiveOp::kAllReduce, sharp, all, CollectiveAlgo::kNvls));
  CHECK_FALSE(with(CollectiveOp::kAllReduce, DgxGroup(8), all, CollectiveAlgo::kNvls));
  CHECK_FALSE(with(CollectiveOp::kAllGather, sharp, all, CollectiveAlgo::kNvls));
  // Point-to-point ops are direct only.
  CHECK(with(CollectiveOp::kAllToAll, DgxGroup(8), all, CollectiveAlgo::kDirect));
  CHECK_FALSE(with(CollectiveOp::kAllToAll, DgxGroup(8), all, CollectiveAlgo::kRing));
  CHECK_FALSE(with(CollectiveOp::kAllReduce, DgxGroup(8), all, CollectiveAlgo::kDirect));
  // No LL128 when the stack turns it off.
  NcclFeatures no128 = HopperRingTree();
  no128.ll128 = false;
  for (double s : Sizes()) CHECK(EstimateCollective(CollectiveOp::kAllReduce, Bytes(s), DgxGroup(8), no128).protocol !=
                                 Protocol::kLL128);
}

TEST_CASE("cost_model: NCCL's choice is the fastest enabled pair", "[cost_model]") {
  for (const GroupPath& g : Shapes()) {
    for (CollectiveOp op : kAllOps) {
      for (double s : {8.0, 65536.0, 16e6, 4e9}) {
        CollectiveCost best = EstimateCollective(op, Bytes(s), g, Everything());
        for (CollectiveAlgo a : kAllAlgos)
          for (Protocol pr : kAllProtos)
            if (auto c = EstimateCollectiveWith(op, Bytes(s), g, Everything(), CollectiveModelParams{}, a, pr))
              CHECK(best.time.si() <= c->time.si());
        auto same = EstimateCollectiveWith(op, Bytes(s), g, Everything(), CollectiveModelParams{}, best.algo,
                                           best.protocol);
        REQUIRE(same);
        CHECK(same->time.si() == best.time.si());
      }
    }
  }
  // Latency-bound sizes pick LL; bandwidth-bound sizes pick Simple.
  CHECK(EstimateCollective(CollectiveOp::kAllReduce, Bytes(1024), DgxGroup(1), HopperRingTree()).protocol ==
        Protocol::kLL);
  CHECK(EstimateCollective(CollectiveOp::kAllReduce, GB(4), DgxGroup(1), HopperRingTree()).protocol ==
        Protocol::kSimple);
}

TEST_CASE("cost_model: AllToAll across nodes is bound by the node's NIC share", "[cost_model]") {
  CollectiveModelParams p = NoLaunch();
  GroupPath g = DgxGroup(4);   // n = 32, g = 8
  double s = 8e9;
  CollectiveCost c = EstimateCollective(CollectiveOp::kAllToAll, Bytes(s), g, HopperRingTree(), p);
  double pace = 1 - p.link_bandwidth_jitter * std::sqrt(2 * std::log(4.0));
  double t_net = 8.0 * (32 - 8) / 32 * s / (400e9 * p.nic_efficiency * pace);
  CHECK_THAT(c.time.si() - c.latency.si(), WithinRel(t_net, 1e-9));
  // One node: NVLink, (g-1)/n of the buffer leaves each rank.
  CollectiveCost one = EstimateCollective(CollectiveOp::kAllToAll, Bytes(s), DgxGroup(1), HopperRingTree(), p);
  CHECK_THAT(one.time.si() - one.latency.si(), WithinRel(7.0 / 8 * s / 370.8e9, 1e-9));
  // SendRecv between nodes: one NIC's share per rank.
  CollectiveCost sr = EstimateCollective(CollectiveOp::kSendRecv, Bytes(s), RailGroup(2), HopperRingTree(), p);
  CHECK_THAT(sr.time.si() - sr.latency.si(), WithinRel(s / (50e9 * p.nic_efficiency), 1e-9));
}

TEST_CASE("cost_model: F9 ring AllGather collapses with nodes, tree AllReduce holds", "[cost_model]") {
  // seed-findings F9: DGX H100 (8 × 400 Gb/s NICs per node), ring over every
  // GPU, Llama-2-7B per-layer FSDP message 202,383,360 params × 2 B.
  Bytes layer(202383360.0 * 2);
  NcclFeatures f = HopperRingTree();   // the paper's NCCL: AG ring-only
  auto ag = [&](int nodes) { return EstimateCollective(CollectiveOp::kAllGather, layer, DgxGroup(nodes), f); };
  auto tree = [&](int nodes) {
    return *EstimateCollectiveWith(CollectiveOp::kAllReduce, layer, DgxGroup(nodes), f, CollectiveModelParams{},
                                   CollectiveAlgo::kTree, Protocol::kSimple);
  };
  auto ar = [&](int nodes) { return EstimateCollective(CollectiveOp::kAllReduce, layer, DgxGroup(nodes), f); };
  CHECK(ag(4).algo == CollectiveAlgo::kRing);
  CHECK(ag(512).busbw.si() <= 0.5 * ag(4).busbw.si());
  CHECK(tree(512).busbw.si() >= 0.6 * tree(4).busbw.si());
  CHECK(ar(512).algo == CollectiveAlgo::kTree);
  CHECK(ar(512).busbw.si() >= 0.6 * ar(4).busbw.si());
  // The mechanism: ring AllGather latency grows linearly with ranks.
  CHECK(ag(512).latency.si() > 50 * ag(4).latency.si());
  // The stricter version holds too, for any NCCL choice of the ring protocol.
  for (int nodes = 8; nodes <= 512; nodes *= 2) CHECK(ag(nodes).busbw.si() < ag(nodes / 2).busbw.si());
}

TEST_CASE("cost_model: outputs stay finite at the extremes", "[cost_model]") {
  for (int nodes : {1, 2, 1000, 100000}) {
    for (CollectiveOp op : kAllOps) {
      for (double s : {1.0, 1e15}) {
        CollectiveCost c = EstimateCollective(op, Bytes(s), DgxGroup(nodes), Everything());
        CHECK(std::isfinite(c.time.si()));
        CHECK(c.time.si() > 0);
        CHECK(std::isfinite(c.busbw.si()));
        CHECK(c.busbw.si() > 0);
      }
    }
  }
}

TEST_CASE("cost_model: collective names parse and print", "[cost_model]") {
  for (CollectiveOp op : kAllOps) CHECK(ParseCollectiveOp(ToString(op), "--op") == op);
  CHECK(ParseCollectiveOp("AllGather", "--op") == CollectiveOp::kAllGather);
  CHECK(ParseCollectiveOp("all_reduce", "--op") == CollectiveOp::kAllReduce);
  CHECK(ParseCollectiveOp("reduce-scatter", "--op") == CollectiveOp::kReduceScatter);
  CHECK_THROWS_AS(ParseCollectiveOp("allmagic", "--op"), InvalidInput);
  CHECK(std::string(ToString(CollectiveAlgo::kNvlsTree)) == "nvlstree");
  CHECK(std::string(ToString(Protocol::kLL128)) == "LL128");
}

}  // namespace
}  // namespace parasim

namespace parasim {
namespace {

GroupPath DpGroupOn(const std::string& preset, int nodes, int tp) {
  ClusterSpec c = LoadCluster(preset, nodes);
  ParallelConfig cfg;
  cfg.tp = tp;
  cfg.dp = c.TotalGpus() / tp;
  return ResolveGroupPath(c, cfg, ParallelDim::kDp);
}

TEST_CASE("cost_model: F9 holds on the dgx-h100 preset as the topology places it", "[cost_model]") {
  Bytes layer(202383360.0 * 2);
  ClusterSpec c = LoadCluster("dgx-h100", 4);
  NcclFeatures f;   // the paper's NCCL: ring/tree
  f.compute_capability = c.gpu.compute_capability;
  GroupPath small = DpGroupOn("dgx-h100", 4, 1), large = DpGroupOn("dgx-h100", 512, 1);
  REQUIRE(small.ranks == 32);
  REQUIRE(large.ranks == 4096);
  CollectiveCost ag4 = EstimateCollective(CollectiveOp::kAllGather, layer, small, f);
  CollectiveCost ag512 = EstimateCollective(CollectiveOp::kAllGather, layer, large, f);
  CollectiveCost ar4 = EstimateCollective(CollectiveOp::kAllReduce, layer, small, f);
  CollectiveCost ar512 = EstimateCollective(CollectiveOp::kAllReduce, layer, large, f);
  CHECK(ag512.busbw.si() <= 0.5 * ag4.busbw.si());
  CHECK(ar512.algo == CollectiveAlgo::kTree);
  CHECK(ar512.busbw.si() >= 0.6 * ar4.busbw.si());
  // One rank per node on one rail (tp = 8): one NIC's share, PAT when enabled.
  GroupPath rail = DpGroupOn("dgx-h100", 64, 8);
  CHECK(rail.ranks_per_node == 1);
  NcclFeatures modern = f;
  modern.pat = true;
  CollectiveCost pat = EstimateCollective(CollectiveOp::kAllGather, MB(64), rail, modern);
  CHECK(pat.algo == CollectiveAlgo::kPat);
  CHECK(pat.busbw.si() <= rail.ring_bandwidth.si());
  // The presets' NVLS: single-node AllReduce picks it at large sizes.
  NcclFeatures nv = f;
  nv.nvls = c.gpu.nvls;
  CHECK(EstimateCollective(CollectiveOp::kAllReduce, GiB(1), DpGroupOn("dgx-h100", 1, 1), nv).algo ==
        CollectiveAlgo::kNvls);
}

}  // namespace
}  // namespace parasim

namespace parasim {
namespace {

TEST_CASE("cost_model: NCCL releases enable their algorithms where the hardware has them", "[cost_model]") {
  CHECK(ParseNcclVersion("2.20.5", "--nccl") == 22005);
  CHECK(ParseNcclVersion("2.23", "--nccl") == 22300);
  CHECK(ParseNcclVersion("paper", "--nccl") == kNcclPaperVersion);
  CHECK_THROWS_AS(ParseNcclVersion("3.1", "--nccl"), InvalidInput);
  CHECK_THROWS_AS(ParseNcclVersion("2.x", "--nccl"), InvalidInput);
  ClusterSpec h100 = LoadCluster("dgx-h100", 2);
  ClusterSpec a100 = LoadCluster("dgx-a100", 2);
  NcclFeatures paper = NcclFeaturesFor(h100, kNcclPaperVersion);
  NcclFeatures current = NcclFeaturesFor(h100, kNcclCurrentVersion);
  CHECK(paper.nvls);
  CHECK_FALSE(paper.pat);
  CHECK(current.pat);
  CHECK(current.compute_capability == 90);
  CHECK_FALSE(NcclFeaturesFor(a100, kNcclCurrentVersion).nvls);   // no NVLink SHARP on A100
  CHECK_FALSE(NcclFeaturesFor(h100, 21605).nvls);                  // before NVLS
  CHECK(NcclFeaturesFor(h100, kNcclCurrentVersion).collnet == h100.inter_node.sharp);
}

}  // namespace
}  // namespace parasim

namespace parasim {

TEST_CASE("cost_model: a cluster on AWS EFA gets the fitted EFA collective parameters", "[cost_model]") {
  const ClusterSpec ib = LoadCluster("dgx-h100", 32);
  const ClusterSpec efa = LoadCluster("aws-p5", 32);
  const NcclFeatures fi = NcclFeaturesFor(ib, kNcclPaperVersion);
  const NcclFeatures fe = NcclFeaturesFor(efa, kNcclPaperVersion);
  CHECK_FALSE(fi.aws_efa);
  CHECK(fe.aws_efa);
  ParallelConfig dp = ParseParallelConfig("dp=256");
  const GroupPath pi = ResolveGroupPath(ib, dp, ParallelDim::kDp);
  const GroupPath pe = ResolveGroupPath(efa, dp, ParallelDim::kDp);
  // Same hardware path, different transport: the default overload picks the fit.
  const Bytes size = MiB(256);
  const CollectiveCost e = EstimateCollective(CollectiveOp::kAllGather, size, pe, fe);
  CHECK(e.time.si() ==
        EstimateCollective(CollectiveOp::kAllGather, size, pe, fe, CollectiveModelParams::AwsEfa()).time.si());
  CHECK(e.time > EstimateCollective(CollectiveOp::kAllGather, size, pi, fi).time);
  // The playbook's 32-node AllGather (28 GB/s busbw, tests/data) within 35%.
  CHECK_THAT(e.busbw.si() / 1e9, Catch::Matchers::WithinRel(27.97, 0.35));
}

}  // namespace parasim
