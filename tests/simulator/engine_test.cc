#include "simulator/engine.h"

#include <catch2/catch.hpp>

#include <vector>

namespace parasim::simulator {
namespace {

using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

ActivitySpec Compute(double s) { return ActivitySpec{.kind = WorkKind::kMatmul, .duration_s = s}; }
ActivitySpec Comm(double s) { return ActivitySpec{.kind = WorkKind::kComm, .duration_s = s}; }

TEST_CASE("simulator: ops on one stream run back to back", "[simulator]") {
  TaskGraph g;
  int r = g.AddRank("r0");
  int c = g.AddStream(r, StreamKind::kCompute);
  for (int i = 1; i <= 4; ++i) g.AddOp(c, Compute(i * 1.0));
  g.Finalize();
  Engine e;
  const Timeline& t = e.Run(g, {});
  REQUIRE_THAT(t.makespan_s, WithinRel(10.0, 1e-12));
  REQUIRE_THAT(t.start_s[3], WithinRel(6.0, 1e-12));
  REQUIRE(t.events == 4);
}

TEST_CASE("simulator: streams overlap and dependencies order them", "[simulator]") {
  // compute: A(3) then B(2); comm: X(4) after A. B does not wait for X, Y(1)
  // on compute waits for X. Expectation: A 0-3, B 3-5, X 3-7, Y 7-8.
  TaskGraph g;
  int r = g.AddRank("r0");
  int c = g.AddStream(r, StreamKind::kCompute);
  int m = g.AddStream(r, StreamKind::kDp);
  int32_t a = g.AddOp(c, Compute(3));
  int32_t b = g.AddOp(c, Compute(2));
  int32_t x = g.AddOp(m, Comm(4));
  int32_t y = g.AddOp(c, Compute(1));
  g.AddDependency(a, x);
  g.AddDependency(x, y);
  g.Finalize();
  Engine e;
  const Timeline& t = e.Run(g, {});
  REQUIRE_THAT(t.start_s[g.op_activity(b)], WithinRel(3.0, 1e-12));
  REQUIRE_THAT(t.start_s[g.op_activity(x)], WithinRel(3.0, 1e-12));
  REQUIRE_THAT(t.start_s[g.op_activity(y)], WithinRel(7.0, 1e-12));
  REQUIRE_THAT(t.makespan_s, WithinRel(8.0, 1e-12));
}

TEST_CASE("simulator: a collective starts when its last participant arrives", "[simulator]") {
  // Three ranks compute 1, 2 and 5 s, then all-reduce (2 s), then compute 1 s.
  // Expectation: the collective runs 5-7 on every rank; the step ends at 8.
  TaskGraph g;
  std::vector<int32_t> comm_streams, computes;
  for (int r = 0; r < 3; ++r) {
    int rank = g.AddRank("r");
    int c = g.AddStream(rank, StreamKind::kCompute);
    comm_streams.push_back(g.AddStream(rank, StreamKind::kDp));
    computes.push_back(g.AddOp(c, Compute(r == 2 ? 5.0 : r + 1.0)));
  }
  int32_t ar = g.AddGroupOp(comm_streams, Comm(2));
  std::vector<int32_t> after;
  for (int r = 0; r < 3; ++r) {
    g.AddDependency(computes[r], ar + r);
    int32_t next = g.AddOp(g.compute_stream(r), Compute(1));
    g.AddDependency(ar + r, next);
    after.push_back(next);
  }
  g.Finalize();
  Engine e;
  const Timeline& t = e.Run(g, {});
  REQUIRE_THAT(t.start_s[g.op_activity(ar)], WithinRel(5.0, 1e-12));
  REQUIRE_THAT(t.end_s[g.op_activity(ar)], WithinRel(7.0, 1e-12));
  for (int32_t op : after) REQUIRE_THAT(t.end_s[g.op_activity(op)], WithinRel(8.0, 1e-12));
}

TEST_CASE("simulator: comm/compute interference slows the overlapped part only", "[simulator]") {
  // compute 10 s; comm 4 s from t = 0; κ = 0.5. Expectation: 4 s at speed
  // 1/1.5 does 8/3 s of work; the remaining 22/3 s at full speed: end 34/3.
  TaskGraph g;
  int r = g.AddRank("r0");
  int c = g.AddStream(r, StreamKind::kCompute);
  int m = g.AddStream(r, StreamKind::kDp);
  int32_t k = g.AddOp(c, Compute(10));
  g.AddOp(m, Comm(4));
  g.Finalize();
  Engine e;
  EngineOptions opt;
  opt.interference_slowdown = 0.5;
  const Timeline& t = e.Run(g, opt);
  REQUIRE_THAT(t.end_s[g.op_activity(k)], WithinRel(34.0 / 3.0, 1e-12));
}

TEST_CASE("simulator: a straggler rank's compute takes longer", "[simulator]") {
  TaskGraph g;
  for (int r = 0; r < 2; ++r) {
    int rank = g.AddRank("r");
    g.AddOp(g.AddStream(rank, StreamKind::kCompute), Compute(2));
  }
  g.Finalize();
  const double slow[] = {1.0, 1.25};
  EngineOptions opt;
  opt.rank_compute_slowdown = slow;
  Engine e;
  const Timeline& t = e.Run(g, opt);
  REQUIRE_THAT(t.end_s[0], WithinRel(2.0, 1e-12));
  REQUIRE_THAT(t.end_s[1], WithinRel(2.5, 1e-12));
}

TEST_CASE("simulator: host time is neither slowed by a slow GPU nor by interference; compute after it is",
          "[simulator]") {
  // One rank, GPU slowdown 1.25, κ = 0.5: host(3) then compute(2) on the
  // compute stream, comm(4) from t = 0. The host delay ends at exactly 3; the
  // compute then runs 3-4 beside comm at speed 1/(1.25·1.5), doing 1/1.875
  // of work, and the rest at speed 1/1.25.
  TaskGraph g;
  int r = g.AddRank("r0");
  int c = g.AddStream(r, StreamKind::kCompute);
  int m = g.AddStream(r, StreamKind::kDp);
  int32_t host = g.AddOp(c, ActivitySpec{.kind = WorkKind::kHost, .duration_s = 3});
  int32_t k = g.AddOp(c, Compute(2));
  g.AddOp(m, Comm(4));
  g.Finalize();
  const double slow[] = {1.25};
  EngineOptions opt;
  opt.rank_compute_slowdown = slow;
  opt.interference_slowdown = 0.5;
  Engine e;
  const Timeline& t = e.Run(g, opt);
  REQUIRE_THAT(t.end_s[g.op_activity(host)], WithinRel(3.0, 1e-12));
  REQUIRE_THAT(t.start_s[g.op_activity(k)], WithinRel(3.0, 1e-12));
  REQUIRE_THAT(t.end_s[g.op_activity(k)], WithinRel(4.0 + (2.0 - 1.0 / 1.875) * 1.25, 1e-12));
}

TEST_CASE("simulator: network activities share links max-min fairly", "[simulator]") {
  // Two transfers of nominal 1 s bandwidth time (alone at 10 B/s) on one
  // 10 B/s link, the second starting 0.5 s later, each with 0.1 s latency.
  // Expectation: A alone 0.1-0.6 (half its work), then both at half speed:
  // B's bandwidth part starts 0.6; A's remaining 0.5 s at speed 1/2 ends at
  // 1.6; B has done 0.5 by then and finishes alone at 2.1.
  TaskGraph g;
  const LinkUse link[] = {{0, 1}};
  int32_t fs = g.AddFlowSet(link, 10.0);
  int r = g.AddRank("r0");
  int c = g.AddStream(r, StreamKind::kCompute);
  int s1 = g.AddStream(r, StreamKind::kDp);
  int s2 = g.AddStream(r, StreamKind::kDp);
  ActivitySpec net = Comm(0.1);
  net.network_s = 1.0;
  net.flow_set = fs;
  int32_t a = g.AddOp(s1, net);
  int32_t wait = g.AddOp(c, Compute(0.5));
  int32_t b = g.AddOp(s2, net);
  g.AddDependency(wait, b);
  g.Finalize();
  const double caps[] = {10.0};
  EngineOptions opt;
  opt.link_capacity_Bps = caps;
  Engine e;
  const Timeline& t = e.Run(g, opt);
  REQUIRE_THAT(t.end_s[g.op_activity(a)], WithinAbs(1.6, 1e-12));
  REQUIRE_THAT(t.end_s[g.op_activity(b)], WithinAbs(2.1, 1e-12));
}

TEST_CASE("simulator: a dependency cycle is reported, not hung", "[simulator]") {
  TaskGraph g;
  int r = g.AddRank("r0");
  int c = g.AddStream(r, StreamKind::kCompute);
  int32_t a = g.AddOp(c, Compute(1));
  int32_t b = g.AddOp(c, Compute(1));
  g.AddDependency(b, a);
  g.Finalize();
  Engine e;
  REQUIRE_THROWS(e.Run(g, {}));
}

TEST_CASE("simulator: runs are deterministic and reusable", "[simulator]") {
  TaskGraph g;
  for (int r = 0; r < 4; ++r) {
    int rank = g.AddRank("r");
    int c = g.AddStream(rank, StreamKind::kCompute);
    int m = g.AddStream(rank, StreamKind::kTp);
    for (int i = 0; i < 50; ++i) {
      int32_t k = g.AddOp(c, Compute(0.001 * ((i * 7 + r) % 5 + 1)));
      int32_t x = g.AddOp(m, Comm(0.002));
      g.AddDependency(k, x);
    }
  }
  g.Finalize();
  Engine e;
  EngineOptions opt;
  opt.interference_slowdown = 0.2;
  std::vector<double> first = e.Run(g, opt).end_s;
  std::vector<double> second = e.Run(g, opt).end_s;
  REQUIRE(first == second);
}

}  // namespace
}  // namespace parasim::simulator
