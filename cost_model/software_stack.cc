#include "cost_model/software_stack.h"

#include "core/check.h"
#include "core/error.h"
#include "cost_model/software_stack_io.h"

namespace parasim {
namespace {

// Attention kernels. Efficiencies are of the dense bf16 tensor peak on
// causal FLOPs (half of the full-attention count), long-sequence limit.
// FlashAttention-2 (Dao 2023, arXiv:2307.08691, abstract): "50-73% of the
// theoretical maximum FLOPs/s on A100" (forward). FlashAttention-3 (Shah et
// al. 2024, arXiv:2407.08608, §1): FlashAttention-2 reaches "only 35%
// utilization on H100"; FA3 reaches up to 740 TFLOP/s = 75%. Backward:
// DESIGN.md §4, flash backward ≈ 2.5× forward time for 2× the FLOPs → 0.8.
// V100 has no FlashAttention-2 (needs sm80): unfused attention, assumed 0.30
// (ASSUMPTION; calibration refits). Blackwell FA2: no measurement found,
// assumed as Hopper's FA2 (ASSUMPTION).
const AttentionKernel kFa2Volta{"math-attention", 0.30, 0.8};
const AttentionKernel kFa2Ampere{"flash-attn-2", 0.73, 0.8};
// Without the causal mask (non_causal_speedup): the FlashAttention-3 paper's
// own FlashAttention-2 bars (arXiv:2407.08608, Fig. 5, H100 SXM5 BF16, head
// dim 128, 16k; the figure behind kCudnnHopper below): 370 TFLOP/s unmasked
// against 335 causal (335 over 989 and eta(16k) is this preset's 0.344 ~
// 0.35). Its Fig. 6 (backward, unmasked) gives 322 in the paper's 2.5x
// count, i.e. 0.8 x 322/370 = 0.696 of the forward in parasim's convention,
// derived as kCudnnHopper's ratio; the 0.8 is kept here (docs/DECISIONS.md
// "Context parallelism as torch runs it": the change breaks the H200 trace's
// fitted-vs-preset check and is left to a decision of its own).
const AttentionKernel kFa2Hopper{"flash-attn-2", 0.35, 0.8, true, 0, 0, 0, 370.0 / 335.0};
// cuDNN fused attention, what Transformer Engine runs on Hopper: its backend
// choice disables FlashAttention "to give FusedAttention preference on Hopper+
// for performance reasons" (NVIDIA/TransformerEngine transformer_engine/
// pytorch/attention/dot_product_attention/utils.py, get_attention_backend).
// FlashAttention-3 paper (arXiv:2407.08608) Fig. 5, H100 SXM5 BF16, causal,
// head dim 128: cuDNN forward 518 TFLOP/s at 4k, 539 at 16k; the 16k point over
// 989 and over η(16k) = 16384/(16384+256) gives the long-sequence limit 0.553
// (η(4k) then gives 515 at 4k). Backward (Fig. 6, head dim 128, 16k): 516 vs
// 595 forward without the mask in the same figure set. The paper's TFLOP/s
// count the backward as 2.5x the forward FLOPs (its benchmark script,
// Dao-AILab/flash-attention benchmarks/benchmark_flash_attention.py and
// hopper/benchmark_attn.py: `2.5 * f if mode == "bwd"`: the recomputed
// Q·Kᵀ is the fifth GEMM), parasim counts 2x, so in parasim's convention the
// ratio is 0.8 x 516 / 595 = 0.694, as for kCudnnBlackwell below.
// Unmasked (the same Fig. 5, 16k): 595 against 539 causal.
const AttentionKernel kCudnnHopper{"cudnn-fused-attn", 539.0 / 989.0 / (16384.0 / (16384.0 + 256.0)),
                                   0.8 * 516.0 / 595.0, true, 0, 0, 0, 595.0 / 539.0};
// cuDNN fused attention on Blackwell, burst, from NVIDIA's cudnn-frontend
// training SDPA benchmark (github.com/NVIDIA/cudnn-frontend bb37575
// benchmark/sdpa_benchmark_training/artifacts/sdpa_bf16_benchmark_results_
// NVIDIA_{B200,GB300}.csv): one container for both GPUs (NGC PyTorch 25.09,
// cuDNN 9.13.0, torch SDPA's cuDNN backend), BF16, causal, 128 query / 8 KV
// heads, head dim 128, at seq 8192, the sequence of the Megatron-Bridge
// reference (tests/data/blackwell_kernels_public.csv). TFLOP/s count causal
// FLOPs (half the full count) forward and 2.5x that backward, so the backward
// ratio in parasim's 2x convention is 0.8 x bwd / fwd. Long-sequence limit:
// the 8k point over eta(8192) = 8192/(8192+256); Blackwell's curve rises
// further than eta (B200 16k: 1332, 0.601 of peak after eta), so other
// sequences are less exact. B200 (sm100): 1171.3 fwd, 942.5 bwd of 2250.
// Blackwell Ultra (GB300, sm103) ran the same kernels faster per peak FLOP
// (1495.7 fwd, 1130.1 bwd of 2500): its GPU profiles carry that as
// efficiency.attention_forward_scale / attention_backward_scale.
const AttentionKernel kCudnnBlackwell{"cudnn-fused-attn", 1171.278 / 2250.0 / (8192.0 / (8192.0 + 256.0)),
                                      0.8 * 942.509 / 1171.278};

// Measured, not derived: eager PyTorch FSDP traced on one H100 SXM
// (tests/data/calibration/h100-sxm/torch-fsdp-llama3.2-1b/mbs2_trace.json.gz,
// Llama-3.2-1B shape, seq 4096, mbs 2; `parasim calibrate fit-stack`). Its
// memory-bound kernels took 1.568x the time the per-element traffic derived
// below predicts at the profile's measured HBM rate (many small eager kernels
// do not reach the rate of a large copy), its optimizer step 1.10x, and it
// launched 44 kernels per layer forward with 2.76 us gaps. Held out (steps not
// fitted, preset error before -> after): 1B mbs 1 -18.1% -> -4.6%, 1B seq 2048
// mbs 4 -11.2% -> +5.3%, 3B mbs 1 -15.3% -> -3.7% (docs/DECISIONS.md). The
// trace ran PyTorch 2.11 FSDP2: its eager elementwise kernels, foreach AdamW
// and launch path are the ones PyTorch 2.3 runs too, so they carry over; its
// attention (cuDNN SDPA, 1.30x faster than FlashAttention-2 here) does not,
// and the 2.3 stack keeps FlashAttention-2's efficiency.
constexpr double kEagerMemoryBoundMeasured = 1.5681808517219065;
constexpr double kEagerOptimizerMeasured = 1.1031351431813704;   // 88.25 / 80 B per parameter
constexpr int kEagerKernelsPerLayerMeasured = 44;
constexpr double kEagerKernelGapMeasured = 2.757510711870859e-06;

// GEMM workspaces the caching allocator holds for the whole run (counted by
// torch.cuda.memory_allocated). PyTorch gives each cuBLAS handle, per stream,
// its own workspace from CUDACachingAllocator (pytorch/pytorch 26a39059
// aten/src/ATen/cuda/CublasHandlePool.cpp, setWorkspaceForHandle /
// parseChosenWorkspaceSize: CUBLAS_WORKSPACE_CONFIG default ":4096:2:16:8" =
// 8.125 MiB, 4096 KiB x 8 = 32 MiB on sm90; Hopper's 32 MiB since pytorch
// PR #89027, torch 2.0; through the allocator since PR #83461, torch 1.13).
// Handles are per thread (DeviceThreadHandlePool's thread-local PoolWindow):
// the forward's GEMMs run on the Python thread, the backward's on autograd's
// device thread, on the same stream: two handles, two workspaces. Hopper
// values (the presets' H100 recipes); an A100 holds 2 x 8.125 MiB instead
// (0.05 GB less, not separated per architecture). PyTorch's cuBLASLt
// workspace (1 MiB per handle by default, CUBLASLT_WORKSPACE_SIZE) is left
// out: in the torch versions of these presets it is either allocated per call
// or 1/32 of the above.
constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kTorchCublasWorkspaceHopper = 4096.0 * 8 * 1024;   // ":4096:8"
constexpr double kTorchGemmThreads = 2;   // forward (Python) thread, autograd device thread
constexpr double kTorchGemmWorkspaces = kTorchGemmThreads * kTorchCublasWorkspaceHopper;
// Transformer Engine's own cuBLASLt workspace, one per device for its GEMMs
// (NVIDIA/TransformerEngine d0067d0 transformer_engine/pytorch/cpp_extensions/
// gemm.py: get_cublas_workspace, lru-cached torch.empty of
// get_cublas_workspace_size_bytes() = 32 MiB + 1024 B on sm >= 90, 4 MiB
// before). Its grouped-GEMM (MoE, one per compute stream) and userbuffers
// (x3) workspaces are not counted.
constexpr double kTeCublasWorkspaceHopper = 32 * kMiB + 1024;

SoftwareStack PyTorchFsdp() {
  SoftwareStack s;
  s.name = "pytorch-fsdp";
  s.framework = "pytorch";
  s.description = "PyTorch 2.3 FSDP (FULL_SHARD / SHARD_GRAD_OP), eager, bf16 mixed precision, NCCL 2.20";
  // PyTorch FSDP mixed precision (DESIGN.md §4): fp32 sharded params 4 +
  // fp32 grads 4 + AdamW moments 8, plus gathered bf16 copies; reduce dtype
  // bf16 (llama-recipes' bf16 MixedPrecision policy: param/reduce/buffer bf16).
  s.param_bytes_at_rest = 4;
  s.grad_bytes = 4;
  s.optimizer_bytes = 8;
  s.compute_param_bytes = 2;
  s.comm_grad_bytes = 2;
  s.comm_param_bytes = 2;
  s.separate_compute_copy = true;
  // Eager Hugging Face-style Llama kernels (modeling_llama.py), bytes per
  // element per forward: RMSNorm = to(fp32) r2w4, pow r4w4, mean r4, mul
  // r4w4, to(bf16) r4w2, ×weight r2w2 ≈ 36 B over 7 kernels; rotary
  // (q·cos + rotate_half(q)·sin: mul, slice/neg, cat, mul, add) ≈ 20 B over
  // 6 kernels per tensor; SwiGLU silu r2w2 + mul r4w2 = 10 B per f element;
  // residual add r4w2 = 6 B. Kernels per layer forward: norms 14, rotary 12,
  // 4 projection GEMMs, attention 1 + 3 layout copies, MLP 3 GEMMs + 2,
  // residuals 2 = 41.
  // Those derivations, scaled by the measured eager slowdown (above).
  s.norm_bytes_per_element = 36 * kEagerMemoryBoundMeasured;
  s.rope_bytes_per_element = 20 * kEagerMemoryBoundMeasured;
  s.act_bytes_per_element = 10 * kEagerMemoryBoundMeasured;
  s.residual_bytes_per_element = 6 * kEagerMemoryBoundMeasured;
  s.kernels_per_layer_forward = kEagerKernelsPerLayerMeasured;   // derived: 41
  // Ring attention as PyTorch implements it (torch/distributed/tensor/
  // experimental/_attention.py): one flash call per ring step; _SDPAMerger
  // keeps the output in fp32: first block cast r2w4, each later step
  // out − sigmoid(lse_b − lse)·(out − block): cast r2w4, sub r8w4,
  // mul r4w4, sub r8w4 = 38 B; the final cast r4w2. With causal load
  // balancing some ranks merge half the rows on some steps, but the rank that
  // merges every row paces the ring. Backward zero-fills fp32 dq, dk, dv (w4),
  // accumulates each step's block gradients into them (r4 r2 w4 = 10 B) and
  // casts them back (r4w2).
  s.cp_merge_bytes_fixed = 12;
  s.cp_merge_bytes_per_step = 38;
  s.cp_grad_bytes_per_step = 10;
  s.cp_grad_bytes_fixed = 10;
  s.cp_kernels_per_step = 5;
  // Loss: bf16 logits upcast to fp32 (r2w4), log_softmax (r4w4 + 2 reduction
  // reads r4), nll r4; backward softmax grad r4w4 + r4, cast r4w2 ≈ 48 B per
  // vocab element. Kept for backward: bf16 logits 2 + fp32 copy 4 + fp32
  // log-probs 4 + fp32 grad 4 = 14 B.
  s.logits_bytes_per_element = 14;
  s.loss_bytes_per_element = 48 * kEagerMemoryBoundMeasured;
  // Launch: queued dependent kernels leave ~1.5 µs gaps on the GPU (launch
  // latency seen in Nsight Systems timelines; the reason CUDA graphs exist);
  // the eager trace above measured 2.76 µs.
  // Host: eager PyTorch spends ~10 µs of CPU per op (H. He, "Making Deep
  // Learning Go Brrrr From First Principles", 2022, overhead section).
  s.kernel_gap_s = kEagerKernelGapMeasured;
  s.host_per_kernel_s = 10e-6;
  // PyTorch's tensor parallelism (torch.distributed.tensor.parallel) runs the
  // linear layers on DTensors: each op goes through DTensor's Python dispatch
  // and sharding propagation, 0.341 ms per aten.addmm after the dispatch
  // refactor of pytorch/pytorch PR #107305 (Aug 2023, the 2.1 cycle; 0.476 ms
  // before). Taken as the PyTorch 2.3 figure (no later measurement found).
  s.host_per_tp_linear_s = 0.341e-3;
  // FSDP1 gathers into a flat buffer whose views are the parameters (no
  // copy-out); in backward the unsharded flat gradient is padded/copied
  // before ReduceScatter (torch/distributed/fsdp/_runtime_utils.py,
  // _reduce_grad): one pass over the layer's bf16 gradient.
  s.copy_passes_forward = 0;
  s.copy_passes_backward = 1 * kEagerMemoryBoundMeasured;
  // torch.optim.AdamW in PyTorch 2.3 defaults to foreach on CUDA (fused is
  // opt-in): _multi_tensor_adamw runs one pass per step of the update over fp32
  // tensors: decay p·(1−lr·wd) r4w4, m.lerp_(g) r8w4, v·β2 r4w4, v.addcmul_(g, g)
  // r8w4, sqrt(v) r4w4, ÷ bias correction r4w4, + eps r4w4, p.addcdiv_(m, denom)
  // r12w4 = 80 B per parameter (fused: read p, g, m, v, write p, m, v = 28 B).
  s.optimizer_bytes_per_param = 80 * kEagerOptimizerMeasured;   // measured (above)
  // NCCL on a DGX H100 builds 2 channels per NIC × 8 NICs = 16 ring channels,
  // one SM each (NCCL topology search, src/graph/search.cc).
  s.nccl_channels = 16;
  // HBM bytes per bus byte of NCCL's ring data path (Simple protocol,
  // src/device/prims_simple.h): the peer's NVLink write or the NIC's
  // GPUDirect write lands in this GPU's FIFO (1), the NCCL kernel reads it (1)
  // and copies it to the user buffer (1); forwarding to an NVLink peer writes
  // remote memory. A node's exit rank also stages the NIC's send (2 more):
  // 3 for most ranks (ASSUMPTION: no measurement of NCCL's HBM traffic).
  s.nccl_memory_passes = 3;
  // NCCL buffers (NCCL_BUFFSIZE 4 MiB × 3 protocols × 2 peers × 16 channels
  // ≈ 0.4 GB per communicator, several communicators) and the like, outside
  // the caching allocator ≈ 2.0 GB, plus the CUDA context ≈ 0.5 GB: the 2.5 GB
  // this stack always charged, split (ASSUMPTION, typical nvidia-smi overhead;
  // docs/DECISIONS.md). The GEMM workspaces, once counted in it, are
  // gemm_workspace_bytes now (allocated); the value was kept.
  s.reserve_bytes = 2.0e9;
  s.cuda_context_bytes = 0.5e9;
  // PyTorch 2.3's two cuBLAS workspaces on Hopper (above): allocated, so
  // beside (not inside) the reserve, which stays the unitemised assumption.
  s.gemm_workspace_bytes = kTorchGemmWorkspaces;
  s.fragmentation = 1.05;  // PyTorch caching allocator slack (ASSUMPTION)
  s.fsdp_pp_accumulate_unsharded = true;
  // Sinha et al. SC'22 (arXiv:2208.11035): 8% average performance variation
  // (range over a cluster's GPUs) on compute-bound kernels across Summit's
  // ~27,648 V100. A Gaussian's expected range over n draws ≈ 2σ·sqrt(2 ln n):
  // σ = 0.08 / (2·sqrt(2 ln 27648)) = 0.0089. Hardware, not framework, so
  // every preset inherits it (megatron-core sets it below as well).
  s.straggler_sigma = 0.0089;
  // foreach AdamW (torch/optim/adamw.py, _multi_tensor_adamw) materialises
  // exp_avg_sq_sqrt = _foreach_sqrt(exp_avg_sqs): one fp32 temporary per parameter.
  s.optimizer_temp_bytes = 4;
  // Eager: an op-level SAC policy's saved outputs are held by
  // torch.utils.checkpoint's _CachingTorchDispatchMode (torch 1963fc8,
  // torch/utils/checkpoint.py: MUST_SAVE outputs appended to storage in
  // forward, popped in recompute) whether backward reads them or not.
  s.sac_keeps_unread_outputs = true;
  // FSDP1 (torch/distributed/fsdp/api.py): FULL_SHARD / SHARD_GRAD_OP /
  // HYBRID_SHARD / NO_SHARD; optimizer-only sharding through DDP +
  // torch.distributed.optim.ZeroRedundancyOptimizer; CP from
  // torch.distributed's experimental _attention. Zero-bubble schedules
  // (torch.distributed.pipelining ScheduleInterleavedZeroBubble/ZBV) arrived
  // after PyTorch 2.3 (pipelining itself is new in 2.4).
  s.supports_zero1 = true;
  s.supports_zero_bubble = false;
  // PyTorch 2.3's experimental ring attention passes K/V around the ring
  // only (the all-gather rotater and set_rotate_method came later).
  s.supports_cp_p2p = true;
  s.supports_cp_a2a = false;
  s.supports_cp_allgather = false;
  s.supports_cp_a2a_p2p = false;
  // Host work per micro-batch beside kernel launches, and TP overlap: no
  // measurement and no overlap in eager FSDP (ASSUMPTION 0; docs/DECISIONS.md).
  s.host_per_micro_batch_s = 0;
  s.tp_comm_overlap = 0;
  s.tp_overlap_gemm_slowdown = 0;
  // PyTorch 2.3 ships NCCL 2.20.5: tree AllReduce; AllGather/ReduceScatter
  // ring-only across nodes (DESIGN.md §4); the algorithm set follows from the
  // version and the cluster (NcclFeaturesFor).
  s.nccl_version = kNcclPaperVersion;
  s.attention_by_arch = {{"volta", kFa2Volta}, {"ampere", kFa2Ampere}, {"hopper", kFa2Hopper},
                         {"blackwell", kFa2Hopper}};
  return s;
}

SoftwareStack PyTorchFsdp2() {
  SoftwareStack s = PyTorchFsdp();
  s.name = "pytorch-fsdp2";
  s.framework = "pytorch";
  s.description = "torchtitan-style FSDP2 (per-parameter sharding), torch.compile'd blocks, newer NCCL";
  // torch.compile fuses norms, rotary and SwiGLU into single kernels:
  // read + write once (norm r2w2, rotary r2w2, SwiGLU r4w2).
  s.norm_bytes_per_element = 4;
  s.rope_bytes_per_element = 4;
  s.act_bytes_per_element = 6;
  s.kernels_per_layer_forward = 14;
  s.host_per_tp_linear_s = 0;   // compiled: DTensor dispatch is traced away
  // Compiled: AOTAutograd's min-cut partitioner (torch/_functorch/partitioners.py,
  // should_ban_recomputation) treats MUST_SAVE as "never recompute" and saves
  // only the forward values backward reads, so an output that only feeds a
  // residual add is not kept.
  s.sac_keeps_unread_outputs = false;
  // FSDP2 all-gathers into one buffer then copies out per parameter
  // (split_with_sizes_copy), and copies gradients in before ReduceScatter:
  // one pass each way (torch/distributed/_composable/fsdp/_fsdp_collectives.py).
  s.copy_passes_forward = 1;
  s.copy_passes_backward = 1;
  // torchtitan builds AdamW with fused=True: read p, g, m, v, write p, m, v.
  s.optimizer_bytes_per_param = 28;
  // PyTorch 2.7 ships NCCL 2.26.2: PAT for one-GPU-per-node AG/RS, NVLS.
  s.nccl_version = 22602;
  // torchtitan builds AdamW fused (above): no foreach temporaries.
  s.optimizer_temp_bytes = 0;
  // PyTorch 2.7's torch.distributed.pipelining has the zero-bubble schedules
  // (ScheduleInterleavedZeroBubble, ScheduleZBVZeroBubble), but not on
  // torch.compile'd blocks: their split backward (stage_backward_input, then
  // stage_backward_weight from the saved intermediates) fails in the first
  // weight pass (pytorch/pytorch issue 161904, torchtitan-style per-block
  // compile), and from PyTorch 2.10 (pull request 162511,
  // _check_torch_compile_compatibility: any OptimizedModule among the stage's
  // submodules) the schedule refuses such stages when it is built; 2.7's
  // check (pull request 143599) looked only at a compiled stage root.
  // Compiled blocks here, so no zero bubble (pytorch-fsdp2-eager has it).
  s.supports_zero_bubble = false;
  // Its ScheduleInterleaved1F1B warms up (v − 1)·p + 2·(p − 1 − rank) chunks
  // (capped at m·v) even when m = p (torch/distributed/pipelining/schedules.py,
  // get_rank_warmup_ops), unlike Megatron-Core's all-warm-up case.
  s.pp_interleaved_full_warmup = false;
  // PyTorch 2.7 context parallel (torch/distributed/tensor/experimental/
  // _attention.py, set_rotate_method): "allgather" gathers every K/V shard
  // once, "alltoall" rotates them one ring step at a time (the ring kind).
  s.supports_cp_allgather = true;
  // Both rotaters run the same loop (_templated_ring_attention and its
  // backward, pytorch/pytorch f2127db torch/distributed/tensor/experimental/
  // _attention.py; the source stored for reading, the loop as in torch 2.6):
  // cp flash calls (torchtitan 9dec370 torchtitan/utils.py get_train_context
  // allows only FLASH_ATTENTION and EFFICIENT_ATTENTION under CP; bf16, head
  // dim 128: flash), each merged by _SDPAMerger in fp32 (the merge bytes
  // above). The all-gather rotater gathers K,V once at step 0 and waits for
  // them at step 1; each step but the last still packs K and V for the
  // exchange (`next_kv = torch.cat([key.flatten(), value.flatten()])`,
  // r2w2 = 4 B). The backward accumulates dk, dv in fp32 and rotates them
  // with the ALL_TO_ALL rotater (`dkv_rotater`, ft_c.permute_tensor to the
  // next rank) at every step, packing them first (torch.cat of the fp32
  // grad_key, grad_value: r4w4 = 8 B); the last exchange is waited right
  // after the loop.
  s.cp_allgather_ring_loop = true;
  s.cp_kv_pack_bytes_per_step = 4;
  s.cp_dkv_pack_bytes_per_step = 8;
  return s;
}

// FSDP2 without torch.compile: FSDP2's collectives and copies, eager
// Hugging Face-style kernels and DTensor dispatch per TP linear as pytorch-fsdp.
SoftwareStack PyTorchFsdp2Eager() {
  const SoftwareStack eager = PyTorchFsdp();
  SoftwareStack s = PyTorchFsdp2();
  s.name = "pytorch-fsdp2-eager";
  s.framework = "pytorch";
  s.description = "PyTorch FSDP2 (per-parameter sharding), eager kernels, DTensor TP, NCCL 2.26";
  s.norm_bytes_per_element = eager.norm_bytes_per_element;
  s.rope_bytes_per_element = eager.rope_bytes_per_element;
  s.act_bytes_per_element = eager.act_bytes_per_element;
  s.kernels_per_layer_forward = eager.kernels_per_layer_forward;
  s.host_per_tp_linear_s = eager.host_per_tp_linear_s;
  s.sac_keeps_unread_outputs = eager.sac_keeps_unread_outputs;
  // Eager stage modules: PyTorch 2.7's zero-bubble schedules run them
  // (ScheduleInterleavedZeroBubble's compile check raises only on an
  // OptimizedModule, see PyTorchFsdp2).
  s.supports_zero_bubble = true;
  return s;
}

// torchtitan (pytorch/torchtitan b5bcd76c66d0acb1a08b176d9639425bc55e0b2a):
// FSDP2 + compile as pytorch-fsdp2; the loss is F.cross_entropy on
// pred.float() outside the compiled blocks (torchtitan/components/loss.py):
// the eager 14 B per logit element. Its default activation checkpointing is
// SelectiveAC (torchtitan/trainer.py: activation_checkpoint default_factory
// SelectiveAC.Config), op-level: saves compute-intensive ops and every other
// mm, recomputes the rest (torchtitan/distributed/activation_checkpoint.py).
// Pipeline schedules include ZBV / interleaved zero-bubble (torch.distributed.pipelining),
// which cannot run its compiled blocks (supports_zero_bubble, PyTorchFsdp2).
// held_last_stage_outputs of an engine that keeps every micro-batch's output
// until the step ends (the field is capped at m − 1).
constexpr double kEveryEarlierMicroBatch = 1e6;

SoftwareStack Torchtitan() {
  SoftwareStack s = PyTorchFsdp2();
  s.name = "torchtitan";
  s.framework = "torchtitan";
  s.description = "torchtitan: FSDP2 + torch.compile blocks, eager fp32 loss, op-level SAC, torch pipelining";
  // SelectiveAC._wrap_block's policy: save compute/comm ops (mm, flash
  // attention) "except every second mm/linear"; everything else recomputed.
  s.sac_matmul_recompute_fraction = 0.5;
  // Compiled blocks: no zero-bubble schedule (PyTorchFsdp2's note).
  s.supports_zero_bubble = false;
  // parallelism.context_parallel_rotate_method (torchtitan/config/job_config.py):
  // "allgather" (the default) or "alltoall" (ring rotation): both kinds, no
  // hierarchical one. parallelism.enable_async_tensor_parallel defaults to False: TP blocks.
  s.supports_cp_p2p = true;
  s.supports_cp_allgather = true;
  s.supports_cp_a2a_p2p = false;
  s.tp_comm_overlap = 0;
  // When async TP is on (experimental.enable_async_tensor_parallel, compiled
  // blocks only: parallelisms/parallelize_llama.py at 9dec370 sets
  // torch._inductor.config._micro_pipeline_tp), inductor's micro_pipeline_tp
  // pass (torch/_inductor/fx_passes/micro_pipeline_tp.py, torch of Dec 2024)
  // rewrites an all-gather whose result feeds mm / _scaled_mm (directly or
  // through a reshape) into fused_all_gather_[scaled_]matmul, and a
  // reduce-scatter into fused_[scaled_]matmul_reduce_scatter only when
  // _find_producer_matmul finds its input to be one mm / _scaled_mm (or
  // reshape-mm-reshape) with no other user. Forward, both all-gathers (into
  // wq/wk/wv and w1/w3) and both reduce-scatters (after wo and w2) match; a
  // full-AC recompute presents the same forward patterns. Backward, the
  // all-gathered output gradients of wo and w2 feed their dgrad matmul and
  // match, but the reduce-scatters' input is the sum of the q, k, v (w1, w3)
  // dgrads: an add, no producer matmul, so they stay NCCL reduce-scatters
  // (the pass's author: "In the backward graph, the reduce-scatters are
  // receiving as input the addition of various scaled_mms", pytorch/pytorch
  // pull request 149946 review, Mar 2025, same matching code).
  s.tp_overlap_backward_reductions = false;
  // The fused matmul -> reduce-scatter (torch/distributed/_symmetric_memory/
  // __init__.py of Dec 2024, _fused_matmul_reduce_scatter_impl): each step
  // computes the partial block of one peer's shard into a symmetric buffer
  // and copies its own shard's block from the peer (_pipelined_produce_and_
  // all2all, copies on the side stream), then sums the tp stacked partials
  // in one reduction kernel on the compute stream after the pipeline
  // (reduce_fn over stacked_partials): exposed memory-bound work.
  s.tp_overlap_rs_local_reduce = true;
  // activation_checkpoint.mode = "selective" with selective_ac_option = "<k>":
  // every k-th transformer block this rank builds is wrapped whole
  // (pytorch/torchtitan 01db32e, torchtitan/distributed/activation_checkpoint.py,
  // _apply_layer_sac), the others keep their activations.
  s.supports_partial_recompute = true;
  // FSDP2 mixed precision with reduce_dtype float32: torchtitan's
  // training.mixed_precision_reduce defaults to (and only allows) "float32"
  // (torchtitan/config_manager.py at 9dec370ad26b). Gradients are
  // reduce-scattered in fp32, and under pipelining accumulated unsharded in
  // fp32 across micro-batches (torch FSDPParam.to_accumulated_grad_if_needed
  // upcasts the unsharded gradient to reduce_dtype when gradient sync is off).
  s.comm_grad_bytes = 4;
  // Float8 (torchao float8 training, torchao eab345c, tensorwise dynamic
  // scaling): Float8Linear's autograd function saves its float8 input and
  // weight for backward (torchao/float8/float8_linear.py,
  // manual_float8_matmul_with_args_in_float8: ctx.save_for_backward(input_fp8,
  // weight_fp8_t)), so linear inputs are kept at 1 B. torchtitan's Float8
  // recipe gathers FSDP weights in float8 (docs/float8.md launch command and
  // train_configs/llama3_405b.toml at 9dec370: enable_fsdp_float8_all_gather,
  // precompute_float8_dynamic_scale_for_fsdp): the unsharded weight is the
  // float8 tensor the GEMM reads (torchao fsdp_utils.py
  // WeightWithDynamicFloat8CastTensor.fsdp_post_all_gather), and no weight
  // copy is cached across micro-batches.
  s.fp8_param_gather = true;
  // Float8 with TP (torchao eab345c torchao/float8/float8_tensor_parallel.py,
  // the styles torchtitan's apply_tp picks when float8 is on):
  // PrepareFloat8ModuleInput casts the attention / feed-forward input to
  // float8 before its Shard(1) -> Replicate redistribute ("so that if there
  // are multiple float8 users of the input activation, we perform fp8
  // allgather only once"), and Float8RowwiseParallel's output hook
  // (NoopFwToFloat8BwDynamic after the reduce-scatter redistribute) casts the
  // output gradient to float8 before the backward's all-gather of it. The
  // reduce-scatters (wo, w2 outputs; the input gradients) stay bf16.
  s.fp8_tp_gathers = true;
  // Float8Linear's GEMMs: only the output (forward) GEMM uses fast
  // accumulation (torchao/float8/config.py Float8LinearConfig:
  // gemm_config_output = Float8GemmConfig(use_fast_accum=True),
  // gemm_config_grad_input and gemm_config_grad_weight default
  // use_fast_accum=False; pytorch/ao issue 2377).
  s.fp8_split_accum_fprop = false;
  s.fp8_split_accum_dgrad = true;
  s.fp8_split_accum_wgrad = true;
  s.saves_quantized_inputs = true;
  s.quantized_weight_cache = false;
  // torch.distributed.pipelining keeps every micro-batch's last-stage output
  // (the logits) in output_chunks until the step merges them
  // (torch/distributed/pipelining/stage.py, _PipelineStageBase.forward_one_chunk,
  // output_chunks.append(output); PyTorch 2.5-2.6): all earlier micro-batches.
  s.held_last_stage_outputs = kEveryEarlierMicroBatch;
  // The same engine keeps its stage-boundary tensors per micro-batch
  // (torch/distributed/pipelining/stage.py, torch 2.6 era as 1963fc8 ran it):
  // PipelineStage._prepare_forward_infra allocates one input receive buffer
  // per micro-batch (non-first stages) and _prepare_backward_infra /
  // _create_grad_recv_info one output-gradient buffer per micro-batch
  // (non-last), kept across steps; forward_one_chunk appends every stage's
  // output to output_chunks (get_fwd_send_ops sends from it); _backward.py
  // stage_backward leaves each input gradient in its receive buffer's .grad.
  // Both last until clear_runtime_states at the next step() (a later torch
  // sets .grad = None in stage_backward).
  s.pp_keeps_boundary_tensors = true;
  // Its schedules' step() ends, on the last stage, with
  // `return self._merge_outputs(stage.output_chunks)` (schedules.py,
  // PipelineScheduleSingle.step and PipelineScheduleMulti.step): microbatch.py
  // merge_chunks torch.cat's the m outputs (the logits, ÷ tp with loss
  // parallel) into one new tensor after the last backward; torchtitan's
  // train.py drops the result.
  s.pp_merges_last_stage_outputs = true;
  // Loss parallel (training.disable_loss_parallel defaults to False): with
  // tp > 1 the logits stay vocab-sharded and F.cross_entropy runs torch's
  // loss_parallel ops (torch/distributed/tensor/parallel/loss.py, torch
  // 1963fc8 and later). Forward (_log_softmax): the fp32 copy, shifted,
  // exp(shifted) and the result live at once beside the bf16 logits = 14 B.
  // Backward (_nll_loss_and_log_softmax_backward) fuses the nll and
  // log_softmax backward: the saved fp32 log-probs x, grad_input =
  // zeros_like(x), exp(x) and (grad_input + exp(x)) live at once = 16 B;
  // the bf16 logits are gone by then (the trainer's `del pred` before
  // loss.backward()).
  s.vocab_parallel_logits_bytes_per_element = 16;
  // ... a peak reached after `del pred` (torchtitan/train.py), so without the
  // logits, which torch pipelining's output_chunks still reference on the last stage.
  s.vocab_parallel_peak_excludes_logits = true;
  // torchtitan's parallelize_llama (apply_tp): "output":
  // ColwiseParallel(input_layouts=Shard(1), output_layouts=Shard(-1),
  // use_local_output=False) after "norm": SequenceParallel(). The style
  // redistributes the sequence-sharded norm output to Replicate
  // (torch/distributed/tensor/parallel/style.py, ColwiseParallel._prepare_input_fn)
  // and the linear saves that gathered b·s·h input for its weight gradient.
  // The head is not a float8 linear (torchtitan's Float8Handler skips
  // "output"), so it is bf16.
  s.tp_saves_gathered_head_input = true;
  // Rotary as compiled: its Llama applies RoPE as complex multiplication
  // (torchtitan/models/llama/model.py at 9dec370, apply_rotary_emb:
  // view_as_complex(xq.float().reshape(..., -1, 2)) * freqs_cis, view_as_real,
  // type_as), and inductor generates no code for complex operators: it falls
  // back to the ATen kernel ("Torchinductor does not support code generation
  // for complex operators. Performance may be worse than eager.",
  // torch/_inductor/lowering.py unsupported_input_tensor; the warning
  // torchtitan's compiled Llama prints, pytorch/torchtitan issue 15). So the
  // fp32 copy is materialised for the fallback (r2w4), the complex product
  // reads and writes fp32 (r4w4 per real element; freqs_cis is per position,
  // negligible) and the cast back writes bf16 (r4w2): 20 B per element, the
  // derivation the eager preset scales, not one fused r2w2 kernel. The
  // kernels here are large elementwise ones (no eager small-kernel factor).
  s.rope_bytes_per_element = 20;
  // Its Llama repeats K and V to every query head before SDPA
  // (torchtitan/models/llama/model.py at 9dec370, Attention.forward: repeat_kv):
  // flash attention saves, and CP (it hooks the SDPA call) gathers or rotates, the repeated tensors.
  s.repeats_kv_heads = true;
  return s;
}

SoftwareStack MegatronCore() {
  SoftwareStack s;
  s.name = "megatron-core";
  s.framework = "megatron-lm";
  s.description = "Megatron-Core with Transformer Engine fused kernels, distributed optimizer, recent NCCL";
  // Interleaved 1F1B warms up 2·(p − 1 − rank) + (v − 1)·group chunks and runs
  // all of them first only when that reaches m·v: Megatron-LM 4295be1a
  // (2024-11-01) megatron/core/pipeline_parallel/schedules.py removed the
  // "m = p: every chunk forward first" case, so the last rank at m = p holds
  // 2·0 + (v − 1)·p + 1 chunks, not all m·v.
  s.pp_interleaved_full_warmup = false;
  // Megatron mixed precision (DESIGN.md §4): bf16 params 2 + fp32 main grads
  // 4 + fp32 master, exp_avg, exp_avg_sq 12. Gradients are reduced in fp32
  // (Megatron-LM arguments.py sets accumulate_allreduce_grads_in_fp32 for bf16).
  s.param_bytes_at_rest = 2;
  s.grad_bytes = 4;
  s.optimizer_bytes = 12;
  s.compute_param_bytes = 2;
  s.comm_grad_bytes = 4;
  s.comm_param_bytes = 2;
  // Tied embedding at pp > 1: finalize_model_grads.py
  // _allreduce_word_embedding_grads all-reduces the weight's main_grad (the
  // fp32 DDP grad buffer) over the embedding group {first, last stage}.
  s.tied_grad_bytes = 4;
  // After the DP sync, finalize_model_grads' _allreduce_layernorm_grads
  // (Megatron-LM core_r0.10.0 megatron/core/distributed/
  // finalize_model_grads.py) all-reduces over the tp group, coalesced, the
  // main_grad of every parameter marked sequence_parallel (with tp > 1 and
  // --sequence-parallel; the q/k norms also without it): TE norm weights and
  // biases (TransformerEngine v1.11 pytorch/module/layernorm.py, rmsnorm.py,
  // layernorm_linear.py: setattr(..., "sequence_parallel", ...)), row-parallel
  // linear biases (linear.py, parallel_mode "row"), the MoE router weight
  // (megatron/core/transformer/moe/router.py). main_grad is the fp32 DDP
  // buffer: 4 B, as comm_grad_bytes.
  s.sp_grad_bytes = 4;
  // optimizer.step: clip_grad 1.0 by default (megatron/core/optimizer/
  // optimizer_config.py) -> get_grad_norm_fp32 (clip_grads.py) all-reduces
  // one fp32 over get_grad_stats_parallel_group(): the model-parallel group,
  // or every rank (None) for the DistributedOptimizer (distrib_optimizer.py);
  // then .item(). No found_inf all-reduce under bf16 (no grad scaler).
  s.grad_norm_allreduce = true;
  s.separate_compute_copy = false;
  // Transformer Engine fuses norm into the following GEMM's prologue (LayerNormLinear),
  // rotary and SwiGLU into single kernels, bias-dropout-add into one.
  s.norm_bytes_per_element = 4;
  s.rope_bytes_per_element = 4;
  s.act_bytes_per_element = 6;
  s.residual_bytes_per_element = 6;
  // Fused QKV GEMM, norm×2, rotary, attention, out proj, fc1, SwiGLU, fc2, residual×2 ≈ 12.
  s.kernels_per_layer_forward = 12;
  // Transformer Engine's CP (attention.py, AttnFuncWithCPAndKVP2P) corrects
  // the fp32 output with one fused kernel per step (r4 + r2, w4 = 10 B) and
  // accumulates gradients the same way.
  s.cp_merge_bytes_fixed = 6;
  s.cp_merge_bytes_per_step = 10;
  s.cp_grad_bytes_per_step = 10;
  s.cp_grad_bytes_fixed = 6;
  s.cp_kernels_per_step = 2;
  // Vocab-parallel fused cross entropy: fp32 softmax kept (4) + bf16 logits (2);
  // traffic fwd r2w4 + bwd r4w2 + reductions ≈ 16 B per element.
  s.logits_bytes_per_element = 6;
  s.loss_bytes_per_element = 16;
  s.kernel_gap_s = 1.5e-6;
  s.host_per_kernel_s = 10e-6;
  s.copy_passes_forward = 0;   // contiguous param and grad buffers: no copies
  s.copy_passes_backward = 0;
  // Distributed-optimizer Adam: read main grad, master, m, v (16 B), write
  // master, m, v (12 B), write the bf16 param (2 B), zero the grad buffer (4 B) = 34 B.
  s.optimizer_bytes_per_param = 34;
  s.nccl_channels = 16;
  s.nccl_memory_passes = 3;  // as pytorch-fsdp: NCCL's data path
  s.fragmentation = 1.05;
  s.overlap_param_gather = true;   // --overlap-param-gather (recommended in Megatron-LM README)
  // Interleaved schedule: one gradient and parameter buffer per model chunk,
  // synchronised chunk by chunk (NVIDIA/Megatron-LM core_v0.4.0 and
  // core_r0.8.0-core_r0.10.0 megatron/core/pipeline_parallel/schedules.py,
  // forward_backward_pipelining_with_interleaving: grad_sync_func[chunk]
  // after the chunk's last backward id + pipeline rank, param_sync_func of
  // chunk c+1 at forward id (first of chunk c) - rank; megatron/training/
  // training.py sets them per chunk under --overlap-grad-reduce with
  // --delay-grad-reduce / --align-grad-reduce, both on by default). NeMo
  // 23.09's distributed Adam passes the same hooks (NeMo v1.21.0
  // megatron_gpt_model.py fwd_bwd_step: reduce_overlap_gradients,
  // sync_overlap_parameters; one bucket per virtual stage).
  s.dp_overlap_per_chunk = true;
  // Interleaved pipeline p2p overlapped with the passes: Megatron-LM turns
  // overlap_p2p_comm on unless --no-overlap-p2p-communication (core_v0.4.0
  // megatron/arguments.py; off without interleaving), NeMo's MLPerf GPT-3
  // recipe sets it (training_results_v3.1 conf/custom.yaml). Warm-up waited
  // at once, cool-down blocking (core_v0.4.0 megatron/core/pipeline_parallel/
  // schedules.py forward_backward_pipelining_with_interleaving).
  s.pp_overlap_p2p = true;
  s.reserve_bytes = 2.0e9;        // as pytorch-fsdp: NCCL buffers, outside the allocator (ASSUMPTION)
  s.straggler_sigma = 0.0089;     // as pytorch-fsdp (Sinha et al. SC'22)
  s.cuda_context_bytes = 0.5e9;
  // Transformer Engine's GEMM workspace, and PyTorch's two cuBLAS ones: the
  // output layer (Megatron's ColumnParallelLinear, torch.matmul) runs its
  // forward and backward GEMMs through torch (above).
  s.gemm_workspace_bytes = kTorchGemmWorkspaces + kTeCublasWorkspaceHopper;
  // NVIDIA/Megatron-LM d98e8a64ddf34856e74b24714e3bedb2f5a39553: DDP bucket
  // max(40000000, 1000000·dp) parameters (megatron/core/distributed/
  // distributed_data_parallel.py:134), views of one contiguous grad buffer
  // (no flattening copy); Adam from Apex/TE FusedAdam: no temporaries.
  s.grad_bucket_elements = 4e7;
  s.flatten_grad_buckets = false;
  s.optimizer_temp_bytes = 0;
  // Native vocab-parallel CE is the default (model_parallel_config.py:320,
  // cross_entropy_loss_fusion = False): logits_bytes_per_element above.
  // Supported: distributed optimizer (--use-distributed-optimizer), Megatron
  // FSDP / torch FSDP2, CP (TE p2p / a2a / a2a+p2p), interleaved schedule.
  s.supports_zero1 = true;
  s.supports_fsdp = true;
  s.supports_sharding_with_pp = true;
  s.supports_cp = true;
  s.supports_interleaved = true;
  s.supports_zero_bubble = false;
  // --cp-comm-type p2p | a2a | allgather | a2a+p2p, default p2p (Megatron-LM
  // d98e8a6 megatron/training/arguments.py, _add_distributed_args). a2a+p2p
  // with --hierarchical-context-parallel-sizes a2a p2p (validate_args asserts
  // their product is the cp size; TEDotProductAttention passes the two groups
  // of parallel_state's create_hierarchical_groups to Transformer Engine >= 1.12,
  // megatron/core/extensions/transformer_engine.py).
  s.supports_cp_p2p = true;
  s.supports_cp_a2a = true;
  s.supports_cp_allgather = true;
  s.supports_cp_a2a_p2p = true;
  // --recompute-granularity full --recompute-method block --recompute-num-layers N
  // (Megatron-LM d98e8a6, megatron/training/arguments.py choices uniform,block;
  // megatron/core/transformer/transformer_block.py _checkpointed_forward):
  // the first N layers of each model chunk checkpointed, the rest not.
  s.supports_partial_recompute = true;
  // --tp-comm-overlap defaults to off (megatron/core/model_parallel_config.py:
  // tp_comm_overlap = False) and needs --sequence-parallel (arguments.py).
  // When a stack file turns it on, Transformer Engine's userbuffers defaults
  // (transformer_engine/pytorch/module/base.py, initialize_ub) set the cost:
  // the reduce-scatter GEMMs (proj_fprop, fc2_fprop, "pipeline") run on
  // 132 − 16 SMs of an H100 (num_sm 16, set_sm_margin): 16/116 = 13.8% slower;
  // the all-gather ones ("ring_exchange") copy with the copy engines (use_ce,
  // num_sm 1): ≈ 0. Half the GEMMs of each kind: 0.069.
  s.tp_comm_overlap = 0;
  s.tp_overlap_gemm_slowdown = 0.069;
  // Without userbuffers the column-parallel backward still overlaps:
  // Transformer Engine's Linear / LayerNormLinear backward (NVIDIA/
  // TransformerEngine v1.11 transformer_engine/pytorch/module/linear.py,
  // _Linear.backward: "Overlap input AG with dgrad", gather_along_first_dim(
  // inputmat, async_op=True) of the saved local SP input, then "Overlap
  // dgrad-RS/AR with wgrad", reduce_scatter_along_first_dim / allreduce with
  // async_op=True before the wgrad GEMM; layernorm_linear.py the same), what
  // Megatron-Core's TELayerNormColumnParallelLinear / TEColumnParallelLinear
  // run in NeMo 24.07-24.12 (Megatron-LM core_r0.8-0.10); Megatron's own
  // LinearWithGradAccumulationAndAsyncCommunication (megatron/core/
  // tensor_parallel/layers.py, 285068c8 and d98e8a64) does the same.
  s.tp_backward_overlap = true;
  // Megatron-Core's p2p (Megatron-LM core_r0.8.0-core_r0.10.0 megatron/core/
  // pipeline_parallel/p2p_communication.py _communicate) ends an exchange
  // with torch.cuda.synchronize() only when config.batch_p2p_comm and
  // batch_p2p_sync; Megatron-LM's training sets batch_p2p_comm = not
  // overlap_p2p_comm (megatron/training/arguments.py), overlap on by default
  // under the interleaved schedule (--no-overlap-p2p-communication) and
  // forced off without it. So the interleaved schedule runs ahead and 1F1B
  // synchronizes the host; not separated per schedule here (the host time
  // per micro-batch it would expose is 0 in every preset: ASSUMPTION,
  // docs/DECISIONS.md).
  s.pp_host_synchronous = false;
  s.host_per_micro_batch_s = 0;
  // NGC PyTorch 25.01 (a Megatron-Core container) ships NCCL 2.25.1.
  s.nccl_version = 22501;
  // Blackwell: cuDNN fused attention as on Hopper (Transformer Engine's FusedAttention).
  s.attention_by_arch = {{"volta", kFa2Volta}, {"ampere", kFa2Ampere}, {"hopper", kCudnnHopper},
                         {"blackwell", kCudnnBlackwell}};
  // --fp8-param-gather / --fp4-param-gather (Megatron-LM d98e8a6 arguments.py;
  // Megatron Core "Low-Precision Training Guide": the parameter all-gather is
  // performed in the quantized dtype).
  s.fp8_param_gather = true;
  s.fp4_param_gather = true;
  // Transformer Engine's linear modules save the quantized GEMM input for
  // backward (TE pytorch/module/linear.py, layernorm_linear.py, layernorm_mlp.py).
  s.saves_quantized_inputs = true;
  // TE Linear/LayerNormLinear/GroupedLinear cache the weight's FP8/NVFP4
  // cast in `_fp8_workspaces["weight"]` whenever is_first_microbatch is not
  // None (TransformerEngine d0067d0 pytorch/module/linear.py forward:
  // cache_name = "weight"; module/base.py quantize_weight keeps the
  // workspace, row- and column-wise usage while grad is enabled); Megatron
  // passes is_first_microbatch unless disable_parameter_transpose_cache
  // (default False: Megatron-LM d98e8a6 transformer_config.py:1175,
  // extensions/transformer_engine.py:1338).
  s.quantized_weight_cache = true;
  // FP8 GEMMs: fprop with fast accumulation, dgrad and wgrad with the split
  // accumulator (TransformerEngine pytorch/module/base.py `_2X_ACC_FPROP =
  // False`, `_2X_ACC_DGRAD = True`, `_2X_ACC_WGRAD = True`, passed as
  // use_split_accumulator by linear.py, layernorm_linear.py and
  // layernorm_mlp.py; the same constants from the 0.x releases through the
  // 2.x MXFP8 ones, so for every TE version the NeMo/MLPerf tables ran).
  s.fp8_split_accum_fprop = false;
  s.fp8_split_accum_dgrad = true;
  s.fp8_split_accum_wgrad = true;
  // Megatron-LM d98e8a6: --swiglu models run bias_activation_fusion =
  // args.bias_swiglu_fusion (arguments.py, --no-bias-swiglu-fusion: on unless
  // disabled; NeMo's Llama recipes set bias_activation_fusion: true), and
  // megatron/core/fusions/fused_bias_swiglu.py SwiGLUFunction saves only its
  // input for backward.
  s.swiglu_saves_input_only = true;
  return s;
}

SoftwareStack MegatronLm2021() {
  SoftwareStack s = MegatronCore();
  s.name = "megatron-lm-2021";
  // Its interleaved schedule ran every chunk forward first when m = p
  // (megatron/schedules.py forward_backward_pipelining_with_interleaving,
  // all_warmup_microbatches; the case Megatron-LM 4295be1a removed).
  s.pp_interleaved_full_warmup = true;
  s.framework = "megatron-lm";
  s.description = "Megatron-LM of Narayanan et al. 2021 (SC21): unfused attention, dropout, apex fused kernels";
  s.fp8_param_gather = false;   // FP8 training came to Megatron with Transformer Engine (2023)
  s.fp4_param_gather = false;
  s.saves_quantized_inputs = false;
  s.quantized_weight_cache = false;
  s.swiglu_saves_input_only = false;   // 2021: GELU models, no SwiGLU fusion
  // Attention before FlashAttention: QKᵀ (baddbmm) writes the scores (2 B),
  // the fused scale-mask-softmax reads and writes them (4 B), dropout reads
  // them, writes the result and a 1-byte mask (5 B), AV reads them (2 B):
  // 13 B per score element forward. Backward: AV's dgrad writes dP (2), its
  // wgrad reads P (2), dropout backward (2 + 1 + 2), softmax backward reads
  // P and dP and writes dS (6), QKᵀ's two GEMMs read dS (4): 21 B. Saved for
  // backward: softmax output 2, mask 1, dropout output 2 = 5 B (Korthikanti
  // et al. 2022, the 5as²b term).
  AttentionKernel unfused{"unfused-softmax", 0, 1.0, false, 13, 21, 5};
  s.attention_by_arch = {{"volta", unfused}, {"ampere", unfused}, {"hopper", unfused}, {"blackwell", unfused}};
  // Apex fused LayerNorm (r2w2 = 4 B), bias-GeLU fusion (GELU r2w2),
  // bias-dropout-add: read 2 tensors, write 1, write a 1-byte mask = 7 B.
  s.norm_bytes_per_element = 4;
  s.rope_bytes_per_element = 0;   // learned positions
  s.residual_bytes_per_element = 7;
  s.dropout = true;
  // Kernels per layer forward: LN ×2, QKV, baddbmm, softmax, dropout, bmm,
  // out proj, bias-dropout-add ×2, fc1, bias-GeLU, fc2 + layout copies ≈ 16.
  s.kernels_per_layer_forward = 16;
  // Gradients all-reduced after the backward, not overlapped (the 2021
  // "local" DDP); no distributed optimizer.
  s.overlap_grad_reduce = false;
  s.dp_overlap_per_chunk = false;   // nothing overlapped to schedule per chunk
  // Its interleaved schedule's p2p blocks: send_forward_recv_forward and
  // friends wait for every transfer (de7dc40f88 megatron/schedules.py,
  // megatron/p2p_communication.py; overlap_p2p_comm came with Megatron-Core).
  s.pp_overlap_p2p = false;
  // Gradients as the sc21 code handled them in the paper's fp16 runs
  // (NVIDIA/Megatron-LM de7dc40f88 examples/sc21/CONFIG.sh: --fp16, no
  // --accumulate-allreduce-grads-in-fp32, which only --bf16 forces on in
  // megatron/arguments.py; run_table_1.sh: --DDP-impl torch at pp 1, local at
  // pp > 1, no --use-contiguous-buffers-in-ddp). Without contiguous buffers
  // there is no fp32 main_grad: autograd's AccumulateGrad adds every
  // micro-batch's fp16 weight gradient into param.grad in place (r2 r2 w2 =
  // 6 B per parameter, one eager kernel per tensor; 6/4 passes of
  // copy_bytes' 4 B, times the presets' eager factor, as nanotron's and
  // DeepSpeed's folds). Accumulation fused into the wgrad GEMM came with
  // --gradient-accumulation-fusion (83b1e42f30, 2022-02). The reduction is
  // of those fp16 gradients: local DDP's allreduce_gradients buckets
  // param.grad by its type (megatron/model/distributed.py), torch DDP
  // reduces the parameters' dtype. (bf16 jobs of that code add into an fp32
  // main_grad, 10 B, and reduce in fp32: not separated here.)
  s.grad_fold_passes = 6.0 / 4.0 * kEagerMemoryBoundMeasured;
  s.comm_grad_bytes = 2;
  // megatron/training.py train_step all-reduces the tied word embedding's
  // main_grad (local DDP) or .grad (torch DDP) over the embedding group: the
  // same fp16 gradients.
  s.tied_grad_bytes = 2;
  // No sequence parallelism in that code (it came with cfd2e21607, 2022):
  // nothing tp-replicated to all-reduce. Its clipping all-reduces the norm
  // over mpu.get_model_parallel_group() (de7dc40f88 megatron/optimizer/
  // clip_grads.py clip_grad_norm_fp32): grad_norm_allreduce as megatron-core.
  // (fp16's found_inf all-reduce over the same group, optimizer.py, is not
  // priced.)
  s.sp_grad_bytes = 0;
  s.overlap_param_gather = false;
  // Loss: vocab_parallel_cross_entropy(output.float()) on the fp16/bf16 head
  // output, which the caller still references (2 B) beside the fp32 copy (4 B).
  // The 2021 cross entropy (NVIDIA/Megatron-LM 52a5f2f272e5ef242eb271227da712f7dfc55da3,
  // megatron/mpu/cross_entropy.py) works in that copy in place: sub_(max),
  // exp(out=), div_(sum), then saves it as the softmax; max and sum are one
  // value per token. 6 B per logit element at the loss's peak (the 2023 code,
  // logits - max out of place, needs 10: the megatron-lm-2023 stack file).
  s.logits_bytes_per_element = 6;
  s.loss_bytes_per_element = 16;
  // NGC PyTorch 20.12-21.03 containers of the time ship NCCL 2.8.x: ring
  // and tree, no NVLS, no PAT.
  s.nccl_version = 20803;
  // 2021: no distributed optimizer, no FSDP, no CP; interleaved 1F1B is the paper's.
  s.supports_zero1 = false;
  s.supports_fsdp = false;
  s.supports_sharding_with_pp = false;
  s.supports_cp = false;
  s.supports_cp_a2a = false;
  s.supports_cp_allgather = false;
  // 2021's --checkpoint-activations checkpoints every layer (chunked by
  // --checkpoint-num-layers); the block method came later.
  s.supports_partial_recompute = false;
  s.tp_overlap_gemm_slowdown = 0;   // no userbuffers in 2021
  // Pipeline sends split over the tp ranks (scatter/gather, Narayanan et al.
  // 2021 §4.1): on by default since NVIDIA/Megatron-LM 72e4230bb5
  // (2021-02-16, megatron/arguments.py --no-scatter-gather-tensors-in-pipeline,
  // dest scatter_gather_tensors_in_pipeline, store_false). At de7dc40f88 (the
  // sc21 scripts) megatron/p2p_communication.py _communicate sends
  // split_tensor_into_1d_equal_chunks (each rank's 1/tp, a view) and the
  // receiver rebuilds the tensor with mpu.gather_split_1d_tensor, an
  // all_gather over the tensor-parallel group; no shape messages (the shape is
  // the fixed (seq, mbs, hidden)). From cfd2e21607 (2022-04) the split is
  // skipped under sequence parallelism, where the tensor is already split
  // (comm_plan.cc partitions only without SP).
  s.pp_partition_over_tp = true;
  s.pp_meta_messages = 0;
  // Every exchange ends with torch.cuda.synchronize() ("To protect against
  // race condition when using batch_isend_irecv()"; de7dc40f88, cfd2e21607
  // and 285068c810 megatron/p2p_communication.py _communicate): the host
  // waits for the GPU at every pipeline boundary, so each pass starts from
  // an empty queue. The shape is fixed: no metadata messages (above).
  s.pp_host_synchronous = true;
  // The 2021 code blocks on the backward's TP all-reduce: at de7dc40f88 (the
  // sc21 scripts, 2021-08-10) megatron/mpu/layers.py ColumnParallelLinear
  // calls copy_to_tensor_model_parallel_region, whose backward is a plain
  // all-reduce; the asynchronous all-reduce beside the wgrad GEMM
  // (--no-async-tensor-model-parallel-allreduce, on by default) came in
  // September 2021 (16c90445e7). tests/data/stacks/megatron-lm-2022.yaml
  // is the 2022-2023 code.
  s.tp_backward_overlap = false;
  // PyTorch 1.8-1.9 of those containers left cuBLAS to allocate its own
  // workspace (cudaMalloc outside the caching allocator, until pytorch PR
  // #83461, torch 1.13): nvidia-smi's reserve, not allocated. No TE.
  s.gemm_workspace_bytes = 0;
  return s;
}

// Megatron-LM's GPT path of 2022 to early 2023, as Korthikanti et al. 2022
// (arXiv:2205.05198; sequence parallelism and selective recomputation merged
// at NVIDIA/Megatron-LM cfd2e21607, 2022-04-28) and MegaScale's Megatron-LM
// baseline (Jiang et al. 2024, at 285068c810, 2023-01-11) ran it: the 2021
// preset except where that code differs from the sc21 code. The same stack
// as tests/data/stacks/megatron-lm-2022.yaml (a test holds them equal).
SoftwareStack MegatronLm2022() {
  SoftwareStack s = MegatronLm2021();
  s.name = "megatron-lm-2022";
  s.description = "Megatron-LM 2022-2023 (Korthikanti 2022, MegaScale baseline): the 2021 code with its later defaults";
  // LinearWithGradAccumulationAndAsyncCommunication.backward (cfd2e21607
  // megatron/mpu/layers.py; 285068c810 megatron/core/tensor_parallel/layers.py):
  // the column-parallel layers' dgrad all-reduce (async_tensor_model_parallel_allreduce,
  // on unless --no-async-tensor-model-parallel-allreduce, since 16c90445e7,
  // 2021-09) or, with --sequence-parallel, the re-gather of the saved local
  // input beside the dgrad GEMM and the dgrad reduce-scatter beside the wgrad
  // GEMM, each with async_op=True (CUDA_DEVICE_MAX_CONNECTIONS=1 required).
  s.tp_backward_overlap = true;
  // bf16: --bf16 forces accumulate_allreduce_grads_in_fp32
  // (megatron/arguments.py), the contiguous fp32 grad buffer, and
  // --gradient-accumulation-fusion (on by default since 83b1e42f30, 2022-02)
  // accumulates in the wgrad GEMM (fused_weight_gradient_mlp_cuda.
  // wgrad_gemm_accum_fp32): no separate pass; gradients all-reduced in fp32.
  s.grad_fold_passes = 0;
  s.comm_grad_bytes = 4;
  s.tied_grad_bytes = 4;   // the tied embedding's main_grad in that fp32 buffer
  // 285068c810 megatron/optimizer/optimizer.py allreduce_layernorm_grads:
  // with --sequence-parallel, every parameter marked sequence_parallel
  // (fused LayerNorm, RowParallelLinear bias), its main_grad from that fp32
  // buffer, coalesced, all-reduced over the tp group after the backward;
  // clip_grads.py all-reduces the norm over the model-parallel group (the
  // distributed optimizer's get_model_parallel_group(): every rank).
  s.sp_grad_bytes = 4;
  s.grad_norm_allreduce = true;
  return s;
}

// DeepSpeed ZeRO under Hugging Face models (deepspeedai/DeepSpeed
// edaa7221267243c7be7fb49c5d5f5c4fb97b4641, deepspeed/runtime/zero/config.py):
// reduce_bucket_size 5e8 (l.113), allgather_bucket_size 5e8 (l.132),
// stage3_prefetch_bucket_size 5e7 (l.215), stage3_max_live_parameters 1e9
// (l.238), contiguous_gradients True (l.102). bf16 mixed precision: bf16
// model params (2), fp32 gradient partition (4), fp32 master + Adam moments
// (12); gradients reduced in bf16. DeepSpeed's "AdamW" is FusedAdam: no
// temporaries. Kernels: eager Hugging Face modelling as pytorch-fsdp.
SoftwareStack DeepSpeedZero() {
  SoftwareStack s = PyTorchFsdp();
  s.name = "deepspeed-zero";
  s.framework = "deepspeed";
  s.description = "DeepSpeed ZeRO-1/2/3 (bf16, FusedAdam, 5e8-element buckets) with eager Hugging Face models";
  s.param_bytes_at_rest = 2;
  s.grad_bytes = 4;
  s.optimizer_bytes = 12;
  s.compute_param_bytes = 2;
  s.comm_grad_bytes = 2;
  s.comm_param_bytes = 2;
  s.separate_compute_copy = false;
  s.grad_bucket_elements = 5e8;
  s.flatten_grad_buckets = true;
  s.live_param_elements = 1e9;
  s.optimizer_temp_bytes = 0;
  s.optimizer_bytes_per_param = 34;   // FusedAdam: as megatron-core's step
  s.copy_passes_forward = 1;          // ZeRO-3 gathers into a flat buffer, then per-parameter views
  s.copy_passes_backward = 1;         // gradients copied into the contiguous bucket (contiguous_gradients)
  s.fsdp_pp_accumulate_unsharded = false;
  // ZeRO-2/3 are incompatible with DeepSpeed's pipeline engine (runtime/pipe/engine.py
  // asserts zero stage < 2); no CP in plain ZeRO (Ulysses is a separate module).
  s.supports_zero1 = true;
  s.supports_fsdp = true;
  s.supports_sharding_with_pp = false;
  s.supports_interleaved = false;
  // DeepSpeed-Ulysses (deepspeedai/DeepSpeed deepspeed/sequence/layer.py,
  // DistributedAttention): _SeqAllToAll re-splits q, k and v from sequence
  // to heads before the local attention and the output back after it, four
  // all-to-alls forward and four backward; it composes with ZeRO. No ring,
  // all-gather or hierarchical kind.
  s.supports_cp = true;
  s.supports_cp_p2p = false;
  s.supports_cp_a2a = true;
  s.supports_cp_allgather = false;
  s.supports_cp_a2a_p2p = false;
  return s;
}

// Megatron-DeepSpeed (deepspeedai/Megatron-DeepSpeed): Megatron-LM 2021
// model code (unfused attention unless --use-flash-attn-v2, apex kernels)
// under DeepSpeed's pipeline engine: gradients all-reduced after backward in
// buckets flattened into a copy (allreduce_bucket_size 5e8), ZeRO-1 at most
// with pp; 1F1B only.
SoftwareStack MegatronDeepSpeed() {
  SoftwareStack s = MegatronLm2021();
  s.name = "megatron-deepspeed";
  s.framework = "megatron-deepspeed";
  s.description = "Megatron-DeepSpeed: Megatron-LM 2021 model code under DeepSpeed's pipeline engine and ZeRO-1";
  s.grad_bucket_elements = 5e8;
  s.flatten_grad_buckets = true;
  s.overlap_grad_reduce = false;
  // The pipeline engine reduces after the last micro-batch (ReduceGrads,
  // runtime/pipe/schedule.py TrainSchedule) in buckets of
  // MEMORY_OPT_ALLREDUCE_SIZE = 5e8 elements (runtime/constants.py), each
  // cast to communication_data_type before the all-reduce and back after it
  // (runtime/engine.py allreduce_bucket). That type defaults to fp16 under
  // fp16 and to bf16 under bf16 (communication_data_type(), engine.py
  // l.712-721 at deepspeedai/DeepSpeed 56c52238, the bf16 pipeline code BLOOM
  // ran; v0.5.0 of MT-NLG's time all-reduces the fp16 .grad unless
  // allreduce_always_fp32): 2 bytes on the wire either way.
  s.comm_grad_bytes = 2;
  // ReduceTiedGrads (runtime/pipe/engine.py _exec_reduce_tied_grads ->
  // PipelineModule.allreduce_tied_weight_gradients) all-reduces a tied
  // weight's gradient over its tie group, the stages that hold it: under
  // bf16 the BF16_Optimizer's fp32 _hp_grad (4 B), under fp16 the fp16
  // .grad (megatron-deepspeed-fp16.yaml: 2 B).
  s.tied_grad_bytes = 4;
  // Its sequence-parallel and clipping reductions were not read: none priced.
  s.sp_grad_bytes = 0;
  s.grad_norm_allreduce = false;
  // bf16 runs reduce through _bf16_reduce_grads (runtime/pipe/engine.py
  // l.250-267 at 56c52238): buffered_allreduce_fallback over
  // BF16_Optimizer.get_grads_for_reduction(), its whole flat fp32 gradient,
  // then each rank updates its shard and all-gathers the bf16 weights
  // (bf16_optimizer.py step: all_gather_dp_groups). ZeRO-1 by all-reduce.
  s.zero1_grad_allreduce = true;
  // Megatron-DeepSpeed runs on PyTorch 2.x (ASSUMPTION: its active years,
  // 2023-2024): the two cuBLAS workspaces from the allocator (above). No TE.
  s.gemm_workspace_bytes = kTorchGemmWorkspaces;
  // DeepSpeed's pipeline engine keeps each micro-batch's last-stage output in
  // pipe_buffers['outputs'][buffer]: _exec_backward_pass returns on the last
  // stage before the line that clears it (deepspeed/runtime/pipe/engine.py;
  // the copy Sailor ran: eth-easl/sailor cf2c8e3, deepspeed/pipe_engine.py),
  // and the last stage cycles max(2, min(stages − stage_id, m)) = 2 buffers
  // (deepspeedai/DeepSpeed 83fd8f87, runtime/pipe/schedule.py,
  // TrainSchedule.num_pipe_buffers): while micro-batch k computes its loss the
  // logits of k − 1 are still referenced.
  s.held_last_stage_outputs = 1;
  // The pipeline engine partitions what it sends over the tp group
  // (deepspeedai/DeepSpeed 83fd8f87, runtime/config.py get_pipeline_config:
  // pipe_partitioned and grad_partitioned default True; runtime/pipe/engine.py:
  // is_pipe_partitioned = is_model_parallel and pipe_partitioned): each rank
  // sends its 1/tp as (part.to_meta(), part.data()), two messages, and the
  // receiver rebuilds the tensor with PartitionedTensor.full(), an all_gather
  // over the slice (tp) group. Gradients likewise.
  s.pp_partition_over_tp = true;
  s.pp_meta_messages = 1;
  // Its sends are not batched (deepspeedai/DeepSpeed 56c52238,
  // runtime/pipe/p2p.py send / recv: torch.distributed.send / recv, or on
  // torch < 1.8 and at v0.5.0 a broadcast on a two-rank group; both wait on
  // the compute stream). TrainSchedule.steps (runtime/pipe/schedule.py)
  // puts RecvActivation, SendGrad before each ForwardPass and
  // SendActivation, RecvGrad before each BackwardPass: four one-way
  // transfers in turn per micro-batch, where Megatron's 1F1B pairs a send
  // with the opposite receive twice. (A rendezvous simulation of both
  // schedules, m 240, p 35, finds 3.7 and 2.0 transfer times per pipeline
  // slot; docs/DECISIONS.md.)
  s.pp_transfers_per_micro_batch = 4;
  // The partitioned tensor is all-gathered over tp three times per
  // micro-batch (runtime/pipe/engine.py at 56c52238, is_grad_partitioned =
  // is_model_parallel since e2fdd254 of 2021-09, v0.5.4): the input on
  // receipt (_exec_forward_pass, part_input.full()), and in
  // _exec_backward_pass both the stage's own output, whose data the forward
  // freed (part_output.full()), and the received gradient (part_grad.full()).
  s.pp_tp_gathers_per_micro_batch = 3;
  // The host does not wait for the GPU in the engine's p2p (no .item() after
  // the first exchange's shapes: first_output_send, pipe_recv_buf), but the
  // first and last stages' LoadMicroBatch does: Megatron-DeepSpeed's
  // get_batch_pipe -> mpu.broadcast_data copies the sizes to the CPU
  // (bigscience-workshop/Megatron-DeepSpeed 131bd43e, pretrain_gpt.py l.136,
  // megatron/mpu/data.py l.54: sizes_cuda.cpu()). What that exposes is the
  // host's per-micro-batch time, which no source measures for this engine:
  // host_per_micro_batch_s stays 0, so the flag stays false (true would also
  // add nanotron's shape messages at tp = 1, which DeepSpeed sends only once).
  s.pp_host_synchronous = false;
  // bf16 runs go through DeepSpeed's BF16_Optimizer (BLOOM's tr11 used the
  // olruwase/bf16-updates branch, merged as deepspeedai/DeepSpeed 56c52238,
  // "bf16+pipeline parallelism", 2022-04-19, v0.6.2). After every
  // micro-batch's backward the pipeline engine calls
  // optimizer.update_hp_grads(clear_lp_grads=False) (runtime/pipe/engine.py
  // _exec_backward_pass; the last stage via engine.backward ->
  // optimizer.backward), a Python loop over the parameter tensors running
  // hp_grad.add_(lp.grad.to(fp32)): cast r2 w4, add r4 r4 w4 = 18 B per
  // parameter, eager; clear_lp_grads sets .grad to None before the next
  // backward (no traffic). Unchanged at 38327e07 (2025). 18 B = 4.5 passes of
  // copy_bytes' 4 B, times the eager slowdown measured above (as nanotron's
  // fp32 accumulator). bf16 only: the fp16 (FP16_Optimizer) and fp32 paths
  // keep gradients in .grad until the step (tests/data/stacks/
  // sailor-megatron-deepspeed-fp32.yaml trains in fp32: StackForPrecision
  // drops the fold).
  s.grad_fold_passes = 18.0 / 4.0 * kEagerMemoryBoundMeasured;
  s.supports_zero1 = true;
  s.supports_fsdp = false;
  s.supports_interleaved = false;
  return s;
}

// nanotron (huggingface/nanotron 2411b022a75fb7f7561a1bb4166706da5e1b76de,
// src/nanotron/config/parallelism_config.py __post_init__): pp_engine default
// AllForwardAllBackward (GPipe memory), tp_mode ALL_REDUCE (no SP),
// tp_linear_async_communication False (blocking TP); optimizer zero_stage 0
// or 1 (helpers.py); eager PyTorch with flash-attn 2, flash-attn's Triton
// RMSNorm and rotary (kernels below, from its model code); bf16 params with
// fp32 master and fp32 gradient accumulation (accumulate_grad_in_fp32).
SoftwareStack Nanotron() {
  SoftwareStack s = MegatronCore();
  s.name = "nanotron";
  s.framework = "nanotron";
  // Gradient sync as a756526 src/nanotron/trainer.py training_step runs it
  // after the pipeline pass. ZeRO-0 over dp > 1: torch DDP whose comm hook
  // (src/nanotron/optim/gradient_accumulator.py get_fp32_accum_hook) adds
  // each bucket's bf16 gradients into the fp32 accumulator and all-reduces
  // those fp32 buffers asynchronously during the last micro-batch's backward
  // (overlap_grad_reduce, as megatron-core; 4 B, comm_grad_bytes). ZeRO-1 has
  // no DDP (trainer.py _init_model: make_ddp = dp > 1 and not
  // (accumulate_grad_in_fp32 and zero_stage > 0)): sync_gradients_across_dp
  // with reduce_scatter=False (data_parallel/utils.py ->
  // FP32GradientAccumulator.sync_gradients_across_dp) all-reduces the whole
  // contiguous fp32 gradient buffer over dp after the last backward, blocking
  // the compute stream (dist.all_reduce, async_op False), before clipping.
  s.zero1_grad_allreduce = true;
  s.zero1_grad_reduce_after_backward = true;
  // sync_tied_weights_gradients (src/nanotron/parallel/tied_parameters.py):
  // with tp_mode REDUCE_SCATTER every parameter not sharded over tp (the
  // RMSNorm weights) is tied across the tp group with ReduceOp.SUM
  // (trainer.py mark_unsharded_params_as_tied_across_tp), and their fp32
  // accumulator gradients are all-reduced over tp, coalesced, once per step
  // after the dp sync: 4 B.
  s.sp_grad_bytes = 4;
  // clip_grad_norm (src/nanotron/optim/clip_grads.py) all-reduces the squared
  // norm over mp_pg (tp x pp) whatever the ZeRO stage and never reads it on
  // the host before the step's end; the stack's grad_norm_allreduce puts it
  // over every rank for a sharded optimizer, so it stays off (one fp32: a
  // latency, tens of microseconds).
  s.grad_norm_allreduce = false;
  s.fp8_param_gather = false;   // bf16 only (its config has no FP8 weights)
  s.fp4_param_gather = false;
  s.saves_quantized_inputs = false;   // no Transformer Engine modules
  s.quantized_weight_cache = false;
  // No Transformer Engine: PyTorch's two cuBLAS workspaces only (above; the
  // sweep's conda environment "2-1-cu121", by its name torch 2.1 with CUDA 12.1: 32 MiB on H100).
  s.gemm_workspace_bytes = kTorchGemmWorkspaces;
  // nanotron's GLUActivation computes act(gate) * up unfused (models/llama.py).
  s.swiglu_saves_input_only = false;
  // Multi-head attention: the saved query keeps the packed q,k,v copy
  // (a756526 src/nanotron/models/llama.py; memory.cc PackedQkvKeptBytes).
  s.query_keeps_packed_qkv = true;
  // No allocator slack on the activations: at tp = 1 with pp > 1 (stage 0
  // holds no loss and no TP buffers) the measured reserved peak grows with
  // the micro-batch by a median 1.074x the activations counted without
  // the packed q,k,v copy (29 run groups of the sweep,
  // tests/data/throughput_hf_ultrascale_nanotron_h100.csv, slope over mbs at
  // fixed layout), and that copy alone accounts for 1.083x (1B) to 1.107x
  // (3B): ≈ 1.0x the activations now counted, none left for a 5% slack.
  // (At tp > 1 the pool also holds freed full-sequence collective inputs the
  // model does not count: docs/DECISIONS.md "nanotron's memory as the sweep
  // measured it".)
  s.fragmentation = 1.0;
  s.description = "nanotron: eager bf16 with flash-attn 2, blocking TP, AFAB/1F1B pipeline, ZeRO-0/1";
  s.overlap_param_gather = false;
  s.grad_bucket_elements = 0;
  s.supports_fsdp = false;
  s.supports_sharding_with_pp = false;
  s.supports_interleaved = false;
  s.dp_overlap_per_chunk = false;   // no interleaved schedule
  s.pp_overlap_p2p = false;         // likewise
  s.supports_cp = false;
  s.supports_cp_a2a = false;
  s.supports_cp_allgather = false;
  s.supports_partial_recompute = false;   // recompute_layer: every layer or none
  s.tp_overlap_gemm_slowdown = 0;   // tp_linear_async_communication off, no userbuffers
  s.tp_backward_overlap = false;    // nanotron's own TP linears (not examined for this; as before)
  // build_model (a756526 src/nanotron/models/base.py) places pipeline blocks
  // by get_block_compute_costs (models/llama.py), the LM head one of them.
  s.pp_balance_by_compute = true;
  // a756526 base.py line 232 (67c5ebb6 line 234, main 2411b022 line 231):
  // `if cumulative_cost > thresholds[target_pp_rank_idx]`
  // (strict; the Ultra-Scale Playbook's post-fix pipeline runs closed at >=:
  // tests/cost_model/nanotron_sweep.h sets it per run).
  s.pp_balance_close_at_threshold = false;
  // Kernels as the sweep's nanotron runs them (huggingface/nanotron
  // a756526bab529c733a4afc909047bca2fb657330, src/nanotron/models/llama.py,
  // training path of CausalSelfAttention.forward and LlamaDecoderLayer).
  // Where an op is eager PyTorch its derived bytes are scaled by the eager
  // slowdown measured on one H100 (kEagerMemoryBoundMeasured, the
  // pytorch-fsdp trace above); flash-attn's Triton kernels are not eager.
  // RMSNorm: TritonRMSNorm (src/nanotron/nn/layer_norm.py) calls flash-attn's
  // Triton layer_norm_fn(is_rms_norm=True), residual not fused: r2w2.
  s.norm_bytes_per_element = 4;
  // Rotary: flash_attn.layers.rotary.RotaryEmbedding(q, kv=kv), in place on q
  // and k with flash-attn's Triton apply_rotary: r2w2 per q/k element. Its
  // eager layout copies: qkv.view(..).permute(2, 1, 0, 3, 4).contiguous()
  // (the multi-head path; the GQA path's three transpose(0, 1).contiguous()
  // move the same bytes), torch.cat([k, v]) and .permute(1, 2, 0, 3, 4)
  // .contiguous() of the kv pair: r2w2 over q+k+v, k+v and k+v = 4·(a + 6g)
  // bytes per token for q width a and k width g, 14 per q/k element with
  // multi-head attention (a = g; fewer with GQA, not separated here).
  s.rope_bytes_per_element = 4 + 14 * kEagerMemoryBoundMeasured;
  // SwiGLU: GLUActivation.forward splits the gate_up output and runs
  // nn.functional.silu(gate) (r2w2) * up (r4w2) eagerly: 10 B per f element.
  s.act_bytes_per_element = 10 * kEagerMemoryBoundMeasured;
  // Residuals: eager hidden_states + residual, r4w2.
  s.residual_bytes_per_element = 6 * kEagerMemoryBoundMeasured;
  // Launches per layer forward: norm 2, GEMMs 4 (qkv, o, gate_up, down), qkv
  // layout copies 3, rotary 2, CoreAttention's cu_seqlens (zeros 2, sum 2,
  // cumsum 2) and flash_attn_varlen_func 1, silu and mul 2, residual adds 2 =
  // 22. Gaps as the eager trace measured them.
  s.kernels_per_layer_forward = 22;
  s.kernel_gap_s = kEagerKernelGapMeasured;
  // Loss: LlamaModel's cast_to_fp32 block (x.float(), r2w4), then
  // src/nanotron/parallel/tensor_parallel/functional.py _ShardedCrossEntropy
  // in fp32: max r4, logits − max r4w4, exp in place r4w4, sum r4, softmax
  // div_ r4w4 = 38 B forward; backward grad.mul_(grad_output) r4w4 and the
  // cast's backward to bf16 r4w2 = 14 B; 52 B per vocab element, eager.
  // Vocab-sized eager kernels are not the layer-sized ones the eager factor
  // was fitted to: in the same H100 trace (mbs2_trace.json.gz) the loss
  // kernels (fp32 casts, log_softmax forward and backward, the zero-filled
  // gradient, the cast back) took a median 18.39 ms per step over
  // 2·4096·128256 elements, 52.6 B per element at the profile's 3.005 TB/s,
  // 1.096x the 48 B derived for them (pytorch-fsdp above).
  constexpr double kEagerLossMeasured = 1.0956683639042868;
  s.loss_bytes_per_element = 52 * kEagerLossMeasured;
  // Held at once: the fp32 cast (still referenced by the caller) and the
  // shifted logits that become the saved softmax in place: 8 B per element
  // (the bf16 logits are freed after the cast, whose backward saves nothing).
  // The reserved pool keeps the bf16 logits' block too: the caching allocator
  // (pytorch/pytorch c10/cuda/CUDACachingAllocator.cpp: a request larger than
  // every cached free block gets a new segment; blocks never merge across
  // segments) gave them a segment of their own (far larger than any layer
  // tensor freed before), and the fp32 tensors that follow are twice as large,
  // so that freed segment serves none of them (only the bf16 gradient of the
  // cast's backward, later): 2 + 4 + 4 = 10 B per element reserved.
  s.logits_bytes_per_element = 10;
  // Gradients: FP32GradientAccumulator (src/nanotron/optim/
  // gradient_accumulator.py) adds every bf16 weight gradient into its fp32
  // buffer after each micro-batch's backward (fp32_grad.add_(half_param.grad),
  // or in the DDP hook on the sync step): r4 r2 w4 = 10 B per parameter,
  // eager, 2.5 passes of copy_bytes' 4 B.
  s.copy_passes_forward = 0;
  s.grad_fold_passes = 10.0 / 4.0 * kEagerMemoryBoundMeasured;
  // ZeRO-0 over dp > 1 wraps the model in torch DistributedDataParallel
  // (a756526 src/nanotron/trainer.py _init_model: make_ddp = dp > 1 and not
  // (accumulate_grad_in_fp32 and zero_stage > 0); bucket_cap_mb 25), whose
  // Reducer allocates every bucket's flat gradient tensor in the parameter
  // dtype when it is built and keeps it (pytorch/pytorch torch/csrc/
  // distributed/c10d/reducer.cpp, Reducer::initialize_buckets: bf16, 2 B per
  // parameter) beside the fp32 accumulator; the bf16 .grad itself is dropped
  // after each backward (gradient_accumulator.py _accumulate_grad). ZeRO-1
  // runs without DDP.
  s.ddp_bucket_bytes = 2;
  // ZeRO-1 (no DDP) all-gathers the updated bf16 shards after every step
  // (src/nanotron/optim/zero.py ZeroDistributedOptimizer._all_gather_params
  // -> src/nanotron/distributed.py all_gather_coalesced): the input shard and
  // each rank's output list are flattened (torch._utils._flatten_dense_tensors:
  // a full bf16 copy of the stage's weights), and torch.distributed.all_gather
  // with a list output stages the result in one more flat tensor
  // (pytorch/pytorch torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp
  // allgather: outputFlattened = newLikeFlat(outputTensors_)): 2 + 2 bytes
  // per local parameter.
  s.zero1_gather_flat_bytes = 4;
  // tp_mode REDUCE_SCATTER with tp_linear_async_communication (the sweep's
  // setting) and tp_recompute_allgather (default True, a756526 src/nanotron/
  // config/parallelism_config.py) all-gather into nanotron's MemoryBuffer, a
  // singleton that keeps one tensor per name at the largest size asked for
  // (src/nanotron/parallel/utils.py MemoryBuffer.get): "allgather", every
  // column linear's sequence-parallel input in forward and again in backward
  // (src/nanotron/parallel/tensor_parallel/functional.py
  // _ColumnLinearAsyncCommunication), and "allgather2", every row linear's
  // output gradient in backward (_RowLinearAsyncCommunication.backward):
  // both micro-batch tokens × hidden in bf16, never freed.
  s.tp_gather_buffers = 2;
  // The row-parallel linears' forward outputs before their reduce-scatter:
  // a756526 src/nanotron/parallel/tensor_parallel/functional.py
  // _RowLinearAsyncCommunication.forward, `out = F.linear(tensor, weight,
  // bias)` (sequence × micro-batch × hidden, bf16, the partial sum of every
  // TP rank) then differentiable_reduce_scatter_sum(out)
  // (distributed_differentiable_primitives.py DifferentiableReduceScatterSum:
  // dist.reduce_scatter_tensor into a 1/tp shard); `out` is dropped as the
  // function returns. Two per decoder layer (models/llama.py: o_proj in
  // CausalSelfAttention.forward, down_proj in MLP.forward). PyTorch 2.1's
  // ProcessGroupNCCL::collective records every input on the NCCL stream
  // (recordStream unless TORCH_NCCL_AVOID_RECORD_STREAMS, off by default),
  // and CUDACachingAllocator::free then keeps the block out of the free
  // lists until an event recorded on that stream completes (insert_events;
  // process_events at each malloc). nanotron sets CUDA_DEVICE_MAX_CONNECTIONS
  // 1 and nothing in a pp = 1 step waits on the GPU before the step's end, so
  // a GPU-bound run's host issues the forward ahead of the GPU and every
  // layer's pair is still pending when the forward ends (ASSUMPTION: the
  // host leads by the whole forward; docs/DECISIONS.md "nanotron's pending
  // reduce-scatter inputs").
  s.tp_pending_collective_inputs = 2;
  // Optimizer step: torch.optim.AdamW(fused=True) on the fp32 master
  // (config_tiny_llama_bench.yaml torch_adam_is_fused; read p, g, m, v, write
  // p, m, v = 28 B) and the accumulator's eager half_param.copy_(fp32) (r4w2,
  // 6 B; FP32GradientAccumulator.step), over the parameters this rank
  // updates (its ZeRO-1 shard: the accumulator is built on the optimizer's
  // sliced parameters, helpers.py init_optimizer_and_grad_accumulator).
  s.optimizer_bytes_per_param = 28 + 6 * kEagerMemoryBoundMeasured;
  // Over the whole local fp32 gradient whatever the ZeRO stage (with ZeRO-1
  // it was all-reduced in full): clip_grad_norm (clip_grad 1.0;
  // src/nanotron/optim/clip_grads.py clips "all fp32 grads" of the
  // accumulator: vector_norm r4, mul_ r4w4, eager, 12 B) and zero_grad's
  // _contiguous_fp32_grad_buffer.zero_() (w4).
  s.unsharded_step_bytes_per_param = 4 + 12 * kEagerMemoryBoundMeasured;
  // huggingface/nanotron 3024b465f78a0afb67596158b837d0a9224064ba,
  // src/nanotron/parallel/pipeline_parallel/p2p.py: every tensor goes as a
  // blocking dist.send of 7 int64 metadata, a blocking send of its shape and
  // stride, then the data; the receiver unpacks each metadata tensor into
  // Python ints (a device-to-host sync) before it can allocate and post the
  // next receive. Two small messages before every tensor, host-synchronous.
  s.pp_host_synchronous = true;
  s.host_per_micro_batch_s = 0;   // ASSUMPTION: no measurement (docs/DECISIONS.md)
  // The sender's host waits too: _send_meta (a756526 p2p.py l.220, l.236)
  // copies each metadata tensor from pageable CPU memory with copy_, which
  // PyTorch runs as cudaMemcpyAsync + cudaStreamSynchronize (pytorch/pytorch
  // aten/src/ATen/native/cuda/Copy.cu copy_kernel_cuda, non_blocking false:
  // memcpy_and_sync), and the assert on self.first_metadata[0] (l.229) reads
  // the GPU after the first blocking send: every send drains the sender's
  // queue and waits until that message has left (a meeting with the
  // receiver wherever the transport does not buffer it).
  // Order (huggingface/nanotron a756526bab529c733a4afc909047bca2fb657330,
  // src/nanotron/parallel/pipeline_parallel/): OneForwardOneBackwardPipelineEngine
  // (engine.py l.276-295) runs forward then backward per micro-batch; the
  // forward's first PipelineBlock (block.py l.119-130) receives the
  // activation through PipelineTrainBatchState.run_communication (state.py
  // l.146-160), which then sends the previous backward's input gradient; the
  // backward's SendTensorToPipelineBuffer.backward (functional.py l.31-44)
  // sends the activation and then receives the output gradient (state.py
  // l.137-172). RecvActivation, SendGrad, forward, SendActivation, RecvGrad,
  // backward: four one-way transfers in turn per micro-batch, each host-
  // blocking, as DeepSpeed's TrainSchedule (megatron-deepspeed above).
  s.pp_transfers_per_micro_batch = 4;
  // Two small messages before every tensor (p2p.py _send_meta: 7 int64, then
  // shape + stride), and a decoder layer's PipelineBlock crosses a boundary
  // with two tensors (models/llama.py l.841-842: module_output_keys
  // {"hidden_states", "sequence_mask"}): the bool mask of mbs x sequence
  // bytes goes with every activation, its own two metadata messages first.
  // Per micro-batch: activations 2 + 2 + 1 small messages, gradients 2:
  // (5 + 2) / 2 = 3.5 per transfer. The mask's data (at most 32 KiB in the
  // sweep, under 1 us at 400 Gb/s) is priced as one more small message.
  s.pp_meta_messages = 3.5;
  // Host: nanotron's eager Python per decoder layer (its PipelineBlock and
  // TensorPointer dispatch, the TP linears' autograd functions, the
  // FP32GradientAccumulator's per-parameter backward hooks) costs far more CPU
  // than plain eager PyTorch's ~10 µs per op. CALIBRATED: 52 µs per counted
  // kernel (66 per layer per micro-batch, 3.4 ms) minimises the mean |ln(
  // predicted/measured)| over the sweep's 43 one-node runs with tp 2-8
  // (tests/data/throughput_hf_ultrascale_nanotron_h100.csv), where the GPU
  // work per layer falls below it at micro-batch 1-2 and the measured step
  // stays at ~4.5 ms per layer per micro-batch whatever tp and model size.
  // Held out: the 2-node runs and every other row (docs/DECISIONS.md
  // "nanotron's host time per layer", docs/accuracy.md).
  s.host_per_kernel_s = 52e-6;
  s.attention_by_arch = {{"volta", kFa2Volta}, {"ampere", kFa2Ampere}, {"hopper", kFa2Hopper},
                         {"blackwell", kFa2Hopper}};
  return s;
}

}  // namespace

bool SoftwareStack::SupportsCp(CpComm kind) const {
  if (!supports_cp) return false;
  switch (kind) {
    case CpComm::kP2p: return supports_cp_p2p;
    case CpComm::kA2a: return supports_cp_a2a;
    case CpComm::kAllGather: return supports_cp_allgather;
    case CpComm::kA2aP2p: return supports_cp_a2a_p2p;
  }
  return false;
}

const AttentionKernel& SoftwareStack::AttentionFor(const GpuProfile& gpu) const {
  for (const auto& [arch, kernel] : attention_by_arch) {
    if (arch == gpu.architecture) return kernel;
  }
  // Unknown architecture: the newest kernel the stack has (last entry).
  PARASIM_CHECK(!attention_by_arch.empty(), "stack without attention kernels: ", name);
  return attention_by_arch.back().second;
}

std::vector<std::string> SoftwareStackNames() {
  return {"deepspeed-zero", "megatron-core",       "megatron-deepspeed", "megatron-lm-2021", "megatron-lm-2022",
          "nanotron",       "pytorch-fsdp",        "pytorch-fsdp2",      "pytorch-fsdp2-eager", "torchtitan"};
}

const std::vector<std::string>& SoftwareStackFrameworks() {
  static const std::vector<std::string> names = {"megatron-lm", "torchtitan", "pytorch", "deepspeed",
                                                 "megatron-deepspeed", "nanotron"};
  return names;
}

std::optional<SoftwareStack> FindSoftwareStackPreset(const std::string& name) {
  if (name == "pytorch-fsdp" || name.empty()) return PyTorchFsdp();
  if (name == "pytorch-fsdp2") return PyTorchFsdp2();
  if (name == "pytorch-fsdp2-eager") return PyTorchFsdp2Eager();
  if (name == "torchtitan") return Torchtitan();
  if (name == "deepspeed-zero" || name == "deepspeed") return DeepSpeedZero();
  if (name == "megatron-deepspeed") return MegatronDeepSpeed();
  if (name == "nanotron") return Nanotron();
  if (name == "megatron-core" || name == "megatron") return MegatronCore();
  if (name == "megatron-lm-2021") return MegatronLm2021();
  if (name == "megatron-lm-2022") return MegatronLm2022();
  return std::nullopt;
}

SoftwareStack LoadSoftwareStack(const std::string& name) {
  if (std::optional<SoftwareStack> preset = FindSoftwareStackPreset(name)) return *std::move(preset);
  if (IsSoftwareStackPath(name)) return LoadSoftwareStackFile(name);
  std::string known;
  for (const std::string& n : SoftwareStackNames()) known += (known.empty() ? "" : ", ") + n;
  throw InvalidInput("", "stack",
              StrCat("unknown software stack '", name, "' (known: ", known,
                     "; or a stack YAML file, e.g. from `parasim profiles stack pytorch-fsdp`)"));
}

}  // namespace parasim
