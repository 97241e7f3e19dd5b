// Calibrated profiles: fit → apply → YAML → LoadGpuProfile gives back the
// same profile; measurement files that are malformed name the file and key.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "calibrate/calibration.h"
#include "core/error.h"
#include "core/loaders.h"
#include "test_profiles.h"

using Catch::Matchers::Contains;
using Catch::Matchers::WithinRel;
using namespace parasim;
using namespace parasim::calibrate;

namespace {

// A scratch directory unique to this test process, removed at scope exit.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& tag) {
    path_ = std::filesystem::temp_directory_path() /
            ("parasim-calibrate-" + tag + "-" + std::to_string(reinterpret_cast<uintptr_t>(this)));
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string Write(const std::string& name, const std::string& text) const {
    const auto p = path_ / name;
    std::ofstream(p) << text;
    return p.string();
  }
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

CalibrationFits SomeFits() {
  CalibrationFits f;
  f.device = "NVIDIA H100 80GB HBM3";
  f.date = "2026-11-23";
  GemmFit g;
  g.gemm_max_efficiency = 0.7123456789;
  g.points = 50;
  g.best_efficiency = 0.81;
  g.best_shape = "8192x4096x4096";
  g.summary.status = FitStatus::kConverged;
  f.gemm = g;
  f.gemm_source = "dir/gemm_sweep_sustained.json";
  MemoryFit m;
  m.memory_efficiency = 0.9012;
  m.achieved = GBps(3019);
  m.summary.status = FitStatus::kConverged;
  f.memory = m;
  PowerFit p;
  p.idle = Watts(120.9);
  p.matmul = Watts(700.4);
  p.memory = Watts(499.5);
  p.matmul_fraction = 1.0;
  p.memory_fraction = 499.5 / 700;
  p.summary.status = FitStatus::kConverged;
  f.power = p;
  return f;
}

}  // namespace

TEST_CASE("calibrate: a calibrated profile replaces exactly the fitted fields", "[calibrate]") {
  const GpuProfile base = testing::HandH100();
  const GpuProfile g = ApplyCalibration(base, SomeFits(), "h100-sxm-calibrated");
  CHECK(g.name == "h100-sxm-calibrated");
  CHECK(g.gemm_max_efficiency == 0.7123456789);
  CHECK(g.memory_efficiency == 0.9012);
  CHECK(g.idle_power.si() == 120.9);
  CHECK(g.power_matmul_fraction == 1.0);
  CHECK_THAT(g.power_memory_fraction, WithinRel(499.5 / 700, 1e-15));
  // Untouched: datasheet figures and what single-GPU runs cannot measure.
  CHECK(g.bf16_dense == base.bf16_dense);
  CHECK(g.power_comm_fraction == base.power_comm_fraction);
  CHECK(g.nvlink_efficiency == base.nvlink_efficiency);
  CHECK_THAT(g.sources.at("calibration"), Contains("calibrated on NVIDIA H100 80GB HBM3 2026-11-23 by parasim calibrate"));
  CHECK_THAT(g.sources.at("efficiency.gemm_max"), Contains("gemm_sweep_sustained.json"));
  CHECK(g.sources.at("peak") == "datasheet");
}

TEST_CASE("calibrate: unusable fits leave the profile's values", "[calibrate]") {
  CalibrationFits f = SomeFits();
  f.gemm->summary.status = FitStatus::kIllConditioned;
  f.power->summary.status = FitStatus::kInsufficientData;
  const GpuProfile base = testing::HandH100();
  const GpuProfile g = ApplyCalibration(base, f, "x");
  CHECK(g.gemm_max_efficiency == base.gemm_max_efficiency);
  CHECK(g.idle_power == base.idle_power);
  CHECK(g.sources.count("efficiency.gemm_max") == 0);
  CHECK(g.memory_efficiency == 0.9012);
}

TEST_CASE("calibrate: malformed measurement files name the file and key", "[calibrate]") {
  ScratchDir dir("bad");
  SECTION("not JSON") {
    const std::string p = dir.Write("gemm_sweep.json", "{ not json");
    CHECK_THROWS_WITH(LoadGemmSweep(p), Contains("gemm_sweep.json") && Contains("not valid JSON"));
  }
  SECTION("wrong program") {
    const std::string p = dir.Write("x.json", R"({"benchmark": "hbm_bandwidth", "device": {"name": "d"}})");
    CHECK_THROWS_WITH(LoadGemmSweep(p), Contains("benchmark") && Contains("gemm_sweep"));
  }
  SECTION("missing field of a row") {
    const std::string p = dir.Write(
        "g.json",
        R"({"benchmark": "gemm_sweep", "timestamp_utc": "2026-11-23T08:00:00Z", "device": {"name": "d"},
            "results": [{"model": "", "layer": "square", "pass": "square", "tokens": 0, "tp": 1,
                         "m": 8, "n": 8, "k": 8}]})");
    CHECK_THROWS_WITH(LoadGemmSweep(p), Contains("results[0].time_s") && Contains("missing"));
  }
  SECTION("negative time") {
    const std::string p = dir.Write(
        "h.json",
        R"({"benchmark": "hbm_bandwidth", "timestamp_utc": "t", "device": {"name": "d"},
            "results": [{"op": "copy", "array_bytes": 1024, "bytes_moved": 2048, "time_s": -1}]})");
    CHECK_THROWS_WITH(LoadBandwidthSweep(p), Contains("results[0].time_s"));
  }
  SECTION("a directory with none of the files") {
    CHECK_THROWS_WITH(LoadMicrobenchDir(dir.path()), Contains("holds none of"));
  }
}
