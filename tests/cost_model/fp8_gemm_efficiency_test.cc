// efficiency.gemm_max_fp8: FP8 linear layers use the measured FP8 best-shape
// efficiency when the profile has one, and gemm_max otherwise (so profiles
// without an FP8 measurement price exactly as before); BF16 GEMMs of an FP8
// recipe (output head, router) and BF16 jobs never see it.
#include <catch2/catch.hpp>

#include "core/loaders.h"
#include "core/parallel_config.h"
#include "cost_model/evaluator.h"
#include "cost_model/kernel_time.h"
#include "test_specs.h"

using namespace parasim;
using Catch::Matchers::WithinRel;

TEST_CASE("cost_model: FP8 GEMMs use efficiency.gemm_max_fp8, 0 means gemm_max", "[cost_model][precision][fp8]") {
  GpuProfile g = LoadGpuProfile("h100-sxm");
  g.gemm_max_fp8_efficiency = 0.0;   // absent (the shipped H100 sets it: fp8_public_gemm_test.cc)
  for (Precision p : {Precision::kBf16, Precision::kFp8, Precision::kFp4, Precision::kFp32})
    CHECK(GemmMaxEfficiencyFor(g, p) == g.gemm_max_efficiency);
  g.gemm_max_fp8_efficiency = 0.5;
  CHECK(GemmMaxEfficiencyFor(g, Precision::kFp8) == 0.5);
  CHECK(GemmMaxEfficiencyFor(g, Precision::kBf16) == g.gemm_max_efficiency);
  CHECK(GemmMaxEfficiencyFor(g, Precision::kFp4) == g.gemm_max_efficiency);

  // The BF16 GEMMs of an FP8 recipe keep the BF16 value.
  DeviceRates d = testing::NominalH100Rates();
  d.gemm_max_efficiency = 0.5;
  d.high_precision_gemm_max_efficiency = 0.75;
  CHECK(HighPrecisionRates(d).gemm_max_efficiency == 0.75);
  d.high_precision_gemm_max_efficiency = 0;
  CHECK(HighPrecisionRates(d).gemm_max_efficiency == 0.5);
}

TEST_CASE("cost_model: the FP8 efficiency moves FP8 jobs only, and its default moves nothing",
          "[cost_model][precision][fp8]") {
  GpuProfile h100 = LoadGpuProfile("h100-sxm");
  h100.gemm_max_fp8_efficiency = 0.0;   // absent: FP8 GEMMs at gemm_max
  const ParallelConfig c = ParseParallelConfig("dp=2,tp=4,pp=1,mbs=1,sharding=zero1,recompute=none");
  auto step = [&](const GpuProfile& gpu, Precision p) {
    JobSpec job = testing::Job(16, 4096);
    job.precision = p;
    const Report r = AnalyticalEvaluator(testing::Llama2_7b(), testing::Dgx(gpu, 1), job).Evaluate(c);
    REQUIRE(r.feasible);
    return r.step_time.si();
  };
  GpuProfile same = h100;
  same.gemm_max_fp8_efficiency = h100.gemm_max_efficiency;   // stated explicitly: identical to absent
  CHECK(step(same, Precision::kFp8) == step(h100, Precision::kFp8));

  GpuProfile slow = h100;
  slow.gemm_max_fp8_efficiency = 0.5 * h100.gemm_max_efficiency;
  GpuProfile fast = h100;
  fast.gemm_max_fp8_efficiency = std::min(1.0, 1.1 * h100.gemm_max_efficiency);
  CHECK(step(slow, Precision::kFp8) > step(h100, Precision::kFp8));
  CHECK(step(fast, Precision::kFp8) < step(h100, Precision::kFp8));
  CHECK(step(slow, Precision::kBf16) == step(h100, Precision::kBf16));
}
