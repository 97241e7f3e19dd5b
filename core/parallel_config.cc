#include "core/parallel_config.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>

#include "core/internal/yaml_reader.h"
#include "core/job_spec.h"
#include "core/layout_rules.h"
#include "core/loaders.h"
#include "core/model_spec.h"

namespace parasim {
namespace {

const char* kOrderDims[] = {"tp", "cp", "ep", "dp", "pp"};

bool ParseInt(const std::string& text, int& out) {
  if (text.empty() || text.size() > 9) return false;
  for (char c : text) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  out = std::stoi(text);
  return true;
}

// Applies one key=value; problems are added to `issues`.
void Apply(ParallelConfig& c, const std::string& key, const std::string& value, const std::string& where,
           IssueList& issues) {
  auto bad = [&](const std::string& why) { issues.Add(where, key, StrCat("'", value, "' ", why)); };
  auto positive = [&](int& field) {
    int v = 0;
    if (!ParseInt(value, v) || v < 1) return bad("is not a positive integer");
    field = v;
  };
  if (key == "dp") return positive(c.dp);
  if (key == "tp") return positive(c.tp);
  if (key == "pp") return positive(c.pp);
  if (key == "cp") return positive(c.cp);
  if (key == "ep") return positive(c.ep);
  if (key == "mbs") return positive(c.micro_batch);
  if (key == "vpp") return positive(c.vpp);
  if (key == "prefetch") {
    int v = 0;
    if (!ParseInt(value, v)) return bad("is not a non-negative integer");
    c.prefetch = v;
    return;
  }
  if (key == "sharding") {
    static const std::pair<const char*, ShardingMode> kModes[] = {
        {"ddp", ShardingMode::kDdp},     {"zero1", ShardingMode::kZero1},
        {"zero2-replicated", ShardingMode::kZero2Replicated},
        {"zero2", ShardingMode::kZero2}, {"zero3", ShardingMode::kZero3}};
    for (const auto& [name, mode] : kModes) {
      if (value == name) {
        c.sharding = mode;
        c.hsdp_group = 0;
        return;
      }
    }
    if (value.rfind("hsdp:", 0) == 0) {
      int g = 0;
      if (!ParseInt(value.substr(5), g) || g < 1) return bad("needs a positive group size, e.g. hsdp:8");
      c.sharding = ShardingMode::kHsdp;
      c.hsdp_group = g;
      return;
    }
    return bad("is not one of: ddp, zero1, zero2-replicated, zero2, zero3, hsdp:G");
  }
  if (key == "recompute") {
    if (value == "none") c.recompute = RecomputeMode::kNone;
    else if (value == "selective") c.recompute = RecomputeMode::kSelective;
    else if (value == "full") c.recompute = RecomputeMode::kFull;
    else bad("is not one of: none, selective, full");
    return;
  }
  if (key == "recompute_layers") {
    int n = 0;
    if (!ParseInt(value, n) || n < 0) bad("must be a layer count >= 0 (0 = every layer)");
    else c.recompute_layers = n;
    return;
  }
  if (key == "sp") {
    if (value == "on") c.sequence_parallel = true;
    else if (value == "off") c.sequence_parallel = false;
    else bad("is not one of: on, off");
    return;
  }
  if (key == "schedule") {
    if (value == "gpipe") c.schedule = PipelineSchedule::kGpipe;
    else if (value == "1f1b") c.schedule = PipelineSchedule::k1F1B;
    else if (value == "interleaved") c.schedule = PipelineSchedule::kInterleaved;
    else if (value == "zb-h1") c.schedule = PipelineSchedule::kZeroBubble;
    else bad("is not one of: gpipe, 1f1b, interleaved, zb-h1");
    return;
  }
  if (key == "cp_comm") {
    if (value == "p2p") c.cp_comm = CpComm::kP2p;
    else if (value == "a2a") c.cp_comm = CpComm::kA2a;
    else if (value == "allgather") c.cp_comm = CpComm::kAllGather;
    else if (value == "a2a+p2p") c.cp_comm = CpComm::kA2aP2p;
    else bad("is not one of: p2p, a2a, allgather, a2a+p2p");
    return;
  }
  if (key == "cp_a2a_size") return positive(c.cp_a2a_size);
  if (key == "order") {
    std::vector<std::string> parts;
    std::stringstream in(value);
    for (std::string p; std::getline(in, p, '-');) parts.push_back(p);
    std::vector<std::string> sorted = parts, expected(std::begin(kOrderDims), std::end(kOrderDims));
    std::sort(sorted.begin(), sorted.end());
    std::sort(expected.begin(), expected.end());
    if (sorted != expected) return bad("must name each of tp, cp, ep, dp, pp once, innermost first");
    c.order = value;
    return;
  }
  if (key == "pp_layers") {
    std::vector<int> layers;
    std::string text = value;  // '/' is accepted as well as ':'
    std::replace(text.begin(), text.end(), '/', ':');
    std::stringstream in(text);
    for (std::string p; std::getline(in, p, ':');) {
      int v = 0;
      if (!ParseInt(p, v) || v < 1) return bad("must be positive layer counts separated by ':', e.g. 9:8:8:7");
      layers.push_back(v);
    }
    c.pp_layers = layers;
    return;
  }
  issues.Add(where, key,
             "unknown key; valid: dp, tp, pp, cp, ep, mbs, sharding, recompute, sp, vpp, schedule, order, "
             "prefetch, pp_layers, cp_comm, cp_a2a_size, recompute_layers");
}

}  // namespace

const char* ToString(CpComm k) {
  switch (k) {
    case CpComm::kP2p: return "p2p";
    case CpComm::kA2a: return "a2a";
    case CpComm::kAllGather: return "allgather";
    case CpComm::kA2aP2p: return "a2a+p2p";
  }
  return "?";
}

std::string CpCommProblem(const ModelSpec& model, int tp, int cp, CpComm kind, int a2a_size) {
  if (cp <= 1 || (kind != CpComm::kA2a && kind != CpComm::kA2aP2p)) return "";
  const bool hierarchical = kind == CpComm::kA2aP2p;
  if (hierarchical && (a2a_size < 1 || cp % a2a_size != 0)) {
    // Megatron-LM d98e8a6 megatron/training/arguments.py: the hierarchical
    // sizes' product must equal --context-parallel-size.
    return StrCat("cp_comm=a2a+p2p needs cp_a2a_size, the all-to-all group, to divide cp=", cp,
                  a2a_size < 1 ? " (not set)" : StrCat(" (got ", a2a_size, ")"));
  }
  // Transformer Engine flash_attn_a2a_communicate views the heads as
  // [a2a ranks, heads / a2a ranks]: the local query and K/V heads must divide.
  const int group = hierarchical ? a2a_size : cp;
  const int64_t heads = model.num_attention_heads;
  const int64_t kv_heads = model.KvHeads();
  if (heads % (int64_t{tp} * group) != 0 || kv_heads % (int64_t{tp} * group) != 0) {
    const char* key = hierarchical ? "cp_a2a_size" : "cp";
    return StrCat("cp_comm=", ToString(kind), " splits the attention heads over tp·", key, " = ", tp, "·", group, " = ",
                  tp * group, " ranks, but the model has ", heads, " query and ", kv_heads,
                  " key/value heads (both must divide); use ",
                  hierarchical ? "a smaller cp_a2a_size or cp_comm=p2p" : "cp_comm=p2p or allgather");
  }
  return "";
}

const char* ToString(ShardingMode m) {
  switch (m) {
    case ShardingMode::kDdp: return "ddp";
    case ShardingMode::kZero1: return "zero1";
    case ShardingMode::kZero2Replicated: return "zero2-replicated";
    case ShardingMode::kZero2: return "zero2";
    case ShardingMode::kZero3: return "zero3";
    case ShardingMode::kHsdp: return "hsdp";
  }
  return "?";
}

const char* ToString(RecomputeMode m) {
  switch (m) {
    case RecomputeMode::kNone: return "none";
    case RecomputeMode::kSelective: return "selective";
    case RecomputeMode::kFull: return "full";
  }
  return "?";
}

const char* ToString(PipelineSchedule s) {
  switch (s) {
    case PipelineSchedule::kGpipe: return "gpipe";
    case PipelineSchedule::k1F1B: return "1f1b";
    case PipelineSchedule::kInterleaved: return "interleaved";
    case PipelineSchedule::kZeroBubble: return "zb-h1";
  }
  return "?";
}

ParallelConfig ParseParallelConfig(const std::string& text, const std::string& where) {
  ParallelConfig c;
  IssueList issues;
  std::set<std::string> seen;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    if (eq == std::string::npos) {
      issues.Add(where, item, "expected key=value");
      continue;
    }
    const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    if (!seen.insert(key).second) {
      issues.Add(where, key, "given twice");
      continue;
    }
    Apply(c, key, value, where, issues);
  }
  issues.ThrowIfAny();
  return c;
}

