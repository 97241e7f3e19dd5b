#include "planner/plan_slice.h"

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <mutex>

#include "core/check.h"
#include "core/error.h"
#include "planner/parallel_for.h"

namespace parasim::planner {
namespace {

constexpr const char* kMemoryCategory = "memory";
constexpr char kSliceMagic[4] = {'P', 'S', 'L', '1'};

// Chains in enumeration order that fit --max-configs (all when unbounded).
size_t ChainsInBound(const SearchSpace& space, int64_t max_configs) {
  if (max_configs <= 0) return space.chains.size();
  int64_t taken = 0;
  for (size_t ci = 0; ci < space.chains.size(); ++ci) {
    int64_t n = 0;
    const Chain& chain = space.chains[ci];
    for (uint32_t li = chain.first; li < chain.first + chain.count; ++li) n += space.ladders[li].count;
    if (taken + n > max_configs) return ci;
    taken += n;
  }
  return space.chains.size();
}

// Equal texts; inline (categories are a few bytes: a library memcmp call
// per infeasible config showed in profiles).
bool SameText(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i]) return false;
  return true;
}

// A chain's infeasible reasons by category (a few), merged into the slice's
// under its lock once per chain.
struct ReasonTally {
  std::vector<std::pair<std::string, int64_t>> counts;
  void Add(const std::string& category) {
    for (auto& [reason, count] : counts) {
      if (SameText(reason, category)) {
        ++count;
        return;
      }
    }
    counts.emplace_back(category, 1);
  }
};

struct ChainScoring {
  const SearchSpace& space;
  const Scorer& scorer;
  const MetricScorer* ranker;
  const PlanOptions& options;
  bool dominance;
  std::vector<CandidateScore>& scored;
  std::mutex& reasons_mutex;
  std::map<std::string, int64_t>& reasons;
};

// Scores one chain into `scored` (slots indexed by candidate): a ladder stops
// at its first fitting rung (dominance); once a whole ladder fails on memory,
// the larger micro-batches of the chain are known not to fit.
void ScoreChain(const ChainScoring& c, const Chain& chain) {
  bool memory_bound = false;
  ReasonTally tally;
  for (uint32_t li = chain.first; li < chain.first + chain.count; ++li) {
    const Ladder& ladder = c.space.ladders[li];
    bool fitted = false;
    bool all_memory = true;
    for (uint32_t k = 0; k < ladder.count; ++k) {
      const size_t idx = ladder.first + k;
      CandidateScore& s = c.scored[idx];
      if (memory_bound && c.options.memory_implication) {
        s.state = CandidateState::kImpliedMemory;
        continue;
      }
      if (fitted && c.dominance) {
        s.state = CandidateState::kDominated;
        continue;
      }
      const ParallelConfig config = c.space.ToConfig(idx);
      const ConfigMetrics r = c.ranker ? (*c.ranker)(config) : MetricsOfReport(c.scorer(config));
      if (!r.feasible) {
        s.state = CandidateState::kInfeasible;
        all_memory = all_memory && SameText(r.reason_category, kMemoryCategory);
        tally.Add(r.reason_category);
        continue;
      }
      PARASIM_CHECK(std::isfinite(r.tokens_per_s) && std::isfinite(r.tokens_per_joule) &&
                        std::isfinite(r.exposed_comm_fraction) && r.tokens_per_s > 0,
                    "scorer returned non-finite metrics for ", config.ToString());
      s = CandidateScore{r.tokens_per_s, r.tokens_per_joule, r.exposed_comm_fraction, CandidateState::kFeasible};
      fitted = true;
      all_memory = false;
    }
    if (ladder.count > 0 && all_memory) memory_bound = true;
  }
  if (tally.counts.empty()) return;
  std::lock_guard<std::mutex> lock(c.reasons_mutex);
  for (const auto& [reason, count] : tally.counts) c.reasons[reason] += count;
}

int64_t ChainSize(const SearchSpace& space, const Chain& chain) {
  int64_t n = 0;
  for (uint32_t li = chain.first; li < chain.first + chain.count; ++li) n += space.ladders[li].count;
  return n;
}

template <typename T>
void Put(std::string& out, const T& v) {
  char buf[sizeof(T)];
  std::memcpy(buf, &v, sizeof(T));
  out.append(buf, sizeof(T));
}

