// The FP8 split accumulator: the passes a stack runs with it (fp8_split_accum_*)
// price their GEMM compute at efficiency.gemm_fp8_split_accum of the
// fast-accumulation rate; everything else (fast passes, BF16 GEMMs, BF16 and
// FP4 jobs, a profile without the key) prices exactly as before.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "core/error.h"
#include "core/loaders.h"
#include "core/parallel_config.h"
#include "cost_model/evaluator.h"
#include "cost_model/kernel_time.h"
#include "cost_model/software_stack.h"
#include "test_specs.h"

using namespace parasim;
using Catch::Matchers::WithinRel;

TEST_CASE("cost_model: a split-accumulated GEMM's compute takes 1/rate as long", "[cost_model][precision][fp8]") {
  DeviceRates d = testing::NominalH100Rates();
  d.gemm_max_efficiency = 0.7;
  d.dgrad_rate = 0.8;
  d.wgrad_rate = 0.5;
  // A compute-bound shape: 2·m·n·k / (peak · η · rate).
  const double m = 8192, n = 8192, k = 8192;
  const double fast = GemmSeconds(d, m, n, k);
  CHECK_THAT(fast, WithinRel(2.0 * m * n * k / (d.peak_flops * GemmEfficiency(d, m, n, k)), 1e-12));
  CHECK(GemmSeconds(d, m, n, k, GemmPass::kFprop) == fast);   // fprop_rate 1
  CHECK_THAT(GemmSeconds(d, m, n, k, GemmPass::kDgrad), WithinRel(fast / 0.8, 1e-12));
  CHECK_THAT(GemmSeconds(d, m, n, k, GemmPass::kWgrad), WithinRel(fast / 0.5, 1e-12));
  // A memory-bound GEMM stays at its HBM time: the accumulator is compute.
  DeviceRates slow_hbm = d;
  slow_hbm.hbm_Bps = 1e9;
  const double hbm = slow_hbm.element_bytes * (2.0 * 4096 * 4096 + 4096.0 * 4096) / slow_hbm.hbm_Bps;
  CHECK(GemmSeconds(slow_hbm, 4096, 4096, 4096, GemmPass::kWgrad) == hbm);
  CHECK(GemmSeconds(slow_hbm, 4096, 4096, 4096) == hbm);

  // A linear layer: forward fast, backward dgrad/0.8 + wgrad/0.5.
  const double T = 4096, in = 4096, out = 11008;
  const FwdBwd lin = LinearSeconds(d, T, in, out);
  CHECK(lin.fwd == GemmSeconds(d, T, out, in));
  CHECK_THAT(lin.bwd, WithinRel(GemmSeconds(d, T, in, out) / 0.8 + GemmSeconds(d, in, out, T) / 0.5, 1e-12));
  // The GEMMs a recipe keeps in BF16 have no FP8 accumulator mode.
  const FwdBwd hp = LinearSeconds(HighPrecisionRates(d), T, in, out);
  CHECK(hp.bwd == GemmSeconds(d, T, in, out) + GemmSeconds(d, in, out, T));
}

TEST_CASE("cost_model: split-accumulator rates follow the stack's passes, FP8 only", "[cost_model][precision][fp8]") {
  GpuProfile g = LoadGpuProfile("h100-sxm");
  const SoftwareStack mcore = LoadSoftwareStack("megatron-core");
  const SoftwareStack titan = LoadSoftwareStack("torchtitan");
  // Transformer Engine and torchao: fprop fast, dgrad and wgrad split.
  for (const SoftwareStack* s : {&mcore, &titan}) {
    CHECK_FALSE(s->fp8_split_accum_fprop);
    CHECK(s->fp8_split_accum_dgrad);
    CHECK(s->fp8_split_accum_wgrad);
  }
  DeviceRates d;
  g.gemm_fp8_split_accum_rate = 0.0;   // absent: 1
  SetSplitAccumRates(d, g, mcore, Precision::kFp8);
  CHECK((d.fprop_rate == 1.0 && d.dgrad_rate == 1.0 && d.wgrad_rate == 1.0));
  g.gemm_fp8_split_accum_rate = 0.85;
  SetSplitAccumRates(d, g, mcore, Precision::kFp8);
  CHECK((d.fprop_rate == 1.0 && d.dgrad_rate == 0.85 && d.wgrad_rate == 0.85));
  SoftwareStack all = mcore;
  all.fp8_split_accum_fprop = true;
  SetSplitAccumRates(d, g, all, Precision::kFp8);
  CHECK(d.fprop_rate == 0.85);
  for (Precision p : {Precision::kBf16, Precision::kFp4, Precision::kFp32}) {
    SetSplitAccumRates(d, g, all, p);
    CHECK((d.fprop_rate == 1.0 && d.dgrad_rate == 1.0 && d.wgrad_rate == 1.0));
  }
}

TEST_CASE("cost_model: the split-accumulator rate moves FP8 jobs only; 1 and absent are the same",
          "[cost_model][precision][fp8]") {
  const GpuProfile h100 = LoadGpuProfile("h100-sxm");
  const ParallelConfig c = ParseParallelConfig("dp=2,tp=4,pp=1,mbs=1,sharding=zero1,recompute=none");
  auto step = [&](double rate, Precision p) {
    GpuProfile gpu = h100;
    gpu.gemm_fp8_split_accum_rate = rate;
    JobSpec job = testing::Job(16, 4096);
    job.precision = p;
    job.stack = "megatron-core";
    const Report r = AnalyticalEvaluator(testing::Llama2_7b(), testing::Dgx(gpu, 1), job).Evaluate(c);
    REQUIRE(r.feasible);
    return r.step_time.si();
  };
  CHECK(h100.gemm_fp8_split_accum_rate == 1.0);   // shipped neutral: not measured
  CHECK(step(1.0, Precision::kFp8) == step(0.0, Precision::kFp8));
  const double fast = step(1.0, Precision::kFp8), split = step(0.8, Precision::kFp8);
  CHECK(split > fast);
  // At most every linear GEMM's compute 1/0.8 as long: less than 25 % of the step.
  CHECK(split < 1.25 * fast);
  CHECK(step(0.8, Precision::kBf16) == step(1.0, Precision::kBf16));
}

TEST_CASE("cost_model: efficiency.gemm_fp8_split_accum must be a fraction", "[cost_model][precision][fp8]") {
  std::ifstream in(std::string(PARASIM_SOURCE_DIR) + "/hw_profiles/gpus/h100-sxm.yaml");
  const std::string shipped((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string key = "gemm_fp8_split_accum: 1.0";
  REQUIRE(shipped.find(key) != std::string::npos);
  for (const char* bad : {"1.5", "-0.2"}) {
    std::string text = shipped;
    text.replace(text.find(key), key.size(), std::string("gemm_fp8_split_accum: ") + bad);
    const std::string path = (std::filesystem::temp_directory_path() / "parasim_split_accum_gpu.yaml").string();
    std::ofstream(path) << text;
    std::string what;
    try {
      LoadGpuProfile(path);
    } catch (const InvalidInput& e) {   // the CLI's exit code 2
      what = e.what();
    }
    std::filesystem::remove(path);
    INFO(what);
    CHECK_THAT(what, Catch::Contains("efficiency.gemm_fp8_split_accum: must be in [0, 1], got " + std::string(bad)));
  }
}
