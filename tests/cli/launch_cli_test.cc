// cli: a Hugging Face model directory plans end to end with Megatron-LM flags
// for its architecture; --precision picks the GEMM precision or says what is missing.
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "run_parasim.h"

using Catch::Matchers::Contains;
using Catch::Matchers::WithinRel;
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
  CHECK_THAT(fp4.err, Contains("h100-sxm"));   // Hopper has no FP4 rate: the GPU is named
}

TEST_CASE("cli: fp8 and fp4 on Blackwell: MFU against dense BF16, mfu_own_precision against the precision's peak",
          "[cli][precision]") {
  const std::string base = "simulate --model llama3-8b --cluster dgx-b200 --nodes 1 --global-batch 64 "
                           "--config dp=8,mbs=1,sharding=zero3 --format json --precision ";
  auto report = [](const std::string& out) {
    const nlohmann::json j = nlohmann::json::parse(out);
    return j.contains("mfu") ? j : j.at("report");
  };
  const auto bf16 = Parasim(base + "bf16");
  const auto fp8 = Parasim(base + "fp8");
  const auto fp4 = Parasim(base + "fp4");
  REQUIRE(bf16.code == 0);
  REQUIRE(fp8.code == 0);
  REQUIRE(fp4.code == 0);
  const auto b = report(bf16.out), e = report(fp8.out), f = report(fp4.out);
  CHECK(b.at("mfu_own_precision").get<double>() == b.at("mfu").get<double>());
  // B200: FP8 4.5 PF and NVFP4 9 PF dense against BF16 2.25 PF.
  CHECK_THAT(e.at("mfu_own_precision").get<double>(), WithinRel(e.at("mfu").get<double>() / 2, 1e-9));
  CHECK_THAT(f.at("mfu_own_precision").get<double>(), WithinRel(f.at("mfu").get<double>() / 4, 1e-9));
  // Faster GEMMs: the step shortens, so MFU against BF16 rises with the precision.
  CHECK(e.at("mfu").get<double>() > b.at("mfu").get<double>());
  CHECK(f.at("mfu").get<double>() > e.at("mfu").get<double>());
  // The table and the CSV carry the field too.
  const std::string table = "simulate --model llama3-8b --cluster dgx-b200 --nodes 1 --global-batch 64 "
                            "--config dp=8,mbs=1,sharding=zero3 --precision fp4 --format ";
  CHECK_THAT(Parasim(table + "table").out, Contains("mfu_own%"));
  CHECK_THAT(Parasim(table + "csv").out, Contains("mfu_own_precision"));
}

TEST_CASE("cli: profiles show gives the GPU's FP4 rate (0 where it has none)", "[cli][precision]") {
  const auto b200 = Parasim("profiles show b200 --format json");
  const auto h100 = Parasim("profiles show h100-sxm --format json");
  REQUIRE(b200.code == 0);
  REQUIRE(h100.code == 0);
  // B200: NVFP4 9 PF dense (peak.fp4), twice its FP8 rate; Hopper has none.
  const nlohmann::json b = nlohmann::json::parse(b200.out), h = nlohmann::json::parse(h100.out);
  CHECK_THAT(b.at("fp4_dense_flops_per_s").get<double>(), WithinRel(9e15, 1e-9));
  CHECK_THAT(b.at("fp4_dense_flops_per_s").get<double>(), WithinRel(2 * b.at("fp8_dense_flops_per_s").get<double>(), 1e-9));
  CHECK(h.at("fp4_dense_flops_per_s").get<double>() == 0);
  CHECK_THAT(Parasim("profiles show b200").out, Contains("fp4_dense_flops_per_s"));
}
