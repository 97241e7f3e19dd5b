// The planner over the real tier-A evaluator: determinism of the plan
// across thread counts (the JSON contract: tests/cli/plan_json_test.cc), and
// the seed findings.
#include <algorithm>
#include <set>

#include <catch2/catch.hpp>

#include "core/field_registry.h"
#include "core/loaders.h"
#include "cost_model/stack_field_registry.h"
#include "cost_model/evaluator.h"
#include "planner/explain.h"
#include "planner/launch_flags.h"
#include "planner/planner.h"
#include "planner/scaling.h"
#include "planner/validation.h"
#include "planner/whatif.h"
#include "tests/planner/llama7b_64_h100.h"
#include "tests/planner/plan_digest.h"

using namespace parasim;
using namespace parasim::planner;

namespace {

using Case = parasim::testing::Llama7bOn64H100;

// The plan with its explanation and launch settings: what `plan --explain
// --emit megatron` reports.
std::string PlanText(const Case& c, int threads, Objective objective = Objective::kTokensPerJoule) {
  const AnalyticalEvaluator evaluator = c.Evaluator();
  PlanOptions o;
  o.threads = threads;
  o.top_k = 8;
  o.objective.objective = objective;
  const PlanResult r = RunPlan(evaluator, o);
  const Report* runner = r.plans.size() > 1 ? &r.plans[1] : nullptr;
  std::string out = parasim_test::PlanDigest(r);
  for (const std::string& line : ExplainPlan(r.plans.at(0), runner, r.baseline ? &*r.baseline : nullptr, objective))
    out += line + "\n";
  return out + EmitLaunchFlags(Framework::kMegatron, r.plans.at(0).config, c.model, c.job).text;
}

}  // namespace

TEST_CASE("planner: the plan is byte-identical for any thread count", "[planner]") {
  const Case c;
  const std::string one = PlanText(c, 1);
  CHECK(PlanText(c, 2) == one);
  CHECK(PlanText(c, 5) == one);
}

TEST_CASE("planner: the whole space never loses to the paper's space", "[planner]") {
  const Case c;
  const AnalyticalEvaluator evaluator = c.Evaluator();
  PlanOptions o;
  o.objective.objective = Objective::kThroughput;
  o.top_k = 1;
  o.threads = 2;
  const PlanResult whole = RunPlan(evaluator, o);
  o.constraints = ConstraintSet::Parse(PaperSpaceConstraints());
  const PlanResult paper = RunPlan(evaluator, o);
  REQUIRE(!whole.plans.empty());
  REQUIRE(!paper.plans.empty());
  CHECK(whole.plans[0].tokens_per_s >= paper.plans[0].tokens_per_s);
  CHECK(paper.feasible < whole.feasible);
}

TEST_CASE("planner: validate runs every seed finding", "[planner]") {
  ValidationOptions o;
  o.threads = 2;
  o.whole_space = false;
  const std::vector<FindingResult> rows = RunValidation(o);
  REQUIRE(rows.size() == 12);
  std::set<std::string> passing;
  for (const FindingResult& r : rows) {
    CHECK(!r.predicted.empty());
    CHECK(!r.published.empty());
    CHECK(!r.band.empty());
    if (r.pass) passing.insert(r.id);
    else WARN(r.id << " fails: " << r.predicted);
  }
  // The rows the current cost model reproduces; the others are reported by
  // `parasim validate` (see docs/DECISIONS.md, planner). A row that starts
  // failing here is a regression of the cost model or of the planner.
  // F6 (TP's gain over FSDP at 2048 GPUs, band 30-80%) sits on the band's
  // edge: +30.1% with datasheet H100 figures, +29.4% with the calibrated
  // (power-capped) GEMM efficiency, so it is not asserted either way.
  // F10 (CP loses to TP at 4k) holds by about 1%: the ring-attention merge
  // traffic of PyTorch's CP against TP's blocking collectives.
  for (const char* id : {"F1", "F2", "F7", "F8", "F9", "F10", "F12"}) {
    INFO(id);
    CHECK(passing.count(id) == 1);
  }
  CHECK_THROWS_WITH(RunValidation(ValidationOptions{{"F13"}, 1, false}), Catch::Contains("F13"));
  const auto only = RunValidation(ValidationOptions{{"F9", "F2"}, 1, false});
  REQUIRE(only.size() == 2);
  CHECK(only[0].id == "F2");
  CHECK(only[1].id == "F9");
}

TEST_CASE("planner: memory implication never changes the result", "[planner]") {
  // 70B on 64 GPUs: memory binds for most configs.
  const ModelSpec model = LoadModel("llama2-70b");
  const ClusterSpec cluster = ResizeCluster(LoadCluster("dgx-h100"), 64);
  JobSpec job;
  job.global_batch = 64;
  job.seq_len = 4096;
  const AnalyticalEvaluator evaluator(model, cluster, job);
  PlanOptions o;
  o.threads = 2;
  o.top_k = 32;
  o.objective.objective = Objective::kThroughput;
  const PlanResult fast = RunPlan(evaluator, o);
  o.memory_implication = false;
  const PlanResult full = RunPlan(evaluator, o);
  CHECK(fast.feasible == full.feasible);
  CHECK(fast.scored < full.scored);
  CHECK(fast.rejected.at("memory") + fast.rejected.at("memory: a smaller micro-batch did not fit") ==
        full.rejected.at("memory"));
  REQUIRE(fast.plans.size() == full.plans.size());
  for (size_t i = 0; i < fast.plans.size(); ++i) CHECK(fast.plans[i].config.ToString() == full.plans[i].config.ToString());
  REQUIRE(fast.pareto.size() == full.pareto.size());
}

