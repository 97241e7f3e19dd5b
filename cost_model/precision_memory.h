// What a low precision changes in memory (issue 15 part 6): the activations
// the linear layers save for backward. Transformer Engine's Linear,
// LayerNormLinear and LayerNormMLP keep the quantized copy of a GEMM input
// for the weight-gradient GEMM instead of the BF16 one (TE
// transformer_engine/pytorch/module/linear.py: "saved_inputmat" is the
// quantized input when fp8 is on). Everything else a layer saves stays in
// the activation dtype: the residual stream and norm inputs, Q/K/V for the
// BF16 attention core, the MLP's gate/up outputs read by the non-linearity.
#pragma once

#include "core/job_spec.h"
#include "core/model_spec.h"
#include "cost_model/memory.h"
#include "cost_model/software_stack.h"

namespace parasim {

// Bytes per element of a saved quantized GEMM input:
// FP8 per-tensor scaling (Hopper, Ada: delayed/current scaling) 1 B;
// MXFP8 (Blackwell: one E8M0 scale per 32 elements, OCP MX spec v1.0) 1 + 1/32 B;
// NVFP4 (4-bit E2M1 + one E4M3 scale per 16, arXiv:2509.25149 §2) 0.5625 B.
inline constexpr double kFp8TensorScaledBytes = 1.0;
inline constexpr double kMxfp8Bytes = 1.0 + 1.0 / 32.0;
double QuantizedInputBytes(Precision p, bool block_scaled_fp8);

// Bytes per linear-weight element of the quantized weight copies a stack
// caches across micro-batches (SoftwareStack::quantized_weight_cache): a
// row-wise copy for the forward GEMM and a column-wise one for the backward's
// data-gradient GEMM (Hopper FP8: the transpose; MXFP8 and NVFP4: blocks
// scaled along the other axis), each QuantizedInputBytes. 0 at BF16/FP32,
// without the cache, or with `primary_quantized` weights (fp8/fp4_param_gather
// on a sharded optimizer: the parameter is the quantized tensor, TE
// module/base.py quantize_weight returns it without a workspace).
double QuantizedWeightCacheBytes(const SoftwareStack& stack, Precision p, bool block_scaled_fp8,
                                 bool primary_quantized);

// Elements per token of one layer's saved linear-layer inputs, before tp:
// the two norm outputs (inputs of QKV and of the MLP's first projection,
// h each, replicated without SP) and the inputs of the attention output
// projection (a·d) and of the MLP's down projection (f, the routed experts'
// routed experts' f·k plus the shared experts' width for MoE), which TP splits.
struct LinearInputElements {
  double replicated = 0;
  double split = 0;
  double attention_out = 0;   // the out-projection input, dropped by selective recompute
};
LinearInputElements LayerLinearInputElements(const ModelSpec& model);

// `a` (the stack's activation dtype) with the linear inputs kept at
// `quantized_bytes` per element, in all but `bf16_layer_share` of the layers
// (NVFP4 keeps ~16 % of the blocks in BF16; the share averages them). Only
// where the stack saves quantized inputs (SoftwareStack::saves_quantized_inputs)
// and the job runs below BF16; otherwise `a` unchanged. Op-level SAC's
// sac_saved stays at the activation dtype (an upper bound).
ActivationPerToken QuantizedActivations(const ActivationPerToken& a, const ModelSpec& model,
                                        const SoftwareStack& stack, Precision p, bool block_scaled_fp8,
                                        double bf16_layer_share);

}  // namespace parasim