template <typename T>
T Take(std::string_view& in) {
  PARASIM_CHECK(in.size() >= sizeof(T), "plan slice bytes end early");
  T v;
  std::memcpy(&v, in.data(), sizeof(T));
  in.remove_prefix(sizeof(T));
  return v;
}

SliceRunner& DefaultRunnerSlot() {
  static SliceRunner runner;
  return runner;
}

}  // namespace

namespace {

// Scores the chains of slice k of K into `scored` (slots indexed by
// candidate, sized to the space); returns the chains it settled.
std::vector<size_t> ScoreChains(const SearchSpace& space, const Scorer& scorer, const PlanOptions& options, int k,
                                int count, const MetricScorer* ranker, std::vector<CandidateScore>& scored,
                                std::map<std::string, int64_t>& reasons) {
  PARASIM_CHECK(count >= 1 && k >= 0 && k < count, "slice ", k, " of ", count);
  const bool dominance = options.recompute_dominance && options.objective.objective != Objective::kExposedComm;
  const size_t chains_in_bound = ChainsInBound(space, options.max_configs);
  std::vector<size_t> mine;
  int64_t total = 0;
  for (size_t ci = 0; ci < space.chains.size(); ++ci) {
    if (!ChainInSlice(ci, k, count)) continue;
    mine.push_back(ci);
    total += ChainSize(space, space.chains[ci]);
  }

  std::mutex reasons_mutex;
  const auto start = std::chrono::steady_clock::now();
  std::atomic<bool> out_of_time{false};
  std::atomic<int64_t> settled{0};
  auto mark_chain = [&](const Chain& chain, CandidateState state) {
    for (uint32_t li = chain.first; li < chain.first + chain.count; ++li) {
      for (uint32_t j = 0; j < space.ladders[li].count; ++j) scored[space.ladders[li].first + j].state = state;
    }
  };
  ParallelFor(mine.size(), options.threads, [&](size_t m) {
    const size_t ci = mine[m];
    const Chain& chain = space.chains[ci];
    if (ci >= chains_in_bound) return mark_chain(chain, CandidateState::kMaxConfigs);
    if (options.time_budget_s > 0 &&
        (out_of_time.load() ||
         std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > options.time_budget_s)) {
      out_of_time.store(true);
      return mark_chain(chain, CandidateState::kTimeBudget);
    }
    ScoreChain(ChainScoring{space, scorer, ranker, options, dominance, scored, reasons_mutex, reasons}, chain);
    if (options.progress) options.progress(settled += ChainSize(space, chain), total);
  });
  return mine;
}

}  // namespace

PlanSlice ScorePlanSlice(const SearchSpace& space, const Scorer& scorer, const PlanOptions& options, int k,
                         int count, const MetricScorer* ranker) {
  std::vector<CandidateScore> scored(space.candidates.size());
  PlanSlice slice;
  slice.index = k;
  slice.count = count;
  const std::vector<size_t> mine = ScoreChains(space, scorer, options, k, count, ranker, scored,
                                               slice.infeasible_reasons);
  int64_t total = 0;
  for (size_t ci : mine) total += ChainSize(space, space.chains[ci]);
  slice.candidates.reserve(static_cast<size_t>(total));
  slice.scores.reserve(static_cast<size_t>(total));
  for (size_t ci : mine) {
    const Chain& chain = space.chains[ci];
    for (uint32_t li = chain.first; li < chain.first + chain.count; ++li) {
      for (uint32_t j = 0; j < space.ladders[li].count; ++j) {
        const uint32_t idx = space.ladders[li].first + j;
        slice.candidates.push_back(idx);
        slice.scores.push_back(scored[idx]);
      }
    }
  }
  return slice;
}

void ScoreWholeSpace(const SearchSpace& space, const Scorer& scorer, const PlanOptions& options,
                     const MetricScorer* ranker, MergedScores* out) {
  out->scores.assign(space.candidates.size(), CandidateScore{});
  out->infeasible_reasons.clear();
  ScoreChains(space, scorer, options, 0, 1, ranker, out->scores, out->infeasible_reasons);
  for (const CandidateScore& s : out->scores)
    PARASIM_CHECK(s.state != CandidateState::kUnscored, "a candidate was left unscored");
}

