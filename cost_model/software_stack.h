// Software-stack profiles (`--stack`, DESIGN.md §4 "From GEMM peak to
// end-to-end MFU"): what the training framework adds on top of the hardware —
// per-kernel launch and host overhead, kernel counts of its (un)fused ops,
// framework copies, bytes per parameter, attention kernel generation, NCCL
// version (its algorithm set) and comm/compute interference. Every default has
// its source in software_stack.cc; calibration refits them from a trace.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/gpu_profile.h"
#include "core/parallel_config.h"
#include "cost_model/collective_cost.h"

namespace parasim {

// Blocks NVIDIA's NVFP4 recipe keeps in BF16: "selective BF16 layers (~16%)",
// the 12B model's first two and last eight of 62 blocks ("Pretraining Large
// Language Models with NVFP4", NVIDIA, arXiv:2509.25149). The default of
// SoftwareStack::nvfp4_bf16_layer_share; FP8 recipes keep none
// (Megatron-LM's --first-last-layers-bf16 is off by default).
inline constexpr double kNvfp4Bf16LayerShare = 0.16;

// Attention kernel efficiency (fraction of dense tensor peak on FLOPs counted
// with causal masking, i.e. half the full-attention convention).
struct AttentionKernel {
  std::string name;               // "flash-attn-2", "flash-attn-3", "unfused-softmax"
  double forward_efficiency = 0;  // long-sequence limit (fused kernels)
  double backward_ratio = 0.8;    // backward efficiency / forward efficiency
  // Unfused attention (before FlashAttention): QKᵀ and AV as batched GEMMs
  // over the full s×s scores, which are written to and read from HBM.
  bool fused = true;
  double score_bytes_forward = 0;   // HBM bytes per score element, forward
  double score_bytes_backward = 0;  // and backward
  double score_bytes_saved = 0;     // kept for backward per score element (Korthikanti: 5)
  // Long-sequence speed of the same kernel without the causal mask over its
  // speed with it (diagonal tiles and masking cost the causal call): what a
  // load-balanced CP ring's steps after the first run at (they attend to
  // whole blocks unmasked). 1 where no measurement separates the two.
  double non_causal_speedup = 1.0;

  bool operator==(const AttentionKernel&) const = default;
};

struct SoftwareStack {
  std::string name;
  std::string description;
  // The framework the stack describes (one of SoftwareStackFrameworks()): it
  // decides which launch settings a plan can print (planner/launch_flags.h).
  std::string framework = "pytorch";

  // Bytes per parameter (DESIGN.md §4 Memory).
  double param_bytes_at_rest = 4;      // the sharded / replicated parameter copy the optimizer updates
  double grad_bytes = 4;               // the gradient the optimizer reads
  double optimizer_bytes = 8;          // AdamW state besides param_bytes_at_rest (moments; + master copy)
  double compute_param_bytes = 2;      // bf16 working / gathered copy
  double comm_grad_bytes = 2;          // bytes per gradient element on the wire (reduce dtype)
  double comm_param_bytes = 2;         // bytes per parameter element gathered
  // Bytes per element of the tied word embedding's gradient all-reduced
  // between the first and last pipeline stage (the buffer the engine keeps
  // it in); 0: the stack runs no such reduction (it cannot tie across stages).
  double tied_grad_bytes = 0;
  // Bytes per element of the gradients of the parameters replicated over tp
  // (norm weights and biases, row-parallel linear biases, the MoE router)
  // that the engine all-reduces over tp, coalesced, once per stage after the
  // last backward when sequence parallelism (or a q/k norm) leaves each tp
  // rank a partial sum; 0: the stack runs no such reduction.
  double sp_grad_bytes = 0;
  // The optimizer's gradient clipping all-reduces the squared gradient norm
  // (one fp32) once per step, blocking (the host reads it): over every rank
  // when the optimizer is sharded, over the model-parallel (tp·pp) group
  // otherwise. false: the stack runs no such reduction (or was not read).
  bool grad_norm_allreduce = false;
  // The embedding's and LM head's data-parallel gradient reduction waits for
  // the end of the last backward instead of running under it (NeMo's
  // distributed Adam keeps them in its last bucket with the tied and
  // sequence-parallel weights, whose overlapped sync it disables): blocking,
  // once per step, at pp > 1 or with sequence parallelism. false: they are
  // reduced under the backward as the layers' buckets.
  bool embedding_grads_after_backward = false;

