// The CLI commands' library side (facade/*_command.h): what each returns for
// the format asked, the files beside the report, and the checks made before
// any work.
#include <string>

#include <catch2/catch.hpp>

#include "facade/plan_command.h"
#include "facade/scale_command.h"
#include "facade/simulate_command.h"
#include "facade/whatif_command.h"
#include "parasim/error.h"

namespace {

using namespace parasim;

SpecInputs OneNode(long long global_batch) {
  SpecInputs spec;
  spec.model = "llama2-7b";
  spec.cluster = "dgx-h100";
  spec.nodes = 1;
  spec.global_batch = global_batch;
  spec.seq_len = 2048;
  return spec;
}

SimulateRequest Simulate(const std::string& fidelity) {
  SimulateRequest q;
  q.spec = OneNode(16);
  q.config = "dp=4,tp=2,mbs=2";
  q.fidelity = fidelity;
  return q;
}

}  // namespace

TEST_CASE("facade commands: simulate lists the simulated ranks, tier A none", "[facade][commands]") {
  const SimulateOutput tier_a = RunSimulateCommand(Simulate("analytical"), ReportFormat::kJson);
  CHECK(tier_a.report.format == ReportFormat::kJson);
  CHECK(tier_a.report.json.Find("step_time_s") != nullptr);
  CHECK(tier_a.report.json.Find("ranks") == nullptr);
  CHECK(tier_a.trace.empty());
  CHECK(tier_a.schedule.empty());
  CHECK_FALSE(tier_a.plot);

  SimulateRequest q = Simulate("simulated");
  q.trace = "step.json";
  q.export_schedule = true;
  q.plot = true;
  const SimulateOutput tier_b = RunSimulateCommand(q, ReportFormat::kJson);
  const Value* ranks = tier_b.report.json.Find("ranks");
  REQUIRE(ranks != nullptr);
  REQUIRE_FALSE(ranks->items().empty());
  for (const Value& r : ranks->items()) {
    CHECK(r.Find("compute_s")->as_number() > 0);
    CHECK(r.Find("idle_s")->as_number() >= 0);
  }
  CHECK(tier_b.trace.find("traceEvents") != std::string::npos);
  CHECK(tier_b.schedule.rfind("{", 0) == 0);
  REQUIRE(tier_b.plot);
  CHECK_FALSE(tier_b.plot->data.empty());

  const SimulateOutput table = RunSimulateCommand(Simulate("simulated"), ReportFormat::kTable);
  CHECK(table.report.text.find("per rank") != std::string::npos);
  CHECK(RunSimulateCommand(Simulate("analytical"), ReportFormat::kTable).report.text.find("per rank") ==
        std::string::npos);
}

TEST_CASE("facade commands: flags that need a simulation are refused before any work", "[facade][commands]") {
  SimulateRequest q = Simulate("analytical");
  q.trace = "step.json";
  CHECK_THROWS_AS(CheckSimulateRequest(q), InvalidInput);
  q = Simulate("analytical");
  q.plot = true;
  CHECK_THROWS_AS(CheckSimulateRequest(q), InvalidInput);
  q = Simulate("simulated");
  q.tier_c = "coarse";
  CHECK_THROWS_AS(RunSimulateCommand(q, ReportFormat::kJson), InvalidInput);   // tier C's schedule needs full
  q = Simulate("analytical");
  q.config = "dp=4,tq=2";
  CHECK_THROWS_AS(CheckSimulateRequest(q), InvalidInput);
}

TEST_CASE("facade commands: plan settings are checked and name their flags", "[facade][commands]") {
  PlanSettings s;
  CHECK(s.RescoreCount() == -1);
  CHECK(s.RescoreModeName() == "tier C (coarse)");
  s.rescore = "12";
  CHECK(s.RescoreCount() == 12);
  s.fidelity = "simulated";
  CHECK(s.RescoreModeName() == "tier B");
  s = PlanSettings{};
  s.gpu_hour_price = -1;
  s.top = 0;
  try {
    s.Validate();
    FAIL("negative price accepted");
  } catch (const InvalidInput& e) {
    REQUIRE(e.issues().size() == 2);   // every problem at once
    CHECK(e.issues()[0].key == "--gpu-hour-price");
    CHECK(e.issues()[1].key == "--top");
  }
}

TEST_CASE("facade commands: plan ranks at most top plans, and says when none fits", "[facade][commands]") {
  PlanRequest q;
  q.spec = OneNode(16);
  q.settings.top = 2;
  q.settings.threads = 1;
  q.plot = true;
  const PlanOutput json = RunPlanCommand(q, ReportFormat::kJson, {});
  const Value* plans = json.report.json.Find("plans");
  REQUIRE(plans != nullptr);
  CHECK(plans->items().size() == 2);
  REQUIRE(json.plot);
  CHECK(json.plot->script.find("datafile") != std::string::npos);
  const PlanOutput csv = RunPlanCommand(q, ReportFormat::kCsv, {});
  CHECK(csv.report.format == ReportFormat::kCsv);
  CHECK_FALSE(csv.report.text.empty());

  q.uncertainty = 2;
  const PlanOutput spread = RunPlanCommand(q, ReportFormat::kJson, {});
  REQUIRE_FALSE(spread.report.json.members().empty());
  CHECK(spread.report.json.members().back().first == "uncertainty");

  PlanRequest big;
  big.spec = OneNode(8);
  big.spec.model = "llama3-405b";
  big.settings.threads = 1;
  CHECK_THROWS_AS(RunPlanCommand(big, ReportFormat::kTable, {}), NoAnswer);
}

TEST_CASE("facade commands: a scale sweep reports each size, bad sizes name --gpus", "[facade][commands]") {
  ScaleRequest q;
  q.gpus = "8,16";
  q.seq_len = 2048;
  q.settings.threads = 1;
  const ScaleOutput out = RunScaleCommand(q, ReportFormat::kJson, {});
  const Value* points = out.report.json.Find("points");
  REQUIRE(points != nullptr);
  REQUIRE(points->items().size() == 2);
  CHECK(points->items()[0].Find("gpus")->as_int() == 8);
  CHECK(points->items()[1].Find("gpus")->as_int() == 16);
  q.gpus = "8,x";
  try {
    RunScaleCommand(q, ReportFormat::kJson, {});
    FAIL("'x' accepted as a GPU count");
  } catch (const InvalidInput& e) {
    CHECK(e.issues().front().key == "--gpus");
  }
}

TEST_CASE("facade commands: what-if has one point per grid value, studies are tables", "[facade][commands]") {
  WhatifRequest q;
  q.spec = OneNode(16);
  q.settings.threads = 1;
  q.vary = {"nodes=1,2"};
  const WhatifOutput out = RunWhatifCommand(q, ReportFormat::kJson, {});
  REQUIRE(out.report.json.Find("points") != nullptr);
  CHECK(out.report.json.Find("points")->items().size() == 2);
  CHECK(RunWhatifCommand(q, ReportFormat::kTable, {}).report.format == ReportFormat::kTable);
  CHECK_FALSE(WhatifKeys().empty());
  CHECK_FALSE(StudyNames().empty());
  CHECK_THROWS_AS(RunStudyCommand("no-such-study", PlanSettings{}, false), InvalidInput);
}
