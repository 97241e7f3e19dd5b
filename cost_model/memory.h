// Peak memory per GPU (DESIGN.md §4 Memory per GPU) as a peak over phases:
// persistent states (weights, gradients, optimizer state by sharding mode with
// the stack's bytes per parameter) plus the largest transient phase — end of
// forward (activations of the micro-batches in flight, gathered weights, the
// loss), backward of the last layer (activations, the recompute working set,
// gathered weights, gradient temporaries), gradient reduction (the flattened
// bucket) or the optimizer step (its temporaries) — never their sum. The
// CUDA context and the stack's reserve (NCCL buffers, workspaces) come on top:
// the total is what nvidia-smi shows. The GEMM libraries' workspaces
// (stack.gemm_workspace_bytes) are persistent and allocated.
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
// Korthikanti's 34·h per token. An MoE layer adds its router's indices and
// probabilities (MoeRouterSavedBytes, replicated) and the dispatched copies
// 2·(k·h + k) (unsplit). QK norm (ModelSpec::qk_norm) adds its inputs
// 2·(a·d + g·d) and fp32 statistics per head row (QkNormStatsBytes) to split;
// post-norms (norms_per_layer > 2) add 2h replicated each.
struct ActivationPerToken {
  double replicated = 0;
  double split = 0;
  double layer_input = 0;    // what full recomputation keeps (2h)
  double attention_out = 0;  // what selective recomputation drops (2·a·d)
  // Op-level SAC (stack.sac_matmul_recompute_fraction > 0): what a layer keeps
  // per token under recompute=selective, all split by tp but the layer input
  // (0 = attention-only selective).
  double sac_saved = 0;
  // Of what op-level SAC keeps, the part every TP rank holds whole: saved
  // row-parallel matmul outputs nobody reads (stack.sac_keeps_unread_outputs),
  // h-wide partial sums before their reduction on every rank.
  double sac_saved_unsplit = 0;
  // Bytes every TP rank holds whole, neither ÷ tp nor ÷ tp under SP: an MoE
  // layer's dispatched tokens, all-gathered over the expert-TP group (= tp)
  // after the EP all-to-all (MoeDispatchedElements).
  double unsplit = 0;
};
ActivationPerToken LayerActivationPerToken(const ModelSpec& model, bool dropout = false);
// Bytes per token of the statistics a per-head Q/K norm keeps for backward:
// fp32 1/rms (RMSNorm, weightless L2 norm) or mean and 1/σ (LayerNorm) for
// each of the a query and g key heads; 0 without qk_norm. Not scaled by the
// activation dtype.
double QkNormStatsBytes(const ModelSpec& model);
// Bytes per token an MoE layer's router keeps for backward on the rank's own
// tokens (replicated part): the top-k indices (int64) and the top-k softmax
// output (fp32); 0 for a dense layer. Not scaled by the activation dtype.
double MoeRouterSavedBytes(const ModelSpec& model);
// Elements per token (activation dtype) an MoE layer's experts keep beyond the
// intermediates SavedMlpWidth counts: the k permuted copies of the token's
// hidden state (grouped fc1 input, k·h) and their k routing probabilities;
// held whole on every expert-TP rank (ActivationPerToken::unsplit). 0 dense.
double MoeDispatchedElements(const ModelSpec& model);
// Per-token width of a layer's MLP activations: f for a dense model; for an
// MoE model the k routed experts' k·f_e plus the shared experts' width
// (every token passes them).
double SavedMlpWidth(const ModelSpec& model);
// The model with its MoE switched off: what a dense layer of a model mixing
// dense and MoE layers saves (its dense MLP width f).
ModelSpec DenseMlpLayerModel(const ModelSpec& model);
// The stack's activation dtype (`activation_bytes`, 2 = bf16/fp16, 4 = fp32)
// scales every saved tensor but the 1-byte dropout masks.
ActivationPerToken LayerActivationPerToken(const ModelSpec& model, const SoftwareStack& stack);
// Op-level SAC recomputing the fraction f of a layer's matmuls: whether it
// saves the `position`-th (1-based, forward order) matmul's output.
bool SacSavesMatmul(int position, double f);
// Elements per token of the outputs op-level SAC saves but backward never
// reads (the attention output projection, 4th matmul, and a dense MLP's down
// projection, 7th SwiGLU / 6th GELU, where the policy saves them): what an
// eager run keeps beyond a compiled block (stack.sac_keeps_unread_outputs).
double SacSavedUnreadOutputWidth(const ModelSpec& model, double f);
// Bytes per token a fused SwiGLU (stack.swiglu_saves_input_only) does not
// keep: SiLU(gate), f elements of the activation dtype; 0 for other MLPs.
double FusedSwiGluSavedBytes(const ModelSpec& model, const SoftwareStack& stack);
// Bytes per token (per layer, split over tp like the attention) a stack
// whose saved query keeps the packed q,k,v copy (stack.query_keeps_packed_qkv)
// holds beyond the q, k, v it counts: that copy's k and v, 2·a·d elements of
// the activation dtype, with multi-head attention only; 0 otherwise.
double PackedQkvKeptBytes(const ModelSpec& model, const SoftwareStack& stack);

