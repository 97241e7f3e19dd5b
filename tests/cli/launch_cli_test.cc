// cli: a Hugging Face model directory plans end to end with Megatron-LM flags
// for its architecture; --precision picks the GEMM precision or says what is missing.
#include <string>

#include <catch2/catch.hpp>

#include "run_parasim.h"

using Catch::Matchers::Contains;
using parasim_test::Parasim;

namespace {
std::string Hf(const std::string& dir) { return std::string(PARASIM_SOURCE_DIR) + "/tests/testdata/hf/" + dir; }
}  // namespace

TEST_CASE("cli: plan --model <hf-dir> --emit megatron prints the architecture and the pinned commit", "[cli]") {
  const auto r = Parasim("plan --model " + Hf("qwen3-30b-a3b") +
                         " --cluster dgx-h100 --nodes 4 --global-batch 256 --seq-len 4096 --top 1"
                         " --stack megatron-core --emit megatron --constrain \"pp=1,tp=1\"");
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Contains("checked against Megatron-LM d98e8a6"));
  CHECK_THAT(r.out, Contains("--num-experts 128"));
  CHECK_THAT(r.out, Contains("--qk-layernorm"));
  CHECK_THAT(r.out, Contains("--untie-embeddings-and-output-weights"));
}

TEST_CASE("cli: --precision fp8 is accepted, fp4 exits 2 naming the option", "[cli]") {
  const std::string base = "simulate --model llama3-8b --cluster dgx-h100 --nodes 1 --global-batch 64 "
                           "--config dp=8,mbs=1,sharding=zero3 --precision ";
  const auto bf16 = Parasim(base + "bf16");
  const auto fp8 = Parasim(base + "fp8");
  REQUIRE(bf16.code == 0);
  REQUIRE(fp8.code == 0);
  CHECK(fp8.out != bf16.out);
  const auto fp4 = Parasim(base + "fp4");
  CHECK(fp4.code == 2);
  CHECK_THAT(fp4.err, Contains("--precision"));
}