TEST_CASE("planner: what-if grids re-plan at every point", "[planner]") {
  const Case c;
  const ModelSpec& model = c.model;
  const ClusterSpec& cluster = c.cluster;
  const JobSpec& job = c.job;
  PlanOptions o;
  o.threads = 2;
  o.objective.objective = Objective::kThroughput;
  const std::vector<Variation> grid = {ParseVariation("inter_node.nic_bandwidth=100Gb/s,400Gb/s"),
                                       ParseVariation("nodes=4,8")};
  const std::vector<WhatifPoint> points = RunWhatif(model, cluster, job, grid, o);
  REQUIRE(points.size() == 4);
  CHECK(points[0].setting[0].second == "100Gb/s");
  CHECK(points[1].setting[1].second == "8");
  CHECK(points[1].gpus == 64);
  CHECK(points[0].gpus == 32);
  for (const auto& p : points) REQUIRE(p.feasible);
  // A faster NIC never makes the best plan slower.
  CHECK(points[2].best.tokens_per_s >= points[0].best.tokens_per_s);
  CHECK(points[3].best.tokens_per_s >= points[1].best.tokens_per_s);
  CHECK_THROWS_WITH(ParseVariation("inter_node.nic_speed=1"), Catch::Contains("nic_speed"));
  CHECK_THROWS_WITH(RunWhatif(model, cluster, job, {ParseVariation("inter_node.nic_bandwidth=400")}, o),
                    Catch::Contains("nic_bandwidth"));
}

TEST_CASE("planner: --vary accepts every registry key and range-checks its values", "[planner][registry]") {
  std::vector<std::string> keys;
  for (const GpuField& f : GpuProfileFields()) {
    keys.push_back("gpu." + f.key);
    if (!f.alias.empty()) keys.push_back("gpu." + f.alias);
  }
  for (const ClusterField& f : ClusterFields()) keys.push_back(f.key);
  for (const JobField& f : JobFields()) keys.push_back(f.key);
  for (const StackField& f : StackFields()) keys.push_back("stack." + f.key);
  for (const std::string& key : keys) {
    INFO(key);
    // A value the registry accepts parses; a NaN does not.
    const GpuField* g = key.rfind("gpu.", 0) == 0 ? FindField(GpuProfileFields(), key.substr(4)) : nullptr;
    const ClusterField* c = FindField(ClusterFields(), key);
    const JobField* j = FindField(JobFields(), key);
    const StackField* s = key.rfind("stack.", 0) == 0 ? FindField(StackFields(), key.substr(6)) : nullptr;
    const FieldUnit unit = g ? g->unit : c ? c->unit : j ? j->unit : s->unit;
    const FieldRange range = g ? g->range : c ? c->range : j ? j->range : s->range;
    const double v = unit == FieldUnit::kFlag ? 1 : range.min_open ? range.min + 1 : range.min;
    CHECK_NOTHROW(ParseVariation(key + "=" + FormatFieldValue(unit, v)));
    if (unit != FieldUnit::kFlag) CHECK_THROWS_AS(ParseVariation(key + "=nan"), InvalidInput);
  }
  CHECK_THROWS_WITH(ParseVariation("gpu.tdp=0W"), Catch::Contains("must be in (0, 100000] W, got 0 W"));
  CHECK_THROWS_WITH(ParseVariation("global_batch=1e10"), Catch::Contains("got 1e+10"));
  CHECK_THROWS_WITH(ParseVariation("inter_node.nic_bandwith=1Gb/s"),
                    Catch::Contains("did you mean 'inter_node.nic_bandwidth'"));
}

TEST_CASE("planner: --max-configs scores a fixed prefix of the space, the same for any thread count",
          "[planner][bounds]") {
  const AnalyticalEvaluator evaluator(LoadModel("llama2-7b"), LoadCluster("dgx-h100", 2), [] {
    JobSpec j;
    j.global_batch = 64;
    j.seq_len = 4096;
    return j;
  }());
  PlanOptions o;
  o.max_configs = 400;
  o.top_k = 4;
  o.threads = 1;
  const PlanResult one = RunPlan(evaluator, o);
  o.threads = 2;
  const PlanResult two = RunPlan(evaluator, o);
  CHECK(one.cut_by == "--max-configs 400");
  CHECK(one.rejected.at("limit: --max-configs") > 0);
  CHECK(one.scored <= 400);
  CHECK(one.searched == two.searched);
  CHECK(one.scored == two.scored);
  REQUIRE(one.plans.size() == two.plans.size());
  for (size_t i = 0; i < one.plans.size(); ++i) CHECK(one.plans[i].config.ToString() == two.plans[i].config.ToString());
  // Unbounded: nothing cut, and at least as good a best plan.
  o.max_configs = 0;
  const PlanResult all = RunPlan(evaluator, o);
  CHECK(all.cut_by.empty());
  REQUIRE(!all.plan_values.empty());
  REQUIRE(!one.plan_values.empty());
  CHECK(all.plan_values.front() >= one.plan_values.front());
}
