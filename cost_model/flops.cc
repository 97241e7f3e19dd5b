#include "cost_model/flops.h"

#include <cmath>

namespace parasim {

namespace {

// Multi-head latent attention (DeepSeek-V2 §2.1): Q and the joint KV latent
// each pass a down- and an up-projection; the attention core multiplies
// d_qk-wide scores and d_v-wide values.
void CountMla(const ModelSpec& m, ModelFlops& f) {
  const double h = static_cast<double>(m.hidden_size), a = static_cast<double>(m.num_attention_heads);
  const double qk = static_cast<double>(m.qk_nope_head_dim + m.qk_rope_head_dim);
  const double nope = static_cast<double>(m.qk_nope_head_dim), rope = static_cast<double>(m.qk_rope_head_dim);
  const double v = static_cast<double>(m.v_head_dim), ql = static_cast<double>(m.q_lora_rank);
  const double kvl = static_cast<double>(m.kv_lora_rank);
  f.w.q = m.q_lora_rank > 0 ? h * ql + ql * a * qk : h * a * qk;
  f.w.kv = h * (kvl + rope) + kvl * a * (nope + v);
  f.w.out = a * v * h;
  f.attn_width = a * (qk + v) / 2.0;
}

// Per-layer mean MLP and router weights of a model whose MoE layers are
// interleaved with dense ones (or follow dense first layers), shared experts included.
void CountMixedMlp(const ModelSpec& m, double mats, ModelFlops& f) {
  const double h = static_cast<double>(m.hidden_size), L = static_cast<double>(m.num_layers);
  const double moe = static_cast<double>(m.MoeLayerCount()), dense = L - moe;
  const double fe = static_cast<double>(m.moe_ffn_hidden_size);
  const double shared = static_cast<double>(m.num_shared_experts) * mats * h *
                        static_cast<double>(m.shared_expert_ffn_hidden_size);
  const double moe_active = static_cast<double>(m.experts_per_token) * mats * h * fe + shared;
  const double moe_all = static_cast<double>(m.num_experts) * mats * h * fe + shared;
  const double dense_mlp = mats * h * static_cast<double>(m.ffn_hidden_size);
  f.w.mlp = (moe * moe_active + dense * dense_mlp) / L;
  f.w.expert_total = (moe * moe_all + dense * dense_mlp) / L;
  f.w.router = moe * h * static_cast<double>(m.num_experts) / L;
}

}  // namespace

double LocalAttentionFraction(double s, double w, bool chunked) {
  if (w <= 0 || w >= s) return 1.0;
  const double full = s * (s + 1.0);   // 2 × the causal query-key pairs
  if (chunked) {
    const double chunks = std::floor(s / w), rest = s - chunks * w;
    return (chunks * w * (w + 1.0) + rest * (rest + 1.0)) / full;
  }
  // Query i sees min(i, w) keys: w(w+1)/2 over the first w, w each after.
  return (w * (w + 1.0) + 2.0 * (s - w) * w) / full;
}

double ModelFlops::AttentionLayers(int64_t seq_len) const {
  const double L = static_cast<double>(num_layers);
  if (local_layers == 0) return L;
  const double local = static_cast<double>(local_layers);
  return L - local + local * LocalAttentionFraction(static_cast<double>(seq_len), window, chunked);
}

double ModelFlops::AttentionContextFraction(double seq_len) const {
  if (local_layers == 0 || num_layers == 0) return 1.0;
  const double local = static_cast<double>(local_layers), L = static_cast<double>(num_layers);
  return (L - local + local * LocalAttentionFraction(seq_len, window, chunked)) / L;
}

ModelFlops CountModelFlops(const ModelSpec& m) {
  ModelFlops f;
  const double h = static_cast<double>(m.hidden_size);
  const double d = static_cast<double>(m.HeadDim());
  const double a = static_cast<double>(m.num_attention_heads);
  const double g = static_cast<double>(m.KvHeads());
  const double mats = m.mlp == MlpKind::kSwiGlu ? 3.0 : 2.0;  // gate+up+down vs fc1+fc2
  f.attn_width = a * d;
  f.w.q = h * a * d;
  f.w.kv = 2.0 * h * g * d;
  f.w.out = a * d * h;
  if (m.IsMla()) CountMla(m, f);
  if (m.MixesLayerKinds() || m.num_shared_experts > 0) {
    CountMixedMlp(m, mats, f);
  } else if (m.IsMoe()) {
    const double fe = static_cast<double>(m.moe_ffn_hidden_size > 0 ? m.moe_ffn_hidden_size : m.ffn_hidden_size);
    f.w.mlp = static_cast<double>(m.experts_per_token) * mats * h * fe;
    f.w.expert_total = static_cast<double>(m.num_experts) * mats * h * fe;
    f.w.router = h * static_cast<double>(m.num_experts);
  } else {
    f.w.mlp = mats * h * static_cast<double>(m.ffn_hidden_size);
  }
  f.w.lm_head = h * static_cast<double>(m.vocab_size);
  f.num_layers = m.num_layers;
  if (m.local_attention != LocalAttention::kNone) {
    f.local_layers = m.local_attention_layers;
    f.window = static_cast<double>(m.attention_window);
    f.chunked = m.local_attention == LocalAttention::kChunked;
  }
  f.n_matmul = static_cast<double>(m.num_layers) * f.w.Layer() + f.w.lm_head;
  return f;
}

ModelFlops LayerKindFlops(const ModelSpec& m, const ModelFlops& model_flops, bool moe, bool local) {
  ModelFlops f = model_flops;
  const double h = static_cast<double>(m.hidden_size);
  const double mats = m.mlp == MlpKind::kSwiGlu ? 3.0 : 2.0;
  if (moe && m.IsMoe()) {
    const double fe = static_cast<double>(m.moe_ffn_hidden_size > 0 ? m.moe_ffn_hidden_size : m.ffn_hidden_size);
    const double shared = static_cast<double>(m.num_shared_experts) * mats * h *
                          static_cast<double>(m.shared_expert_ffn_hidden_size);
    f.w.mlp = static_cast<double>(m.experts_per_token) * mats * h * fe + shared;
    f.w.expert_total = static_cast<double>(m.num_experts) * mats * h * fe + shared;
    f.w.router = h * static_cast<double>(m.num_experts);
  } else {
    f.w.mlp = mats * h * static_cast<double>(m.ffn_hidden_size);
    f.w.expert_total = f.w.mlp;
    f.w.router = 0;
  }
  f.local_layers = local && model_flops.local_layers > 0 ? model_flops.num_layers : 0;
  return f;
}

double ModelFlops::ModelFlopsPerToken(int64_t seq_len) const {
  return 6.0 * n_matmul + 12.0 * AttentionLayers(seq_len) * attn_width * static_cast<double>(seq_len);
}

double ModelFlops::HardwareFlopsPerToken(int64_t seq_len, RecomputeMode recompute, double sac_fraction) const {
  const double attention_fwd = 4.0 * attn_width * static_cast<double>(seq_len);
  const double L = static_cast<double>(num_layers);
  switch (recompute) {
    case RecomputeMode::kNone: return ModelFlopsPerToken(seq_len);
    case RecomputeMode::kSelective:
      if (sac_fraction > 0) return ModelFlopsPerToken(seq_len) + L * sac_fraction * 2.0 * w.Layer();
      return ModelFlopsPerToken(seq_len) + AttentionLayers(seq_len) * attention_fwd;
    case RecomputeMode::kFull:
      if (local_layers == 0) return ModelFlopsPerToken(seq_len) + L * (2.0 * w.Layer() + attention_fwd);
      return ModelFlopsPerToken(seq_len) + L * 2.0 * w.Layer() + AttentionLayers(seq_len) * attention_fwd;
  }
  return ModelFlopsPerToken(seq_len);
}

LayerOpFlops LayerForwardFlops(const ModelFlops& f, double tokens, double context, int tp) {
  const double t = static_cast<double>(tp);
  LayerOpFlops o;
  o.qkv = 2.0 * tokens * (f.w.q + f.w.kv) / t;
  o.attention = 4.0 * tokens * (context * f.AttentionContextFraction(context)) * f.attn_width / t;
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
