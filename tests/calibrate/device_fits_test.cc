#include <catch2/catch.hpp>

#include "calibrate/device_fits.h"
#include "test_profiles.h"

using Catch::Matchers::Contains;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;
using namespace parasim;
using namespace parasim::calibrate;

namespace {

BandwidthSample Row(const char* op, double array_bytes, double traffic, double rate_Bps) {
  BandwidthSample s;
  s.op = op;
  s.array = Bytes(array_bytes);
  s.moved = Bytes(traffic * array_bytes);
  s.time = Seconds(traffic * array_bytes / rate_Bps);
  return s;
}

PowerStates States(double idle_w, double gemm_w, double mem_w) {
  PowerStates p;
  p.limit = Watts(700);
  for (auto [name, w] : {std::pair<const char*, double>{"idle", idle_w}, {"gemm", gemm_w}, {"memory", mem_w}}) {
    PowerState s;
    s.state = name;
    s.duration = Seconds(10);
    s.sampled = Watts(w * 0.99);
    s.from_energy = Watts(w);
    p.states.push_back(s);
  }
  return p;
}

}  // namespace

TEST_CASE("calibrate: memory efficiency comes from large streaming rows only", "[calibrate]") {
  // Rows ≥ max(8 × 50 MB L2, 256 MiB) = 400 MB stream at 0.9 × 3.35 TB/s;
  // L2-resident rows at 1.4× and the copy engine are left out of the median.
  BandwidthSweep sweep;
  for (double mib : {8.0, 32.0, 128.0})
    sweep.samples.push_back(Row("copy", mib * 1048576, 2, 1.4 * 3.35e12));
  for (double mib : {512.0, 1024.0, 4096.0}) {
    sweep.samples.push_back(Row("copy", mib * 1048576, 2, 0.9 * 3.35e12));
    sweep.samples.push_back(Row("scale", mib * 1048576, 2, 0.9 * 3.35e12));
    sweep.samples.push_back(Row("triad", mib * 1048576, 3, 0.9 * 3.35e12));
    sweep.samples.push_back(Row("memcpy_d2d", mib * 1048576, 2, 0.5 * 3.35e12));
  }
  const MemoryFit f = FitMemoryEfficiency(sweep, testing::HandH100());
  CHECK(f.summary.status == FitStatus::kConverged);
  CHECK_THAT(f.memory_efficiency, WithinRel(0.9, 1e-12));
  CHECK_THAT(f.achieved.si(), WithinRel(0.9 * 3.35e12, 1e-12));
  CHECK_THAT(f.summary.rms_rel_error, WithinAbs(0.0, 1e-12));
}

TEST_CASE("calibrate: memory efficiency without large rows is insufficient data", "[calibrate]") {
  BandwidthSweep sweep;
  sweep.samples.push_back(Row("copy", 1048576, 2, 3e12));
  CHECK(FitMemoryEfficiency(sweep, testing::HandH100()).summary.status == FitStatus::kInsufficientData);
}

TEST_CASE("calibrate: memory faster than the profile's HBM is a poor fit", "[calibrate]") {
  BandwidthSweep sweep;
  sweep.samples.push_back(Row("copy", 4e9, 2, 4.3e12));  // an H200 measured against an H100 profile
  const MemoryFit f = FitMemoryEfficiency(sweep, testing::HandH100());
  CHECK(f.summary.status == FitStatus::kPoorFit);
  CHECK(f.memory_efficiency <= 1.0);
}

TEST_CASE("calibrate: power fractions are state means over TDP", "[calibrate]") {
  const PowerFit f = FitPower(States(120, 665, 490), testing::HandH100());
  CHECK(f.summary.status == FitStatus::kConverged);
  CHECK_THAT(f.idle.si(), WithinRel(120.0, 1e-12));  // the energy-counter mean, not the sampled one
  CHECK_THAT(f.matmul_fraction, WithinRel(665.0 / 700.0, 1e-12));
  CHECK_THAT(f.memory_fraction, WithinRel(490.0 / 700.0, 1e-12));
  CHECK_THAT(f.summary.rms_rel_error, WithinRel(0.01, 1e-9));
}

TEST_CASE("calibrate: power at the cap within NVML noise is stored as 1", "[calibrate]") {
  const PowerFit f = FitPower(States(120, 704, 490), testing::HandH100());
  CHECK(f.summary.status == FitStatus::kConverged);
  CHECK(f.matmul_fraction == 1.0);
  CHECK_THAT(f.summary.message, Contains("stored as 1"));
}

TEST_CASE("calibrate: implausible power states are reported, not thrown", "[calibrate]") {
  SECTION("far above TDP") {
    const PowerFit f = FitPower(States(120, 900, 490), testing::HandH100());
    CHECK(f.summary.status == FitStatus::kPoorFit);
    CHECK(f.matmul_fraction == 1.0);
  }
  SECTION("memory-bound above matmul") {
    CHECK(FitPower(States(120, 500, 600), testing::HandH100()).summary.status == FitStatus::kPoorFit);
  }
  SECTION("a state missing") {
    PowerStates p = States(120, 650, 480);
    p.states.pop_back();
    CHECK(FitPower(p, testing::HandH100()).summary.status == FitStatus::kInsufficientData);
  }
}
