// cli: `parasim calibrate` end to end on the committed measurements (no GPU).
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include "tests/cli/run_parasim.h"

using Catch::Matchers::Contains;

namespace {

using CalRun = parasim_test::Run;
CalRun ParasimCal(const std::string& args) { return parasim_test::Parasim(args); }

std::string CalData(const std::string& rel) {
  return std::string(PARASIM_SOURCE_DIR) + "/tests/data/calibration/" + rel;
}

}  // namespace

TEST_CASE("cli: calibrate fit writes a profile that loads back", "[cli]") {
  const std::filesystem::path out =
      std::filesystem::temp_directory_path() / ("parasim_cal_" + std::to_string(::getpid()) + ".yaml");
  CalRun r = ParasimCal("calibrate fit --profile h100-sxm --measurements " + CalData("h100-sxm") + " -o " +
                        out.string());
  REQUIRE(r.code == 0);
  CHECK(r.out.empty());  // the YAML went to the file, the report to stderr
  CHECK_THAT(r.err, Contains("gemm_max_efficiency") && Contains("memory_efficiency"));
  r = ParasimCal("profiles show " + out.string() + " --format json");
  std::filesystem::remove(out);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Contains("\"name\": \"h100-sxm-calibrated\"") && Contains("by parasim calibrate"));
}

TEST_CASE("cli: calibrate import-nccl-tests fits alpha-beta per table", "[cli]") {
  CalRun r = ParasimCal("calibrate import-nccl-tests " + CalData("nccl-tests/all_reduce_ring_h100x8.out") + " " +
                        CalData("nccl-tests/all_gather_ring_h100x8.out") + " --min-size 64MiB --format json");
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Contains("\"collective\": \"all_reduce\"") && Contains("\"collective\": \"all_gather\"") &&
                        Contains("\"beta_Bps\""));
  r = ParasimCal("calibrate import-nccl-tests " + CalData("nccl-tests/all_reduce_ring_h100x8.out"));
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Contains("alpha") && Contains("busbw"));
}

TEST_CASE("cli: calibrate reports bad input with exit code 2", "[cli]") {
  const std::filesystem::path bad =
      std::filesystem::temp_directory_path() / ("parasim_cal_bad_" + std::to_string(::getpid()) + ".out");
  {
    std::ofstream f(bad);
    f << "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   "
         "busbw #wrong\n"
      << "     1048576        262144     float     sum      -1    44.38   23.63\n";
  }
  CalRun r = ParasimCal("calibrate import-nccl-tests " + bad.string());
  std::filesystem::remove(bad);
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Contains(bad.filename().string()) && Contains("line 2"));
  r = ParasimCal("calibrate fit --profile h100-sxm --measurements /nonexistent-dir");
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Contains("not a directory"));
}

#ifndef PARASIM_HAVE_CUDA
TEST_CASE("cli: calibrate run without CUDA exits 3", "[cli]") {
  const CalRun r = ParasimCal("calibrate run --out " +
                              (std::filesystem::temp_directory_path() / "parasim_cal_run").string());
  CHECK(r.code == 3);
  CHECK_THAT(r.err, Contains("built without CUDA"));
}
#endif
