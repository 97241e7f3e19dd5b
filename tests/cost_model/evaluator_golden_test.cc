// Tier A byte for byte: every field of every golden case's report equals the
// committed text (tests/data/golden/evaluator_tier_a.txt). A refactor of the
// evaluator must leave it unchanged; an intended change regenerates it
// (PARASIM_WRITE_GOLDEN=1, see report_golden.h) and says so in its commit.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "cost_model/evaluator.h"
#include "report_golden.h"

using namespace parasim;
using namespace parasim::testing;

namespace {

const std::string kGoldenPath = std::string(PARASIM_SOURCE_DIR) + "/tests/data/golden/evaluator_tier_a.txt";

std::vector<std::string> TierABlocks() {
  std::vector<std::string> blocks;
  for (const GoldenCase& g : GoldenCases()) {
    const AnalyticalEvaluator ev(GoldenModel(g, PARASIM_SOURCE_DIR), GoldenCluster(g), GoldenJob(g));
    const Report r = ev.Evaluate(ParseParallelConfig(g.config));
    blocks.push_back("== " + GoldenCaseName(g) + "\n" + GoldenText(r));
  }
  return blocks;
}

}  // namespace

TEST_CASE("tier A reports equal the golden file byte for byte", "[golden]") {
  CheckOrWriteGolden(kGoldenPath, TierABlocks());
}

TEST_CASE("golden cases cover feasible, memory-infeasible and malformed configs", "[golden]") {
  // The golden file is only a guard if it holds each kind of outcome.
  int feasible = 0, memory = 0, malformed = 0;
  for (const std::string& b : GoldenBlocks(ReadGoldenFile(kGoldenPath))) {
    if (b.find("  feasible true\n") != std::string::npos) ++feasible;
    if (b.find("infeasible_reason memory:") != std::string::npos) ++memory;
    if (b.find("infeasible_reason config:") != std::string::npos) ++malformed;
  }
  CHECK(feasible >= 30);
  CHECK(memory >= 2);
  CHECK(malformed >= 3);
}

TEST_CASE("golden cases: no dimension is exposed beyond what it sends, and exposure adds up", "[golden]") {
  // Conservation over every stack, sharding and schedule the golden cases
  // cover: each dimension's exposed time lies in [0, its total], and the
  // dimensions' exposure is the report's exposed communication.
  for (const GoldenCase& g : GoldenCases()) {
    const AnalyticalEvaluator ev(GoldenModel(g, PARASIM_SOURCE_DIR), GoldenCluster(g), GoldenJob(g));
    const Report r = ev.Evaluate(ParseParallelConfig(g.config));
    if (!r.feasible && r.step_time.si() <= 0) continue;   // malformed: nothing timed
    INFO(GoldenCaseName(g));
    double exposed = 0;
    for (const auto& d : r.by_dimension) {
      INFO(d.name);
      CHECK(d.exposed.si() >= 0);
      CHECK(d.exposed.si() <= d.total.si() * (1 + 1e-12) + 1e-15);
      exposed += d.exposed.si();
    }
    CHECK(exposed == Approx(r.exposed_comm.si()).epsilon(1e-9).margin(1e-12));
  }
}
