// NaN and infinities never reach an output: a non-finite number forced past
// validation (by a direct library call) stops at the place the report is
// built with an InternalError naming the field, never a "nan" in the output.
#include <cmath>
#include <limits>

#include <catch2/catch.hpp>

#include "cost_model/evaluator_finish.h"
#include "cost_model/report_check.h"
#include "fake_scorer.h"
#include "planner/plan_options_validate.h"
#include "planner/planner.h"
#include "test_specs.h"

using namespace parasim;
using namespace parasim::planner;
using Catch::Matchers::Contains;

namespace {

StepMeasures Sane() {
  StepMeasures m;
  m.step_s = 2.0;
  m.tokens = 1e6;
  m.world = 8;
  m.model_flops = 1e16;
  m.hardware_flops = 1.2e16;
  m.peak_flops = 1e15;
  m.gpu = GpuDraw::AveragePerGpu(500);
  return m;
}

}  // namespace

TEST_CASE("non-finite: FinishReport names the field a NaN step time reaches", "[planner][finite]") {
  Report rep;
  REQUIRE_NOTHROW(FinishReport(Sane(), FacilityPower{}, &rep));
  CHECK(rep.tokens_per_s == Approx(5e5));

  StepMeasures nan_step = Sane();
  nan_step.step_s = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_MATCHES(FinishReport(nan_step, FacilityPower{}, &rep), InternalError,
                       Catch::Matchers::Predicate<InternalError>([](const InternalError& e) {
                         return std::string(e.what()).find("'step_time' is nan") != std::string::npos;
                       }));
  StepMeasures zero_step = Sane();
  zero_step.step_s = 0;   // tokens / 0 = inf
  CHECK_THROWS_WITH(FinishReport(zero_step, FacilityPower{}, &rep), Contains("'tokens_per_s' is inf"));
}

TEST_CASE("non-finite: a breakdown entry is named by its group and name", "[planner][finite]") {
  Report rep;
  rep.by_dimension.push_back({"tp", Seconds(1.0), Seconds(std::numeric_limits<double>::infinity())});
  CHECK_THROWS_AS(CheckReportFinite(rep, "test"), InternalError);
  CHECK_THROWS_WITH(CheckReportFinite(rep, "test"), Contains("by_dimension.tp.exposed"));
  rep.by_dimension.back().exposed = Seconds(0.5);
  CHECK_NOTHROW(CheckReportFinite(rep, "test"));
}

TEST_CASE("non-finite: a scorer's NaN stops the planner with the field named", "[planner][finite]") {
  const ModelSpec model = testing::TinyModel(8, 16, 256);
  const JobSpec job = testing::Job(64, 64);
  const testing::FakeScorer fake{job};
  PlanOptions o;
  o.top_k = 3;
  const Scorer sane = [fake](const ParallelConfig& c) { return fake(c); };
  REQUIRE_NOTHROW(RunPlan(model, job, 32, 8, sane, o));
  const Scorer broken = [fake](const ParallelConfig& c) {
    Report r = fake(c);
    r.bubble = Seconds(std::numeric_limits<double>::quiet_NaN());   // not a ranking key: the search completes
    return r;
  };
  CHECK_THROWS_AS(RunPlan(model, job, 32, 8, broken, o), InternalError);
  CHECK_THROWS_WITH(RunPlan(model, job, 32, 8, broken, o), Contains("plan 1: report field 'bubble' is nan"));
}

TEST_CASE("plan options: every problem at once, a NaN price is bad input", "[planner][finite]") {
  PlanOptions o;
  CHECK(planner::ValidatePlanOptions(o).empty());
  o.top_k = 0;
  o.objective.gpu_hour_price = std::numeric_limits<double>::quiet_NaN();
  o.time_budget_s = std::numeric_limits<double>::infinity();
  const std::vector<Issue> issues = planner::ValidatePlanOptions(o);
  REQUIRE(issues.size() == 3);
  CHECK(issues[0].key == "--gpu-hour-price");
  CHECK(issues[1].key == "--time-budget");
  CHECK(issues[2].key == "--top");
  const ModelSpec model = testing::TinyModel(8, 16, 256);
  const JobSpec job = testing::Job(64, 64);
  const testing::FakeScorer fake{job};
  const Scorer scorer = [fake](const ParallelConfig& c) { return fake(c); };
  CHECK_THROWS_AS(RunPlan(model, job, 32, 8, scorer, o), InvalidInput);
  // The objective's own needs come once the numbers are sane.
  PlanOptions cost;
  cost.objective.objective = Objective::kCost;
  REQUIRE(planner::ValidatePlanOptions(cost).size() == 1);
  CHECK(planner::ValidatePlanOptions(cost)[0].message.find("--gpu-hour-price") != std::string::npos);
}