MergedScores MergePlanSlices(const SearchSpace& space, const std::vector<PlanSlice>& slices) {
  MergedScores merged;
  merged.scores.resize(space.candidates.size());
  std::vector<bool> seen(space.candidates.size(), false);
  size_t settled = 0;
  for (const PlanSlice& slice : slices) {
    PARASIM_CHECK(slice.candidates.size() == slice.scores.size(), "slice ", slice.index, " is ragged");
    for (size_t i = 0; i < slice.candidates.size(); ++i) {
      const uint32_t idx = slice.candidates[i];
      PARASIM_CHECK(idx < seen.size() && !seen[idx], "candidate ", idx, " settled by two slices or out of range");
      PARASIM_CHECK(slice.scores[i].state != CandidateState::kUnscored, "candidate ", idx, " left unscored");
      seen[idx] = true;
      merged.scores[idx] = slice.scores[i];
      ++settled;
    }
    for (const auto& [reason, n] : slice.infeasible_reasons) merged.infeasible_reasons[reason] += n;
  }
  PARASIM_CHECK(settled == space.candidates.size(), "slices settled ", settled, " of ", space.candidates.size(),
                " candidates");
  return merged;
}

std::string SerializePlanSlice(const PlanSlice& slice) {
  std::string out(kSliceMagic, sizeof kSliceMagic);
  Put<int32_t>(out, slice.index);
  Put<int32_t>(out, slice.count);
  Put<uint64_t>(out, slice.candidates.size());
  for (size_t i = 0; i < slice.candidates.size(); ++i) {
    const CandidateScore& s = slice.scores[i];
    Put<uint32_t>(out, slice.candidates[i]);
    Put<uint8_t>(out, static_cast<uint8_t>(s.state));
    Put<double>(out, s.tokens_per_s);
    Put<double>(out, s.tokens_per_joule);
    Put<double>(out, s.exposed_comm_fraction);
  }
  Put<uint64_t>(out, slice.infeasible_reasons.size());
  for (const auto& [reason, n] : slice.infeasible_reasons) {
    Put<uint64_t>(out, reason.size());
    out += reason;
    Put<int64_t>(out, n);
  }
  return out;
}

PlanSlice DeserializePlanSlice(std::string_view in) {
  PARASIM_CHECK(in.size() >= sizeof kSliceMagic && std::memcmp(in.data(), kSliceMagic, sizeof kSliceMagic) == 0,
                "not plan slice bytes");
  in.remove_prefix(sizeof kSliceMagic);
  PlanSlice slice;
  slice.index = Take<int32_t>(in);
  slice.count = Take<int32_t>(in);
  const auto n = Take<uint64_t>(in);
  PARASIM_CHECK(n <= in.size(), "plan slice claims ", n, " candidates in ", in.size(), " bytes");
  slice.candidates.reserve(n);
  slice.scores.reserve(n);
  for (uint64_t i = 0; i < n; ++i) {
    slice.candidates.push_back(Take<uint32_t>(in));
    CandidateScore s;
    const auto state = Take<uint8_t>(in);
    PARASIM_CHECK(state <= static_cast<uint8_t>(CandidateState::kTimeBudget), "bad candidate state ", int{state});
    s.state = static_cast<CandidateState>(state);
    s.tokens_per_s = Take<double>(in);
    s.tokens_per_joule = Take<double>(in);
    s.exposed_comm_fraction = Take<double>(in);
    slice.scores.push_back(s);
  }
  const auto reasons = Take<uint64_t>(in);
  for (uint64_t i = 0; i < reasons; ++i) {
    const auto len = Take<uint64_t>(in);
    PARASIM_CHECK(len <= in.size(), "plan slice reason runs past the end");
    std::string reason(in.substr(0, len));
    in.remove_prefix(len);
    slice.infeasible_reasons[reason] = Take<int64_t>(in);
  }
  PARASIM_CHECK(in.empty(), "plan slice has ", in.size(), " trailing bytes");
  return slice;
}

void SetDefaultSliceRunner(SliceRunner runner) { DefaultRunnerSlot() = std::move(runner); }

const SliceRunner& DefaultSliceRunner() { return DefaultRunnerSlot(); }

}  // namespace parasim::planner
