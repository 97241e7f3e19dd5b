#include "planner/planner.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <memory>
#include <mutex>

#include "core/check.h"
#include "core/error.h"
#include "planner/parallel_for.h"
#include "planner/plan_options_validate.h"
#include "planner/plan_slice.h"
#include "planner/result_check.h"

namespace parasim::planner {
namespace {

constexpr const char* kReasonDominated = "dominance: recompute not needed";
constexpr const char* kReasonImpliedMemory = "memory: a smaller micro-batch did not fit";

constexpr const char* kReasonMaxConfigs = "limit: --max-configs";
constexpr const char* kReasonTimeBudget = "limit: --time-budget";

using State = CandidateState;
using Scored = CandidateScore;

// A query's large per-candidate arrays, kept per thread with their capacity
// so that a scheduler's next query does not page in fresh megabytes; one set
// per nesting level (the baseline's search runs inside the main one).
struct QueryBuffers {
  SearchSpace space;
  MergedScores merged;
  std::vector<double> score, other;
  std::vector<size_t> feasible, sorted;   // sorted: the ranking heap
};
class BufferLease {
 public:
  BufferLease() : buffers(Take()) {}
  ~BufferLease() { --Depth(); }
  BufferLease(const BufferLease&) = delete;
  BufferLease& operator=(const BufferLease&) = delete;
  QueryBuffers& buffers;

 private:
  static size_t& Depth() {
    thread_local size_t depth = 0;
    return depth;
  }
  static QueryBuffers& Take() {
    thread_local std::vector<std::unique_ptr<QueryBuffers>> pool;
    size_t& depth = Depth();
    if (pool.size() <= depth) pool.push_back(std::make_unique<QueryBuffers>());
    return *pool[depth++];
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

// Candidates best first, ordered lazily: ranking reads only the first few
// (the plans it returns and their ties), so a heap hands them out in order
// instead of sorting every feasible candidate. `better` is a strict total
// order (ties broken by index), so the sequence is the full sort's.
template <class Better>
class BestFirst {
 public:
  BestFirst(std::vector<size_t>& heap, Better better) : heap_(heap), worse_{better} {
    std::make_heap(heap_.begin(), heap_.end(), worse_);
  }
  bool Next(size_t* i) {
    if (heap_.empty()) return false;
    std::pop_heap(heap_.begin(), heap_.end(), worse_);
    *i = heap_.back();
    heap_.pop_back();
    return true;
  }

 private:
  struct Worse {
    Better better;
    bool operator()(size_t a, size_t b) const { return better(b, a); }
  };
  std::vector<size_t>& heap_;
  Worse worse_;
};

// The first `wanted` plans of `best` (best first) with distinct metrics;
// a plan equal to a kept one on every metric joins its equivalents. Equal
// metrics mean an equal rank key, so only candidates tied with a kept plan
// on (score, other) are evaluated to compare.
template <class Better>
std::vector<UniquePlan> FirstUniquePlans(BestFirst<Better>& best, size_t wanted,
                                         const std::vector<double>& score, const std::vector<double>& other,
                                         const SearchSpace& space, const Scorer& scorer) {
  std::vector<UniquePlan> out;
  for (size_t i = 0; best.Next(&i);) {
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

  const BufferLease lease;
  QueryBuffers& buffers = lease.buffers;
  EnumerateSpace(model, job, gpus, gpus_per_node, options.constraints, options.space, &buffers.space);
  const SearchSpace& space = buffers.space;
  // Score the space in slices (one here; one per MPI rank under parasim-mpi)
  // and merge them into one table: ranking below reads only the table.
  const SliceScorer score_slice = [&](int k, int count) {
    return ScorePlanSlice(space, scorer, options, k, count, ranker);
  };
  const SliceRunner& runner = DefaultSliceRunner();
  MergedScores& merged = buffers.merged;
  if (runner) {
    merged = MergePlanSlices(space, runner(score_slice));
  } else {
    ScoreWholeSpace(space, scorer, options, ranker, &merged);   // one slice, into the reused buffer
  }
  const std::vector<Scored>& scored = merged.scores;
  const std::map<std::string, int64_t>& infeasible_reasons = merged.infeasible_reasons;

  PlanResult result;
  result.gpus = gpus;
  result.objective = options.objective;
  result.goodput = ComputeGoodput(gpus, options.objective.goodput);
  result.searched = space.searched;
  result.space_size = static_cast<int64_t>(space.candidates.size());
  result.rejected = space.rejected;
  for (const auto& [reason, count] : infeasible_reasons) result.rejected[reason] += count;

  std::vector<size_t>& feasible = buffers.feasible;
  feasible.clear();
  std::vector<double>& score = buffers.score;
  score.assign(scored.size(), 0.0);
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
  std::vector<size_t>& heap = buffers.sorted;
  heap.assign(feasible.begin(), feasible.end());
  BestFirst best(heap, better);
  std::vector<double>& other = buffers.other;
  other.assign(scored.size(), 0.0);
  for (size_t i : feasible) other[i] = throughput_objective ? scored[i].tokens_per_joule : scored[i].tokens_per_s;
  const std::vector<UniquePlan> unique = FirstUniquePlans(best, want_unique, score, other, space, scorer);
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
    std::atomic<int64_t> rescored_count{0};
    ParallelFor(ranked, options.threads, [&](size_t i) {
      rescored[i] = (*rescorer)(space.ToConfig(unique[i].index));
      if (options.rescore_progress) options.rescore_progress(++rescored_count, static_cast<int64_t>(ranked));
    });
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
    base.rescore_progress = nullptr;
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
