// parasim::Planner: the facade's queries over the planner, the tier-A
// evaluator and the simulator. Each query's fields are checked here, so an
// error names the struct field ("PlanQuery::top"), not a CLI flag.
#include <algorithm>

#include "core/error.h"
#include "core/loaders.h"
#include "core/parallel_config.h"
#include "facade/access.h"
#include "facade/engine.h"
#include "planner/planner.h"
#include "planner/scaling.h"
#include "planner/whatif.h"
#include "simulator/simulate.h"

namespace parasim {
namespace detail {

ClusterSpec Engine::Sized(int gpus, const char* field) const {
  const int per_node = cluster.gpus_per_node;
  if (gpus < 1 || gpus % per_node != 0)
    throw InvalidInput("", field, StrCat(gpus, " is not a positive multiple of the ", per_node, " GPUs per node of ",
                                         cluster.name));
  return LoadCluster(cluster_source, gpus / per_node);
}

std::shared_ptr<const AnalyticalEvaluator> Engine::For(int gpus, int64_t global_batch, const char* field) {
  const int64_t batch = global_batch > 0 ? global_batch : job.global_batch;
  const std::pair<int, int64_t> key{gpus, batch};
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = evaluators_.find(key);
    if (it != evaluators_.end()) return it->second;
  }
  const std::shared_ptr<const ClusterSpec> sized = SizedCached(gpus, field);
  std::shared_ptr<const AnalyticalEvaluator> base;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    base = base_;
  }
  // Built outside the lock; two threads may both build one, and the first
  // inserted is kept: they are equal.
  std::shared_ptr<const AnalyticalEvaluator> built;
  if (base) {
    built = std::make_shared<const AnalyticalEvaluator>(base->Resized(*sized, batch));
  } else {
    JobSpec sized_job = job;
    sized_job.global_batch = batch;
    built = std::make_shared<const AnalyticalEvaluator>(model, *sized, sized_job, stack);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  if (!base_) base_ = built;
  if (evaluators_.size() >= kMaxEvaluators) evaluators_.clear();
  return evaluators_.emplace(key, std::move(built)).first->second;
}

std::shared_ptr<const ClusterSpec> Engine::SizedCached(int gpus, const char* field) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = sized_.find(gpus);
    if (it != sized_.end()) return it->second;
  }
  auto built = std::make_shared<const ClusterSpec>(Sized(gpus, field));   // outside the lock: a file load
  std::lock_guard<std::mutex> lock(mutex_);
  if (sized_.size() >= kMaxEvaluators) sized_.clear();
  return sized_.emplace(gpus, std::move(built)).first->second;
}

namespace {

Fidelity ParseFidelity(const std::string& text, const char* field) {
  if (text == "analytical") return Fidelity::kAnalytical;
  if (text == "simulated") return Fidelity::kSimulated;
  if (text == "full") return Fidelity::kFull;
  throw InvalidInput("", field, StrCat("'", text, "' is not one of: analytical, simulated, full"));
}

// The planner's options from a PlanQuery; `q` is the field prefix for errors
// ("PlanQuery::", "ScaleQuery::plan.").
planner::PlanOptions ToPlanOptions(const PlanQuery& query, const std::string& q) {
  IssueList issues;
  if (query.top < 1) issues.Add("", q + "top", StrCat(query.top, ": must be at least 1"));
  if (query.threads < 0) issues.Add("", q + "threads", StrCat(query.threads, ": must not be negative"));
  if (query.global_batch < 0) issues.Add("", q + "global_batch", "must not be negative (0 = the job's)");
  issues.ThrowIfAny();
  planner::PlanOptions options;
  options.constraints = planner::ConstraintSet::Parse(query.constraints, q + "constraints");
  options.objective.objective = planner::ParseObjective(query.objective, q + "objective");
  options.objective.gpu_hour_price = query.gpu_hour_price;
  options.objective.energy_price = query.energy_price;
  options.objective.tokens = query.tokens;
  options.objective.Validate();
  options.top_k = query.top;
  options.rescore_k = query.top;
  options.threads = query.threads;
  options.fidelity = ParseFidelity(query.fidelity, (q + "fidelity").c_str());
  return options;
}

PlanResult ToPlanResult(const planner::PlanResult& r) {
  PlanResult out;
  out.gpus = r.gpus;
  for (const Report& p : r.plans) out.plans.push_back(ToPrediction(p));
  out.objective_values = r.plan_values;
  for (const Report& p : r.pareto) out.pareto.push_back(ToPrediction(p));
  if (r.baseline) out.baseline = ToPrediction(*r.baseline);
  out.searched = r.searched;
  out.scored = r.scored;
  out.feasible = r.feasible;
  out.rejected = r.rejected;
  return out;
}

}  // namespace
}  // namespace detail
}  // namespace parasim

