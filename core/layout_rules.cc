#include "core/layout_rules.h"

#include "core/job_spec.h"
#include "core/model_spec.h"

namespace parasim {
namespace {

std::string Heads(const ModelSpec& m, const JobSpec&, const Layout& l) {
  if (m.num_attention_heads % l.tp != 0) {
    return StrCat("tp=", l.tp, " does not divide the ", m.num_attention_heads, " attention heads");
  }
  if (m.KvHeads() % l.tp != 0) {
    return StrCat("tp=", l.tp, " does not divide the ", m.KvHeads(),
                  " KV heads (Megatron needs num_query_groups % tp == 0)");
  }
  return {};
}

std::string Ffn(const ModelSpec& m, const JobSpec&, const Layout& l) {
  const int64_t ffn = m.IsMoe() ? m.moe_ffn_hidden_size : m.ffn_hidden_size;
  if (ffn > 0 && ffn % l.tp != 0) return StrCat("tp=", l.tp, " does not divide the FFN width ", ffn);
  return {};
}

std::string Layers(const ModelSpec& m, const JobSpec&, const Layout& l) {
  if (l.pp > m.num_layers) return StrCat("pp=", l.pp, " exceeds the ", m.num_layers, " layers");
  return {};
}

std::string Sequence(const ModelSpec&, const JobSpec& j, const Layout& l) {
  if (l.cp > 1 && j.seq_len % (2 * l.cp) != 0) {
    return StrCat("cp=", l.cp, ": the sequence ", j.seq_len,
                  " must split into 2·cp equal chunks (causal load balancing)");
  }
  return {};
}

std::string Batch(const ModelSpec&, const JobSpec& j, const Layout& l) {
  if (j.global_batch % l.dp != 0) return StrCat("global batch ", j.global_batch, " is not a multiple of dp = ", l.dp);
  return {};
}

std::string ExpertsNeeded(const ModelSpec& m, const JobSpec&, const Layout& l) {
  if (l.ep > 1 && !m.IsMoe()) return "ep>1 needs a mixture-of-experts model";
  return {};
}

std::string Experts(const ModelSpec& m, const JobSpec&, const Layout& l) {
  if (m.IsMoe() && m.num_experts % l.ep != 0) {
    return StrCat("ep=", l.ep, " does not divide ", m.num_experts, " experts");
  }
  return {};
}

std::string ExpertRanks(const ModelSpec&, const JobSpec&, const Layout& l) {
  if (l.dp % l.ep != 0) return StrCat("ep=", l.ep, " does not divide dp=", l.dp);
  return {};
}

}  // namespace

const std::vector<LayoutRule>& LayoutRules() {
  static const std::vector<LayoutRule> kRules = {
      {"divisibility: attention heads % tp", "tp", Heads},
      {"divisibility: ffn hidden % tp", "tp", Ffn},
      {"layers: pp above the layers", "pp", Layers},
      {"divisibility: seq_len % (2 cp)", "cp", Sequence},
      {"divisibility: global batch % dp", "dp", Batch},
      {"experts: ep > 1 on a dense model", "ep", ExpertsNeeded},
      {"divisibility: experts % ep", "ep", Experts},
      {"divisibility: dp % ep", "ep", ExpertRanks},
  };
  return kRules;
}

const LayoutRule* FirstBrokenLayoutRule(const ModelSpec& model, const JobSpec& job, const Layout& layout) {
  for (const LayoutRule& rule : LayoutRules()) {
    if (!rule.problem(model, job, layout).empty()) return &rule;
  }
  return nullptr;
}

std::vector<Issue> LayoutIssues(const ModelSpec& model, const JobSpec& job, const Layout& layout,
                                const std::string& where) {
  std::vector<Issue> out;
  for (const LayoutRule& rule : LayoutRules()) {
    std::string problem = rule.problem(model, job, layout);
    if (!problem.empty()) out.push_back(Issue{where, rule.key, 0, 0, std::move(problem)});
  }
  return out;
}

}  // namespace parasim
