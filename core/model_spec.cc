#include "core/model_spec.h"

#include <algorithm>

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
  const int64_t q = num_attention_heads * d, kv = KvHeads() * d;
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

bool ModelSpec::IsMoeLayer(int64_t i) const {
  if (!IsMoe() || i < first_dense_layers) return false;
  const int64_t interval = moe_layer_interval > 0 ? moe_layer_interval : 1;
  return (i + 1) % interval == 0;
}

// Every period-th layer global, the others local, where the count fits that
// pattern: Gemma 2 and gpt-oss alternate from a local layer 0 (transformers
// configuration_gemma2.py / gpt_oss layer_types), Gemma 3 has one global per
// sliding_window_pattern = 6 (configuration_gemma3.py: sliding unless
// (i + 1) % pattern == 0), Llama 4 one NoPE global per no_rope_layer_interval
// = 4 (configuration_llama4.py: no_rope_layers[i] = (i + 1) % 4 != 0).
// Other counts: the global layers spread evenly, the last layer global.
bool ModelSpec::IsLocalAttentionLayer(int64_t i) const {
  if (local_attention == LocalAttention::kNone || local_attention_layers <= 0) return false;
  if (local_attention_layers >= num_layers) return true;
  const int64_t global = num_layers - local_attention_layers;
  const int64_t period = num_layers / global;
  if (num_layers / period == global) return (i + 1) % period != 0;
  return (i + 1) * global / num_layers == i * global / num_layers;
}

std::array<int64_t, kNumLayerKinds> ModelSpec::LayerKindCounts() const {
  std::array<int64_t, kNumLayerKinds> n{};
  for (int64_t i = 0; i < num_layers; ++i) ++n[LayerKindOf(i)];
  return n;
}

bool ModelSpec::HasSeveralLayerKinds() const {
  const std::array<int64_t, kNumLayerKinds> n = LayerKindCounts();
  return std::count_if(n.begin(), n.end(), [](int64_t x) { return x > 0; }) > 1;
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
