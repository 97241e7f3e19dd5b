#include "cost_model/evaluator_memory.h"

#include <algorithm>
#include <array>

#include "cost_model/eval_memo.h"
#include "cost_model/evaluator_stage_time.h"
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

// What a config's memory needs beside its stages' layers, and what neither
// its data-parallel degree nor its micro-batch count changes.
struct ConfigTerms {
  LayerTerms terms, kept_terms;   // kept_terms: partial full recompute's kept layers (as none)
  bool mlp_kinds = false, partial = false;
  double bf16_bytes = 0, layer_gather_bytes = 0, weight_cache_bytes = 0, logits_bytes = 0, kept_buffers = 0;
};

ConfigTerms ConfigTermsOf(const EvaluatorData& d, const ParallelConfig& c, const ConfigShape& cs, const Units& u) {
  ConfigTerms ct;
  const double T = cs.T;
  // All-gather CP: backward holds the gathered K,V of the whole sequence
  // and their gradients before the reduce-scatter (one layer at a time).
  // K,V a·d wide where the stack repeats them to every head first (repeats_kv_heads).
  const double kv_width = d.stack.repeats_kv_heads ? d.lcm.ad : d.lcm.gd;
  const double cp_gathered_kv = c.cp > 1 && c.cp_comm == CpComm::kAllGather
                                    ? 2.0 * c.cp * T * 2.0 * kv_width / c.tp * d.stack.activation_bytes
                                    : 0.0;
  // A model mixing dense and MoE layers: each MLP kind's per-layer terms.
  ct.mlp_kinds = u.several_kinds && d.model.MixesLayerKinds();
  // The config's per-layer terms; with partial full recompute also those of
  // the layers that keep everything (as recompute=none).
  ct.terms = LayerTermsOf(d, c, T, c.recompute, ct.mlp_kinds, cp_gathered_kv);
  ct.partial = c.recompute == RecomputeMode::kFull && c.recompute_layers > 0;
  ct.kept_terms = ct.partial ? LayerTermsOf(d, c, T, RecomputeMode::kNone, ct.mlp_kinds, cp_gathered_kv) : ct.terms;
  const Precision p = d.job.precision;
  const bool primary_quantized = c.sharding != ShardingMode::kDdp && ((p == Precision::kFp8 && d.stack.fp8_param_gather) ||
                                                                     (p == Precision::kFp4 && d.stack.fp4_param_gather));
  ct.weight_cache_bytes =
      p == Precision::kBf16 || p == Precision::kFp32
          ? 0.0
          : QuantizedWeightCacheBytes(d.stack, p, d.cluster.gpu.architecture == "blackwell", primary_quantized);
  // Weights gathered already quantized (primary_quantized: FSDP2 float8
  // all-gather, Megatron --fp8/fp4-param-gather) are that size unsharded;
  // embedding, head and NVFP4's BF16 blocks are gathered in BF16.
  ct.bf16_bytes = d.stack.compute_param_bytes;
  ct.layer_gather_bytes = primary_quantized ? ParamGatherBytes(d.stack, p) : ct.bf16_bytes;
  // The loss, and the head's all-gathered input it saved (DTensor SP), both
  // live at the loss's backward peak on the last stage.
  ct.logits_bytes =
      LossBytes(d.stack, T, d.lcm.vocab, c.tp) +
      GatheredHeadInputBytes(d.stack, T, static_cast<double>(d.model.hidden_size), c.tp, c.sequence_parallel);
  // The framework's kept TP all-gather buffers: micro-batch tokens × hidden each.
  ct.kept_buffers = c.tp > 1 && c.sequence_parallel ? d.stack.tp_gather_buffers * T *
                                                          static_cast<double>(d.model.hidden_size) *
                                                          d.stack.activation_bytes
                                                    : 0.0;
  return ct;
}

// One stage's memory inputs that neither the data-parallel degree nor the
// micro-batch count changes.
struct StageTerms {
  StageParams params;
  double gathered_stage_bytes = 0, gathered_unit_bytes = 0;
  double activation_per_mb = 0;   // × the micro-batches in flight
  double working = 0, logits = 0, quantized_weight_cache = 0;
};

