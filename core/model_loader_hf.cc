// Readers for current Hugging Face layouts. Field names and their meaning are
// those of the transformers configuration classes (configuration_qwen3.py,
// configuration_gemma2.py, configuration_deepseek_v3.py, configuration_llama4.py,
// configuration_gpt_oss.py); the weights they imply are counted in model_spec.cc.
#include <algorithm>

#include "core/internal/hf_families.h"
#include "core/internal/json_fields.h"

namespace parasim::internal {

// Fields every decoder-only config spells the same way.
void ReadCommon(JsonFields& f, ModelSpec& m, bool tied_default) {
  m.hidden_size = f.Int("hidden_size");
  m.num_layers = f.Int("num_hidden_layers");
  m.num_attention_heads = f.Int("num_attention_heads");
  m.num_kv_heads = f.Int("num_key_value_heads", m.num_attention_heads);
  m.head_dim = f.Int("head_dim", 0);
  m.vocab_size = f.Int("vocab_size");
  m.tied_embeddings = f.Bool("tie_word_embeddings", tied_default);
  m.max_position_embeddings = f.Int("max_position_embeddings", 0);
  m.norm_eps = f.Double("rms_norm_eps", 0.0);
  m.rope_theta = f.Double("rope_theta", 0.0);
  m.mlp = MlpKind::kSwiGlu;
  m.norm = NormKind::kRmsNorm;
  m.position = PositionKind::kRope;
}

namespace {


// Number of entries of `layer_types` equal to `value`; -1 when absent.
int64_t CountLayerTypes(JsonFields& f, const char* value) {
  if (!f.Has("layer_types")) return -1;
  const nlohmann::json& types = f.Raw("layer_types");
  if (!types.is_array()) {
    f.AddIssue("layer_types", "expected an array of strings");
    return -1;
  }
  return std::count_if(types.begin(), types.end(), [&](const nlohmann::json& t) { return t == value; });
}

// Layers i (0-based) with (i + 1) % period != 0: the local layers of an
// "every period-th layer is global" pattern.
int64_t LocalLayersOfPattern(int64_t layers, int64_t period) {
  if (period <= 1) return 0;
  return layers - layers / period;
}

void ReadQwen3(JsonFields& f, ModelSpec& m, bool moe) {
  ReadCommon(f, m, false);
  m.qkv_bias = f.Bool("attention_bias", false);
  m.qk_norm = true;   // Qwen3Attention: q_norm, k_norm (RMSNorm over head_dim)
  m.ffn_hidden_size = f.Int("intermediate_size");
  if (!moe) return;
  m.num_experts = f.Int("num_experts");
  m.experts_per_token = f.Int("num_experts_per_tok");
  m.moe_ffn_hidden_size = f.Int("moe_intermediate_size");
  m.moe_layer_interval = f.Int("decoder_sparse_step", 1);
  if (f.Has("mlp_only_layers") && !f.Raw("mlp_only_layers").empty()) {
    f.AddIssue("mlp_only_layers", "dense layers at arbitrary positions are not supported (only an empty list)");
  }
}

void ReadGemma(JsonFields& f, ModelSpec& m, bool gemma3) {
  ReadCommon(f, m, true);
  m.gated_gelu = true;        // GemmaMLP: gelu_pytorch_tanh(gate) * up
  m.norms_per_layer = 4;      // input, post-attention, pre- and post-feedforward
  m.ffn_hidden_size = f.Int("intermediate_size");
  m.qkv_bias = f.Bool("attention_bias", false);
  m.linear_bias = m.qkv_bias;
  m.local_attention = LocalAttention::kSliding;
  m.attention_window = f.Int("sliding_window", 4096);
  // Gemma 2: even layers slide (1:1); Gemma 3: every sliding_window_pattern-th layer is global.
  const int64_t from_types = CountLayerTypes(f, "sliding_attention");
  m.local_attention_layers = from_types >= 0 ? from_types
                             : gemma3      ? LocalLayersOfPattern(m.num_layers, f.Int("sliding_window_pattern", 6))
                                           : (m.num_layers + 1) / 2;
  if (gemma3) {
    m.qk_norm = true;
  } else {
    m.attn_logit_softcap = f.Double("attn_logit_softcapping", 0.0);
    m.final_logit_softcap = f.Double("final_logit_softcapping", 0.0);
  }
}

void ReadDeepSeek(JsonFields& f, ModelSpec& m, bool v3) {
  ReadCommon(f, m, false);
  m.ffn_hidden_size = f.Int("intermediate_size");
  m.q_lora_rank = f.Has("q_lora_rank") ? f.Int("q_lora_rank") : 0;   // null in V2-Lite: direct Q
  m.kv_lora_rank = f.Int("kv_lora_rank");
  m.qk_nope_head_dim = f.Int("qk_nope_head_dim");
  m.qk_rope_head_dim = f.Int("qk_rope_head_dim");
  m.v_head_dim = f.Int("v_head_dim");
  m.head_dim = m.qk_nope_head_dim + m.qk_rope_head_dim;
  m.num_kv_heads = m.num_attention_heads;   // every head has its own K and V after the up-projection
  m.num_experts = f.Int("n_routed_experts", 0);
  if (m.num_experts > 0) {
    m.experts_per_token = f.Int("num_experts_per_tok");
    m.moe_ffn_hidden_size = f.Int("moe_intermediate_size");
    m.num_shared_experts = f.Int("n_shared_experts", 0);
    m.shared_expert_ffn_hidden_size = m.moe_ffn_hidden_size;
    m.first_dense_layers = f.Int("first_k_dense_replace", 0);
    m.moe_layer_interval = f.Int("moe_layer_freq", 1);
  }
  if (v3) {
    m.router_bias = true;   // noaux_tc: e_score_correction_bias, one per routed expert
    m.mtp_layers = f.Int("num_nextn_predict_layers", 0);
  }
}

// Llama 4 vision encoder + adapter + projector (modeling_llama4.py), counted
// so a multimodal checkpoint's total can be compared with its published size.
int64_t Llama4VisionParameters(JsonFields& v, int64_t text_hidden) {
  const int64_t h = v.Int("hidden_size"), inner = v.Int("intermediate_size"), layers = v.Int("num_hidden_layers");
  const int64_t patch = v.Int("patch_size"), image = v.Int("image_size"), channels = v.Int("num_channels", 3);
  const int64_t proj_in = v.Int("projector_input_dim"), proj_out = v.Int("projector_output_dim");
  const int64_t out = v.Int("vision_output_dim");
  const double shuffle = v.Double("pixel_shuffle_ratio", 0.5);
  if (patch <= 0 || image <= 0 || shuffle <= 0) return 0;
  const int64_t side = image / patch;
  const int64_t adapter_in = static_cast<int64_t>(static_cast<double>(h) / (shuffle * shuffle) + 0.5);
  const int64_t layer = 4 * (h * h + h) + (h * inner + inner) + (inner * h + h) + 4 * h;
  return h /*class embedding*/ + (side * side + 1) * h + channels * patch * patch * h + 4 * h + layers * layer +
         adapter_in * proj_in + proj_in * proj_out + out * text_hidden;
}

void ReadLlama4Text(JsonFields& f, ModelSpec& m) {
  ReadCommon(f, m, false);
  m.num_experts = f.Int("num_local_experts");
  m.experts_per_token = f.Int("num_experts_per_tok");
  m.moe_ffn_hidden_size = f.Int("intermediate_size");
  m.ffn_hidden_size = f.Int("intermediate_size_mlp");
  m.num_shared_experts = 1;   // Llama4TextMoe.shared_expert, as wide as a routed one
  m.shared_expert_ffn_hidden_size = m.moe_ffn_hidden_size;
  m.moe_layer_interval = f.Int("interleave_moe_layer_step", 1);
  m.qk_norm = f.Bool("use_qk_norm", false);
  m.qk_norm_weights = false;  // L2 norm, no weights
  // RoPE layers attend within attention_chunk_size chunks; NoPE layers see everything.
  m.local_attention = LocalAttention::kChunked;
  m.attention_window = f.Int("attention_chunk_size", 8192);
  if (f.Has("no_rope_layers") && f.Raw("no_rope_layers").is_array()) {
    const nlohmann::json& rope = f.Raw("no_rope_layers");
    m.local_attention_layers = std::count_if(rope.begin(), rope.end(), [](const nlohmann::json& x) { return x == 1; });
  } else {
    m.local_attention_layers = LocalLayersOfPattern(m.num_layers, f.Int("no_rope_layer_interval", 4));
  }
}

void ReadGptOss(JsonFields& f, ModelSpec& m) {
  ReadCommon(f, m, false);
  m.qkv_bias = f.Bool("attention_bias", true);
  m.linear_bias = m.qkv_bias;   // o_proj and expert projections carry biases
  m.attention_sinks = true;
  m.router_bias = true;
  m.num_experts = f.Int("num_local_experts");
  m.experts_per_token = f.Has("num_experts_per_tok") ? f.Int("num_experts_per_tok") : f.Int("experts_per_token");
  m.moe_ffn_hidden_size = f.Int("intermediate_size");
  m.local_attention = LocalAttention::kSliding;
  m.attention_window = f.Int("sliding_window", 128);
  const int64_t sliding = CountLayerTypes(f, "sliding_attention");
  m.local_attention_layers = sliding >= 0 ? sliding : (m.num_layers + 1) / 2;
}

// The text model of a multimodal config sits under text_config.
const nlohmann::json& TextConfig(const nlohmann::json& root) {
  return root.contains("text_config") && root["text_config"].is_object() ? root["text_config"] : root;
}

}  // namespace

const char* ModernFamilyNames() {
  return "qwen3, qwen3_moe, gemma2, gemma3, gemma3_text, deepseek_v2, deepseek_v3, llama4, llama4_text, gpt_oss";
}

bool LoadModernFamily(const nlohmann::json& root, const std::string& family, const std::string& path,
                      IssueList& issues, ModelSpec& m) {
  const nlohmann::json& text = TextConfig(root);
  JsonFields f(text, path, issues, &text == &root ? "" : "text_config.");
  if (family == "qwen3" || family == "qwen3_moe") {
    ReadQwen3(f, m, family == "qwen3_moe");
  } else if (family == "gemma2" || family == "gemma3" || family == "gemma3_text") {
    ReadGemma(f, m, family != "gemma2");
  } else if (family == "deepseek_v2" || family == "deepseek_v3") {
    ReadDeepSeek(f, m, family == "deepseek_v3");
  } else if (family == "llama4" || family == "llama4_text") {
    ReadLlama4Text(f, m);
    if (root.contains("vision_config") && root["vision_config"].is_object()) {
      JsonFields v(root["vision_config"], path, issues, "vision_config.");
      m.vision_parameters = Llama4VisionParameters(v, m.hidden_size);
    }
  } else if (family == "gpt_oss") {
    ReadGptOss(f, m);
  } else {
    return false;
  }
  return true;
}

}  // namespace parasim::internal