// Bytes the loss keeps for one micro-batch of `tokens` tokens on one GPU:
// logits_bytes_per_element per vocab element (÷ tp: vocab-parallel), over the
// whole micro-batch, or over `loss_chunk_tokens` where the loss is chunked
// (fused linear-cross-entropy: the full logits never exist). With tp > 1 the
// stack's vocab_parallel_logits_bytes_per_element where it sets one.
double LossBytes(const SoftwareStack& stack, double tokens, double vocab, int tp);

// Bytes of the output layer's saved input that TP all-gathered from the
// sequence-parallel shards: tokens·h in the activation dtype (not ÷ tp),
// where the stack saves the gathered copy (tp_saves_gathered_head_input)
// and the config runs tp > 1 with sequence parallelism; 0 otherwise.
double GatheredHeadInputBytes(const SoftwareStack& stack, double tokens, double hidden, int tp,
                              bool sequence_parallel);

// Bytes of the last stage's outputs (logits in the activation dtype, ÷ tp)
// of earlier micro-batches that the pipeline engine still references while
// the current one computes its loss: min(held_last_stage_outputs, m − 1)
// micro-batches (none when the step has one micro-batch). `pipelined`: where
// the loss in use is the stack's vocab-parallel one (tp > 1) and its peak
// leaves out the logits (vocab_parallel_peak_excludes_logits: the trainer
// drops them before backward), an engine that holds outputs
// (held_last_stage_outputs > 0) still holds the current micro-batch's at that
// peak: one more.
double HeldOutputBytes(const SoftwareStack& stack, double tokens, double vocab, int tp, int num_micro_batches,
                       bool pipelined = false);

// Bytes one layer keeps per micro-batch on one GPU: `tokens` = b·s/cp.
double LayerActivationBytes(const ActivationPerToken& a, double tokens, int tp, bool sequence_parallel,
                            RecomputeMode recompute);
// Bytes of one layer's full working activations (what full recompute rebuilds in backward).
double LayerWorkingBytes(const ActivationPerToken& a, double tokens, int tp, bool sequence_parallel);

// Micro-batches whose activations a stage holds at its peak (stage 0 holds
// the most): 1 without pipelining; 1F1B min(m, p − stage); GPipe m;
// interleaved p + (p − 1 − 2·stage)/v (Korthikanti et al. 2022 §4.2.3 for
// stage 0; Megatron-Core's warm-up count per rank). `full_warmup`:
// SoftwareStack::pp_interleaved_full_warmup.
double MicroBatchesInFlight(PipelineSchedule schedule, int pp, int num_micro_batches, int vpp, int stage,
                            bool full_warmup = true);
