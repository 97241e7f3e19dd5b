// Which collectives each parallelism issues (DESIGN.md §4 Communication per
// parallelism): op, bytes (nccl-tests size convention), group (ParallelDim +
// SubGroup), phase, blocking or not, and how often — per transformer layer,
// for the embedding / LM head units, per pipeline boundary and per step.
// Durations are filled in by the evaluator from the collective model.
#pragma once

#include <vector>

#include "core/model_spec.h"
#include "core/parallel_config.h"
#include "cost_model/flops.h"
#include "cost_model/software_stack.h"
#include "cost_model/workload.h"

namespace parasim {

struct CommPlanInputs {
  double tokens = 0;            // tokens per micro-batch on one GPU before tp: b·s/cp
  double hidden = 0;            // h
  double kv_width = 0;          // g·d
  double query_width = 0;       // a·d: queries and the attention output (CP all-to-all)
  double layer_dense_params = 0;   // one layer's dense parameters on one GPU (÷ tp)
  double layer_expert_params = 0;  // one layer's expert parameters on one GPU (÷ tp·ep)
  double experts_per_token = 0;    // top-k (0: dense)
  // Share of the layers with routed experts (DeepSeek's first dense layers,
  // Llama 4's interleave): the averaged layer dispatches this share of tokens.
  double moe_layer_fraction = 1;
  int num_micro_batches = 1;
  // Bytes per element of the sequence-parallel TP all-gathers (0: the
  // stack's activation_bytes; 1: FP8 gathers, SoftwareStack::fp8_tp_gathers).
  double tp_gather_bytes = 0;
};

struct CommPlan {
  std::vector<WorkloadCollective> layer;   // every transformer layer issues these
  std::vector<WorkloadCollective> step;    // once per step per stage, beside the layers' own
  WorkloadCollective pp_send;              // per micro-batch per boundary per direction (pp > 1)
  bool has_pp_send = false;
  // A partitioning engine (stack.pp_partition_over_tp): the receiver's tp
  // all-gather of the boundary tensor, and the small shape messages before it.
  WorkloadCollective pp_gather;
  bool has_pp_gather = false;
  WorkloadCollective pp_meta;
  double pp_meta_count = 0;
};

// Attention blocks a layer's CP runs one after another, each with a ring step
// beside it: the ring's ranks (ParallelConfig::CpRingSize), or cp for a stack
// whose all-gather kind keeps the ring's loop (cp_allgather_ring_loop).
inline int CpRingSteps(const ParallelConfig& c, const SoftwareStack& s) {
  return c.cp > 1 && c.cp_comm == CpComm::kAllGather && s.cp_allgather_ring_loop ? c.cp : c.CpRingSize();
}

// Collectives of one transformer layer plus per-step ones (durations unset).
CommPlan BuildCommPlan(const ParallelConfig& config, const SoftwareStack& stack, const CommPlanInputs& in);

// Sharding collectives for a unit that is not a transformer layer (embedding,
// LM head): same rules as a layer's dense parameters.
std::vector<WorkloadCollective> ShardingCollectives(const ParallelConfig& config, const SoftwareStack& stack,
                                                    double params, int num_micro_batches, const char* what);

// The tied word embedding's gradient all-reduce between the first and last
// pipeline stage (a model whose input embedding and LM head share a weight,
// pp > 1: each end stage holds a copy of the V·h/tp shard `params`). Blocking,
// once per step after the data-parallel sync, in stack.tied_grad_bytes per
// element; false when the stack runs none (tied_grad_bytes = 0) or pp = 1.
// The group is the first and the last member of each pp group (`sub` =
// GroupEnds(), topology/group_path.h), timed on GroupEndsPath.
bool TiedEmbeddingCollective(const ParallelConfig& config, const SoftwareStack& stack, double params,
                             WorkloadCollective* out);

// Elements, on one GPU of a stage holding `layers` transformer layers (of
// which `moe_layers` route to experts) and, when `last`, the final norm,
// whose gradients every tp rank holds whole and partially summed: what
// Megatron marks sequence_parallel (the norms' weights and biases, the
// row-parallel projection and fc2 biases, the MoE router weight) with
// sequence parallelism, plus the per-head q/k norm weights with or without
// it; 0 at tp = 1.
double TpReplicatedGradElements(const ModelSpec& model, const ParallelConfig& config, double layers,
                                double moe_layers, bool last);

// Their all-reduce over tp, once per step after the last backward, coalesced
// into one buffer of stack.sp_grad_bytes per element (Megatron-Core
// finalize_model_grads, _allreduce_layernorm_grads). Blocking, booked under
// tp. False when the stack runs none (sp_grad_bytes = 0) or there is nothing.
bool TpReplicatedGradCollective(const ParallelConfig& config, const SoftwareStack& stack, double elements,
                                WorkloadCollective* out);

// The optimizer's clip-grad-norm all-reduce of one fp32 (stack.grad_norm_allreduce),
// once per step, blocking: over every rank where the optimizer is sharded
// (`*world` true; booked under dp), over the model-parallel tp·pp group
// otherwise (`*world` false; booked under pp, or tp at pp = 1). The evaluator
// times it on that whole group; `out->dim` names only where it is booked.
// False when the stack runs none or the group is one rank.
bool GradNormCollective(const ParallelConfig& config, const SoftwareStack& stack, WorkloadCollective* out,
                        bool* world);

// The data-parallel group of dense weights spans dp·cp ranks (context-parallel
// ranks hold the same weights and reduce their gradients together, as in
// Megatron-Core and torchtitan). Returns the config whose dp group is that
// group (dp·cp, cp = 1; with the default order cp sits next to dp).
ParallelConfig WeightGroupConfig(const ParallelConfig& config);

}  // namespace parasim
