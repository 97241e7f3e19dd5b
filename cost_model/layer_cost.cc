#include "cost_model/layer_cost.h"

#include <algorithm>

namespace parasim {

namespace {

// Bytes per element of one layout copy, read + write bf16 (CP all-to-all).
constexpr double kCpA2aLayoutBytes = 4;

// Launch overhead of `kernels` dependent kernels whose GPU time is `busy`:
// each leaves a gap on the GPU, and when the host cannot issue them as fast
// as the GPU runs them the difference is exposed too.
// GPU gaps between dependent kernels, plus the host's dispatch time beyond
// the GPU's busy time (the CPU runs ahead asynchronously until it is the
// slower of the two). `host_extra` = host time that launches no kernel.
double LaunchSeconds(const SoftwareStack& s, double kernels, double busy, double host_extra = 0) {
  return kernels * s.kernel_gap_s + std::max(0.0, kernels * s.host_per_kernel_s + host_extra - busy);
}

}  // namespace

LayerCostModel MakeLayerCostModel(const ModelSpec& model, const DeviceRates& rates, const SoftwareStack& stack,
                                  int64_t seq_len) {
  LayerCostModel m;
  m.flops = CountModelFlops(model);
  m.rates = rates;
  m.h = static_cast<double>(model.hidden_size);
  m.ad = static_cast<double>(model.num_attention_heads * model.HeadDim());
  m.gd = static_cast<double>(model.KvHeads() * model.HeadDim());
  m.ffn = static_cast<double>(model.ffn_hidden_size);
  m.vocab = static_cast<double>(model.vocab_size);
  m.seq = static_cast<double>(seq_len);
  m.swiglu = model.mlp == MlpKind::kSwiGlu;
  m.moe = model.IsMoe();
  m.experts = static_cast<double>(model.num_experts);
  m.top_k = static_cast<double>(model.experts_per_token);
  m.expert_ffn = static_cast<double>(model.moe_ffn_hidden_size > 0 ? model.moe_ffn_hidden_size
                                                                   : model.ffn_hidden_size);
  m.qkv_width = model.IsMla() ? (m.flops.w.q + m.flops.w.kv) / m.h : m.ad + 2.0 * m.gd;
  m.out_width = model.IsMla() ? m.flops.w.out / m.h : m.ad;
  m.attn_core_width = model.IsMla() ? m.flops.attn_width : m.ad;
  m.shared_ffn = static_cast<double>(model.num_shared_experts * model.shared_expert_ffn_hidden_size);
  if (model.HasSeveralLayerKinds()) {
    m.several_kinds = true;
    const std::array<int64_t, kNumLayerKinds> counts = model.LayerKindCounts();
    for (int k = 0; k < kNumLayerKinds; ++k) {
      m.kind_layers[k] = static_cast<double>(counts[k]);
      m.kind_flops[k] = LayerKindFlops(model, m.flops, (k & kLayerKindMoe) != 0, (k & kLayerKindLocal) != 0);
    }
    // Llama 4: the chunked layers use RoPE, the full-attention ones none
    // (transformers configuration_llama4.py no_rope_layers; the HF loader
    // reads chunked attention only for Llama 4).
    m.global_layers_nope = model.local_attention == LocalAttention::kChunked;
  }
  m.heads = static_cast<double>(model.num_attention_heads);
  m.head_dim = static_cast<double>(model.HeadDim());
  // PyTorch's native LayerNorm is one fused kernel (read + write); RMSNorm
  // costs what the stack's implementation moves.
  m.norm_bytes = model.norm == NormKind::kLayerNorm ? std::min(4.0, stack.norm_bytes_per_element)
                                                    : stack.norm_bytes_per_element;
  m.rope_bytes = model.position == PositionKind::kRope ? stack.rope_bytes_per_element : 0.0;
  m.qk_norm_width = model.qk_norm ? m.ad + m.gd : 0.0;
  m.stack = &stack;
  return m;
}

namespace {

UnitCost SingleKindLayerCost(const LayerCostModel& m, const ParallelConfig& c, double T);

}  // namespace

void AddScaled(UnitCost& into, const UnitCost& u, double w) {
  into.fwd += u.fwd.Scaled(w);
  into.bwd += u.bwd.Scaled(w);
  into.recompute_s += w * u.recompute_s;
  into.recomputed_gemm += w * u.recomputed_gemm;
  into.recomputed_attention += w * u.recomputed_attention;
  into.fwd_flops += w * u.fwd_flops;
  into.bwd_flops += w * u.bwd_flops;
  into.fwd_bytes += w * u.fwd_bytes;
  into.bwd_bytes += w * u.bwd_bytes;
  into.params += w * u.params;
  into.dense_params += w * u.dense_params;
}

UnitCost TransformerLayerKindCost(const LayerCostModel& m, const ParallelConfig& c, double T, int kind) {
  if (!m.several_kinds) return SingleKindLayerCost(m, c, T);
  LayerCostModel k = m;
  k.several_kinds = false;
  k.moe = m.moe && (kind & kLayerKindMoe) != 0;
  k.flops = m.kind_flops[kind];
  if (m.global_layers_nope && (kind & kLayerKindLocal) == 0) k.rope_bytes = 0.0;
  return SingleKindLayerCost(k, c, T);
}

UnitCost TransformerLayerCost(const LayerCostModel& m, const ParallelConfig& c, double T) {
  if (!m.several_kinds) return SingleKindLayerCost(m, c, T);
  double layers = 0;
  for (double n : m.kind_layers) layers += n;
  UnitCost mean;
  for (int k = 0; k < kNumLayerKinds; ++k) {
    if (m.kind_layers[k] > 0) AddScaled(mean, TransformerLayerKindCost(m, c, T, k), m.kind_layers[k] / layers);
  }
  return mean;
}

namespace {

UnitCost SingleKindLayerCost(const LayerCostModel& m, const ParallelConfig& c, double T) {
  const SoftwareStack& s = *m.stack;
  const DeviceRates& d = m.rates;
  const double tp = c.tp;
  UnitCost u;
  // GEMMs (fused QKV; fused gate+up for SwiGLU). Rows = the micro-batch's
  // tokens: with SP the input is all-gathered back to T rows before the GEMM.
  FwdBwd qkv = LinearSeconds(d, T, m.h, m.qkv_width / tp);
  FwdBwd out = LinearSeconds(d, T, m.out_width / tp, m.h);
  const double mats_in = m.swiglu ? 2.0 : 1.0;
  FwdBwd mlp;
  double mlp_params = 0, act_elems = 0;
  if (m.moe) {
    // Each GPU holds E/ep experts; on average it computes T·k token-expert
    // pairs spread evenly over them (balanced routing, dropless).
    const double local_experts = m.experts / c.ep;
    const double rows = T * m.top_k / local_experts;
    const FwdBwd up = LinearSeconds(d, rows, m.h, mats_in * m.expert_ffn / tp);
    const FwdBwd down = LinearSeconds(d, rows, m.expert_ffn / tp, m.h);
    const FwdBwd router = LinearSeconds(HighPrecisionRates(d), T, m.h, m.experts);   // a BF16 torch linear
    mlp.fwd = local_experts * (up.fwd + down.fwd) + router.fwd;
    mlp.bwd = local_experts * (up.bwd + down.bwd) + router.bwd;
    mlp_params = local_experts * (mats_in + 1.0) * m.h * m.expert_ffn / tp;
    act_elems = T * m.top_k * m.expert_ffn / tp;
    if (m.shared_ffn > 0) {
      // Shared experts: a dense MLP every token passes, split over tp like one.
      const FwdBwd sup = LinearSeconds(d, T, m.h, mats_in * m.shared_ffn / tp);
      const FwdBwd sdown = LinearSeconds(d, T, m.shared_ffn / tp, m.h);
      mlp.fwd += sup.fwd + sdown.fwd;
      mlp.bwd += sup.bwd + sdown.bwd;
      act_elems += T * m.shared_ffn / tp;
    }
  } else {
    const FwdBwd up = LinearSeconds(d, T, m.h, mats_in * m.ffn / tp);
    const FwdBwd down = LinearSeconds(d, T, m.ffn / tp, m.h);
    mlp.fwd = up.fwd + down.fwd;
    mlp.bwd = up.bwd + down.bwd;
    mlp_params = (mats_in + 1.0) * m.h * m.ffn / tp;
    act_elems = T * m.ffn / tp;
  }
  u.fwd.gemm = qkv.fwd + out.fwd + mlp.fwd;
  u.bwd.gemm = qkv.bwd + out.bwd + mlp.bwd;
  // Attention core: T queries against the full s keys (CP ranks see all keys
  // over the ring), heads split over tp.
  // Local-attention layers (sliding window, chunks) compute a fraction of the scores.
  const double attn_flops = 4.0 * T * (m.seq * m.flops.AttentionContextFraction(m.seq)) * m.attn_core_width / tp;
  double attn_bytes_fwd = 0, attn_bytes_bwd = 0;   // HBM traffic beside the attention kernels
  // The ring and all-to-all parts of the CP kind: p2p is all ring, a2a all
  // all-to-all; a2a+p2p all-to-alls over cp_a2a_size ranks, then a ring over
  // cp/cp_a2a_size (TE AttnFuncWithCPAndKVP2P; inner size 1 or cp is p2p or a2a).
  // torch's all-gather kind runs the ring's loop on the gathered K/V
  // (SoftwareStack::cp_allgather_ring_loop): cp steps, as the ring's.
  const bool cp_gather_loop = c.cp > 1 && c.cp_comm == CpComm::kAllGather && s.cp_allgather_ring_loop;
  const int cp_ring_ranks = c.cp > 1 ? (cp_gather_loop ? c.cp : c.CpRingSize()) : 1;
  const int cp_a2a_ranks = c.cp > 1 ? c.CpA2aSize() : 1;
  const bool cp_ring = cp_ring_ranks > 1;
  const bool cp_a2a = cp_a2a_ranks > 1;
  if (m.attention.fused) {
    // All-to-all CP runs each kernel on a2a× more of the sequence for a2a×
    // fewer heads; the ring splits that sequence into its ranks' blocks.
    // A ring with causal load balancing (Transformer Engine's
    // AttnFuncWithCPAndKVP2P, torch's _templated_ring_attention) runs the
    // local causal call at step 0 and every later step unmasked: each step
    // computes the same 2·(s/2n)² query-key pairs (n ring ranks), so
    // (n − 1)/n of the work runs without the mask.
    const double non_causal_share = cp_ring ? (cp_ring_ranks - 1.0) / cp_ring_ranks : 0.0;
    const FwdBwd attn = AttentionSeconds(d, attn_flops, m.seq / (c.cp / cp_a2a_ranks), non_causal_share);
    u.fwd.attention = attn.fwd;
    u.bwd.attention = attn.bwd;
    if (cp_ring) {
      // Ring attention's merge of partial outputs and gradient accumulation
      // (after an all-to-all a rank holds a× the tokens of 1/a of the heads: same elements).
      // K and V as the attention call sees them: every head's where the
      // stack repeats them first (their gradients are accumulated that wide).
      const double out_elems = T * m.ad / tp;
      const double kv_elems = T * 2.0 * (s.repeats_kv_heads ? m.ad : m.gd) / tp;
      const double qkv_elems = out_elems + kv_elems;
      attn_bytes_fwd = out_elems * (s.cp_merge_bytes_fixed + (cp_ring_ranks - 1) * s.cp_merge_bytes_per_step) +
                       kv_elems * (cp_ring_ranks - 1) * s.cp_kv_pack_bytes_per_step;
      attn_bytes_bwd = qkv_elems * (s.cp_grad_bytes_fixed + cp_ring_ranks * s.cp_grad_bytes_per_step) +
                       kv_elems * cp_ring_ranks * s.cp_dkv_pack_bytes_per_step;
    }
    if (cp_a2a) {
      // One layout copy (read + write, 4 B per bf16 element) of q, k, v and
      // the output around their all-to-alls: DeepSpeed's single_all_to_all
      // (transpose().contiguous()), Transformer Engine's
      // flash_attn_a2a_communicate (movedim().contiguous()). Backward: their gradients.
      const double layout_bytes = kCpA2aLayoutBytes * T * (2.0 * m.ad + 2.0 * m.gd) / tp * (d.element_bytes / 2.0);
      attn_bytes_fwd += layout_bytes;
      attn_bytes_bwd += layout_bytes;
    }
    u.fwd.elementwise += MemorySeconds(d, attn_bytes_fwd);
    u.bwd.elementwise += MemorySeconds(d, attn_bytes_bwd);
  } else {
    // Unfused: QKᵀ and AV as batched GEMMs over the whole s×s scores (the
    // causal half is computed and masked), scores streamed through HBM.
    const double s_local = m.seq / c.cp;
    const double rows = T / s_local * (m.heads / tp) * s_local;   // (sequence, head, query) rows
    const double qk = GemmSeconds(d, rows, m.seq, m.head_dim);
    const double av = GemmSeconds(d, rows, m.head_dim, m.seq);
    const double scores = rows * m.seq;
    const double widen = d.element_bytes / 2.0;   // score bytes are stated for bf16 scores
    attn_bytes_fwd = scores * m.attention.score_bytes_forward * widen;
    attn_bytes_bwd = scores * m.attention.score_bytes_backward * widen;
    u.fwd.attention = qk + av;
    u.bwd.attention = 2.0 * (qk + av);
    u.fwd.elementwise += MemorySeconds(d, attn_bytes_fwd);
    u.bwd.elementwise += MemorySeconds(d, attn_bytes_bwd);
  }
  // Memory-bound ops. Norms and residuals run on the full hidden vector of
  // every token a TP rank holds (T/tp with SP). QK norm reads and writes the
  // rank's Q and K heads (a·d + g·d per token) as the stack's norm kernel does.
  const double t_norm = c.sequence_parallel ? T / tp : T;
  const double act_bytes = m.swiglu ? s.act_bytes_per_element : 4.0;   // GELU: read + write bf16
  // The stack's bytes are for bf16 elements; fp32 training moves twice as many.
  const double elem_fwd = (2.0 * t_norm * m.h * m.norm_bytes + 2.0 * t_norm * m.h * s.residual_bytes_per_element +
                           T * (m.ad + m.gd) / tp * m.rope_bytes + T * m.qk_norm_width / tp * m.norm_bytes +
                           act_elems * act_bytes) *
                          (d.element_bytes / 2.0);
  u.fwd.elementwise += MemorySeconds(d, elem_fwd);
  u.bwd.elementwise += MemorySeconds(d, 2.0 * elem_fwd);
  // Framework copies: passes over the layer's bf16 weights (read + write).
  const double attn_params = (m.qkv_width * m.h + m.out_width * m.h) / tp;
  const double norm_params = 2.0 * m.h;
  const double shared_params = (mats_in + 1.0) * m.h * m.shared_ffn / tp;
  u.dense_params = attn_params + norm_params + (m.moe ? m.h * m.experts + shared_params : mlp_params);   // router replicated
  u.params = u.dense_params + (m.moe ? mlp_params : 0.0);
  const double copy_bytes = 2.0 * s.compute_param_bytes * u.params;
  u.fwd.copy = MemorySeconds(d, s.copy_passes_forward * copy_bytes);
  u.bwd.copy = MemorySeconds(d, (s.copy_passes_backward + s.grad_fold_passes) * copy_bytes);
  // CP launches: the ring's per-step kernels; a2a's 4 all-to-alls with their
  // layout copies; all-gather's gather and the second of its two query chunks.
  double n_cp = 0;
  if (cp_ring) n_cp += static_cast<double>(s.cp_kernels_per_step) * cp_ring_ranks;
  if (cp_a2a) n_cp += 8;
  // torch's loop: its steps' kernels and the gather.
  if (c.cp > 1 && c.cp_comm == CpComm::kAllGather) n_cp = cp_gather_loop ? n_cp + 1 : 2;
  // QK norm: one norm kernel for Q and one for K (Megatron-Core calls
  // q_layernorm and k_layernorm separately), not in the stack's count.
  const double n_qk_norm = m.qk_norm_width > 0 ? 2.0 : 0.0;
  const double n_fwd = s.kernels_per_layer_forward + n_cp + n_qk_norm;
  // Tensor-parallel linears (q, k, v, o and the MLP's) dispatch through the
  // stack's TP layer: forward once, backward twice (dgrad, wgrad).
  const double tp_linears = c.tp > 1 ? 4.0 + mats_in + 1.0 : 0.0;
  const double tp_host = tp_linears * s.host_per_tp_linear_s;
  u.fwd.launch = LaunchSeconds(s, n_fwd, u.fwd.Total(), tp_host);
  u.bwd.launch = LaunchSeconds(s, 2.0 * n_fwd, u.bwd.Total(), 2.0 * tp_host);
  // FLOPs and bytes.
  const LayerOpFlops f = LayerForwardFlops(m.flops, T, m.seq, c.tp);
  u.fwd_flops = f.Total();
  u.bwd_flops = BackwardFlops(f.Total());
  u.fwd_bytes = elem_fwd + attn_bytes_fwd + s.copy_passes_forward * copy_bytes;
  u.bwd_bytes = 2.0 * elem_fwd + attn_bytes_bwd + (s.copy_passes_backward + s.grad_fold_passes) * copy_bytes;
  // Recomputation (RecomputeScopeOf): what of the forward the backward re-runs.
  switch (RecomputeScopeOf(c.recompute, s)) {
    case RecomputeScope::kNothing: break;
    case RecomputeScope::kSacOps: {
      // Op-level SAC: the attention output is saved; a fraction of the matmuls
      // and every pointwise op run again (with their launches).
      const double k = s.sac_matmul_recompute_fraction;
      KernelSeconds again;
      again.gemm = k * u.fwd.gemm;
      again.elementwise = u.fwd.elementwise - MemorySeconds(d, attn_bytes_fwd);
      again.launch = u.fwd.launch;
      u.recompute_s = again.Total();
      u.recomputed_gemm = again.gemm;
      u.bwd += again;
      u.bwd_flops += k * (f.qkv + f.out_proj + f.mlp);
      u.bwd_bytes += elem_fwd;
      break;
    }
    case RecomputeScope::kAttentionCore: {
      // The attention core again (unfused: with its score traffic).
      const double again = u.fwd.attention + MemorySeconds(d, attn_bytes_fwd);
      u.recompute_s = again;
      u.recomputed_attention = u.fwd.attention;
      u.bwd.attention += u.fwd.attention;
      u.bwd.elementwise += MemorySeconds(d, attn_bytes_fwd);
      u.bwd_bytes += attn_bytes_fwd;
      u.bwd_flops += RecomputeForwardFlops(f, c.recompute);
      break;
    }
    case RecomputeScope::kWholeForward: {
      u.recompute_s = u.fwd.Total() - u.fwd.copy;
      KernelSeconds again = u.fwd;
      again.copy = 0;
      u.recomputed_gemm = again.gemm;
      u.recomputed_attention = again.attention;
      u.bwd += again;
      u.bwd_flops += RecomputeForwardFlops(f, c.recompute);
      u.bwd_bytes += elem_fwd + attn_bytes_fwd;
      break;
    }
  }
  return u;
}

}  // namespace

UnitCost EmbeddingCost(const LayerCostModel& m, const ParallelConfig& c, double T) {
  const SoftwareStack& s = *m.stack;
  UnitCost u;
  // Lookup (read rows, write bf16 activations) forward; scatter-add of the
  // gradient rows backward (fp32 accumulate: read + write 4 B).
  const double fwd = T * m.h * 4.0;
  const double bwd = T * m.h * 8.0;
  u.fwd.elementwise = MemorySeconds(m.rates, fwd);
  u.bwd.elementwise = MemorySeconds(m.rates, bwd);
  u.fwd.launch = LaunchSeconds(s, 2, u.fwd.Total());
  u.bwd.launch = LaunchSeconds(s, 3, u.bwd.Total());
  u.fwd_bytes = fwd;
  u.bwd_bytes = bwd;
  u.params = m.vocab * m.h / c.tp;
  u.dense_params = u.params;
  return u;
}

UnitCost LmHeadCost(const LayerCostModel& m, const ParallelConfig& c, double T) {
  const SoftwareStack& s = *m.stack;
  UnitCost u;
  const double tp = c.tp;
  // The output head stays BF16 in the FP8/NVFP4 recipes (precision.h).
  const FwdBwd head = LinearSeconds(HighPrecisionRates(m.rates), T, m.h, m.vocab / tp);
  u.fwd.gemm = head.fwd;
  u.bwd.gemm = head.bwd;
  // Final norm + loss over the vocab-parallel logits: a third of the loss
  // traffic forward, two thirds backward.
  const double norm = T * m.h * s.norm_bytes_per_element * (m.rates.element_bytes / 2.0);
  const double loss = T * m.vocab / tp * s.loss_bytes_per_element;
  u.fwd.elementwise = MemorySeconds(m.rates, norm);
  u.bwd.elementwise = MemorySeconds(m.rates, 2.0 * norm);
  u.fwd.loss = MemorySeconds(m.rates, loss / 3.0);
  u.bwd.loss = MemorySeconds(m.rates, 2.0 * loss / 3.0);
  u.fwd.launch = LaunchSeconds(s, 12, u.fwd.Total());
  u.bwd.launch = LaunchSeconds(s, 16, u.bwd.Total());
  u.fwd_flops = 2.0 * T * m.flops.w.lm_head / tp;
  u.bwd_flops = 2.0 * u.fwd_flops;
  u.fwd_bytes = norm + loss / 3.0;
  u.bwd_bytes = 2.0 * norm + 2.0 * loss / 3.0;
  u.params = m.vocab * m.h / tp + m.h;
  u.dense_params = u.params;
  return u;
}

}  // namespace parasim
