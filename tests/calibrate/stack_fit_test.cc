// The software-stack fit (calibrate/stack_fit.h) in closed loop: a "true"
// stack that differs from the preset in every fitted field produces a step
// (the evaluator's own prediction, as a profiler would see it); fitting the
// preset to that step must recover the true stack's predictions, and its
// kernel count and launch gap exactly where the model is linear.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "calibrate/kineto_trace.h"
#include "calibrate/stack_fit.h"
#include "core/error.h"
#include "core/loaders.h"
#include "cost_model/evaluator.h"
#include "cost_model/software_stack.h"

using Catch::Matchers::WithinRel;
using namespace parasim;
using namespace parasim::calibrate;

namespace {

double Op(const Report& r, const char* name) {
  for (const TimeBreakdownEntry& e : r.by_op)
    if (e.name == name) return e.total.si();
  return 0;
}

struct Setup {
  ModelSpec model = LoadModel("llama2-7b");
  ClusterSpec cluster;
  JobSpec job;
  ParallelConfig config;
};

Setup OneGpu() {
  Setup s;
  // One GPU of a DGX H100 and a 4-layer 7B (the whole model must fit with DDP).
  s.cluster = LoadCluster("dgx-h100", 1);
  s.cluster.gpus_per_node = 1;
  s.model.num_layers = 4;
  s.job.global_batch = 1;
  s.job.seq_len = 4096;
  s.config = ParseParallelConfig("dp=1,mbs=1,recompute=full,sharding=ddp");
  return s;
}

SoftwareStack TrueStack(const SoftwareStack& base, const GpuProfile& gpu) {
  SoftwareStack t = base;
  t.norm_bytes_per_element *= 1.3;
  t.rope_bytes_per_element *= 1.3;
  t.act_bytes_per_element *= 1.3;
  t.residual_bytes_per_element *= 1.3;
  t.loss_bytes_per_element *= 1.3;
  t.copy_passes_forward *= 1.3;
  t.copy_passes_backward *= 1.3;
  t.optimizer_bytes_per_param *= 1.5;
  t.kernels_per_layer_forward = 55;
  t.kernel_gap_s = 4e-6;
  for (auto& [arch, k] : t.attention_by_arch)
    if (arch == gpu.architecture) k.forward_efficiency *= 0.8;
  return t;
}

// What a profiler would report for `stack`'s predicted step.
MeasuredStep StepOf(const Setup& s, const SoftwareStack& stack) {
  const Report r = AnalyticalEvaluator(s.model, s.cluster, s.job, stack).Evaluate(s.config);
  REQUIRE(r.feasible);
  const double kernels = Op(r, "gemm") + Op(r, "attention") + Op(r, "elementwise") + Op(r, "loss") +
                         Op(r, "framework_copy");
  const double k = 1.0 + Op(r, "interference") / kernels;
  MeasuredStep m;
  m.source = "closed-loop";
  m.step_s = r.step_time.si();
  m.gemm_s = Op(r, "gemm") * k;
  m.attention_s = Op(r, "attention") * k;
  m.memory_bound_s = (Op(r, "elementwise") + Op(r, "loss") + Op(r, "framework_copy")) * k;
  m.optimizer_s = Op(r, "optimizer");
  m.comm_s = r.comm.si();
  m.exposed_comm_s = r.exposed_comm.si();
  m.idle_s = Op(r, "launch_overhead") + r.bubble.si();
  m.compute_kernels = ModelKernelsPerStep(s.model, s.config, r.num_micro_batches, stack.kernels_per_layer_forward);
  return m;
}

// The one-GPU closed loop: the preset, a true stack that differs from it in
// every fitted field, and the step the true stack produces.
struct ClosedLoop {
  Setup s = OneGpu();
  SoftwareStack base = LoadSoftwareStack("pytorch-fsdp");
  SoftwareStack truth = TrueStack(base, s.cluster.gpu);
  MeasuredStep m = StepOf(s, truth);
};

const ClassComparison& Class(const StackFit& f, const std::string& name) {
  for (const ClassComparison& c : f.classes)
    if (c.name == name) return c;
  FAIL("no class " << name);
  return f.classes.front();
}

}  // namespace