ParallelConfig LoadParallelConfigYaml(const std::string& path) {
  YAML::Node root = internal::ParseYamlFile(path);
  if (!root.IsMap()) throw InvalidInput(path, "", "expected a mapping of parallel config keys");
  ParallelConfig c;
  IssueList issues;
  for (const auto& kv : root) {
    const std::string key = kv.first.Scalar();
    if (key == "schema_version") continue;
    if (!kv.second.IsScalar()) {
      issues.Add(Issue{path, key, kv.second.Mark().line + 1, kv.second.Mark().column + 1, "expected a value"});
      continue;
    }
    IssueList one;
    Apply(c, key, kv.second.Scalar(), path, one);
    for (Issue issue : one.issues()) {
      issue.line = kv.second.Mark().line + 1;
      issue.column = kv.second.Mark().column + 1;
      issues.Add(issue);
    }
  }
  issues.ThrowIfAny();
  return c;
}

int ParallelConfig::NumMicroBatches(const JobSpec& job) const {
  const int64_t per_step = static_cast<int64_t>(dp) * micro_batch;
  if (per_step <= 0 || job.global_batch % per_step != 0) return 0;
  return static_cast<int>(job.global_batch / per_step);
}

std::vector<int> ParallelConfig::StageLayers(const ModelSpec& model) const {
  if (!pp_layers.empty()) return pp_layers;
  // Balanced split; the remainder goes to the middle stages, because the
  // first stage also holds the embedding and the last the LM head and loss.
  const int layers = static_cast<int>(model.num_layers);
  std::vector<int> out(pp, layers / pp);
  std::vector<int> preference;  // middle stages first, then the first, then the last
  for (int s = 1; s + 1 < pp; ++s) preference.push_back(s);
  preference.push_back(0);
  if (pp > 1) preference.push_back(pp - 1);
  for (int i = 0; i < layers % pp; ++i) out[preference[i]] += 1;
  return out;
}

