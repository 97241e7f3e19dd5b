// fp32 training (Precision::kFp32): matmuls on TF32 tensor cores or FP32 SIMT
// as the stack says, 4-byte elements in the memory-bound ops, MFU still
// against the dense BF16 peak.
#include <catch2/catch.hpp>

#include "core/error.h"
#include "core/loaders.h"
#include "core/parallel_config.h"
#include "cost_model/evaluator.h"
#include "cost_model/layer_cost.h"
#include "cost_model/precision.h"
#include "cost_model/software_stack.h"
#include "test_specs.h"

using namespace parasim;
using Catch::Matchers::WithinRel;

TEST_CASE("cost_model: fp32 jobs price matmuls at the TF32 or FP32 rate the stack picks", "[cost_model][precision]") {
  const GpuProfile h100 = LoadGpuProfile("h100-sxm");
  const PrecisionRates bf16 = PrecisionRatesOf(h100, Precision::kBf16, 32);
  const PrecisionRates tf32 = PrecisionRatesOf(h100, Precision::kFp32, 32, true);
  const PrecisionRates simt = PrecisionRatesOf(h100, Precision::kFp32, 32, false);
  CHECK(bf16.element_bytes == 2);
  CHECK(tf32.element_bytes == 4);
  CHECK(simt.element_bytes == 4);
  CHECK(tf32.gemm_peak == h100.tf32_dense.si());
  CHECK(tf32.attention_peak == h100.tf32_dense.si());
  CHECK(simt.gemm_peak == h100.fp32.si());
  CHECK(simt.attention_peak == h100.fp32.si());
  // MFU stays against dense BF16; mfu_own_precision against the rate used.
  CHECK(tf32.mfu_peak == h100.bf16_dense.si());
  CHECK(simt.mfu_peak == h100.bf16_dense.si());
  CHECK(tf32.own_peak == tf32.gemm_peak);
  // Hopper: BF16 twice TF32 (989 vs 494.5 TFLOP/s dense), TF32 above FP32 SIMT.
  CHECK_THAT(bf16.gemm_peak / tf32.gemm_peak, WithinRel(2.0, 1e-3));
  CHECK(simt.gemm_peak < tf32.gemm_peak);
  // The flag changes nothing for bf16 jobs.
  CHECK(PrecisionRatesOf(h100, Precision::kBf16, 32, true).gemm_peak == bf16.gemm_peak);
  // Volta has no TF32: the error names the GPU and the profile key; FP32 SIMT works.
  const GpuProfile v100 = LoadGpuProfile("v100-sxm");
  try {
    PrecisionRatesOf(v100, Precision::kFp32, 32, true);
    FAIL("no error");
  } catch (const InvalidInput& e) {
    CHECK_THAT(e.what(), Catch::Matchers::Contains("v100-sxm"));
    CHECK_THAT(e.what(), Catch::Matchers::Contains("peak.tf32"));
  }
  CHECK(PrecisionRatesOf(v100, Precision::kFp32, 32, false).gemm_peak == v100.fp32.si());
  CHECK(std::string(ToString(Precision::kFp32)) == "fp32");
}

TEST_CASE("cost_model: an fp32 layer is slower than bf16 by the rate ratio, its elementwise traffic doubled",
          "[cost_model][precision]") {
  const GpuProfile h100 = LoadGpuProfile("h100-sxm");
  const ModelSpec model = testing::Llama2_7b();
  const SoftwareStack stack = LoadSoftwareStack("pytorch-fsdp");   // fused attention: no score traffic
  auto rates = [&](const PrecisionRates& r) {
    DeviceRates d;
    d.peak_flops = r.gemm_peak;
    d.attention_peak_flops = r.attention_peak;
    d.element_bytes = r.element_bytes;
    d.hbm_Bps = 3.0e12;
    d.sm_count = 132;
    return d;
  };
  const PrecisionRates bf16 = PrecisionRatesOf(h100, Precision::kBf16, 32);
  const ParallelConfig c = ParseParallelConfig("dp=1");
  const double T = 8192;   // 8192×4096×4096 GEMMs: compute-bound at either width
  const UnitCost b = TransformerLayerCost(MakeLayerCostModel(model, rates(bf16), stack, 4096), c, T);
  for (bool tf32 : {true, false}) {
    const PrecisionRates fp32 = PrecisionRatesOf(h100, Precision::kFp32, 32, tf32);
    const UnitCost f = TransformerLayerCost(MakeLayerCostModel(model, rates(fp32), stack, 4096), c, T);
    const double ratio = bf16.gemm_peak / fp32.gemm_peak;
    CHECK_THAT(f.fwd.gemm / b.fwd.gemm, WithinRel(ratio, 1e-9));
    CHECK_THAT(f.bwd.gemm / b.bwd.gemm, WithinRel(ratio, 1e-9));
    CHECK_THAT(f.fwd.attention / b.fwd.attention, WithinRel(ratio, 1e-9));
    CHECK_THAT(f.fwd.elementwise / b.fwd.elementwise, WithinRel(2.0, 1e-12));
    // Only the elementwise bytes grow (weight copies follow compute_param_bytes): by bf16's own amount.
    CHECK_THAT(f.fwd_bytes - b.fwd_bytes, WithinRel(b.fwd.elementwise * 3.0e12, 1e-9));
    CHECK(f.fwd_flops == b.fwd_flops);   // the same work
    CHECK(f.fwd.Total() > b.fwd.Total());
  }
}

TEST_CASE("cost_model: an fp32 job on a mixed-precision stack keeps every tensor in 4 bytes",
          "[cost_model][precision][memory]") {
  const SoftwareStack fsdp = LoadSoftwareStack("pytorch-fsdp");
  REQUIRE(fsdp.activation_bytes == 2);
  REQUIRE(fsdp.separate_compute_copy);
  const SoftwareStack s = StackForPrecision(fsdp, Precision::kFp32);
  CHECK(s.activation_bytes == 4);
  CHECK(s.compute_param_bytes == 4);
  CHECK(s.comm_param_bytes == 4);
  CHECK(s.comm_grad_bytes == 4);
  CHECK_FALSE(s.separate_compute_copy);
  CHECK(s.param_bytes_at_rest + s.grad_bytes + s.optimizer_bytes == 16);   // fp32 AdamW: 4 + 4 + 8
  CHECK(StackForPrecision(fsdp, Precision::kBf16) == fsdp);
  CHECK(StackForPrecision(fsdp, Precision::kFp8) == fsdp);

  // Through the evaluator: saved activations double, the bf16 working copy goes.
  auto report = [&](Precision p) {
    JobSpec job = testing::Job(16, 4096);
    job.precision = p;
    return AnalyticalEvaluator(testing::Llama2_7b(), testing::Dgx(LoadGpuProfile("h100-sxm"), 1), job, fsdp)
        .Evaluate(ParseParallelConfig("dp=8,tp=1,pp=1,mbs=1,sharding=zero3,recompute=none"));
  };
  auto part = [](const Report& r, const std::string& key) {
    for (const auto& [k, v] : r.memory_breakdown_bytes) {
      if (k == key) return v;
    }
    FAIL("no memory component " << key);
    return 0.0;
  };
  const Report bf16 = report(Precision::kBf16), fp32 = report(Precision::kFp32);
  REQUIRE(bf16.feasible);
  CHECK_THAT(part(fp32, "activations"), WithinRel(2 * part(bf16, "activations"), 1e-9));
  CHECK(fp32.memory_per_gpu.si() > bf16.memory_per_gpu.si());
}