// ZB-H1 as torch.distributed.pipelining's ScheduleInterleavedZeroBubble runs
// it with one stage per rank (the order simulator/pipeline_schedule.cc
// ZeroBubbleH1Order replays): 1F1B's F and input-gradient (I) passes, stage s
// running the weight pass W(k) after I(k + s). A micro-batch's activations
// stay until its W, because stage_backward_input runs autograd with
// retain_graph=True and keeps the graph's weight-gradient intermediates (and
// all the saved tensors below them) in param_groups for stage_backward_weight
// (torch/distributed/pipelining/_backward.py); the prehooks there also keep
// each weight op's output gradient. `held`: micro-batches with their
// activations; `deferred`: of those, the ones whose I ran and W did not.
// Counted at the end of a forward and at the end of an I before the W that
// follows it (where the largest `held` comes with the largest `deferred`:
// pipeline_schedule_test replays the order). m ≥ p: held p on every stage
// (1F1B: p − s), deferred s at a forward's end, s + 1 after an I.
struct ZeroBubbleHeld {
  double forward_held = 0, forward_deferred = 0;
  double backward_held = 0, backward_deferred = 0;
};
ZeroBubbleHeld ZeroBubbleMicroBatchesHeld(int pp, int num_micro_batches, int stage);
// Bytes per micro-batch one layer's deferred weight pass keeps beyond its
// activations: the output gradient of every op with a weight, which
// stage_backward_input's prehooks store in param_groups["grads"] (the
// column-parallel Q, K, V and MLP-up GEMMs ÷ tp; the row-parallel output and
// down projections' full h-wide outputs on every TP rank; each norm's output,
// ÷ tp under SP; an MoE layer's k dispatched down-projection outputs and its
// router's logits). `tokens` = b·s/cp.
double DeferredWeightGradBytes(const ModelSpec& model, const SoftwareStack& stack, double tokens, int tp,
                               bool sequence_parallel);

// Interleaved 1F1B with v > 1 chunks per stage: the stage-equivalents of
// chunk activations `stage` holds at its peak, min(m, p + (p − 1 − 2·stage)/v),
// all m when m = p and `full_warmup` (Megatron runs every chunk forward first
// then; torch's ScheduleInterleaved1F1B keeps the warm-up count). Chunks of
// L/v layers; stages split into unequal chunks: InterleavedHeldLayers
// (interleaved_chunks.h).
double InterleavedMicroBatchesInFlight(int pp, int num_micro_batches, int vpp, int stage, bool full_warmup = true);

// Stage-boundary tensors (each one micro-batch's stage input or output:
// tokens·h in the activation dtype, ÷ tp under SP) that an engine keeping
// them per micro-batch (SoftwareStack::pp_keeps_boundary_tensors, torch.
// distributed.pipelining) holds on pipeline rank `stage` beyond the layer
// inputs its activations count, at the rank's last backward that starts
// with `chunks_in_flight` chunk forwards held (1F1B: the steady state's end,
// every forward done; the last stage: the last micro-batch's loss, as
// HeldOutputBytes). Per chunk (v per rank, chunk j is stage stage + j·pp):
// not the last stage, m output-gradient receive buffers and m kept outputs;
// not the first, m input receive buffers, of which those of the
// micro-batches in flight are the first layer's saved input, and one input
// gradient per backward done. With every forward done both last terms are
// the backwards done, m·v − chunks_in_flight on the rank; on rank 0 those of
// chunk 0 (first stage) excluded, taken as the backwards beyond the other
// chunks' (v − 1)·m (backward runs chunk v − 1 first: exact for one group of
// micro-batches, m ≤ pp). 0 without pipelining.
double PipelineBoundaryTensors(int pp, int num_micro_batches, int vpp, double chunks_in_flight, int stage);
// Bytes of one boundary tensor: tokens·hidden in the activation dtype, ÷ tp
// where sequence parallelism shards it (the stage outputs torchtitan's
// RowwiseParallel(output_layouts=Shard(1)) returns as local tensors).
double PipelineBoundaryTensorBytes(const SoftwareStack& stack, double tokens, double hidden, int tp,
                                   bool sequence_parallel);

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
  // Zero bubble: the weight-op output gradients the deferred W passes keep
  // (DeferredWeightGradBytes × ZeroBubbleHeld's deferred count) at the end
  // of a forward and during a backward.
  double deferred_wgrad_forward_bytes = 0;
  double deferred_wgrad_backward_bytes = 0;
  double working_bytes = 0;     // extra transient (full recompute of one layer)
  double logits_bytes = 0;      // last stage: one micro-batch's logits for the loss
  double held_output_bytes = 0; // last stage: earlier micro-batches' outputs the engine still holds
  double pipeline_buffer_bytes = 0;  // boundary tensors the engine keeps (PipelineBoundaryTensors)
  // Last stage: the step's concatenation of every micro-batch's output
  // (SoftwareStack::pp_merges_last_stage_outputs), allocated after backward.
  double merged_output_bytes = 0;
  double quantized_weight_cache = 0;  // bytes of cached FP8/NVFP4 weight copies (persistent, in `weights`)
  // Bytes of gathered (unsharded) weights where they are not compute_param_bytes
  // per element: the stage's weights all gathered, and its largest FSDP unit.
  // Weights gathered already quantized (FSDP2 float8 all-gather, Megatron
  // --fp8-param-gather) are that size once unsharded. 0: elements ×
  // compute_param_bytes.
  double gathered_stage_bytes = 0;
  double gathered_unit_bytes = 0;
  // The GPU's memory (0: unknown). Where ZeRO-1's added segments would pass
  // it, the caching allocator frees its cached blocks and retries, and later
  // forwards reuse the buffers' segments: the pool is then the larger of the
  // forward/backward peak and the buffers (EstimateMemory, zero1_gather_flat_bytes).
  double device_bytes = 0;
  // Bytes of buffers the framework allocates on first use and keeps for the
  // whole run (nanotron's TP all-gather buffers, SoftwareStack::
  // tp_gather_buffers): allocated in every phase of the step.
  double kept_buffers = 0;
  // Bytes of collective inputs the forward freed whose blocks the caching
  // allocator cannot hand out again before the forward ends (the stack's
  // tp_pending_collective_inputs): reserved at the forward's end and in the
  // backward that follows (not allocated), in blocks of `pending_block_bytes`.
  double pending_collective_bytes = 0;
  double pending_block_bytes = 0;
};

