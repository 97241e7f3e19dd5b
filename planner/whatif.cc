#include "planner/whatif.h"

#include <algorithm>
#include <functional>

#include "core/error.h"
#include "core/loaders.h"
#include "core/unit_parse.h"
#include "cost_model/evaluator.h"

namespace parasim::planner {
namespace {

using Setter = std::function<void(ClusterSpec&, JobSpec&, const std::string&, const std::string&)>;

int ParseCount(const std::string& v, const std::string& where) {
  try {
    size_t used = 0;
    const long n = std::stol(v, &used);
    if (used == v.size() && n >= 1 && n <= (1L << 24)) return static_cast<int>(n);
  } catch (const std::exception&) {
  }
  throw InvalidInput("", where, StrCat("'", v, "' is not a positive count"));
}

double ParseRatio(const std::string& v, const std::string& where) {
  try {
    size_t used = 0;
    const double x = std::stod(v, &used);
    if (used == v.size() && x > 0) return x;
  } catch (const std::exception&) {
  }
  throw InvalidInput("", where, StrCat("'", v, "' is not a positive number"));
}

bool ParseSwitch(const std::string& v, const std::string& where) {
  if (v == "on" || v == "true") return true;
  if (v == "off" || v == "false") return false;
  throw InvalidInput("", where, StrCat("'", v, "' is not on/off"));
}

const std::vector<std::pair<std::string, Setter>>& Setters() {
  static const std::vector<std::pair<std::string, Setter>> setters = {
      {"nodes", [](ClusterSpec& c, JobSpec&, const std::string& v, const std::string& w) { c.nodes = ParseCount(v, w); }},
      {"gpu", [](ClusterSpec& c, JobSpec&, const std::string& v, const std::string&) { c.gpu = LoadGpuProfile(v); }},
      {"gpu.bf16_dense",
       [](ClusterSpec& c, JobSpec&, const std::string& v, const std::string& w) { c.gpu.bf16_dense = ParseFlopRate(v, w); }},
      {"gpu.hbm_bandwidth",
       [](ClusterSpec& c, JobSpec&, const std::string& v, const std::string& w) { c.gpu.hbm_bandwidth = ParseBandwidth(v, w); }},
      {"gpu.hbm_capacity",
       [](ClusterSpec& c, JobSpec&, const std::string& v, const std::string& w) { c.gpu.hbm_capacity = ParseBytes(v, w); }},
      {"gpu.nvlink_bandwidth",
       [](ClusterSpec& c, JobSpec&, const std::string& v, const std::string& w) {
         c.gpu.nvlink_bandwidth = ParseBandwidth(v, w);
       }},
      {"gpu.tdp", [](ClusterSpec& c, JobSpec&, const std::string& v, const std::string& w) { c.gpu.tdp = ParsePower(v, w); }},
      {"intra_node.nvlink_latency",
       [](ClusterSpec& c, JobSpec&, const std::string& v, const std::string& w) {
         c.intra_node.nvlink_latency = ParseDuration(v, w);
       }},
      {"inter_node.nic_bandwidth",
       [](ClusterSpec& c, JobSpec&, const std::string& v, const std::string& w) {
         c.inter_node.nic_bandwidth = ParseBandwidth(v, w);
       }},
      {"inter_node.nics_per_node",
       [](ClusterSpec& c, JobSpec&, const std::string& v, const std::string& w) {
         c.inter_node.nics_per_node = ParseCount(v, w);
       }},
      {"inter_node.oversubscription",
       [](ClusterSpec& c, JobSpec&, const std::string& v, const std::string& w) {
         const double x = ParseRatio(v, w);
         if (x < 1) throw InvalidInput("", w, "oversubscription is a down:up ratio >= 1");
         c.inter_node.oversubscription = x;
       }},
      {"inter_node.nic_latency",
       [](ClusterSpec& c, JobSpec&, const std::string& v, const std::string& w) {
         c.inter_node.nic_latency = ParseDuration(v, w);
       }},
      {"inter_node.switch_latency",
       [](ClusterSpec& c, JobSpec&, const std::string& v, const std::string& w) {
         c.inter_node.switch_latency = ParseDuration(v, w);
       }},
      {"inter_node.sharp",
       [](ClusterSpec& c, JobSpec&, const std::string& v, const std::string& w) { c.inter_node.sharp = ParseSwitch(v, w); }},
      {"seq_len", [](ClusterSpec&, JobSpec& j, const std::string& v, const std::string& w) { j.seq_len = ParseCount(v, w); }},
      {"global_batch",
       [](ClusterSpec&, JobSpec& j, const std::string& v, const std::string& w) { j.global_batch = ParseCount(v, w); }},
      {"stack", [](ClusterSpec&, JobSpec& j, const std::string& v, const std::string&) { j.stack = v; }},
  };
  return setters;
}

const Setter* FindSetter(const std::string& key) {
  for (const auto& [name, setter] : Setters()) {
    if (name == key) return &setter;
  }
  return nullptr;
}

std::string KeyList() {
  std::string out;
  for (const std::string& k : WhatifKeys()) out += (out.empty() ? "" : ", ") + k;
  return out;
}

}  // namespace

std::vector<std::string> WhatifKeys() {
  std::vector<std::string> keys;
  for (const auto& s : Setters()) keys.push_back(s.first);
  return keys;
}

Variation ParseVariation(const std::string& text, const std::string& where) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos) throw InvalidInput("", where, StrCat("'", text, "' is not key=v1,v2,... (keys: ", KeyList(), ")"));
  Variation v;
  v.key = text.substr(0, eq);
  if (FindSetter(v.key) == nullptr) {
    throw InvalidInput("", StrCat(where, ": ", v.key), StrCat("unknown key '", v.key, "' (valid: ", KeyList(), ")"));
  }
  std::string rest = text.substr(eq + 1), cur;
  for (char ch : rest + ",") {
    if (ch == ',') {
      if (!cur.empty()) v.values.push_back(cur);
      cur.clear();
    } else {
      cur += ch;
    }
  }
  if (v.values.empty()) throw InvalidInput("", StrCat(where, ": ", v.key), "no values given");
  return v;
}

