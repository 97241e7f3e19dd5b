// The planner's scoring split into slices, so that a sweep can be scored by
// several processes (parasim-mpi) and ranked by one with the same answer.
//
// Slice k of K scores the chains ci of the space with ci % K == k (strided:
// the chains of one layout sit next to each other and cost alike, so every
// slice gets a share of each kind). A chain is the planner's unit of work
// (its ladders decide dominance and implied memory inside it), so slicing by
// chain changes no candidate's state. MergePlanSlices puts the slices back
// into one table indexed by candidate; it does not depend on the order the
// slices arrive in, and ranking reads only that table, so K processes print
// what one prints, byte for byte.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "planner/planner.h"
#include "planner/search_space.h"

namespace parasim::planner {

enum class CandidateState : uint8_t {
  kUnscored,
  kFeasible,
  kInfeasible,
  kDominated,
  kImpliedMemory,
  kMaxConfigs,
  kTimeBudget,
};

// What ranking needs of one scored candidate (full reports are re-made for the few printed).
struct CandidateScore {
  double tokens_per_s = 0;
  double tokens_per_joule = 0;
  double exposed_comm_fraction = 0;
  CandidateState state = CandidateState::kUnscored;
};

struct PlanSlice {
  int index = 0;                          // k
  int count = 1;                          // K
  std::vector<uint32_t> candidates;       // candidate indices this slice settled, ascending
  std::vector<CandidateScore> scores;     // one per entry of `candidates`
  std::map<std::string, int64_t> infeasible_reasons;   // reason category -> count
};

// Whether chain `chain` belongs to slice k of K.
inline bool ChainInSlice(size_t chain, int k, int count) {
  return static_cast<int>(chain % static_cast<size_t>(count)) == k;
}

// Scores the chains of slice k of K on options.threads threads. Honors
// --max-configs (the bound is over the whole space's enumeration order, so
// every slice cuts the same chains) and --time-budget (per slice, measured
// from this call). options.progress sees this slice's counts.
// With a `ranker` (planner.h: MetricScorer) candidates are scored on its metrics.
PlanSlice ScorePlanSlice(const SearchSpace& space, const Scorer& scorer, const PlanOptions& options, int k,
                         int count, const MetricScorer* ranker = nullptr);

// The whole space's scores from slices that cover every candidate exactly
// once, in any order (an internal error otherwise).
struct MergedScores {
  std::vector<CandidateScore> scores;                  // indexed by candidate
  std::map<std::string, int64_t> infeasible_reasons;   // summed over slices
};
MergedScores MergePlanSlices(const SearchSpace& space, const std::vector<PlanSlice>& slices);

// A slice as bytes and back, for sending between processes of one build
// (native byte order; doubles bit for bit). Malformed bytes are an internal error.
std::string SerializePlanSlice(const PlanSlice& slice);
PlanSlice DeserializePlanSlice(std::string_view bytes);

// The whole space as one slice, straight into `out` (whose vectors keep
// their capacity between calls: a scheduler's next query reuses the pages):
// equal to MergePlanSlices over {ScorePlanSlice(space, ..., 0, 1)}.
void ScoreWholeSpace(const SearchSpace& space, const Scorer& scorer, const PlanOptions& options,
                     const MetricScorer* ranker, MergedScores* out);

// How RunPlan gets its slices: given the scorer of slice k of K, returns the
// slices covering the space. The default scores slice 0 of 1 here; an MPI
// run scores its own rank's slice and all-gathers the others, so every rank
// ranks the same table (mpi/).
using SliceScorer = std::function<PlanSlice(int k, int count)>;
using SliceRunner = std::function<std::vector<PlanSlice>(const SliceScorer& score)>;

// The runner RunPlan uses (empty: the default above). Set once, before any
// planning, by a program that distributes (parasim-mpi); tests set and reset it.
void SetDefaultSliceRunner(SliceRunner runner);
const SliceRunner& DefaultSliceRunner();

}  // namespace parasim::planner
