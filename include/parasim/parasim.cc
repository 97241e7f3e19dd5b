// The facade over loaders, the tier-A evaluator, the simulator and the planner.
#include "parasim/parasim.h"

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/loaders.h"
#include "cost_model/evaluator.h"
#include "cost_model/report_format.h"
#include "planner/plan_format.h"
#include "planner/planner.h"
#include "simulator/simulate.h"

namespace parasim::api {
namespace {

Prediction ToPrediction(const Report& r) {
  Prediction p;
  p.config = r.config.ToString();
  p.feasible = r.feasible;
  p.infeasible_reason = r.infeasible_reason;
  p.step_time_s = r.step_time / Seconds(1);
  p.tokens_per_s = r.tokens_per_s;
  p.tokens_per_s_per_gpu = r.tokens_per_s_per_gpu;
  p.mfu = r.mfu;
  p.hfu = r.hfu;
  p.compute_s = r.compute / Seconds(1);
  p.comm_s = r.comm / Seconds(1);
  p.exposed_comm_s = r.exposed_comm / Seconds(1);
  p.exposed_comm_fraction = r.exposed_comm_fraction;
  p.bubble_s = r.bubble / Seconds(1);
  p.memory_bytes_per_gpu = r.memory_per_gpu / Bytes(1);
  p.power_w_per_gpu = r.power_per_gpu / Watts(1);
  p.energy_j_per_step = r.energy_per_step / Joules(1);
  p.tokens_per_joule = r.tokens_per_joule;
  p.fidelity = ToString(r.fidelity);
  p.json = ReportToJson(r);
  return p;
}

}  // namespace

struct Planner::Impl {
  ModelSpec model;
  ClusterSpec cluster;   // at the preset's size; resized per query
  JobSpec job;
  std::map<int, std::unique_ptr<AnalyticalEvaluator>> evaluators;  // by GPU count

  const AnalyticalEvaluator& For(int gpus) {
    auto it = evaluators.find(gpus);
    if (it != evaluators.end()) return *it->second;
    if (gpus <= 0 || gpus % cluster.gpus_per_node != 0) {
      throw InvalidInput("", "gpus", StrCat(gpus, " is not a positive multiple of the ", cluster.gpus_per_node,
                                     " GPUs per node of ", cluster.name));
    }
    ClusterSpec sized = LoadCluster(cluster.file.empty() ? cluster.name : cluster.file, gpus / cluster.gpus_per_node);
    auto eval = std::make_unique<AnalyticalEvaluator>(model, sized, job);
    return *evaluators.emplace(gpus, std::move(eval)).first->second;
  }
};

const Prediction& Plan::best() const {
  if (ranked.empty()) throw InvalidInput("", "plan", "no parallel config fits this job on these GPUs");
  return ranked.front();
}

Planner::Planner(Job job) : impl_(std::make_unique<Impl>()) {
  impl_->model = LoadModel(job.model);
  impl_->cluster = LoadCluster(job.cluster);
  if (job.global_batch <= 0) throw InvalidInput("", "global_batch", "must be a positive number of sequences");
  if (job.seq_len <= 0) throw InvalidInput("", "seq_len", "must be a positive number of tokens");
  impl_->job.global_batch = job.global_batch;
  impl_->job.seq_len = job.seq_len;
  if (!job.stack.empty()) impl_->job.stack = job.stack;
}

Planner::~Planner() = default;
Planner::Planner(Planner&&) noexcept = default;
Planner& Planner::operator=(Planner&&) noexcept = default;

Plan Planner::Search(int gpus, const PlanQuery& query) {
  planner::PlanOptions options;
  options.constraints = planner::ConstraintSet::Parse(query.constraints, "constraints");
  options.objective.objective = planner::ParseObjective(query.objective, "objective");
  options.objective.Validate();
  options.top_k = query.top;
  options.threads = query.threads;
  const planner::PlanResult result = planner::RunPlan(impl_->For(gpus), options);
  Plan plan;
  for (const Report& r : result.plans) plan.ranked.push_back(ToPrediction(r));
  plan.searched = result.searched;
  plan.feasible = result.feasible;
  plan.rejected = result.rejected;
  plan.json = planner::PlanToJson(result);
  return plan;
}

Prediction Planner::Best(int gpus, const PlanQuery& query) { return Search(gpus, query).best(); }

Prediction Planner::Simulate(int gpus, const std::string& config, const std::string& fidelity) {
  const AnalyticalEvaluator& eval = impl_->For(gpus);
  const ParallelConfig parsed = ParseParallelConfig(config, "config");
  if (fidelity == "analytical") return ToPrediction(eval.Evaluate(parsed));
  simulator::SimulationOptions options;
  if (fidelity == "simulated") {
    options.fidelity = Fidelity::kSimulated;
  } else if (fidelity == "full") {
    options.fidelity = Fidelity::kFull;
  } else {
    throw InvalidInput("", "fidelity", StrCat("'", fidelity, "' is not one of: analytical, simulated, full"));
  }
  return ToPrediction(simulator::SimulateConfig(eval, parsed, options).report);
}

}  // namespace parasim::api
