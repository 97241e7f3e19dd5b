// The FP8 sweep's split-accumulator rows (fast_accumulate false: cuBLASLt
// FAST_ACCUM off, as Transformer Engine runs dgrad and wgrad) are read, kept
// out of efficiency.gemm_max_fp8, and fitted as efficiency.gemm_fp8_split_accum
// on top of it. Sweeps here are synthetic, made with the cost model from a
// known gemm_max_fp8 and split rate, not measurements.
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "calibrate/calibration.h"
#include "core/error.h"
#include "fp8_sweep_samples.h"
#include "test_profiles.h"

using Catch::Matchers::Contains;
using Catch::Matchers::WithinRel;
using namespace parasim;
using namespace parasim::calibrate;

namespace {

// A sustained FP8 sweep: fast rows at gemm_max_fp8 `g`, and (split_rate > 0)
// the same shapes as dgrad rows with the split accumulator, their compute
// `split_rate` as fast.
MicrobenchData Sweep(const GpuProfile& gpu, double g, double split_rate) {
  GemmSweep sweep;
  sweep.file = "dir/gemm_sweep_fp8_sustained.json";
  sweep.dtype = "fp8";
  sweep.samples = testing::Fp8Samples("fwd", true);
  for (auto& r : sweep.samples) r.time = Seconds(ModelGemmSeconds(gpu, g, r));
  if (split_rate > 0)
    for (GemmSample r : testing::Fp8Samples("dgrad", false)) {
      r.time = Seconds(ModelGemmSeconds(gpu, g, r) / split_rate);   // compute-bound: time ∝ 1/rate
      sweep.samples.push_back(r);
    }
  MicrobenchData data;
  data.device = "synthetic";
  data.date = "2026-11-27";
  data.gemm_fp8_sustained = sweep;
  return data;
}

}  // namespace

TEST_CASE("calibrate: gemm_sweep rows carry fast_accumulate; without the column every row is fast",
          "[calibrate][fp8][split_accum]") {
  const GemmSweep s =
      LoadGemmSweep(std::string(PARASIM_SOURCE_DIR) + "/tests/data/calibration/synthetic-fp8/gemm_sweep_fp8_sustained.json");
  REQUIRE(s.samples.size() == 4);
  CHECK(s.samples[0].fast_accumulate);         // fwd
  CHECK_FALSE(s.samples[1].fast_accumulate);   // dgrad
  CHECK_FALSE(s.samples[2].fast_accumulate);   // wgrad
  CHECK(s.samples[3].fast_accumulate);         // square
  CHECK(SamplesWithFastAccumulate(s.samples, true).size() == 2);
  CHECK(SamplesWithFastAccumulate(s.samples, false).at(0).pass == "dgrad");

  const std::string row = R"({"model": "", "layer": "square", "pass": "square", "tokens": 0, "tp": 1,
                              "m": 8, "n": 8, "k": 8, "time_s": 1e-6)";
  const std::string old = testing::WriteTempFile("parasim-split-old.json",
                                    R"({"benchmark": "gemm_sweep", "timestamp_utc": "t", "device": {"name": "d"},
                                        "dtype": "fp8", "results": [)" + row + "}]}");
  CHECK(LoadGemmSweep(old).samples.at(0).fast_accumulate);
  std::filesystem::remove(old);

  const std::string bad = testing::WriteTempFile("parasim-split-bad.json",
                                    R"({"benchmark": "gemm_sweep", "timestamp_utc": "t", "device": {"name": "d"},
                                        "dtype": "fp8", "results": [)" + row + R"(, "fast_accumulate": 1}]})");
  CHECK_THROWS_AS(LoadGemmSweep(bad), InvalidInput);
  CHECK_THROWS_WITH(LoadGemmSweep(bad), Contains("parasim-split-bad.json") &&
                                            Contains("results[0].fast_accumulate") && Contains("true or false"));
  std::filesystem::remove(bad);
}

