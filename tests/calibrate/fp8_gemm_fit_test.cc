// The FP8 GEMM sweep (gemm_sweep --dtype fp8) read and fitted: rows carry
// their dtype, FP8 rows are measured against the fp8 dense peak, the fit
// recovers a known efficiency in closed form, and efficiency.gemm_max_fp8
// reaches the written profile and reads back. The fixture is synthetic
// (hand-written for the parser), not a measurement.
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "calibrate/calibration.h"
#include "core/error.h"
#include "core/loaders.h"
#include "fp8_sweep_samples.h"
#include "test_profiles.h"

using Catch::Matchers::Contains;
using Catch::Matchers::WithinRel;
using namespace parasim;
using namespace parasim::calibrate;

namespace {

std::string FixtureDir() { return std::string(PARASIM_SOURCE_DIR) + "/tests/data/calibration/synthetic-fp8"; }

}  // namespace

TEST_CASE("calibrate: the FP8 sweep's rows carry their dtype", "[calibrate][fp8]") {
  const GemmSweep s = LoadGemmSweep(FixtureDir() + "/gemm_sweep_fp8_sustained.json");
  CHECK(s.dtype == "fp8");
  CHECK(s.preheat_s == 10.0);
  REQUIRE(s.samples.size() == 4);
  for (const auto& r : s.samples) CHECK(r.dtype == "fp8");   // row 2 has no "dtype": the file's
  CHECK(s.samples[1].pass == "dgrad");
  CHECK(s.samples[1].n == 4096);
  CHECK(s.samples[1].k == 12288);
  CHECK(SamplesOfDtype(s.samples, "fp8").size() == 4);
  CHECK(SamplesOfDtype(s.samples, "bf16").empty());

  // The directory loader files it under the FP8 slot only.
  const MicrobenchData d = LoadMicrobenchDir(FixtureDir());
  REQUIRE(d.gemm_fp8_sustained);
  CHECK_FALSE(d.gemm);
  CHECK_FALSE(d.gemm_sustained);
  CHECK(d.device == "synthetic fixture");
  CHECK(d.date == "2026-11-27");

  // A bf16 file of before the FP8 mode (no "dtype" anywhere) reads as bf16.
  const std::string old = testing::WriteTempFile(
      "parasim-fp8-old.json",
      R"({"benchmark": "gemm_sweep", "timestamp_utc": "t", "device": {"name": "d"},
          "results": [{"model": "", "layer": "square", "pass": "square", "tokens": 0, "tp": 1,
                       "m": 8, "n": 8, "k": 8, "time_s": 1e-6}]})");
  CHECK(LoadGemmSweep(old).samples.at(0).dtype == "bf16");
  std::filesystem::remove(old);
}

TEST_CASE("calibrate: an unknown GEMM dtype names the file and the row", "[calibrate][fp8]") {
  const std::string p = testing::WriteTempFile(
      "parasim-fp8-bad.json",
      R"({"benchmark": "gemm_sweep", "timestamp_utc": "t", "device": {"name": "d"}, "dtype": "fp8",
          "results": [{"model": "", "layer": "square", "pass": "square", "dtype": "fp6", "tokens": 0, "tp": 1,
                       "m": 8, "n": 8, "k": 8, "time_s": 1e-6}]})");
  CHECK_THROWS_AS(LoadGemmSweep(p), InvalidInput);
  CHECK_THROWS_WITH(LoadGemmSweep(p), Contains("parasim-fp8-bad.json") && Contains("results[0].dtype") &&
                                          Contains("'fp6' is neither bf16 nor fp8"));
  std::filesystem::remove(p);
}

