#include "cost_model/flops.h"

namespace parasim {

ModelFlops CountModelFlops(const ModelSpec& m) {
  ModelFlops f;
  const double h = static_cast<double>(m.hidden_size);
  const double d = static_cast<double>(m.HeadDim());
  const double a = static_cast<double>(m.num_attention_heads);
  const double g = static_cast<double>(m.num_kv_heads > 0 ? m.num_kv_heads : m.num_attention_heads);
  const double mats = m.mlp == MlpKind::kSwiGlu ? 3.0 : 2.0;  // gate+up+down vs fc1+fc2
  f.attn_width = a * d;
  f.w.q = h * a * d;
  f.w.kv = 2.0 * h * g * d;
  f.w.out = a * d * h;
  if (m.IsMoe()) {
    const double fe = static_cast<double>(m.moe_ffn_hidden_size > 0 ? m.moe_ffn_hidden_size : m.ffn_hidden_size);
    f.w.mlp = static_cast<double>(m.experts_per_token) * mats * h * fe;
    f.w.expert_total = static_cast<double>(m.num_experts) * mats * h * fe;
    f.w.router = h * static_cast<double>(m.num_experts);
  } else {
    f.w.mlp = mats * h * static_cast<double>(m.ffn_hidden_size);
  }
  f.w.lm_head = h * static_cast<double>(m.vocab_size);
  f.num_layers = m.num_layers;
  f.n_matmul = static_cast<double>(m.num_layers) * f.w.Layer() + f.w.lm_head;
  return f;
}

double ModelFlops::ModelFlopsPerToken(int64_t seq_len) const {
  return 6.0 * n_matmul + 12.0 * static_cast<double>(num_layers) * attn_width * static_cast<double>(seq_len);
}

double ModelFlops::HardwareFlopsPerToken(int64_t seq_len, RecomputeMode recompute, double sac_fraction) const {
  const double attention_fwd = 4.0 * attn_width * static_cast<double>(seq_len);
  const double L = static_cast<double>(num_layers);
  switch (recompute) {
    case RecomputeMode::kNone: return ModelFlopsPerToken(seq_len);
    case RecomputeMode::kSelective:
      if (sac_fraction > 0) return ModelFlopsPerToken(seq_len) + L * sac_fraction * 2.0 * w.Layer();
      return ModelFlopsPerToken(seq_len) + L * attention_fwd;
    case RecomputeMode::kFull: return ModelFlopsPerToken(seq_len) + L * (2.0 * w.Layer() + attention_fwd);
  }
  return ModelFlopsPerToken(seq_len);
}

LayerOpFlops LayerForwardFlops(const ModelFlops& f, double tokens, double context, int tp) {
  const double t = static_cast<double>(tp);
  LayerOpFlops o;
  o.qkv = 2.0 * tokens * (f.w.q + f.w.kv) / t;
  o.attention = 4.0 * tokens * context * f.attn_width / t;
  o.out_proj = 2.0 * tokens * f.w.out / t;
  o.mlp = 2.0 * tokens * f.w.mlp / t;
  o.router = 2.0 * tokens * f.w.router;   // replicated over tp (small)
  return o;
}

double RecomputeForwardFlops(const LayerOpFlops& fwd, RecomputeMode recompute) {
  switch (recompute) {
    case RecomputeMode::kNone: return 0.0;
    case RecomputeMode::kSelective: return fwd.attention;
    case RecomputeMode::kFull: return fwd.Total();
  }
  return 0.0;
}

}  // namespace parasim
