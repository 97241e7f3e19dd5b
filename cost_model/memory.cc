#include "cost_model/memory.h"

#include <algorithm>
#include <cmath>

namespace parasim {

double SavedMlpWidth(const ModelSpec& m) {
  if (!m.IsMoe()) return static_cast<double>(m.ffn_hidden_size);
  const int64_t fe = m.moe_ffn_hidden_size > 0 ? m.moe_ffn_hidden_size : m.ffn_hidden_size;
  return static_cast<double>(fe * m.experts_per_token + m.num_shared_experts * m.shared_expert_ffn_hidden_size);
}

ModelSpec DenseMlpLayerModel(const ModelSpec& model) {
  ModelSpec dense = model;
  dense.num_experts = 0;
  dense.experts_per_token = 0;
  dense.num_shared_experts = 0;
  dense.first_dense_layers = 0;
  return dense;
}

double QkNormStatsBytes(const ModelSpec& m) {
  if (!m.qk_norm) return 0.0;
  const double heads = static_cast<double>(m.num_attention_heads + m.KvHeads());
  return heads * (m.norm == NormKind::kLayerNorm ? 8.0 : 4.0);
}

// Megatron-Core MoE, NVIDIA/Megatron-LM d98e8a6 (the megatron-core preset's
// commit), megatron/core/transformer/moe/. The router (router.py TopKRouter,
// moe_utils.py topk_routing_with_score_function, default softmax after top-k,
// moe_router_pre_softmax False) runs torch.topk on the logits (backward keeps
// the int64 indices, k per token) and torch.softmax(dtype=float32) over the k
// picked logits (keeps its fp32 output). The gating linear keeps only its
// input, the norm output already counted; the probabilities' cast to the
// logits' dtype keeps nothing. Left out: the load-balancing loss's fp32
// softmax over all E experts (moe_aux_loss_coeff, default 0.0, not in
// ModelSpec) and permute's boolean routing mask (E bytes).
double MoeRouterSavedBytes(const ModelSpec& m) {
  if (!m.IsMoe()) return 0.0;
  return static_cast<double>(m.experts_per_token) * (8.0 + 4.0);
}

// token_dispatcher.py MoEAlltoAllTokenDispatcher: permute (index_select,
// keeps indices only) → EP all-to-all → all-gather over the expert-TP group
// (gather_from_sequence_parallel_region; expert_tensor_parallel_size defaults
// to tp, arguments.py) → experts.py TEGroupedMLP: the grouped fc1 keeps its
// input, k·h per token of the TP group on every rank (balanced routing: a
// rank receives as many copies as its EP peers send it, k per token whatever
// ep). The probabilities travel along (k per token, the logits' dtype) and
// weighted_bias_swiglu_impl (fused_bias_swiglu.py WeightedSwiGLUFunction
// save_for_backward(input, weights)) or the unfused act·probs keeps them. The
// combine (reduce-scatter, all-to-all, unpermute without probs) keeps only
// indices: the expert outputs are not saved.
double MoeDispatchedElements(const ModelSpec& m) {
  if (!m.IsMoe()) return 0.0;
  const double k = static_cast<double>(m.experts_per_token);
  return k * static_cast<double>(m.hidden_size) + k;
}

ActivationPerToken LayerActivationPerToken(const ModelSpec& m, bool dropout) {
  const double h = static_cast<double>(m.hidden_size);
  const double ad = static_cast<double>(m.num_attention_heads * m.HeadDim());
  const double gd = static_cast<double>(m.KvHeads() * m.HeadDim());
  const double f = SavedMlpWidth(m);
  ActivationPerToken a;
  // Two norm inputs (2h each) and the two sub-block inputs (norm outputs, 2h each), bf16.
  a.replicated = 8.0 * h + (dropout ? 2.0 * h : 0.0);
  // Post-norms (Gemma 2/3: post_attention_layernorm, post_feedforward_layernorm
  // in transformers' Gemma2DecoderLayer) normalise each sub-block's output
  // before its residual add: each keeps that output (2h), which nothing else
  // saves; its own output only feeds the add (no saved input).
  a.replicated += 2.0 * h * static_cast<double>(std::max<int64_t>(0, m.norms_per_layer - 2));
  // Q (2ad) and K, V (2·2gd) after rotary, attention output O (2ad, input of
  // the out projection); flash attention keeps only a per-row logsumexp.
  double attention = 2.0 * ad + 4.0 * gd + 2.0 * ad;
  // QK norm runs on Q and K per head between the QKV projection and rotary
  // (Megatron-Core attention.py get_query_key_value_tensors: q_layernorm,
  // k_layernorm on the split QKV output; transformers' Qwen3Attention q_norm,
  // k_norm before apply_rotary_pos_emb). The norm keeps its input (a·d + g·d
  // elements, otherwise not saved: the projection's backward needs only its
  // input) and its per-row statistics (Transformer Engine's rmsnorm/layernorm
  // forward writes rsigma (and mu), fp32, shape [rows]; backward reads x and
  // them). Its output feeds rotary, whose output is the Q, K counted above.
  if (m.qk_norm) attention += 2.0 * (ad + gd) + QkNormStatsBytes(m);
  // SwiGLU: gate and up outputs (2f each), SiLU(gate) (2f), product = down
  // input (2f) → 8f. GELU: fc1 output (2f) and GELU output (2f) → 4f.
  const double mlp = m.mlp == MlpKind::kSwiGlu ? 8.0 * f : 4.0 * f;
  a.split = attention + mlp;
  // MoE: the router's indices and probabilities on the rank's own tokens, the
  // experts' dispatched inputs on the gathered ones (see above).
  a.replicated += MoeRouterSavedBytes(m);
  a.unsplit = 2.0 * MoeDispatchedElements(m);
  a.layer_input = 2.0 * h;
  a.attention_out = 2.0 * ad;
  return a;
}

double LayerWorkingBytes(const ActivationPerToken& a, double tokens, int tp, bool sp) {
  const double t = static_cast<double>(tp);
  return tokens * ((sp ? a.replicated / t : a.replicated) + a.split / t + a.unsplit);
}

double LayerActivationBytes(const ActivationPerToken& a, double tokens, int tp, bool sp, RecomputeMode recompute) {
  const double t = static_cast<double>(tp);
  switch (recompute) {
    case RecomputeMode::kNone: return LayerWorkingBytes(a, tokens, tp, sp);
    case RecomputeMode::kSelective:
      if (a.sac_saved > 0)
        return tokens * ((sp ? a.layer_input / t : a.layer_input) + a.sac_saved / t + a.sac_saved_unsplit);
      return LayerWorkingBytes(a, tokens, tp, sp) - tokens * a.attention_out / t;
    case RecomputeMode::kFull: return tokens * (sp ? a.layer_input / t : a.layer_input);
  }
  return LayerWorkingBytes(a, tokens, tp, sp);
}

double InterleavedMicroBatchesInFlight(int pp, int m, int vpp, int stage, bool full_warmup) {
  // Megatron-Core's interleaved 1F1B (megatron/core/pipeline_parallel/
  // schedules.py, get_schedule_table / the warm-up count of
  // forward_backward_pipelining_with_interleaving, microbatch_group_size_per_vp_stage
  // defaulting to pp): rank r runs 2·(p − r − 1) + (v − 1)·p chunk forwards
  // before its first backward and holds one more at the steady state's peak;
  // with m = p every chunk is warm-up. torch.distributed.pipelining's
  // ScheduleInterleaved1F1B (_calculate_single_rank_operations,
  // get_rank_warmup_ops) has the same count, capped at m·v, without that
  // case. A chunk is 1/v of the stage's layers.
  const double chunks = static_cast<double>(m) * vpp;
  if (m == pp && full_warmup) return static_cast<double>(m);
  const double warmup = std::min(chunks, 2.0 * (pp - stage - 1) + static_cast<double>(vpp - 1) * pp);
  return std::min(chunks, warmup + 1.0) / vpp;
}

double MicroBatchesInFlight(PipelineSchedule schedule, int pp, int m, int vpp, int stage, bool full_warmup) {
  if (pp <= 1) return 1.0;
  switch (schedule) {
    case PipelineSchedule::kGpipe: return static_cast<double>(m);
    case PipelineSchedule::kInterleaved:
      if (vpp > 1) return InterleavedMicroBatchesInFlight(pp, m, vpp, stage, full_warmup);
      [[fallthrough]];
    case PipelineSchedule::k1F1B: return static_cast<double>(std::min(m, pp - stage));
    case PipelineSchedule::kZeroBubble: {
      const ZeroBubbleHeld h = ZeroBubbleMicroBatchesHeld(pp, m, stage);
      return std::max(h.forward_held, h.backward_held);
    }
  }
  return 1.0;
}

ZeroBubbleHeld ZeroBubbleMicroBatchesHeld(int pp, int m, int stage) {
  ZeroBubbleHeld out;
  if (pp <= 1 || m <= 0) {   // no pipeline, no schedule: 1F1B's one micro-batch, no deferred W
    out.forward_held = out.backward_held = 1.0;
    return out;
  }
  // Counts of passes done, walking the stage's order: warm-up forwards, then
  // F, I pairs, then the cool-down I; after each I the W of the I `stage`
  // passes earlier (torch: _get_1f1b_rank_ops with num_1f1b_microbatches = rank).
  int f = 0, b = 0, w = 0;
  auto at_forward_end = [&] {
    const int held = f - w, deferred = b - w;
    if (held > out.forward_held || (held == out.forward_held && deferred > out.forward_deferred)) {
      out.forward_held = held;
      out.forward_deferred = deferred;
    }
  };
  auto input_grad = [&] {
    ++b;
    const int held = f - w, deferred = b - w;   // before the W that may follow
    if (held > out.backward_held || (held == out.backward_held && deferred > out.backward_deferred)) {
      out.backward_held = held;
      out.backward_deferred = deferred;
    }
    if (b - w > stage) ++w;
  };
  const int warmup = std::min(pp - stage - 1, m);
  for (int k = 0; k < warmup; ++k) {
    ++f;
    at_forward_end();
  }
  for (int i = 0; i < m - warmup; ++i) {
    ++f;
    at_forward_end();
    input_grad();
  }
  for (int k = m - warmup; k < m; ++k) input_grad();
  return out;
}

double DeferredWeightGradBytes(const ModelSpec& model, const SoftwareStack& stack, double tokens, int tp,
                               bool sequence_parallel) {
  const double t = static_cast<double>(std::max(1, tp));
  const double h = static_cast<double>(model.hidden_size);
  const double ad = static_cast<double>(model.num_attention_heads * model.HeadDim());
  const double gd = static_cast<double>(model.KvHeads() * model.HeadDim());
  const double up = (model.mlp == MlpKind::kSwiGlu ? 2.0 : 1.0) * SavedMlpWidth(model);
  // Row-parallel outputs: the attention output projection and the down
  // projection(s): k dispatched copies and one per shared expert for MoE.
  double down = h;
  if (model.IsMoe()) {
    down = static_cast<double>(model.experts_per_token) * h + (model.num_shared_experts > 0 ? h : 0.0);
  }
  const double router = model.IsMoe() ? static_cast<double>(model.num_experts) : 0.0;
  const double norms = static_cast<double>(model.norms_per_layer) * h / (sequence_parallel ? t : 1.0);
  return tokens * stack.activation_bytes * ((ad + 2.0 * gd + up) / t + h + down + router + norms);
}

namespace {

// Persistent states by sharding mode: the optimizer's copy, the compute copy
// where the stack keeps one, the gradients the optimizer reads, its state.
void PersistentStates(const SoftwareStack& s, const MemoryInputs& in, MemoryEstimate& e) {
  const double local = in.params.dense + in.params.expert;
  const double sharded = in.params.dense / std::max(1, in.shard_group) +
                         in.params.expert / std::max(1, in.expert_shard_group);
  const double copy = s.separate_compute_copy ? s.compute_param_bytes : 0.0;
  switch (in.sharding) {
    case ShardingMode::kDdp:
      e.weights = local * (s.param_bytes_at_rest + copy);
      // The DDP wrapper's buckets exist only where there is a group to reduce over.
      e.grads = local * (s.grad_bytes + (in.shard_group > 1 ? s.ddp_bucket_bytes : 0.0));
      e.optimizer = local * s.optimizer_bytes;
      return;
    case ShardingMode::kZero1:
      e.weights = local * (s.param_bytes_at_rest + copy);
      e.grads = local * s.grad_bytes;
      e.optimizer = sharded * s.optimizer_bytes;
      return;
    case ShardingMode::kZero2Replicated:
      e.weights = local * (s.param_bytes_at_rest + copy);
      e.grads = sharded * s.grad_bytes;
      e.optimizer = sharded * s.optimizer_bytes;
      return;
    case ShardingMode::kZero2:
    case ShardingMode::kZero3:
    case ShardingMode::kHsdp:
      e.weights = sharded * s.param_bytes_at_rest;
      e.grads = sharded * s.grad_bytes;
      e.optimizer = sharded * s.optimizer_bytes;
      return;
  }
}

// Parameters of one gradient bucket: the stack's bucket size, or one layer
// (FSDP units, per-layer buckets), never more than the stage.
double BucketParams(const SoftwareStack& s, const MemoryInputs& in) {
  const double local = in.params.dense + in.params.expert;
  const double bucket = s.grad_bucket_elements > 0 ? s.grad_bucket_elements : in.params.largest_layer;
  return std::min(local, bucket);
}

}  // namespace

double MemoryPhases::Peak() const { return std::max({forward_end, backward, reduce, optimizer}); }

const char* MemoryPhases::PeakName() const {
  const double p = Peak();
  if (p == forward_end) return "forward-end";
  if (p == backward) return "backward";
  if (p == reduce) return "grad-reduce";
  return "optimizer";
}

namespace {

MemoryEstimate EstimateMemoryOnce(const SoftwareStack& s, const MemoryInputs& in) {
  MemoryEstimate e;
  PersistentStates(s, in, e);
  e.weights += in.quantized_weight_cache;
  const double local = in.params.dense + in.params.expert;
  const double sharded = in.params.dense / std::max(1, in.shard_group) +
                         in.params.expert / std::max(1, in.expert_shard_group);
  const double bf16 = s.compute_param_bytes;
  const bool accumulate_unsharded = in.pipelined && s.fsdp_pp_accumulate_unsharded;
  const double bucket = BucketParams(s, in);
  const double stage_gathered = in.gathered_stage_bytes > 0 ? in.gathered_stage_bytes : local * bf16;
  const double unit_gathered = in.gathered_unit_bytes > 0 ? in.gathered_unit_bytes : in.params.largest_layer * bf16;
  // Gathered weights and gradient temporaries by sharding mode.
  double gathered = 0, grad_temp = 0, reduce_temp = 0;
  switch (in.sharding) {
    case ShardingMode::kDdp:
    case ShardingMode::kZero1:
      // Gradients live in their persistent buffer; a framework that flattens
      // buckets before reducing (DeepSpeed) holds one flat copy after backward.
      reduce_temp = s.flatten_grad_buckets ? bucket * s.comm_grad_bytes : 0.0;
      break;
    case ShardingMode::kZero2Replicated:
      // The bucket being reduced, two buffers (one filling, one in flight).
      grad_temp = 2.0 * bucket * s.comm_grad_bytes;
      break;
    case ShardingMode::kZero2:
      // SHARD_GRAD_OP: no reshard after forward, so the stage's working
      // weights stay gathered from forward through backward (DESIGN.md §4).
      gathered = stage_gathered;
      grad_temp = (accumulate_unsharded ? local : 2.0 * bucket) * s.comm_grad_bytes;
      break;
    case ShardingMode::kZero3:
    case ShardingMode::kHsdp:
      // FULL_SHARD reshards after forward: the unit computing plus `prefetch`
      // gathered ahead. Under pipelining the backward keeps the stage gathered
      // across micro-batches (no reshard after backward until the last).
      gathered = std::min(stage_gathered, (1.0 + std::max(0, in.prefetch)) * unit_gathered);
      if (s.live_param_elements > 0) gathered = std::min(gathered, s.live_param_elements * bf16);
      // Under pipelining the gradients accumulate unsharded in the reduce
      // dtype (comm_grad_bytes: FSDP2 upcasts them to reduce_dtype between
      // micro-batches, FSDPParam.to_accumulated_grad_if_needed).
      grad_temp = (accumulate_unsharded ? local : 2.0 * bucket) * s.comm_grad_bytes;
      if (accumulate_unsharded) gathered = stage_gathered;
      break;
  }
  const double f = s.fragmentation;
  MemoryPhases& ph = e.phases;
  // End of forward: every micro-batch in flight, the loss on the last stage;
  // gradients accumulated unsharded from earlier micro-batches are resident.
  // Collective inputs still pending on their stream are reserved from the
  // forward's end into the backward that starts right after it.
  const double pending = in.pending_collective_bytes;
  ph.forward_end = f * (in.activation_bytes + in.deferred_wgrad_forward_bytes + in.logits_bytes +
                        in.held_output_bytes + in.pipeline_buffer_bytes) +
                   gathered + (accumulate_unsharded ? grad_temp : 0.0) + pending;
  // Backward of the last layer: its recompute working set beside the stored
  // activations, the gathered weights and the gradient buffers.
  ph.backward =
      f * (in.activation_bytes + in.deferred_wgrad_backward_bytes + in.working_bytes + in.held_output_bytes +
           in.pipeline_buffer_bytes) +
      gathered + grad_temp + pending;
  // After backward: activations freed; the flattened bucket being reduced.
  ph.reduce = reduce_temp;
  // Optimizer step: temporaries per parameter it updates.
  const bool sharded_optimizer = in.sharding != ShardingMode::kDdp;
  ph.optimizer = (sharded_optimizer ? sharded : local) * s.optimizer_temp_bytes;
  e.peak_phase = ph.PeakName();
  const double peak = ph.Peak();
  if (peak == ph.forward_end) {
    e.activations = f * (in.activation_bytes + in.deferred_wgrad_forward_bytes);
    e.logits = f * (in.logits_bytes + in.held_output_bytes);
    e.pipeline_buffers = f * in.pipeline_buffer_bytes;
    e.gathered_weights = gathered;
    e.grad_temporaries = accumulate_unsharded ? grad_temp : 0.0;
    e.pending_collective_inputs = pending;
  } else if (peak == ph.backward) {
    e.activations = f * (in.activation_bytes + in.deferred_wgrad_backward_bytes + in.working_bytes);
    e.logits = f * in.held_output_bytes;
    e.pipeline_buffers = f * in.pipeline_buffer_bytes;
    e.gathered_weights = gathered;
    e.grad_temporaries = grad_temp;
    e.pending_collective_inputs = pending;
  } else if (peak == ph.reduce) {
    e.grad_temporaries = reduce_temp;
  } else {
    e.optimizer_temporaries = ph.optimizer;
  }
  // ZeRO-1's post-step parameter all-gather (stack.zero1_gather_flat_bytes):
  // flat buffers of the stage's bf16 weights, allocated after backward. The
  // caching allocator serves a request from a cached block at least as large
  // (blocks never span segments); the activations' largest block is the
  // loss's fp32 logits where the stage computes the loss, else one layer's
  // tensor, far smaller, or a pending collective input's block where the
  // stack leaves them. A buffer no cached block holds adds a segment: the
  // reserved pool grows past the forward/backward peak by it.
  double step_segments = 0, step_buffers = 0;
  if (in.sharding == ShardingMode::kZero1 && in.shard_group > 1 && s.zero1_gather_flat_bytes > 0) {
    step_buffers = local * s.zero1_gather_flat_bytes + sharded * bf16;
    const double buffer = local * bf16;   // one flat copy of the stage's weights
    const double fp32_logits = s.logits_bytes_per_element > 0 ? in.logits_bytes / s.logits_bytes_per_element * 4 : 0;
    const double largest_cached = std::max(fp32_logits, pending > 0 ? in.pending_block_bytes : 0.0);
    if (buffer > largest_cached) step_segments = step_buffers;
  }
  // The pipeline step's merged last-stage outputs, allocated after the last
  // backward and dropped: the same test against the largest cached block
  // (one micro-batch's fp32 logits) decides whether they add a segment.
  double merge_segment = 0;
  if (in.merged_output_bytes > 0) {
    const double largest_cached = s.logits_bytes_per_element > 0 ? in.logits_bytes / s.logits_bytes_per_element * 4 : 0;
    if (in.merged_output_bytes > largest_cached) merge_segment = in.merged_output_bytes;
    step_buffers = std::max(step_buffers, in.merged_output_bytes);
  }
  e.reserve = s.reserve_bytes;
  e.context = s.cuda_context_bytes;
  e.kept_buffers = in.kept_buffers;
  // The GEMM libraries' workspaces: taken from the caching allocator at the
  // first GEMM of each thread and kept (never freed between steps).
  e.gemm_workspaces = s.gemm_workspace_bytes;
  // After backward the activations are freed: the states, the kept buffers,
  // the workspaces and the largest of what reduction, optimizer step and
  // ZeRO-1's all-gather (which runs after the step's temporaries are freed) allocate.
  e.allocated_after_backward = e.weights + e.grads + e.optimizer + e.kept_buffers + e.gemm_workspaces +
                               std::max({ph.reduce, ph.optimizer, step_buffers});
  const double persistent =
      e.weights + e.grads + e.optimizer + e.kept_buffers + e.gemm_workspaces + e.reserve + e.context;
  e.total = persistent + peak + step_segments + merge_segment;
  const double added = step_segments + merge_segment;
  if (added > 0 && in.device_bytes > 0 && e.total > in.device_bytes) {
    // The buffers' cudaMalloc fails: the allocator frees every wholly free
    // cached segment (the activations', freed by backward) and retries. The
    // buffers' own segments stay cached and, free again after the step, are
    // the only blocks the next forward finds: its activations are carved out
    // of them (best fit, large blocks split) and new segments are added only
    // past them. From then on the pool is the larger of the two, not their
    // sum; past the GPU either way is a real OOM.
    e.total = persistent + std::max(peak, added);
    const double kept = std::max(0.0, added - peak) / added;
    step_segments *= kept;
    merge_segment *= kept;
  }
  e.optimizer_temporaries += step_segments;
  e.merged_outputs = merge_segment;
  return e;
}

}  // namespace

MemoryEstimate EstimateMemory(const SoftwareStack& s, const MemoryInputs& in) {
  MemoryEstimate e = EstimateMemoryOnce(s, in);
  if (in.pending_collective_bytes <= 0 || in.device_bytes <= 0 || e.total <= in.device_bytes) return e;
  // Pending blocks cannot take the pool past the GPU: when cudaMalloc fails
  // the caching allocator waits for every outstanding stream event, frees
  // the blocks they held and releases the whole free segments before it
  // retries (CUDACachingAllocator.cpp v2.1.0, release_cached_blocks →
  // synchronize_and_free_events). The pool is then counted without them.
  MemoryInputs released = in;
  released.pending_collective_bytes = 0;
  return EstimateMemoryOnce(s, released);
}

namespace {

// The stack's own vocab-parallel loss figure applies (tp > 1 and it sets one).
bool UsesVocabParallelLoss(const SoftwareStack& s, int tp) {
  return tp > 1 && s.vocab_parallel_logits_bytes_per_element > 0;
}

}  // namespace

double LossBytes(const SoftwareStack& s, double tokens, double vocab, int tp) {
  const double t = s.loss_chunk_tokens > 0 ? std::min(tokens, s.loss_chunk_tokens) : tokens;
  const double per_element =
      UsesVocabParallelLoss(s, tp) ? s.vocab_parallel_logits_bytes_per_element : s.logits_bytes_per_element;
  return t * vocab / std::max(1, tp) * per_element;
}

double GatheredHeadInputBytes(const SoftwareStack& s, double tokens, double hidden, int tp, bool sp) {
  if (!s.tp_saves_gathered_head_input || tp <= 1 || !sp) return 0.0;
  return tokens * hidden * s.activation_bytes;
}

double HeldOutputBytes(const SoftwareStack& s, double tokens, double vocab, int tp, int num_micro_batches,
                       bool pipelined) {
  double held = std::min(s.held_last_stage_outputs, static_cast<double>(std::max(0, num_micro_batches - 1)));
  const bool loss_leaves_out_logits = UsesVocabParallelLoss(s, tp) && s.vocab_parallel_peak_excludes_logits;
  if (pipelined && s.held_last_stage_outputs > 0 && loss_leaves_out_logits) held += 1.0;
  return held * tokens * vocab / std::max(1, tp) * s.activation_bytes;
}

double PipelineBoundaryTensors(int pp, int m, int vpp, double chunks_in_flight, int stage) {
  if (pp <= 1 || m <= 0) return 0.0;
  const int v = std::max(1, vpp);
  const double mv = static_cast<double>(m) * v;
  // Every forward done: the backwards done are the chunk forwards not in flight.
  const double backwards_done = std::max(0.0, mv - chunks_in_flight);
  // Chunks that are not the last stage: m gradient buffers + m outputs each.
  const int not_last = v - (stage == pp - 1 ? 1 : 0);
  // Chunks that are not the first stage: m − in flight receive buffers beyond
  // the saved first-layer inputs + one input gradient per backward done.
  double backwards_not_first = backwards_done;
  if (stage == 0) backwards_not_first -= std::max(0.0, backwards_done - static_cast<double>(v - 1) * m);
  return 2.0 * m * not_last + 2.0 * backwards_not_first;
}

double PipelineBoundaryTensorBytes(const SoftwareStack& s, double tokens, double hidden, int tp,
                                   bool sequence_parallel) {
  const int split = sequence_parallel ? std::max(1, tp) : 1;
  return tokens * hidden * s.activation_bytes / split;
}

double FusedSwiGluSavedBytes(const ModelSpec& m, const SoftwareStack& stack) {
  if (m.mlp != MlpKind::kSwiGlu) return 0.0;
  const double f = static_cast<double>(m.IsMoe() ? (m.moe_ffn_hidden_size > 0 ? m.moe_ffn_hidden_size
                                                                             : m.ffn_hidden_size) *
                                                     m.experts_per_token
                                               : m.ffn_hidden_size);
  return f * stack.activation_bytes;   // SiLU(gate), one activation-dtype element per ffn unit
}

double PackedQkvKeptBytes(const ModelSpec& m, const SoftwareStack& stack) {
  if (!stack.query_keeps_packed_qkv || m.KvHeads() != m.num_attention_heads) return 0.0;
  // nanotron a756526 src/nanotron/models/llama.py, CausalSelfAttention.forward
  // (training path, multi-head branch): qkv.view(..).permute(2, 1, 0, 3, 4)
  // .contiguous() is one [3, b, s, heads, d] tensor unpacked into q, k, v
  // views; k and v are copied again by torch.cat([k, v]).permute(..)
  // .contiguous() for flash-attn's rotary (in place on q and on that kv
  // copy), and flash_attn_varlen_func saves q (a view, stride(-1) = 1, not
  // copied by its maybe_contiguous) and k, v (views of the kv copy). The
  // saved q view keeps the whole packed storage: its k and v thirds, 2·a·d
  // elements per token, stay allocated until backward. The grouped-query
  // branch makes q, k, v separate .contiguous() copies (no such storage).
  return 2.0 * static_cast<double>(m.num_attention_heads * m.HeadDim()) * stack.activation_bytes;
}

bool SacSavesMatmul(int position, double f) {
  // The policy recomputes a matmul whenever its running count crosses a
  // multiple of 1/f: f = 0.5 recomputes the 2nd, 4th, … (torchtitan's
  // `meta[mm_count_key] % 2 == 0`). The small offset keeps 7 × 0.5 at 3.5.
  constexpr double kEps = 1e-9;
  return std::floor(position * f + kEps) == std::floor((position - 1) * f + kEps);
}

double SacSavedUnreadOutputWidth(const ModelSpec& m, double f) {
  // A layer's aten.mm calls in forward order (torchtitan's Llama, model.py at
  // 9dec370: wq, wk, wv, then wo; FeedForward w2(silu(w1(x)) * w3(x)): w1,
  // w3, w2; a GELU MLP fc1, fc2). Backward never reads the output of wo and of
  // the MLP's down projection: each only feeds a residual add (add's
  // derivative passes the gradient through, derivatives.yaml `add.Tensor`).
  // MoE experts run grouped GEMMs, not counted mm: only wo is placed.
  const double h = static_cast<double>(m.hidden_size);
  double width = SacSavesMatmul(4, f) ? h : 0.0;
  if (!m.IsMoe()) {
    const int down = m.mlp == MlpKind::kSwiGlu ? 7 : 6;
    if (SacSavesMatmul(down, f)) width += h;
  }
  return width;
}

ActivationPerToken LayerActivationPerToken(const ModelSpec& model, const SoftwareStack& stack) {
  ActivationPerToken a = LayerActivationPerToken(model, stack.dropout);
  if (stack.repeats_kv_heads) {
    // Attention saves the repeated K and V (2 B each per a·d element), not g·d.
    const double ad = static_cast<double>(model.num_attention_heads * model.HeadDim());
    const double gd = static_cast<double>(model.KvHeads() * model.HeadDim());
    a.split += 4.0 * (ad - gd);
  }
  const double scale = stack.activation_bytes / 2.0;
  const double masks = stack.dropout ? 2.0 * model.hidden_size : 0.0;  // 1-byte masks, not scaled
  const double router = MoeRouterSavedBytes(model);   // int64 and fp32 whatever the activation dtype
  a.replicated = (a.replicated - masks - router) * scale + masks + router;
  a.unsplit *= scale;
  const double qk_stats = QkNormStatsBytes(model);   // fp32 whatever the activation dtype
  a.split = (a.split - qk_stats) * scale + qk_stats;
  a.layer_input *= scale;
  a.attention_out *= scale;
  if (stack.swiglu_saves_input_only) a.split -= FusedSwiGluSavedBytes(model, stack);
  a.split += PackedQkvKeptBytes(model, stack);
  const double f = stack.sac_matmul_recompute_fraction;
  if (f > 0) {
    // Op-level SAC keeps the checkpoint's input, the attention output (and
    // its per-row logsumexp, negligible) and the outputs of the matmuls it
    // does not recompute: q (a·d), k and v (2·g·d), the output projection
    // (h), the MLP's up projections (2f SwiGLU, f GELU) and down (h).
    const double h = static_cast<double>(model.hidden_size);
    const double ad = static_cast<double>(model.num_attention_heads * model.HeadDim());
    const double gd = static_cast<double>(model.KvHeads() * model.HeadDim());
    const double ffn = SavedMlpWidth(model);
    const double matmul_out = ad + 2.0 * gd + h + (model.mlp == MlpKind::kSwiGlu ? 2.0 : 1.0) * ffn + h;
    a.sac_saved = stack.activation_bytes * ((1.0 - f) * matmul_out + ad);
    if (stack.sac_keeps_unread_outputs)
      a.sac_saved_unsplit = stack.activation_bytes * SacSavedUnreadOutputWidth(model, f);
  }
  return a;
}

std::vector<std::pair<std::string, double>> MemoryEstimate::Breakdown() const {
  // Built in place (the evaluator asks once per config).
  std::vector<std::pair<std::string, double>> out;
  out.reserve(15);
  out.emplace_back("weights", weights);
  out.emplace_back("gathered_weights", gathered_weights);
  out.emplace_back("gradients", grads);
  out.emplace_back("grad_temporaries", grad_temporaries);
  out.emplace_back("optimizer", optimizer);
  out.emplace_back("optimizer_temporaries", optimizer_temporaries);
  out.emplace_back("activations", activations);
  out.emplace_back("logits", logits);
  if (pipeline_buffers > 0) out.emplace_back("pipeline_buffers", pipeline_buffers);   // only engines that keep them
  if (merged_outputs > 0) out.emplace_back("merged_outputs", merged_outputs);   // only engines that merge them
  if (kept_buffers > 0) out.emplace_back("kept_buffers", kept_buffers);   // only stacks that keep any
  if (gemm_workspaces > 0) out.emplace_back("gemm_workspaces", gemm_workspaces);   // only stacks that charge them
  if (pending_collective_inputs > 0) out.emplace_back("pending_collective_inputs", pending_collective_inputs);
  out.emplace_back("reserve", reserve);
  out.emplace_back("cuda_context", context);
  return out;
}

}  // namespace parasim