  // Activation and logits extras.
  double logits_bytes_per_element = 14;  // logits kept for the loss backward, per vocab element
  double loss_bytes_per_element = 48;  // HBM traffic of loss fwd + bwd per vocab element

  // Memory-bound op traffic, bytes per element per forward pass (backward = 2×).
  double norm_bytes_per_element = 4;   // RMS/LayerNorm: read + write bf16 when fused
  double rope_bytes_per_element = 4;   // rotary on q and k
  double act_bytes_per_element = 6;    // SwiGLU: read gate+up, write product (per f element pair)
  double residual_bytes_per_element = 6;  // read two, write one
  int kernels_per_layer_forward = 20;  // launches per layer forward (backward ≈ 2×)
  // Context-parallel ring attention: the partial outputs of the cp ring steps
  // are merged with the online-softmax correction, and backward accumulates
  // dq, dk, dv over the steps. Bytes per element of the local attention output
  // (forward) or of q, k, v (backward).
  double cp_merge_bytes_fixed = 12;     // forward: first block's cast to fp32, final cast back
  double cp_merge_bytes_per_step = 38;  // forward: each later ring step's correction
  double cp_grad_bytes_per_step = 10;   // backward: fp32 accumulate of each step's block gradient
  double cp_grad_bytes_fixed = 10;      // backward: fp32 gradient buffers zeroed, then cast back to bf16
  int cp_kernels_per_step = 5;          // launches per ring step (merge forward, accumulate backward)
  // Bytes per K/V element (the 2·T·kv_width/tp of this rank's K and V) per
  // ring step of a framework that packs its blocks before each exchange:
  // forward, each step but the last (torch's torch.cat of K and V, bf16);
  // backward, every step (torch's torch.cat of the fp32 dK, dV it rotates).
  double cp_kv_pack_bytes_per_step = 0;
  double cp_dkv_pack_bytes_per_step = 0;
  // The all-gather CP kind keeps the ring's loop (torch's _AllGatherRotater,
  // torch/distributed/tensor/experimental/_attention.py): K,V all-gathered
  // once beside the first step's attention, then one attention call per cp
  // block with the per-step merge and backward accumulation of the ring; the
  // backward rotates the fp32 dK,dV around the ring (its ALL_TO_ALL rotater),
  // cp exchanges, instead of one reduce-scatter. False: one gather, then the
  // whole attention on the gathered K,V (Transformer Engine's
  // AttnFuncWithCPAndKVAllGather).
  bool cp_allgather_ring_loop = false;

