// Importer of nccl-tests logs: the table rows of a real 8×H100 AllReduce run
// (together-nccl-tests, NCCL 2.26.2, nccl-tests 2.17.9; numbers from
// data/nccl_tests_h100_single_node_together.csv) in nccl-tests' own layout.
#include <catch2/catch.hpp>

#include "calibrate/nccl_tests_log.h"
#include "core/error.h"

using Catch::Matchers::Contains;
using Catch::Matchers::WithinRel;
using parasim::calibrate::NcclTestsTable;
using parasim::calibrate::ParseNcclTestsLog;

namespace {

const char* kAllReduceLog = R"(# nccl-tests version 2.17.9 nccl-headers=22602 nccl-library=22602
# Collective test starting: all_reduce_perf
# nThread 1 nGpus 8 minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
#
# Using devices
#  Rank  0 Group  0 Pid 190270 on  node-001 device  0 [0x18] NVIDIA H100 80GB HBM3
#  Rank  1 Group  0 Pid 190270 on  node-001 device  1 [0x2a] NVIDIA H100 80GB HBM3
#  Rank  2 Group  0 Pid 190270 on  node-001 device  2 [0x3a] NVIDIA H100 80GB HBM3
#  Rank  3 Group  0 Pid 190270 on  node-001 device  3 [0x5d] NVIDIA H100 80GB HBM3
#  Rank  4 Group  0 Pid 190270 on  node-001 device  4 [0x9a] NVIDIA H100 80GB HBM3
#  Rank  5 Group  0 Pid 190270 on  node-001 device  5 [0xab] NVIDIA H100 80GB HBM3
#  Rank  6 Group  0 Pid 190270 on  node-001 device  6 [0xba] NVIDIA H100 80GB HBM3
#  Rank  7 Group  0 Pid 190270 on  node-001 device  7 [0xdb] NVIDIA H100 80GB HBM3
node-001:190270:190270 [0] NCCL INFO NCCL_ALGO set by environment to RING
#
#                                                              out-of-place                       in-place          
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       
           8             2     float     sum      -1    37.33    0.00    0.00      0    37.79    0.00    0.00      0
        1024           256     float     sum      -1    37.38    0.03    0.05      0    36.55    0.03    0.05      0
       65536         16384     float     sum      -1    40.27    1.63    2.85      0    37.50    1.75    3.06      0
     1048576        262144     float     sum      -1    44.38   23.63   41.35      0    43.46   24.13   42.23      0
    16777216       4194304     float     sum      -1   125.47  133.71  234.00      0   123.60  135.74  237.54      0
   268435456      67108864     float     sum      -1  1351.22  198.66  347.66      0  1351.93  198.56  347.48      0
  1073741824     268435456     float     sum      -1  5206.02  206.25  360.94      0  5203.72  206.34  361.10      0
  8589934592    2147483648     float     sum      -1  40848.8  210.29  368.00      0  40841.7  210.32  368.06      0
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 117.468 
#
)";

}  // namespace

TEST_CASE("calibrate: nccl-tests AllReduce log parses into one table", "[calibrate]") {
  const auto tables = ParseNcclTestsLog(kAllReduceLog, "all_reduce_ring.out");
  REQUIRE(tables.size() == 1);
  const NcclTestsTable& t = tables[0];
  CHECK(t.collective == "all_reduce");
  CHECK(t.ranks == 8);
  CHECK(t.nccl_version == "nccl-library=22602");
  REQUIRE(t.rows.size() == 8);
  CHECK(t.rows[0].size.si() == 8.0);
  CHECK(t.rows[0].count == 2);
  CHECK(t.rows[0].type == "float");
  CHECK(t.rows[0].redop == "sum");
  CHECK(t.rows[0].root == -1);
  CHECK(t.rows[0].line == 19);
  const auto& big = t.rows.back();
  CHECK(big.size.si() == 8589934592.0);
  CHECK_THAT(big.out_of_place.time.si(), WithinRel(40848.8e-6, 1e-12));
  CHECK_THAT(big.out_of_place.busbw.si(), WithinRel(368.00e9, 1e-12));
  CHECK_THAT(big.in_place.algbw.si(), WithinRel(210.32e9, 1e-12));
  CHECK(big.in_place.wrong == 0);
  // AllReduce bus factor 2(n−1)/n = 1.75 on 8 ranks (nccl-tests PERFORMANCE.md),
  // read off the row with the largest algbw (least rounding): 368.00/210.29.
  CHECK_THAT(t.BusFactor(), WithinRel(368.00 / 210.29, 1e-12));
}

TEST_CASE("calibrate: nccl-tests bus factor of large rows is 2(n-1)/n", "[calibrate]") {
  const auto t = ParseNcclTestsLog(kAllReduceLog, "x.out")[0];
  const auto& r = t.rows.back();
  CHECK_THAT(r.out_of_place.busbw.si() / r.out_of_place.algbw.si(), WithinRel(1.75, 0.005));
}

