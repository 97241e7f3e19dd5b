// `parasim models list | show NAME_OR_FILE`: the model shapes parasim knows.
#include <iomanip>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "core/loaders.h"

namespace parasim::cli {
namespace {

const char* MlpName(MlpKind k) { return k == MlpKind::kSwiGlu ? "swiglu" : "gelu"; }
const char* NormName(NormKind k) { return k == NormKind::kRmsNorm ? "rmsnorm" : "layernorm"; }
const char* PositionName(PositionKind k) {
  switch (k) {
    case PositionKind::kRope: return "rope";
    case PositionKind::kLearned: return "learned";
    case PositionKind::kAlibi: return "alibi";
  }
  return "?";
}

nlohmann::ordered_json ModelJson(const ModelSpec& m) {
  nlohmann::ordered_json j;
  j["name"] = m.name;
  j["source"] = m.source;
  j["hidden_size"] = m.hidden_size;
  j["num_layers"] = m.num_layers;
  j["num_attention_heads"] = m.num_attention_heads;
  j["num_kv_heads"] = m.num_kv_heads;
  j["head_dim"] = m.HeadDim();
  j["ffn_hidden_size"] = m.ffn_hidden_size;
  j["vocab_size"] = m.vocab_size;
  j["mlp"] = MlpName(m.mlp);
  j["norm"] = NormName(m.norm);
  j["position"] = PositionName(m.position);
  j["tied_embeddings"] = m.tied_embeddings;
  j["num_experts"] = m.num_experts;
  j["experts_per_token"] = m.experts_per_token;
  j["moe_ffn_hidden_size"] = m.moe_ffn_hidden_size;
  j["parameters"] = m.ParameterCount();
  j["active_parameters"] = m.ActiveParameterCount();
  j["embedding_parameters"] = m.EmbeddingParameters();
  j["layer_parameters"] = m.LayerParameters();
  j["lm_head_parameters"] = m.LmHeadParameters();
  return j;
}

std::string Billions(int64_t n) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(2) << static_cast<double>(n) / 1e9 << "B";
  return os.str();
}

const CommandRegistration kModels{
    "models", "List the built-in models or show one (preset, YAML file or HF config.json)", [](CLI::App& cmd) {
      auto out = std::make_shared<OutputOptions>();
      auto name = std::make_shared<std::string>();
      cmd.require_subcommand(1);
      CLI::App* list = cmd.add_subcommand("list", "List the built-in models");
      CLI::App* show = cmd.add_subcommand("show", "Show one model's shape and exact parameter count");
      show->add_option("model", *name, "Preset name or path")->required();
      AddOutputOptions(*list, *out);
      AddOutputOptions(*show, *out, /*csv_allowed=*/false);
      return std::function<void()>([=] {
        if (list->parsed()) {
          std::vector<ModelSpec> models;
          for (const std::string& n : ModelPresetNames()) models.push_back(LoadModel(n));
          std::ostringstream os;
          if (out->Parsed() == Format::kJson) {
            nlohmann::ordered_json j = nlohmann::ordered_json::array();
            for (const ModelSpec& m : models) j.push_back(ModelJson(m));
            os << j.dump(2) << "\n";
          } else if (out->Parsed() == Format::kCsv) {
            os << "name,parameters,hidden_size,num_layers,num_attention_heads,num_kv_heads,ffn_hidden_size,"
                  "vocab_size,num_experts\n";
            for (const ModelSpec& m : models) {
              os << m.name << "," << m.ParameterCount() << "," << m.hidden_size << "," << m.num_layers << ","
                 << m.num_attention_heads << "," << m.num_kv_heads << "," << m.ffn_hidden_size << ","
                 << m.vocab_size << "," << m.num_experts << "\n";
            }
          } else {
            os << std::left << std::setw(14) << "model" << std::right << std::setw(10) << "params" << std::setw(8)
               << "layers" << std::setw(8) << "hidden" << std::setw(7) << "heads" << std::setw(5) << "kv"
               << std::setw(8) << "ffn" << std::setw(8) << "vocab" << std::setw(9) << "experts\n";
            for (const ModelSpec& m : models) {
              os << std::left << std::setw(14) << m.name << std::right << std::setw(10) << Billions(m.ParameterCount())
                 << std::setw(8) << m.num_layers << std::setw(8) << m.hidden_size << std::setw(7)
                 << m.num_attention_heads << std::setw(5) << m.num_kv_heads << std::setw(8)
                 << (m.IsMoe() ? m.moe_ffn_hidden_size : m.ffn_hidden_size) << std::setw(8) << m.vocab_size
                 << std::setw(8) << (m.IsMoe() ? StrCat(m.num_experts, "x", m.experts_per_token) : "-") << "\n";
            }
          }
          WriteOutput(*out, os.str());
          return;
        }
        const ModelSpec m = LoadModel(*name);
        const nlohmann::ordered_json j = ModelJson(m);
        std::ostringstream os;
        if (out->Parsed() == Format::kJson) {
          os << j.dump(2) << "\n";
        } else {
          for (const auto& [key, value] : j.items()) {
            os << std::left << std::setw(22) << key << (value.is_string() ? value.get<std::string>() : value.dump())
               << "\n";
          }
        }
        WriteOutput(*out, os.str());
      });
    }};

}  // namespace
}  // namespace parasim::cli
