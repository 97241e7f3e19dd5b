#include <catch2/catch.hpp>

#include <algorithm>
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
  // Unit 1's reduction runs the first 4 s of unit 0's backward, which does
  // 4 / 1.5 s of its work in them: + 4 (1 − 1/1.5), as a rate change would.
  CHECK_THAT(r.interference, WithinAbs(4.0 / 3.0, 1e-9));
  // A reduction longer than the slowed unit slows all of its kernels.
  std::vector<OverlapUnit> long_reduce(2, OverlapUnit{10, 0, 40});
  CHECK_THAT(BackwardWithReduce(long_reduce.data(), 2, 1.5).interference, WithinAbs(5, 1e-9));
}

TEST_CASE("cost_model: a unit's fixed time (blocking comm, ring waits) is not slowed", "[cost_model]") {
  // 10 s units of which 5 s fixed: the kernels (5 s) alone take the factor.
  std::vector<OverlapUnit> covered(2, OverlapUnit{10, 0, 40, 5});
  CHECK_THAT(BackwardWithReduce(covered.data(), 2, 1.5).interference, WithinAbs(2.5, 1e-9));
  // 4 s of reduction cover 4 / (1.5·5 + 5) of the unit: + 0.5 · 5 · 0.32.
  std::vector<OverlapUnit> partial(2, OverlapUnit{10, 0, 4, 5});
  CHECK_THAT(BackwardWithReduce(partial.data(), 2, 1.5).interference, WithinAbs(0.8, 1e-9));
  // All fixed: nothing to slow, however long the comm.
  std::vector<OverlapUnit> idle(3, OverlapUnit{10, 30, 40, 10});
  CHECK(BackwardWithReduce(idle.data(), 3, 1.5).interference == 0);
  CHECK(ForwardWithPrefetch(idle.data(), 3, 1, 1.5).interference == 0);
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

namespace {
// The plain recurrences, one unit at a time, to check the run jumping against.
PhaseResult ForwardPlain(const std::vector<OverlapUnit>& u, int depth, double k) {
  PhaseResult r;
  std::vector<double> starts(u.size());
  double t = 0, comm_free = 0;
  const int n = static_cast<int>(u.size());
  for (int i = 0; i < n; ++i) {
    double ready = 0;
    if (u[i].gather > 0) {
      const double issue = depth == 0 ? t : (i <= depth ? 0.0 : starts[i - depth]);
      comm_free = std::max(issue, comm_free) + u[i].gather;
      r.comm += u[i].gather;
      ready = comm_free;
    }
    const double cs = std::max(t, ready);
    r.exposed += cs - t;
    starts[i] = cs;
    double busy = comm_free;
    if (depth > 0 && i + 1 < n && u[i + 1].gather > 0)
      busy = std::max(i + 1 <= depth ? 0.0 : starts[i + 1 - depth], comm_free) + u[i + 1].gather;
    // The wall time the gathers run beside unit i covers busy / (k·K + I) of it.
    const double kernels = u[i].compute - u[i].fixed;
    const double covered = kernels * std::clamp((busy - cs) / (k * kernels + u[i].fixed), 0.0, 1.0);
    const double extra = (k - 1) * covered;
    r.interference += extra;
    t = cs + u[i].compute + extra;
  }
  r.time = t;
  return r;
}
}  // namespace

TEST_CASE("cost_model: jumping runs of identical layers matches layer-by-layer", "[cost_model]") {
  for (double g : {0.0, 3.0, 9.9, 10.0, 14.0, 40.0}) {
    for (int depth : {0, 1, 2, 3}) {
      std::vector<OverlapUnit> u;
      u.push_back({2, 30, 1});
      for (int i = 0; i < 60; ++i) u.push_back({10, g, g * 0.7, 3});
      u.push_back({5, 12, 8});
      const PhaseResult fast = ForwardWithPrefetch(u.data(), static_cast<int>(u.size()), depth, 1.12);
      const PhaseResult plain = ForwardPlain(u, depth, 1.12);
      CHECK_THAT(fast.time, WithinRel(plain.time, 1e-9));
      CHECK_THAT(fast.exposed, WithinAbs(plain.exposed, 1e-9 * plain.time));
      CHECK_THAT(fast.interference, WithinAbs(plain.interference, 1e-9 * plain.time));
      CHECK_THAT(fast.comm, WithinRel(plain.comm, 1e-9));
    }
  }
}

TEST_CASE("cost_model: backward run jumping matches a step-by-step reference", "[cost_model]") {
  for (double r : {0.0, 5.0, 19.0, 20.0, 33.0}) {
    for (double g : {0.0, 6.0, 25.0}) {
      std::vector<OverlapUnit> u;
      u.push_back({3, g, 2});
      for (int i = 0; i < 50; ++i) u.push_back({20, g, r});
      u.push_back({7, g, 4});
      // Reference: the same recurrence on units made all distinct by tiny perturbations.
      std::vector<OverlapUnit> v = u;
      for (size_t i = 0; i < v.size(); ++i) v[i].compute += 1e-9 * static_cast<double>(i % 2);
      const PhaseResult fast = BackwardWithReduce(u.data(), static_cast<int>(u.size()), 1.1);
      const PhaseResult ref = BackwardWithReduce(v.data(), static_cast<int>(v.size()), 1.1);
      CHECK_THAT(fast.time, WithinRel(ref.time, 1e-6));
      CHECK_THAT(fast.exposed, WithinAbs(ref.exposed, 1e-6 * ref.time));
      CHECK_THAT(fast.comm, WithinRel(ref.comm, 1e-9));
    }
  }
}