TEST_CASE("calibrate: nccl-tests logs without a root column, N/A checks, several tables", "[calibrate]") {
  // Older nccl-tests (before `root`) and -c 0 (no validation: #wrong N/A).
  const std::string log =
      "# Collective test starting: all_gather_perf\n"
      "#  Rank  0 Group  0 Pid 1 on h device  0 [0x18] NVIDIA H100\n"
      "#  Rank  1 Group  0 Pid 1 on h device  1 [0x2a] NVIDIA H100\n"
      "#       size         count      type   redop     time   algbw   busbw  error     time   algbw   busbw  error\n"
      "     1048576        131072     float    none    40.10   26.15   13.08    N/A    40.35   25.99   13.00    N/A\n"
      "    16777216       2097152     float    none    70.73  237.19  118.60  0e+00    68.79  243.88  121.94  0e+00\n"
      "# Avg bus bandwidth    : 1.0\n"
      "# Collective test starting: reduce_scatter_perf\n"
      "#  Rank  0 Group  0 Pid 1 on h device  0 [0x18] NVIDIA H100\n"
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
      "     1048576         32768     float     sum      -1    40.10   26.15   22.88      0    40.35   25.99   22.74      0\n";
  const auto tables = ParseNcclTestsLog(log, "mixed.log");
  REQUIRE(tables.size() == 2);
  CHECK(tables[0].collective == "all_gather");
  CHECK(tables[0].ranks == 2);
  REQUIRE(tables[0].rows.size() == 2);
  CHECK(tables[0].rows[0].out_of_place.wrong == -1);
  CHECK(tables[0].rows[1].in_place.wrong == 0);
  CHECK(tables[1].collective == "reduce_scatter");
  CHECK(tables[1].ranks == 1);
  CHECK(tables[1].rows.size() == 1);
}

TEST_CASE("calibrate: nccl-tests collective falls back to the file name", "[calibrate]") {
  const std::string log =
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
      "     1048576        262144     float     sum      -1    44.38   23.63   41.35      0    43.46   24.13   42.23      0\n";
  CHECK(ParseNcclTestsLog(log, "runs/all_reduce_nvls.out")[0].collective == "all_reduce");
  CHECK(ParseNcclTestsLog(log, "runs/log.txt")[0].collective == "unknown");
}

TEST_CASE("calibrate: malformed nccl-tests rows name the file and line", "[calibrate]") {
  const std::string log =
      "# Collective test starting: all_reduce_perf\n"
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
      "     1048576        262144     float     sum      -1    44.38   23.63   41.35      0    43.46   24.13   42.23      0\n"
      "    16777216       4194304     float     sum      -1   125.47  133.71\n"
      "   268435456      67108864     float     sum      -1  1351.22  fast  347.66      0  1351.93  198.56  347.48      0\n";
  try {
    ParseNcclTestsLog(log, "bad.out");
    FAIL("expected parasim::InvalidInput");
  } catch (const parasim::InvalidInput& e) {
    REQUIRE(e.issues().size() == 2);  // every bad row reported at once
    CHECK(e.issues()[0].file == "bad.out");
    CHECK(e.issues()[0].line == 4);
    CHECK_THAT(e.issues()[0].message, Contains("expected 13 columns"));
    CHECK(e.issues()[1].line == 5);
    CHECK_THAT(e.issues()[1].message, Contains("fast"));
  }
}

TEST_CASE("calibrate: a log without a results table is an error", "[calibrate]") {
  CHECK_THROWS_AS(ParseNcclTestsLog("# nThread 1 nGpus 8\nnode:1:1 [0] NCCL INFO Bootstrap\n", "empty.out"),
                  parasim::InvalidInput);
  CHECK_THROWS_WITH(parasim::calibrate::LoadNcclTestsLog("no/such/file.out"), Contains("cannot read"));
}

TEST_CASE("calibrate: full 8xH100 nccl-tests logs import and fit", "[calibrate]") {
  // Fixtures: tests/data/calibration/nccl-tests/README.md. AllGather's bus
  // factor is (n−1)/n = 0.875, AllReduce's 2(n−1)/n = 1.75; bus bandwidth never
  // exceeds the 450 GB/s per-direction NVLink of an H100.
  const std::string dir = std::string(PARASIM_SOURCE_DIR) + "/tests/data/calibration/nccl-tests/";
  const auto ag = parasim::calibrate::LoadNcclTestsLog(dir + "all_gather_ring_h100x8.out");
  const auto ar = parasim::calibrate::LoadNcclTestsLog(dir + "all_reduce_ring_h100x8.out");
  REQUIRE(ag.size() == 1);
  REQUIRE(ar.size() == 1);
  CHECK(ag[0].collective == "all_gather");
  CHECK(ar[0].collective == "all_reduce");
  CHECK(ar[0].rows.size() == 31);  // 8 B … 8 GiB, factor 2
  CHECK_THAT(ag[0].BusFactor(), WithinRel(0.875, 0.005));
  CHECK_THAT(ar[0].BusFactor(), WithinRel(1.75, 0.005));
  for (const auto* t : {&ag[0], &ar[0]})
    for (const auto& r : t->rows) CHECK(r.out_of_place.busbw.si() < 450e9);
}
