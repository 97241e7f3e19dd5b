#include "simulator/flow_solver.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <vector>

namespace parasim::simulator {
namespace {

using Catch::Matchers::WithinRel;

TEST_CASE("simulator: two flows on one link each get half", "[simulator]") {
  // System: ρ1 + ρ2 ≤ 10. Expectation: ρ1 = ρ2 = 5.
  const double caps[] = {10.0};
  FlowSolver s(caps);
  const LinkUse l0[] = {{0, 1}};
  int32_t a = s.AddFlow(l0), b = s.AddFlow(l0);
  auto changed = s.Solve();
  REQUIRE(changed.size() == 2);
  REQUIRE_THAT(s.rate_Bps(a), WithinRel(5.0, 1e-9));
  REQUIRE_THAT(s.rate_Bps(b), WithinRel(5.0, 1e-9));
  // One leaves: the other takes the whole link.
  s.RemoveFlow(a);
  changed = s.Solve();
  REQUIRE(changed.size() == 1);
  REQUIRE_THAT(s.rate_Bps(b), WithinRel(10.0, 1e-9));
}

TEST_CASE("simulator: a flow crossing two bottlenecks gets the tighter share", "[simulator]") {
  // System: L1 (C=1): ρ0 + ρ1 ≤ 1; L2 (C=2): ρ0 + ρ2 ≤ 2.
  // Expectations: L1 saturates first at 1/2: ρ0 = ρ1 = 0.5; ρ2 = 2 − 0.5 = 1.5.
  const double caps[] = {1.0, 2.0};
  FlowSolver s(caps);
  const LinkUse both[] = {{0, 1}, {1, 1}};
  const LinkUse first[] = {{0, 1}};
  const LinkUse second[] = {{1, 1}};
  int32_t f0 = s.AddFlow(both), f1 = s.AddFlow(first), f2 = s.AddFlow(second);
  s.Solve();
  REQUIRE_THAT(s.rate_Bps(f0), WithinRel(0.5, 1e-9));
  REQUIRE_THAT(s.rate_Bps(f1), WithinRel(0.5, 1e-9));
  REQUIRE_THAT(s.rate_Bps(f2), WithinRel(1.5, 1e-9));
}

TEST_CASE("simulator: max-min on a three-link line (Bertsekas-Gallager)", "[simulator]") {
  // System: links A, B, C of capacity 1 in a line; a long flow crosses all
  // three, and one short flow crosses each link; plus a second short flow on A.
  // A: ρL + ρa1 + ρa2 ≤ 1; B: ρL + ρb ≤ 1; C: ρL + ρc ≤ 1.
  // Expectations: A saturates first at 1/3: ρL = ρa1 = ρa2 = 1/3; then
  // ρb = ρc = 2/3.
  const double caps[] = {1.0, 1.0, 1.0};
  FlowSolver s(caps);
  const LinkUse line[] = {{0, 1}, {1, 1}, {2, 1}};
  const LinkUse a[] = {{0, 1}}, b[] = {{1, 1}}, c[] = {{2, 1}};
  int32_t fl = s.AddFlow(line), fa1 = s.AddFlow(a), fa2 = s.AddFlow(a), fb = s.AddFlow(b), fc = s.AddFlow(c);
  s.Solve();
  REQUIRE_THAT(s.rate_Bps(fl), WithinRel(1.0 / 3, 1e-9));
  REQUIRE_THAT(s.rate_Bps(fa1), WithinRel(1.0 / 3, 1e-9));
  REQUIRE_THAT(s.rate_Bps(fa2), WithinRel(1.0 / 3, 1e-9));
  REQUIRE_THAT(s.rate_Bps(fb), WithinRel(2.0 / 3, 1e-9));
  REQUIRE_THAT(s.rate_Bps(fc), WithinRel(2.0 / 3, 1e-9));
}

TEST_CASE("simulator: weighted max-min as SimGrid's lmm consumption weights", "[simulator]") {
  // SimGrid maxmin_test "consumption weight": a1·ρ1 + a2·ρ2 ≤ C with a1 = 2,
  // a2 = 1, C = 3. Expectations: one common level: 2ρ + ρ = 3 → ρ1 = ρ2 = 1.
  const double caps[] = {3.0};
  FlowSolver s(caps);
  const LinkUse w2[] = {{0, 2}}, w1[] = {{0, 1}};
  int32_t f1 = s.AddFlow(w2), f2 = s.AddFlow(w1);
  s.Solve();
  REQUIRE_THAT(s.rate_Bps(f1), WithinRel(1.0, 1e-9));
  REQUIRE_THAT(s.rate_Bps(f2), WithinRel(1.0, 1e-9));
  // A link listed twice sums its coefficients: the same system.
  FlowSolver t(caps);
  const LinkUse twice[] = {{0, 1}, {0, 1}};
  int32_t g1 = t.AddFlow(twice), g2 = t.AddFlow(w1);
  t.Solve();
  REQUIRE_THAT(t.rate_Bps(g1), WithinRel(1.0, 1e-9));
  REQUIRE_THAT(t.rate_Bps(g2), WithinRel(1.0, 1e-9));
}

TEST_CASE("simulator: a rate cap frees bandwidth for the others", "[simulator]") {
  // System: ρ1 + ρ2 + ρ3 ≤ 9, ρ1 ≤ 1. Expectations: ρ1 = 1, ρ2 = ρ3 = 4.
  const double caps[] = {9.0};
  FlowSolver s(caps);
  const LinkUse l0[] = {{0, 1}};
  int32_t f1 = s.AddFlow(l0, 1.0), f2 = s.AddFlow(l0), f3 = s.AddFlow(l0);
  s.Solve();
  REQUIRE_THAT(s.rate_Bps(f1), WithinRel(1.0, 1e-9));
  REQUIRE_THAT(s.rate_Bps(f2), WithinRel(4.0, 1e-9));
  REQUIRE_THAT(s.rate_Bps(f3), WithinRel(4.0, 1e-9));
}

TEST_CASE("simulator: incremental solve touches only the changed component", "[simulator]") {
  // Two disjoint links: a change on one re-solves only its flows.
  const double caps[] = {4.0, 6.0};
  FlowSolver s(caps);
  const LinkUse l0[] = {{0, 1}}, l1[] = {{1, 1}};
  int32_t a = s.AddFlow(l0);
  int32_t b = s.AddFlow(l1);
  s.Solve();
  uint64_t before = s.flows_solved();
  int32_t c = s.AddFlow(l1);
  auto changed = s.Solve();
  REQUIRE(s.flows_solved() - before == 2);  // b and c, not a
  REQUIRE(changed.size() == 2);
  REQUIRE_THAT(s.rate_Bps(a), WithinRel(4.0, 1e-9));
  REQUIRE_THAT(s.rate_Bps(b), WithinRel(3.0, 1e-9));
  REQUIRE_THAT(s.rate_Bps(c), WithinRel(3.0, 1e-9));
  // Capacity change (background load) re-solves its component.
  s.SetCapacity(0, 2.0);
  changed = s.Solve();
  REQUIRE(changed.size() == 1);
  REQUIRE_THAT(s.rate_Bps(a), WithinRel(2.0, 1e-9));
}

TEST_CASE("simulator: max-min never oversubscribes a link and saturates every flow's bottleneck",
          "[simulator]") {
  // Random systems: feasibility (Σ a·ρ ≤ C) and the max-min property: each
  // flow crosses a saturated link on which its rate is the largest.
  std::mt19937_64 rng(7);
  std::vector<double> caps(12);
  for (auto& c : caps) c = 1.0 + static_cast<double>(rng() % 100);
  FlowSolver s(caps);
  std::vector<std::vector<LinkUse>> paths;
  std::vector<int32_t> ids;
  for (int f = 0; f < 40; ++f) {
    std::vector<LinkUse> p;
    int hops = 1 + static_cast<int>(rng() % 4);
    for (int h = 0; h < hops; ++h) p.push_back({static_cast<int32_t>(rng() % caps.size()), 1.0 + (rng() % 3)});
    ids.push_back(s.AddFlow(p));
    paths.push_back(p);
    if (f % 5 == 4) s.Solve();  // incremental solves along the way
  }
  s.RemoveFlow(ids[3]);
  s.RemoveFlow(ids[17]);
  s.Solve();
  std::vector<double> load(caps.size(), 0);
  for (size_t f = 0; f < ids.size(); ++f) {
    if (f == 3 || f == 17) continue;
    for (auto& u : paths[f]) load[u.link] += u.coefficient * s.rate_Bps(ids[f]);
  }
  for (size_t l = 0; l < caps.size(); ++l) REQUIRE(load[l] <= caps[l] * (1 + 1e-9));
  for (size_t f = 0; f < ids.size(); ++f) {
    if (f == 3 || f == 17) continue;
    bool bottlenecked = false;
    for (auto& u : paths[f]) {
      if (load[u.link] < caps[u.link] * (1 - 1e-9)) continue;
      double max_rate = 0;
      for (size_t g = 0; g < ids.size(); ++g) {
        if (g == 3 || g == 17) continue;
        for (auto& v : paths[g]) {
          if (v.link == u.link) max_rate = std::max(max_rate, s.rate_Bps(ids[g]));
        }
      }
      if (s.rate_Bps(ids[f]) >= max_rate * (1 - 1e-9)) bottlenecked = true;
    }
    REQUIRE(bottlenecked);
  }
}

}  // namespace
}  // namespace parasim::simulator
