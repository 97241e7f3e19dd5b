// Checks of an emitted Megatron-LM command line against the pinned
// Megatron-LM revision (tests/testdata/frameworks/megatron_lm_args.tsv): names,
// kinds, types and choices; the validate_args cross-flag rules; and the model
// the flags describe, counted the way parasim counts. Shared by the planner's
// emitter tests and the CLI's end-to-end plan test.
#pragma once

#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "core/job_spec.h"
#include "core/model_spec.h"
#include "core/parallel_config.h"

namespace megatron_checks {

using namespace parasim;


struct ArgDef {
  std::string kind, type;
  std::set<std::string> choices;
};

// The rows of a tab-separated file under tests/testdata/frameworks/ (lines
// starting with '#' are comments), each padded to `columns` cells.
inline std::vector<std::vector<std::string>> FrameworkTsvRows(const std::string& file, size_t columns) {
  std::vector<std::vector<std::string>> rows;
  std::ifstream in(std::string(PARASIM_SOURCE_DIR) + "/tests/testdata/frameworks/" + file);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, '\t')) f.push_back(cell);
    f.resize(columns);
    rows.push_back(std::move(f));
  }
  return rows;
}

inline const std::map<std::string, ArgDef>& MegatronArgTable() {
  static const std::map<std::string, ArgDef> table = [] {
    std::map<std::string, ArgDef> t;
    for (const std::vector<std::string>& f : FrameworkTsvRows("megatron_lm_args.tsv", 4)) {
      ArgDef d{f[1], f[2], {}};
      std::stringstream cs(f[3]);
      std::string cell;
      while (std::getline(cs, cell, ',')) d.choices.insert(cell);
      t[f[0]] = d;
    }
    return t;
  }();
  return table;
}

// "--flag value" pairs of an emitted command line (values never start with "--").
inline std::vector<std::pair<std::string, std::string>> Parse(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> out;
  std::stringstream ss(text);
  std::string tok;
  while (ss >> tok) {
    if (tok == "\\") continue;
    if (tok.rfind("--", 0) == 0) {
      out.emplace_back(tok, "");
    } else {
      REQUIRE(!out.empty());
      out.back().second = tok;
    }
  }
  return out;
}

inline std::string Unquote(std::string v) {
  if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
  return v;
}

// Megatron's moe_freq_type list expression "([0]*3+[1]*58)" → the layer pattern.
inline std::vector<int> ExpandPattern(const std::string& expr) {
  std::vector<int> layers;
  std::string s = Unquote(expr);
  REQUIRE(s.front() == '(');
  REQUIRE(s.back() == ')');
  std::stringstream ss(s.substr(1, s.size() - 2));
  std::string run;
  while (std::getline(ss, run, '+')) {
    int value = 0, count = 0;
    REQUIRE(std::sscanf(run.c_str(), "[%d]*%d", &value, &count) == 2);
    layers.insert(layers.end(), static_cast<size_t>(count), value);
  }
  return layers;
}

inline void CheckNamesAndTypes(const std::vector<std::pair<std::string, std::string>>& args) {
  const auto& table = MegatronArgTable();
  std::set<std::string> seen;
  for (const auto& [flag, value] : args) {
    INFO(flag << " " << value);
    CHECK(seen.insert(flag).second);   // argparse keeps only the last of a repeated flag
    const auto it = table.find(flag);
    REQUIRE(it != table.end());
    const ArgDef& d = it->second;
    if (d.kind == "flag") {
      CHECK(value.empty());
      continue;
    }
    REQUIRE(!value.empty());
    if (d.type == "int") CHECK(value.find_first_not_of("0123456789") == std::string::npos);
    if (d.type == "float") CHECK_NOTHROW(std::stod(value));
    if (!d.choices.empty()) CHECK(d.choices.count(value) == 1);
  }
}