StageTerms StageTermsOf(const ConfigTerms& ct, const ParallelConfig& c, const ConfigShape& cs, const Units& u,
                        const StageKinds& kinds, int L, int64_t bf16, bool first, bool last) {
  StageTerms t;
  UnitCost mixed_layer;
  if (u.several_kinds) mixed_layer = u.StageLayer(kinds, L);
  const UnitCost& layer = u.several_kinds ? mixed_layer : u.layer;
  const StageParamCount params = StageParamsOf(layer, u, cs, L, first, last);
  t.params.dense = params.dense;
  t.params.expert = params.expert;
  t.params.layers = L;
  const double largest_layer = LargestLayerParams(u, kinds);
  const double largest_other = std::max(first ? u.emb.params : 0.0, last ? u.head.params : 0.0);
  t.params.largest_layer = std::max(largest_layer, largest_other);
  if (ct.layer_gather_bytes != ct.bf16_bytes) {
    const double quantized = (L - bf16) * layer.params;
    t.gathered_stage_bytes =
        quantized * ct.layer_gather_bytes + (params.dense + params.expert - quantized) * ct.bf16_bytes;
    t.gathered_unit_bytes =
        std::max(largest_layer * (bf16 > 0 ? ct.bf16_bytes : ct.layer_gather_bytes), largest_other * ct.bf16_bytes);
  }
  const StageActivations held = StageActivationsOf(ct.terms, kinds, L, bf16, ct.mlp_kinds);
  const int recomputed = c.RecomputedLayers(L);
  if (ct.partial && recomputed < L) {
    // The first `recomputed` layers keep their input, the rest everything;
    // backward rebuilds one recomputed layer at a time (its working set).
    const StageActivations all = StageActivationsOf(ct.kept_terms, kinds, L, bf16, ct.mlp_kinds);
    const double r = static_cast<double>(recomputed) / L;
    t.activation_per_mb = r * held.activation + (1.0 - r) * all.activation;
    t.working = recomputed > 0 ? held.working : all.working;
  } else {
    t.activation_per_mb = held.activation;
    t.working = held.working;
  }
  t.logits = last ? ct.logits_bytes : 0.0;
  // The layers' quantized weight copies (not the BF16 blocks; embedding and
  // head stay BF16): the stage's layer weights on this GPU.
  t.quantized_weight_cache = ct.weight_cache_bytes * (L - bf16) * layer.params;
  return t;
}

// A config whose stages are the first, the last and equal middle ones (one
// layer kind, no NVFP4 BF16 blocks; the planner's balanced and
// lighter-ends splits): the three stages' terms, memoized per thread by
// what they depend on beside the evaluator's kernel (model, GPU, stack,
// precision, sequence): the unit costs' key (tp, ep, cp, its kind and
// all-to-all group, mbs, sp, recompute), the recomputed layers, the split
// (pp, the end and middle stages' layers) and whether the weights are
// sharded (FP8/FP4 parameter gathers). Not in it: dp, the micro-batch count,
// sharding mode, prefetch, schedule, vpp, order: the configs of one query
// that differ only in those find them, as may a scheduler's next query.
struct RegularStages {
  std::array<StageTerms, 3> stage;   // first, last, middle
  double kept_buffers = 0;
};
using RegularStagesKey = WordKey<8>;

bool IsRegular(const EvaluatorData& d, const Units& u, const std::vector<int>& stage_layers) {
  if (u.several_kinds || d.bf16_first + d.bf16_last > 0) return false;
  for (size_t s = 2; s + 1 < stage_layers.size(); ++s) {
    if (stage_layers[s] != stage_layers[1]) return false;
  }
  return true;
}

