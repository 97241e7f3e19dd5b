// Shared by the NeMo throughput tests (throughput_nemo_h100_test.cc,
// throughput_nemo_bf16_fp8_test.cc): the model shapes of NeMo's recipes that
// have no parasim preset, and one published row priced through tier A as its
// NeMo recipe sets it (stack megatron-core, cluster dgx-h100 at gpus/8 nodes,
// distributed optimizer = zero1, sequence parallel when tp > 1, the recipe's
// recompute, gradient dtype and fp8_params, interleaved 1F1B when vp > 1).
#pragma once

#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "core/loaders.h"
#include "core/model_spec.h"
#include "core/parallel_config.h"
#include "cost_model/evaluator.h"
#include "cost_model/software_stack.h"

namespace parasim::testing {

// Models without a parasim preset, as NeMo's recipes define them. GPT-3
// 5B/20B (NeMo-Framework-Launcher 26e42fa conf/training/gpt3/{5b,20b}.yaml:
// GPT-2 layers, 4h GELU MLP with biases, tied GPT-2 BPE vocabulary of 50,257,
// learned positions); Nemotron 8B/22B/340B (launcher nemotron/*.yaml) and
// Nemotron-4 15B (dgxc-benchmarking 35a9aec nemotron/nemotron4-15b-synth.yaml):
// squared-ReLU 2-matrix MLP, layernorm1p, no biases, RoPE, untied 256k
// vocabulary, grouped queries for 15B and 340B. Squared ReLU has the GELU
// MLP's two matrices, so it is priced as that shape. llama3.1-405b-dgxc: the
// DGX Cloud recipe's 405B (dgxc-benchmarking 35a9aec
// llama3.1/llama3.1_405b.yaml: num_query_groups 16, GPT2BPETokenizer).
inline ModelSpec NemoModel(const std::string& name) {
  if (name.rfind("gpt3-", 0) == 0 && name != "gpt3-175b") {
    const bool big = name == "gpt3-20b";
    ModelSpec m = LoadModel("gpt3-175b");
    m.name = name;
    m.source = "NeMo-Framework-Launcher 26e42fa conf/training/" + std::string(big ? "gpt3/20b.yaml" : "gpt3/5b.yaml");
    m.num_layers = big ? 44 : 24;
    m.hidden_size = big ? 6144 : 4096;
    m.num_attention_heads = big ? 48 : 32;
    m.num_kv_heads = m.num_attention_heads;
    m.ffn_hidden_size = 4 * m.hidden_size;
    return m;
  }
  if (name.rfind("nemotron", 0) == 0) {
    struct Shape {
      const char* name;
      int layers, hidden, heads, kv, ffn;
      const char* source;
    };
    static const Shape kShapes[] = {
        {"nemotron-8b", 32, 4096, 32, 32, 16384, "NeMo-Framework-Launcher 26e42fa conf/training/nemotron"},
        {"nemotron-22b", 40, 6144, 48, 48, 24576, "NeMo-Framework-Launcher 26e42fa conf/training/nemotron"},
        {"nemotron-340b", 96, 18432, 96, 8, 73728, "NeMo-Framework-Launcher 26e42fa conf/training/nemotron"},
        {"nemotron4-15b", 32, 6144, 48, 8, 24576, "dgxc-benchmarking 35a9aec nemotron/nemotron4-15b-synth.yaml"}};
    for (const Shape& s : kShapes) {
      if (name != s.name) continue;
      ModelSpec m;
      m.name = name;
      m.source = s.source;
      m.num_layers = s.layers;
      m.hidden_size = s.hidden;
      m.num_attention_heads = s.heads;
      m.num_kv_heads = s.kv;
      m.ffn_hidden_size = s.ffn;
      m.vocab_size = 256000;
      m.mlp = MlpKind::kGelu;
      m.norm = NormKind::kLayerNorm;
      m.norm_bias = true;
      return m;
    }
  }
  if (name == "llama3.1-405b-dgxc") {
    ModelSpec m = LoadModel("llama3-405b");
    m.name = name;
    m.source = "dgxc-benchmarking 35a9aec llama3.1/llama3.1_405b.yaml";
    m.num_kv_heads = 16;
    m.vocab_size = 50257;
    return m;
  }
  return LoadModel(name);
}

// One CSV row (columns gpus, gbs, mbs, seq_len, tp, pp, cp, vp, recompute,
// grad_sync_dtype, fp8_params) priced at `precision` on `stack`; `cfg` gets
// the layout text. The caller checks gpus % (tp·pp·cp) == 0.
inline Report PriceNemoRecipeRow(const std::map<std::string, std::string>& r, Precision precision,
                                 const SoftwareStack& stack, std::string* cfg) {
  const int gpus = std::stoi(r.at("gpus")), tp = std::stoi(r.at("tp")), pp = std::stoi(r.at("pp")),
            cp = std::stoi(r.at("cp")), vp = std::stoi(r.at("vp"));
  JobSpec job;
  job.global_batch = std::stoll(r.at("gbs"));
  job.seq_len = std::stoll(r.at("seq_len"));
  job.precision = precision;
  job.stack = stack.name;
  *cfg = "dp=" + std::to_string(gpus / (tp * pp * cp)) + ",tp=" + r.at("tp") + ",pp=" + r.at("pp") +
         ",cp=" + r.at("cp") + ",vpp=" + r.at("vp") + ",mbs=" + r.at("mbs") +
         ",sharding=zero1,recompute=" + r.at("recompute") + ",sp=" + (tp > 1 ? "on" : "off") +
         ",schedule=" + (vp > 1 ? "interleaved" : "1f1b");
  // The recipe's gradient dtype: bf16 main gradients (grad_reduce_in_fp32
  // False) halve the gradient buffer and the bytes reduced per gradient.
  // Its fp8_params: the distributed optimizer all-gathers FP8 weights.
  SoftwareStack row_stack = stack;
  if (r.at("grad_sync_dtype") == "bf16") row_stack.grad_bytes = row_stack.comm_grad_bytes = 2;
  row_stack.fp8_param_gather = r.at("fp8_params") == "true";
  const ClusterSpec cluster = LoadCluster("dgx-h100", (gpus + 7) / 8);
  return AnalyticalEvaluator(NemoModel(r.at("model")), cluster, job, row_stack).Evaluate(ParseParallelConfig(*cfg));
}

// A row its CSV marks as not priceable ("expressible" non-empty): counted in
// `count` and, when printing, listed with its reason.
inline bool SkipInexpressible(const std::map<std::string, std::string>& r, const std::string& what, bool print,
                              const char* label, int* count) {
  if (r.at("expressible").empty()) return false;
  ++*count;
  if (print) std::printf("%s: %s: %s\n", label, what.c_str(), r.at("expressible").c_str());
  return true;
}

// |ratio - 1| of each predicted/measured ratio (the tables' error measure).
inline std::vector<double> AbsDeviations(const std::vector<double>& ratios) {
  std::vector<double> out;
  for (double v : ratios) out.push_back(std::fabs(v - 1));
  return out;
}

// The report's memory per GPU by part, on one line of a printed table.
inline void PrintMemoryBreakdown(const Report& rep, const char* lead) {
  std::printf("%s", lead);
  for (const auto& [k, v] : rep.memory_breakdown_bytes) std::printf(" %s %.1f", k.c_str(), v / 1e9);
  std::printf("\n");
}

}  // namespace parasim::testing