TEST_CASE("stack fit: one GPU, no communication: recovers the true stack", "[calibrate][stack_fit]") {
  const ClosedLoop loop;
  const auto& [s, base, truth, m] = loop;
  const StackFit f = FitStackToStep(s.model, s.cluster, s.job, s.config, base, m, "fitted");

  CHECK(f.stack.name == "fitted");
  CHECK(f.stack.kernels_per_layer_forward == 55);
  CHECK_THAT(f.stack.kernel_gap_s, WithinRel(4e-6, 1e-9));
  CHECK_THAT(f.stack.optimizer_bytes_per_param, WithinRel(truth.optimizer_bytes_per_param, 1e-9));
  CHECK_THAT(f.stack.norm_bytes_per_element, WithinRel(truth.norm_bytes_per_element, 1e-9));
  CHECK_THAT(f.stack.copy_passes_backward, WithinRel(truth.copy_passes_backward, 1e-9));
  CHECK_THAT(f.stack.AttentionFor(s.cluster.gpu).forward_efficiency,
             WithinRel(truth.AttentionFor(s.cluster.gpu).forward_efficiency, 1e-9));
  // Every class and the step land on the measurement; before the fit they did not.
  for (const char* c : {"attention", "memory_bound", "optimizer", "idle", "step"}) {
    INFO(c);
    CHECK_THAT(Class(f, c).after, WithinRel(Class(f, c).measured, 1e-9));
  }
  CHECK(Class(f, "step").before < 0.97 * Class(f, "step").measured);
  // Fields the fit does not own are untouched.
  CHECK(f.stack.nccl_channels == base.nccl_channels);
  CHECK(f.stack.param_bytes_at_rest == base.param_bytes_at_rest);
  CHECK(f.sources.count("kernels_per_layer_forward") == 1);
}

TEST_CASE("stack fit: fitting the stack's own prediction changes nothing", "[calibrate][stack_fit]") {
  Setup s;
  s.cluster = LoadCluster("dgx-h100", 4);
  s.job.seq_len = 4096;
  s.job.global_batch = 64;
  s.config = ParseParallelConfig("dp=32,mbs=2,sharding=zero2");
  const SoftwareStack base = LoadSoftwareStack("pytorch-fsdp");
  const StackFit f = FitStackToStep(s.model, s.cluster, s.job, s.config, base, StepOf(s, base), "same");
  CHECK(f.stack.kernels_per_layer_forward == base.kernels_per_layer_forward);
  CHECK_THAT(f.stack.norm_bytes_per_element, WithinRel(base.norm_bytes_per_element, 1e-9));
  CHECK_THAT(f.stack.kernel_gap_s, WithinRel(base.kernel_gap_s, 1e-9));
  CHECK_THAT(Class(f, "step").after, WithinRel(Class(f, "step").before, 1e-9));
}

TEST_CASE("stack fit: with FSDP overlap the refit lands near the true stack", "[calibrate][stack_fit]") {
  Setup s;
  s.cluster = LoadCluster("dgx-h100", 4);
  s.job.seq_len = 4096;
  s.job.global_batch = 64;
  s.config = ParseParallelConfig("dp=32,mbs=2,sharding=zero2");
  const SoftwareStack base = LoadSoftwareStack("pytorch-fsdp");
  const SoftwareStack truth = TrueStack(base, s.cluster.gpu);
  const StackFit f = FitStackToStep(s.model, s.cluster, s.job, s.config, base, StepOf(s, truth), "fitted");
  // Interference is spread over the classes in proportion to their time, so
  // the overlapped case is exact only to the interference's change.
  CHECK(f.stack.kernels_per_layer_forward == 55);
  CHECK_THAT(f.stack.norm_bytes_per_element, WithinRel(truth.norm_bytes_per_element, 0.02));
  CHECK_THAT(Class(f, "step").after, WithinRel(Class(f, "step").measured, 0.01));
}

TEST_CASE("stack fit: unusable measurements are errors naming the field", "[calibrate][stack_fit]") {
  const Setup s = OneGpu();
  const SoftwareStack base = LoadSoftwareStack("pytorch-fsdp");
  MeasuredStep m = StepOf(s, base);
  m.attention_s = std::nan("");
  CHECK_THROWS_WITH(FitStackToStep(s.model, s.cluster, s.job, s.config, base, m, "x"),
                    Catch::Contains("attention") && Catch::Contains("finite"));
  m = StepOf(s, base);
  m.step_s = 0;
  CHECK_THROWS_AS(FitStackToStep(s.model, s.cluster, s.job, s.config, base, m, "x"), InvalidInput);
}

