// Compute cost of one unit of the model (a transformer layer, the embedding,
// the LM head with the loss) for one micro-batch on one GPU under a parallel
// config: kernel time by class (GEMM, attention, memory-bound, framework
// copies, launch overhead), FLOPs and HBM bytes, forward and backward with
// recomputation. Pure functions of precomputed model/device/stack data.
#pragma once

#include <algorithm>
#include <array>

#include "core/model_spec.h"
#include "core/parallel_config.h"
#include "cost_model/flops.h"
#include "cost_model/kernel_time.h"
#include "cost_model/software_stack.h"

namespace parasim {

// Per class, seconds (forward or backward).
struct KernelSeconds {
  double gemm = 0, attention = 0, elementwise = 0, loss = 0, copy = 0, launch = 0;
  double Total() const { return gemm + attention + elementwise + loss + copy + launch; }
  double Matmul() const { return gemm + attention; }
  KernelSeconds& operator+=(const KernelSeconds& o) {   // (inline: the evaluator's hot loop)
    gemm += o.gemm;
    attention += o.attention;
    elementwise += o.elementwise;
    loss += o.loss;
    copy += o.copy;
    launch += o.launch;
    return *this;
  }
  KernelSeconds Scaled(double k) const {
    KernelSeconds r = *this;
    r.gemm *= k;
    r.attention *= k;
    r.elementwise *= k;
    r.loss *= k;
    r.copy *= k;
    r.launch *= k;
    return r;
  }
};

struct UnitCost {
  KernelSeconds fwd;
  KernelSeconds bwd;          // includes the recomputed forward
  double recompute_s = 0;     // the part of bwd spent recomputing
  // Of bwd, the recomputed forward's GEMMs and attention core (LayerCost
  // sets them by RecomputeScopeOf; 0 for a unit not recomputed).
  double recomputed_gemm = 0;
  double recomputed_attention = 0;
  double fwd_flops = 0;       // per GPU
  double bwd_flops = 0;       // incl. recompute
  double fwd_bytes = 0;       // HBM bytes of memory-bound ops and copies
  double bwd_bytes = 0;
  double params = 0;          // parameters of the unit on this GPU (÷ tp, ÷ ep for experts)
  double dense_params = 0;    // of which not experts
};

// What of a layer's forward its backward re-runs: the one recomputation rule
// LayerCost prices. Full recompute re-runs the whole forward; selective is
// attention-only (Megatron-Core checkpoints core_attention, TE's CP
// attention included) unless the stack's selective is op-level SAC
// (sac_matmul_recompute_fraction > 0), which keeps the attention output and
// re-runs that fraction of the matmuls and every pointwise op.
enum class RecomputeScope { kNothing, kAttentionCore, kSacOps, kWholeForward };

inline RecomputeScope RecomputeScopeOf(RecomputeMode recompute, const SoftwareStack& s) {
  switch (recompute) {
    case RecomputeMode::kNone: return RecomputeScope::kNothing;
    case RecomputeMode::kSelective:
      return s.sac_matmul_recompute_fraction > 0 ? RecomputeScope::kSacOps : RecomputeScope::kAttentionCore;
    case RecomputeMode::kFull: return RecomputeScope::kWholeForward;
  }
  return RecomputeScope::kNothing;
}

// Whether backward re-runs the attention core, and with it the CP
// collectives inside it (RecomputeScopeOf).
inline bool RecomputesAttention(RecomputeMode recompute, const SoftwareStack& s) {
  const RecomputeScope scope = RecomputeScopeOf(recompute, s);
  return scope == RecomputeScope::kAttentionCore || scope == RecomputeScope::kWholeForward;
}

// The backward's own attention core, the blocks its CP ring steps hide
// under: bwd.attention less the recomputed forward's.
inline double OwnBackwardAttention(const UnitCost& u) { return u.bwd.attention - u.recomputed_attention; }

// A zero-bubble schedule's weight-gradient pass (W): the dW GEMMs, half the
// backward's own GEMMs (dX = dY·Wᵀ and dW = Xᵀ·dY have the same FLOPs,
// LinearSeconds). The attention core's backward (no weights) and the
// recomputed forward (UnitCost::recomputed_gemm) stay in the input-gradient
// pass B, as torch.distributed.pipelining splits them (stage_backward_input:
// autograd to the stage's inputs, recomputation included;
// stage_backward_weight: the parameters'). A stage's mean layer under partial
// full recompute (AddScaled of its recomputed and kept layers) carries the
// recomputed layers' share in recomputed_gemm.
inline double WeightGradSeconds(const UnitCost& u) { return 0.5 * std::max(0.0, u.bwd.gemm - u.recomputed_gemm); }

// What the constructor precomputes for a (model, cluster, job, stack).
struct LayerCostModel {
  ModelFlops flops;
  DeviceRates rates;
  double h = 0, ad = 0, gd = 0, ffn = 0, vocab = 0, seq = 0;
  bool swiglu = true;
  bool moe = false;
  double heads = 0, head_dim = 0;
  double norm_bytes = 0;        // per element per forward, by the model's norm kind and the stack
  double rope_bytes = 0;        // 0 without rotary embeddings
  double qk_norm_width = 0;     // ad + gd when Q and K are normalised per head (ModelSpec::qk_norm), else 0
  AttentionKernel attention;
  double experts = 0, top_k = 0, expert_ffn = 0;
  // Today's layouts (defaults reproduce the Llama-style layer exactly).
  double qkv_width = 0;          // output width of the fused QKV GEMM(s): ad + 2gd; MLA: (w.q + w.kv)/h
  double out_width = 0;          // input width of the output projection: ad; MLA: a·d_v
  double attn_core_width = 0;    // width of the attention core per query-key pair (flops.attn_width)
  double shared_ffn = 0;         // total width of the always-on shared experts in an MoE layer
  // Models with several layer kinds (ModelSpec::LayerKindOf: dense or MoE
  // MLP, local or full attention): each kind's FLOP counts (its MLP, its
  // attention context) and how many layers of it the model has.
  bool several_kinds = false;
  std::array<ModelFlops, kNumLayerKinds> kind_flops{};
  std::array<double, kNumLayerKinds> kind_layers{};
  bool global_layers_nope = false;   // full-attention layers without rotary embeddings (Llama 4's NoPE layers)
  const SoftwareStack* stack = nullptr;
};

LayerCostModel MakeLayerCostModel(const ModelSpec& model, const DeviceRates& rates, const SoftwareStack& stack,
                                  int64_t seq_len);

// `tokens` = b·s/cp tokens of one micro-batch on this GPU (before tp).
// A model with several layer kinds (DeepSeek's dense first layers, Llama 4
// Maverick's alternation, Gemma's local and global attention) gets the
// layer-count-weighted mean of its kinds: totals over the model are exact;
// pipeline stages sum their own kinds (TransformerLayerKindCost).
UnitCost TransformerLayerCost(const LayerCostModel& m, const ParallelConfig& c, double tokens);
// One layer of kind `kind` (ModelSpec::LayerKindOf); = TransformerLayerCost
// for a model of one kind.
UnitCost TransformerLayerKindCost(const LayerCostModel& m, const ParallelConfig& c, double tokens, int kind);
// `weight` × every field of `u`, added to `into`.
void AddScaled(UnitCost& into, const UnitCost& u, double weight);
UnitCost EmbeddingCost(const LayerCostModel& m, const ParallelConfig& c, double tokens);
UnitCost LmHeadCost(const LayerCostModel& m, const ParallelConfig& c, double tokens);

}  // namespace parasim
