// The two models of Sailor's measured runs (github.com/eth-easl/sailor
// cf2c8e3, sailor/Planner/simulations/configs/*.json): GPT-style layers (4h
// GELU MLP, LayerNorm, learned positions). OPT's head is its own
// ColumnParallelLinear (third_party/Megatron-DeepSpeed/megatron/model/
// opt_model.py, OPTLMHead); GPT-Neo keeps a tied head. For the throughput
// reference test (tests/planner/throughput_ratios_test.cc) and the memory
// reference test (tests/cost_model/memory_references_test.cc).
#pragma once

#include <string>

#include "core/model_spec.h"

namespace parasim::testing {

inline ModelSpec SailorModel(const std::string& name) {
  ModelSpec m;
  m.name = name;
  const bool neo = name == "gpt-neo-2.7b";
  m.hidden_size = neo ? 2560 : 1024;
  m.num_layers = neo ? 32 : 24;
  m.num_attention_heads = neo ? 32 : 16;
  m.num_kv_heads = m.num_attention_heads;
  m.ffn_hidden_size = 4 * m.hidden_size;
  m.vocab_size = neo ? 128256 : 50272;
  m.mlp = MlpKind::kGelu;
  m.norm = NormKind::kLayerNorm;
  m.tied_embeddings = neo;
  return m;
}

}  // namespace parasim::testing
