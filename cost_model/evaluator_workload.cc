#include "cost_model/evaluator_workload.h"

#include <algorithm>
#include <string>
#include <utility>

#include "cost_model/evaluator_report.h"
#include "cost_model/interleaved_chunks.h"

namespace parasim {

namespace {

LayerWork MakeLayer(const UnitCost& u, const std::vector<WorkloadCollective>& coll, const std::string& name, int index,
                    int chunk) {
  LayerWork w;
  w.name = name;
  w.layer_index = index;
  w.chunk = chunk;
  w.forward_time = Seconds(u.fwd.Total());
  w.backward_time = Seconds(u.bwd.Total());
  w.recompute_time = Seconds(u.recompute_s);
  w.forward_matmul_time = Seconds(u.fwd.Matmul());
  w.backward_matmul_time = Seconds(u.bwd.Matmul());
  w.forward_attention_time = Seconds(u.fwd.attention);
  w.backward_attention_time = Seconds(std::max(0.0, OwnBackwardAttention(u)));
  w.weight_grad_time = Seconds(WeightGradSeconds(u));
  w.forward_flops = Flops(u.fwd_flops);
  w.backward_flops = Flops(u.bwd_flops);
  w.forward_bytes = Bytes(u.fwd_bytes);
  w.backward_bytes = Bytes(u.bwd_bytes);
  w.parameter_bytes = Bytes(2.0 * u.params);
  w.collectives = coll;
  return w;
}

// Step-level fields: schedule, sharding, FLOPs, power.
void FillStepFields(const EvaluatorData& d, const ParallelConfig& c, const ConfigShape& cs, double interference,
                    StepWorkload* wl) {
  const StepFlops flops = StepFlopsOf(d, c);
  wl->config = c;
  wl->num_micro_batches = cs.m;
  wl->virtual_stages = cs.v;
  wl->schedule = c.schedule;
  wl->sharding = c.sharding;
  wl->prefetch_depth = c.prefetch;
  wl->reshard_after_forward = (c.sharding == ShardingMode::kZero3 || c.sharding == ShardingMode::kHsdp) &&
                              !(cs.pp > 1 && d.stack.fsdp_pp_accumulate_unsharded);
  wl->comm_interference = interference;
  wl->selective_reruns_attention =
      c.recompute == RecomputeMode::kSelective && RecomputesAttention(c.recompute, d.stack);
  wl->dp_overlap_per_chunk = d.stack.dp_overlap_per_chunk;
  // Tier A's rule (evaluator_stage_time.cc TimeShape): overlapped only with
  // pp_overlap_p2p on the interleaved schedule.
  wl->pp_sends_block =
      !(d.stack.pp_overlap_p2p && c.schedule == PipelineSchedule::kInterleaved && cs.v > 1);
  wl->tokens_per_step = d.job.TokensPerStep();
  wl->model_flops_per_step = Flops(flops.model);
  wl->hardware_flops_per_step = Flops(flops.hardware);
  wl->power = d.power;
  wl->node_overhead_power = d.cluster.node_overhead_power;
  wl->world_size = cs.world;
  // Tier A's host_mb (evaluator_stage_time.cc): exposed only when the
  // pipeline's p2p blocks the host; otherwise the host queues kernels ahead
  // of the GPU and its per-micro-batch work hides behind earlier kernels.
  wl->host_per_micro_batch =
      Seconds(cs.pp > 1 && d.stack.pp_host_synchronous ? d.stack.host_per_micro_batch_s : 0.0);
}

}  // namespace

void BuildStepWorkload(const EvaluatorData& d, const ParallelConfig& c, const ConfigShape& cs, const Units& u,
                       const TimedComm& comm, const CommRecord& record, const std::vector<int>& stage_layers,
                       const StagePlan& stages, const MemoryPlan& memory, StepWorkload* wl, const Units* kept) {
  FillStepFields(d, c, cs, comm.interference, wl);
  wl->stages.clear();
  const int pp = cs.pp, v = cs.v;
  int layer_index = 0;
  // Each stage's layers chunk by chunk (ChunkLayers: equal where they divide)
  // and the model layer each holds (Megatron's chunk j·pp + s with vpp;
  // CountStageKinds counts the same layers).
  const std::vector<std::vector<int64_t>> model_layers = InterleavedModelLayers(stage_layers, v);
  for (int s = 0; s < pp; ++s) {
    StageWork sw;
    sw.stage = s;
    const int L = stage_layers[s];
    if (s == 0) sw.layers.push_back(MakeLayer(u.emb, record.emb, "embedding", -1, 0));
    const std::vector<int> chunk_layers = ChunkLayers(L, v);
    std::vector<int> layers_in_chunk(v, 0);   // per chunk (as the simulator's step builder counts)
    int chunk = 0, chunk_end = chunk_layers[0];
    int moe_layers = 0;
    for (int i = 0; i < L; ++i, ++layer_index) {
      while (i >= chunk_end && chunk + 1 < v) chunk_end += chunk_layers[++chunk];
      // A model with several layer kinds: each layer its own kind's compute.
      const int64_t model_layer = v > 1 ? model_layers[s][i] : layer_index;
      if (d.model.IsMoe() && model_layer < d.model.num_layers && d.model.IsMoeLayer(model_layer)) ++moe_layers;
      // Partial full recompute: layers past the first recompute_layers/vpp of
      // their chunk keep their activations (the recompute=none costs in `kept`).
      const bool recomputed = c.FullyRecomputes(layers_in_chunk[std::clamp(chunk, 0, v - 1)]++);
      const Units& units = kept != nullptr && !recomputed ? *kept : u;
      const UnitCost& cost = units.several_kinds && model_layer < d.model.num_layers
                                 ? units.kinds[d.model.LayerKindOf(model_layer)]
                                 : units.layer;
      sw.layers.push_back(MakeLayer(cost, record.layer, StrCat("layer ", layer_index), layer_index, chunk));
    }
    if (s == pp - 1) {
      sw.layers.push_back(MakeLayer(u.head, record.head, "lm_head", -1, v - 1));
    }
    // The stage's own step-end collectives, as tier A times them (on its
    // last unit: the simulator runs every unit's before the optimizer).
    if (!sw.layers.empty()) TimeStageStepEnd(d, c, L, moe_layers, s == pp - 1, &sw.layers.back().collectives);
    sw.pp_send_bytes = pp > 1 ? record.pp_send.size : Bytes(0);
    sw.pp_send_time = pp > 1 ? record.pp_send.duration : Seconds(0);
    sw.optimizer_time = Seconds(stages.Of(s).optimizer);
    sw.memory_peak = Bytes(memory.stage_bytes[s]);
    wl->stages.push_back(std::move(sw));
  }
}

}  // namespace parasim