namespace parasim {

using detail::Access;
using detail::Engine;
using detail::ToPrediction;

const Prediction& PlanResult::best() const {
  if (!plans.empty()) return plans.front();
  std::vector<std::string> reasons;
  for (const auto& [reason, count] : rejected) reasons.push_back(StrCat(reason, ": ", count, " configs"));
  throw NoAnswer(StrCat("no parallel config fits this job on ", gpus, " GPUs"), std::move(reasons));
}

Planner::Planner(Model model, Cluster cluster, Job job, Stack stack) : engine_(std::make_shared<Engine>()) {
  IssueList issues;
  if (job.global_batch <= 0) issues.Add("", "Job::global_batch", "must be a positive number of sequences");
  if (job.seq_len <= 0) issues.Add("", "Job::seq_len", "must be a positive number of tokens");
  if (job.precision != "bf16" && job.precision != "fp8" && job.precision != "fp4" &&
      job.precision != "fp32")
    issues.Add("", "Job::precision", StrCat("'", job.precision, "' is not one of: bf16, fp8, fp4, fp32"));
  issues.ThrowIfAny();
  Engine& e = *engine_;
  e.model = Access::Spec(model);
  e.cluster = Access::Spec(cluster);
  e.cluster_source = Access::Source(cluster);
  e.stack = Access::Spec(stack);
  e.job.global_batch = job.global_batch;
  e.job.seq_len = job.seq_len;
  e.job.precision = job.precision == "fp8"   ? Precision::kFp8
                    : job.precision == "fp4" ? Precision::kFp4
                    : job.precision == "fp32" ? Precision::kFp32
                                             : Precision::kBf16;
  e.job.stack = Access::Source(stack);   // as the CLI's --stack: what-if sweeps reload it by this
}

Planner::~Planner() = default;
Planner::Planner(const Planner&) = default;
Planner& Planner::operator=(const Planner&) = default;

PlanResult Planner::Plan(const PlanQuery& query) const {
  const planner::PlanOptions options = detail::ToPlanOptions(query, "PlanQuery::");
  const auto evaluator = engine_->For(query.gpus, query.global_batch, "PlanQuery::gpus");
  return detail::ToPlanResult(planner::RunPlan(*evaluator, options));
}

Prediction Planner::Simulate(const SimulateQuery& query) const {
  const Fidelity fidelity = detail::ParseFidelity(query.fidelity, "SimulateQuery::fidelity");
  if (query.global_batch < 0) throw InvalidInput("", "SimulateQuery::global_batch", "must not be negative");
  const ParallelConfig config = ParseParallelConfig(query.config, "SimulateQuery::config");
  const auto evaluator = engine_->For(query.gpus, query.global_batch, "SimulateQuery::gpus");
  if (fidelity == Fidelity::kAnalytical) return ToPrediction(evaluator->Evaluate(config));
  simulator::SimulationOptions options;
  options.fidelity = fidelity;
  return ToPrediction(simulator::SimulateConfig(*evaluator, config, options).report);
}

ScaleResult Planner::Scale(const ScaleQuery& query) const {
  IssueList issues;
  if (query.gpus.empty()) issues.Add("", "ScaleQuery::gpus", "give at least one GPU count");
  for (size_t i = 0; i < query.gpus.size(); ++i) {
    if (i > 0 && query.gpus[i] <= query.gpus[i - 1]) issues.Add("", "ScaleQuery::gpus", "GPU counts must increase");
  }
  if (query.mode == "weak" && query.local_batch < 1) issues.Add("", "ScaleQuery::local_batch", "must be at least 1");
  if (query.global_batch < 0) issues.Add("", "ScaleQuery::global_batch", "must not be negative (0 = the job's)");
  issues.ThrowIfAny();
  planner::ScaleOptions scale;
  scale.mode = planner::ParseScaleMode(query.mode, "ScaleQuery::mode");
  scale.local_batch = query.local_batch;
  scale.global_batch = query.global_batch > 0 ? query.global_batch : engine_->job.global_batch;
  scale.knee_threshold = query.knee_threshold;
  const planner::PlanOptions options = detail::ToPlanOptions(query.plan, "ScaleQuery::plan.");
  // As `parasim scale`: each size is the loaded cluster with its node count
  // changed (planner::ResizeCluster), partial nodes allowed.
  const Engine& e = *engine_;
  const planner::ScaleStudy study = planner::RunScaleStudy(e.model, e.cluster, e.job, query.gpus, scale, options);
  ScaleResult out;
  out.mode = planner::ToString(study.mode);
  out.knee_gpus = study.knee_gpus;
  for (const planner::ScalePoint& p : study.points) {
    ScalePoint s;
    s.gpus = p.gpus;
    s.global_batch = p.global_batch;
    s.feasible = p.feasible;
    if (p.feasible) s.best = ToPrediction(p.best);
    s.objective_value = p.objective_value;
    s.efficiency = p.efficiency;
    s.marginal_tokens_per_s_per_gpu = p.marginal_tokens_per_s_per_gpu;
    s.searched = p.searched;
    s.feasible_configs = p.feasible_configs;
    out.points.push_back(std::move(s));
  }
  return out;
}

WhatIfResult Planner::WhatIf(const WhatIfQuery& query) const {
  if (query.vary.empty()) throw InvalidInput("", "WhatIfQuery::vary", "give at least one key=v1,v2,...");
  std::vector<planner::Variation> variations;
  for (const std::string& v : query.vary) variations.push_back(planner::ParseVariation(v, "WhatIfQuery::vary"));
  const planner::PlanOptions options = detail::ToPlanOptions(query.plan, "WhatIfQuery::plan.");
  const Engine& e = *engine_;
  const std::vector<planner::WhatifPoint> points =
      planner::RunWhatif(e.model, e.Sized(query.gpus, "WhatIfQuery::gpus"), e.job, variations, options);
  WhatIfResult out;
  for (const planner::WhatifPoint& p : points) {
    WhatIfPoint w;
    w.setting = p.setting;
    w.gpus = p.gpus;
    w.feasible = p.feasible;
    if (p.feasible) w.best = ToPrediction(p.best);
    w.objective_value = p.objective_value;
    w.searched = p.searched;
    w.feasible_configs = p.feasible_configs;
    out.points.push_back(std::move(w));
  }
  return out;
}

}  // namespace parasim
