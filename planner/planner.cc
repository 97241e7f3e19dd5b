#include "planner/planner.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <mutex>

#include "core/check.h"
#include "core/error.h"
#include "planner/parallel_for.h"
#include "planner/plan_options_validate.h"
#include "planner/result_check.h"

namespace parasim::planner {
namespace {

constexpr const char* kReasonDominated = "dominance: recompute not needed";
constexpr const char* kReasonImpliedMemory = "memory: a smaller micro-batch did not fit";
constexpr const char* kMemoryCategory = "memory";

constexpr const char* kReasonMaxConfigs = "limit: --max-configs";
constexpr const char* kReasonTimeBudget = "limit: --time-budget";

enum class State : uint8_t { kUnscored, kFeasible, kInfeasible, kDominated, kImpliedMemory, kMaxConfigs, kTimeBudget };

// What ranking needs of one scored candidate (full reports are re-made for the few printed).
struct Scored {
  double tokens_per_s = 0;
  double tokens_per_joule = 0;
  double exposed_comm_fraction = 0;
  State state = State::kUnscored;
};

// A chain's infeasible reasons by category (a few), merged into the
// query's under its lock once per chain.
struct ReasonTally {
  std::vector<std::pair<std::string, int64_t>> counts;
  void Add(const std::string& category) {
    for (auto& [reason, count] : counts) {
      if (reason == category) {
        ++count;
        return;
      }
    }
    counts.emplace_back(category, 1);
  }
};

PlanMetrics MetricsOf(const Scored& s) {
  return PlanMetrics{s.tokens_per_s, s.tokens_per_joule, s.exposed_comm_fraction};
}

}  // namespace

ConfigMetrics MetricsOfReport(const Report& r) {
  ConfigMetrics m;
  m.feasible = r.feasible;
  if (!r.feasible) m.reason_category = ReasonCategory(r.infeasible_reason);
  m.tokens_per_s = r.tokens_per_s;
  m.tokens_per_joule = r.tokens_per_joule;
  m.exposed_comm_fraction = r.exposed_comm_fraction;
  return m;
}

std::string ReasonCategory(const std::string& infeasible_reason) {
  const std::string head = infeasible_reason.substr(0, infeasible_reason.find(':'));
  size_t b = head.find_first_not_of(" \t");
  size_t e = head.find_last_not_of(" \t");
  if (b == std::string::npos) return "infeasible";
  return head.substr(b, e - b + 1);
}

namespace {

// Every metric a plan reports is equal: the plans are one plan to the user.
bool SameMetrics(const Report& a, const Report& b) {
  return a.step_time.si() == b.step_time.si() && a.tokens_per_s == b.tokens_per_s &&
         a.memory_per_gpu.si() == b.memory_per_gpu.si() && a.power_per_gpu.si() == b.power_per_gpu.si() &&
         a.tokens_per_joule == b.tokens_per_joule && a.exposed_comm_fraction == b.exposed_comm_fraction;
}

// The keys of `other` whose values differ from `kept`'s ("schedule=zb-h1,sp=on").
std::string ConfigDifference(const ParallelConfig& kept, const ParallelConfig& other) {
  auto split = [](const std::string& text) {
    std::vector<std::string> out;
    size_t start = 0;
    while (start <= text.size()) {
      const size_t end = std::min(text.find(',', start), text.size());
      out.push_back(text.substr(start, end - start));
      start = end + 1;
    }
    return out;
  };
  const std::vector<std::string> a = split(kept.ToString()), b = split(other.ToString());
  std::string diff;
  for (const std::string& item : b) {
    if (std::find(a.begin(), a.end(), item) == a.end()) diff += (diff.empty() ? "" : ",") + item;
  }
  return diff;
}

struct UniquePlan {
  size_t index = 0;
  Report report;
  std::vector<std::string> equivalents;
};

// The first `wanted` plans of `sorted` (best first) with distinct metrics;
// a plan equal to a kept one on every metric joins its equivalents. Equal
// metrics mean an equal rank key, so only candidates tied with a kept plan
// on (score, other) are evaluated to compare.
std::vector<UniquePlan> FirstUniquePlans(const std::vector<size_t>& sorted, size_t wanted,
                                         const std::vector<double>& score, const std::vector<double>& other,
                                         const SearchSpace& space, const Scorer& scorer) {
  std::vector<UniquePlan> out;
  for (size_t i : sorted) {
    UniquePlan* same = nullptr;
    Report r;
    bool evaluated = false;
    for (UniquePlan& u : out) {
      if (score[u.index] != score[i] || other[u.index] != other[i]) continue;
      if (!evaluated) r = scorer(space.ToConfig(i)), evaluated = true;
      if (SameMetrics(u.report, r)) {
        same = &u;
        break;
      }
    }
    if (same != nullptr) {
      same->equivalents.push_back(ConfigDifference(same->report.config, r.config));
      continue;
    }
    if (out.size() == wanted) {
      // A new distinct plan beyond the wanted ones: later candidates rank
      // lower still, except ties with kept plans; stop at the first rank key
      // below every kept plan's.
      const UniquePlan& last = out.back();
      if (score[i] != score[last.index] || other[i] != other[last.index]) break;
      continue;
    }
    out.push_back({i, evaluated ? r : scorer(space.ToConfig(i)), {}});
  }
  return out;
}

}  // namespace

ConstraintSet FsdpBaselineConstraints() { return ConstraintSet::Parse("tp=1,pp=1,cp=1,sharding=zero2", "baseline"); }

PlanResult RunPlan(const ModelSpec& model, const JobSpec& job, int gpus, int gpus_per_node, const Scorer& scorer,
                   const PlanOptions& options, const Scorer* rescorer, const MetricScorer* ranker) {
  if (std::vector<Issue> issues = ValidatePlanOptions(options); !issues.empty()) throw InvalidInput(issues);

  const SearchSpace space = EnumerateSpace(model, job, gpus, gpus_per_node, options.constraints, options.space);
  const bool dominance = options.recompute_dominance && options.objective.objective != Objective::kExposedComm;

  std::vector<Scored> scored(space.candidates.size());
  std::mutex reasons_mutex;
  std::map<std::string, int64_t> infeasible_reasons;   // sums: the same for any thread order

  // One chain (same config but micro-batch and recompute) per task, in order:
  // a ladder stops at its first fitting rung (dominance); once a whole ladder
  // fails on memory, the larger micro-batches of the chain are known not to fit.
  // --max-configs: whole chains in enumeration order while they fit the bound.
  size_t chains_in_bound = space.chains.size();
  if (options.max_configs > 0) {
    int64_t taken = 0;
    for (size_t ci = 0; ci < space.chains.size(); ++ci) {
      int64_t n = 0;
      const Chain& chain = space.chains[ci];
      for (uint32_t li = chain.first; li < chain.first + chain.count; ++li) n += space.ladders[li].count;
      if (taken + n > options.max_configs) {
        chains_in_bound = ci;
        break;
      }
      taken += n;
    }
  }
  const auto start = std::chrono::steady_clock::now();
  std::atomic<bool> out_of_time{false};
  auto mark_chain = [&](const Chain& chain, State state) {
    for (uint32_t li = chain.first; li < chain.first + chain.count; ++li) {
      for (uint32_t k = 0; k < space.ladders[li].count; ++k) scored[space.ladders[li].first + k].state = state;
    }
  };

  std::atomic<int64_t> settled{0};
  const auto total = static_cast<int64_t>(space.candidates.size());
  ParallelFor(space.chains.size(), options.threads, [&](size_t ci) {
    const Chain& chain = space.chains[ci];
    if (ci >= chains_in_bound) return mark_chain(chain, State::kMaxConfigs);
    if (options.time_budget_s > 0 &&
        (out_of_time.load() ||
         std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > options.time_budget_s)) {
      out_of_time.store(true);
      return mark_chain(chain, State::kTimeBudget);
    }
    bool memory_bound = false;
    int64_t chain_candidates = 0;
    ReasonTally chain_reasons;
    for (uint32_t li = chain.first; li < chain.first + chain.count; ++li) {
      const Ladder& ladder = space.ladders[li];
      bool fitted = false;
      bool all_memory = true;
      for (uint32_t k = 0; k < ladder.count; ++k) {
        const size_t idx = ladder.first + k;
        Scored& s = scored[idx];
        if (memory_bound && options.memory_implication) {
          s.state = State::kImpliedMemory;
          continue;
        }
        if (fitted && dominance) {
          s.state = State::kDominated;
          continue;
        }
        const ConfigMetrics r = ranker ? (*ranker)(space.ToConfig(idx)) : MetricsOfReport(scorer(space.ToConfig(idx)));
        if (!r.feasible) {
          s.state = State::kInfeasible;
          all_memory = all_memory && r.reason_category == kMemoryCategory;
          chain_reasons.Add(r.reason_category);
          continue;
        }
        PARASIM_CHECK(std::isfinite(r.tokens_per_s) && std::isfinite(r.tokens_per_joule) &&
                          std::isfinite(r.exposed_comm_fraction) && r.tokens_per_s > 0,
                      "scorer returned non-finite metrics for ", space.ToConfig(idx).ToString());
        s.state = State::kFeasible;
        s.tokens_per_s = r.tokens_per_s;
        s.tokens_per_joule = r.tokens_per_joule;
        s.exposed_comm_fraction = r.exposed_comm_fraction;
        fitted = true;
        all_memory = false;
      }
      if (ladder.count > 0 && all_memory) memory_bound = true;
      chain_candidates += ladder.count;
    }
    if (!chain_reasons.counts.empty()) {
      std::lock_guard<std::mutex> lock(reasons_mutex);
      for (const auto& [reason, count] : chain_reasons.counts) infeasible_reasons[reason] += count;
    }
    if (options.progress) options.progress(settled += chain_candidates, total);
  });

  PlanResult result;
  result.gpus = gpus;
  result.objective = options.objective;
  result.goodput = ComputeGoodput(gpus, options.objective.goodput);
  result.searched = space.searched;
  result.space_size = static_cast<int64_t>(space.candidates.size());
  result.rejected = space.rejected;
  for (const auto& [reason, count] : infeasible_reasons) result.rejected[reason] += count;

  std::vector<size_t> feasible;
  std::vector<double> score(scored.size(), 0.0);
  int64_t dominated = 0, implied_memory = 0, over_max = 0, over_time = 0;
  for (size_t i = 0; i < scored.size(); ++i) {
    switch (scored[i].state) {
      case State::kFeasible:
        feasible.push_back(i);
        score[i] = ObjectiveScore(options.objective, MetricsOf(scored[i]), gpus, result.goodput);
        ++result.scored;
        break;
      case State::kInfeasible: ++result.scored; break;
      case State::kDominated: ++dominated; break;
      case State::kImpliedMemory: ++implied_memory; break;
      case State::kMaxConfigs: ++over_max; break;
      case State::kTimeBudget: ++over_time; break;
      case State::kUnscored: PARASIM_CHECK(false, "candidate ", i, " left unscored");
    }
  }
  if (dominated > 0) result.rejected[kReasonDominated] += dominated;
  if (implied_memory > 0) result.rejected[kReasonImpliedMemory] += implied_memory;
  if (over_max > 0) {
    result.rejected[kReasonMaxConfigs] += over_max;
    result.cut_by = StrCat("--max-configs ", options.max_configs);
  }
  if (over_time > 0) {
    result.rejected[kReasonTimeBudget] += over_time;
    result.cut_by += StrCat(result.cut_by.empty() ? "" : ", ", "--time-budget ", options.time_budget_s, " s");
  }
  result.feasible = static_cast<int64_t>(feasible.size());
  {
    int64_t total = result.feasible;
    for (const auto& [reason, count] : result.rejected) total += count;
    PARASIM_CHECK(total == result.searched, "searched ", result.searched, " != feasible + rejected ", total);
  }

  // Rank: objective, then the other useful rate, then canonical order.
  const bool throughput_objective = options.objective.objective == Objective::kThroughput;
  auto better = [&](size_t a, size_t b) {
    if (score[a] != score[b]) return score[a] > score[b];
    const double sa = throughput_objective ? scored[a].tokens_per_joule : scored[a].tokens_per_s;
    const double sb = throughput_objective ? scored[b].tokens_per_joule : scored[b].tokens_per_s;
    if (sa != sb) return sa > sb;
    return a < b;
  };
  const size_t wanted = static_cast<size_t>(options.top_k);
  const size_t want_unique = rescorer ? std::max(wanted, static_cast<size_t>(options.rescore_k)) : wanted;
  std::vector<size_t> sorted = feasible;
  std::sort(sorted.begin(), sorted.end(), better);
  std::vector<double> other(scored.size(), 0.0);
  for (size_t i : feasible) other[i] = throughput_objective ? scored[i].tokens_per_joule : scored[i].tokens_per_s;
  const std::vector<UniquePlan> unique = FirstUniquePlans(sorted, want_unique, score, other, space, scorer);
  const size_t ranked = unique.size();
  if (rescorer == nullptr) {
    for (const UniquePlan& u : unique) {
      result.plans.push_back(u.report);
      result.equivalents.push_back(u.equivalents);
      result.plan_values.push_back(ObjectiveValue(options.objective, MetricsOf(scored[u.index]), gpus, result.goodput));
    }
  } else {
    // Re-score the best tier-A plans (in parallel, into slots), then re-rank.
    std::vector<Report> rescored(ranked);
    ParallelFor(ranked, options.threads, [&](size_t i) { rescored[i] = (*rescorer)(space.ToConfig(unique[i].index)); });
    std::vector<size_t> order;
    std::vector<double> value(ranked), other(ranked);
    for (size_t i = 0; i < ranked; ++i) {
      if (!rescored[i].feasible) {
        ++result.rejected[StrCat("rescored: ", ReasonCategory(rescored[i].infeasible_reason))];
        --result.feasible;   // keeps searched = feasible + rejected
        continue;
      }
      const PlanMetrics m{rescored[i].tokens_per_s, rescored[i].tokens_per_joule, rescored[i].exposed_comm_fraction};
      value[i] = ObjectiveScore(options.objective, m, gpus, result.goodput);
      other[i] = throughput_objective ? m.tokens_per_joule : m.tokens_per_s;
      order.push_back(i);
    }
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      if (value[a] != value[b]) return value[a] > value[b];
      return other[a] > other[b];
    });
    for (size_t i = 0; i < order.size() && i < wanted; ++i) {
      const Report& r = rescored[order[i]];
      result.plans.push_back(r);
      result.equivalents.push_back(unique[order[i]].equivalents);
      result.plan_values.push_back(ObjectiveValue(
          options.objective, PlanMetrics{r.tokens_per_s, r.tokens_per_joule, r.exposed_comm_fraction}, gpus,
          result.goodput));
    }
  }

  std::vector<ParetoPoint> points;
  points.reserve(feasible.size());
  for (size_t i : feasible) points.push_back({scored[i].tokens_per_s, scored[i].tokens_per_joule, i});
  for (size_t i : ParetoFront(std::move(points))) result.pareto.push_back(scorer(space.ToConfig(i)));

  if (options.baseline) {
    PlanOptions base = options;
    base.constraints = FsdpBaselineConstraints();
    base.baseline = false;
    base.progress = nullptr;   // the baseline search is small; progress tells of the main one
    base.top_k = 1;
    base.rescore_k = 1;
    PlanResult b = RunPlan(model, job, gpus, gpus_per_node, scorer, base, rescorer, ranker);
    if (!b.plans.empty()) {
      result.baseline = b.plans.front();
      result.baseline_value = b.plan_values.front();
    }
  }
  CheckPlanResultFinite(result);
  return result;
}

}  // namespace parasim::planner