  // Overheads.
  double kernel_gap_s = 2e-6;          // GPU idle between dependent kernels (launch latency)
  double host_per_kernel_s = 10e-6;    // CPU dispatch per kernel; binds when kernels are shorter
  // Extra CPU time per tensor-parallel linear op (forward; backward counts
  // two): eager DTensor dispatch and sharding propagation. 0 where TP layers
  // call the local kernels directly (Megatron) or the graph is compiled.
  double host_per_tp_linear_s = 0;
  double copy_passes_forward = 0;      // framework copies per layer, passes over its bf16 weights
  double copy_passes_backward = 1;
  // Per micro-batch backward, passes of copy_bytes folding the low-precision
  // gradients into fp32 accumulators (DeepSpeed's BF16_Optimizer, nanotron's
  // FP32GradientAccumulator). None when the job trains in fp32: there is no
  // low-precision gradient (StackForPrecision).
  double grad_fold_passes = 0;
  double optimizer_bytes_per_param = 32;  // HBM traffic of the fused/foreach AdamW step
  // Step-end HBM traffic per local parameter over the whole gradient, not
  // the dp shard the optimizer updates (nanotron's ZeRO-1 clips the full
  // all-reduced fp32 gradient and zeroes its whole buffer); 0: the step's
  // traffic is all in optimizer_bytes_per_param (per updated parameter).
  double unsharded_step_bytes_per_param = 0;
  int nccl_channels = 16;              // SMs an overlapping NCCL kernel occupies (interference)
  double nccl_memory_passes = 3;       // HBM bytes per bus byte NCCL moves (interference on memory-bound ops)
  bool separate_compute_copy = true;   // a bf16 copy beside fp32 params (autocast / FSDP mixed precision)
  double reserve_bytes = 2.0e9;        // NCCL buffers, memory outside the caching allocator
  double cuda_context_bytes = 0.5e9;   // CUDA context + kernel images (nvidia-smi, never allocated)
  // GEMM libraries' workspaces the framework takes from the caching allocator
  // and keeps for the whole run (PyTorch's cuBLAS workspace per handle and
  // stream, Transformer Engine's cuBLASLt one): bytes per GPU, persistent, so
  // in the allocated, reserved and nvidia-smi figures alike.
  double gemm_workspace_bytes = 0;
  double fragmentation = 1.05;         // caching-allocator overhead on dynamic memory
  // Memory as the framework runs (memory.h: a peak over phases).
  double activation_bytes = 2;         // saved-activation dtype: 2 bf16/fp16, 4 fp32 training
  double optimizer_temp_bytes = 0;     // per updated parameter: optimizer-step temporaries (foreach sqrt: 4)
  double grad_bucket_elements = 0;     // gradient bucket (elements); 0 = one layer / FSDP unit
  bool flatten_grad_buckets = false;   // ddp/zero1: a flat copy of a bucket is made to reduce it (DeepSpeed)
  // ddp over more than one data-parallel rank: bytes per local parameter the
  // data-parallel wrapper holds for the whole run beside the gradient the
  // optimizer reads (torch DistributedDataParallel's flat bucket buffers, in
  // the parameter dtype, where the framework keeps its own gradient buffer).
  double ddp_bucket_bytes = 0;
  // zero1 over more than one rank: bytes per local parameter of the flat
  // buffers the post-step parameter all-gather allocates (nanotron: its
  // flattened output lists and torch's all_gather staging copy, 2 + 2 in
  // bf16; the flattened own shard, compute_param_bytes per sharded parameter,
  // comes with them). Allocated after backward, when the activations' blocks
  // are cached but each far smaller: the caching allocator adds segments, so
  // they sit on top of the forward/backward peak in the reserved pool (memory.h).
  double zero1_gather_flat_bytes = 0;
  // tp > 1 with sequence parallelism: full-sequence activation buffers
  // (micro-batch tokens × hidden, activation dtype) the framework allocates
  // for its TP all-gathers on first use and keeps for the whole run, in
  // every phase of every step (nanotron's MemoryBuffer singleton: 2). 0 =
  // the all-gathered tensors are ordinary temporaries.
  double tp_gather_buffers = 0;
  // tp > 1 with sequence parallelism, pp = 1: full-sequence blocks (micro-batch
  // tokens × hidden, activation dtype) per layer of the stage that the
  // forward hands to an NCCL collective as its input and frees right after
  // (nanotron: the two row-parallel linears' outputs before their
  // reduce-scatter, 2). ProcessGroupNCCL records a collective's input on its
  // stream and the caching allocator reuses such a freed block only once
  // that stream has passed it: with the host a forward ahead of the GPU,
  // every one is still pending when the forward ends, so one micro-batch's
  // forward of them stays reserved (reserved pool only, not allocated).
  // 0 = none counted.
  double tp_pending_collective_inputs = 0;
  double live_param_elements = 0;      // zero3: cap on gathered parameters (stage3_max_live_parameters); 0 none
  double loss_chunk_tokens = 0;        // fused linear-CE: tokens whose logits exist at once; 0 = micro-batch
  // Earlier micro-batches whose last-stage output (the logits, activation
  // dtype) the pipeline engine keeps referenced past their backward, beside
  // the current micro-batch's loss (DeepSpeed's pipe buffers: 1). 0 = none.
  double held_last_stage_outputs = 0;
  // Tensor parallelism's vocab-parallel loss (tp > 1): bytes per local
  // logit element at its peak where they differ from logits_bytes_per_element
  // (torch loss_parallel's backward: 16). 0 = logits_bytes_per_element.
  double vocab_parallel_logits_bytes_per_element = 0;
  // That vocab-parallel peak comes after the trainer has dropped its logits
  // (torchtitan's `del pred` before loss.backward()), so it leaves them out;
  // a pipeline engine that holds outputs (held_last_stage_outputs > 0) still
  // references them: HeldOutputBytes adds the current micro-batch's.
  // false: the figure includes the logits.
  bool vocab_parallel_peak_excludes_logits = false;
  // With sequence parallelism the output layer's input is all-gathered over
  // tp before the head and the gathered (full-sequence) copy is saved for its
  // weight gradient (DTensor ColwiseParallel(input_layouts=Shard(1)));
  // false: the saved head input is not modelled (Megatron keeps the shard).
  bool tp_saves_gathered_head_input = false;
  // What recompute=selective means in this framework. 0: attention-only
  // (Korthikanti et al. 2022, Megatron): the attention core is recomputed, its
  // s-sized inputs dropped. > 0: op-level SAC (torchtitan): attention and the
  // other matmuls' outputs are saved, this fraction of the matmuls and every
  // pointwise op recomputed (torchtitan: every other mm, 0.5).
  double sac_matmul_recompute_fraction = 0;
  // Op-level SAC run eagerly: torch.utils.checkpoint's caching dispatch mode
  // keeps the output of every op the policy saves until backward, also those
  // backward never reads (a residual branch's last projection, whose output
  // only feeds the add). A compiled block's partitioner saves only what
  // backward reads (MUST_SAVE only bans recomputation): false.
  bool sac_keeps_unread_outputs = false;
  // Relative spread (σ) of sustained compute speed between GPUs of one SKU:
  // the step waits for the slowest synchronising rank (cost_model/straggler.h).
  double straggler_sigma = 0.0089;

