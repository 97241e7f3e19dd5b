#include "planner/uncertainty.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>

#include "core/error.h"
#include "core/field_registry.h"
#include "core/number_format.h"
#include "cost_model/evaluator.h"
#include "planner/plan_format.h"

namespace parasim::planner {
namespace {

// A standard normal deviate from the engine's raw 64-bit output (Box-Muller),
// so every standard library draws the same numbers.
double Normal(std::mt19937_64& rng) {
  const double u1 = (static_cast<double>(rng() >> 11) + 0.5) * 0x1p-53;
  const double u2 = (static_cast<double>(rng() >> 11) + 0.5) * 0x1p-53;
  const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
  return std::clamp(z, -3.0, 3.0);
}

template <class Spec>
void Scale(const FieldEntry<Spec>& f, Spec& spec, double factor) {
  double v = f.get(spec) * factor;
  const FieldRange& r = f.range;
  if (!r.Contains(v)) v = std::clamp(v, r.min_open ? std::nextafter(r.min, r.max) : r.min, r.max);
  if (r.integer) v = std::round(v);
  f.set(spec, v);
}

void ScaleField(ClusterSpec& c, const std::string& key, double factor) {
  if (key.rfind("gpu.", 0) == 0) {
    const GpuField* f = FindField(GpuProfileFields(), key.substr(4));
    if (!f) throw InternalError(StrCat("uncertain field ", key, " is not in the registry"));
    return Scale(*f, c.gpu, factor);
  }
  const ClusterField* f = FindField(ClusterFields(), key);
  if (!f) throw InternalError(StrCat("uncertain field ", key, " is not in the registry"));
  Scale(*f, c, factor);
}

// Nearest-rank percentile of sorted values.
double Percentile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

}  // namespace

std::vector<UncertainField> RegistryUncertainFields() {
  std::vector<UncertainField> out;
  for (const GpuField& f : GpuProfileFields()) {
    if (f.uncertainty) out.push_back({"gpu." + f.key, *f.uncertainty});
  }
  for (const ClusterField& f : ClusterFields()) {
    if (f.uncertainty) out.push_back({f.key, *f.uncertainty});
  }
  return out;
}

std::vector<ClusterSpec> PerturbedClusters(const ClusterSpec& base, const std::vector<UncertainField>& fields,
                                           int samples, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<ClusterSpec> out;
  for (int s = 0; s < samples; ++s) {
    ClusterSpec c = base;
    for (const UncertainField& f : fields) ScaleField(c, f.key, std::exp(f.sigma * Normal(rng)));
    out.push_back(std::move(c));
  }
  return out;
}

UncertaintyResult RunUncertainty(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                                 const PlanResult& base, const PlanOptions& options, int samples,
                                 const std::vector<UncertainField>& fields, uint64_t seed) {
  if (samples < 0) throw InvalidInput("", "--uncertainty", StrCat("must be >= 0, got ", samples));
  UncertaintyResult r;
  r.samples = samples;
  r.seed = seed;
  r.fields = fields;
  for (const Report& p : base.plans) r.plans.push_back({p.config.ToString(), p.tokens_per_s, 0, 0, 0, 0});
  if (samples == 0) return r;
  PlanOptions o = options;
  o.top_k = 1;
  o.baseline = false;
  o.progress = nullptr;
  o.fidelity = Fidelity::kAnalytical;   // the spread is tier A's, whatever ranked the base
  std::vector<std::vector<double>> tokens(r.plans.size());
  for (const ClusterSpec& c : PerturbedClusters(cluster, fields, samples, seed)) {
    const AnalyticalEvaluator evaluator(model, c, job);
    for (size_t k = 0; k < base.plans.size(); ++k) {
      const Report rep = evaluator.Evaluate(base.plans[k].config);
      tokens[k].push_back(rep.feasible ? rep.tokens_per_s : 0.0);
    }
    const PlanResult replan = RunPlan(evaluator, o);
    const std::string winner = replan.plans.empty() ? "" : replan.plans.front().config.ToString();
    bool found = false;
    for (PlanSpread& p : r.plans) {
      if (p.config == winner) {
        ++p.ranked_first;
        found = true;
      }
    }
    if (!found) ++r.other_first;
  }
  for (size_t k = 0; k < r.plans.size(); ++k) {
    std::sort(tokens[k].begin(), tokens[k].end());
    r.plans[k].p10 = Percentile(tokens[k], 0.10);
    r.plans[k].p50 = Percentile(tokens[k], 0.50);
    r.plans[k].p90 = Percentile(tokens[k], 0.90);
  }
  return r;
}

std::string UncertaintyToTable(const UncertaintyResult& r) {
  std::string fields;
  for (const UncertainField& f : r.fields) {
    fields += StrCat(fields.empty() ? "" : ", ", f.key, " ±", FormatFixed(100 * f.sigma, 1), "%");
  }
  std::string out = StrCat("\nuncertainty: ", r.samples, " perturbed profiles (seed ", r.seed, "), ", r.fields.size(),
                           " fields perturbed", r.fields.empty() ? "" : ": " + fields, "\n");
  std::vector<std::vector<std::string>> rows;
  for (size_t k = 0; k < r.plans.size(); ++k) {
    const PlanSpread& p = r.plans[k];
    rows.push_back({std::to_string(k + 1), FormatFixed(p.base_tokens_per_s, 0), FormatFixed(p.p10, 0),
                    FormatFixed(p.p50, 0), FormatFixed(p.p90, 0),
                    FormatFixed(100.0 * p.ranked_first / std::max(1, r.samples), 1) + "%", p.config});
  }
  out += RenderTable({"#", "tokens/s", "p10", "p50", "p90", "ranked_first", "config"}, rows);
  out += StrCat("a plan outside this list ranked first in ", r.other_first, " of ", r.samples, " samples\n");
  return out;
}

}  // namespace parasim::planner
