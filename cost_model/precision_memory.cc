#include "cost_model/precision_memory.h"

#include <algorithm>

#include "cost_model/precision.h"

namespace parasim {

double QuantizedInputBytes(Precision p, bool block_scaled_fp8) {
  switch (p) {
    case Precision::kBf16: return 2.0;
    case Precision::kFp8: return block_scaled_fp8 ? kMxfp8Bytes : kFp8TensorScaledBytes;
    case Precision::kFp4: return kNvfp4BytesPerElement;
    case Precision::kFp32: return 4.0;   // fp32 training saves fp32 inputs
  }
  return 2.0;
}

double QuantizedWeightCacheBytes(const SoftwareStack& stack, Precision p, bool block_scaled_fp8,
                                 bool primary_quantized) {
  if (p == Precision::kBf16 || p == Precision::kFp32 || !stack.quantized_weight_cache || primary_quantized) return 0.0;
  return 2.0 * QuantizedInputBytes(p, block_scaled_fp8);
}

LinearInputElements LayerLinearInputElements(const ModelSpec& m) {
  const double h = static_cast<double>(m.hidden_size);
  const double ad = static_cast<double>(m.num_attention_heads * m.HeadDim());
  const double f = SavedMlpWidth(m);
  LinearInputElements e;
  e.replicated = 2.0 * h;
  e.attention_out = ad;
  e.split = ad + f;
  return e;
}

ActivationPerToken QuantizedActivations(const ActivationPerToken& a, const ModelSpec& model,
                                        const SoftwareStack& stack, Precision p, bool block_scaled_fp8,
                                        double bf16_layer_share) {
  if (p == Precision::kBf16 || p == Precision::kFp32 || !stack.saves_quantized_inputs) return a;
  const double saved = std::max(0.0, stack.activation_bytes - QuantizedInputBytes(p, block_scaled_fp8));
  const double per_element = saved * (1.0 - std::clamp(bf16_layer_share, 0.0, 1.0));
  const LinearInputElements e = LayerLinearInputElements(model);
  ActivationPerToken out = a;
  out.replicated -= e.replicated * per_element;
  out.split -= e.split * per_element;
  out.attention_out -= e.attention_out * per_element;
  return out;
}

}  // namespace parasim
