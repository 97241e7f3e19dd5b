// Tier C's fast path for flows that could contend but find no running
// neighbour (simulator/flow_contention.h): closed forms, and agreement with
// the reference path (every such flow through the max-min solver).
#include "simulator/flow_contention.h"

#include <catch2/catch.hpp>

#include <vector>

#include "simulator/engine.h"

namespace parasim::simulator {
namespace {

using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

ActivitySpec Net(double latency_s, double network_s, int32_t flow_set) {
  return ActivitySpec{.kind = WorkKind::kComm, .duration_s = latency_s, .network_s = network_s, .flow_set = flow_set};
}

const Timeline& RunWith(Engine& e, const TaskGraph& g, std::span<const double> caps, bool dynamic) {
  EngineOptions opt;
  opt.link_capacity_Bps = caps;
  opt.dynamic_contention = dynamic;
  return e.Run(g, opt);
}

TEST_CASE("simulator: a flow running alone joins the solver when a neighbour starts", "[simulator]") {
  // Two flow sets on one 10 B/s link, each on its own stream; A (0.1 s
  // latency, 1 s nominal = 10 B) starts at 0, B the same at 0.5 s. A runs
  // alone 0.1-0.6 (5 B), then both at 5 B/s: A's last 5 B end at 1.6; B has
  // 5 B left then and ends alone at 2.1. Same as one shared flow set.
  const double caps[] = {10.0};
  TaskGraph g;
  const LinkUse link[] = {{0, 1}};
  const int32_t fa = g.AddFlowSet(link, 10.0), fb = g.AddFlowSet(link, 10.0);
  const int r = g.AddRank("r0");
  const int c = g.AddStream(r, StreamKind::kCompute);
  const int32_t a = g.AddOp(g.AddStream(r, StreamKind::kDp), Net(0.1, 1.0, fa));
  const int32_t wait = g.AddOp(c, ActivitySpec{.kind = WorkKind::kMatmul, .duration_s = 0.5});
  const int32_t b = g.AddOp(g.AddStream(r, StreamKind::kTp), Net(0.1, 1.0, fb));
  g.AddDependency(wait, b);
  g.Finalize();
  // One engine for both runs: a reused engine (StepSimulator, the planner)
  // must start each run from a clean solver.
  Engine e;
  for (bool dynamic : {true, false}) {
    const Timeline& t = RunWith(e, g, caps, dynamic);
    INFO("dynamic " << dynamic << " a " << t.end_s[g.op_activity(a)] << " b " << t.end_s[g.op_activity(b)]);
    REQUIRE_THAT(t.end_s[g.op_activity(a)], WithinAbs(1.6, 1e-12));
    REQUIRE_THAT(t.end_s[g.op_activity(b)], WithinAbs(2.1, 1e-12));
    REQUIRE(t.solved_flows > 0);
  }
}

TEST_CASE("simulator: flows that share a link but never overlap skip the solver", "[simulator]") {
  // A then B (B waits for A) on one link: each alone takes 0.1 + 1 s. The
  // reference path solves each flow once; the fast path never.
  const double caps[] = {10.0};
  TaskGraph g;
  const LinkUse link[] = {{0, 1}};
  const int32_t fa = g.AddFlowSet(link, 10.0), fb = g.AddFlowSet(link, 10.0);
  const int r = g.AddRank("r0");
  const int32_t a = g.AddOp(g.AddStream(r, StreamKind::kDp), Net(0.1, 1.0, fa));
  const int32_t b = g.AddOp(g.AddStream(r, StreamKind::kTp), Net(0.1, 1.0, fb));
  g.AddDependency(a, b);
  g.Finalize();
  Engine e;
  const Timeline& fast = RunWith(e, g, caps, true);
  REQUIRE_THAT(fast.end_s[g.op_activity(b)], WithinRel(2.2, 1e-12));
  REQUIRE(fast.solved_flows == 0);
  const Timeline& reference = RunWith(e, g, caps, false);
  REQUIRE_THAT(reference.end_s[g.op_activity(b)], WithinRel(2.2, 1e-12));
  REQUIRE(reference.solved_flows == 2);
}

TEST_CASE("simulator: a heavy flow set beside many light ones: fast path equals the reference", "[simulator]") {
  // A "DP ring" set over links 0..23 (heavy: 24 neighbours) and 24 "TP" sets,
  // one per link, each on its own rank with its own compute in between, so
  // the TP steps start at staggered times inside and outside the DP steps.
  constexpr int kLinks = 24;
  std::vector<double> caps(kLinks);
  for (int l = 0; l < kLinks; ++l) caps[l] = 100.0 + 7.0 * l;
  TaskGraph g;
  std::vector<LinkUse> ring;
  for (int l = 0; l < kLinks; ++l) ring.push_back({l, 1});
  const int32_t dp = g.AddFlowSet(ring, 100.0);
  std::vector<int32_t> tp;
  for (int l = 0; l < kLinks; ++l) {
    const LinkUse one[] = {{l, 1}};
    tp.push_back(g.AddFlowSet(one, caps[l]));
  }
  const int dp_rank = g.AddRank("dp");
  const int dp_stream = g.AddStream(dp_rank, StreamKind::kDp);
  for (int i = 0; i < 5; ++i) {
    ActivitySpec a = Net(0.05, 2.0, dp);
    a.steps = 8;
    g.AddOp(dp_stream, a);
  }
  for (int l = 0; l < kLinks; ++l) {
    const int rank = g.AddRank("tp");
    const int compute = g.AddStream(rank, StreamKind::kCompute);
    const int stream = g.AddStream(rank, StreamKind::kTp);
    for (int i = 0; i < 6; ++i) {
      const int32_t k = g.AddOp(compute, ActivitySpec{.kind = WorkKind::kMatmul, .duration_s = 0.13 * (1 + (l + i) % 4)});
      const int32_t x = g.AddOp(stream, Net(0.01, 0.3, tp[l]));
      g.AddDependency(k, x);
    }
  }
  g.Finalize();
  Engine e;
  const Timeline& ref = RunWith(e, g, caps, false);
  const std::vector<double> reference = ref.end_s;
  const uint64_t reference_solved = ref.solved_flows;
  const Timeline& fast = RunWith(e, g, caps, true);
  REQUIRE(fast.end_s.size() == reference.size());
  for (size_t act = 0; act < reference.size(); ++act) {
    INFO("activity " << act);
    REQUIRE_THAT(fast.end_s[act], WithinRel(reference[act], 1e-12));
  }
  // Some TP flows met the DP ring (the run is not trivially uncontended).
  REQUIRE(fast.solved_flows > 0);
  REQUIRE(fast.solved_flows < reference_solved);
}

}  // namespace
}  // namespace parasim::simulator
