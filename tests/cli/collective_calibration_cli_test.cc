// The calibration loop end to end through the executable: import a real
// nccl-tests log, fit a profile on its cluster, and predict with it.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "tests/cli/run_parasim.h"

namespace {

using parasim_test::Parasim;
namespace fs = std::filesystem;

const std::string kData = std::string(PARASIM_SOURCE_DIR) + "/tests/data";

TEST_CASE("calibrate import, fit and collective --hw-profile reproduce a measured busbw", "[cli][collective]") {
  const fs::path dir = fs::temp_directory_path() / ("parasim_collcal_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string log = kData + "/nccl_multinode/nccltests309-qoofyk-xe9680_h100_2n_all_reduce.log";
  const std::string cluster = kData + "/clusters/nccltests309-xe9680.yaml";
  const std::string m = (dir / "m.json").string(), prof = (dir / "p.yaml").string();
  auto r = Parasim("calibrate import --nccl-tests " + log + " -o " + m);
  REQUIRE(r.code == 0);
  const auto rows = nlohmann::json::parse(std::ifstream(m))["rows"];
  REQUIRE(rows.size() > 20);
  CHECK(rows[0]["ranks"] == 16);
  CHECK(rows[0]["nodes"] == 2);
  CHECK(rows[0]["nccl_version"] == 22602);
  r = Parasim("calibrate fit " + m + " --cluster " + cluster + " -o " + prof);
  REQUIRE(r.code == 0);
  // The fitted profile predicts the measured 256 MiB busbw (392.35 GB/s).
  r = Parasim("collective --cluster " + cluster + " --hw-profile " + prof +
              " --op allreduce --ranks 16 --size 256M --format json");
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  const double busbw = j["rows"][0]["busbw_bytes_per_s"].get<double>();
  CHECK(busbw == Approx(392.35e9).epsilon(0.10));
  CHECK(j["rows"][0]["algbw_bytes_per_s"].get<double>() == Approx(busbw * 16 / 30).epsilon(1e-9));
  // The table keeps GB/s as nccl-tests prints.
  r = Parasim("collective --cluster " + cluster + " --hw-profile " + prof + " --op allreduce --ranks 16 --size 256M");
  CHECK(r.code == 0);
  CHECK(r.out.find("busbw(GB/s)") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("collective: conflicting group flags and bad profiles exit 2", "[cli][collective]") {
  const std::string cluster = kData + "/clusters/xxrjun-cluster01.yaml";
  CHECK(Parasim("collective --cluster " + cluster + " --ranks 80 --nodes 4").code == 2);
  CHECK(Parasim("collective --cluster " + cluster + " --ranks 10 --per-node --gpus-per-node 8").code == 2);
  CHECK(Parasim("collective --cluster " + cluster + " --ranks 12 --gpus-per-node 8").code == 2);
  CHECK(Parasim("collective --cluster " + cluster + " --ranks 10 --gpus-per-node 3").code == 2);
  CHECK(Parasim("collective --cluster " + cluster + " --ranks 10 --gpus-per-node 1").code == 0);
  const fs::path bad = fs::temp_directory_path() / ("parasim_badprof_" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(bad) << "schema_version: 1\nbase: infiniband\ncollective:\n  nic_efficiency: 7\n  bogus: 1\n"
                         "  tree_net_efficiency: 1.5\n";
  const auto r = Parasim("collective --cluster " + cluster + " --hw-profile " + bad.string());
  CHECK(r.code == 2);
  CHECK(r.err.find("collective.nic_efficiency") != std::string::npos);
  CHECK(r.err.find("collective.bogus") != std::string::npos);
  CHECK(r.err.find("collective.tree_net_efficiency") != std::string::npos);   // a fraction, as the NIC's
  fs::remove(bad);
}

TEST_CASE("calibrate fit rejects JSON of another kind", "[cli][collective]") {
  const fs::path f = fs::temp_directory_path() / ("parasim_kind_" + std::to_string(::getpid()) + ".json");
  std::ofstream(f) << R"({"kind": "gemm-sweep", "rows": []})";
  CHECK(Parasim("calibrate fit " + f.string() + " --cluster dgx-h100").code == 2);
  fs::remove(f);
}

}  // namespace
