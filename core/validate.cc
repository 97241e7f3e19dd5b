// One home for the checks of every spec: each Validate*() returns all of a
// spec's issues at once. The loaders call them on what they read, and the
// evaluator's constructor on what it is given (a spec built in code skips
// the loaders).
#include "core/validate.h"

#include "core/field_registry.h"

namespace parasim {
namespace {

// Fields of today's layouts: interleaved MoE, MLA, local attention.
void ValidateModernFields(const ModelSpec& m, const std::string& file, IssueList& issues) {
  if (m.moe_layer_interval < 1) issues.Add(file, "moe_layer_interval", StrCat("must be >= 1, got ", m.moe_layer_interval));
  if (m.first_dense_layers < 0 || m.first_dense_layers > m.num_layers) {
    issues.Add(file, "first_dense_layers", StrCat(m.first_dense_layers, " must lie in [0, num_layers]"));
  }
  if (m.MixesLayerKinds() && m.ffn_hidden_size <= 0) {
    issues.Add(file, "ffn_hidden_size", "must be positive: the model has dense layers beside its MoE layers");
  }
  if (m.num_shared_experts > 0 && m.shared_expert_ffn_hidden_size <= 0) {
    issues.Add(file, "shared_expert_ffn_hidden_size", "must be positive when there are shared experts");
  }
  if (m.IsMla() && (m.qk_nope_head_dim <= 0 || m.qk_rope_head_dim <= 0 || m.v_head_dim <= 0)) {
    issues.Add(file, "kv_lora_rank", "MLA needs positive qk_nope_head_dim, qk_rope_head_dim and v_head_dim");
  }
  if (m.local_attention_layers < 0 || m.local_attention_layers > m.num_layers) {
    issues.Add(file, "local_attention_layers", StrCat(m.local_attention_layers, " must lie in [0, num_layers]"));
  }
  if (m.local_attention != LocalAttention::kNone && m.local_attention_layers > 0 && m.attention_window <= 0) {
    issues.Add(file, "attention_window", "must be positive for local-attention layers");
  }
}

}  // namespace

std::vector<Issue> ValidateModel(const ModelSpec& m, const std::string& file) {
  IssueList issues;
  auto need_positive = [&](int64_t v, const char* key) {
    if (v <= 0) issues.Add(file, key, StrCat("must be positive, got ", v));
  };
  need_positive(m.hidden_size, "hidden_size");
  need_positive(m.num_layers, "num_layers");
  need_positive(m.num_attention_heads, "num_attention_heads");
  need_positive(m.num_kv_heads, "num_kv_heads");
  need_positive(m.vocab_size, "vocab_size");
  // Bounds far above any real model keep every count inside int64 and every FLOP finite.
  const std::pair<int64_t, const char*> kBounded[] = {
      {m.hidden_size, "hidden_size"}, {m.num_layers, "num_layers"}, {m.num_attention_heads, "num_attention_heads"},
      {m.ffn_hidden_size, "ffn_hidden_size"}, {m.moe_ffn_hidden_size, "moe_ffn_hidden_size"},
      {m.vocab_size, "vocab_size"}, {m.num_experts, "num_experts"}, {m.head_dim, "head_dim"},
      {m.shared_expert_ffn_hidden_size, "shared_expert_ffn_hidden_size"}, {m.num_shared_experts, "num_shared_experts"},
      {m.q_lora_rank, "q_lora_rank"}, {m.kv_lora_rank, "kv_lora_rank"}, {m.v_head_dim, "v_head_dim"},
      {m.qk_nope_head_dim, "qk_nope_head_dim"}, {m.qk_rope_head_dim, "qk_rope_head_dim"},
      {m.mtp_layers, "mtp_layers"}, {m.moe_layer_interval, "moe_layer_interval"}};
  for (const auto& [v, key] : kBounded) {
    if (v > (int64_t{1} << 24)) issues.Add(file, key, StrCat(v, " is implausibly large (limit 16777216)"));
  }
  if (m.num_attention_heads > 0 && m.num_kv_heads > 0 && m.num_attention_heads % m.num_kv_heads != 0) {
    issues.Add(file, "num_kv_heads",
               StrCat(m.num_kv_heads, " does not divide num_attention_heads (", m.num_attention_heads, ")"));
  }
  if (m.head_dim == 0 && m.num_attention_heads > 0 && m.hidden_size % m.num_attention_heads != 0) {
    issues.Add(file, "num_attention_heads",
               StrCat(m.num_attention_heads, " does not divide hidden_size (", m.hidden_size,
                      "); give head_dim explicitly"));
  }
  if (m.IsMoe()) {
    if (m.experts_per_token < 1 || m.experts_per_token > m.num_experts) {
      issues.Add(file, "experts_per_token",
                 StrCat(m.experts_per_token, " must lie in [1, num_experts = ", m.num_experts, "]"));
    }
    need_positive(m.moe_ffn_hidden_size, "moe_ffn_hidden_size");
  } else {
    need_positive(m.ffn_hidden_size, "ffn_hidden_size");
  }
  if (m.position == PositionKind::kLearned) need_positive(m.max_position_embeddings, "max_position_embeddings");
  ValidateModernFields(m, file, issues);
  return issues.issues();
}

std::vector<Issue> ValidateSpecs(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job) {
  std::vector<Issue> out = ValidateModel(model, model.source);
  for (Issue& issue : ValidateCluster(cluster, cluster.file)) out.push_back(std::move(issue));
  for (Issue& issue : ValidateJob(job, job.file)) out.push_back(std::move(issue));
  return out;
}

}  // namespace parasim