namespace {

// The fewest layers any stage of `c` holds: the minimum of StageLayers,
// without building it (Validate runs for every config the planner sizes).
int FewestStageLayers(const ParallelConfig& c, const ModelSpec& model) {
  if (!c.pp_layers.empty()) return *std::min_element(c.pp_layers.begin(), c.pp_layers.end());
  // The balanced split gives the remainder to fewer than pp stages: one keeps layers / pp.
  return c.pp > 0 ? static_cast<int>(model.num_layers) / c.pp : 0;
}

}  // namespace

std::vector<Issue> ParallelConfig::Validate(const ModelSpec& model, const JobSpec& job, int world_size) const {
  IssueList issues;
  const std::string where = "config";
  auto add = [&](const char* key, std::string message) { issues.Add(where, key, std::move(message)); };
  if (WorldSize() != world_size) {
    add("dp", StrCat("dp·tp·pp·cp = ", dp, "·", tp, "·", pp, "·", cp, " = ", WorldSize(), " but the cluster has ",
                     world_size, " GPUs"));
  }
  if (std::min({dp, tp, pp, cp, ep, micro_batch, vpp}) < 1) {
    add("dp", "dp, tp, pp, cp, ep, mbs and vpp must be at least 1");
    return issues.issues();
  }
  // The layout's rules come from the one table the planner's search reads too.
  const std::vector<Issue> layout = LayoutIssues(model, job, Layout{dp, tp, pp, cp, ep}, where);
  for (const Issue& issue : layout) issues.Add(issue);
  auto layout_broke = [&](const char* key) {
    for (const Issue& issue : layout) {
      if (issue.key == key) return true;
    }
    return false;
  };
  if (!pp_layers.empty()) {
    int64_t sum = 0;
    for (int l : pp_layers) sum += l;
    if (static_cast<int>(pp_layers.size()) != pp || sum != model.num_layers) {
      add("pp_layers", StrCat(pp_layers.size(), " stages holding ", sum, " layers; need pp=", pp, " stages holding ",
                              model.num_layers));
    }
  }
  if (vpp > 1) {
    if (pp == 1) add("vpp", "vpp>1 needs pp>1");
    if (schedule != PipelineSchedule::kInterleaved) add("vpp", "vpp>1 needs schedule=interleaved");
    // Chunks need not be equal (Megatron, torchtitan); each needs a layer.
    // (Every config the planner sizes passes; only one that fails builds the split.)
    if (FewestStageLayers(*this, model) < vpp) {
      for (int layers : StageLayers(model)) {
        if (layers < vpp) {
          add("vpp", StrCat("vpp=", vpp, " chunks exceed a stage of ", layers, " layers"));
          break;
        }
      }
    }
  }
  if (schedule == PipelineSchedule::kInterleaved && vpp == 1) add("schedule", "interleaved needs vpp>1");
  // The micro-batch split of each replica's batch (the replica split is a layout rule).
  const int m = NumMicroBatches(job);
  if (m == 0 && !layout_broke("dp")) {
    add("mbs", StrCat("global batch ", job.global_batch, " is not a multiple of dp·mbs = ", dp, "·", micro_batch));
  } else if (m > 0 && schedule == PipelineSchedule::kInterleaved && m % pp != 0) {
    add("schedule", StrCat("interleaved 1F1B needs the ", m, " micro-batches to be a multiple of pp=", pp));
  }
  if (sequence_parallel && tp == 1) add("sp", "sp=on needs tp>1");
  if (recompute_layers < 0) add("recompute_layers", "must be >= 0 (0 = every layer)");
  if (recompute_layers > 0) {
    if (recompute != RecomputeMode::kFull) add("recompute_layers", "needs recompute=full");
    const int fewest = FewestStageLayers(*this, model);
    if (recompute_layers > fewest) {
      add("recompute_layers", StrCat(recompute_layers, " exceeds the ", fewest, " layers of the smallest stage"));
    }
    if (vpp > 1 && recompute_layers % vpp != 0) {
      add("recompute_layers", StrCat(recompute_layers, " is not a multiple of vpp=", vpp,
                                     " (Megatron counts recomputed layers per virtual chunk)"));
    }
  }
  if (cp > 1) {
    const std::string cp_problem = CpCommProblem(model, tp, cp, cp_comm, cp_a2a_size);
    if (!cp_problem.empty()) add(cp_comm == CpComm::kA2aP2p ? "cp_a2a_size" : "cp_comm", cp_problem);
  }
  if (cp_a2a_size != 0 && (cp_comm != CpComm::kA2aP2p || cp == 1)) {
    add("cp_a2a_size", "needs cp>1 and cp_comm=a2a+p2p (it sizes that kind's all-to-all group)");
  }
  if (sharding == ShardingMode::kHsdp) {
    if (hsdp_group < 1 || dp % hsdp_group != 0) {
      add("sharding", StrCat("hsdp:", hsdp_group, ": the group size must divide dp=", dp));
    }
  }
  return issues.issues();
}

