// A transformer language model's shape: enough to count parameters exactly,
// FLOPs per layer and activation memory. Loaded from a built-in preset, a
// parasim YAML file or a Hugging Face config.json (core/model_loader.h).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace parasim {

enum class MlpKind { kSwiGlu, kGelu };            // gated 3-matrix vs plain 2-matrix MLP
// Layers whose attention sees only part of the sequence.
enum class LocalAttention { kNone, kSliding, kChunked };
enum class NormKind { kRmsNorm, kLayerNorm };
enum class PositionKind { kRope, kLearned, kAlibi };

// What sets a layer's cost apart from its neighbours': routed experts or a
// dense MLP, local (sliding-window / chunked) or full attention. Index =
// kLayerKindMoe bit | kLayerKindLocal bit.
inline constexpr int kLayerKindMoe = 1, kLayerKindLocal = 2, kNumLayerKinds = 4;

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
  // Today's layouts (all zero/false for the Llama-2-style models above).
  bool gated_gelu = false;            // GeGLU (Gemma): counted as a gated MLP, GELU gate
  double norm_eps = 0;                // for launch flags; 0 = unknown
  double rope_theta = 0;              // for launch flags; 0 = unknown
  int64_t norms_per_layer = 2;        // Gemma 2/3: 4 (pre and post norms around each block)
  bool qk_norm = false;               // norm on Q and K per head
  bool qk_norm_weights = true;        // Qwen3/Gemma 3: RMSNorm with weights; Llama 4: weightless L2 norm
  bool attention_sinks = false;       // gpt-oss: one learned logit per head and layer
  bool router_bias = false;           // gpt-oss router bias; DeepSeek-V3 score-correction bias
  int64_t num_shared_experts = 0;     // always-on experts beside the routed ones
  int64_t shared_expert_ffn_hidden_size = 0;  // width of ONE shared expert
  int64_t first_dense_layers = 0;     // DeepSeek first_k_dense_replace: leading dense layers
  int64_t moe_layer_interval = 1;     // MoE on layers with (i+1) % interval == 0 (Llama 4, Qwen)
  int64_t mtp_layers = 0;             // DeepSeek-V3 multi-token-prediction modules (not in ParameterCount)
  // Multi-head latent attention (DeepSeek-V2/V3); kv_lora_rank > 0 switches it on.
  int64_t q_lora_rank = 0;            // 0: Q projected directly
  int64_t kv_lora_rank = 0;
  int64_t qk_nope_head_dim = 0, qk_rope_head_dim = 0, v_head_dim = 0;
  // Attention pattern: `local_attention_layers` of num_layers see `attention_window` keys
  // (sliding window) or their `attention_window`-token chunk (Llama 4); the rest see all.
  LocalAttention local_attention = LocalAttention::kNone;
  int64_t attention_window = 0;
  int64_t local_attention_layers = 0;
  double attn_logit_softcap = 0;      // Gemma 2 (fused into the attention kernel)
  double final_logit_softcap = 0;     // Gemma 2
  int64_t vision_parameters = 0;      // vision tower + projector of a multimodal checkpoint (not counted)

  int64_t HeadDim() const { return head_dim > 0 ? head_dim : hidden_size / num_attention_heads; }
  // K/V heads g; num_kv_heads = 0 means multi-head attention (g = a).
  int64_t KvHeads() const { return num_kv_heads > 0 ? num_kv_heads : num_attention_heads; }
  bool IsMoe() const { return num_experts > 0; }
  bool IsMla() const { return kv_lora_rank > 0; }
  int64_t MoeLayerCount() const;           // layers with routed experts
  int64_t DenseLayerCount() const { return num_layers - MoeLayerCount(); }
  bool MixesLayerKinds() const { return IsMoe() && DenseLayerCount() > 0; }
  // Layer i (0-based): routed experts (first_dense_layers, moe_layer_interval),
  // local attention (see model_spec.cc for the pattern), its kind index.
  bool IsMoeLayer(int64_t i) const;
  bool IsLocalAttentionLayer(int64_t i) const;
  int LayerKindOf(int64_t i) const {
    return (IsMoeLayer(i) ? kLayerKindMoe : 0) | (IsLocalAttentionLayer(i) ? kLayerKindLocal : 0);
  }
  // Layers of each kind over the model; true when more than one kind occurs.
  std::array<int64_t, kNumLayerKinds> LayerKindCounts() const;
  bool HasSeveralLayerKinds() const;
  int64_t ParameterCount() const;          // exact, all weights and biases (no MTP, no vision tower)
  int64_t ActiveParameterCount() const;    // per token: routed experts counted top-k times
  int64_t EmbeddingParameters() const;     // input embedding (+ learned positions)
  int64_t LmHeadParameters() const;        // 0 when tied... see DECISIONS: MFU counts it anyway
  int64_t LayerParameters() const;         // one transformer layer (an MoE layer for MoE models)
  int64_t DenseLayerParameters() const;    // one layer with the dense MLP
  int64_t ActiveLayerParameters() const;   // one layer, only experts_per_token experts
  int64_t AttentionParameters() const;     // one layer's attention block (projections, norms inside)
  int64_t MtpParameters() const;           // the MTP modules' own weights (embedding/head shared)
};

}  // namespace parasim
