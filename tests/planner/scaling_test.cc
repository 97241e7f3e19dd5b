#include <catch2/catch.hpp>

#include "fake_scorer.h"
#include "planner/scaling.h"
#include "test_specs.h"

using namespace parasim;
using namespace parasim::planner;
using parasim::planner::testing::FakeScorer;
using parasim::planner::testing::Job;
using parasim::planner::testing::TinyModel;
using Catch::Matchers::WithinRel;

namespace {
ScorerFactory Fakes() {
  return [](int, const JobSpec& job) -> Scorer {
    FakeScorer f{job};
    return [f](const ParallelConfig& c) { return f(c); };
  };
}
}  // namespace

TEST_CASE("planner: weak scaling study", "[planner]") {
  ScaleOptions s;
  s.mode = ScaleMode::kWeak;
  s.local_batch = 2;
  s.knee_threshold = 0.95;
  PlanOptions p;
  p.objective.objective = Objective::kThroughput;
  const std::vector<int> sizes = {8, 16, 32, 64, 128};
  const ScaleStudy st = RunScaleStudy(TinyModel(8, 16, 256), Job(1, 64), 8, sizes, s, p, Fakes());
  REQUIRE(st.points.size() == sizes.size());
  CHECK(st.points[0].efficiency == 1.0);
  for (size_t i = 0; i < sizes.size(); ++i) {
    const ScalePoint& pt = st.points[i];
    REQUIRE(pt.feasible);
    CHECK(pt.global_batch == 2 * sizes[i]);
    if (i > 0) {
      const ScalePoint& prev = st.points[i - 1];
      CHECK_THAT(pt.marginal_tokens_per_s_per_gpu,
                 WithinRel((pt.useful_tokens_per_s - prev.useful_tokens_per_s) / (pt.gpus - prev.gpus), 1e-12));
      // The fake's ring grows with dp: per-GPU throughput never rises.
      CHECK(pt.efficiency <= prev.efficiency + 1e-12);
    }
  }
  // The knee is the first size below the threshold, if any.
  for (const ScalePoint& pt : st.points) {
    if (pt.gpus < st.knee_gpus || st.knee_gpus == 0) CHECK(pt.efficiency >= s.knee_threshold);
    if (pt.gpus == st.knee_gpus) CHECK(pt.efficiency < s.knee_threshold);
  }
}

TEST_CASE("planner: strong scaling keeps the batch and failures cost goodput", "[planner]") {
  ScaleOptions s;
  s.mode = ScaleMode::kStrong;
  s.global_batch = 64;
  PlanOptions p;
  p.objective.objective = Objective::kThroughput;
  p.objective.goodput.mtbf_gpu_hours = 1000;
  const ScaleStudy st = RunScaleStudy(TinyModel(8, 16, 256), Job(1, 64), 8, {8, 32, 128}, s, p, Fakes());
  double last_goodput = 1.0;
  for (const ScalePoint& pt : st.points) {
    CHECK(pt.global_batch == 64);
    CHECK(pt.goodput < last_goodput);
    CHECK_THAT(pt.useful_tokens_per_s, WithinRel(pt.best.tokens_per_s * pt.goodput, 1e-12));
    last_goodput = pt.goodput;
  }
  CHECK_THROWS_WITH(RunScaleStudy(TinyModel(8, 16, 256), Job(1, 64), 8, {32, 16}, s, p, Fakes()),
                    Catch::Contains("increase"));
}

TEST_CASE("planner: clusters resize by whole nodes or within one", "[planner]") {
  ClusterSpec c;
  c.gpus_per_node = 8;
  c.nodes = 4;
  CHECK(ResizeCluster(c, 64).nodes == 8);
  const ClusterSpec part = ResizeCluster(c, 4);
  CHECK(part.nodes == 1);
  CHECK(part.gpus_per_node == 4);
  CHECK_THROWS_WITH(ResizeCluster(c, 12), Catch::Contains("--gpus"));
}
