// A transformer language model's shape: enough to count parameters exactly,
// FLOPs per layer and activation memory. Loaded from a built-in preset, a
// parasim YAML file or a Hugging Face config.json (core/model_loader.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace parasim {

enum class MlpKind { kSwiGlu, kGelu };            // gated 3-matrix vs plain 2-matrix MLP
enum class NormKind { kRmsNorm, kLayerNorm };
enum class PositionKind { kRope, kLearned, kAlibi };

struct ModelSpec {
  std::string name;
  std::string source;            // where the shape comes from (paper, HF config, file)
  int64_t hidden_size = 0;       // h
  int64_t num_layers = 0;        // L
  int64_t num_attention_heads = 0;  // a
  int64_t num_kv_heads = 0;      // g (GQA); = a for MHA
  int64_t head_dim = 0;          // d; 0 means h / a
  int64_t ffn_hidden_size = 0;   // f (dense MLP)
  int64_t vocab_size = 0;        // V
  MlpKind mlp = MlpKind::kSwiGlu;
  NormKind norm = NormKind::kRmsNorm;
  PositionKind position = PositionKind::kRope;
  int64_t max_position_embeddings = 0;  // only counted for learned positions
  bool tied_embeddings = false;
  bool qkv_bias = false;         // biases on Q, K, V projections (qwen2, gpt2, gpt_neox)
  bool linear_bias = false;      // biases on output and MLP projections (gpt2, gpt_neox)
  bool norm_bias = false;        // LayerNorm with bias
  bool final_norm = true;
  // Mixture of experts (num_experts = 0: dense model).
  int64_t num_experts = 0;
  int64_t experts_per_token = 0;  // top-k
  int64_t moe_ffn_hidden_size = 0;

  int64_t HeadDim() const { return head_dim > 0 ? head_dim : hidden_size / num_attention_heads; }
  bool IsMoe() const { return num_experts > 0; }
  int64_t ParameterCount() const;          // exact, all weights and biases
  int64_t EmbeddingParameters() const;     // input embedding (+ learned positions)
  int64_t LmHeadParameters() const;        // 0 when tied... see DECISIONS: MFU counts it anyway
  int64_t LayerParameters() const;         // one transformer layer
  int64_t ActiveLayerParameters() const;   // one layer, only experts_per_token experts
};

}  // namespace parasim