TEST_CASE("calibrate: a sweep made from gemm_max_fp8 and a split rate gives both back",
          "[calibrate][fp8][split_accum]") {
  const GpuProfile base = testing::HandH100();
  const MicrobenchData data = Sweep(base, 0.6, 0.85);
  const CalibrationFits f = FitMicrobench(data, base);
  REQUIRE(f.gemm_fp8);
  REQUIRE(f.gemm_fp8_split);
  CHECK(f.gemm_fp8->points == 6);   // the fast rows only
  CHECK_THAT(f.gemm_fp8->gemm_max_efficiency, WithinRel(0.6, 1e-5));
  CHECK(f.gemm_fp8_split->summary.status == FitStatus::kConverged);
  CHECK(f.gemm_fp8_split->points == 6);
  CHECK_THAT(f.gemm_fp8_split->rate, WithinRel(0.85, 1e-5));
  CHECK(f.gemm_fp8_split->summary.rms_rel_error < 1e-5);

  const GpuProfile g = ApplyCalibration(base, f, "test-h100-split");
  CHECK_THAT(g.gemm_max_fp8_efficiency, WithinRel(0.6, 1e-5));
  CHECK_THAT(g.gemm_fp8_split_accum_rate, WithinRel(0.85, 1e-5));
  CHECK_THAT(g.sources.at("efficiency.gemm_fp8_split_accum"),
             Contains("gemm_sweep_fp8_sustained.json") && Contains("split accumulator") && Contains("6 FP8 GEMMs"));
  CHECK_THAT(g.sources.at("efficiency.gemm_max_fp8"), Contains("fast-accumulation rows only, 6 split"));

  // The split pass is paid once: the fitted profile prices a split row at its measured time.
  const GemmSample& split_row = data.gemm_fp8_sustained->samples.back();
  CHECK_THAT(ModelGemmSeconds(g, g.gemm_max_fp8_efficiency, split_row, g.gemm_fp8_split_accum_rate),
             WithinRel(split_row.time.si(), 1e-5));

  // What the blend (every row read as fast) gave: least squares in log time
  // over six rows at 0.6 and six at 0.6 × 0.85, i.e. their geometric mean.
  MicrobenchData blended = data;
  for (auto& r : blended.gemm_fp8_sustained->samples) r.fast_accumulate = true;
  const CalibrationFits b = FitMicrobench(blended, base);
  CHECK_THAT(b.gemm_fp8->gemm_max_efficiency, WithinRel(0.6 * std::sqrt(0.85), 1e-5));
  CHECK(b.gemm_fp8_split->summary.status == FitStatus::kInsufficientData);

  // Per-row rates: the least-squares log loss is minimal at their geometric mean.
  MicrobenchData spread = Sweep(base, 0.6, 0);
  const double per_row[] = {0.80, 0.90, 0.85, 0.75, 0.95, 0.88};
  double log_sum = 0;
  std::vector<GemmSample> split = testing::Fp8Samples("wgrad", false);
  for (size_t i = 0; i < split.size(); ++i) {
    split[i].time = Seconds(ModelGemmSeconds(base, 0.6, split[i]) / per_row[i]);
    log_sum += std::log(per_row[i]);
  }
  spread.gemm_fp8_sustained->samples.insert(spread.gemm_fp8_sustained->samples.end(), split.begin(), split.end());
  const CalibrationFits s = FitMicrobench(spread, base);
  REQUIRE(s.gemm_fp8_split);
  CHECK_THAT(s.gemm_fp8_split->rate, WithinRel(std::exp(log_sum / 6.0), 1e-5));
  CHECK(s.gemm_fp8_split->by_pass.count("wgrad") == 1);
}

TEST_CASE("calibrate: a sweep without split rows leaves the split rate neutral and says so",
          "[calibrate][fp8][split_accum]") {
  GpuProfile base = testing::HandH100();
  base.gemm_fp8_split_accum_rate = 1.0;
  base.sources["efficiency.gemm_fp8_split_accum"] = "NOT MEASURED";
  const CalibrationFits f = FitMicrobench(Sweep(base, 0.6, 0), base);
  REQUIRE(f.gemm_fp8);
  CHECK_THAT(f.gemm_fp8->gemm_max_efficiency, WithinRel(0.6, 1e-5));
  REQUIRE(f.gemm_fp8_split);
  CHECK(f.gemm_fp8_split->summary.status == FitStatus::kInsufficientData);
  CHECK_THAT(f.gemm_fp8_split->summary.message, Contains("no split-accumulator rows") && Contains("neutral"));
  const GpuProfile g = ApplyCalibration(base, f, "test-h100-fast-only");
  CHECK(g.gemm_fp8_split_accum_rate == 1.0);
  CHECK(g.sources.at("efficiency.gemm_fp8_split_accum") == "NOT MEASURED");
}

TEST_CASE("calibrate: split rows faster than the fast model are clamped to 1 with a warning",
          "[calibrate][fp8][split_accum]") {
  const GpuProfile base = testing::HandH100();
  const CalibrationFits f = FitMicrobench(Sweep(base, 0.6, 1.05), base);
  REQUIRE(f.gemm_fp8_split);
  const SplitAccumFit& s = *f.gemm_fp8_split;
  CHECK(s.summary.status == FitStatus::kPoorFit);
  CHECK(s.rate == 1.0);
  CHECK_THAT(s.unclamped_rate, WithinRel(1.05, 1e-5));
  CHECK_THAT(s.summary.message, Contains("WARNING") && Contains("> 1") && Contains("stored as 1"));
  const GpuProfile g = ApplyCalibration(base, f, "test-h100-clamped");
  CHECK(g.gemm_fp8_split_accum_rate == 1.0);
  CHECK_THAT(g.sources.at("efficiency.gemm_fp8_split_accum"), Contains("> 1, stored as 1"));

  // Without an fp8 peak there is no fast fit to measure against: not a NaN.
  GpuProfile a100 = base;
  a100.fp8_dense = FlopsPerSecond(0.0);
  const CalibrationFits none = FitMicrobench(Sweep(base, 0.6, 0.85), a100);
  REQUIRE(none.gemm_fp8_split);
  CHECK(none.gemm_fp8_split->summary.status == FitStatus::kInsufficientData);
  CHECK(ApplyCalibration(a100, none, "x").gemm_fp8_split_accum_rate == a100.gemm_fp8_split_accum_rate);
}
