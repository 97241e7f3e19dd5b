#include <catch2/catch.hpp>
#include <cmath>
#include <random>

#include "calibrate/alpha_beta_fit.h"

using Catch::Matchers::Contains;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;
using namespace parasim;
using namespace parasim::calibrate;

namespace {

std::vector<SizeTime> Synthetic(double alpha_s, double beta_Bps, double noise, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> n(0.0, noise);
  std::vector<SizeTime> pts;
  for (double s = 1024; s <= 8.0 * 1024 * 1024 * 1024; s *= 2)
    pts.push_back({Bytes(s), Seconds((alpha_s + s / beta_Bps) * std::exp(n(rng)))});
  return pts;
}

}  // namespace

TEST_CASE("calibrate: alpha-beta fit is exact on noiseless data", "[calibrate]") {
  // t = 25 µs + S / 180 GB/s at 24 sizes 1 KiB … 8 GiB: a linear least-squares
  // problem with an exact solution.
  const AlphaBetaFit f = FitAlphaBeta(Synthetic(25e-6, 180e9, 0.0, 1));
  CHECK(f.summary.status == FitStatus::kConverged);
  CHECK(f.points == 24);
  CHECK_THAT(f.alpha.si(), WithinRel(25e-6, 1e-9));
  CHECK_THAT(f.beta.si(), WithinRel(180e9, 1e-9));
  CHECK_THAT(f.summary.rms_rel_error, WithinAbs(0.0, 1e-9));
}

TEST_CASE("calibrate: alpha-beta fit recovers parameters under seeded noise", "[calibrate]") {
  // 3% multiplicative noise per row; relative residuals weigh every decade the
  // same, so α (set by the ~12 latency-bound rows) and β (the ~8 bandwidth-
  // bound rows) both come back within a few percent.
  const unsigned seed = GENERATE(7u, 11u, 2024u);
  const AlphaBetaFit f = FitAlphaBeta(Synthetic(25e-6, 180e9, 0.03, seed));
  CHECK(f.summary.status == FitStatus::kConverged);
  CHECK_THAT(f.alpha.si(), WithinRel(25e-6, 0.05));
  CHECK_THAT(f.beta.si(), WithinRel(180e9, 0.05));
  CHECK(f.summary.rms_rel_error < 0.06);
}

TEST_CASE("calibrate: alpha-beta fit on a size window of real AllReduce rows", "[calibrate]") {
  // 8×H100 ring AllReduce (together-nccl-tests, NCCL 2.26.2), rows ≥ 16 MiB:
  // the bandwidth term is the measured plateau, algbw ≈ 206-210 GB/s.
  const std::vector<SizeTime> rows = {{Bytes(16777216.0), Microseconds(125.47)},
                                      {Bytes(268435456.0), Microseconds(1351.22)},
                                      {Bytes(1073741824.0), Microseconds(5206.02)},
                                      {Bytes(8589934592.0), Microseconds(40848.8)}};
  AlphaBetaOptions opt;
  opt.min_size = MiB(16);
  const AlphaBetaFit f = FitAlphaBeta(rows, opt);
  REQUIRE(f.summary.usable());
  CHECK_THAT(f.beta.si(), WithinRel(210e9, 0.03));
  CHECK(f.alpha.si() >= 0.0);
  CHECK(f.alpha.si() < 60e-6);
}

TEST_CASE("calibrate: alpha-beta fit keeps latency non-negative", "[calibrate]") {
  // t = S/β − 5 µs (impossible physically): the unconstrained α is negative,
  // so the fit goes through the origin and says so.
  std::vector<SizeTime> pts;
  for (double s = 16e6; s <= 1e9; s *= 2) pts.push_back({Bytes(s), Seconds(s / 200e9 - 5e-6)});
  const AlphaBetaFit f = FitAlphaBeta(pts);
  REQUIRE(f.summary.usable());
  CHECK(f.alpha.si() == 0.0);
  CHECK_THAT(f.summary.message, Contains("fixed at 0"));
  CHECK_THAT(f.beta.si(), WithinRel(200e9, 0.05));
}

TEST_CASE("calibrate: alpha-beta fit reports unusable data as a status", "[calibrate]") {
  SECTION("one distinct size") {
    const AlphaBetaFit f = FitAlphaBeta({{Bytes(1e6), Seconds(1e-4)}, {Bytes(1e6), Seconds(1.1e-4)}});
    CHECK(f.summary.status == FitStatus::kInsufficientData);
  }
  SECTION("size-0 rows and rows outside the window are ignored") {
    AlphaBetaOptions opt;
    opt.max_size = Bytes(1e3);
    const AlphaBetaFit f = FitAlphaBeta({{Bytes(0), Seconds(1e-6)}, {Bytes(1e6), Seconds(1e-4)}}, opt);
    CHECK(f.summary.status == FitStatus::kInsufficientData);
    CHECK(f.points == 0);
  }
  SECTION("time falling with size") {
    const AlphaBetaFit f = FitAlphaBeta({{Bytes(1e6), Seconds(3e-3)}, {Bytes(1e8), Seconds(1e-3)}, {Bytes(1e9), Seconds(2e-4)}});
    CHECK(f.summary.status == FitStatus::kIllConditioned);
    CHECK_FALSE(f.summary.usable());
  }
  SECTION("one α-β pair across NCCL protocol switches is a poor fit") {
    // A step in the data (a protocol switch) no straight line follows.
    std::vector<SizeTime> pts;
    for (double s = 1e3; s <= 1e9; s *= 4) pts.push_back({Bytes(s), Seconds(s < 1e6 ? 30e-6 : 400e-6 + s / 100e9)});
    const AlphaBetaFit f = FitAlphaBeta(pts);
    CHECK(f.summary.status == FitStatus::kPoorFit);
    CHECK(f.summary.rms_rel_error > 0.25);
  }
}
