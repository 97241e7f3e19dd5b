// core: GPU profiles, cluster presets and job files load strictly and completely.
#include <string>

#include <catch2/catch.hpp>

#include "core/error.h"
#include "core/loaders.h"

using namespace parasim;
using Catch::Matchers::Contains;
using Catch::Matchers::WithinRel;

namespace {
std::string Data(const std::string& rel) { return std::string(PARASIM_SOURCE_DIR) + "/tests/testdata/" + rel; }
}  // namespace

TEST_CASE("core: every built-in GPU profile loads, with a source for every figure group", "[core]") {
  const auto names = GpuProfileNames();
  REQUIRE(names == std::vector<std::string>{"a100-sxm", "b200", "b300", "gb200", "gb300", "gh200", "h100-sxm",
                                            "h200-sxm", "rtx-3090", "v100-sxm"});
  for (const std::string& name : names) {
    INFO(name);
    const GpuProfile g = LoadGpuProfile(name);
    CHECK(g.name == name);
    CHECK(g.bf16_dense > FlopsPerSecond(0));
    CHECK(g.hbm_bandwidth > BytesPerSecond(0));
    CHECK(g.idle_power < g.tdp);
    for (const char* key : {"peak", "memory.capacity", "memory.bandwidth", "nvlink", "power.tdp", "power.idle",
                            "efficiency.gemm_max", "power.comm_fraction"}) {
      INFO(key);
      CHECK(g.sources.count(key) == 1);
    }
  }
  const GpuProfile h100 = LoadGpuProfile("h100-sxm");
  CHECK_THAT(h100.bf16_dense / TFlops(1), WithinRel(989.0, 1e-12));
  CHECK_THAT(h100.nvlink_bandwidth / GBps(1), WithinRel(450.0, 1e-12));
  CHECK(h100.nvls);
  CHECK_FALSE(LoadGpuProfile("a100-sxm").nvls);
}

TEST_CASE("core: cluster presets resolve GPUs, NICs and fat-tree tiers from the node count", "[core]") {
  for (const std::string& name : ClusterPresetNames()) {
    INFO(name);
    const ClusterSpec c = LoadCluster(name);
    CHECK(c.name == name);
    CHECK(c.TotalGpus() == c.nodes * c.gpus_per_node);
  }
  const ClusterSpec h100 = LoadCluster("dgx-h100", 32);
  CHECK(h100.TotalGpus() == 256);
  CHECK_THAT(h100.inter_node.nic_bandwidth / GBps(1), WithinRel(50.0, 1e-12));
  // 64-port switches: 256 NICs fit two tiers (64²/2 = 2048); 512 nodes x 8 NICs need three.
  CHECK(h100.inter_node.tiers == 2);
  CHECK(LoadCluster("dgx-h100", 256).inter_node.tiers == 2);
  CHECK(LoadCluster("dgx-h100", 512).inter_node.tiers == 3);
  CHECK(LoadCluster("dgx-h100", 4).inter_node.tiers == 1);  // 32 NICs: one switch
  CHECK(LoadCluster("dgx-v100").intra_node.fabric == IntraNodeFabric::kHybridCubeMesh);
  CHECK(LoadCluster("gb200-nvl72").intra_node.nvlink_domain_size == 72);
}

TEST_CASE("core: a cluster file overrides defaults and names the GPU by preset", "[core]") {
  const ClusterSpec c = LoadCluster(Data("valid/small-cluster.yaml"));
  CHECK(c.nodes == 2);
  CHECK(c.gpu.name == "h100-sxm");
  CHECK_THAT(c.inter_node.oversubscription, WithinRel(2.0, 1e-12));
}

TEST_CASE("core: bad profiles report every problem with its key", "[core]") {
  try {
    LoadGpuProfile(Data("invalid/gpu_bare_number.yaml"));
    FAIL("expected an error");
  } catch (const InvalidInput& e) {
    const std::string what = e.what();
    CHECK_THAT(what, Contains("peak.bf16: '989' has no unit; write e.g. '989 TFLOP/s'"));
    CHECK_THAT(what, Contains("gpu_bare_number.yaml:7:"));
  }
  try {
    LoadCluster(Data("invalid/cluster_bad.yaml"));
    FAIL("expected an error");
  } catch (const InvalidInput& e) {
    const std::string what = e.what();
    CHECK_THAT(what, Contains("inter_node.nic_bandwidth: unknown bandwidth unit 'Gbps'"));
    CHECK_THAT(what, Contains("inter_node.tiers: '7' is not one of: auto, 1, 2, 3"));
    CHECK(e.issues().size() == 2);
  }
  REQUIRE_THROWS_WITH(LoadCluster("dgx-z9000"), Contains("--cluster") && Contains("dgx-h100"));
  REQUIRE_THROWS_WITH(LoadCluster(Data("invalid/cluster_bad_transport.yaml")),
                      Contains("cluster_bad_transport.yaml") &&
                          Contains("inter_node.transport: 'omnipath' is not one of: infiniband, roce, efa"));
  REQUIRE_THROWS_WITH(LoadCluster(Data("invalid/cluster_efa_sharp.yaml")),
                      Contains("inter_node.sharp: SHARP is an InfiniBand feature"));
}