// validate_args (megatron/training/arguments.py) rules the emitted set can meet or break.
inline void CheckCrossFlagRules(const std::map<std::string, std::string>& a, const ParallelConfig& c, const ModelSpec& m,
                         const JobSpec& job) {
  auto has = [&](const char* f) { return a.count(f) == 1; };
  if (has("--sequence-parallel")) CHECK(c.tp > 1);
  if (has("--overlap-param-gather")) {
    CHECK((has("--use-distributed-optimizer") || has("--use-megatron-fsdp")));
    CHECK(has("--overlap-grad-reduce"));
  }
  if (has("--use-megatron-fsdp")) {
    CHECK(has("--use-distributed-optimizer"));
    CHECK(has("--no-gradient-accumulation-fusion"));
    CHECK(has("--data-parallel-sharding-strategy"));
    CHECK(a.at("--ckpt-format") == "fsdp_dtensor");
  }
  if (has("--ckpt-format") && a.at("--ckpt-format") == "fsdp_dtensor") CHECK(has("--use-megatron-fsdp"));
  if (has("--num-layers-per-virtual-pipeline-stage")) {
    CHECK(c.pp > 1);
    CHECK((m.num_layers / c.pp) % std::stoi(a.at("--num-layers-per-virtual-pipeline-stage")) == 0);
  }
  if (has("--num-query-groups")) {
    CHECK(has("--group-query-attention"));
    CHECK(m.num_attention_heads % std::stoi(a.at("--num-query-groups")) == 0);
  }
  for (const auto& [flag, value] : a) {
    if (flag.rfind("--moe-", 0) == 0) CHECK(has("--num-experts"));
    if (flag == "--q-lora-rank" || flag == "--kv-lora-rank" || flag == "--v-head-dim") {
      CHECK(has("--multi-latent-attention"));
    }
  }
  CHECK(!(has("--fp8-format") && has("--fp4-format")));
  // Emitter invariants beyond validate_args (Megatron Core Low-Precision Training Guide): quantized weight
  // gathers come with their recipe and a sharded optimizer; the BF16 layer counts with their switch.
  if (has("--fp8-param-gather")) {
    CHECK(has("--fp8-format"));
    CHECK((has("--use-distributed-optimizer") || has("--use-megatron-fsdp")));
  }
  if (has("--fp4-param-gather")) {
    CHECK(has("--fp4-format"));
    CHECK((has("--use-distributed-optimizer") || has("--use-megatron-fsdp")));
  }
  if (has("--num-layers-at-start-in-bf16") || has("--num-layers-at-end-in-bf16")) {
    CHECK(has("--first-last-layers-bf16"));
    CHECK(std::stoll(a.at("--num-layers-at-start-in-bf16")) + std::stoll(a.at("--num-layers-at-end-in-bf16")) <=
          m.num_layers);
  }
  if (has("--first-last-layers-bf16")) CHECK((has("--fp8-format") || has("--fp4-format")));
  if (has("--moe-layer-freq")) CHECK(ExpandPattern(a.at("--moe-layer-freq")).size() == static_cast<size_t>(m.num_layers));
  if (has("--no-rope-freq")) CHECK(m.num_layers % std::stoi(a.at("--no-rope-freq")) == 0);
  // Batch: grad accumulation = global / (micro × dp), dp = world / (tp·pp·cp).
  CHECK(job.global_batch % (std::stoll(a.at("--micro-batch-size")) * c.dp) == 0);
}

// Megatron-LM's low-precision rules (tests/testdata/frameworks/megatron_lm_precision_rules.tsv),
// one check per recorded id. `notes` = the emitter's notes (rules on the
// installed Transformer Engine can only be stated there). The flags a rule
// names must exist at the pinned commit.
struct PrecisionRule {
  std::string id, where, text;
};

inline std::vector<PrecisionRule> MegatronPrecisionRules() {
  std::vector<PrecisionRule> rules;
  for (const std::vector<std::string>& f : FrameworkTsvRows("megatron_lm_precision_rules.tsv", 3))
    rules.push_back({f[0], f[1], f[2]});
  return rules;
}

// Flags the precision checks read (each must be in the argument table).
inline const std::vector<std::string>& PrecisionRuleFlags() {
  static const std::vector<std::string> flags = {
      "--fp8-format", "--fp8-recipe", "--fp4-format", "--fp4-recipe", "--fp8-param-gather", "--fp4-param-gather",
      "--transformer-impl", "--use-torch-fsdp2", "--use-distributed-optimizer", "--use-megatron-fsdp",
      "--reuse-grad-buf-for-mxfp8-param-ag", "--inference-cuda-graph-scope", "--tensor-parallel-num-weight-shards",
      "--expert-tensor-parallel-num-weight-shards", "--position-embedding-type", "--optimizer-cpu-offload",
      "--delay-wgrad-compute", "--fine-grained-activation-offloading", "--first-last-layers-bf16",
      "--num-layers-at-start-in-bf16", "--num-layers-at-end-in-bf16", "--fp8-quantizer-factory",
      "--fp4-quantizer-factory", "--pipeline-model-parallel-size", "--num-layers"};
  return flags;
}

