// Predicted / measured training throughput on NVIDIA's DGX Cloud benchmarking
// recipes for DGX H100 (issue 13; docs/accuracy.md "BF16 control: DGX Cloud
// recipes, BF16 and FP8 pairs"): Llama 3.1 8B/70B/405B and Nemotron-4
// 15B/340B, each model and layout published twice, BF16 and FP8, NeMo 24.09
// and 24.12 on megatron-core, 8-2304 GPUs
// (tests/data/throughput_dgxc_nemo_h100_bf16_fp8.csv).
// Each row goes through tier A as its recipe sets it
// (tests/planner/nemo_recipe_pricing.h), at the row's precision; rows whose
// recipe turns Transformer Engine's fused attention off run FlashAttention-2.
// ratio = predicted / measured tokens/s per GPU (> 1: the model is too fast).
// The BF16 rows are the control for the FP8 ones: same model, GPUs, layout,
// batch and container, so the measured FP8/BF16 speed-up isolates what FP8
// changes. Nothing here feeds back into the model. The test fails when a row
// cannot be evaluated, a pair is incomplete, the model's FP8 is not faster
// than its BF16, or a median |ratio - 1| gets more than 2 points worse than
// the committed table. PARASIM_PRINT_THROUGHPUT_TABLE=1 prints the rows and pairs.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "core/statistics.h"
#include "cost_model/software_stack.h"
#include "tests/cost_model/collective_test_util.h"
#include "tests/planner/nemo_recipe_pricing.h"

using namespace parasim;

namespace {

struct Priced {
  double measured = 0, predicted = 0;
  std::string cfg;
  Report report;
};

// Transformer Engine's backend as the recipe selects it: cudnn
// (NVTE_FUSED_ATTN=1) keeps the stack's Hopper kernel; flash-attn
// (NVTE_FUSED_ATTN=0) falls back to the flash-attn package, FlashAttention-2
// (the kernel the pytorch-fsdp stack runs on Hopper).
SoftwareStack StackForAttention(const SoftwareStack& stack, const std::string& te_attention) {
  if (te_attention == "cudnn") return stack;
  REQUIRE(te_attention == "flash-attn");
  SoftwareStack s = stack;
  const SoftwareStack fa2 = *FindSoftwareStackPreset("pytorch-fsdp");
  for (auto& [arch, kernel] : s.attention_by_arch) {
    if (arch != "hopper") continue;
    for (const auto& [a, k] : fa2.attention_by_arch)
      if (a == "hopper") kernel = k;
    REQUIRE(kernel.name == "flash-attn-2");
  }
  return s;
}

void PrintParts(const Report& rep) {
  std::printf("  step %.3f s, compute %.3f, exposed comm %.3f, bubble %.3f:", rep.step_time.si(), rep.compute.si(),
              rep.exposed_comm.si(), rep.bubble.si());
  for (const auto& e : rep.by_op) std::printf(" %s %.3f", e.name.c_str(), e.total.si());
  std::printf("; comm (total/exposed):");
  for (const auto& e : rep.by_dimension) std::printf(" %s %.3f/%.3f", e.name.c_str(), e.total.si(), e.exposed.si());
  std::printf("\n");
}

}  // namespace

