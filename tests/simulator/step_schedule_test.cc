// Tier C's step schedules: the engine's lock-step steps with one flow per link
// class, max-min sharing between collectives, and the schedule shapes.
#include <catch2/catch.hpp>

#include <functional>
#include <vector>

#include "simulator/collective_schedule.h"
#include "simulator/engine.h"

namespace parasim::simulator {
namespace {

using Catch::Matchers::WithinRel;

// `n` one-rank collectives, each on its own rank's DP stream, each a step
// schedule of `steps` steps with latency `latency_s` and bandwidth part
// `network_s` in all, on the flow sets given per collective.
struct Collectives {
  TaskGraph g;
  std::vector<int32_t> acts;
};

int32_t AddScheduled(TaskGraph& g, int steps, double latency_s, double network_s, int32_t flow_set, int classes) {
  const int rank = g.AddRank("r");
  const int stream = g.AddStream(rank, StreamKind::kDp);
  ActivitySpec a{.kind = WorkKind::kComm, .duration_s = latency_s, .network_s = network_s, .flow_set = flow_set};
  a.steps = steps;
  a.flow_classes = classes;
  return g.op_activity(g.AddOp(stream, a));
}

TEST_CASE("simulator: a step schedule alone takes the model's time: latency plus bandwidth", "[simulator]") {
  // K = 4 steps, latency 0.4 s (0.1 per step), bandwidth part 4 s at the
  // nominal 100 B/s (100 B per step). Two link classes: NVLink-like link 0 at
  // 200 B/s and network link 1 at 100 B/s; the step waits for the slower
  // class. Expectation: 4 · (0.1 + 100/100) = 4.4 s, 4 steps, 4·(1 + 2) events.
  const double caps[] = {200, 100};
  TaskGraph g;
  const LinkUse l0[] = {{0, 1}}, l1[] = {{1, 1}};
  const int32_t fs = g.AddFlowSet(l0, 200);
  g.AddFlowSet(l1, 100);
  const int32_t act = AddScheduled(g, 4, 0.4, 4.0, fs, 2);
  g.Finalize();
  Engine e;
  EngineOptions opt;
  opt.link_capacity_Bps = caps;
  const Timeline& t = e.Run(g, opt);
  REQUIRE_THAT(t.end_s[act], WithinRel(4.4, 1e-12));
  REQUIRE(t.network_steps == 4);
  REQUIRE(t.events == 12);
  REQUIRE(t.solved_flows == 0);   // no shared link: the solver never runs
}

TEST_CASE("simulator: two step schedules sharing a link split it max-min fairly, step by step", "[simulator]") {
  // Two collectives (e.g. a DP ring and a TP ring whose network hops leave
  // through the same NIC), each alone K = 4 steps of 0.1 s latency + 100 B at
  // 100 B/s: 4.4 s. Tier B prices each alone (4.4 s, concurrent on their own
  // streams). Together, in lock step, both are in their bandwidth part at
  // once and get 50 B/s each: a step takes 0.1 + 100/50 = 2.1 s, both end at
  // 8.4 s = 4.4 · (1 + bw/(lat + bw)) = 4.4 · 1.909. Serialized they would
  // end at 8.8 s: sharing is never worse than taking turns.
  const double caps[] = {100};
  TaskGraph g;
  const LinkUse l0[] = {{0, 1}};
  const int32_t fa = g.AddFlowSet(l0, 100), fb = g.AddFlowSet(l0, 100);
  const int32_t a = AddScheduled(g, 4, 0.4, 4.0, fa, 1);
  const int32_t b = AddScheduled(g, 4, 0.4, 4.0, fb, 1);
  g.Finalize();
  Engine e;
  EngineOptions opt;
  opt.link_capacity_Bps = caps;
  const Timeline& t = e.Run(g, opt);
  REQUIRE_THAT(t.end_s[a], WithinRel(8.4, 1e-12));
  REQUIRE_THAT(t.end_s[b], WithinRel(8.4, 1e-12));
  REQUIRE(t.solved_flows > 0);
}

TEST_CASE("simulator: contention on one link class slows only the steps' slower class", "[simulator]") {
  // Collective A: classes on link 0 (200 B/s) and link 1 (100 B/s), 2 steps,
  // no latency, 100 B per step. Collective B: 2 steps of 100 B on link 0 only
  // (nominal 200 B/s). Together: on link 0 each gets 100 B/s; A's class 0
  // then takes 1 s = its class 1 time, so A still ends at 2 s (the network
  // class paces it); B takes 1 s per step instead of 0.5: ends at 2 s.
  const double caps[] = {200, 100};
  TaskGraph g;
  const LinkUse l0[] = {{0, 1}}, l1[] = {{1, 1}};
  const int32_t fa = g.AddFlowSet(l0, 200);
  g.AddFlowSet(l1, 100);
  const int32_t fb = g.AddFlowSet(l0, 200);
  const int32_t a = AddScheduled(g, 2, 0, 2.0, fa, 2);
  const int32_t b = AddScheduled(g, 2, 0, 1.0, fb, 1);
  g.Finalize();
  Engine e;
  EngineOptions opt;
  opt.link_capacity_Bps = caps;
  const Timeline& t = e.Run(g, opt);
  REQUIRE_THAT(t.end_s[a], WithinRel(2.0, 1e-12));
  REQUIRE_THAT(t.end_s[b], WithinRel(2.0, 1e-12));
}

TEST_CASE("simulator: step counts follow NCCL's ring and tree", "[simulator]") {
  REQUIRE(RingStepCount(CollectiveOp::kAllReduce, 8) == 14);
  REQUIRE(RingStepCount(CollectiveOp::kAllGather, 8) == 7);
  REQUIRE(RingStepCount(CollectiveOp::kReduceScatter, 2048) == 2047);
  REQUIRE(RingStepCount(CollectiveOp::kAllGather, 1) == 1);
  REQUIRE(TreeStepCount(8, 4) == 18);   // 2 · (7 chain hops + log2 4 levels)
  REQUIRE(TreeStepCount(1, 1) == 1);

  // 3 nodes × 4 GPUs: ring 12 hops; tree: chains 3 · 2 · 3 = 18 directed
  // hops inside nodes, 2 · 2 between the three node leaders.
  std::vector<int> m;
  for (int i = 0; i < 12; ++i) m.push_back(i);
  const std::function<int(int)> node = [](int gpu) { return gpu / 4; };
  std::vector<std::pair<int, int>> hops;
  AppendStepHops(ScheduleShape::kRing, m, node, hops);
  REQUIRE(hops.size() == 12);
  hops.clear();
  AppendStepHops(ScheduleShape::kTree, m, node, hops);
  int inter = 0;
  for (const auto& [a, b] : hops) inter += node(a) != node(b);
  REQUIRE(hops.size() == 22);
  REQUIRE(inter == 4);
  hops.clear();
  AppendStepHops(ScheduleShape::kAllToAll, m, node, hops);
  REQUIRE(hops.size() == 132);
}

TEST_CASE("simulator: the schedule takes the model's algorithm and latency split", "[simulator]") {
  GroupPath path;
  path.ranks = 16;
  path.nodes = 2;
  path.ranks_per_node = 8;
  CollectiveCost ring;
  ring.algo = CollectiveAlgo::kRing;
  ring.time = Seconds(1e-3);
  ring.latency = Seconds(2.5e-4);
  CollectiveSchedule s = PlanSchedule(CollectiveOp::kAllReduce, ring, path);
  REQUIRE(s.shape == ScheduleShape::kRing);
  REQUIRE(s.steps == 30);
  REQUIRE(s.latency_fraction == 0.25);
  CollectiveCost tree = ring;
  tree.algo = CollectiveAlgo::kTree;
  s = PlanSchedule(CollectiveOp::kAllReduce, tree, path);
  REQUIRE(s.shape == ScheduleShape::kTree);
  REQUIRE(s.steps == 2 * (7 + 1));
  CollectiveCost nvls = ring;
  nvls.algo = CollectiveAlgo::kNvls;
  REQUIRE(PlanSchedule(CollectiveOp::kAllGather, nvls, path).steps == 1);
  REQUIRE(PlanSchedule(CollectiveOp::kAllToAll, ring, path).shape == ScheduleShape::kAllToAll);
}

}  // namespace
}  // namespace parasim::simulator
