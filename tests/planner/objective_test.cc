#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include <catch2/catch.hpp>

#include "planner/goodput.h"
#include "planner/objective.h"

using namespace parasim;
using namespace parasim::planner;
using Catch::Matchers::WithinRel;

TEST_CASE("planner: pareto front of hand-made points", "[planner]") {
  // (throughput, tokens/J): 0, 4 and 2 are on the front; 1 is beaten by 0 on
  // both, 5 by 4, 6 by 2; 3 duplicates 2 exactly and 2 has the lower index.
  const std::vector<ParetoPoint> points = {
      {100, 1.0, 0}, {90, 0.9, 1}, {50, 2.0, 2}, {50, 2.0, 3}, {80, 1.5, 4}, {80, 1.2, 5}, {10, 1.9, 6},
  };
  CHECK(ParetoFront(points) == std::vector<size_t>{0, 4, 2});
  CHECK(ParetoFront({}).empty());
  CHECK(ParetoFront({{1, 1, 7}}) == std::vector<size_t>{7});
  // A single point best on both axes is the whole front.
  CHECK(ParetoFront({{5, 5, 0}, {4, 4, 1}, {5, 1, 2}, {1, 5, 3}}) == std::vector<size_t>{0});
}

// The front by its definition, O(n^2): no other point matches or beats a
// survivor on both axes while beating it on one; of exact duplicates the
// lowest index stays; highest throughput first.
std::vector<size_t> BruteForceFront(const std::vector<ParetoPoint>& points) {
  std::vector<ParetoPoint> kept;
  for (const ParetoPoint& p : points) {
    bool out = false;
    for (const ParetoPoint& q : points) {
      const bool dominates = q.throughput >= p.throughput && q.tokens_per_joule >= p.tokens_per_joule &&
                             (q.throughput > p.throughput || q.tokens_per_joule > p.tokens_per_joule);
      const bool earlier_duplicate =
          q.throughput == p.throughput && q.tokens_per_joule == p.tokens_per_joule && q.index < p.index;
      out = out || dominates || earlier_duplicate;
    }
    if (!out) kept.push_back(p);
  }
  std::sort(kept.begin(), kept.end(),
            [](const ParetoPoint& a, const ParetoPoint& b) { return a.throughput > b.throughput; });
  std::vector<size_t> front;
  for (const ParetoPoint& p : kept) front.push_back(p.index);
  return front;
}

TEST_CASE("planner: pareto front equals the definition on random points with ties", "[planner]") {
  // Small integer coordinates: many ties and exact duplicates, the cases a
  // pre-sort cut of dominated points must get right.
  uint64_t x = 12345;
  auto next = [&](int n) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<double>((x >> 33) % static_cast<uint64_t>(n));
  };
  for (int trial = 0; trial < 300; ++trial) {
    const int n = 1 + static_cast<int>(next(60));
    const int range = 2 + static_cast<int>(next(12));
    std::vector<ParetoPoint> points;
    for (int i = 0; i < n; ++i) points.push_back({1 + next(range), 1 + next(range), static_cast<size_t>(i)});
    // Indices need not follow the vector's order.
    for (int i = n - 1; i > 0; --i) std::swap(points[i], points[static_cast<size_t>(next(i + 1))]);
    INFO("trial " << trial);
    CHECK(ParetoFront(points) == BruteForceFront(points));
  }
}

TEST_CASE("planner: objective values and directions", "[planner]") {
  const PlanMetrics m{1000.0, 2.0, 0.1};
  const Goodput ideal;
  ObjectiveOptions o;
  CHECK(ObjectiveValue(o, m, 8, ideal) == 2.0);
  o.objective = Objective::kThroughput;
  CHECK(ObjectiveValue(o, m, 8, ideal) == 1000.0);
  o.objective = Objective::kExposedComm;
  CHECK(ObjectiveScore(o, m, 8, ideal) == -0.1);
  o.objective = Objective::kTimeToTrain;
  o.tokens = 1e6;
  CHECK_THAT(ObjectiveValue(o, m, 8, ideal), WithinRel(1000.0, 1e-12));
  o.objective = Objective::kCost;
  o.gpu_hour_price = 3.6;        // $0.001 per GPU-second
  o.energy_price = 0.36;         // $1e-7 per joule
  // 1e6 tokens: 1000 s × 8 GPUs × $0.001 + 5e5 J × $1e-7 = 8 + 0.05
  CHECK_THAT(ObjectiveValue(o, m, 8, ideal), WithinRel(8.05, 1e-12));
  Goodput half;
  half.fraction = 0.5;
  CHECK_THAT(ObjectiveValue(o, m, 8, half), WithinRel(16.1, 1e-12));
  CHECK(ToString(ParseObjective("time-to-train")) == std::string("time-to-train"));
}

TEST_CASE("planner: Young/Daly checkpoint interval and goodput", "[planner]") {
  // Daly's estimate approaches Young's when the checkpoint is cheap against the MTBF.
  const Seconds mtbf(1e6), delta(10);
  CHECK_THAT(DalyOptimalInterval(delta, mtbf).si(), WithinRel(YoungOptimalInterval(delta, mtbf).si(), 0.01));
  CHECK_THAT(YoungOptimalInterval(delta, mtbf).si(), WithinRel(std::sqrt(2 * 10 * 1e6), 1e-12));
  CHECK(DalyOptimalInterval(Seconds(300), Seconds(100)).si() == 100);   // δ >= 2M: τ = M

  GoodputOptions o;
  CHECK(ComputeGoodput(1024, o).fraction == 1.0);   // failures not modelled
  o.mtbf_gpu_hours = 50000;
  o.checkpoint_cost = Seconds(60);
  o.restart_time = Seconds(600);
  double last = 1.0;
  for (int n : {8, 64, 512, 4096, 16384}) {
    const Goodput g = ComputeGoodput(n, o);
    CHECK(g.fraction < last);            // more GPUs, more failures
    CHECK(g.fraction > 0);
    CHECK_THAT(g.cluster_mtbf.si(), WithinRel(50000.0 * 3600 / n, 1e-12));
    last = g.fraction;
  }
  // The optimum interval beats nearby intervals.
  const int n = 4096;
  const double best = ComputeGoodput(n, o).fraction;
  const Seconds tau = ComputeGoodput(n, o).checkpoint_interval;
  for (double k : {0.5, 0.8, 1.25, 2.0}) {
    GoodputOptions fixed = o;
    fixed.checkpoint_interval = tau * k;
    CHECK(ComputeGoodput(n, fixed).fraction <= best + 1e-12);
  }
  // With a huge MTBF only the checkpoint overhead τ/(τ+δ) remains.
  GoodputOptions rare = o;
  rare.mtbf_gpu_hours = 1e12;
  rare.checkpoint_interval = Seconds(3600);
  CHECK_THAT(ComputeGoodput(8, rare).fraction, WithinRel(3600.0 / 3660.0, 1e-4));
  GoodputOptions bad = o;
  bad.mtbf_gpu_hours = -1;
  CHECK_THROWS_WITH(ComputeGoodput(8, bad), Catch::Contains("mtbf"));
}
