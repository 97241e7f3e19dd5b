#include "cost_model/evaluator_memory.h"

#include <algorithm>

namespace parasim {

void SizeStageMemory(const EvaluatorData& d, const ParallelConfig& c, const ConfigShape& cs, const Units& u,
                     const std::vector<int>& stage_layers, MemoryPlan* out) {
  const double T = cs.T;
  // Per-layer activation terms of this config (the same on every stage).
  const double scores = c.recompute == RecomputeMode::kNone ? T * d.score_bytes_per_token / c.tp : 0.0;
  const double layer_activation = LayerActivationBytes(d.act, T, c.tp, c.sequence_parallel, c.recompute) + scores;
  const double working_bytes =
      c.recompute == RecomputeMode::kFull ? LayerWorkingBytes(d.act, T, c.tp, c.sequence_parallel) : 0.0;
  const double logits_bytes = LossBytes(d.stack, T, d.lcm.vocab, c.tp);
  const double held_output_bytes = HeldOutputBytes(d.stack, T, d.lcm.vocab, c.tp, cs.m);
  out->stage_bytes.resize(cs.pp);
  out->peak_stage = 0;
  for (int s = 0; s < cs.pp; ++s) {
    const bool first = s == 0, last = s == cs.pp - 1;
    const int L = stage_layers[s];
    const StageParamCount params = StageParamsOf(u, cs, L, first, last);
    MemoryInputs mi;
    mi.sharding = c.sharding;
    mi.shard_group = cs.shard;
    mi.expert_shard_group = cs.expert_shard;
    mi.prefetch = c.prefetch;
    mi.pipelined = cs.pp > 1;
    mi.params.dense = params.dense;
    mi.params.expert = params.expert;
    mi.params.layers = L;
    mi.params.largest_layer = std::max({u.layer.params, first ? u.emb.params : 0.0, last ? u.head.params : 0.0});
    const double in_flight = MicroBatchesInFlight(c.schedule, cs.pp, cs.m, cs.v, s);
    mi.activation_bytes = in_flight * L * layer_activation;
    mi.working_bytes = working_bytes;
    mi.logits_bytes = last ? logits_bytes : 0.0;
    mi.held_output_bytes = last ? held_output_bytes : 0.0;
    const MemoryEstimate mem = EstimateMemory(d.stack, mi);
    out->stage_bytes[s] = mem.total;
    if (s == 0 || mem.total > out->stage_bytes[out->peak_stage]) {   // the first stage at the peak
      out->peak_stage = s;
      out->peak = mem;
    }
  }
}

}  // namespace parasim