TEST_CASE("calibrate: FP8 efficiency is against the fp8 peak; the fit's closed form", "[calibrate][fp8]") {
  const GpuProfile gpu = testing::HandH100();
  std::vector<GemmSample> rows = testing::Fp8Samples();
  // Measured η: FLOP / (time × fp8 peak), not the bf16 peak.
  GemmSample one = rows[0];
  one.time = Seconds(one.Flop() / (0.5 * gpu.fp8_dense.si()));
  CHECK_THAT(MeasuredEfficiency(one, gpu), WithinRel(0.5, 1e-12));
  one.dtype = "bf16";
  CHECK_THAT(MeasuredEfficiency(one, gpu), WithinRel(0.5 * gpu.fp8_dense.si() / gpu.bf16_dense.si(), 1e-12));

  // Compute-bound rows: model time ∝ 1/g, so the least-squares log error is
  // minimal at ln g = mean ln(model(g=1) / measured): the geometric mean of
  // the per-row efficiencies the times were made with.
  const double per_row[] = {0.62, 0.70, 0.55, 0.66, 0.71, 0.58};
  double log_sum = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    rows[i].time = Seconds(ModelGemmSeconds(gpu, 1.0, rows[i]) / per_row[i]);
    log_sum += std::log(per_row[i]);
  }
  const double expected = std::exp(log_sum / static_cast<double>(rows.size()));
  const GemmFit fit = FitGemmEfficiency(rows, gpu);
  REQUIRE(fit.summary.usable());
  CHECK_THAT(fit.gemm_max_efficiency, WithinRel(expected, 1e-5));
  CHECK(fit.points == 6);
  // The same rows read as bf16 against the half-as-fast peak would need twice the efficiency.
  std::vector<GemmSample> as_bf16 = rows;
  for (auto& r : as_bf16) r.dtype = "bf16";
  CHECK(FitGemmEfficiency(as_bf16, gpu).summary.status == FitStatus::kIllConditioned);   // 2 × 0.64 > 1

  // No fp8 peak on the profile (Ampere): not enough data, not a NaN.
  GpuProfile a100 = gpu;
  a100.fp8_dense = FlopsPerSecond(0.0);
  const GemmFit none = FitGemmEfficiency(rows, a100);
  CHECK(none.summary.status == FitStatus::kInsufficientData);
  CHECK_THAT(none.summary.message, Contains("fp8 peak"));
}

TEST_CASE("calibrate: efficiency.gemm_max_fp8 is fitted, written and read back", "[calibrate][fp8]") {
  const GpuProfile base = testing::HandH100();
  REQUIRE(base.gemm_max_fp8_efficiency == 0.0);   // not measured: FP8 GEMMs use gemm_max
  MicrobenchData data;
  data.device = "synthetic";
  data.date = "2026-11-27";
  GemmSweep fp8;
  fp8.file = "dir/gemm_sweep_fp8_sustained.json";
  fp8.dtype = "fp8";
  fp8.samples = testing::Fp8Samples();
  for (auto& r : fp8.samples) r.time = Seconds(ModelGemmSeconds(base, 0.6, r));
  data.gemm_fp8_sustained = fp8;
  const CalibrationFits f = FitMicrobench(data, base);
  REQUIRE(f.gemm_fp8);
  CHECK_FALSE(f.gemm);   // no bf16 sweep: gemm_max stays as it was
  CHECK_THAT(f.gemm_fp8->gemm_max_efficiency, WithinRel(0.6, 1e-5));
  const GpuProfile g = ApplyCalibration(base, f, "test-h100-fp8");
  CHECK_THAT(g.gemm_max_fp8_efficiency, WithinRel(0.6, 1e-5));
  CHECK(g.gemm_max_efficiency == base.gemm_max_efficiency);
  CHECK_THAT(g.sources.at("efficiency.gemm_max_fp8"), Contains("gemm_sweep_fp8_sustained.json") && Contains("FP8"));
  // The written file reads back bit for bit: tests/cli/fitted_profile_yaml_test.cc.
}

TEST_CASE("calibrate: bf16 fits ignore FP8 rows in the same file", "[calibrate][fp8]") {
  const GpuProfile base = testing::HandH100();
  GemmSweep mixed;
  mixed.file = "dir/gemm_sweep_sustained.json";
  std::vector<GemmSample> bf16 = testing::Fp8Samples();
  for (auto& r : bf16) {
    r.dtype = "bf16";
    r.time = Seconds(ModelGemmSeconds(base, 0.7, r));
  }
  std::vector<GemmSample> fp8 = testing::Fp8Samples();
  for (auto& r : fp8) r.time = Seconds(ModelGemmSeconds(base, 0.3, r));   // would drag a mixed fit down
  mixed.samples = bf16;
  mixed.samples.insert(mixed.samples.end(), fp8.begin(), fp8.end());
  MicrobenchData data;
  data.gemm_sustained = mixed;
  const CalibrationFits f = FitMicrobench(data, base);
  // The same file without its FP8 rows: shape model and gemm_max identical.
  MicrobenchData only_bf16;
  only_bf16.gemm_sustained = mixed;
  only_bf16.gemm_sustained->samples = bf16;
  const CalibrationFits ref = FitMicrobench(only_bf16, base);
  REQUIRE(f.gemm);
  REQUIRE(ref.gemm);
  CHECK(f.gemm->points == 6);
  CHECK(f.gemm->gemm_max_efficiency == ref.gemm->gemm_max_efficiency);
  REQUIRE(f.gemm_shape);
  CHECK(f.gemm_shape->params.k0 == ref.gemm_shape->params.k0);
  CHECK_FALSE(f.gemm_fp8);
}