// Transient bytes (allocated, before the allocator's fragmentation) of each
// phase of a step; the peak is the largest.
struct MemoryPhases {
  double forward_end = 0;   // activations in flight + gathered weights + loss
  double backward = 0;      // activations + recompute working set + gathered weights + gradient temporaries
  double reduce = 0;        // after backward: flattened gradient bucket(s)
  double optimizer = 0;     // optimizer-step temporaries
  double Peak() const;
  const char* PeakName() const;
};

struct MemoryEstimate {
  // Persistent (the whole step).
  double weights = 0, grads = 0, optimizer = 0;
  // The components of the peak transient phase (× fragmentation).
  double gathered_weights = 0, grad_temporaries = 0, activations = 0, logits = 0, optimizer_temporaries = 0;
  double pipeline_buffers = 0;      // MemoryInputs::pipeline_buffer_bytes at a forward/backward peak
  double merged_outputs = 0;        // the segment the merged outputs add to the reserved pool (0: a cached block held them)
  double reserve = 0, context = 0;  // NCCL buffers/workspaces; CUDA context
  double kept_buffers = 0;          // MemoryInputs::kept_buffers (persistent, allocated)
  double gemm_workspaces = 0;       // stack.gemm_workspace_bytes (persistent, allocated)
  double pending_collective_inputs = 0;   // MemoryInputs::pending_collective_bytes where the peak holds them
  // The allocated peak from the end of the last backward through the
  // optimizer step (persistent states, kept buffers, GEMM workspaces, then the largest of the
  // gradient reduction's and the optimizer step's temporaries and ZeRO-1's
  // post-step all-gather buffers): what torch.cuda.max_memory_allocated()
  // reports when its peak is reset as backward ends (nanotron's log_memory).
  double allocated_after_backward = 0;
  MemoryPhases phases;
  const char* peak_phase = "";
  double total = 0;                 // persistent + peak transient + reserve + context (nvidia-smi)
  double Allocated() const { return total - reserve - context; }
  std::vector<std::pair<std::string, double>> Breakdown() const;
};

MemoryEstimate EstimateMemory(const SoftwareStack& stack, const MemoryInputs& in);

}  // namespace parasim
