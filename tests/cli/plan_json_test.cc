// `plan --format json` as the facade builds it (facade/plan_value.cc) and the
// CLI's JSON writer prints it: the DESIGN.md §5 contract, replayable config
// strings, the same bytes for any thread count, and integer counts.
#include <cstdint>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli/output/writers.h"
#include "core/loaders.h"
#include "cost_model/evaluator.h"
#include "facade/plan_value.h"
#include "planner/explain.h"
#include "planner/launch_flags.h"
#include "planner/planner.h"
#include "planner/scaling.h"
#include "planner/uncertainty.h"
#include "tests/planner/llama7b_64_h100.h"

using namespace parasim;
using namespace parasim::planner;

namespace {

using Case = parasim::testing::Llama7bOn64H100;

std::string PlanJson(const Case& c, int threads, Objective objective) {
  const AnalyticalEvaluator evaluator = c.Evaluator();
  PlanOptions o;
  o.threads = threads;
  o.top_k = 8;
  o.objective.objective = objective;
  const PlanResult r = RunPlan(evaluator, o);
  PlanExtras extras;
  const Report* runner = r.plans.size() > 1 ? &r.plans[1] : nullptr;
  extras.explanation = ExplainPlan(r.plans.at(0), runner, r.baseline ? &*r.baseline : nullptr, objective);
  const LaunchFlags launch = EmitLaunchFlags(Framework::kMegatron, r.plans.at(0).config, c.model, c.job);
  extras.launch = &launch;
  return cli::WriteJson(PlanToValue(r, extras));
}

}  // namespace

TEST_CASE("plan json: follows the contract and replays", "[cli][plan]") {
  const Case c;
  const std::string text = PlanJson(c, 2, Objective::kThroughput);
  CHECK(PlanJson(c, 1, Objective::kThroughput) == text);   // any thread count, the same bytes
  const auto j = nlohmann::ordered_json::parse(text);
  CHECK(j.at("objective") == "throughput");
  CHECK(j.begin().key() == "objective");
  CHECK(j.at("searched").is_number_integer());
  CHECK(j.at("gpus") == 64);
  const int64_t searched = j.at("searched");
  const int64_t feasible = j.at("feasible");
  int64_t rejected = 0;
  for (const auto& [reason, n] : j.at("rejected").items()) rejected += n.get<int64_t>();
  CHECK(searched == feasible + rejected);
  CHECK(feasible > 0);
  REQUIRE(j.at("plans").size() == 8);
  REQUIRE(!j.at("pareto").empty());
  const AnalyticalEvaluator evaluator = c.Evaluator();
  double last = 1e300;
  int64_t rank = 0;
  for (const auto& p : j.at("plans")) {
    CHECK(p.at("rank") == ++rank);
    const double v = p.at("objective_value");
    CHECK(v <= last);
    last = v;
    CHECK(p.contains("tokens_per_s"));
    CHECK(p.contains("exposed_comm_s"));
    // The printed config string replays to the same prediction.
    const Report again = evaluator.Evaluate(ParseParallelConfig(p.at("config_string")));
    CHECK(again.feasible);
    CHECK_THAT(again.tokens_per_s, Catch::Matchers::WithinRel(p.at("tokens_per_s").get<double>(), 1e-9));
  }
  for (const auto& p : j.at("pareto")) CHECK(!p.contains("rank"));
  if (!j.at("baseline").is_null()) CHECK(j.at("baseline").contains("objective_value"));
  CHECK(!j.at("explanation").empty());
  CHECK(j.at("launch").at("framework") == "megatron");
  CHECK(j.at("launch").at("text").get<std::string>().find("--tensor-model-parallel-size") != std::string::npos);
}

TEST_CASE("plan json: the uncertainty object keeps counts as integers", "[cli][plan]") {
  UncertaintyResult u;
  u.samples = 4;
  u.seed = kUncertaintySeed;
  u.fields = {{"gpu.hbm_bandwidth", 0.05}};
  u.plans = {{"dp=8", 1000.5, 900, 1000, 1100, 3}};
  u.other_first = 1;
  const auto j = nlohmann::ordered_json::parse(cli::WriteJson(UncertaintyToValue(u)));
  CHECK(j.at("seed") == kUncertaintySeed);
  CHECK(j.at("fields_perturbed") == 1);
  CHECK(j.at("fields")[0].at("relative_sigma") == 0.05);
  const auto& p = j.at("plans")[0];
  CHECK(p.at("tokens_per_s") == 1000.5);
  CHECK(p.at("p10_tokens_per_s").is_number_float());   // a measure stays a double, even when whole
  CHECK(p.at("ranked_first").is_number_integer());
  CHECK(j.at("other_first") == 1);
}
