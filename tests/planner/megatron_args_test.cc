// planner: every Megatron-LM argument the emitter writes exists in the pinned
// Megatron-LM revision with the right kind, type and choices
// (tests/testdata/frameworks/megatron_lm_args.tsv), the emitted set obeys the
// cross-flag rules of its validate_args, and the model the flags describe has
// the parameter count parasim planned for, across the whole search space.
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "core/loaders.h"
#include "planner/launch_flags.h"

using namespace parasim;
using namespace parasim::planner;

namespace {

struct ArgDef {
  std::string kind, type;
  std::set<std::string> choices;
};

const std::map<std::string, ArgDef>& MegatronArgTable() {
  static const std::map<std::string, ArgDef> table = [] {
    std::map<std::string, ArgDef> t;
    std::ifstream in(std::string(PARASIM_SOURCE_DIR) + "/tests/testdata/frameworks/megatron_lm_args.tsv");
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty() || line[0] == '#') continue;
      std::vector<std::string> f;
      std::stringstream ss(line);
      std::string cell;
      while (std::getline(ss, cell, '\t')) f.push_back(cell);
      f.resize(4);
      ArgDef d{f[1], f[2], {}};
      std::stringstream cs(f[3]);
      while (std::getline(cs, cell, ',')) d.choices.insert(cell);
      t[f[0]] = d;
    }
    return t;
  }();
  return table;
}