  // What the framework supports: the planner searches only these.
  bool supports_zero1 = true;          // optimizer-state sharding (Megatron distributed optimizer, ZeRO-1)
  bool supports_fsdp = true;           // zero2 / zero3 / hsdp (FSDP, ZeRO-2/3, Megatron FSDP)
  bool supports_sharding_with_pp = true;  // zero2/zero3 together with pp > 1
  bool supports_cp = true;             // context parallelism
  // The CP kinds (ParallelConfig::cp_comm) the framework implements; the
  // planner searches cp > 1 only with these.
  bool supports_cp_p2p = true;         // ring of K/V point-to-point steps
  bool supports_cp_a2a = false;        // all-to-all head/sequence re-split (Ulysses)
  bool supports_cp_allgather = false;  // one K/V all-gather before attention
  bool supports_cp_a2a_p2p = false;    // Megatron's hierarchical a2a inside, K/V ring across
  bool supports_interleaved = true;    // interleaved (virtual-stage) pipeline schedule
  bool supports_zero_bubble = false;   // zero-bubble schedules
  // Partial full recompute: only some layers of a stage rebuilt in backward
  // (ParallelConfig::recompute_layers; Megatron --recompute-method block,
  // torchtitan selective_ac_option = "<k>").
  bool supports_partial_recompute = false;

  // Low precision: sharded weights all-gathered in FP8 / NVFP4 when the job
  // runs that precision (Megatron-LM --fp8-param-gather / --fp4-param-gather).
  bool fp8_param_gather = false;
  bool fp4_param_gather = false;
  // NVFP4 (--precision fp4): the share of transformer blocks whose linear
  // GEMMs stay in BF16, split 2:8 between the first and the last blocks
  // (cost_model/precision.h Nvfp4Bf16Layers); those blocks run at the BF16
  // rate, cast nothing and save BF16 inputs. A recipe setting: Megatron-LM's
  // --first-last-layers-bf16 with --num-layers-at-{start,end}-in-bf16
  // (megatron/core/fp4_utils.py get_fp4_context; TransformerConfig
  // first_last_layers_bf16 defaults to False). Default: NVIDIA's NVFP4 recipe
  // (kNvfp4Bf16LayerShare). Megatron-Bridge's bf16_with_nvfp4_mixed keeps
  // none (0).
  double nvfp4_bf16_layer_share = kNvfp4Bf16LayerShare;