TEST_CASE("planner: predicted/measured throughput on the DGX Cloud H100 BF16/FP8 pairs", "[planner]") {
  const auto csv = testing::ReadCsv(testing::DataPath("throughput_dgxc_nemo_h100_bf16_fp8.csv"));
  REQUIRE(csv.size() == 104);
  const SoftwareStack stack = *FindSoftwareStackPreset("megatron-core");
  const bool print = std::getenv("PARASIM_PRINT_THROUGHPUT_TABLE") != nullptr;
  // (model, container, gpus, layout) -> precision -> priced row; std::map keeps the print order fixed.
  std::map<std::tuple<std::string, std::string, int, std::string>, std::map<std::string, Priced>> pairs;
  std::map<std::string, std::vector<double>> errors_by_precision;
  std::vector<double> errors;
  int not_scored = 0;
  for (const auto& r : csv) {
    const std::string what =
        r.at("model") + " " + r.at("precision") + " on " + r.at("gpus") + " GPUs, container " + r.at("container");
    if (testing::SkipInexpressible(r, what, print, "not scored", &not_scored)) continue;
    const int gpus = std::stoi(r.at("gpus"));
    REQUIRE(gpus % (std::stoi(r.at("tp")) * std::stoi(r.at("pp")) * std::stoi(r.at("cp"))) == 0);
    const std::string precision = r.at("precision");
    REQUIRE((precision == "bf16" || precision == "fp8"));
    REQUIRE((r.at("grad_sync_dtype") == "bf16" || r.at("grad_sync_dtype") == "fp32"));
    // The recipes set fp8_params exactly when the run is FP8 (configure.sh).
    REQUIRE(r.at("fp8_params") == (precision == "fp8" ? "true" : "false"));
    Priced p;
    SoftwareStack row_stack = StackForAttention(stack, r.at("te_attention"));
    // Containers before Megatron-LM 4295be1a (2024-11-01) ran every interleaved
    // chunk forward first when m = p; 24.12 (December 2024) is after it.
    row_stack.pp_interleaved_full_warmup = r.at("container") < "24.11";
    p.report = testing::PriceNemoRecipeRow(r, precision == "fp8" ? Precision::kFp8 : Precision::kBf16, row_stack,
                                           &p.cfg);
    INFO(what << " " << p.cfg << ": " << p.report.infeasible_reason);
    REQUIRE(p.report.tokens_per_s_per_gpu > 0);
    p.predicted = p.report.tokens_per_s_per_gpu;
    p.measured = std::stod(r.at("tokens_per_s")) / gpus;
    const double ratio = p.predicted / p.measured;
    REQUIRE(std::isfinite(ratio));
    errors.push_back(std::fabs(ratio - 1));
    errors_by_precision[precision].push_back(std::fabs(ratio - 1));
    if (print) {
      std::printf("| %s | %s | %s | %d | %s | %.0f | %.0f | %.3f | %s |\n", r.at("model").c_str(),
                  r.at("container").c_str(), precision.c_str(), gpus,
                  p.cfg.c_str(), p.measured, p.predicted, ratio,
                  p.report.feasible ? "" : p.report.infeasible_reason.c_str());
      PrintParts(p.report);
    }
    auto& slot = pairs[{r.at("model"), r.at("container"), gpus, p.cfg}][precision];
    REQUIRE(slot.measured == 0);  // one row per model, GPUs, layout and precision
    slot = p;
  }
  CHECK(not_scored == 6);
  REQUIRE(errors.size() == 98);
  REQUIRE(pairs.size() == 49);
  std::vector<double> measured_speedups, predicted_speedups;
  if (print)
    std::printf(
        "| model | container | GPUs | layout | measured bf16 | fp8 | FP8/BF16 | predicted bf16 | fp8 | FP8/BF16 "
        "| ratio bf16 | fp8 |\n");
  for (const auto& [key, by_precision] : pairs) {
    INFO(std::get<0>(key) << " " << std::get<1>(key) << " on " << std::get<2>(key) << " GPUs " << std::get<3>(key));
    REQUIRE(by_precision.size() == 2);
    const Priced& bf16 = by_precision.at("bf16");
    const Priced& fp8 = by_precision.at("fp8");
    const double measured = fp8.measured / bf16.measured, predicted = fp8.predicted / bf16.predicted;
    // FP8 halves GEMM time at the same layout: the model must not make it slower.
    CHECK(predicted > 1);
    measured_speedups.push_back(measured);
    predicted_speedups.push_back(predicted);
    if (print)
      std::printf("| %s | %s | %d | %s | %.0f | %.0f | %.3f | %.0f | %.0f | %.3f | %.3f | %.3f |\n",
                  std::get<0>(key).c_str(), std::get<1>(key).c_str(), std::get<2>(key), std::get<3>(key).c_str(),
                  bf16.measured, fp8.measured, measured, bf16.predicted, fp8.predicted, predicted,
                  bf16.predicted / bf16.measured, fp8.predicted / fp8.measured);
  }
  if (print) {
    std::printf("median |ratio - 1|: all %.1f%%, bf16 %.1f%%, fp8 %.1f%%\n", 100 * Median(errors),
                100 * Median(errors_by_precision["bf16"]), 100 * Median(errors_by_precision["fp8"]));
    std::printf("median FP8/BF16 speed-up: measured %.3f, predicted %.3f\n", Median(measured_speedups),
                Median(predicted_speedups));
  }
  // Committed in docs/accuracy.md "BF16 control: DGX Cloud recipes, BF16 and FP8 pairs".
  // (0.037 / 0.030 / 0.055 before the interleaved rows' steady-state
  // pipeline p2p hid under the passes, overlap_p2p_comm).
  CHECK(Median(errors) <= 0.032 + 0.02);
  CHECK(Median(errors_by_precision["bf16"]) <= 0.030 + 0.02);
  CHECK(Median(errors_by_precision["fp8"]) <= 0.063 + 0.02);
}
