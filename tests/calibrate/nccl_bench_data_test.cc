// Reading calibrate/cuda/nccl_bench.cu's JSON (calibrate/nccl_bench_data.h):
// the committed one-rank H100 run, nccl-tests' bandwidth definitions on it,
// and bad files.
#include "calibrate/nccl_bench_data.h"

#include <catch2/catch.hpp>

#include <string>

#include "core/error.h"

namespace parasim::calibrate {
namespace {

using Catch::Matchers::Contains;
using Catch::Matchers::WithinRel;

std::string Data(const std::string& rel) { return std::string(PARASIM_SOURCE_DIR) + "/tests/data/calibration/" + rel; }

TEST_CASE("nccl bench: the one-rank H100 run reads as nccl-tests tables", "[calibrate]") {
  const NcclBenchRun run = LoadNcclBenchJson(Data("h100-sxm/nccl_bench.json"));
  CHECK(run.nccl_version == "2.28.9");
  CHECK(run.ranks == 1);
  CHECK(run.hostnames.size() == 1);
  REQUIRE(run.tables.size() == 5);  // the five collectives over the "all" group
  for (const NcclBenchTable& t : run.tables) {
    CHECK(t.group == "all");
    CHECK(t.algo.empty());  // NCCL chose
    REQUIRE(t.table.rows.size() >= 20);
    for (const NcclTestsRow& r : t.table.rows) {
      const NcclTestsResult& m = r.out_of_place;
      // algbw = size / time, as nccl-tests (to the JSON's 6 digits).
      if (m.algbw.si() > 1e6) CHECK_THAT(m.algbw.si() * m.time.si(), WithinRel(r.size.si(), 1e-4));
      // One rank: busbw factor 0 for every collective but send/recv (factor 1).
      if (t.table.collective == "sendrecv") CHECK(m.busbw.si() == m.algbw.si());
      else CHECK(m.busbw.si() == 0.0);
    }
  }
  CHECK(run.tables[3].table.collective == "alltoall");
  // The same tables through the loader import-nccl-tests uses.
  CHECK(LoadCollectiveMeasurements(Data("h100-sxm/nccl_bench.json")).size() == 5);
  CHECK(!LooksLikeJson(Data("nccl-tests/all_reduce_ring_h100x8.out")));
  CHECK(!LoadCollectiveMeasurements(Data("nccl-tests/all_reduce_ring_h100x8.out")).empty());
}

TEST_CASE("nccl bench: bad files name the key", "[calibrate]") {
  CHECK_THROWS_WITH(ParseNcclBenchJson("{", "x.json"), Contains("x.json") && Contains("invalid JSON"));
  CHECK_THROWS_WITH(ParseNcclBenchJson(R"({"kind": "gemm_sweep"})", "x.json"), Contains("kind"));
  const std::string head = R"({"kind": "nccl_bench", "nccl_version": "2.28.9", "ranks": 1, "nodes": 1,
    "ranks_per_node": 1, "hostnames": ["a"], "tables": [{"collective": "all_reduce", "group": "all",
    "group_color": 0, "group_ranks": 1, "rows": [{"size": 8, "count": 2, "out_of_place":)";
  CHECK_THROWS_WITH(ParseNcclBenchJson(head + R"({"time_us": -1, "algbw_GBps": 0, "busbw_GBps": 0}}]}]})", "x.json"),
                    Contains("tables[0].rows[0].out_of_place.time_us"));
  CHECK_THROWS_WITH(ParseNcclBenchJson(head + R"({"time_us": 1, "algbw_GBps": 0, "busbw_GBps": 0}}]}]})", "x.json"),
                    Contains("tables[0].rows[0].in_place"));
  CHECK_THROWS_AS(LoadNcclBenchJson(Data("does-not-exist.json")), InvalidInput);
}

}  // namespace
}  // namespace parasim::calibrate
