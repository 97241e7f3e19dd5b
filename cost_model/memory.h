// Peak memory per GPU (DESIGN.md §4 Memory per GPU): weights, gradients and
// AdamW state by sharding mode with the stack's bytes per parameter, FSDP's
// gathered working set, activations (Korthikanti et al. 2022 per-layer terms)
// by recompute mode, sequence parallelism, CP and the micro-batches a
// pipeline stage holds, logits, and the framework/NCCL reserve.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/model_spec.h"
#include "core/parallel_config.h"
#include "cost_model/software_stack.h"

namespace parasim {

// Activation bytes one layer keeps per token for backward, split into the
// part every TP rank holds (norm inputs, layer inputs; split only with SP)
// and the part TP splits (Q, K, V, attention output, MLP intermediates).
// bf16, flash attention (no s² terms). Llama (no dropout): replicated 8h;
// split 2·a·d + 4·g·d + 2·a·d + (8f SwiGLU | 4f GELU). With `dropout`
// (1-byte masks after attention and MLP: +2h replicated) a 4h GELU layer is
// Korthikanti's 34·h per token.
struct ActivationPerToken {
  double replicated = 0;
  double split = 0;
  double layer_input = 0;    // what full recomputation keeps (2h)
  double attention_out = 0;  // what selective recomputation drops (2·a·d)
};
ActivationPerToken LayerActivationPerToken(const ModelSpec& model, bool dropout = false);

// Bytes one layer keeps per micro-batch on one GPU: `tokens` = b·s/cp.
double LayerActivationBytes(const ActivationPerToken& a, double tokens, int tp, bool sequence_parallel,
                            RecomputeMode recompute);
// Bytes of one layer's full working activations (what full recompute rebuilds in backward).
double LayerWorkingBytes(const ActivationPerToken& a, double tokens, int tp, bool sequence_parallel);

// Micro-batches whose activations a stage holds at its peak (stage 0 holds
// the most): 1 without pipelining; 1F1B min(m, p − stage); GPipe m;
// interleaved p + (p−1)/v on stage 0 (Korthikanti et al. 2022 §4.2.3).
double MicroBatchesInFlight(PipelineSchedule schedule, int pp, int num_micro_batches, int vpp, int stage);

// Parameters held by one GPU of a stage, before data-parallel sharding.
struct StageParams {
  double dense = 0;            // ÷ tp (attention, dense MLP, norms, embedding, LM head on their stages)
  double expert = 0;           // MoE experts ÷ (tp·ep)
  double largest_layer = 0;    // largest layer's share (FSDP working set)
  int layers = 0;
};

struct MemoryInputs {
  ShardingMode sharding = ShardingMode::kZero2;
  int shard_group = 1;          // dense parameters: dp·cp, or G for hsdp
  int expert_shard_group = 1;   // experts: dp·cp / ep (hsdp: min with G)
  int prefetch = 1;
  bool pipelined = false;       // pp > 1 (FSDP gathers once and accumulates unsharded)
  StageParams params;
  double activation_bytes = 0;  // all micro-batches in flight on the stage
  double working_bytes = 0;     // extra transient (full recompute of one layer)
  double logits_bytes = 0;      // last stage: one micro-batch's logits for the loss
};

struct MemoryEstimate {
  double weights = 0, gathered_weights = 0, grads = 0, optimizer = 0;
  double activations = 0, logits = 0, reserve = 0;
  double total = 0;
  std::vector<std::pair<std::string, double>> Breakdown() const;
};

MemoryEstimate EstimateMemory(const SoftwareStack& stack, const MemoryInputs& in);

}  // namespace parasim
