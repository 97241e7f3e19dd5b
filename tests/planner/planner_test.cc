#include <algorithm>
#include <mutex>

#include <catch2/catch.hpp>

#include "fake_scorer.h"
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

// Everything a plan prints, as one string, to compare runs exactly.
std::string Fingerprint(const PlanResult& r) {
  std::string s = StrCat("searched=", r.searched, " scored=", r.scored, " feasible=", r.feasible, "\n");
  for (const auto& [reason, n] : r.rejected) s += StrCat(reason, "=", n, "\n");
  for (size_t i = 0; i < r.plans.size(); ++i) {
    s += StrCat(r.plans[i].config.ToString(), " ", r.plan_values[i], " ", r.plans[i].tokens_per_s, "\n");
  }
  for (const Report& p : r.pareto) s += StrCat("pareto ", p.config.ToString(), "\n");
  if (r.baseline) s += StrCat("baseline ", r.baseline->config.ToString(), "\n");
  return s;
}

}  // namespace

TEST_CASE("planner: counts add up and every rejection has a reason", "[planner]") {
  Setup s;
  s.fake.memory_limit_gb = 30;   // some configs do not fit
  const PlanResult r = s.Run(PlanOptions{});
  int64_t rejected = 0;
  for (const auto& [reason, n] : r.rejected) rejected += n;
  CHECK(r.searched == r.feasible + rejected);
  CHECK(r.rejected.at("memory") > 0);
  CHECK(r.rejected.at("dominance: recompute not needed") > 0);
  CHECK(r.feasible > 0);
  CHECK(r.plans.size() == 16);
  CHECK(r.plans.size() == r.plan_values.size());
  for (const Report& p : r.plans) CHECK(p.feasible);
  // Ranked best first by the objective (tokens per joule by default).
  for (size_t i = 1; i < r.plan_values.size(); ++i) CHECK(r.plan_values[i - 1] >= r.plan_values[i]);
}

TEST_CASE("planner: same output for any thread count", "[planner]") {
  Setup s;
  s.fake.memory_limit_gb = 30;
  PlanOptions o;
  o.threads = 1;
  const std::string one = Fingerprint(s.Run(o));
  for (int threads : {2, 3, 8}) {
    o.threads = threads;
    CHECK(Fingerprint(s.Run(o)) == one);
  }
}

TEST_CASE("planner: recomputation only where memory requires it", "[planner]") {
  Setup s;
  s.fake.memory_limit_gb = 1e9;   // everything fits: no plan recomputes
  PlanOptions o;
  o.top_k = 1000;
  const PlanResult r = s.Run(o);
  for (const Report& p : r.plans) CHECK(p.config.recompute == RecomputeMode::kNone);
  CHECK(r.rejected.at("dominance: recompute not needed") == 2 * r.feasible);

  // Tight memory: the configs that fit only with recomputation come with it.
  s.fake.memory_limit_gb = 16;
  const PlanResult tight = s.Run(o);
  bool some_recompute = false;
  for (const Report& p : tight.plans) some_recompute = some_recompute || p.config.recompute != RecomputeMode::kNone;
  CHECK(some_recompute);

  // Without dominance every ladder rung is scored.
  o.recompute_dominance = false;
  const PlanResult all = s.Run(o);
  CHECK(all.rejected.count("dominance: recompute not needed") == 0);
  CHECK(all.scored > r.scored);
}

