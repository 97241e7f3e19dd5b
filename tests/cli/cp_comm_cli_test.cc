// cli: a CP kind the model's heads cannot split into is bad input (exit 2),
// and a plan names the kind it uses in its Megatron flags.
#include <string>

#include <catch2/catch.hpp>

#include "tests/cli/run_parasim.h"

using Catch::Matchers::Contains;
using parasim_test::Parasim;
using parasim_test::Run;

TEST_CASE("cli: cp_comm=a2a with too few key/value heads exits 2 naming cp_comm", "[cli][exit]") {
  // Llama 3 8B: 8 key/value heads cannot split over tp·cp = 16 ranks.
  const Run r = Parasim("simulate --model llama3-8b --cluster dgx-h100 --nodes 2 --global-batch 8 --seq-len 8192 "
                        "--config dp=1,tp=2,cp=8,cp_comm=a2a");
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Contains("cp_comm") && Contains("key/value heads"));
  CHECK(r.out.empty());
  // The ring has no such rule.
  const Run ok = Parasim("simulate --model llama3-8b --cluster dgx-h100 --nodes 2 --global-batch 8 --seq-len 8192 "
                         "--config dp=1,tp=2,cp=8,cp_comm=p2p --stack megatron-core");
  CHECK(ok.code == 0);
}

TEST_CASE("cli: cp_comm=a2a+p2p with a bad cp_a2a_size exits 2 naming cp_a2a_size", "[cli][exit]") {
  const std::string run = "simulate --model llama3-8b --cluster dgx-h100 --nodes 2 --global-batch 8 --seq-len 8192 "
                          "--stack megatron-core --config dp=1,tp=2,cp=8,cp_comm=a2a+p2p";
  for (const char* tail : {"", ",cp_a2a_size=3", ",cp_a2a_size=8", ",cp_a2a_size=0"}) {
    INFO(tail);
    const Run r = Parasim(run + tail);
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Contains("cp_a2a_size"));
    CHECK(r.out.empty());
  }
  // A group of 4 (tp·4 = 8 ranks split the 8 key/value heads) runs.
  const Run ok = Parasim(run + ",cp_a2a_size=4");
  CHECK(ok.code == 0);
}
