#include <cmath>

#include <catch2/catch.hpp>

#include "cost_model/straggler.h"

using namespace parasim;
using Catch::Matchers::WithinRel;

TEST_CASE("cost_model: the slowest of N GPUs: none for one, growing like sqrt(2 ln N)", "[cost_model]") {
  CHECK(StragglerSeconds(0.01, 1, 10.0) == 0.0);
  CHECK(StragglerSeconds(0.0, 4096, 10.0) == 0.0);
  CHECK_THAT(StragglerSeconds(0.01, 1024, 10.0), WithinRel(0.01 * std::sqrt(2.0 * std::log(1024.0)) * 10.0, 1e-12));
  double previous = 0;
  for (int n = 2; n <= 1 << 16; n *= 2) {
    const double s = StragglerSeconds(0.0089, n, 1.0);
    CHECK(s > previous);                       // more synchronising ranks, a slower slowest
    if (n >= 4) CHECK(s - previous < previous);   // each doubling adds less
    previous = s;
  }
  // Sinha et al.'s 8% range over ~27,648 GPUs is ~2 of these maxima.
  CHECK_THAT(2.0 * StragglerSeconds(0.0089, 27648, 1.0), WithinRel(0.08, 0.01));
}
