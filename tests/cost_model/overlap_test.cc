#include <catch2/catch.hpp>

#include <vector>

#include "cost_model/overlap.h"

using namespace parasim;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

TEST_CASE("cost_model: prefetched gathers expose max(0, t_AG - t_compute) per layer", "[cost_model]") {
  // 4 layers of 10 ms compute, 14 ms gathers, depth 1.
  std::vector<OverlapUnit> u(4, OverlapUnit{10, 14, 0});
  const PhaseResult r = ForwardWithPrefetch(u.data(), 4, 1, 1.0);
  // The first two gathers start at 0 and run back to back (stream order):
  // layer 0 waits 14, every later layer waits for its gather: 14 per layer.
  CHECK_THAT(r.time, WithinAbs(4 * 14 + 10, 1e-9));
  CHECK_THAT(r.exposed, WithinAbs(14 + 3 * 4, 1e-9));
  CHECK_THAT(r.comm, WithinAbs(56, 1e-9));
  // Gathers shorter than compute hide, except the first.
  std::vector<OverlapUnit> fast(4, OverlapUnit{10, 6, 0});
  const PhaseResult f = ForwardWithPrefetch(fast.data(), 4, 1, 1.0);
  CHECK_THAT(f.exposed, WithinAbs(6, 1e-9));
  CHECK_THAT(f.time, WithinAbs(6 + 40, 1e-9));
}

TEST_CASE("cost_model: reductions hide under the previous layer's backward, the last is exposed", "[cost_model]") {
  std::vector<OverlapUnit> u(4, OverlapUnit{20, 0, 5});
  const PhaseResult r = BackwardWithReduce(u.data(), 4, 1.0);
  CHECK_THAT(r.exposed, WithinAbs(5, 1e-9));
  CHECK_THAT(r.time, WithinAbs(85, 1e-9));
  // No comm at all: no exposure, no interference.
  std::vector<OverlapUnit> none(4, OverlapUnit{20, 0, 0});
  const PhaseResult z = BackwardWithReduce(none.data(), 4, 1.2);
  CHECK(z.exposed == 0);
  CHECK(z.interference == 0);
  CHECK(z.time == 80);
}

TEST_CASE("cost_model: interference slows only compute that overlaps comm", "[cost_model]") {
  std::vector<OverlapUnit> u(2, OverlapUnit{10, 0, 4});
  const PhaseResult r = BackwardWithReduce(u.data(), 2, 1.5);
  // Unit 0's backward overlaps 4 of unit 1's reduction: +2.
  CHECK_THAT(r.interference, WithinAbs(2, 1e-9));
}

TEST_CASE("cost_model: 1F1B bubble fraction is (p-1)/(m+p-1), interleaved (p-1)/(v m+p-1)", "[cost_model]") {
  for (int p : {2, 4, 8}) {
    for (int m : {1, 4, 16, 64}) {
      std::vector<double> stages(p, 1.0);
      const double step = PipelineSeconds(stages.data(), p, m, 1);
      CHECK_THAT((step - m) / step, WithinRel(double(p - 1) / (m + p - 1), 1e-12));
      const int v = 2;
      const double step_v = PipelineSeconds(stages.data(), p, m, v);
      CHECK_THAT((step_v - m) / step_v, WithinRel(double(p - 1) / (v * m + p - 1), 1e-12));
    }
  }
  // The slowest stage sets the pace.
  std::vector<double> uneven = {1.0, 2.0};
  CHECK(PipelineSeconds(uneven.data(), 2, 8, 1) == 8 * 2.0 + 1.0);
}
