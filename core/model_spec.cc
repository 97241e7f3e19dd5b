#include "core/model_spec.h"

namespace parasim {
namespace {

int64_t NormParameters(const ModelSpec& m) {
  return m.norm == NormKind::kLayerNorm && m.norm_bias ? 2 * m.hidden_size : m.hidden_size;
}

// Weights (and biases) of one MLP with hidden width f.
int64_t MlpParameters(const ModelSpec& m, int64_t f) {
  const int64_t h = m.hidden_size;
  if (m.mlp == MlpKind::kSwiGlu) return 3 * h * f + (m.linear_bias ? 2 * f + h : 0);
  return 2 * h * f + (m.linear_bias ? f + h : 0);
}

// DeepSeek's multi-head latent attention: Q through an optional low-rank
// bottleneck (with its RMSNorm), K and V from one shared latent (with its
// RMSNorm) plus a decoupled rotary key, output from the value heads.
int64_t MlaParameters(const ModelSpec& m) {
  const int64_t h = m.hidden_size, a = m.num_attention_heads;
  const int64_t qk = m.qk_nope_head_dim + m.qk_rope_head_dim;
  const int64_t q = m.q_lora_rank > 0 ? h * m.q_lora_rank + m.q_lora_rank + m.q_lora_rank * a * qk : h * a * qk;
  const int64_t kv = h * (m.kv_lora_rank + m.qk_rope_head_dim) + m.kv_lora_rank +
                     m.kv_lora_rank * a * (m.qk_nope_head_dim + m.v_head_dim);
  return q + kv + a * m.v_head_dim * h;
}

}  // namespace

int64_t ModelSpec::AttentionParameters() const {
  if (IsMla()) return MlaParameters(*this);
  const int64_t h = hidden_size, d = HeadDim();
  const int64_t q = num_attention_heads * d, kv = num_kv_heads * d;
  int64_t p = h * q + 2 * h * kv + q * h;  // Q, K, V, O
  if (qkv_bias) p += q + 2 * kv;
  if (linear_bias) p += h;                 // output projection bias
  if (qk_norm && qk_norm_weights) p += 2 * d;
  if (attention_sinks) p += num_attention_heads;
  return p;
}

int64_t ModelSpec::MoeLayerCount() const {
  if (!IsMoe()) return 0;
  const int64_t interval = moe_layer_interval > 0 ? moe_layer_interval : 1;
  int64_t n = 0;
  for (int64_t i = first_dense_layers; i < num_layers; ++i) n += (i + 1) % interval == 0 ? 1 : 0;
  return n;
}

int64_t ModelSpec::EmbeddingParameters() const {
  int64_t p = vocab_size * hidden_size;
  if (position == PositionKind::kLearned) p += max_position_embeddings * hidden_size;
  return p;
}

int64_t ModelSpec::LmHeadParameters() const { return tied_embeddings ? 0 : vocab_size * hidden_size; }

int64_t ModelSpec::DenseLayerParameters() const {
  return AttentionParameters() + norms_per_layer * NormParameters(*this) + MlpParameters(*this, ffn_hidden_size);
}

int64_t ModelSpec::LayerParameters() const {
  if (!IsMoe()) return DenseLayerParameters();
  int64_t p = AttentionParameters() + norms_per_layer * NormParameters(*this);
  p += hidden_size * num_experts + (router_bias ? num_experts : 0);  // router
  p += num_experts * MlpParameters(*this, moe_ffn_hidden_size);
  p += num_shared_experts * MlpParameters(*this, shared_expert_ffn_hidden_size);
  return p;
}

int64_t ModelSpec::ActiveLayerParameters() const {
  if (!IsMoe()) return LayerParameters();
  return LayerParameters() - (num_experts - experts_per_token) * MlpParameters(*this, moe_ffn_hidden_size);
}

int64_t ModelSpec::ParameterCount() const {
  return EmbeddingParameters() + MoeLayerCount() * LayerParameters() + DenseLayerCount() * DenseLayerParameters() +
         (final_norm ? NormParameters(*this) : 0) + LmHeadParameters();
}

int64_t ModelSpec::ActiveParameterCount() const {
  return EmbeddingParameters() + MoeLayerCount() * ActiveLayerParameters() +
         DenseLayerCount() * DenseLayerParameters() + (final_norm ? NormParameters(*this) : 0) + LmHeadParameters();
}

int64_t ModelSpec::MtpParameters() const {
  // Per module (DeepSeek-V3 §2.2): norms of the hidden state and of the next
  // token's embedding, the 2h→h projection, one transformer layer and the
  // norm before the shared output head.
  const int64_t layer = IsMoe() ? LayerParameters() : DenseLayerParameters();
  return mtp_layers * (3 * NormParameters(*this) + 2 * hidden_size * hidden_size + layer);
}

}  // namespace parasim