std::string ParallelConfig::ToString() const {
  std::string sharding_text = parasim::ToString(sharding);
  if (sharding == ShardingMode::kHsdp) sharding_text = StrCat("hsdp:", hsdp_group);
  std::string s = StrCat("dp=", dp, ",tp=", tp, ",pp=", pp, ",cp=", cp, ",ep=", ep, ",mbs=", micro_batch,
                         ",sharding=", sharding_text, ",recompute=", parasim::ToString(recompute),
                         ",sp=", sequence_parallel ? "on" : "off", ",vpp=", vpp,
                         ",schedule=", parasim::ToString(schedule), ",order=", order, ",prefetch=", prefetch);
  // Ring (the default) is left out, so configs written before CP kinds read back unchanged.
  if (cp_comm != CpComm::kP2p) s += StrCat(",cp_comm=", parasim::ToString(cp_comm));
  if (cp_a2a_size != 0) s += StrCat(",cp_a2a_size=", cp_a2a_size);
  // 0 (every layer) is left out, so configs written before partial recompute read back unchanged.
  if (recompute_layers != 0) s += StrCat(",recompute_layers=", recompute_layers);
  if (!pp_layers.empty()) {
    s += ",pp_layers=";
    for (size_t i = 0; i < pp_layers.size(); ++i) s += StrCat(i ? ":" : "", pp_layers[i]);
  }
  return s;
}

}  // namespace parasim
