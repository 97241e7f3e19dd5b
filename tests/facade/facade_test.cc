// The facade as a scheduler sees it: errors name struct fields, a query with
// no answer throws NoAnswer with reasons, answers agree with the modules
// beneath, a defined model equals the preset of the same shape, and the
// cache does not change answers.
#include <catch2/catch.hpp>

#include "core/loaders.h"
#include "cost_model/evaluator.h"
#include "parasim/parasim.h"
#include "planner/planner.h"
#include "tests/facade/facade_test_util.h"

namespace {

using parasim::Planner;

Planner SmallPlanner(long long batch = 64) {
  return Planner(parasim::Model::Load("llama2-7b"), parasim::Cluster::Load("dgx-h100"),
                 parasim::Job{.global_batch = batch, .seq_len = 4096});
}

// Where the first issue of an InvalidInput thrown by f points: its key, or
// "file:key" when the field is parsed text (then `file` names the field).
template <class F>
std::string FirstIssueKey(F&& f) {
  try {
    f();
  } catch (const parasim::InvalidInput& e) {
    REQUIRE_FALSE(e.issues().empty());
    const parasim::Issue& issue = e.issues().front();
    return issue.file.empty() ? issue.key : issue.file + ":" + issue.key;
  }
  return "(nothing thrown)";
}

}  // namespace

TEST_CASE("facade errors name the struct field") {
  const Planner planner = SmallPlanner();
  parasim::PlanQuery q;
  q.gpus = 16;
  q.top = 0;
  CHECK(FirstIssueKey([&] { planner.Plan(q); }) == "PlanQuery::top");
  q.top = 1;
  q.gpus = 12;
  CHECK(FirstIssueKey([&] { planner.Plan(q); }) == "PlanQuery::gpus");
  q.gpus = 16;
  q.objective = "speed";
  CHECK(FirstIssueKey([&] { planner.Plan(q); }) == "PlanQuery::objective");
  q.objective = "throughput";
  q.constraints = "tp<=banana";
  CHECK(FirstIssueKey([&] { planner.Plan(q); }).rfind("PlanQuery::constraints", 0) == 0);
  CHECK(FirstIssueKey([&] { planner.Simulate({.gpus = 16, .config = "dp=16", .fidelity = "exact"}); }) ==
        "SimulateQuery::fidelity");
  CHECK(FirstIssueKey([&] { planner.Simulate({.gpus = 16, .config = "dp=sixteen"}); }).rfind("SimulateQuery::config", 0) ==
        0);
  CHECK(FirstIssueKey([&] {
          Planner(parasim::Model::Load("llama2-7b"), parasim::Cluster::Load("dgx-h100"), parasim::Job{});
        }) == "Job::global_batch");
  CHECK(FirstIssueKey([] { parasim::Model::Define({.hidden_size = 4096}); }).rfind("ModelShape::", 0) == 0);
  CHECK(FirstIssueKey([&] { planner.Scale({.gpus = {32, 16}}); }) == "ScaleQuery::gpus");
  CHECK(FirstIssueKey([&] { planner.WhatIf({.gpus = 16}); }) == "WhatIfQuery::vary");
  const parasim::Cluster dgx = parasim::Cluster::Load("dgx-h100");
  CHECK(FirstIssueKey([&] { parasim::Collective(dgx, {.op = "allsum"}); }) == "CollectiveQuery::op");
  // Every kind is a parasim::Error, catchable in one place.
  CHECK_THROWS_AS(parasim::Model::Load("no-such-model"), parasim::Error);
}

TEST_CASE("a query with no answer throws NoAnswer with the reasons") {
  const Planner planner(parasim::Model::Load("llama3-405b"), parasim::Cluster::Load("dgx-h100"),
                        parasim::Job{.global_batch = 8, .seq_len = 8192});
  parasim::PlanQuery q;
  q.gpus = 8;
  const parasim::PlanResult r = planner.Plan(q);
  CHECK(r.plans.empty());
  CHECK(r.feasible == 0);
  try {
    (void)r.best();
    FAIL("best() of an empty plan did not throw");
  } catch (const parasim::NoAnswer& e) {
    CHECK_FALSE(e.reasons().empty());
  }
}

TEST_CASE("facade plans equal the planner's over the evaluator") {
  const Planner planner = SmallPlanner();
  parasim::PlanQuery q;
  q.gpus = 32;
  q.top = 4;
  const parasim::PlanResult facade = planner.Plan(q);

  parasim::JobSpec job;
  job.global_batch = 64;
  job.seq_len = 4096;
  const parasim::AnalyticalEvaluator evaluator(parasim::LoadModel("llama2-7b"), parasim::LoadCluster("dgx-h100", 4),
                                               job);
  parasim::planner::PlanOptions options;
  options.top_k = 4;
  options.threads = 1;
  const parasim::planner::PlanResult direct = parasim::planner::RunPlan(evaluator, options);
  REQUIRE(facade.plans.size() == direct.plans.size());
  for (size_t i = 0; i < direct.plans.size(); ++i) {
    CHECK(facade.plans[i].config == direct.plans[i].config.ToString());
    CHECK(facade.plans[i].step_time_s == direct.plans[i].step_time.si());
    // Each stage's memory, its peak the plan's memory.
    const parasim::Prediction& p = facade.plans[i];
    REQUIRE(p.memory_bytes_per_stage.size() == static_cast<size_t>(direct.plans[i].config.pp));
    REQUIRE(p.memory_peak_stage >= 0);
    REQUIRE(p.memory_peak_stage < static_cast<int>(p.memory_bytes_per_stage.size()));
    CHECK(p.memory_bytes_per_stage[p.memory_peak_stage] == p.memory_bytes_per_gpu);
    for (double stage : p.memory_bytes_per_stage) CHECK(stage <= p.memory_bytes_per_gpu);
  }
  CHECK(facade.searched == direct.searched);
  CHECK(facade.scored == direct.scored);
  CHECK(facade.feasible == direct.feasible);
  CHECK(facade.rejected == direct.rejected);
  REQUIRE(facade.baseline.has_value());
  CHECK(facade.baseline->config == direct.baseline->config.ToString());

  // The best config replays to the same prediction, and tier B agrees within 25%.
  const parasim::Prediction again = planner.Simulate({.gpus = 32, .config = facade.best().config});
  CHECK(SamePrediction(again, facade.best()));
  const parasim::Prediction b =
      planner.Simulate({.gpus = 32, .config = facade.best().config, .fidelity = "simulated"});
  CHECK(b.fidelity == "simulated");
  CHECK(b.step_time_s == Approx(again.step_time_s).epsilon(0.25));
}

