// What the job's precision changes (issue 15 part 2): the rate of the linear
// layers' GEMMs, the rate of the attention core (BF16 in every recipe), the
// peak MFU is quoted against (dense BF16, the project's one convention) and
// the precision's own peak (mfu_own_precision), and the bytes a parameter
// all-gather moves where the stack gathers quantized weights.
#pragma once

#include "core/gpu_profile.h"
#include "core/job_spec.h"
#include "cost_model/software_stack.h"

namespace parasim {

struct PrecisionRates {
  double gemm_peak = 0;        // FLOP/s the linear-layer GEMMs run against
  double attention_peak = 0;   // FLOP/s of the attention core (QKᵀ, softmax, AV)
  double element_bytes = 2;    // bytes of an activation element (DeviceRates::element_bytes)
  double mfu_peak = 0;         // dense BF16 (FP16 where a GPU has no BF16: V100)
  double own_peak = 0;         // the precision's own dense peak
  double quantize_bytes = 0;   // cast traffic per streamed GEMM operand element (DeviceRates::quantize_bytes)
};

// The cast before every low-precision GEMM. Transformer Engine quantizes a
// linear layer's BF16 input in forward and its BF16 output gradient in
// backward with one fused cast-transpose kernel (NVIDIA/TransformerEngine
// transformer_engine/pytorch/module/linear.py: "FP8 input for forward, FP8
// input transpose for backward wgrad", fp8_cast_transpose_fused; the same for
// grad_output in backward): Hopper's FP8 tensor cores take only K-major
// operands, so wgrad and dgrad need the transposed copy. Per element: read
// 2 B of BF16, write the row-wise and the column-wise quantized copy.
// FP8 per-tensor (Hopper): 2 + 1 + 1 = 4 B. MXFP8 (Blackwell): each copy
// carries one E8M0 scale per 32 values, 2 + 2·(1 + 1/32). NVFP4: 2 + 2·0.5625
// (kNvfp4BytesPerElement). Left out: the weights' casts (once per step where
// the framework caches them across micro-batches, and gathered already
// quantized with fp8_param_gather), amax reductions (a few bytes per tensor),
// and casts fused into the preceding norm (TE LayerNormLinear): an upper
// bound by those.
inline constexpr double kBf16ReadBytes = 2.0;
inline constexpr double kFp8CastBytes = kBf16ReadBytes + 2.0 * 1.0;
inline constexpr double kMxfp8CastBytes = kBf16ReadBytes + 2.0 * (1.0 + 1.0 / 32.0);

// Blocks an NVFP4 recipe keeps in BF16: `share` of the L layers, split 2:8
// between the first and the last as NVIDIA's recipe does (the 12B model's
// first two and last eight of 62 blocks, arXiv:2509.25149; 0.16 x 62 ->
// 2 + 8). The share is the stack's SoftwareStack::nvfp4_bf16_layer_share
// (default kNvfp4Bf16LayerShare, cost_model/software_stack.h), the one
// setting both the time (PrecisionRatesOf) and the memory (the evaluator's
// BF16 blocks per stage) read. share 0: none.
struct Bf16Layers {
  int64_t first = 0, last = 0;
};
Bf16Layers Nvfp4Bf16Layers(int64_t num_layers, double share = kNvfp4Bf16LayerShare);
// NVFP4 on the wire: 4-bit E2M1 values plus one E4M3 scale per 16 (the same
// paper, section 2): 0.5 + 1/16 bytes per element.
inline constexpr double kNvfp4BytesPerElement = 0.5625;
inline constexpr double kNvfp4CastBytes = kBf16ReadBytes + 2.0 * kNvfp4BytesPerElement;

// Throws InvalidInput naming the GPU when it has no tensor rate for `p`
// (FP8 before Hopper, FP4 before Blackwell, TF32 before Ampere). `num_layers`:
// the model's, for the BF16-kept blocks of FP4. `fp32_matmul_tf32`: fp32 jobs
// only, the stack's SoftwareStack::fp32_matmul_tf32 (TF32 tensor cores, else
// FP32 SIMT); every fp32 matmul, the attention core's too, runs at that rate.
// `nvfp4_bf16_layer_share`: fp4 jobs only, the stack's
// SoftwareStack::nvfp4_bf16_layer_share (Nvfp4Bf16Layers).
PrecisionRates PrecisionRatesOf(const GpuProfile& g, Precision p, int64_t num_layers, bool fp32_matmul_tf32 = false,
                                double nvfp4_bf16_layer_share = kNvfp4Bf16LayerShare);

// Bytes per parameter element a sharded-weight all-gather moves: the stack's
// comm_param_bytes, or the quantized size where the stack gathers FP8/FP4
// weights (SoftwareStack::fp8_param_gather / fp4_param_gather) and the job runs that precision.
double ParamGatherBytes(const SoftwareStack& stack, Precision p);

// The stack as an fp32 job runs it (--precision fp32 on a mixed-precision
// stack): no bf16 working copy; parameters, gradients, wire traffic and saved
// activations 4 bytes; AdamW keeps its two fp32 moments beside the fp32
// parameters (no separate master copy). The same overrides an fp32 stack file
// states (tests/data/stacks/sailor-megatron-deepspeed-fp32.yaml). Other
// precisions return the stack unchanged.
SoftwareStack StackForPrecision(const SoftwareStack& stack, Precision p);

const char* ToString(Precision p);

}  // namespace parasim
