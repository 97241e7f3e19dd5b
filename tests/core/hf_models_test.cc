// core: today's models load from their real config.json (directory form, as
// downloaded) with the published parameter counts (tests/testdata/hf/SOURCES.md).
#include <string>

#include <catch2/catch.hpp>

#include "core/error.h"
#include "core/loaders.h"

using namespace parasim;
using Catch::Matchers::Contains;
using Catch::Matchers::WithinRel;

namespace {

std::string Hf(const std::string& dir) { return std::string(PARASIM_SOURCE_DIR) + "/tests/testdata/hf/" + dir; }

struct Published {
  const char* dir;
  double total;        // published count of what `counted` says
  double active;       // 0: not published
  bool with_vision;    // the published figure includes the vision tower
  bool active_without_embedding;
};

// Within 0.5 %: the published figures are rounded to 3-4 digits.
constexpr Published kPublished[] = {
    {"qwen2.5-7b", 7.61e9, 0, false, false},
    {"qwen3-8b", 8.2e9, 0, false, false},
    {"qwen3-30b-a3b", 30.5e9, 3.3e9, false, false},
    {"gemma-2-9b", 9241705984.0, 0, false, false},
    {"gemma-3-1b", 999885952.0, 0, false, false},
    {"gemma-3-27b", 27e9, 0, false, false},
    {"deepseek-v2", 236e9, 21e9, false, false},
    {"deepseek-v3", 671e9, 0, false, false},
    {"llama-4-scout", 109e9, 17e9, true, false},
    {"llama-4-maverick", 400e9, 17e9, true, false},
    {"gpt-oss-20b", 20.91e9, 3.61e9, false, true},
    {"gpt-oss-120b", 116.83e9, 5.13e9, false, true},
    {"mixtral-8x7b", 46.7e9, 12.9e9, false, false},
};

}  // namespace

TEST_CASE("core: today's models match their published parameter counts within 0.5%", "[core][hf]") {
  for (const Published& p : kPublished) {
    INFO(p.dir);
    const ModelSpec m = LoadModel(Hf(p.dir));
    CHECK(m.name == p.dir);
    const double total = static_cast<double>(m.ParameterCount() + (p.with_vision ? m.vision_parameters : 0));
    CHECK_THAT(total, WithinRel(p.total, 0.005));
    if (p.active > 0) {
      const double active = static_cast<double>(m.ActiveParameterCount() -
                                                (p.active_without_embedding ? m.EmbeddingParameters() : 0));
      // Active counts are published to two digits ("17B", "3.3B"): 2 % there.
      CHECK_THAT(active, WithinRel(p.active, 0.02));
    }
  }
}

TEST_CASE("core: exact counts where the checkpoint's own total is published", "[core][hf]") {
  CHECK(LoadModel(Hf("qwen2.5-7b")).ParameterCount() == 7615616512);     // safetensors total_size / 2
  CHECK(LoadModel(Hf("gemma-2-9b")).ParameterCount() == 9241705984);
  CHECK(LoadModel(Hf("gemma-3-1b")).ParameterCount() == 999885952);
  CHECK(LoadModel(Hf("mixtral-8x7b")).ParameterCount() == 46702792704);
}

TEST_CASE("core: DeepSeek-V3 MTP module and checkpoint total", "[core][hf]") {
  const ModelSpec m = LoadModel(Hf("deepseek-v3"));
  CHECK(m.IsMla());
  CHECK(m.mtp_layers == 1);
  CHECK(m.first_dense_layers == 3);
  CHECK(m.MoeLayerCount() == 58);
  CHECK(m.num_shared_experts == 1);
  // The checkpoint stores the MTP module with its own copies of embedding and
  // head: 671B + 14B = 685B (README_WEIGHTS.md).
  const double checkpoint = static_cast<double>(m.ParameterCount() + m.MtpParameters() + m.EmbeddingParameters() +
                                                m.LmHeadParameters());
  CHECK_THAT(checkpoint, WithinRel(685e9, 0.005));
}

TEST_CASE("core: layer patterns of today's models", "[core][hf]") {
  const ModelSpec scout = LoadModel(Hf("llama-4-scout"));
  const ModelSpec maverick = LoadModel(Hf("llama-4-maverick"));
  CHECK(scout.MoeLayerCount() == 48);
  CHECK(maverick.MoeLayerCount() == 24);      // every second layer (interleave_moe_layer_step 2)
  CHECK(maverick.DenseLayerCount() == 24);
  CHECK(scout.local_attention == LocalAttention::kChunked);
  CHECK(scout.local_attention_layers == 36);  // 3 chunked RoPE layers : 1 global NoPE layer
  CHECK(scout.attention_window == 8192);
  CHECK(scout.vision_parameters > 8e8);
  CHECK(scout.vision_parameters < 9e8);
  const ModelSpec g2 = LoadModel(Hf("gemma-2-9b"));
  CHECK(g2.local_attention_layers == 21);     // 1:1 local/global
  CHECK(g2.attention_window == 4096);
  CHECK(g2.attn_logit_softcap == 50.0);
  CHECK(g2.final_logit_softcap == 30.0);
  const ModelSpec g3 = LoadModel(Hf("gemma-3-27b"));
  CHECK(g3.local_attention_layers == 52);     // 5 local : 1 global over 62 layers
  CHECK(g3.attention_window == 1024);
  CHECK(g3.qk_norm);
  const ModelSpec oss = LoadModel(Hf("gpt-oss-120b"));
  CHECK(oss.local_attention_layers == 18);
  CHECK(oss.attention_window == 128);
  CHECK(oss.attention_sinks);
  const ModelSpec q3 = LoadModel(Hf("qwen3-30b-a3b"));
  CHECK(q3.num_shared_experts == 0);
  CHECK(q3.qk_norm);
}

TEST_CASE("core: a directory without config.json and a bad nested field are input errors", "[core][hf]") {
  CHECK_THROWS_AS(LoadModel(std::string(PARASIM_SOURCE_DIR) + "/tests/testdata/traces"), InvalidInput);
  try {
    LoadModel(std::string(PARASIM_SOURCE_DIR) + "/tests/testdata/traces");
  } catch (const InvalidInput& e) {
    CHECK_THAT(std::string(e.what()), Contains("config.json"));
  }
}

TEST_CASE("core: the usable part of an NVLink domain becomes the job's node", "[core][cluster]") {
  const std::string data = std::string(PARASIM_SOURCE_DIR) + "/tests/testdata/";
  const ClusterSpec whole = LoadCluster("gb300-nvl72");
  CHECK(whole.gpus_per_node == 72);
  CHECK(whole.intra_node.nvlink_domain_size == 72);
  const ClusterSpec part = LoadCluster(data + "valid/gb300-nvl72-64.yaml");
  CHECK(part.gpus_per_node == 64);
  CHECK(part.intra_node.nvlink_domain_size == 64);
  CHECK(part.inter_node.nics_per_node == 64);
  CHECK(part.gpu.name == "gb300");
  try {
    LoadCluster(data + "invalid/nvl72-usable-too-large.yaml");
    FAIL("expected InvalidInput");
  } catch (const InvalidInput& e) {
    CHECK_THAT(std::string(e.what()), Contains("intra_node.nvlink_domain_usable"));
  }
}