TEST_CASE("a query's global batch overrides the job's; answers do not depend on the cache") {
  const Planner shared = SmallPlanner(64);
  parasim::PlanQuery q;
  q.gpus = 16;
  q.top = 2;
  q.global_batch = 128;
  const parasim::PlanResult via_override = shared.Plan(q);
  q.global_batch = 0;
  (void)shared.Plan(q);   // another entry in the cache between the two
  q.global_batch = 128;
  const parasim::PlanResult again = shared.Plan(q);
  q.global_batch = 0;
  const parasim::PlanResult fresh = SmallPlanner(128).Plan(q);
  REQUIRE(via_override.plans.size() == fresh.plans.size());
  for (size_t i = 0; i < fresh.plans.size(); ++i) {
    CHECK(SamePrediction(via_override.plans[i], fresh.plans[i]));
    CHECK(SamePrediction(again.plans[i], fresh.plans[i]));
  }
  CHECK(via_override.plans.front().num_micro_batches != 0);
}

TEST_CASE("a model defined by its shape equals the preset of that shape") {
  const parasim::Model preset = parasim::Model::Load("llama2-7b");
  const parasim::Model defined = parasim::Model::Define({.name = "llama2-7b",
                                                         .hidden_size = 4096,
                                                         .num_layers = 32,
                                                         .num_attention_heads = 32,
                                                         .num_kv_heads = 32,
                                                         .ffn_hidden_size = 11008,
                                                         .vocab_size = 32000});
  CHECK(defined.parameters() == preset.parameters());
  const parasim::Cluster cluster = parasim::Cluster::Load("dgx-h100");
  const parasim::Job job{.global_batch = 64, .seq_len = 4096};
  const parasim::SimulateQuery sim{.gpus = 16, .config = "dp=4,tp=4,pp=1,mbs=1,sharding=zero1"};
  CHECK(SamePrediction(Planner(preset, cluster, job).Simulate(sim), Planner(defined, cluster, job).Simulate(sim)));
}

TEST_CASE("facade collective: more ranks across nodes never beat one node's NVLink bus bandwidth") {
  const parasim::Cluster dgx = parasim::Cluster::Load("dgx-h100");
  const parasim::CollectiveResult one = parasim::Collective(dgx, {.ranks = 8, .sizes_bytes = {1 << 30}});
  const parasim::CollectiveResult many = parasim::Collective(dgx, {.ranks = 64, .sizes_bytes = {1 << 30}});
  REQUIRE(one.rows.size() == 1);
  CHECK(one.nodes == 1);
  CHECK(many.nodes == 8);
  CHECK(many.rows[0].busbw_Bps < one.rows[0].busbw_Bps);
  // busbw = algbw x 2(n-1)/n for all-reduce (nccl-tests' definition).
  CHECK(one.rows[0].busbw_Bps == Approx(one.rows[0].algbw_Bps * 2.0 * 7 / 8).epsilon(1e-9));
}

TEST_CASE("facade scale: efficiency is relative to the first size; a faster NIC never slows the best plan") {
  const Planner planner = SmallPlanner();
  parasim::ScaleQuery scale;
  scale.gpus = {8, 16, 32};
  scale.plan.objective = "throughput";
  const parasim::ScaleResult s = planner.Scale(scale);
  REQUIRE(s.points.size() == 3);
  REQUIRE(s.points[0].feasible);
  CHECK(s.points[0].efficiency == Approx(1.0));
  CHECK(s.points[2].global_batch == 2 * 32);   // weak: 2 sequences per GPU
  // (No MTBF given: goodput 1, so efficiency is the per-GPU rate's ratio; it
  // may exceed 1 when more GPUs let a better config fit.)
  for (const parasim::ScalePoint& p : s.points) {
    CHECK(p.efficiency ==
          Approx(p.best.tokens_per_s_per_gpu / s.points[0].best.tokens_per_s_per_gpu).epsilon(1e-12));
  }

  parasim::WhatIfQuery whatif;
  whatif.gpus = 32;
  whatif.vary = {"inter_node.nic_bandwidth=100Gb/s,400Gb/s"};
  whatif.plan.objective = "throughput";
  const parasim::WhatIfResult w = planner.WhatIf(whatif);
  REQUIRE(w.points.size() == 2);
  REQUIRE(w.points[0].feasible);
  REQUIRE(w.points[1].feasible);
  CHECK(w.points[0].setting.front().second == "100Gb/s");
  CHECK(w.points[1].best.tokens_per_s >= w.points[0].best.tokens_per_s);
}