const RegularStages& RegularStagesFor(const EvaluatorData& d, const ParallelConfig& c, const ConfigShape& cs,
                                      const Units& u, const std::vector<int>& stage_layers) {
  const int pp = cs.pp;
  const RegularStagesKey key{{d.kernel_id, Pack(c.tp, c.ep), Pack(c.cp, c.micro_batch),
                              Pack((c.sequence_parallel ? 1 : 0) | static_cast<int>(c.cp_comm) << 1 |
                                       (c.sharding != ShardingMode::kDdp ? 1 : 0) << 8,
                                   c.cp_a2a_size),
                              Pack(static_cast<int>(c.recompute), c.recompute_layers), static_cast<uint64_t>(pp),
                              Pack(stage_layers.front(), stage_layers.back()),
                              static_cast<uint64_t>(pp > 2 ? stage_layers[1] : 0)}};
  thread_local SlotMemo<RegularStagesKey, RegularStages, 256> memo;
  return memo.Get(key, [&] {
    static const StageKinds kOneKind{};
    const ConfigTerms ct = ConfigTermsOf(d, c, cs, u);
    RegularStages out;
    out.kept_buffers = ct.kept_buffers;
    out.stage[0] = StageTermsOf(ct, c, cs, u, kOneKind, stage_layers.front(), 0, true, pp == 1);
    if (pp > 1) out.stage[1] = StageTermsOf(ct, c, cs, u, kOneKind, stage_layers.back(), 0, false, true);
    if (pp > 2) out.stage[2] = StageTermsOf(ct, c, cs, u, kOneKind, stage_layers[1], 0, false, false);
    return out;
  });
}

}  // namespace

void SizeStageMemory(const EvaluatorData& d, const ParallelConfig& c, const ConfigShape& cs, const Units& u,
                     const std::vector<int>& stage_layers, MemoryPlan* out, double stop_above) {
  const bool regular = IsRegular(d, u, stage_layers);
  const RegularStages* reg = regular ? &RegularStagesFor(d, c, cs, u, stage_layers) : nullptr;
  thread_local ConfigTerms ct;
  if (!regular) ct = ConfigTermsOf(d, c, cs, u);
  static const std::vector<StageKinds> kNoKinds;
  const std::vector<StageKinds>& stage_kinds = regular ? kNoKinds : StageKindSplit(d, c, stage_layers);
  const double held_output_bytes = HeldOutputBytes(d.stack, cs.T, d.lcm.vocab, c.tp, cs.m, cs.pp > 1);
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
  double previous_in_flight = -1;
  static const StageKinds kOneKind{};
  StageTerms general;
  for (int s = 0; s < cs.pp; ++s) {
    const bool first = s == 0, last = s == cs.pp - 1;
    const int L = stage_layers[s];
    const double in_flight = MicroBatchesInFlight(c.schedule, cs.pp, cs.m, cs.v, s, d.stack.pp_interleaved_full_warmup);
    const bool middle = !first && !last;
    const int64_t bf16 = regular ? 0 : Bf16LayersOnStage(d, stage_layers, s);
    const StageKinds& kinds = stage_kinds.empty() ? kOneKind : stage_kinds[s];
    if (middle && L == previous_layers && in_flight == previous_in_flight && bf16 == previous_bf16 &&
        (!u.several_kinds || kinds == previous_kinds)) {
      out->stage_bytes[s] = previous.total;   // never above the peak so far: it equals stage s-1
      out->stage_allocated_after_backward[s] = previous.allocated_after_backward;
      continue;
    }
    if (!regular) general = StageTermsOf(ct, c, cs, u, kinds, L, bf16, first, last);
    const StageTerms& t = regular ? reg->stage[first ? 0 : last ? 1 : 2] : general;
    MemoryInputs mi;
    mi.sharding = c.sharding;
    mi.shard_group = cs.shard;
    mi.expert_shard_group = cs.expert_shard;
    mi.prefetch = c.prefetch;
    mi.pipelined = cs.pp > 1;
    mi.device_bytes = d.capacity;
    mi.kept_buffers = regular ? reg->kept_buffers : ct.kept_buffers;
    mi.params = t.params;
    mi.gathered_stage_bytes = t.gathered_stage_bytes;
    mi.gathered_unit_bytes = t.gathered_unit_bytes;
    mi.activation_bytes = in_flight * t.activation_per_mb;
    mi.working_bytes = t.working;
    mi.logits_bytes = t.logits;
    mi.held_output_bytes = last ? held_output_bytes : 0.0;
    mi.quantized_weight_cache = t.quantized_weight_cache;
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
    } else {
      previous_layers = -1;
    }
  }
}

}  // namespace parasim
