#include <catch2/catch.hpp>

#include "calibrate/collective_fit.h"
#include "calibrate/collective_measurements.h"
#include "calibrate/collective_profile.h"
#include "core/error.h"

namespace parasim::calibrate {
namespace {

const std::string kData = std::string(PARASIM_SOURCE_DIR) + "/tests/data";

TEST_CASE("nccl-tests import: layout from device lines, excerpts and overrides", "[collective][import]") {
  // Complete device lines: 80 ranks on 10 hosts.
  auto s = ImportNcclTestsFile(kData + "/nccl_multinode/xxrjun-cluster01_h100_10n_all_reduce.log");
  REQUIRE(!s.rows.empty());
  CHECK(s.rows[0].ranks == 80);
  CHECK(s.rows[0].nodes == 10);
  CHECK(s.rows[0].gpus_per_node == 8);
  CHECK(s.rows[0].nccl_version == 22902);
  // One GPU per node.
  s = ImportNcclTestsFile(kData + "/nccl_multinode/xxrjun-cluster01-1gpn_h100_10n_sendrecv.log");
  CHECK(s.rows[0].nodes == 10);
  CHECK(s.rows[0].gpus_per_node == 1);
  CHECK(s.rows[0].op == CollectiveOp::kSendRecv);
  // Excerpt: only rank 127 (device 3) shown: 128 ranks, 4 per node.
  s = ImportNcclTestsFile(kData + "/nccl_multinode/oci-gb200-v3-excerpt_gb200_32n_all_reduce.log");
  CHECK(s.rows[0].ranks == 128);
  CHECK(s.rows[0].nodes == 32);
  // NCCL_ALGO from the mpirun line.
  s = ImportNcclTestsFile(kData + "/nccl_multinode/nccltests309-gjaion-ring-tuned_h100_2n_all_reduce.log");
  CHECK(s.rows[0].algo == "Ring");
  // Overrides win; a layout that does not multiply out is an error.
  s = ImportNcclTestsFile(kData + "/nccl_multinode/xxrjun-cluster01_h100_10n_all_reduce.log", {20, 4, false});
  CHECK(s.rows[0].nodes == 20);
  CHECK_THROWS_AS(ImportNcclTestsFile(kData + "/nccl_multinode/xxrjun-cluster01_h100_10n_all_reduce.log", {3, 8, false}),
                  InvalidInput);
}

TEST_CASE("measurement JSON round trip and errors", "[collective][import]") {
  const auto s = ImportNcclTestsFile(kData + "/nccl_multinode/together-use3a-b200_b200_2n_sendrecv.log");
  const std::string json = CollectiveMeasurementsToJson(s);
  const auto back = ParseCollectiveMeasurementsJson(json, "m.json");
  REQUIRE(back.rows.size() == s.rows.size());
  for (size_t i = 0; i < s.rows.size(); ++i) {
    CHECK(back.rows[i].time.si() == s.rows[i].time.si());
    CHECK(back.rows[i].busbw.si() == s.rows[i].busbw.si());
    CHECK(back.rows[i].ranks == s.rows[i].ranks);
  }
  CHECK_THROWS_AS(ParseCollectiveMeasurementsJson(R"({"kind": "x"})", "m.json"), InvalidInput);
  CHECK_THROWS_AS(ParseCollectiveMeasurementsJson(
                      R"({"kind": "nccl-collectives", "schema_version": 1, "rows": [{"op": "allreduce", "ranks": 16,
                      "nodes": 3, "gpus_per_node": 8, "size_bytes": 1, "time_s": 1}]})",
                      "m.json"),
                  InvalidInput);
}

TEST_CASE("collective profile round trip, base chain and bounds", "[collective][profile]") {
  CollectiveProfile p;
  p.name = "t";
  p.params.net_chunk_latency = Seconds(7.25e-6);
  p.params.nic_efficiency = 0.8125;
  p.fitted_to = {"a.log", "b.log"};
  p.sources["collective.nic_efficiency"] = "fitted";
  // Written and read back bit for bit: tests/cli/fitted_profile_yaml_test.cc.
  // Keys left out keep the base's values.
  const auto efa = ParseCollectiveProfile("schema_version: 1\nbase: efa\ncollective:\n  net_chunk_bytes: 1e6\n", "e.yaml");
  CHECK(efa.params.nic_efficiency == CollectiveModelParams::AwsEfa().nic_efficiency);
  CHECK(efa.params.net_chunk_bytes.si() == 1e6);
  CHECK_THROWS_AS(ParseCollectiveProfile("schema_version: 1\nbase: nowhere.yaml\n", "e.yaml"), InvalidInput);
  CHECK_THROWS_AS(ParseCollectiveProfile("schema_version: 1\ncollective:\n  min_pipeline_chunks: 0\n", "e.yaml"),
                  InvalidInput);
}

TEST_CASE("chunk pipeline: more per-chunk latency is slower, most at mid sizes across nodes", "[collective]") {
  const std::string cluster = kData + "/clusters/nccltests309-xe9680.yaml";
  CollectiveMeasurement m;
  m.op = CollectiveOp::kAllReduce;
  m.ranks = 16;
  m.nodes = 2;
  m.gpus_per_node = 8;
  m.time = Seconds(1);
  CollectiveModelParams a = CollectiveModelParams::InfiniBand(), b = a;
  b.net_chunk_latency = a.net_chunk_latency * 3.0;
  double prev_ratio = 1e9;
  for (double size : {4.0 * 1048576, 64.0 * 1048576, 4096.0 * 1048576}) {
    m.size = Bytes(size);
    const CollectiveCase c = MakeCase(cluster, m, kNcclCurrentVersion);
    const double ra = PredictCase(c, a).time.si(), rb = PredictCase(c, b).time.si();
    CHECK(rb > ra);
    CHECK(rb / ra <= prev_ratio + 1e-12);   // the relative cost falls with size
    prev_ratio = rb / ra;
  }
}

}  // namespace
}  // namespace parasim::calibrate
