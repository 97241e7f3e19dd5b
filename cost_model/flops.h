// FLOP counts (DESIGN.md §4 FLOPs). Matmul FLOPs per token = 2 × the weights
// of the matmul; attention core 4·s·(a·d) per token per layer, counted in
// full (causal kernels do half: that is kernel time, not the convention);
// logits 2·h·V. MFU basis per token: 6·N_matmul + 12·L·(a·d)·s, LM head once,
// input embedding not (a lookup). HFU adds the recomputed forward.
#pragma once

#include <cstdint>

#include "core/model_spec.h"
#include "core/parallel_config.h"

namespace parasim {

// Matmul weights of one layer and the model, by op (whole, before any split).
struct MatmulWeights {
  double q = 0, kv = 0, out = 0;   // Q: h·a·d; K and V together: 2·h·g·d; O: a·d·h
  double mlp = 0;                   // dense MLP (3·h·f SwiGLU, 2·h·f GELU); MoE: active experts (top-k)
  double router = 0;                // MoE router h·E
  double expert_total = 0;          // MoE: all experts' weights (memory, not FLOPs)
  double lm_head = 0;               // h·V, counted once whether tied or not
  double Layer() const { return q + kv + out + mlp + router; }
};

// Models whose layers differ (dense first layers, MoE every n-th layer) are
// counted as L average layers: the weights above are per-layer means, so
// sums over layers are exact. Layers with sliding-window or chunked attention
// attend to fewer keys; `AttentionLayers` folds them into an equivalent
// number of full-attention layers at a given sequence length.
struct ModelFlops {
  MatmulWeights w;
  int64_t num_layers = 0;
  double attn_width = 0;            // a·d (= h for Llama); MLA: a·(d_qk + d_v)/2
  double n_matmul = 0;              // L·layer + lm_head (active experts only)
  int64_t local_layers = 0;         // layers with sliding-window or chunked attention
  double window = 0;                // their window or chunk, tokens
  bool chunked = false;

  // Full-attention-equivalent layer count at `seq_len` (= L without local layers).
  double AttentionLayers(int64_t seq_len) const;
  // AttentionLayers / L: the mean fraction of the full causal score matrix a layer computes.
  double AttentionContextFraction(double seq_len) const;

  // DESIGN.md §4: 6·N_matmul + 12·L·(a·d)·s (L → AttentionLayers(s) with local attention).
  double ModelFlopsPerToken(int64_t seq_len) const;
  // Model FLOPs plus the recomputed forward (selective: attention core; full: every layer).
  // `sac_fraction` > 0: selective is op-level SAC recomputing that fraction
  // of the matmuls (SoftwareStack::sac_matmul_recompute_fraction), not attention.
  double HardwareFlopsPerToken(int64_t seq_len, RecomputeMode recompute, double sac_fraction = 0) const;
};

ModelFlops CountModelFlops(const ModelSpec& model);

// The counts of `model_flops` (CountModelFlops) restated for one layer kind
// of a model with several: the MLP and router of a dense or an MoE layer (its
// shared experts included) and full or local attention, as if every layer
// were of that kind (num_layers, n_matmul, attention width unchanged).
ModelFlops LayerKindFlops(const ModelSpec& model, const ModelFlops& model_flops, bool moe, bool local);

// Fraction of the causal score matrix (s·(s+1)/2 query-key pairs) a layer
// computes with a sliding window of `window` keys or `window`-token chunks.
double LocalAttentionFraction(double seq_len, double window, bool chunked);

// Forward FLOPs of one layer's ops on one GPU for one micro-batch: `tokens`
// local tokens (b·s/cp), queries attending to `context` keys (s; scaled by
// AttentionContextFraction for local-attention layers), split over tp.
struct LayerOpFlops {
  double qkv = 0, attention = 0, out_proj = 0, mlp = 0, router = 0;
  double Total() const { return qkv + attention + out_proj + mlp + router; }
};
LayerOpFlops LayerForwardFlops(const ModelFlops& f, double tokens, double context, int tp);

// Backward = 2 × forward for every op (the convention; flash attention's
// slower backward is kernel time).
inline double BackwardFlops(double forward) { return 2.0 * forward; }

// Forward FLOPs recomputed in backward per layer (selective: attention core; full: all).
double RecomputeForwardFlops(const LayerOpFlops& fwd, RecomputeMode recompute);

}  // namespace parasim
