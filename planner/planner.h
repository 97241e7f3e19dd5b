// The planner: enumerate the space, score every candidate with a scorer (tier
// A in the product: AnalyticalEvaluator) on a thread pool, rank by the
// objective, and return the best K, the Pareto front (throughput vs tokens
// per joule), the pure-FSDP baseline and the counts of what was cut and why.
// The output is identical for any thread count: results land in slots
// indexed by candidate and ties break by canonical (enumeration) order.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/job_spec.h"
#include "core/model_spec.h"
#include "cost_model/config_metrics.h"
#include "cost_model/report.h"
#include "planner/constraints.h"
#include "planner/objective.h"
#include "planner/search_space.h"

namespace parasim {
class AnalyticalEvaluator;
}

namespace parasim::planner {

// Scores one config; must be thread-safe and deterministic. A config that
// does not fit returns feasible = false and a reason "<category>: detail".
using Scorer = std::function<Report(const ParallelConfig&)>;
// The ranking metrics of the Scorer's Report for a config, cheaper (tier A:
// AnalyticalEvaluator::Metrics). With one, the planner scores the space on
// metrics and asks the Scorer for full Reports only for what it returns.
using MetricScorer = std::function<ConfigMetrics(const ParallelConfig&)>;

struct PlanOptions {
  ConstraintSet constraints;
  SpaceOptions space;
  ObjectiveOptions objective;
  int top_k = 16;
  int threads = 0;              // 0 = hardware concurrency
  // Told (candidates settled, candidates in the space) after each chain, from
  // the planner's threads: it must be thread-safe. It sees counts only, so the
  // result does not depend on it (progress display).
  std::function<void(int64_t done, int64_t total)> progress;
  // Recompute only where memory requires it: once a lighter recomputation fits,
  // heavier ones (same config otherwise) only add compute, so they are counted
  // as dominated and not scored. Off for the exposed-comm objective, where
  // extra compute can hide communication.
  bool recompute_dominance = true;
  // Memory grows with the micro-batch (activations, logits; weights and
  // optimizer state do not depend on it), so when no recomputation lets a
  // micro-batch fit, larger ones are rejected without scoring. A test checks
  // that this never changes the result against the evaluator.
  bool memory_implication = true;
  bool baseline = true;         // also find the pure-FSDP baseline (tp=pp=cp=1, zero2)
  // Tier B/C re-scoring (product path: the simulator): the best `rescore_k`
  // tier-A plans are re-scored and re-ranked; the rest keep tier A's order.
  Fidelity fidelity = Fidelity::kAnalytical;
  int rescore_k = 16;
  // Resource bounds. max_configs > 0: score at most this many candidates, the
  // first in the fixed enumeration order (whole chains), so the answer is
  // deterministic. time_budget_s > 0: stop starting chains after this many
  // seconds; what was scored by then is ranked, and the result says it was cut
  // (such output is not byte-reproducible).
  int64_t max_configs = 0;
  double time_budget_s = 0;
};

struct PlanResult {
  int gpus = 0;
  ObjectiveOptions objective;
  Goodput goodput;
  std::vector<Report> plans;             // best first, at most top_k
  std::vector<double> plan_values;       // ObjectiveValue of each plan
  std::vector<Report> pareto;            // highest throughput first
  std::optional<Report> baseline;        // best pure-FSDP plan, when one fits
  double baseline_value = 0;
  int64_t searched = 0;                  // every candidate and rejected entry
  int64_t scored = 0;                    // scorer calls over the space
  int64_t feasible = 0;                  // scored and fit
  std::map<std::string, int64_t> rejected;   // reason -> count (space cuts, scorer's reasons, dominance)
  double gpu_capacity_bytes = 0;         // the card's memory as nvidia-smi shows it (0: unknown, no column)
  int64_t space_size = 0;                // candidates the space holds (before scoring)
  // Per plan: the configs whose every reported metric (time, memory, energy,
  // power) equals it, as the keys where they differ ("schedule=zb-h1").
  std::vector<std::vector<std::string>> equivalents;
  // Non-empty when a resource bound left candidates unscored ("--max-configs
  // 1000", "--time-budget 5 s"); they are counted in `rejected` under it.
  std::string cut_by;
};

// The general form: any scorer (tests inject one). With a `rescorer` the best
// max(top_k, rescore_k) plans (and the baseline) are re-scored by it and
// re-ranked; ties keep tier A's order. The Pareto front stays tier A's.
// A `ranker` must agree with `scorer` on every metric it gives (the result
// is the same with or without it).
PlanResult RunPlan(const ModelSpec& model, const JobSpec& job, int gpus, int gpus_per_node, const Scorer& scorer,
                   const PlanOptions& options, const Scorer* rescorer = nullptr, const MetricScorer* ranker = nullptr);

// The product form: tier A over the evaluator's model, cluster and job, and
// the simulator (tier B, or C for Fidelity::kFull) when options.fidelity asks.
PlanResult RunPlan(const AnalyticalEvaluator& evaluator, const PlanOptions& options);

// The ranking metrics of a full Report (what a MetricScorer must agree with).
ConfigMetrics MetricsOfReport(const Report& report);

// Reason category of an infeasible report: the text before ':' ("memory").
std::string ReasonCategory(const std::string& infeasible_reason);

// The constraints of the pure-FSDP baseline.
ConstraintSet FsdpBaselineConstraints();

}  // namespace parasim::planner
