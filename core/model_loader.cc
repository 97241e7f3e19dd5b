// Model specs from presets, parasim YAML files and Hugging Face config.json.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/did_you_mean.h"
#include "core/input_file.h"
#include "core/internal/hf_families.h"
#include "core/internal/json_fields.h"
#include "core/internal/yaml_reader.h"
#include "core/loaders.h"
#include "core/model_presets.h"
#include "core/validate.h"

namespace parasim {
namespace {

using internal::JsonFields;
using internal::YamlMap;

void AddModelIssues(const ModelSpec& m, const std::string& file, IssueList& issues) {
  for (Issue& issue : ValidateModel(m, file)) issues.Add(std::move(issue));
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string ReadFile(const std::string& path) {
  return ReadInputFile(path, "--model");
}

// --- Hugging Face config.json ---------------------------------------------

// The architecture family of a config: model_type first, then architectures[0].
std::string HfFamily(const nlohmann::json& j) {
  if (j.contains("model_type") && j["model_type"].is_string()) return j["model_type"].get<std::string>();
  if (j.contains("architectures") && j["architectures"].is_array() && !j["architectures"].empty() &&
      j["architectures"][0].is_string()) {
    const std::string arch = j["architectures"][0].get<std::string>();
    static const std::pair<const char*, const char*> kArchToType[] = {
        {"LlamaForCausalLM", "llama"},     {"MistralForCausalLM", "mistral"}, {"MixtralForCausalLM", "mixtral"},
        {"Qwen2ForCausalLM", "qwen2"},     {"GPTNeoXForCausalLM", "gpt_neox"}, {"GPT2LMHeadModel", "gpt2"},
        {"MPTForCausalLM", "mpt"},         {"Qwen3ForCausalLM", "qwen3"},      {"Qwen3MoeForCausalLM", "qwen3_moe"},
        {"Gemma2ForCausalLM", "gemma2"},   {"Gemma3ForCausalLM", "gemma3_text"},
        {"Gemma3ForConditionalGeneration", "gemma3"}, {"DeepseekV2ForCausalLM", "deepseek_v2"},
        {"DeepseekV3ForCausalLM", "deepseek_v3"},     {"Llama4ForConditionalGeneration", "llama4"},
        {"Llama4ForCausalLM", "llama4_text"},         {"GptOssForCausalLM", "gpt_oss"}};
    for (const auto& [a, t] : kArchToType) {
      if (arch == a) return t;
    }
    return arch;
  }
  return "";
}

ModelSpec FromLlamaLike(JsonFields& f, const std::string& family) {
  ModelSpec m;
  internal::ReadCommon(f, m, /*tied_default=*/false);
  // Qwen2 has biases on Q, K, V only; Llama may have attention_bias / mlp_bias.
  m.qkv_bias = family == "qwen2" ? true : f.Bool("attention_bias", false);
  m.linear_bias = f.Bool("mlp_bias", false);
  if (family == "llama" && m.qkv_bias) m.linear_bias = true;  // Llama's attention_bias also biases o_proj
  if (family == "mixtral") {
    m.num_experts = f.Int("num_local_experts");
    m.experts_per_token = f.Int("num_experts_per_tok");
    m.moe_ffn_hidden_size = f.Int("intermediate_size");
  } else {
    m.ffn_hidden_size = f.Int("intermediate_size");
  }
  return m;
}

ModelSpec FromGptNeoX(JsonFields& f) {
  ModelSpec m;
  m.hidden_size = f.Int("hidden_size");
  m.num_layers = f.Int("num_hidden_layers");
  m.num_attention_heads = f.Int("num_attention_heads");
  m.num_kv_heads = m.num_attention_heads;
  m.ffn_hidden_size = f.Int("intermediate_size");
  m.vocab_size = f.Int("vocab_size");
  m.tied_embeddings = f.Bool("tie_word_embeddings", false);
  m.mlp = MlpKind::kGelu;
  m.norm = NormKind::kLayerNorm;
  m.norm_bias = true;
  m.position = PositionKind::kRope;
  m.qkv_bias = f.Bool("attention_bias", true);
  m.linear_bias = m.qkv_bias;
  return m;
}

ModelSpec FromGpt2(JsonFields& f) {
  ModelSpec m;
  m.hidden_size = f.Int("n_embd");
  m.num_layers = f.Int("n_layer");
  m.num_attention_heads = f.Int("n_head");
  m.num_kv_heads = m.num_attention_heads;
  m.ffn_hidden_size = f.Int("n_inner", 4 * m.hidden_size);
  m.vocab_size = f.Int("vocab_size");
  m.max_position_embeddings = f.Int("n_positions");
  m.tied_embeddings = true;  // GPT-2 always shares wte with the LM head
  m.mlp = MlpKind::kGelu;
  m.norm = NormKind::kLayerNorm;
  m.norm_bias = true;
  m.position = PositionKind::kLearned;
  m.qkv_bias = true;
  m.linear_bias = true;
  return m;
}

ModelSpec FromMpt(JsonFields& f) {
  ModelSpec m;
  m.hidden_size = f.Int("d_model");
  m.num_layers = f.Int("n_layers");
  m.num_attention_heads = f.Int("n_heads");
  m.num_kv_heads = m.num_attention_heads;
  m.ffn_hidden_size = static_cast<int64_t>(f.Double("expansion_ratio", 4.0) * m.hidden_size);
  m.vocab_size = f.Int("vocab_size");
  m.max_position_embeddings = f.Int("max_seq_len", 2048);
  m.tied_embeddings = true;  // MPT reuses wte for the output logits
  m.mlp = MlpKind::kGelu;
  m.norm = NormKind::kLayerNorm;
  const bool no_bias = f.Bool("no_bias", true);
  m.norm_bias = !no_bias;
  m.qkv_bias = !no_bias;
  m.linear_bias = !no_bias;
  m.position = PositionKind::kAlibi;
  return m;
}

// --- parasim YAML ------------------------------------------------------------

MlpKind ParseMlp(YamlMap& map) {
  const std::string v = map.String("mlp", "swiglu");
  if (v == "swiglu") return MlpKind::kSwiGlu;
  if (v == "gelu") return MlpKind::kGelu;
  map.AddIssue("mlp", StrCat("'", v, "' is not one of: swiglu, gelu"));
  return MlpKind::kSwiGlu;
}

NormKind ParseNorm(YamlMap& map) {
  const std::string v = map.String("norm", "rmsnorm");
  if (v == "rmsnorm") return NormKind::kRmsNorm;
  if (v == "layernorm") return NormKind::kLayerNorm;
  map.AddIssue("norm", StrCat("'", v, "' is not one of: rmsnorm, layernorm"));
  return NormKind::kRmsNorm;
}

PositionKind ParsePosition(YamlMap& map) {
  const std::string v = map.String("position", "rope");
  if (v == "rope") return PositionKind::kRope;
  if (v == "learned") return PositionKind::kLearned;
  if (v == "alibi") return PositionKind::kAlibi;
  map.AddIssue("position", StrCat("'", v, "' is not one of: rope, learned, alibi"));
  return PositionKind::kRope;
}

}  // namespace

std::vector<std::string> ModelPresetNames() {
  std::vector<std::string> names;
  for (const ModelSpec& m : ModelPresets()) names.push_back(m.name);
  return names;
}

ModelSpec LoadModelYaml(const std::string& path) {
  IssueList issues;
  YamlMap map(internal::ParseYamlFile(path), path, "", &issues);
  map.Int("schema_version", 1, 1);
  ModelSpec m;
  m.name = map.String("name");
  m.source = map.String("source", path);
  m.hidden_size = map.Int("hidden_size", std::nullopt, 1);
  m.num_layers = map.Int("num_layers", std::nullopt, 1);
  m.num_attention_heads = map.Int("num_attention_heads", std::nullopt, 1);
  m.num_kv_heads = map.Int("num_kv_heads", m.num_attention_heads, 1);
  m.head_dim = map.Int("head_dim", 0, 0);
  m.vocab_size = map.Int("vocab_size", std::nullopt, 1);
  m.mlp = ParseMlp(map);
  m.norm = ParseNorm(map);
  m.position = ParsePosition(map);
  m.max_position_embeddings = map.Int("max_position_embeddings", 0, 0);
  m.tied_embeddings = map.Bool("tied_embeddings", false);
  m.qkv_bias = map.Bool("qkv_bias", false);
  m.linear_bias = map.Bool("linear_bias", false);
  m.norm_bias = map.Bool("norm_bias", m.norm == NormKind::kLayerNorm);
  m.num_experts = map.Int("num_experts", 0, 0);
  m.experts_per_token = map.Int("experts_per_token", m.num_experts > 0 ? 2 : 0, 0);
  m.moe_ffn_hidden_size = map.Int("moe_ffn_hidden_size", 0, 0);
  m.ffn_hidden_size = map.Int("ffn_hidden_size", m.num_experts > 0 ? std::optional<int64_t>(0) : std::nullopt, 0);
  map.Finish();
  if (issues.empty()) AddModelIssues(m, path, issues);
  issues.ThrowIfAny();
  return m;
}

ModelSpec LoadHuggingFaceConfig(const std::string& path) {
  const std::string text = ReadFile(path);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // Turn the byte offset into line:column.
    int line = 1, column = 1;
    for (size_t i = 0; i < e.byte && i < text.size(); ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    throw InvalidInput({Issue{path, "", line, column, StrCat("invalid JSON at byte offset ", e.byte)}});
  } catch (const nlohmann::json::exception& e) {   // a number out of range (1e400), ...
    std::string what = e.what();
    const size_t cut = what.find("] ");
    throw InvalidInput(path, "", StrCat("invalid JSON: ", cut == std::string::npos ? what : what.substr(cut + 2)));
  }
  if (!j.is_object()) throw InvalidInput(path, "", "expected a JSON object (a Hugging Face config.json)");
  const std::string family = HfFamily(j);
  IssueList issues;
  JsonFields f(j, path, issues);
  ModelSpec m;
  if (family == "llama" || family == "mistral" || family == "mixtral" || family == "qwen2") {
    m = FromLlamaLike(f, family);
  } else if (internal::LoadModernFamily(j, family, path, issues, m)) {
    // read by core/model_loader_hf.cc
  } else if (family == "gpt_neox") {
    m = FromGptNeoX(f);
  } else if (family == "gpt2") {
    m = FromGpt2(f);
  } else if (family == "mpt") {
    m = FromMpt(f);
  } else {
    throw InvalidInput(path, "model_type",
                StrCat(family.empty() ? std::string("missing") : "'" + family + "' is not supported",
                       "; supported: llama, mistral, mixtral, qwen2, gpt_neox, gpt2, mpt, ",
                       internal::ModernFamilyNames()));
  }
  issues.ThrowIfAny();
  m.name = std::filesystem::path(path).parent_path().filename().string();
  if (m.name.empty()) m.name = family;
  m.source = StrCat("Hugging Face config.json (", family, "): ", path);
  AddModelIssues(m, path, issues);
  issues.ThrowIfAny();
  return m;
}

ModelSpec LoadModel(const std::string& name_or_path) {
  for (const ModelSpec& m : ModelPresets()) {
    if (m.name == name_or_path) return m;
  }
  std::error_code dir_ec;   // a name too long to stat is not a directory (no throw)
  if (std::filesystem::is_directory(name_or_path, dir_ec)) {
    // A Hugging Face checkout as downloaded: its config.json describes the model.
    const std::filesystem::path config = std::filesystem::path(name_or_path) / "config.json";
    if (!std::filesystem::is_regular_file(config)) {
      throw InvalidInput(name_or_path, "--model", "directory has no config.json (expected a Hugging Face checkout)");
    }
    ModelSpec m = LoadHuggingFaceConfig(config.string());
    m.name = std::filesystem::path(name_or_path).lexically_normal().filename().string();
    if (m.name.empty()) m.name = std::filesystem::path(name_or_path).lexically_normal().parent_path().filename().string();
    return m;
  }
  if (PathExists(name_or_path)) {
    if (EndsWith(name_or_path, ".json")) return LoadHuggingFaceConfig(name_or_path);
    return LoadModelYaml(name_or_path);
  }
  std::string names;
  for (const std::string& n : ModelPresetNames()) names += (names.empty() ? "" : ", ") + n;
  throw InvalidInput("", "--model",
                     StrCat("'", ShortName(name_or_path), "' is neither a preset nor an existing file; ",
                            DidYouMean(name_or_path, ModelPresetNames()), "presets: ", names));
}

}  // namespace parasim
