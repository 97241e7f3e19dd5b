// The calibrate command's library calls (calibrate/device_programs.h,
// import_reports.h, profile_fitting.h): the NCCL benchmark's command line,
// the import report's JSON and table over the same rows, and the fit's
// dispatch on the measurement kind.
#include <string>

#include <catch2/catch.hpp>

#include "calibrate/device_programs.h"
#include "calibrate/import_reports.h"
#include "calibrate/profile_fitting.h"
#include "core/error.h"

using Catch::Matchers::Contains;
namespace cal = parasim::calibrate;

namespace {

std::string Data(const std::string& rel) { return std::string(PARASIM_SOURCE_DIR) + "/tests/data/" + rel; }

}  // namespace

TEST_CASE("calibrate: the NCCL benchmark's command line follows its options", "[calibrate]") {
  cal::NcclBenchOptions o;
  o.ops = "all_reduce";
  o.gemm = "8192,8192,4096";
  o.mpi_ranks = 16;
  const std::vector<std::string> argv = cal::NcclBenchArgs(o, "bench");
  const std::vector<std::string> want = {"mpirun", "-np", "16", "bench", "-b", "8", "-e", "1G", "-f", "2",
                                         "-w", "5", "-n", "20", "--ops", "all_reduce", "--groups", "all",
                                         "-o", "nccl_bench.json", "--gemm", "8192,8192,4096"};
  CHECK(argv == want);
  o.mpi_ranks = 0;
  o.gemm.clear();
  CHECK(cal::NcclBenchArgs(o, "bench").front() == "bench");
}

TEST_CASE("calibrate: the NCCL benchmark's bad options name their flag", "[calibrate]") {
  cal::NcclBenchOptions o;
  o.ops = "all_reduce,broadcastx";
  CHECK_THROWS_WITH(cal::NcclBenchArgs(o, "bench"), Contains("--ops") && Contains("broadcastx"));
  o = {};
  o.groups = "all,pod";
  CHECK_THROWS_WITH(cal::NcclBenchArgs(o, "bench"), Contains("--groups"));
  o = {};
  o.gemm = "8192,8192";
  CHECK_THROWS_AS(cal::NcclBenchArgs(o, "bench"), parasim::InvalidInput);
  o.gemm = "8192,-1,8";
  CHECK_THROWS_AS(cal::NcclBenchArgs(o, "bench"), parasim::InvalidInput);
}

TEST_CASE("calibrate: import-nccl-tests' data and table hold the same rows", "[calibrate]") {
  cal::NcclTestsImportOptions opt;
  opt.logs = {Data("calibration/nccl-tests/all_reduce_ring_h100x8.out")};
  const cal::NcclTestsImport all = cal::NcclTestsReport(opt);
  REQUIRE(all.tables.size() == 1);
  const cal::FittedNcclTable& t = all.tables[0];
  const size_t rows = t.table.rows.size();
  REQUIRE(rows > 10);
  // Every row once in the table, after the two heading lines.
  size_t lines = 0;
  for (char c : all.table) lines += c == '\n';
  CHECK(lines == rows + 3);
  CHECK(t.fit.points == static_cast<int>(rows));
  // A size window fits fewer rows; the rows listed stay the same.
  opt.min_size = "16MiB";
  const cal::NcclTestsImport windowed = cal::NcclTestsReport(opt);
  REQUIRE(windowed.tables.size() == 1);
  CHECK(windowed.tables[0].table.rows.size() == rows);
  CHECK(windowed.tables[0].fit.points < t.fit.points);
}

TEST_CASE("calibrate: fit dispatches on the measurement kind", "[calibrate]") {
  cal::ProfileFitOptions opt;
  CHECK_THROWS_WITH(cal::FitProfile(opt), Contains("--measurements"));   // neither files nor a directory
  opt.files = {Data("calibration/h100-sxm/gemm_sweep.json")};
  opt.cluster = "dgx-h100";
  CHECK_THROWS_WITH(cal::FitProfile(opt), Contains("gemm_sweep.json") && Contains("not a measurement kind"));
}