  // FP8 jobs with sequence-parallel TP: the TP all-gathers (the
  // column-parallel linears' inputs forward, the row-parallel linears' output
  // gradients backward) move FP8 (1 B) elements, cast before the gather; the
  // reduce-scatters stay in the activation dtype (torchao's
  // Float8ColwiseParallel / Float8RowwiseParallel / PrepareFloat8ModuleInput).
  // false: every TP collective in activation_bytes.
  bool fp8_tp_gathers = false;
  // Low precision: linear layers save their quantized (FP8/NVFP4) input for
  // the weight-gradient GEMM instead of the BF16 one (Transformer Engine).
  bool saves_quantized_inputs = false;
  // Low precision: each linear layer keeps the quantized cast of its weight
  // (row- and column-wise) across micro-batches beside the BF16 weight,
  // unless the weights themselves are quantized (fp8/fp4_param_gather on a
  // sharded optimizer). Transformer Engine's weight workspace cache.
  bool quantized_weight_cache = false;
  // FP8 (Hopper, per-tensor scales): which GEMMs of a linear layer run with
  // the split accumulator (cuBLASLt FAST_ACCUM off) and so at
  // GpuProfile::gemm_fp8_split_accum_rate; the others use fast accumulation.
  // Defaults: what Transformer Engine and torchao both run, fprop fast, dgrad
  // and wgrad split (the presets name their sources).
  bool fp8_split_accum_fprop = false;
  bool fp8_split_accum_dgrad = true;
  bool fp8_split_accum_wgrad = true;
  // SwiGLU as one fused autograd function that saves only its input (gate and
  // up, 4f bytes per token in bf16) and recomputes SiLU(gate) in backward;
  // unfused, SiLU(gate) is kept as well (2f more).
  bool swiglu_saves_input_only = false;
  // Grouped-query K and V repeated to every query head before the attention
  // kernel (torchtitan's Llama: repeat_kv ahead of scaled_dot_product_attention):
  // the K and V that attention saves, and that all-gather CP gathers, are
  // a·d wide, not g·d; CP's K/V messages are a·d wide too.
  bool repeats_kv_heads = false;
  // Multi-head attention (kv heads = heads) only: the query that attention
  // saves is a view of one packed contiguous q,k,v copy, so that copy's K and
  // V slices (2·a·d elements per token) stay allocated beside the separate
  // K,V tensor attention also saves (nanotron's training path).
  bool query_keeps_packed_qkv = false;

