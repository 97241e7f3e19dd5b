#include "cost_model/evaluator_memory.h"

#include <algorithm>
#include <array>

#include "cost_model/evaluator_stage_time.h"
#include "cost_model/interleaved_chunks.h"
#include "cost_model/precision.h"
#include "cost_model/precision_memory.h"

namespace parasim {
namespace {

// NVFP4's BF16 blocks on stage s: the first and last layers of the model,
// stages taken as contiguous layer ranges (exact without interleaving).
int64_t Bf16LayersOnStage(const EvaluatorData& d, const std::vector<int>& stage_layers, int s) {
  if (d.bf16_first + d.bf16_last == 0) return 0;
  int64_t begin = 0, total = 0;
  for (int i = 0; i < static_cast<int>(stage_layers.size()); ++i) {
    if (i < s) begin += stage_layers[i];
    total += stage_layers[i];
  }
  const int64_t end = begin + stage_layers[s];
  auto overlap = [&](int64_t lo, int64_t hi) { return std::max<int64_t>(0, std::min(end, hi) - std::max(begin, lo)); };
  return overlap(0, d.bf16_first) + overlap(total - d.bf16_last, total);
}

// The largest layer a stage holds (FSDP's gathered unit).
double LargestLayerParams(const Units& u, const StageKinds& kinds) {
  if (!u.several_kinds) return u.layer.params;
  double largest = 0;
  for (int k = 0; k < kNumLayerKinds; ++k) {
    if (kinds[k] > 0) largest = std::max(largest, u.kinds[k].params);
  }
  return largest;
}

// Per-layer activation terms of a config under one recompute mode (the same on every stage).
struct LayerTerms {
  double activation = 0, working = 0, bf16_activation = 0, bf16_working = 0;
  std::array<double, 2> kind_activation{}, kind_working{}, kind_bf16_activation{}, kind_bf16_working{};
};

LayerTerms LayerTermsOf(const EvaluatorData& d, const ParallelConfig& c, double T, RecomputeMode recompute,
                        bool mlp_kinds, double cp_gathered_kv) {
  LayerTerms t;
  const double scores = recompute == RecomputeMode::kNone ? T * d.score_bytes_per_token / c.tp : 0.0;
  t.activation = LayerActivationBytes(d.act, T, c.tp, c.sequence_parallel, recompute) + scores;
  t.working =
      (recompute == RecomputeMode::kFull ? LayerWorkingBytes(d.act, T, c.tp, c.sequence_parallel) : 0.0) +
      cp_gathered_kv;
  t.bf16_activation = LayerActivationBytes(d.act_bf16, T, c.tp, c.sequence_parallel, recompute) + scores;
  t.bf16_working =
      (recompute == RecomputeMode::kFull ? LayerWorkingBytes(d.act_bf16, T, c.tp, c.sequence_parallel) : 0.0) +
      cp_gathered_kv;
  for (int moe = 0; moe < 2 && mlp_kinds; ++moe) {
    t.kind_activation[moe] = LayerActivationBytes(d.act_mlp[moe], T, c.tp, c.sequence_parallel, recompute) + scores;
    t.kind_bf16_activation[moe] =
        LayerActivationBytes(d.act_bf16_mlp[moe], T, c.tp, c.sequence_parallel, recompute) + scores;
    t.kind_working[moe] = t.kind_bf16_working[moe] = cp_gathered_kv;
    if (recompute == RecomputeMode::kFull) {
      t.kind_working[moe] += LayerWorkingBytes(d.act_mlp[moe], T, c.tp, c.sequence_parallel);
      t.kind_bf16_working[moe] += LayerWorkingBytes(d.act_bf16_mlp[moe], T, c.tp, c.sequence_parallel);
    }
  }
  return t;
}

// One micro-batch's activations held by a stage's L layers (bf16 of them
// NVFP4's BF16 blocks), and the backward's transient working set.
struct StageActivations {
  double activation = 0, working = 0;
};

StageActivations StageActivationsOf(const LayerTerms& t, const StageKinds& kinds, int L, int64_t bf16,
                                    bool mlp_kinds) {
  StageActivations out;
  if (mlp_kinds) {
    // Each MLP kind's layers with their own activations; NVFP4's BF16
    // layers counted at the stage's mean kind.
    double held = 0, held_bf16 = 0, working = 0, working_bf16 = 0;
    for (int k = 0; k < kNumLayerKinds; ++k) {
      if (kinds[k] == 0) continue;
      const int moe = (k & kLayerKindMoe) != 0 ? 1 : 0;
      held += kinds[k] * t.kind_activation[moe];
      held_bf16 += kinds[k] * t.kind_bf16_activation[moe];
      working = std::max(working, t.kind_working[moe]);
      working_bf16 = std::max(working_bf16, t.kind_bf16_working[moe]);
    }
    const double bf16_share = L > 0 ? static_cast<double>(bf16) / L : 0.0;
    out.activation = held + bf16_share * (held_bf16 - held);
    out.working = bf16 > 0 ? working_bf16 : working;
  } else {
    out.activation = (L - bf16) * t.activation + bf16 * t.bf16_activation;
    out.working = bf16 > 0 ? t.bf16_working : t.working;
  }
  return out;
}

}  // namespace

void SizeStageMemory(const EvaluatorData& d, const ParallelConfig& c, const ConfigShape& cs, const Units& u,
                     const std::vector<int>& stage_layers, MemoryPlan* out, double stop_above) {
  const double T = cs.T;
  // All-gather CP: backward holds the gathered K,V of the whole sequence
  // and their gradients before the reduce-scatter (one layer at a time).
  // K,V a·d wide where the stack repeats them to every head first (repeats_kv_heads).
  const double kv_width = d.stack.repeats_kv_heads ? d.lcm.ad : d.lcm.gd;
  const double cp_gathered_kv = c.cp > 1 && c.cp_comm == CpComm::kAllGather
                                    ? 2.0 * c.cp * T * 2.0 * kv_width / c.tp * d.stack.activation_bytes
                                    : 0.0;
  // A model mixing dense and MoE layers: each MLP kind's per-layer terms.
  const bool mlp_kinds = u.several_kinds && d.model.MixesLayerKinds();
  // The config's per-layer terms; with partial full recompute also those of
  // the layers that keep everything (as recompute=none).
  const LayerTerms terms = LayerTermsOf(d, c, T, c.recompute, mlp_kinds, cp_gathered_kv);
  const bool partial = c.recompute == RecomputeMode::kFull && c.recompute_layers > 0;
  const LayerTerms kept_terms = partial ? LayerTermsOf(d, c, T, RecomputeMode::kNone, mlp_kinds, cp_gathered_kv) : terms;
  const std::vector<StageKinds>& stage_kinds = StageKindSplit(d, c, stage_layers);
  const Precision p = d.job.precision;
  const bool primary_quantized = c.sharding != ShardingMode::kDdp && ((p == Precision::kFp8 && d.stack.fp8_param_gather) ||
                                                                     (p == Precision::kFp4 && d.stack.fp4_param_gather));
  const double weight_cache_bytes =
      p == Precision::kBf16 || p == Precision::kFp32
          ? 0.0
          : QuantizedWeightCacheBytes(d.stack, p, d.cluster.gpu.architecture == "blackwell", primary_quantized);
  // Weights gathered already quantized (primary_quantized: FSDP2 float8
  // all-gather, Megatron --fp8/fp4-param-gather) are that size unsharded;
  // embedding, head and NVFP4's BF16 blocks are gathered in BF16.
  const double bf16_bytes = d.stack.compute_param_bytes;
  const double layer_gather_bytes = primary_quantized ? ParamGatherBytes(d.stack, p) : bf16_bytes;
  // The loss, and the head's all-gathered input it saved (DTensor SP), both
  // live at the loss's backward peak on the last stage.
  const double logits_bytes =
      LossBytes(d.stack, T, d.lcm.vocab, c.tp) +
      GatheredHeadInputBytes(d.stack, T, static_cast<double>(d.model.hidden_size), c.tp, c.sequence_parallel);
  const double held_output_bytes = HeldOutputBytes(d.stack, T, d.lcm.vocab, c.tp, cs.m, cs.pp > 1);
  // An engine keeping its stage-boundary tensors per micro-batch (torch pipelining).
  const double boundary_tensor_bytes =
      d.stack.pp_keeps_boundary_tensors && cs.pp > 1
          ? PipelineBoundaryTensorBytes(d.stack, T, static_cast<double>(d.model.hidden_size), c.tp,
                                        c.sequence_parallel)
          : 0.0;
  // The step's merged last-stage outputs: every micro-batch's logits (÷ tp).
  const double merged_output_bytes = d.stack.pp_merges_last_stage_outputs && cs.pp > 1
                                         ? cs.m * T * d.lcm.vocab / std::max(1, c.tp) * d.stack.activation_bytes
                                         : 0.0;
  // The framework's kept TP all-gather buffers: micro-batch tokens × hidden each.
  const double kept_buffers = c.tp > 1 && c.sequence_parallel ? d.stack.tp_gather_buffers * T *
                                                                     static_cast<double>(d.model.hidden_size) *
                                                                     d.stack.activation_bytes
                                                               : 0.0;
  // Collective inputs the forward frees but the allocator holds to its end
  // (stack.tp_pending_collective_inputs): per layer, one micro-batch's
  // tokens × hidden each (nanotron's row linears' outputs before their
  // reduce-scatter; with sp only, where the linears reduce-scatter). Only
  // without a pipeline: there nothing waits on the GPU within the step, so
  // the host's lead grows over the micro-batches to a whole forward; a
  // pipelined stage's host waits at every received tensor (nanotron's p2p
  // reads the tensor's metadata on the host), which lets the GPU catch up
  // before each backward.
  const double pending_block = c.tp > 1 && c.sequence_parallel && cs.pp == 1
                                   ? T * static_cast<double>(d.model.hidden_size) * d.stack.activation_bytes
                                   : 0.0;
  const double pending_per_layer = d.stack.tp_pending_collective_inputs * pending_block;
  // Zero bubble (ZB-H1, torch pipelining's split backward): what each
  // deferred weight pass keeps beyond the activations (ZeroBubbleHeld).
  const bool zero_bubble = ZeroBubbleApplies(c.schedule, cs.pp, cs.v);
  const double deferred_layer_bytes =
      zero_bubble ? DeferredWeightGradBytes(d.model, d.stack, T, c.tp, c.sequence_parallel) : 0.0;
  // The last stage's head: its logits' gradient (÷ tp) and the final norm's output gradient.
  const double deferred_head_bytes =
      zero_bubble ? T * d.lcm.vocab / std::max(1, c.tp) * d.stack.activation_bytes +
                        T * static_cast<double>(d.model.hidden_size) * d.stack.activation_bytes /
                            (c.sequence_parallel ? std::max(1, c.tp) : 1)
                  : 0.0;
  // backward_state keeps each deferred micro-batch's stage output and its
  // received gradient until W (torch/distributed/pipelining/stage.py,
  // backward_one_chunk / backward_weight_one_chunk); an engine keeping every
  // boundary tensor for the step counts them already.
  const double deferred_boundary_bytes =
      zero_bubble && !d.stack.pp_keeps_boundary_tensors
          ? 2.0 * PipelineBoundaryTensorBytes(d.stack, T, static_cast<double>(d.model.hidden_size), c.tp,
                                              c.sequence_parallel)
          : 0.0;
  out->stage_bytes.resize(cs.pp);
  out->stage_allocated_after_backward.resize(cs.pp);
  out->peak_stage = 0;
  // A stage like the one before (same layers, a middle stage, as many
  // micro-batches in flight) has the same inputs, so the same estimate:
  // deep pipelines repeat one middle stage many times.
  MemoryEstimate previous;
  StageKinds previous_kinds{};
  int previous_layers = -1;
  int64_t previous_bf16 = -1;
  double previous_in_flight = -1, previous_held_in_flight = -1;
  static const StageKinds kOneKind{};
  thread_local UnitCost mixed_layer;
  for (int s = 0; s < cs.pp; ++s) {
    const bool first = s == 0, last = s == cs.pp - 1;
    const int L = stage_layers[s];
    const double in_flight = MicroBatchesInFlight(c.schedule, cs.pp, cs.m, cs.v, s, d.stack.pp_interleaved_full_warmup);
    // Chunks of unequal layers: the activations are those of the specific
    // chunks in flight, not in_flight stages' worth (the boundary tensors, one
    // per chunk whatever its layers, keep the count).
    const double held_in_flight =
        c.schedule == PipelineSchedule::kInterleaved && cs.pp > 1 && StageHasSplitChunks(L, cs.v)
            ? InterleavedHeldLayers(ChunkLayers(L, cs.v), cs.pp, cs.m, s, d.stack.pp_interleaved_full_warmup) / L
            : in_flight;
    const bool middle = !first && !last;
    const int64_t bf16 = Bf16LayersOnStage(d, stage_layers, s);
    const StageKinds& kinds = stage_kinds.empty() ? kOneKind : stage_kinds[s];
    if (middle && !zero_bubble && L == previous_layers && in_flight == previous_in_flight &&
        held_in_flight == previous_held_in_flight && bf16 == previous_bf16 &&
        (!u.several_kinds || kinds == previous_kinds)) {
      out->stage_bytes[s] = previous.total;   // never above the peak so far: it equals stage s-1
      out->stage_allocated_after_backward[s] = previous.allocated_after_backward;
      continue;
    }
    if (u.several_kinds) mixed_layer = u.StageLayer(kinds, L);
    const UnitCost& layer = u.several_kinds ? mixed_layer : u.layer;
    const StageParamCount params = StageParamsOf(layer, u, cs, L, first, last);
    MemoryInputs mi;
    mi.sharding = c.sharding;
    mi.shard_group = cs.shard;
    mi.expert_shard_group = cs.expert_shard;
    mi.prefetch = c.prefetch;
    mi.pipelined = cs.pp > 1;
    mi.device_bytes = d.capacity;
    mi.kept_buffers = kept_buffers;
    mi.pending_collective_bytes = L * pending_per_layer;
    mi.pending_block_bytes = pending_block;
    mi.params.dense = params.dense;
    mi.params.expert = params.expert;
    mi.params.layers = L;
    const double largest_layer = LargestLayerParams(u, kinds);
    const double largest_other = std::max(first ? u.emb.params : 0.0, last ? u.head.params : 0.0);
    mi.params.largest_layer = std::max(largest_layer, largest_other);
    if (layer_gather_bytes != bf16_bytes) {
      const double quantized = (L - bf16) * layer.params;
      mi.gathered_stage_bytes = quantized * layer_gather_bytes + (params.dense + params.expert - quantized) * bf16_bytes;
      mi.gathered_unit_bytes =
          std::max(largest_layer * (bf16 > 0 ? bf16_bytes : layer_gather_bytes), largest_other * bf16_bytes);
    }
    const StageActivations held = StageActivationsOf(terms, kinds, L, bf16, mlp_kinds);
    const int recomputed = c.RecomputedLayers(L);
    if (partial && recomputed < L) {
      // The first `recomputed` layers keep their input, the rest everything;
      // backward rebuilds one recomputed layer at a time (its working set).
      const StageActivations all = StageActivationsOf(kept_terms, kinds, L, bf16, mlp_kinds);
      const double r = static_cast<double>(recomputed) / L;
      mi.activation_bytes = held_in_flight * (r * held.activation + (1.0 - r) * all.activation);
      mi.working_bytes = recomputed > 0 ? held.working : all.working;
    } else {
      mi.activation_bytes = held_in_flight * held.activation;
      mi.working_bytes = held.working;
    }
    if (zero_bubble) {
      // Stage 0's inputs (token ids) need no gradient: its I pass runs
      // nothing and its W the whole backward (stage.py
      // backward_weight_one_chunk, stage_index 0), so it keeps no weight-op
      // gradients; the last stage's output is the loss (no boundary tensors).
      const ZeroBubbleHeld zb = ZeroBubbleMicroBatchesHeld(cs.pp, cs.m, s);
      const double per_deferred = (first ? 0.0 : L * deferred_layer_bytes) + (last ? deferred_head_bytes : 0.0) +
                                  (last ? 0.0 : deferred_boundary_bytes);
      mi.deferred_wgrad_forward_bytes = zb.forward_deferred * per_deferred;
      mi.deferred_wgrad_backward_bytes = zb.backward_deferred * per_deferred;
    }
    mi.logits_bytes = last ? logits_bytes : 0.0;
    mi.held_output_bytes = last ? held_output_bytes : 0.0;
    mi.merged_output_bytes = last ? merged_output_bytes : 0.0;
    const int chunks = c.schedule == PipelineSchedule::kInterleaved ? std::max(1, cs.v) : 1;
    mi.pipeline_buffer_bytes =
        boundary_tensor_bytes > 0
            ? boundary_tensor_bytes * PipelineBoundaryTensors(cs.pp, cs.m, chunks, in_flight * chunks, s)
            : 0.0;
    // The layers' quantized weight copies (not the BF16 blocks; embedding and
    // head stay BF16): the stage's layer weights on this GPU.
    mi.quantized_weight_cache = weight_cache_bytes * (L - bf16) * layer.params;
    const MemoryEstimate mem = EstimateMemory(d.stack, mi);
    out->stage_bytes[s] = mem.total;
    out->stage_allocated_after_backward[s] = mem.allocated_after_backward;
    if (s == 0 || mem.total > out->stage_bytes[out->peak_stage]) {   // the first stage at the peak
      out->peak_stage = s;
      out->peak = mem;
    }
    if (mem.total > stop_above) {   // the verdict is known: some stage does not fit
      out->peak_stage = s;
      out->peak = mem;
      return;
    }
    if (middle) {
      previous = mem;
      previous_kinds = kinds;
      previous_layers = L;
      previous_bf16 = bf16;
      previous_in_flight = in_flight;
      previous_held_in_flight = held_in_flight;
    } else {
      previous_layers = -1;
    }
  }
}

}  // namespace parasim