TEST_CASE("planner: objectives pick different winners where they should", "[planner]") {
  Setup s;
  PlanOptions o;
  o.objective.objective = Objective::kThroughput;
  const PlanResult fast = s.Run(o);
  o.objective.objective = Objective::kTokensPerJoule;
  const PlanResult frugal = s.Run(o);
  REQUIRE(!fast.plans.empty());
  REQUIRE(!frugal.plans.empty());
  // The fake scorer charges TP in power: the fastest plan is not the most frugal.
  CHECK(fast.plans[0].config.ToString() != frugal.plans[0].config.ToString());
  CHECK(fast.plans[0].tokens_per_s >= frugal.plans[0].tokens_per_s);
  CHECK(frugal.plans[0].tokens_per_joule >= fast.plans[0].tokens_per_joule);

  o.objective.objective = Objective::kExposedComm;
  const PlanResult quiet = s.Run(o);
  for (const Report& p : fast.plans) CHECK(quiet.plans[0].exposed_comm_fraction <= p.exposed_comm_fraction);

  // Time to train ranks as throughput does; its value is tokens / throughput.
  o.objective.objective = Objective::kTimeToTrain;
  o.objective.tokens = 1e12;
  const PlanResult ttt = s.Run(o);
  CHECK(ttt.plans[0].config.ToString() == fast.plans[0].config.ToString());
  CHECK_THAT(ttt.plan_values[0], Catch::Matchers::WithinRel(1e12 / fast.plans[0].tokens_per_s, 1e-12));

  // Cost with only a GPU price ranks as throughput; with only energy, as tokens/J.
  o.objective.objective = Objective::kCost;
  o.objective.tokens = 0;
  o.objective.gpu_hour_price = 2.0;
  CHECK(s.Run(o).plans[0].config.ToString() == fast.plans[0].config.ToString());
  o.objective.gpu_hour_price = 0;
  o.objective.energy_price = 0.1;
  CHECK(s.Run(o).plans[0].config.ToString() == frugal.plans[0].config.ToString());
}

TEST_CASE("planner: objectives that lack an input are refused", "[planner]") {
  Setup s;
  PlanOptions o;
  o.objective.objective = Objective::kCost;
  CHECK_THROWS_WITH(s.Run(o), Catch::Contains("price"));
  o.objective.objective = Objective::kTimeToTrain;
  CHECK_THROWS_WITH(s.Run(o), Catch::Contains("--tokens"));
  CHECK_THROWS_WITH(ParseObjective("speed"), Catch::Contains("speed"));
}

TEST_CASE("planner: constraints shape the plans", "[planner]") {
  Setup s;
  PlanOptions o;
  o.constraints = ConstraintSet::Parse("tp=2,pp<=2,sharding=zero2,recompute=none");
  o.top_k = 100;
  const PlanResult r = s.Run(o);
  REQUIRE(!r.plans.empty());
  for (const Report& p : r.plans) {
    CHECK(p.config.tp == 2);
    CHECK(p.config.pp <= 2);
    CHECK(p.config.sharding == ShardingMode::kZero2);
    CHECK(p.config.recompute == RecomputeMode::kNone);
  }
  CHECK(r.rejected.at("constraint") > 0);
}

TEST_CASE("planner: the baseline is the best pure-FSDP plan", "[planner]") {
  Setup s;
  const PlanResult r = s.Run(PlanOptions{});
  REQUIRE(r.baseline.has_value());
  CHECK(r.baseline->config.tp == 1);
  CHECK(r.baseline->config.pp == 1);
  CHECK(r.baseline->config.cp == 1);
  CHECK(r.baseline->config.sharding == ShardingMode::kZero2);
  CHECK(r.plan_values[0] >= r.baseline_value);
}

TEST_CASE("planner: pareto front of a plan is mutually non-dominated", "[planner]") {
  Setup s;
  const PlanResult r = s.Run(PlanOptions{});
  REQUIRE(!r.pareto.empty());
  for (size_t i = 0; i < r.pareto.size(); ++i) {
    for (size_t j = 0; j < r.pareto.size(); ++j) {
      if (i == j) continue;
      const bool dominated = r.pareto[j].tokens_per_s >= r.pareto[i].tokens_per_s &&
                             r.pareto[j].tokens_per_joule >= r.pareto[i].tokens_per_joule;
      CHECK_FALSE(dominated);
    }
  }
  // Its ends are the best of each axis among the ranked plans.
  for (const Report& p : r.plans) {
    CHECK(r.pareto.front().tokens_per_s >= p.tokens_per_s);
    CHECK(r.pareto.back().tokens_per_joule >= p.tokens_per_joule);
  }
}

TEST_CASE("planner: reason categories", "[planner]") {
  CHECK(ReasonCategory("memory: needs 91 GB of 80 GB") == "memory");
  CHECK(ReasonCategory("  config : tp does not divide") == "config");
  CHECK(ReasonCategory("") == "infeasible");
}

