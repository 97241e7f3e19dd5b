#include "cost_model/memory.h"

#include <algorithm>

namespace parasim {

ActivationPerToken LayerActivationPerToken(const ModelSpec& m, bool dropout) {
  const double h = static_cast<double>(m.hidden_size);
  const double ad = static_cast<double>(m.num_attention_heads * m.HeadDim());
  const double gd = static_cast<double>((m.num_kv_heads > 0 ? m.num_kv_heads : m.num_attention_heads) * m.HeadDim());
  const double f = static_cast<double>(m.IsMoe() ? (m.moe_ffn_hidden_size > 0 ? m.moe_ffn_hidden_size
                                                                               : m.ffn_hidden_size) *
                                                       m.experts_per_token
                                                 : m.ffn_hidden_size);
  ActivationPerToken a;
  // Two norm inputs (2h each) and the two sub-block inputs (norm outputs, 2h each), bf16.
  a.replicated = 8.0 * h + (dropout ? 2.0 * h : 0.0);
  // Q (2ad) and K, V (2·2gd) after rotary, attention output O (2ad, input of
  // the out projection); flash attention keeps only a per-row logsumexp.
  const double attention = 2.0 * ad + 4.0 * gd + 2.0 * ad;
  // SwiGLU: gate and up outputs (2f each), SiLU(gate) (2f), product = down
  // input (2f) → 8f. GELU: fc1 output (2f) and GELU output (2f) → 4f.
  const double mlp = m.mlp == MlpKind::kSwiGlu ? 8.0 * f : 4.0 * f;
  a.split = attention + mlp;
  a.layer_input = 2.0 * h;
  a.attention_out = 2.0 * ad;
  return a;
}

double LayerWorkingBytes(const ActivationPerToken& a, double tokens, int tp, bool sp) {
  const double t = static_cast<double>(tp);
  return tokens * ((sp ? a.replicated / t : a.replicated) + a.split / t);
}

double LayerActivationBytes(const ActivationPerToken& a, double tokens, int tp, bool sp, RecomputeMode recompute) {
  const double t = static_cast<double>(tp);
  switch (recompute) {
    case RecomputeMode::kNone: return LayerWorkingBytes(a, tokens, tp, sp);
    case RecomputeMode::kSelective: return LayerWorkingBytes(a, tokens, tp, sp) - tokens * a.attention_out / t;
    case RecomputeMode::kFull: return tokens * (sp ? a.layer_input / t : a.layer_input);
  }
  return LayerWorkingBytes(a, tokens, tp, sp);
}

double MicroBatchesInFlight(PipelineSchedule schedule, int pp, int m, int vpp, int stage) {
  if (pp <= 1) return 1.0;
  switch (schedule) {
    case PipelineSchedule::kGpipe: return static_cast<double>(m);
    case PipelineSchedule::kInterleaved:
      if (vpp > 1) {
        const double p = pp;
        // Stage 0 is the worst case; later stages are bounded by it.
        (void)stage;
        return std::min(static_cast<double>(m), p + (p - 1.0) / vpp);
      }
      [[fallthrough]];
    case PipelineSchedule::k1F1B:
    case PipelineSchedule::kZeroBubble:
      return static_cast<double>(std::min(m, pp - stage));
  }
  return 1.0;
}

MemoryEstimate EstimateMemory(const SoftwareStack& s, const MemoryInputs& in) {
  MemoryEstimate e;
  const double P = in.params.dense;
  const double E = in.params.expert;
  const double S = std::max(1, in.shard_group);
  const double Se = std::max(1, in.expert_shard_group);
  const double sharded = P / S + E / Se;   // parameters in this GPU's shard
  const double local = P + E;              // parameters of the stage on this GPU
  const double layer = in.params.largest_layer;
  const double bf16 = s.compute_param_bytes;
  const double copy = s.separate_compute_copy ? bf16 : 0.0;
  switch (in.sharding) {
    case ShardingMode::kDdp:
      e.weights = local * (s.param_bytes_at_rest + copy);
      e.grads = local * s.grad_bytes;
      e.optimizer = local * s.optimizer_bytes;
      break;
    case ShardingMode::kZero1:
      e.weights = local * (s.param_bytes_at_rest + copy);
      e.grads = local * s.grad_bytes;
      e.optimizer = sharded * s.optimizer_bytes;
      break;
    case ShardingMode::kZero2Replicated:
      e.weights = local * (s.param_bytes_at_rest + copy);
      // Sharded gradients plus the bucket being reduced (≈ one layer in flight, two buffers).
      e.grads = sharded * s.grad_bytes + 2.0 * layer * s.comm_grad_bytes;
      e.optimizer = sharded * s.optimizer_bytes;
      break;
    case ShardingMode::kZero2:
      // SHARD_GRAD_OP: no reshard after forward, so the whole stage's bf16
      // weights are resident at the end of forward (DESIGN.md §4).
      e.weights = sharded * s.param_bytes_at_rest;
      e.gathered_weights = local * bf16;
      e.grads = sharded * s.grad_bytes +
                (in.pipelined && s.fsdp_pp_accumulate_unsharded ? local * s.comm_grad_bytes
                                                                : 2.0 * layer * s.comm_grad_bytes);
      e.optimizer = sharded * s.optimizer_bytes;
      break;
    case ShardingMode::kZero3:
    case ShardingMode::kHsdp:
      // FULL_SHARD: the layer computing plus `prefetch` gathered ahead; under
      // pipelining the stage keeps its weights gathered across micro-batches.
      e.weights = sharded * s.param_bytes_at_rest;
      e.gathered_weights = in.pipelined && s.fsdp_pp_accumulate_unsharded
                               ? local * bf16
                               : std::min(local, (1.0 + std::max(0, in.prefetch)) * layer) * bf16;
      e.grads = sharded * s.grad_bytes +
                (in.pipelined && s.fsdp_pp_accumulate_unsharded ? local * s.comm_grad_bytes
                                                                : 2.0 * layer * s.comm_grad_bytes);
      e.optimizer = sharded * s.optimizer_bytes;
      break;
  }
  e.activations = (in.activation_bytes + in.working_bytes) * s.fragmentation;
  e.logits = in.logits_bytes * s.fragmentation;
  e.reserve = s.reserve_bytes;
  e.total = e.weights + e.gathered_weights + e.grads + e.optimizer + e.activations + e.logits + e.reserve;
  return e;
}

std::vector<std::pair<std::string, double>> MemoryEstimate::Breakdown() const {
  // Built in place (the evaluator asks once per config).
  std::vector<std::pair<std::string, double>> out;
  out.reserve(7);
  out.emplace_back("weights", weights);
  out.emplace_back("gathered_weights", gathered_weights);
  out.emplace_back("gradients", grads);
  out.emplace_back("optimizer", optimizer);
  out.emplace_back("activations", activations);
  out.emplace_back("logits", logits);
  out.emplace_back("reserve", reserve);
  return out;
}

}  // namespace parasim
