// The run form of the overlap recurrences (UnitRuns: [first] + body × count +
// [last]) must give bit-identical results to the array form of the same units.
#include <catch2/catch.hpp>

#include <random>
#include <vector>

#include "cost_model/overlap.h"

using namespace parasim;

namespace {

std::vector<OverlapUnit> Expand(const UnitRuns& r) {
  std::vector<OverlapUnit> v;
  if (r.has_first) v.push_back(r.first);
  for (int i = 0; i < r.count; ++i) v.push_back(r.body);
  if (r.has_last) v.push_back(r.last);
  return v;
}

bool Same(const PhaseResult& a, const PhaseResult& b) {
  return a.time == b.time && a.exposed == b.exposed && a.comm == b.comm && a.interference == b.interference;
}

}  // namespace

TEST_CASE("cost_model: overlap over unit runs equals the expanded units", "[cost_model]") {
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> ms(0.0, 10.0);
  auto unit = [&](bool gather, bool reduce) {
    // Comm sometimes shorter, sometimes longer than compute (hidden, exposed, saturated streams).
    // A third of each unit fixed (blocking comm): slowed by nothing.
    const double compute = ms(rng);
    return OverlapUnit{compute, gather ? ms(rng) * 1.5 : 0.0, reduce ? ms(rng) * 1.5 : 0.0, compute / 3};
  };
  int checked = 0;
  for (int trial = 0; trial < 4000; ++trial) {
    UnitRuns r;
    r.has_first = rng() % 2;
    r.has_last = rng() % 2;
    r.count = static_cast<int>(rng() % 90);
    const bool gather = rng() % 2, reduce = rng() % 2;
    r.body = unit(gather, reduce);
    r.first = rng() % 4 == 0 ? r.body : unit(gather, reduce);   // equal neighbouring runs too
    r.last = rng() % 4 == 0 ? r.body : unit(gather, reduce);
    const std::vector<OverlapUnit> v = Expand(r);
    const int n = static_cast<int>(v.size());
    const int depth = static_cast<int>(rng() % 4);
    const double interference = 1.0 + 0.1 * (rng() % 3);
    REQUIRE(Same(ForwardWithPrefetch(r, depth, interference), ForwardWithPrefetch(v.data(), n, depth, interference)));
    REQUIRE(Same(BackwardWithReduce(r, interference), BackwardWithReduce(v.data(), n, interference)));
    ++checked;
  }
  CHECK(checked == 4000);
}
