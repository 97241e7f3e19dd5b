#include <catch2/catch.hpp>

#include "planner/explain.h"

using namespace parasim;
using namespace parasim::planner;
using Catch::Contains;

namespace {
Report Make(int tp, double compute_s, double exposed_s, double bubble_s, double mem_gb) {
  Report r;
  r.config.tp = tp;
  r.config.dp = 64 / tp;
  r.compute = Seconds(compute_s);
  r.exposed_comm = Seconds(exposed_s);
  r.bubble = Seconds(bubble_s);
  r.step_time = Seconds(compute_s + exposed_s + bubble_s);
  r.exposed_comm_fraction = exposed_s / r.step_time.si();
  r.tokens_per_s = 1e6 / r.step_time.si();
  r.tokens_per_joule = 10 / r.step_time.si();
  r.hfu = 0.4 * compute_s / r.step_time.si();
  r.mfu = r.hfu;
  r.memory_per_gpu = GB(mem_gb);
  r.power_per_gpu = Watts(600);
  return r;
}
}  // namespace

TEST_CASE("planner: the explanation names where the winner gains and pays", "[planner]") {
  const Report winner = Make(2, 1.0, 0.1, 0.0, 40);
  const Report runner = Make(1, 0.95, 0.3, 0.0, 60);
  const Report fsdp = Make(1, 0.95, 0.5, 0.0, 70);
  const std::vector<std::string> lines = ExplainPlan(winner, &runner, &fsdp, Objective::kThroughput);
  REQUIRE(lines.size() == 7);
  CHECK_THAT(lines[0], Contains("winner [dp=32,tp=2"));
  CHECK_THAT(lines[1], Contains("vs runner-up") && Contains("throughput +"));
  CHECK_THAT(lines[2], Contains("exposed comm 100.0 ms vs 300.0 ms") && Contains("memory 40.0 GB vs 60.0 GB") &&
                           Contains("40.0% vs 40.0% of peak"));
  CHECK_THAT(lines[3], Contains("gains on exposed comm -200.0 ms") && Contains("pays compute +50.0 ms"));
  CHECK_THAT(lines[4], Contains("vs pure FSDP"));
  CHECK_THAT(ExplainPlan(winner, nullptr, nullptr, Objective::kThroughput).back(), Contains("does not fit"));
  CHECK(KernelEfficiency(winner) == Approx(0.4));
}
