// What the tier-A passes share (DESIGN.md §1: unit costs -> timed
// communication -> per-stage time -> memory -> report): the evaluator's
// config-independent data, built once per (model, cluster, job), and the
// shape of the one config being evaluated. Plain structs; each pass reads
// them and writes its own result struct.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "core/cluster_spec.h"
#include "core/job_spec.h"
#include "core/model_spec.h"
#include "core/parallel_config.h"
#include "cost_model/collective_cost.h"
#include "cost_model/evaluator_finish.h"
#include "cost_model/layer_cost.h"
#include "cost_model/memory.h"
#include "cost_model/software_stack.h"
#include "cost_model/workload.h"

namespace parasim {

constexpr int kNumDims = 5;  // ParallelDim values
inline int DimIndex(ParallelDim d) { return static_cast<int>(d); }

struct EvaluatorData {
  ModelSpec model;
  ClusterSpec cluster;
  JobSpec job;
  SoftwareStack stack;
  LayerCostModel lcm;
  ActivationPerToken act;        // a layer at the job's precision
  ActivationPerToken act_bf16;   // a block NVFP4 keeps in BF16 (= act for other precisions)
  int64_t bf16_first = 0, bf16_last = 0;   // NVFP4's BF16 blocks at the start and the end
  // A model mixing dense and MoE layers: what a layer of each MLP kind saves
  // ([0] dense MLP, [1] MoE), at the job's precision and in BF16 (unused otherwise).
  std::array<ActivationPerToken, 2> act_mlp{}, act_bf16_mlp{};
  PowerStates power;
  NcclFeatures features;
  double peak_flops = 0;       // dense BF16 per GPU: the MFU convention
  double own_peak_flops = 0;   // the job precision's own dense peak (mfu_own_precision)
  double sm_share = 0;        // SMs an overlapping NCCL kernel takes from compute (fraction)
  double model_flops_per_token = 0;
  double capacity = 0;
  std::string capacity_text;   // capacity in GB as a memory verdict prints it
  double score_bytes_per_token = 0;  // unfused attention activations (÷ tp; selective recompute drops them)
  FacilityPower facility;      // node and fabric-switch power (0 W = not counted)
  uint64_t id = 0;  // unique per instance
  // Keys of the per-thread memo tables (eval_memo.h), shared by the
  // evaluators of AnalyticalEvaluator::Resized for what does not change:
  // kernel_id: model, GPU, stack, precision, seq_len (unit costs, stage
  // splits); fabric_id: + the cluster at this size (group paths, collective
  // times; the micro-batch count, which the batch sets, is in their keys).
  uint64_t kernel_id = 0, fabric_id = 0;
};

// One valid config's sizes, as the passes use them.
struct ConfigShape {
  int world = 1;                 // GPUs
  int m = 1;                     // micro-batches per step
  int pp = 1, v = 1;             // stages, virtual chunks per stage
  double T = 0;                  // tokens per micro-batch per GPU
  bool tied_single_copy = false; // tied embeddings on one stage: the head holds the only copy
  int shard = 1;                 // group the dense weights are sharded over (dp·cp, or G for hsdp)
  int expert_shard = 1;          // group the experts are sharded over
  bool sharded_optimizer = false;
};

// Layers of each kind (ModelSpec::LayerKindOf) one pipeline stage holds.
using StageKinds = std::array<int, kNumLayerKinds>;

// The compute of the three kinds of unit (layer_cost.h); for a model with
// several layer kinds also each kind's layer (`layer` is then their mean
// over the model).
struct Units {
  UnitCost layer, emb, head;
  bool several_kinds = false;
  std::array<UnitCost, kNumLayerKinds> kinds{};

  // The mean layer of a stage holding `n` (summing to `layers` > 0): its
  // kinds weighted by their counts, so `layers` × it is the stage's exact
  // sum; `layer` itself for a model of one kind.
  UnitCost StageLayer(const StageKinds& n, int layers) const {
    if (!several_kinds || layers <= 0) return layer;
    UnitCost mean;
    for (int k = 0; k < kNumLayerKinds; ++k) {
      if (n[k] > 0) AddScaled(mean, kinds[k], static_cast<double>(n[k]) / layers);
    }
    return mean;
  }
};

// Parameters one stage holds (÷ tp, ÷ ep for experts); `layer` = the stage's mean layer.
struct StageParamCount {
  double dense = 0, expert = 0;
};
inline StageParamCount StageParamsOf(const UnitCost& layer, const Units& u, const ConfigShape& cs, int layers,
                                     bool first, bool last) {
  return {layers * layer.dense_params + (first && !cs.tied_single_copy ? u.emb.params : 0.0) +
              (last ? u.head.params : 0.0),
          layers * (layer.params - layer.dense_params)};
}

}  // namespace parasim
