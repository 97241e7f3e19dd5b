// `plan --rescore coarse|detailed` and `--rescore-top N` (with `--rescore N`
// kept as the count's old spelling).
#include <catch2/catch.hpp>

#include "run_parasim.h"

using Catch::Matchers::Contains;
using parasim_test::Parasim;
using parasim_test::Run;

namespace {
const std::string kPlan =
    "plan --model llama2-7b --cluster dgx-h100 --nodes 2 --global-batch 32 --seq-len 4096 --top 2 --format csv ";
}

TEST_CASE("cli: --rescore N is --rescore-top N, and coarse is tier C's default mode", "[cli][rescore]") {
  const Run top = Parasim(kPlan + "--fidelity full --rescore-top 2");
  REQUIRE(top.code == 0);
  const Run alias = Parasim(kPlan + "--fidelity full --rescore 2");
  REQUIRE(alias.code == 0);
  CHECK(alias.out == top.out);
  CHECK(alias.err.empty());   // the old spelling works without a warning
  const Run coarse = Parasim(kPlan + "--fidelity full --rescore coarse --rescore-top 2");
  REQUIRE(coarse.code == 0);
  CHECK(coarse.out == top.out);
  const Run detailed = Parasim(kPlan + "--fidelity full --rescore detailed --rescore-top 2");
  REQUIRE(detailed.code == 0);
  CHECK_THAT(detailed.out, Contains(",full"));
}

TEST_CASE("cli: a bad --rescore is bad input naming the flag", "[cli][rescore]") {
  Run r = Parasim(kPlan + "--fidelity full --rescore fine");
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Contains("--rescore") && Contains("coarse, detailed or a count"));
  r = Parasim(kPlan + "--fidelity simulated --rescore detailed");
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Contains("--rescore") && Contains("--fidelity full"));
  r = Parasim(kPlan + "--rescore-top -1");
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Contains("--rescore-top"));
}
