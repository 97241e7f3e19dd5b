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

int64_t AttentionParameters(const ModelSpec& m) {
  const int64_t h = m.hidden_size, d = m.HeadDim();
  const int64_t q = m.num_attention_heads * d, kv = m.num_kv_heads * d;
  int64_t p = h * q + 2 * h * kv + q * h;  // Q, K, V, O
  if (m.qkv_bias) p += q + 2 * kv;
  if (m.linear_bias) p += h;               // output projection bias
  return p;
}

}  // namespace

int64_t ModelSpec::EmbeddingParameters() const {
  int64_t p = vocab_size * hidden_size;
  if (position == PositionKind::kLearned) p += max_position_embeddings * hidden_size;
  return p;
}

int64_t ModelSpec::LmHeadParameters() const { return tied_embeddings ? 0 : vocab_size * hidden_size; }

int64_t ModelSpec::LayerParameters() const {
  int64_t p = AttentionParameters(*this) + 2 * NormParameters(*this);
  if (IsMoe()) {
    p += hidden_size * num_experts;  // router
    p += num_experts * MlpParameters(*this, moe_ffn_hidden_size);
  } else {
    p += MlpParameters(*this, ffn_hidden_size);
  }
  return p;
}

int64_t ModelSpec::ActiveLayerParameters() const {
  if (!IsMoe()) return LayerParameters();
  return LayerParameters() - (num_experts - experts_per_token) * MlpParameters(*this, moe_ffn_hidden_size);
}

int64_t ModelSpec::ParameterCount() const {
  return EmbeddingParameters() + num_layers * LayerParameters() + (final_norm ? NormParameters(*this) : 0) +
         LmHeadParameters();
}

}  // namespace parasim
