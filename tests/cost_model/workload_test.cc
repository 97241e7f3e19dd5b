#include <catch2/catch.hpp>
#include <string>

#include "cost_model/workload.h"

using namespace parasim;

TEST_CASE("cost_model: comm phases have distinct names", "[cost_model]") {
  CHECK(std::string(ToString(CommPhase::kForwardPrefetch)) == "forward_prefetch");
  CHECK(std::string(ToString(CommPhase::kGradientReduce)) == "gradient_reduce");
  CHECK(std::string(ToString(CommPhase::kStepEnd)) == "step_end");
}