// "--flag value" pairs of an emitted command line (values never start with "--").
std::vector<std::pair<std::string, std::string>> Parse(const std::string& text) {
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

std::string Unquote(std::string v) {
  if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
  return v;
}

// Megatron's moe_freq_type list expression "([0]*3+[1]*58)" → the layer pattern.
std::vector<int> ExpandPattern(const std::string& expr) {
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

void CheckNamesAndTypes(const std::vector<std::pair<std::string, std::string>>& args) {
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
void CheckCrossFlagRules(const std::map<std::string, std::string>& a, const ParallelConfig& c, const ModelSpec& m,
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
  if (has("--moe-layer-freq")) CHECK(ExpandPattern(a.at("--moe-layer-freq")).size() == static_cast<size_t>(m.num_layers));
  if (has("--no-rope-freq")) CHECK(m.num_layers % std::stoi(a.at("--no-rope-freq")) == 0);
  // Batch: grad accumulation = global / (micro × dp), dp = world / (tp·pp·cp).
  CHECK(job.global_batch % (std::stoll(a.at("--micro-batch-size")) * c.dp) == 0);
}

// The model Megatron-LM builds from these flags, counted the way parasim counts.
ModelSpec ImpliedModel(const std::map<std::string, std::string>& a, int tp) {
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
int64_t ImpliedMoeLayers(const std::map<std::string, std::string>& a, int64_t layers) {
  if (a.count("--moe-layer-freq") == 0) return layers;
  int64_t n = 0;
  for (int v : ExpandPattern(a.at("--moe-layer-freq"))) n += v;
  return n;
}

std::vector<ModelSpec> Models() {
  const std::string hf = std::string(PARASIM_SOURCE_DIR) + "/tests/testdata/hf/";
  std::vector<ModelSpec> models = {LoadModel("llama3-8b"), LoadModel("gpt3-175b")};
  for (const char* d : {"qwen3-30b-a3b", "deepseek-v3", "gemma-2-9b", "gpt-oss-20b", "llama-4-maverick",
                        "qwen2.5-7b", "mixtral-8x7b"}) {
    models.push_back(LoadModel(hf + d));
  }
  return models;
}

}  // namespace

TEST_CASE("planner: Megatron-LM flags exist, type-check and obey validate_args across the search space",
          "[planner][launch]") {
  REQUIRE(MegatronArgTable().size() > 500);
  REQUIRE(MegatronArgTable().count("--use-custom-fsdp") == 0);   // the old name is gone
  const char* shardings[] = {"ddp", "zero1", "zero2-replicated", "zero2", "zero3", "hsdp:4"};
  const char* recomputes[] = {"none", "selective", "full"};
  const char* pipelines[] = {"pp=1", "pp=4,schedule=1f1b", "pp=4,vpp=2,schedule=interleaved", "pp=4,schedule=gpipe",
                             "pp=4,schedule=zb-h1"};
  int checked = 0;
  for (const ModelSpec& m : Models()) {
    for (const char* sh : shardings) {
      for (const char* rc : recomputes) {
        for (const char* pl : pipelines) {
          for (int tp : {1, 2}) {
            for (Precision p : {Precision::kBf16, Precision::kFp8}) {
              const std::string spec = StrCat("dp=8,tp=", tp, ",", pl, ",mbs=2,sharding=", sh, ",recompute=", rc,
                                              tp > 1 ? ",sp=on" : "", m.IsMoe() ? ",ep=4" : "");
              INFO(m.name << " " << spec);
              const ParallelConfig c = ParseParallelConfig(spec);
              JobSpec job;
              job.global_batch = 8 * 2 * 4;
              job.seq_len = 4096;
              job.precision = p;
              const LaunchFlags f = EmitLaunchFlags(Framework::kMegatron, c, m, job);
              CHECK(f.target.find(kMegatronLmCommit) != std::string::npos);
              const auto args = Parse(f.text);
              CheckNamesAndTypes(args);
              const std::map<std::string, std::string> map(args.begin(), args.end());
              CheckCrossFlagRules(map, c, m, job);
              ++checked;
            }
          }
        }
      }
    }
  }
  CHECK(checked == 9 * 6 * 3 * 5 * 2 * 2);
}

TEST_CASE("planner: the model Megatron-LM builds from the flags has the planned parameter count",
          "[planner][launch]") {
  for (const ModelSpec& m : Models()) {
    for (int tp : {1, 8}) {
      INFO(m.name << " tp=" << tp);
      const ParallelConfig c = ParseParallelConfig(StrCat("dp=4,tp=", tp, ",mbs=1,sharding=zero1"));
      JobSpec job;
      job.global_batch = 4;
      job.seq_len = 4096;
      const LaunchFlags f = EmitLaunchFlags(Framework::kMegatron, c, m, job);
      const auto args = Parse(f.text);
      const std::map<std::string, std::string> a(args.begin(), args.end());
      ModelSpec implied = ImpliedModel(a, tp);
      const int64_t moe_layers = ImpliedMoeLayers(a, implied.num_layers);
      // Dense layers in an MoE model sit first (DeepSeek) or alternate (Maverick): the count only needs how many.
      if (implied.IsMoe() && moe_layers < implied.num_layers) {
        implied.first_dense_layers = implied.num_layers - moe_layers;
      }
      const int64_t padding = (MegatronPaddedVocab(m.vocab_size, tp) - m.vocab_size) * m.hidden_size *
                              (m.tied_embeddings ? 1 : 2);
      const double planned = static_cast<double>(m.ParameterCount() + padding);
      // Exact where Megatron expresses every weight; Gemma's extra norms, gpt-oss's router bias and learned
      // positions of GPT-3 (no --max-position-embeddings count here) differ by < 0.1 %.
      CHECK_THAT(static_cast<double>(implied.ParameterCount()), Catch::Matchers::WithinRel(planned, 1e-3));
      if (m.name == "llama3-8b" || m.name == "qwen3-30b-a3b" || m.name == "deepseek-v3" ||
          m.name == "llama-4-maverick") {
        CHECK(implied.ParameterCount() == m.ParameterCount() + padding);
      }
    }
  }
  // Llama-3's 128,256 becomes 129,024 at tp 8, and the output says so.
  CHECK(MegatronPaddedVocab(128256, 8) == 129024);
  const LaunchFlags f = EmitLaunchFlags(Framework::kMegatron, ParseParallelConfig("dp=1,tp=8,mbs=1"),
                                        LoadModel("llama3-8b"), JobSpec{});
  bool stated = false;
  for (const std::string& n : f.notes) stated = stated || n.find("128256 -> 129024") != std::string::npos;
  CHECK(stated);
}