// Returns false for an id it has no check for.
inline bool CheckPrecisionRule(const std::string& id, const std::map<std::string, std::string>& a,
                               const std::vector<std::string>& notes) {
  auto has = [&](const char* f) { return a.count(f) == 1; };
  auto val = [&](const char* f, const char* fallback) { return has(f) ? a.at(f) : std::string(fallback); };
  auto num = [&](const char* f, int64_t fallback) { return has(f) ? std::stoll(a.at(f)) : fallback; };
  const bool fp8 = has("--fp8-format"), fp4 = has("--fp4-format");
  const std::string impl = val("--transformer-impl", "transformer_engine");   // TransformerConfig default
  const std::string recipe = val("--fp8-recipe", "delayed");                   // TransformerConfig default
  const bool gtp = num("--tensor-parallel-num-weight-shards", 1) > 1 || num("--expert-tensor-parallel-num-weight-shards", 1) > 1;
  auto noted = [&](const char* text) {
    for (const std::string& n : notes) {
      if (n.find(text) != std::string::npos) return true;
    }
    return false;
  };
  if (id == "fsdp2_drops_fp8_param_gather") {
    CHECK(!(has("--use-torch-fsdp2") && has("--fp8-param-gather")));
  } else if (id == "fsdp2_fp4_param_gather_te") {
    CHECK(!(has("--use-torch-fsdp2") && has("--fp4-param-gather")));
  } else if (id == "fp8_param_gather_sharded") {
    if (has("--fp8-param-gather"))
      CHECK((has("--use-distributed-optimizer") || has("--use-torch-fsdp2") || has("--use-megatron-fsdp")));
  } else if (id == "fp4_fp8_exclusive") {
    CHECK(!(fp4 && fp8));
  } else if (id == "fp4_param_gather_needs_fp4" || id == "tc_fp4_param_needs_fp4") {
    if (has("--fp4-param-gather")) CHECK(fp4);
  } else if (id == "fp4_needs_te_2_7") {
    if (fp4) CHECK(noted("Transformer Engine >= 2.7"));
  } else if (id == "mxfp8_inference_optimized_flashinfer") {
    CHECK(impl != "inference_optimized");   // a training command never selects the inference layers
  } else if (id == "megatron_fsdp_no_mxfp8_grad_buf_reuse") {
    CHECK(!(has("--use-megatron-fsdp") && has("--reuse-grad-buf-for-mxfp8-param-ag")));
  } else if (id == "inference_block_graph_fp8") {
    if (val("--inference-cuda-graph-scope", "") == "block" && fp8)
      CHECK((impl == "inference_optimized" && recipe == "mxfp8"));
  } else if (id == "gtp_fp4_needs_param_gather") {
    if (gtp && fp4) CHECK(has("--fp4-param-gather"));
  } else if (id == "gtp_mxfp8_needs_param_gather") {
    if (gtp && fp8 && recipe == "mxfp8") CHECK(has("--fp8-param-gather"));
  } else if (id == "gtp_mxfp8_needs_grad_buf_reuse") {
    if (gtp && fp8 && recipe == "mxfp8" && has("--fp8-param-gather")) CHECK(has("--reuse-grad-buf-for-mxfp8-param-ag"));
  } else if (id == "relative_position_needs_te") {
    if (val("--position-embedding-type", "learned_absolute") == "relative") CHECK(impl == "transformer_engine");
  } else if (id == "cpu_offload_fp8_param_gather_delayed") {
    if (has("--optimizer-cpu-offload")) CHECK((!has("--fp8-param-gather") || recipe == "delayed"));
  } else if (id == "delay_wgrad_needs_te") {
    if (has("--delay-wgrad-compute")) CHECK(impl == "transformer_engine");
  } else if (id == "activation_offloading_needs_te") {
    if (has("--fine-grained-activation-offloading")) CHECK(impl == "transformer_engine");
  } else if (id == "tc_delayed_no_bf16_layers") {
    if (fp8 && has("--first-last-layers-bf16")) CHECK(recipe != "delayed");
  } else if (id == "tc_fp8_bf16_layers_per_stage") {
    if (fp8 && has("--first-last-layers-bf16")) {
      const int64_t per_stage = num("--num-layers", 0) / num("--pipeline-model-parallel-size", 1);
      for (const char* f : {"--num-layers-at-start-in-bf16", "--num-layers-at-end-in-bf16"}) {
        CHECK(num(f, 1) >= 0);
        CHECK(num(f, 1) <= per_stage);
      }
    }
  } else if (id == "tc_fp8_custom_factory") {
    if (fp8 && recipe == "custom") CHECK(has("--fp8-quantizer-factory"));
  } else if (id == "tc_fp8_param_needs_fp8") {
    if (has("--fp8-param-gather")) CHECK(fp8);
  } else if (id == "tc_fp4_custom_factory") {
    if (fp4 && val("--fp4-recipe", "nvfp4") == "custom") CHECK(has("--fp4-quantizer-factory"));
  } else {
    return false;
  }
  return true;
}

