#include "planner/whatif.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>

#include "core/did_you_mean.h"
#include "core/error.h"
#include "core/field_registry.h"
#include "core/loaders.h"
#include "core/unit_parse.h"
#include "cost_model/evaluator.h"
#include "cost_model/power_cap.h"
#include "cost_model/software_stack.h"
#include "cost_model/stack_field_registry.h"

namespace parasim::planner {
namespace {

constexpr const char* kPowerCapKey = "gpu.power_cap";

// The specs one grid point changes; `stack` is loaded only when a stack
// field varies.
struct WhatifSpecs {
  ClusterSpec& cluster;
  JobSpec& job;
  std::optional<SoftwareStack>* stack;
};

// A varied key: a registry field of the cluster, its GPU ("gpu." + key path
// or flat name), the job, or the stack ("stack." + key); or a name ("gpu",
// "stack") that loads a whole profile.
struct WhatifKey {
  const ClusterField* cluster = nullptr;
  const GpuField* gpu = nullptr;
  const JobField* job = nullptr;
  const StackField* stack = nullptr;
  bool gpu_profile = false;
  bool stack_name = false;
  bool power_cap = false;   // "gpu.power_cap": the GPU under a lower power limit (cost_model/power_cap.h)

  FieldUnit unit() const {
    return cluster ? cluster->unit : gpu ? gpu->unit : job ? job->unit : stack->unit;
  }
  const FieldRange& range() const {
    return cluster ? cluster->range : gpu ? gpu->range : job ? job->range : stack->range;
  }
  bool IsField() const { return cluster || gpu || job || stack; }
};

// "x1.5" (or "*1.5"): a multiplier on the field's current value; nullopt for
// an absolute value.
std::optional<double> Multiplier(const std::string& value, const std::string& where) {
  if (value.empty() || (value[0] != 'x' && value[0] != '*')) return std::nullopt;
  const double m = ParseFieldValue(FieldUnit::kRatio, value.substr(1), where);
  if (!(m > 0)) throw InvalidInput("", where, StrCat("multiplier '", value, "' must be > 0"));
  return m;
}

// The linked keys of one variation: "a+b" sets a and b to the same value.
std::vector<std::string> SplitKeys(const std::string& key) {
  std::vector<std::string> out;
  std::string cur;
  for (char ch : key + "+") {
    if (ch == '+') {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += ch;
    }
  }
  return out;
}

std::optional<WhatifKey> FindKey(const std::string& key) {
  WhatifKey k;
  if (key == "gpu") {
    k.gpu_profile = true;
  } else if (key == kPowerCapKey) {
    k.power_cap = true;
  } else if (key == "stack") {
    k.stack_name = true;
  } else if (key.rfind("gpu.", 0) == 0) {
    k.gpu = FindField(GpuProfileFields(), key.substr(4));
  } else if (key.rfind("stack.", 0) == 0) {
    k.stack = FindField(StackFields(), key.substr(6));
  } else {
    k.cluster = FindField(ClusterFields(), key);
    k.job = FindField(JobFields(), key);
  }
  if (!k.IsField() && !k.gpu_profile && !k.stack_name && !k.power_cap) return std::nullopt;
  return k;
}

std::string KeyList() {
  std::string out;
  for (const std::string& k : WhatifKeys()) out += (out.empty() ? "" : ", ") + k;
  return out;
}

std::string UnknownKeyMessage(const std::string& key) {
  return StrCat("unknown key '", ShortName(key), "'; ", DidYouMean(key, WhatifKeys()), "valid: ", KeyList());
}

// The value of a registry field, parsed in its unit (or as a multiplier of
// `base`, the field's value before the change) and range-checked. A count
// scaled by a multiplier rounds to the nearest whole number.
double FieldValue(const WhatifKey& k, const std::string& value, const std::string& where, double base) {
  double v = 0;
  if (const std::optional<double> m = Multiplier(value, where)) {
    v = base * *m;
    if (k.range().integer) v = std::round(v);
  } else {
    v = ParseFieldValue(k.unit(), value, where);
  }
  if (auto problem = RangeProblem(k.range(), k.unit(), v)) throw InvalidInput("", where, *problem);
  return v;
}

// Sets a cluster field. A node whose NVLink domain was the node itself keeps
// that: more GPUs per node widen the domain with it (an NVSwitch node), while
// a domain set on its own (intra_node.nvlink_domain_size) is left as given.
void SetClusterField(ClusterSpec& c, const ClusterField& f, double v) {
  const bool domain_is_node = c.intra_node.nvlink_domain_size == c.gpus_per_node;
  f.set(c, v);
  if (f.key == "gpus_per_node" && domain_is_node) c.intra_node.nvlink_domain_size = c.gpus_per_node;
}

void Apply(WhatifSpecs specs, const WhatifKey& k, const std::string& value, const std::string& where) {
  if (k.gpu_profile) {
    specs.cluster.gpu = LoadGpuProfile(value);
  } else if (k.power_cap) {
    const std::optional<double> m = Multiplier(value, where);
    const double cap = m ? specs.cluster.gpu.tdp.si() * *m : ParseFieldValue(FieldUnit::kWatts, value, where);
    specs.cluster.gpu = ApplyPowerCap(specs.cluster.gpu, Watts(cap), where);
  } else if (k.stack_name) {
    specs.job.stack = value;
    if (specs.stack && specs.stack->has_value()) *specs.stack = LoadSoftwareStack(value);
  } else if (k.cluster) {
    SetClusterField(specs.cluster, *k.cluster, FieldValue(k, value, where, k.cluster->get(specs.cluster)));
  } else if (k.gpu) {
    k.gpu->set(specs.cluster.gpu, FieldValue(k, value, where, k.gpu->get(specs.cluster.gpu)));
  } else if (k.job) {
    k.job->set(specs.job, FieldValue(k, value, where, k.job->get(specs.job)));
  } else if (k.stack) {
    if (!specs.stack) {  // checked for its range only (a multiplier needs the stack)
      if (!Multiplier(value, where)) FieldValue(k, value, where, 0);
      return;
    }
    if (!specs.stack->has_value()) *specs.stack = LoadSoftwareStack(specs.job.stack);
    k.stack->set(**specs.stack, FieldValue(k, value, where, k.stack->get(**specs.stack)));
  }
}

void ApplyAll(WhatifSpecs specs, const std::string& keys, const std::string& value, const std::string& where) {
  for (const std::string& key : SplitKeys(keys)) Apply(specs, *FindKey(key), value, where);
}

// The cluster and job after a change, checked as a loader checks them (a
// node count past the GPU limit, a domain that no longer divides the node).
void ValidateChanged(const ClusterSpec& cluster, const JobSpec& job, const std::string& where) {
  std::vector<Issue> issues = ValidateCluster(cluster, "");
  for (Issue& i : ValidateJob(job, "")) issues.push_back(std::move(i));
  for (Issue& i : issues) {
    i.file = "";
    i.key = StrCat(where, ": ", i.key);
  }
  if (!issues.empty()) throw InvalidInput(std::move(issues));
}

}  // namespace

std::vector<std::string> WhatifKeys() {
  std::vector<std::string> keys = {"gpu", kPowerCapKey};
  for (const GpuField& f : GpuProfileFields()) keys.push_back("gpu." + f.Name());
  for (const ClusterField& f : ClusterFields()) keys.push_back(f.key);
  for (const JobField& f : JobFields()) keys.push_back(f.key);
  keys.push_back("stack");
  for (const StackField& f : StackFields()) keys.push_back("stack." + f.key);
  return keys;
}

Variation ParseVariation(const std::string& text, const std::string& where) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos) {
    throw InvalidInput("", where, StrCat("'", text, "' is not key=v1,v2,... (keys: ", KeyList(), ")"));
  }
  Variation v;
  v.key = text.substr(0, eq);
  std::vector<WhatifKey> keys;
  for (const std::string& name : SplitKeys(v.key)) {
    const std::optional<WhatifKey> key = FindKey(name);
    if (!key) throw InvalidInput("", StrCat(where, ": ", name), UnknownKeyMessage(name));
    keys.push_back(*key);
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
  // Every value's unit and range now, all problems at once (a multiplier's
  // range is checked once the base value is known, in RunWhatif).
  IssueList issues;
  for (const WhatifKey& key : keys) {
    if (key.power_cap) {
      for (const std::string& value : v.values) {
        try {
          if (!Multiplier(value, StrCat(where, " ", v.key))) ParseFieldValue(FieldUnit::kWatts, value, StrCat(where, " ", v.key));
        } catch (const InvalidInput& e) {
          for (const Issue& issue : e.issues()) issues.Add(issue);
        }
      }
    }
    if (!key.IsField()) continue;
    for (const std::string& value : v.values) {
      try {
        if (!Multiplier(value, StrCat(where, " ", v.key))) FieldValue(key, value, StrCat(where, " ", v.key), 0);
      } catch (const InvalidInput& e) {
        for (const Issue& issue : e.issues()) issues.Add(issue);
      }
    }
  }
  issues.ThrowIfAny();
  return v;
}

void ApplyVariation(ClusterSpec& cluster, JobSpec& job, const std::string& key, const std::string& value) {
  for (const std::string& name : SplitKeys(key)) {
    if (!FindKey(name)) throw InvalidInput("", StrCat("--vary: ", name), UnknownKeyMessage(name));
  }
  std::optional<SoftwareStack> stack;
  ApplyAll(WhatifSpecs{cluster, job, &stack}, key, value, StrCat("--vary ", key));
  ValidateChanged(cluster, job, StrCat("--vary ", key, "=", value));
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
    std::optional<SoftwareStack> stack;
    for (size_t k = 0; k < variations.size(); ++k) {
      const std::string& value = variations[k].values[index[k]];
      ApplyAll(WhatifSpecs{c, j, &stack}, variations[k].key, value, StrCat("--vary ", variations[k].key));
      p.setting.emplace_back(variations[k].key, value);
    }
    ValidateChanged(c, j, "--vary");
    p.gpus = c.TotalGpus();
    const AnalyticalEvaluator evaluator =
        stack ? AnalyticalEvaluator(model, c, j, *stack) : AnalyticalEvaluator(model, c, j);
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
