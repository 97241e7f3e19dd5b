// The planner's scoring split into slices (planner/plan_slice.h): K slices
// merged in any order rank exactly as one process does, and a slice survives
// the bytes it travels as between MPI ranks.
#include <algorithm>
#include <random>

#include <catch2/catch.hpp>

#include "fake_scorer.h"
#include "planner/plan_slice.h"
#include "planner/planner.h"
#include "test_specs.h"
#include "tiny_plan_setup.h"

using namespace parasim;
using namespace parasim::planner;
using parasim::planner::testing::FakeScorer;
using parasim::planner::testing::Job;
using parasim::planner::testing::TinyModel;

namespace {

using Setup = parasim::planner::testing::TinyPlanSetup;

std::string Fingerprint(const PlanResult& r) {
  std::string s = StrCat("searched=", r.searched, " scored=", r.scored, " feasible=", r.feasible, " cut=", r.cut_by, "\n");
  for (const auto& [reason, n] : r.rejected) s += StrCat(reason, "=", n, "\n");
  for (size_t i = 0; i < r.plans.size(); ++i) {
    s += StrCat(r.plans[i].config.ToString(), " ", r.plan_values[i], " ", r.plans[i].tokens_per_s, "\n");
    for (const std::string& e : r.equivalents[i]) s += StrCat("  = ", e, "\n");
  }
  for (const Report& p : r.pareto) s += StrCat("pareto ", p.config.ToString(), "\n");
  if (r.baseline) s += StrCat("baseline ", r.baseline->config.ToString(), "\n");
  return s;
}

// Restores the default runner when a test ends (it is process-wide).
struct RunnerGuard {
  explicit RunnerGuard(SliceRunner r) { SetDefaultSliceRunner(std::move(r)); }
  ~RunnerGuard() { SetDefaultSliceRunner(nullptr); }
};

// A runner that scores K slices, sends each through its bytes, and hands
// them back in a shuffled order, as an all-gather of K ranks would.
SliceRunner ShuffledRunner(int count, unsigned seed) {
  return [count, seed](const SliceScorer& score) {
    std::vector<PlanSlice> slices;
    for (int k = 0; k < count; ++k) slices.push_back(DeserializePlanSlice(SerializePlanSlice(score(k, count))));
    std::mt19937 rng(seed);
    std::shuffle(slices.begin(), slices.end(), rng);
    return slices;
  };
}

}  // namespace

TEST_CASE("plan slices: K slices merged in any order rank as one process does", "[planner][slice]") {
  Setup s;
  s.fake.memory_limit_gb = 30;   // memory-bound chains: implied-memory and infeasible reasons both occur
  PlanOptions o;
  o.threads = 2;
  o.top_k = 8;
  const std::string one = Fingerprint(s.Run(o));
  for (int count : {2, 3, 5, 64}) {
    for (unsigned seed : {1u, 7u}) {
      RunnerGuard guard(ShuffledRunner(count, seed));
      INFO("K = " << count << ", seed " << seed);
      CHECK(Fingerprint(s.Run(o)) == one);
    }
  }
}

TEST_CASE("plan slices: --max-configs cuts the same chains however the space is sliced", "[planner][slice]") {
  Setup s;
  PlanOptions o;
  o.max_configs = 500;
  const std::string one = Fingerprint(s.Run(o));
  REQUIRE(one.find("limit: --max-configs") != std::string::npos);
  RunnerGuard guard(ShuffledRunner(3, 11));
  CHECK(Fingerprint(s.Run(o)) == one);
}

TEST_CASE("plan slices: every candidate is settled by exactly one slice", "[planner][slice]") {
  Setup s;
  const PlanOptions o;
  const SearchSpace space = s.Space(o);
  const int count = 3;
  std::vector<PlanSlice> slices;
  size_t total = 0;
  for (int k = 0; k < count; ++k) {
    slices.push_back(ScorePlanSlice(space, s.scorer(), o, k, count));
    total += slices.back().candidates.size();
    CHECK(std::is_sorted(slices.back().candidates.begin(), slices.back().candidates.end()));
  }
  CHECK(total == space.candidates.size());
  const MergedScores merged = MergePlanSlices(space, slices);
  CHECK(std::none_of(merged.scores.begin(), merged.scores.end(),
                     [](const CandidateScore& c) { return c.state == CandidateState::kUnscored; }));
  // A slice given twice, or one left out, is caught rather than ranked.
  std::vector<PlanSlice> doubled = slices;
  doubled.push_back(slices[1]);
  CHECK_THROWS(MergePlanSlices(space, doubled));
  slices.pop_back();
  CHECK_THROWS(MergePlanSlices(space, slices));
}

TEST_CASE("plan slices: the bytes round-trip bit for bit and reject damage", "[planner][slice]") {
  PlanSlice slice;
  slice.index = 2;
  slice.count = 5;
  slice.candidates = {3, 8, 13};
  slice.scores = {{1234.5678901234567, 0.1 + 0.2, 1e-300, CandidateState::kFeasible},
                  {0, 0, 0, CandidateState::kInfeasible},
                  {0, 0, 0, CandidateState::kDominated}};
  slice.infeasible_reasons = {{"memory", 7}, {"divisibility", 1}};
  const std::string bytes = SerializePlanSlice(slice);
  const PlanSlice back = DeserializePlanSlice(bytes);
  CHECK(back.index == 2);
  CHECK(back.count == 5);
  CHECK(back.candidates == slice.candidates);
  REQUIRE(back.scores.size() == 3);
  CHECK(back.scores[0].tokens_per_s == slice.scores[0].tokens_per_s);
  CHECK(back.scores[0].tokens_per_joule == slice.scores[0].tokens_per_joule);
  CHECK(back.scores[0].exposed_comm_fraction == slice.scores[0].exposed_comm_fraction);
  CHECK(back.scores[1].state == CandidateState::kInfeasible);
  CHECK(back.infeasible_reasons == slice.infeasible_reasons);
  CHECK(SerializePlanSlice(back) == bytes);
  CHECK_THROWS(DeserializePlanSlice(bytes.substr(0, bytes.size() - 1)));
  CHECK_THROWS(DeserializePlanSlice(bytes + "x"));
  CHECK_THROWS(DeserializePlanSlice("XSL1"));
}