TEST_CASE("planner: a re-scorer re-ranks the best plans", "[planner]") {
  Setup s;
  PlanOptions o;
  o.objective.objective = Objective::kThroughput;
  o.top_k = 4;
  o.rescore_k = 10;
  const PlanResult a = s.Run(o);
  // A re-scorer that halves the throughput of tp > 1 plans.
  const Scorer base = s.scorer();
  const Scorer rescorer = [base](const ParallelConfig& c) {
    Report r = base(c);
    r.fidelity = Fidelity::kSimulated;
    if (c.tp > 1) r.tokens_per_s /= 2;
    return r;
  };
  o.threads = 3;
  const PlanResult b = RunPlan(s.model, s.job, s.gpus, s.gpus_per_node, base, o, &rescorer);
  REQUIRE(b.plans.size() == 4);
  for (const Report& p : b.plans) CHECK(p.fidelity == Fidelity::kSimulated);
  for (size_t i = 1; i < b.plan_values.size(); ++i) CHECK(b.plan_values[i - 1] >= b.plan_values[i]);
  // Plans are tier A's top 10, re-scored and re-ranked (stable on ties).
  PlanOptions ten = o;
  ten.top_k = 10;
  const PlanResult tier_a = s.Run(ten);
  std::vector<Report> expect;
  for (const Report& p : tier_a.plans) expect.push_back(rescorer(p.config));
  std::stable_sort(expect.begin(), expect.end(),
                   [](const Report& x, const Report& y) { return x.tokens_per_s > y.tokens_per_s; });
  for (size_t i = 0; i < b.plans.size(); ++i) CHECK(b.plans[i].config.ToString() == expect[i].config.ToString());
  CHECK(b.searched == a.searched);
  CHECK(b.feasible == a.feasible);
  REQUIRE(b.pareto.size() == a.pareto.size());   // the front stays tier A's
  o.threads = 1;
  const PlanResult c = RunPlan(s.model, s.job, s.gpus, s.gpus_per_node, base, o, &rescorer);
  CHECK(Fingerprint(c) == Fingerprint(b));
}

TEST_CASE("planner: plans equal on every metric are shown once, naming their equivalents", "[planner]") {
  Setup s;
  PlanOptions o;
  o.top_k = 12;
  o.constraints = ConstraintSet::Parse("order=any", "test");   // the fake scorer ignores placement order
  const PlanResult r = s.Run(o);
  REQUIRE(r.plans.size() == r.equivalents.size());
  REQUIRE(r.plans.size() == 12);
  size_t named = 0;
  for (size_t i = 0; i < r.plans.size(); ++i) {
    for (size_t j = i + 1; j < r.plans.size(); ++j) {
      const Report &a = r.plans[i], &b = r.plans[j];
      const bool same = a.step_time.si() == b.step_time.si() && a.memory_per_gpu.si() == b.memory_per_gpu.si() &&
                        a.tokens_per_joule == b.tokens_per_joule && a.power_per_gpu.si() == b.power_per_gpu.si();
      INFO(a.config.ToString() << " vs " << b.config.ToString());
      CHECK_FALSE(same);
    }
    named += r.equivalents[i].size();
    for (const std::string& e : r.equivalents[i]) CHECK(!e.empty());
  }
  // 120 orders place every layout the same to this scorer: each plan names the others.
  CHECK(named >= 119 * r.plans.size());
  // The best plan is the same with and without the equivalents collapsed.
  PlanOptions plain;
  plain.top_k = 1;
  CHECK(s.Run(plain).plan_values.front() == r.plan_values.front());
}

TEST_CASE("planner: progress counts every candidate once and changes nothing", "[planner]") {
  Setup s;
  s.fake.memory_limit_gb = 30;
  PlanOptions o;
  o.threads = 3;
  const std::string quiet = Fingerprint(s.Run(o));
  std::mutex m;
  int64_t last = 0, total = -1, calls = 0;
  bool increasing = true;
  o.progress = [&](int64_t done, int64_t all) {
    std::lock_guard<std::mutex> lock(m);
    ++calls;
    total = all;
    increasing = increasing && done > 0 && done <= all;
    last = std::max(last, done);
  };
  CHECK(Fingerprint(s.Run(o)) == quiet);
  CHECK(calls > 1);
  CHECK(increasing);
  CHECK(last == total);   // every candidate settled exactly once
}