// The model Megatron-LM builds from these flags, counted the way parasim counts.
inline ModelSpec ImpliedModel(const std::map<std::string, std::string>& a, int tp) {
  auto has = [&](const char* f) { return a.count(f) == 1; };
  auto num = [&](const char* f, int64_t fallback = 0) { return has(f) ? std::stoll(a.at(f)) : fallback; };
  ModelSpec m;
  m.num_layers = num("--num-layers");
  m.hidden_size = num("--hidden-size");
  m.ffn_hidden_size = num("--ffn-hidden-size");
  m.num_attention_heads = num("--num-attention-heads");
  m.num_kv_heads = num("--num-query-groups", m.num_attention_heads);
  m.head_dim = num("--kv-channels", 0);
  m.mlp = has("--swiglu") ? MlpKind::kSwiGlu : MlpKind::kGelu;
  m.norm = a.at("--normalization") == "RMSNorm" ? NormKind::kRmsNorm : NormKind::kLayerNorm;
  m.norm_bias = m.norm == NormKind::kLayerNorm;
  m.tied_embeddings = !has("--untie-embeddings-and-output-weights");
  m.linear_bias = !has("--disable-bias-linear");
  m.qkv_bias = m.linear_bias || has("--add-qkv-bias");
  m.qk_norm = has("--qk-layernorm") || has("--qk-l2-norm");
  m.qk_norm_weights = has("--qk-layernorm");
  m.attention_sinks = has("--softmax-type") && a.at("--softmax-type") == "learnable";
  const int64_t multiple = num("--make-vocab-size-divisible-by") * tp;
  m.vocab_size = (num("--vocab-size") + multiple - 1) / multiple * multiple;
  if (has("--multi-latent-attention")) {
    m.q_lora_rank = num("--q-lora-rank", 0);
    m.kv_lora_rank = num("--kv-lora-rank");
    m.qk_nope_head_dim = num("--qk-head-dim");
    m.qk_rope_head_dim = num("--qk-pos-emb-head-dim");
    m.v_head_dim = num("--v-head-dim");
  }
  if (has("--num-experts")) {
    m.num_experts = num("--num-experts");
    m.experts_per_token = num("--moe-router-topk");
    m.moe_ffn_hidden_size = num("--moe-ffn-hidden-size");
    m.router_bias = has("--moe-router-enable-expert-bias");
    if (has("--moe-shared-expert-intermediate-size")) {
      m.num_shared_experts = 1;
      m.shared_expert_ffn_hidden_size = num("--moe-shared-expert-intermediate-size");
    }
  }
  return m;
}

// MoE-layer count an emitted --moe-layer-freq implies (all layers without it).
inline int64_t ImpliedMoeLayers(const std::map<std::string, std::string>& a, int64_t layers) {
  if (a.count("--moe-layer-freq") == 0) return layers;
  int64_t n = 0;
  for (int v : ExpandPattern(a.at("--moe-layer-freq"))) n += v;
  return n;
}

// The parameter count of the model the flags build; dense layers of an MoE
// model (DeepSeek's first, Maverick's alternate) only need how many.
inline int64_t ImpliedParameterCount(const std::map<std::string, std::string>& a, int tp) {
  ModelSpec implied = ImpliedModel(a, tp);
  const int64_t moe_layers = ImpliedMoeLayers(a, implied.num_layers);
  if (implied.IsMoe() && moe_layers < implied.num_layers) implied.first_dense_layers = implied.num_layers - moe_layers;
  return implied.ParameterCount();
}

}  // namespace megatron_checks