  // Behaviour.
  bool fsdp_pp_accumulate_unsharded = true;  // pp>1: gather once, reduce once per step (PyTorch pipelining)
  bool overlap_param_gather = false;   // zero1: parameter AllGather hidden under next forward
  bool overlap_grad_reduce = true;     // ddp / zero1: gradient buckets reduced under backward
  // Interleaved schedule (ddp / zero1, whole chunks of layers): the
  // overlapped gradient reduction and parameter gather go chunk by chunk, as
  // Megatron-Core's per-chunk grad_sync_func / param_sync_func: a chunk's
  // reduction is launched after its last backward (plus the pipeline rank's
  // alignment delay) and hides under the other chunks' cooldown backwards; a
  // chunk's gather is launched one chunk ahead and hides under the warm-up
  // forwards. false: the whole stage's gathers hide under the first
  // micro-batch's forward, its reductions under the last one's backward.
  bool dp_overlap_per_chunk = false;
  // Interleaved schedule: pipeline sends/receives posted asynchronously
  // (Megatron-Core's overlap_p2p_comm): in the steady state each transfer
  // waits only before the pass after the next, so it is exposed beyond the
  // pass it runs beside; the warm-up's are waited at once and the
  // cool-down's block, in full. false: every transfer in full.
  bool pp_overlap_p2p = false;
  // Pipeline p2p as the framework sends it. With tp > 1 and no SP, a
  // partitioning engine sends each rank's 1/tp of the boundary tensor and the
  // receiving stage all-gathers it over tp (DeepSpeed pipe_partitioned /
  // grad_partitioned); `pp_meta_messages` small messages (the partition's
  // shape) precede every partitioned tensor.
  bool pp_partition_over_tp = false;
  double pp_meta_messages = 0;
  // Boundary transfers one stage runs one after another per micro-batch
  // (cost_model/pipeline_boundary.h). 2: two exchanges, each sending one way
  // while receiving the other (Megatron's send_forward_recv_backward and
  // send_backward_recv_forward); 4: four blocking one-way sends and receives
  // in turn (DeepSpeed's SendActivation, RecvGrad, RecvActivation, SendGrad).
  double pp_transfers_per_micro_batch = 2;
  // A partitioning engine's tp all-gathers of the boundary tensor per
  // micro-batch on one stage. 2: one on receipt in each direction
  // (Megatron's gather_split_1d_tensor); 3: DeepSpeed, whose backward also
  // re-gathers the stage's own partitioned output before autograd.
  double pp_tp_gathers_per_micro_batch = 2;
  // zero1: the gradient is all-reduced in full over the data-parallel group
  // and each rank then updates its shard (DeepSpeed's BF16_Optimizer under
  // the pipeline engine); false: reduce-scattered (distributed optimizer).
  bool zero1_grad_allreduce = false;
  // zero1: the gradient reduction runs once after the last backward,
  // blocking, whatever overlap_grad_reduce says (which then applies to ddp
  // alone): nanotron wraps only ZeRO-0 in DDP, and its ZeRO-1 all-reduces
  // the fp32 accumulator's whole buffer after the pipeline pass.
  bool zero1_grad_reduce_after_backward = false;
  // Pipeline p2p that blocks the host (nanotron): the receiver reads each
  // tensor's metadata on the CPU before posting the data receive, so every
  // pass starts from an empty GPU queue; `pp_meta_messages` small messages
  // precede every tensor, not only partitioned ones.
  bool pp_host_synchronous = false;
  // CPU time per micro-batch that launches no kernel (schedule bookkeeping,
  // data loader, per-step Python). Exposed in full when the pipeline p2p is
  // host-synchronous; otherwise the host runs ahead of the GPU and hides it.
  double host_per_micro_batch_s = 0;
  // Stage layers of a config without pp_layers: false splits decoder layers
  // evenly (ParallelConfig::StageLayers); true balances pipeline blocks by
  // nanotron's compute costs, the LM head counted as a block
  // (cost_model/nanotron_stage_split.h).
  bool pp_balance_by_compute = false;
  // That balance closes a rank once the cumulative cost reaches its threshold
  // (>=) instead of passing it (>): nanotron as the Ultra-Scale Playbook's
  // post-fix pipeline runs built it (their logged stage-0 parameter counts;
  // no public commit has it). Decides only splits whose boundary falls
  // exactly on a threshold.
  bool pp_balance_close_at_threshold = false;
  // Interleaved 1F1B with as many micro-batches as stages (m = p): true runs
  // every chunk's forward before the first backward (Megatron-Core:
  // all_warmup_microbatches), so every rank holds all m; false keeps the
  // warm-up count (v − 1)·p + 2·(p − 1 − rank) chunks (torch.distributed.
  // pipelining ScheduleInterleaved1F1B has no such case).
  bool pp_interleaved_full_warmup = true;
  // The pipeline engine keeps its stage-boundary tensors per micro-batch
  // (torch.distributed.pipelining): one receive buffer per micro-batch for
  // the stage input and one for the output's gradient (allocated once, kept),
  // every micro-batch's stage output (output_chunks) and input gradient (the
  // receive buffer's .grad) until the next step clears them. false: the
  // engine frees a boundary tensor once sent or consumed (PipelineBoundaryTensors).
  bool pp_keeps_boundary_tensors = false;
  // The engine's step returns the last stage's outputs of every micro-batch
  // concatenated, allocated after the last backward (torch.distributed.
  // pipelining: _merge_outputs, torch.cat of output_chunks): one m-times
  // larger tensor than any the step held, so a new allocator segment.
  bool pp_merges_last_stage_outputs = false;
  // Sequence-parallel TP collectives overlapped with the adjacent GEMM
  // (Megatron-Core --tp-comm-overlap with Transformer Engine userbuffers,
  // torchtitan async TP): the fraction of their time hidden (0 = blocking),
  // never more than the GEMM time, and the GEMM time lost to the SMs the
  // overlapping communication takes, per second of GEMM.
  double tp_comm_overlap = 0;
  double tp_overlap_gemm_slowdown = 0;
  // Whether that overlap also covers the backward's TP reductions (the
  // column-parallel linears' dgrad reduce-scatters). true: every SP TP
  // collective (Transformer Engine's userbuffers: QKV and fc1 are one fused
  // linear each, so each dgrad reduce-scatter follows one GEMM). false: those
  // block, because the overlap fuses a reduce-scatter only with the single
  // matmul that produces its input, and in backward that input is the sum of
  // several linears' dgrads (torchtitan's async TP: separate q, k, v and w1,
  // w3 linears; torch inductor's micro_pipeline_tp pass).
  bool tp_overlap_backward_reductions = true;
  // The overlapped matmul -> reduce-scatter leaves the reduction to one local
  // kernel after its pipeline: each rank pulls the tp partial blocks of its
  // shard, then sums them (reads the full partial output, writes the shard),
  // exposed on the compute stream (torch's symmetric-memory
  // fused_matmul_reduce_scatter). false: the reduction is part of the
  // overlapped communication (NCCL's or userbuffers' reduce-scatter kernel).
  bool tp_overlap_rs_local_reduce = false;
  // The column-parallel linears' backward as Megatron-LM's
  // LinearWithGradAccumulationAndAsyncCommunication and Transformer Engine's
  // Linear / LayerNormLinear run it: with sequence parallelism the saved
  // local input is all-gathered again beside the dgrad GEMM, and the dgrad's
  // reduce-scatter (all-reduce without SP) runs beside the wgrad GEMM, each
  // an asynchronous NCCL kernel that takes nccl_channels SMs from the GEMM
  // while it runs. false: those collectives block (no re-gather).
  bool tp_backward_overlap = false;
  bool dropout = false;                // hidden/attention dropout (masks kept, extra traffic)
  // fp32 jobs (Precision::kFp32): whether cuBLAS runs fp32 matmuls on TF32
  // tensor cores. PyTorch's torch.backends.cuda.matmul.allow_tf32 defaults to
  // False since 1.12 (docs.pytorch.org notes/cuda.html, "TensorFloat-32 (TF32)
  // on Ampere (and later) devices"; cudnn.allow_tf32 stays True, convolutions
  // only), so the default is FP32 SIMT. NGC PyTorch containers set
  // TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1, which turns it on (MONAI docs,
  // precision_accelerating.md); a stack run in one says tf32.
  bool fp32_matmul_tf32 = false;
  int nccl_version = kNcclPaperVersion;   // major·10000 + minor·100 + patch: its algorithm set
  std::vector<std::pair<std::string, AttentionKernel>> attention_by_arch;  // architecture -> kernel

