#include "cost_model/stack_field_registry.h"

#include <cmath>
#include <iterator>

namespace parasim {
namespace {

template <class S>
FieldEntry<S> Real(const char* key, double S::*m, double min, const char* meaning, double max = kNoMax) {
  return FieldEntry<S>{key, "", FieldUnit::kRatio, FieldRange{min, max, false, false, false}, false, meaning,
                       std::nullopt, [m](const S& s) { return s.*m; }, [m](S& s, double v) { s.*m = v; }};
}

constexpr double kMaxCount = 1'000'000;  // keeps an int field an int

template <class S>
FieldEntry<S> Count(const char* key, int S::*m, const char* meaning, double min = 1) {
  return FieldEntry<S>{key, "", FieldUnit::kCount, FieldRange{min, kMaxCount, false, false, true}, false, meaning,
                       std::nullopt, [m](const S& s) { return double(s.*m); },
                       [m](S& s, double v) { s.*m = static_cast<int>(std::llround(v)); }};
}

template <class S>
FieldEntry<S> Flag(const char* key, bool S::*m, const char* meaning) {
  return FieldEntry<S>{key, "", FieldUnit::kFlag, FieldRange{0, 1, false, false, true}, false, meaning,
                       std::nullopt, [m](const S& s) { return s.*m ? 1.0 : 0.0; },
                       [m](S& s, double v) { s.*m = v != 0; }};
}

}  // namespace

const std::vector<StackField>& StackFields() {
  using St = SoftwareStack;
  static const std::vector<StackField> fields = {
      Real("param_bytes_at_rest", &St::param_bytes_at_rest, 0, "bytes/param: the copy the optimizer updates"),
      Real("grad_bytes", &St::grad_bytes, 0, "bytes/param: the gradient the optimizer reads"),
      Real("optimizer_bytes", &St::optimizer_bytes, 0, "bytes/param: optimizer state beside it"),
      Real("compute_param_bytes", &St::compute_param_bytes, 0, "bytes/param: working / gathered copy"),
      Real("comm_grad_bytes", &St::comm_grad_bytes, 0, "bytes per gradient element on the wire"),
      Real("comm_param_bytes", &St::comm_param_bytes, 0, "bytes per parameter element gathered"),
      Real("tied_grad_bytes", &St::tied_grad_bytes, 0, "bytes/element: tied embedding grad, first-last stage"),
      Real("sp_grad_bytes", &St::sp_grad_bytes, 0, "bytes/element: tp-replicated grads (norms, biases), tp all-reduce"),
      Real("logits_bytes_per_element", &St::logits_bytes_per_element, 0, "kept for the loss backward"),
      Real("loss_bytes_per_element", &St::loss_bytes_per_element, 0, "HBM traffic of loss fwd + bwd"),
      Real("norm_bytes_per_element", &St::norm_bytes_per_element, 0, "HBM bytes per element, forward"),
      Real("rope_bytes_per_element", &St::rope_bytes_per_element, 0, "HBM bytes per element, forward"),
      Real("act_bytes_per_element", &St::act_bytes_per_element, 0, "HBM bytes per element, forward"),
      Real("residual_bytes_per_element", &St::residual_bytes_per_element, 0, "HBM bytes per element, forward"),
      Count("kernels_per_layer_forward", &St::kernels_per_layer_forward, "launches (backward: 2x)"),
      Real("cp_merge_bytes_fixed", &St::cp_merge_bytes_fixed, 0, "ring attention merge, forward"),
      Real("cp_merge_bytes_per_step", &St::cp_merge_bytes_per_step, 0, "per later ring step, forward"),
      Real("cp_grad_bytes_per_step", &St::cp_grad_bytes_per_step, 0, "per ring step, backward"),
      Real("cp_grad_bytes_fixed", &St::cp_grad_bytes_fixed, 0, "ring attention, backward"),
      Count("cp_kernels_per_step", &St::cp_kernels_per_step, "launches per ring step"),
      Real("cp_kv_pack_bytes_per_step", &St::cp_kv_pack_bytes_per_step, 0, "per K/V element per ring step, forward"),
      Real("cp_dkv_pack_bytes_per_step", &St::cp_dkv_pack_bytes_per_step, 0, "per K/V element per ring step, backward"),
      Real("kernel_gap_s", &St::kernel_gap_s, 0, "GPU idle between dependent kernels"),
      Real("host_per_kernel_s", &St::host_per_kernel_s, 0, "CPU dispatch per kernel"),
      Real("host_per_tp_linear_s", &St::host_per_tp_linear_s, 0, "CPU per tensor-parallel linear op"),
      Real("copy_passes_forward", &St::copy_passes_forward, 0, "framework copies over bf16 weights"),
      Real("copy_passes_backward", &St::copy_passes_backward, 0, "framework copies over bf16 grads"),
      Real("grad_fold_passes", &St::grad_fold_passes, 0, "bf16 grads folded into fp32, per micro-batch"),
      Real("optimizer_bytes_per_param", &St::optimizer_bytes_per_param, 0, "HBM traffic of the step"),
      Real("unsharded_step_bytes_per_param", &St::unsharded_step_bytes_per_param, 0,
           "HBM traffic of the step over the whole local gradient, not the dp shard"),
      // 0 = the limit where collectives take no SMs (the interference tests' baseline).
      Count("nccl_channels", &St::nccl_channels, "SMs an overlapping NCCL kernel takes", 0),
      Real("nccl_memory_passes", &St::nccl_memory_passes, 0, "HBM bytes per NCCL bus byte"),
      Flag("separate_compute_copy", &St::separate_compute_copy, "bf16 copy beside fp32 params"),
      Real("reserve_bytes", &St::reserve_bytes, 0, "NCCL buffers, memory outside the caching allocator"),
      Real("cuda_context_bytes", &St::cuda_context_bytes, 0, "CUDA context (nvidia-smi, not allocated)"),
      Real("gemm_workspace_bytes", &St::gemm_workspace_bytes, 0,
           "cuBLAS/cuBLASLt workspaces from the caching allocator (persistent, allocated)"),
      Real("fragmentation", &St::fragmentation, 1, "allocator factor on dynamic memory (>= 1)"),
      Real("activation_bytes", &St::activation_bytes, 1, "saved-activation dtype bytes (2 bf16, 4 fp32)", 8.0),
      Real("optimizer_temp_bytes", &St::optimizer_temp_bytes, 0, "bytes/param: optimizer-step temporaries"),
      Real("grad_bucket_elements", &St::grad_bucket_elements, 0, "gradient bucket; 0 = one layer"),
      Flag("flatten_grad_buckets", &St::flatten_grad_buckets, "ddp/zero1: flat bucket copy to reduce"),
      Real("ddp_bucket_bytes", &St::ddp_bucket_bytes, 0, "ddp, dp > 1: bytes/param of the DDP wrapper's buckets"),
      Real("zero1_gather_flat_bytes", &St::zero1_gather_flat_bytes, 0,
           "zero1, dp > 1: bytes/param of the post-step all-gather's flat buffers (reserved pool)"),
      Real("tp_gather_buffers", &St::tp_gather_buffers, 0,
           "tp > 1 with sp: kept tokens x hidden all-gather buffers (nanotron 2)"),
      Real("tp_pending_collective_inputs", &St::tp_pending_collective_inputs, 0,
           "tp > 1 with sp, pp = 1: tokens x hidden collective inputs per layer pending at forward end (nanotron 2)"),
      Real("live_param_elements", &St::live_param_elements, 0, "zero3: cap on gathered params; 0 none"),
      Real("loss_chunk_tokens", &St::loss_chunk_tokens, 0, "chunked loss: tokens of logits at once"),
      Real("held_last_stage_outputs", &St::held_last_stage_outputs, 0,
           "earlier micro-batches' logits the pipe engine still holds"),
      Real("vocab_parallel_logits_bytes_per_element", &St::vocab_parallel_logits_bytes_per_element, 0,
           "tp > 1 vocab-parallel loss, per local logit element; 0 = logits_bytes_per_element"),
      Flag("vocab_parallel_peak_excludes_logits", &St::vocab_parallel_peak_excludes_logits,
           "that peak is after the logits are dropped (pipe-held logits add)"),
      Flag("tp_saves_gathered_head_input", &St::tp_saves_gathered_head_input,
           "tp + sp: the output layer saves its all-gathered input (memory)"),
      Real("sac_matmul_recompute_fraction", &St::sac_matmul_recompute_fraction, 0,
           "selective = op-level SAC: matmuls recomputed; 0 = attention-only", 1.0),
      Real("straggler_sigma", &St::straggler_sigma, 0, "GPU-to-GPU compute speed spread (slowest of N)", 1.0),
      Flag("supports_zero1", &St::supports_zero1, "planner: optimizer-state sharding"),
      Flag("supports_fsdp", &St::supports_fsdp, "planner: zero2 / zero3 / hsdp"),
      Flag("supports_sharding_with_pp", &St::supports_sharding_with_pp, "planner: zero2/3 with pp > 1"),
      Flag("supports_cp", &St::supports_cp, "planner: context parallelism"),
      Flag("supports_cp_p2p", &St::supports_cp_p2p, "planner: cp_comm=p2p (K/V ring)"),
      Flag("supports_cp_a2a", &St::supports_cp_a2a, "planner: cp_comm=a2a (Ulysses all-to-all)"),
      Flag("supports_cp_allgather", &St::supports_cp_allgather, "planner: cp_comm=allgather (K/V all-gather)"),
      Flag("supports_cp_a2a_p2p", &St::supports_cp_a2a_p2p,
           "planner: cp_comm=a2a+p2p (all-to-all inside cp_a2a_size ranks, K/V ring across)"),
      Flag("supports_interleaved", &St::supports_interleaved, "planner: interleaved schedule"),
      Flag("supports_zero_bubble", &St::supports_zero_bubble, "planner: zero-bubble schedule"),
      Flag("supports_partial_recompute", &St::supports_partial_recompute,
           "planner: recompute=full with recompute_layers (some layers per stage)"),
      Flag("fp8_param_gather", &St::fp8_param_gather, "fp8 jobs: weights all-gathered in FP8"),
      Flag("fp8_tp_gathers", &St::fp8_tp_gathers, "fp8 jobs: SP TP all-gathers (inputs, output grads) in FP8"),
      Flag("fp4_param_gather", &St::fp4_param_gather, "fp4 jobs: weights all-gathered in NVFP4"),
      Real("nvfp4_bf16_layer_share", &St::nvfp4_bf16_layer_share, 0,
           "fp4 jobs: share of blocks kept in BF16 (first:last 2:8)", 1.0),
      Flag("saves_quantized_inputs", &St::saves_quantized_inputs, "fp8/fp4 jobs: linear inputs saved quantized"),
      Flag("quantized_weight_cache", &St::quantized_weight_cache, "fp8/fp4 jobs: quantized weight copies kept"),
      Flag("fp8_split_accum_fprop", &St::fp8_split_accum_fprop, "fp8 jobs: forward GEMM with the split accumulator"),
      Flag("fp8_split_accum_dgrad", &St::fp8_split_accum_dgrad, "fp8 jobs: input-gradient GEMM split-accumulated"),
      Flag("fp8_split_accum_wgrad", &St::fp8_split_accum_wgrad, "fp8 jobs: weight-gradient GEMM split-accumulated"),
      Flag("swiglu_saves_input_only", &St::swiglu_saves_input_only, "fused SwiGLU: SiLU(gate) not kept for backward"),
      Flag("query_keeps_packed_qkv", &St::query_keeps_packed_qkv,
           "multi-head attention: saved query keeps the packed q,k,v copy alive"),
      Flag("fsdp_pp_accumulate_unsharded", &St::fsdp_pp_accumulate_unsharded, "pp>1: gather/reduce once per step"),
      Flag("overlap_param_gather", &St::overlap_param_gather, "zero1: gather under next forward"),
      Flag("overlap_grad_reduce", &St::overlap_grad_reduce, "ddp/zero1: reduce under backward"),
      Flag("grad_norm_allreduce", &St::grad_norm_allreduce, "clip-grad-norm: one fp32 all-reduce per step"),
      Flag("embedding_grads_after_backward", &St::embedding_grads_after_backward,
           "embedding / LM head dp reduction after the last backward (pp>1 or sp), not under it"),
      Flag("dp_overlap_per_chunk", &St::dp_overlap_per_chunk,
           "interleaved: gathers/reductions chunk by chunk under the other chunks' passes"),
      Flag("pp_overlap_p2p", &St::pp_overlap_p2p,
           "interleaved: steady-state pp sends/receives hidden under the next pass (warm-up, cool-down in full)"),
      Flag("pp_partition_over_tp", &St::pp_partition_over_tp, "pp send split over tp, gathered on receipt"),
      Real("pp_meta_messages", &St::pp_meta_messages, 0, "small messages before each partitioned pp tensor"),
      Real("pp_transfers_per_micro_batch", &St::pp_transfers_per_micro_batch, 1,
           "pp boundary transfers a stage runs in turn per micro-batch (2 paired exchanges, 4 one-way)"),
      Real("pp_tp_gathers_per_micro_batch", &St::pp_tp_gathers_per_micro_batch, 0,
           "partitioned pp: tp all-gathers of the boundary tensor per micro-batch on a stage"),
      Flag("zero1_grad_allreduce", &St::zero1_grad_allreduce,
           "zero1: gradients all-reduced in full (else reduce-scattered)"),
      Flag("zero1_grad_reduce_after_backward", &St::zero1_grad_reduce_after_backward,
           "zero1: gradients reduced once after the last backward, blocking (else as overlap_grad_reduce)"),
      Flag("pp_host_synchronous", &St::pp_host_synchronous, "pp p2p blocks the host (metadata read on the CPU)"),
      Flag("pp_balance_by_compute", &St::pp_balance_by_compute,
           "no pp_layers: stages balanced by nanotron's block compute costs (else even)"),
      Flag("pp_balance_close_at_threshold", &St::pp_balance_close_at_threshold,
           "that balance closes a stage when its cost reaches total*(r+1)/pp (else passes it)"),
      Flag("sac_keeps_unread_outputs", &St::sac_keeps_unread_outputs,
           "op-level SAC, eager: saved outputs backward never reads are kept too"),
      Flag("cp_allgather_ring_loop", &St::cp_allgather_ring_loop,
           "cp_comm=allgather runs the ring's per-step loop on gathered K/V (torch), not one call (TE)"),
      Flag("repeats_kv_heads", &St::repeats_kv_heads,
           "GQA K/V repeated to every head before attention (saved and CP-moved a*d wide)"),
      Flag("pp_interleaved_full_warmup", &St::pp_interleaved_full_warmup,
           "interleaved with m = pp: every chunk forward before the first backward"),
      Flag("pp_keeps_boundary_tensors", &St::pp_keeps_boundary_tensors,
           "pp: per-micro-batch receive buffers, stage outputs and input grads kept to step end"),
      Flag("pp_merges_last_stage_outputs", &St::pp_merges_last_stage_outputs,
           "pp: the step concatenates the last stage's outputs after the last backward"),
      Real("host_per_micro_batch_s", &St::host_per_micro_batch_s, 0, "CPU per micro-batch launching no kernel"),
      Real("tp_comm_overlap", &St::tp_comm_overlap, 0, "fraction of SP TP comm hidden under GEMMs", 1.0),
      Real("tp_overlap_gemm_slowdown", &St::tp_overlap_gemm_slowdown, 0, "GEMM time lost while TP comm overlaps",
           1.0),
      Flag("tp_overlap_backward_reductions", &St::tp_overlap_backward_reductions,
           "tp_comm_overlap also hides the backward's dgrad reduce-scatters (else they block)"),
      Flag("tp_overlap_rs_local_reduce", &St::tp_overlap_rs_local_reduce,
           "overlapped matmul-RS ends with a local sum of the tp partials, exposed"),
      Flag("tp_backward_overlap", &St::tp_backward_overlap,
           "column-parallel backward: input re-gather beside dgrad, dgrad RS/AR beside wgrad"),
      Flag("dropout", &St::dropout, "dropout masks kept, extra traffic"),
      Flag("fp32_matmul_tf32", &St::fp32_matmul_tf32, "fp32 jobs: matmuls on TF32 tensor cores (else FP32 SIMT)"),
  };
  return fields;
}

const std::vector<AttentionField>& AttentionFields() {
  using Ak = AttentionKernel;
  static const std::vector<AttentionField> fields = {
      Real("forward_efficiency", &Ak::forward_efficiency, 0, "fraction of dense peak (fused kernels)", 1.0),
      Real("backward_ratio", &Ak::backward_ratio, 0, "backward / forward efficiency"),
      Real("non_causal_speedup", &Ak::non_causal_speedup, 0, "unmasked / causal speed (CP ring steps after the first)"),
      Flag("fused", &Ak::fused, "false: scores through HBM"),
      Real("score_bytes_forward", &Ak::score_bytes_forward, 0, "unfused: per score element"),
      Real("score_bytes_backward", &Ak::score_bytes_backward, 0, "unfused: per score element"),
      Real("score_bytes_saved", &Ak::score_bytes_saved, 0, "unfused: kept for backward"),
  };
  return fields;
}

// A new member must get a row in the tables above (or a line of its own in
// the reader and the writer): this stops compiling when the count changes.
[[maybe_unused]] static void FieldCountGuard(const SoftwareStack& s, const AttentionKernel& a) {
  [[maybe_unused]] const auto& [s1, s2, s3, s4, s5, s6, s7, s8, s9, s10, s11, s12, s13, s14, s15, s16, s17, s18, s19, s20, s21, s22, s23, s24, s25, s26, s27, s28, s29, s30, s31, s32, s33, s34, s35, s36, s37, s38, s39, s40, s41, s42, s43, s44, s45, s46, s47, s48, s49, s50, s51, s52, s53, s54, s55, s56, s57, s58, s59, s60, s61, s62, s63, s64, s65, s66, s67, s68, s69, s70, s71, s72, s73, s74, s75, s76, s77, s78, s79, s80, s81, s82, s83, s84, s85, s86, s87, s88, s89, s90, s91, s92, s93, s94, s95, s96, s97, s98, s99, s100, s101, s102, s103, s104, s105, s106, s107, s108, s109, s110] = s;
  [[maybe_unused]] const auto& [a1, a2, a3, a4, a5, a6, a7, a8] = a;
}

std::vector<Issue> ValidateSoftwareStack(const SoftwareStack& stack, const std::string& file) {
  std::vector<Issue> out;
  for (const StackField& f : StackFields()) {
    if (auto p = RangeProblem(f.range, f.unit, f.get(stack))) out.push_back(Issue{file, f.key, 0, 0, *p});
  }
  for (const auto& [arch, a] : stack.attention_by_arch) {
    const std::string prefix = "attention." + arch + ".";
    for (const AttentionField& f : AttentionFields()) {
      if (auto p = RangeProblem(f.range, f.unit, f.get(a))) out.push_back(Issue{file, prefix + f.key, 0, 0, *p});
    }
    // A fused kernel's time divides by these efficiencies.
    if (a.fused && a.forward_efficiency <= 0) {
      out.push_back(Issue{file, prefix + "forward_efficiency", 0, 0, "must be > 0 for a fused kernel"});
    }
    if (a.fused && !(a.backward_ratio > 0 && a.forward_efficiency * a.backward_ratio <= 1)) {
      out.push_back(Issue{file, prefix + "backward_ratio", 0, 0,
                          StrCat(a.backward_ratio, " must be > 0 with forward_efficiency x backward_ratio <= 1 (got ",
                                 a.forward_efficiency * a.backward_ratio, ")")});
    }
  }
  return out;
}

}  // namespace parasim