namespace {

// A Kineto trace (export_chrome_trace's format) of one step whose kernels add
// up to `m`: real kernel names, one compute stream, a gap after every kernel.
std::string KinetoTraceOf(const MeasuredStep& m) {
  nlohmann::json events = nlohmann::json::array();
  double t = 1000;  // µs
  const double gap = m.idle_s * 1e6 / (m.compute_kernels + 4);
  auto add = [&](const std::string& name, double dur_us, int n) {
    for (int i = 0; i < n; ++i) {
      events.push_back({{"ph", "X"}, {"cat", "kernel"}, {"name", name}, {"pid", 0}, {"tid", 7}, {"ts", t},
                        {"dur", dur_us}, {"args", {{"device", 0}, {"stream", 7}}}});
      t += dur_us + gap;
    }
  };
  const int gemms = 7 * 4 * 3, attention = 4 * 3;
  const int other = static_cast<int>(m.compute_kernels) - gemms - attention;
  add("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__"
      "5x_cublas",
      m.gemm_s * 1e6 / gemms, gemms);
  add("void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t>>(Flash_fwd_params)",
      m.attention_s * 1e6 / attention, attention);
  add("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>>(int, ...)",
      m.memory_bound_s * 1e6 / other, other);
  add("void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::"
      "TensorListMetadata<4>>(...)",
      m.optimizer_s * 1e6 / 4, 4);
  return nlohmann::json{{"schemaVersion", 1}, {"traceEvents", events}}.dump();
}

}  // namespace

TEST_CASE("stack fit: through a Kineto trace file, the true stack comes back", "[calibrate][stack_fit]") {
  const ClosedLoop loop;
  const auto& [s, base, truth, m] = loop;
  const StepTraceSummary trace = ParseKinetoTrace(KinetoTraceOf(m), "closed-loop.json", {});
  const MeasuredStep read = MeasuredStepFromTrace(trace, std::nullopt);
  CHECK(read.compute_kernels == m.compute_kernels);
  CHECK_THAT(read.memory_bound_s, WithinRel(m.memory_bound_s, 1e-9));
  const StackFit f = FitStackToStep(s.model, s.cluster, s.job, s.config, base, read, "fitted");
  CHECK(f.stack.kernels_per_layer_forward == 55);
  CHECK_THAT(f.stack.norm_bytes_per_element, WithinRel(truth.norm_bytes_per_element, 1e-6));
  CHECK_THAT(f.stack.AttentionFor(s.cluster.gpu).forward_efficiency,
             WithinRel(truth.AttentionFor(s.cluster.gpu).forward_efficiency, 1e-6));
  CHECK_THAT(f.stack.optimizer_bytes_per_param, WithinRel(truth.optimizer_bytes_per_param, 1e-6));
  // The trace's gaps include the ones after the 4 optimizer kernels.
  CHECK_THAT(f.stack.kernel_gap_s, WithinRel(4e-6, 0.01));
  CHECK_THAT(Class(f, "step").after, WithinRel(m.step_s, 0.01));
}

TEST_CASE("stack fit: a parasim timeline is refused", "[calibrate][stack_fit]") {
  StepTraceSummary t;
  t.file = "sim.json";
  t.format = TraceFormat::kParasim;
  CHECK_THROWS_WITH(MeasuredStepFromTrace(t, std::nullopt), Catch::Contains("sim.json") && Catch::Contains("Kineto"));
}

TEST_CASE("stack fit: NCCL's SM share from the measured matmul slowdown", "[calibrate][stack_fit]") {
  const Setup s = OneGpu();
  const SoftwareStack base = LoadSoftwareStack("pytorch-fsdp");
  MeasuredStep m = StepOf(s, base);
  m.matmul_slowdown = 1.0 + 24.0 / 132.0;  // 24 of the H100's 132 SMs
  const StackFit f = FitStackToStep(s.model, s.cluster, s.job, s.config, base, m, "x");
  CHECK(f.stack.nccl_channels == 24);
  CHECK(f.sources.count("nccl_channels") == 1);
  m.matmul_slowdown = 0;  // not measured: kept
  CHECK(FitStackToStep(s.model, s.cluster, s.job, s.config, base, m, "x").stack.nccl_channels == base.nccl_channels);
}