void ApplyVariation(ClusterSpec& cluster, JobSpec& job, const std::string& key, const std::string& value) {
  const Setter* setter = FindSetter(key);
  if (setter == nullptr) throw InvalidInput("", StrCat("--vary: ", key), StrCat("unknown key (valid: ", KeyList(), ")"));
  (*setter)(cluster, job, value, StrCat("--vary ", key));
}

std::vector<WhatifPoint> RunWhatif(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                                   const std::vector<Variation>& variations, const PlanOptions& options) {
  // Validate every value before any search: a typo in the last one fails fast.
  for (const Variation& v : variations) {
    for (const std::string& value : v.values) {
      ClusterSpec c = cluster;
      JobSpec j = job;
      ApplyVariation(c, j, v.key, value);
    }
  }
  PlanOptions o = options;
  o.top_k = 1;
  o.baseline = false;
  std::vector<WhatifPoint> points;
  std::vector<size_t> index(variations.size(), 0);
  while (true) {
    WhatifPoint p;
    ClusterSpec c = cluster;
    JobSpec j = job;
    for (size_t k = 0; k < variations.size(); ++k) {
      const std::string& value = variations[k].values[index[k]];
      ApplyVariation(c, j, variations[k].key, value);
      p.setting.emplace_back(variations[k].key, value);
    }
    p.gpus = c.TotalGpus();
    const AnalyticalEvaluator evaluator(model, c, j);
    const PlanResult r = RunPlan(evaluator, o);
    p.searched = r.searched;
    p.feasible_configs = r.feasible;
    if (!r.plans.empty()) {
      p.feasible = true;
      p.best = r.plans.front();
      p.objective_value = r.plan_values.front();
    }
    points.push_back(std::move(p));
    // Odometer over the grid, last key fastest.
    size_t k = variations.size();
    while (k > 0) {
      --k;
      if (++index[k] < variations[k].values.size()) break;
      index[k] = 0;
      if (k == 0) return points;
    }
    if (variations.empty()) return points;
  }
}

}  // namespace parasim::planner