  const AttentionKernel& AttentionFor(const GpuProfile& gpu) const;
  // Whether the framework runs context parallelism of this kind.
  bool SupportsCp(CpComm kind) const;
  // Field by field, doubles exactly: a stack file must give its stack back bit for bit.
  bool operator==(const SoftwareStack&) const = default;
};

// Known names: "pytorch-fsdp" (default; the paper's PyTorch 2.3 FSDP, eager),
// "pytorch-fsdp2" (torchtitan-style FSDP2 + compile, newer NCCL),
// "megatron-core", "megatron-lm-2021" (Narayanan et al. 2021: unfused
// attention, dropout, gradients all-reduced after backward),
// "megatron-lm-2022" (its 2022-2023 code: Korthikanti 2022, MegaScale's
// baseline). Any other text
// ending in .yaml/.yml, or naming an existing file, is read as a stack file
// (software_stack_io.h). Unknown names throw parasim::Error naming `stack`.
SoftwareStack LoadSoftwareStack(const std::string& name);
std::vector<std::string> SoftwareStackNames();
// The values `framework` may take: megatron-lm, torchtitan, pytorch (a plain
// PyTorch FSDP training loop), deepspeed, megatron-deepspeed, nanotron.
const std::vector<std::string>& SoftwareStackFrameworks();
// A preset by name (aliases: "" and "torchtitan", "megatron"); nullopt otherwise.
std::optional<SoftwareStack> FindSoftwareStackPreset(const std::string& name);

}  // namespace parasim