TEST_CASE("core: the network transport defaults to InfiniBand; the AWS preset says EFA", "[core]") {
  CHECK(LoadCluster("dgx-h100").inter_node.transport == NetworkTransport::kInfiniBand);
  CHECK(LoadCluster(Data("valid/small-cluster.yaml")).inter_node.transport == NetworkTransport::kInfiniBand);
  const ClusterSpec p5 = LoadCluster("aws-p5", 64);
  CHECK(p5.inter_node.transport == NetworkTransport::kAwsEfa);
  CHECK(std::string(ToString(p5.inter_node.transport)) == "efa");
  CHECK_FALSE(p5.inter_node.sharp);
  CHECK(p5.sources.count("inter_node.transport") == 1);
}

TEST_CASE("core: a job file loads and bad values are named", "[core]") {
  const JobSpec job = LoadJobYaml(Data("valid/job.yaml"));
  CHECK(job.global_batch == 512);
  CHECK(job.seq_len == 4096);
  CHECK(job.stack == "megatron-core");
  CHECK(job.TokensPerStep() == 512 * 4096);
}

TEST_CASE("core: cluster overrides replace profile fields for what-if studies", "[core]") {
  const ClusterSpec c = LoadCluster(Data("valid/cluster-overrides.yaml"));
  CHECK_THAT(c.gpu.hbm_capacity / GB(1), WithinRel(40.0, 1e-12));
  CHECK_THAT(c.gpu.nvlink_bandwidth / GBps(1), WithinRel(900.0, 1e-12));
  CHECK_THAT(c.inter_node.nic_bandwidth / GBps(1), WithinRel(100.0, 1e-12));
  CHECK_THAT(c.gpu.bf16_dense / TFlops(1), WithinRel(989.0, 1e-12));  // untouched fields stay
  CHECK(c.inter_node.tiers == 2);
}

// The bad-input table: each file fails with its file, key and problem named.
TEST_CASE("core: every kind of bad input names the file and the key", "[core]") {
  struct Case {
    const char* file;
    std::vector<const char*> expected;
  };
  const Case cases[] = {
      {"invalid/model_malformed.yaml", {"model_malformed.yaml:3:", "invalid YAML"}},
      {"invalid/model_empty.yaml", {"model_empty.yaml", "name: required key is missing",
                                    "hidden_size: required key is missing"}},
      {"invalid/model_wrong_types.yaml",
       {"hidden_size: 'wide' is not an integer", "num_layers: '32.5' is not an integer",
        "num_kv_heads: 'nan' is not an integer", "vocab_size: '99999999999999999999' is not an integer",
        "tied_embeddings: 'maybe' is not a boolean"}},
      {"invalid/model_missing_key.yaml", {"model_missing_key.yaml", "vocab_size: required key is missing"}},
      {"invalid/model_huge.yaml", {"vocab_size: 1000000000000 is implausibly large"}},
  };
  for (const Case& c : cases) {
    INFO(c.file);
    try {
      LoadModel(Data(c.file));
      FAIL("expected an error");
    } catch (const InvalidInput& e) {
      for (const char* text : c.expected) CHECK_THAT(std::string(e.what()), Contains(text));
    }
  }
  try {
    LoadGpuProfile(Data("invalid/gpu_nan.yaml"));
    FAIL("expected an error");
  } catch (const InvalidInput& e) {
    const std::string what = e.what();
    CHECK_THAT(what, Contains("peak.bf16: 'nan TFLOP/s' is not a FLOP rate"));
    CHECK_THAT(what, Contains("efficiency.gemm_max: must be in [0.01, 1], got 1.7"));
    CHECK_THAT(what, Contains("memory.capacity: must be in (0, 1e+15] B, got 0 B"));
  }
}
