// Built-in model shapes, each from its published config (the source field).
#include "core/model_presets.h"

namespace parasim {
namespace {

ModelSpec Llama(std::string name, std::string source, int64_t h, int64_t layers, int64_t heads,
                int64_t kv_heads, int64_t ffn, int64_t vocab) {
  ModelSpec m;
  m.name = std::move(name);
  m.source = std::move(source);
  m.hidden_size = h;
  m.num_layers = layers;
  m.num_attention_heads = heads;
  m.num_kv_heads = kv_heads;
  m.ffn_hidden_size = ffn;
  m.vocab_size = vocab;
  m.mlp = MlpKind::kSwiGlu;
  m.norm = NormKind::kRmsNorm;
  m.position = PositionKind::kRope;
  return m;
}

std::vector<ModelSpec> MakePresets() {
  std::vector<ModelSpec> all;
  all.push_back(Llama("llama2-1b",
                      "Llama-2 architecture at 1.1B: TinyLlama-1.1B's shape (Zhang et al. 2024, "
                      "arXiv:2401.02385: 'exactly the same architecture and tokenizer as Llama 2'), "
                      "HF TinyLlama/TinyLlama-1.1B config.json",
                      2048, 22, 32, 4, 5632, 32000));
  all.push_back(Llama("llama2-7b", "Touvron et al. 2023 (Llama 2), HF meta-llama/Llama-2-7b-hf config.json",
                      4096, 32, 32, 32, 11008, 32000));
  all.push_back(Llama("llama2-13b", "Touvron et al. 2023 (Llama 2), HF meta-llama/Llama-2-13b-hf config.json",
                      5120, 40, 40, 40, 13824, 32000));
  all.push_back(Llama("llama2-70b", "Touvron et al. 2023 (Llama 2), HF meta-llama/Llama-2-70b-hf config.json",
                      8192, 80, 64, 8, 28672, 32000));
  all.push_back(Llama("llama3-8b", "Llama 3 herd paper (arXiv:2407.21783) Table 3, HF meta-llama/Meta-Llama-3-8B",
                      4096, 32, 32, 8, 14336, 128256));
  all.push_back(Llama("llama3-70b", "Llama 3 herd paper (arXiv:2407.21783) Table 3, HF meta-llama/Meta-Llama-3-70B",
                      8192, 80, 64, 8, 28672, 128256));
  all.push_back(Llama("llama3-405b", "Llama 3 herd paper (arXiv:2407.21783) Table 3, HF meta-llama/Llama-3.1-405B",
                      16384, 126, 128, 8, 53248, 128256));
  {
    ModelSpec m = Llama("mixtral-8x7b", "Jiang et al. 2024 (Mixtral), HF mistralai/Mixtral-8x7B-v0.1 config.json",
                        4096, 32, 32, 8, 14336, 32000);
    m.num_experts = 8;
    m.experts_per_token = 2;
    m.moe_ffn_hidden_size = 14336;
    all.push_back(m);
  }
  {
    // GPT-3 175B: Brown et al. 2020 Table 2.1 (d_model 12288, 96 layers, 96 heads, n_ctx 2048),
    // GPT-2 architecture: LayerNorm with bias, biases everywhere, learned positions, tied embeddings.
    ModelSpec m = Llama("gpt3-175b", "Brown et al. 2020 (GPT-3) Table 2.1; GPT-2 layer layout", 12288, 96, 96,
                        96, 4 * 12288, 50257);
    m.mlp = MlpKind::kGelu;
    m.norm = NormKind::kLayerNorm;
    m.norm_bias = true;
    m.position = PositionKind::kLearned;
    m.max_position_embeddings = 2048;
    m.qkv_bias = true;
    m.linear_bias = true;
    m.tied_embeddings = true;
    all.push_back(m);
  }
  return all;
}

}  // namespace

const std::vector<ModelSpec>& ModelPresets() {
  static const std::vector<ModelSpec> kPresets = MakePresets();
  return kPresets;
}

}  // namespace parasim
