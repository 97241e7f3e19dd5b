// core: exact parameter counts of presets and of Hugging Face configs of every supported family.
#include <string>

#include <catch2/catch.hpp>

#include "core/error.h"
#include "core/loaders.h"

using namespace parasim;
using Catch::Matchers::Contains;

namespace {
std::string Data(const std::string& rel) { return std::string(PARASIM_SOURCE_DIR) + "/tests/testdata/" + rel; }
}  // namespace

TEST_CASE("core: preset parameter counts match the published models exactly", "[core]") {
  // Llama-2-7B: 32 x (4h² + 3hf + 2h) + 2Vh + h = 6,738,415,616 (HF model card).
  REQUIRE(LoadModel("llama2-7b").ParameterCount() == 6738415616LL);
  REQUIRE(LoadModel("llama2-13b").ParameterCount() == 13015864320LL);
  REQUIRE(LoadModel("llama2-70b").ParameterCount() == 68976648192LL);
  REQUIRE(LoadModel("llama3-8b").ParameterCount() == 8030261248LL);
  REQUIRE(LoadModel("llama3-70b").ParameterCount() == 70553706496LL);
  REQUIRE(LoadModel("llama2-1b").ParameterCount() == 1100048384LL);  // TinyLlama-1.1B
  REQUIRE(LoadModel("mixtral-8x7b").ParameterCount() == 46702792704LL);
}

TEST_CASE("core: Hugging Face config.json of every family gives the published parameter count", "[core]") {
  REQUIRE(LoadModel(Data("hf/mixtral-8x7b.json")).ParameterCount() == 46702792704LL);
  REQUIRE(LoadModel(Data("hf/llama-2-7b.json")).ParameterCount() == 6738415616LL);
  REQUIRE(LoadModel(Data("hf/mistral-7b.json")).ParameterCount() == 7241732096LL);
  REQUIRE(LoadModel(Data("hf/qwen2-0.5b.json")).ParameterCount() == 494032768LL);
  REQUIRE(LoadModel(Data("hf/gpt2.json")).ParameterCount() == 124439808LL);
  REQUIRE(LoadModel(Data("hf/pythia-160m.json")).ParameterCount() == 162322944LL);
  REQUIRE(LoadModel(Data("hf/mpt-7b.json")).ParameterCount() == 6649286656LL);
}

TEST_CASE("core: MoE active parameters count only the routed experts", "[core]") {
  const ModelSpec m = LoadModel("mixtral-8x7b");
  // 2 of 8 experts of 3·h·f each are active per token.
  const int64_t expert = 3LL * 4096 * 14336;
  REQUIRE(m.LayerParameters() - m.ActiveLayerParameters() == 6 * expert);
  const ModelSpec dense = LoadModel("llama2-7b");
  REQUIRE(dense.ActiveLayerParameters() == dense.LayerParameters());
}

TEST_CASE("core: a parasim YAML model counts every weight and bias", "[core]") {
  // Hand count: embedding 1000·64 + 128·64 = 72,192; layer: attention 12,288 + biases 192,
  // GELU MLP 32,768 + 320, two LayerNorms 256 → 45,824; ×2 layers; final norm 128; tied head.
  const ModelSpec m = LoadModel(Data("valid/tiny-model.yaml"));
  REQUIRE(m.EmbeddingParameters() == 72192);
  REQUIRE(m.LayerParameters() == 45824);
  REQUIRE(m.LmHeadParameters() == 0);
  REQUIRE(m.ParameterCount() == 163968);
}

TEST_CASE("core: bad model input is reported whole, with file, key and line", "[core]") {
  const std::string file = Data("invalid/model_bad_values.yaml");
  try {
    LoadModel(file);
    FAIL("expected an error");
  } catch (const InvalidInput& e) {
    const std::string what = e.what();
    CHECK_THAT(what, Contains("model_bad_values.yaml:3:13: num_layers: -3 is below the minimum 1"));
    CHECK_THAT(what, Contains("mlp: 'relu' is not one of: swiglu, gelu"));
    CHECK_THAT(what, Contains("colour: unknown key"));
    CHECK(e.issues().size() == 3);
  }
  REQUIRE_THROWS_WITH(LoadModel(Data("hf/unknown-arch.json")),
                      Contains("model_type: 'falcon' is not supported") && Contains("gpt_neox"));
  REQUIRE_THROWS_WITH(LoadModel(Data("hf/broken.json")), Contains("broken.json:2:") && Contains("invalid JSON"));
  REQUIRE_THROWS_WITH(LoadModel("llama9-1t"), Contains("--model") && Contains("llama2-7b"));
}
