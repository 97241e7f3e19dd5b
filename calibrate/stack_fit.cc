#include "calibrate/stack_fit.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/check.h"
#include "core/error.h"
#include "core/number_format.h"
#include "cost_model/evaluator.h"
#include "cost_model/report.h"

namespace parasim::calibrate {
namespace {

// Kernel launches outside the transformer layers (layer_cost.cc's
// EmbeddingCost and LmHeadCost), per micro-batch.
constexpr double kEmbeddingKernels = 2 + 3;
constexpr double kHeadKernels = 12 + 16;

double OpSeconds(const Report& r, const char* name) {
  for (const TimeBreakdownEntry& e : r.by_op)
    if (e.name == name) return e.total.si();
  return 0;
}

// Predicted kernel time per class, with the evaluator's separate
// "interference" entry spread over the compute classes in proportion to
// their time: a profiler sees it inside the kernels' durations.
struct ClassTimes {
  double gemm = 0, attention = 0, memory_bound = 0, optimizer = 0, launch = 0;
};

ClassTimes Predicted(const Report& r) {
  ClassTimes t;
  t.gemm = OpSeconds(r, "gemm");
  t.attention = OpSeconds(r, "attention");
  t.memory_bound = OpSeconds(r, "elementwise") + OpSeconds(r, "loss") + OpSeconds(r, "framework_copy");
  t.optimizer = OpSeconds(r, "optimizer");
  t.launch = OpSeconds(r, "launch_overhead");
  const double kernels = t.gemm + t.attention + t.memory_bound;
  if (kernels > 0) {
    const double k = 1.0 + OpSeconds(r, "interference") / kernels;
    t.gemm *= k;
    t.attention *= k;
    t.memory_bound *= k;
  }
  return t;
}

std::string Num(double v) { return FormatSignificant(v, 4); }

Report EvaluateWith(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                    const ParallelConfig& config, const SoftwareStack& stack) {
  const AnalyticalEvaluator evaluator(model, cluster, job, stack);
  return evaluator.Evaluate(config);
}

void CheckMeasured(const MeasuredStep& m) {
  const std::string file = m.source.empty() ? std::string("measured step") : m.source;
  const std::pair<const char*, double> fields[] = {
      {"step", m.step_s},       {"gemm", m.gemm_s},   {"attention", m.attention_s},
      {"memory_bound", m.memory_bound_s}, {"optimizer", m.optimizer_s}, {"comm", m.comm_s},
      {"exposed_comm", m.exposed_comm_s}, {"idle", m.idle_s}, {"compute_kernels", m.compute_kernels}};
  for (const auto& [name, v] : fields)
    if (!std::isfinite(v) || v < 0) throw InvalidInput(file, name, StrCat("must be finite and >= 0, got ", v));
  if (m.step_s <= 0) throw InvalidInput(file, "step", "no GPU time in the step: nothing to fit");
}

}  // namespace

MeasuredStep MeasuredStepFromTrace(const StepTraceSummary& trace, std::optional<int> device) {
  if (trace.format != TraceFormat::kKineto)
    throw InvalidInput(trace.file, "format",
                "a parasim timeline holds fused blocks, not kernels: fit a stack to a profiler (Kineto) trace of a real "
                "step");
  const DeviceStep* d = nullptr;
  for (const DeviceStep& e : trace.mean.devices)
    if (!d && (!device || e.device == *device)) d = &e;
  if (d == nullptr)
    throw InvalidInput(trace.file, "device",
                device ? StrCat("no GPU work on device ", *device, " in the selected steps")
                       : std::string("no GPU work in the selected steps"));
  auto cls = [&](KernelClass c) -> const ClassTime& { return d->by_class[static_cast<int>(c)]; };
  MeasuredStep m;
  m.source = trace.file;
  m.step_s = d->span.si();
  m.gemm_s = cls(KernelClass::kGemm).sum.si();
  m.attention_s = cls(KernelClass::kAttention).sum.si();
  m.memory_bound_s = cls(KernelClass::kElementwiseOther).sum.si() + cls(KernelClass::kMemcpy).sum.si() +
                     cls(KernelClass::kMemset).sum.si();
  m.optimizer_s = cls(KernelClass::kOptimizer).sum.si();
  m.comm_s = cls(KernelClass::kNccl).sum.si();
  m.exposed_comm_s = d->exposed_comm.si();
  m.idle_s = d->idle.si();
  m.matmul_slowdown = d->matmul_slowdown.Factor();
  m.memory_slowdown = d->memory_slowdown.Factor();
  for (int c = 0; c < kNumKernelClasses; ++c) {
    const auto k = static_cast<KernelClass>(c);
    if (IsCompute(k) && k != KernelClass::kOptimizer) m.compute_kernels += d->by_class[c].kernels;
  }
  return m;
}

double ModelKernelsPerStep(const ModelSpec& model, const ParallelConfig& config, int num_micro_batches,
                           double kernels_per_layer_forward) {
  const double layers = static_cast<double>(model.num_layers) / std::max(1, config.pp);
  const double forward_again = config.recompute == RecomputeMode::kFull ? 1.0 : 0.0;
  const double per_layer = (3.0 + forward_again) * kernels_per_layer_forward;
  // With pp > 1 the critical stage holds the embedding or the head, not both;
  // count both (an upper bound) and let the caller say so.
  return num_micro_batches * (layers * per_layer + kEmbeddingKernels + kHeadKernels);
}

StackFit FitStackToStep(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                        const ParallelConfig& config, const SoftwareStack& base, const MeasuredStep& measured,
                        const std::string& fitted_name) {
  CheckMeasured(measured);
  const Report before = EvaluateWith(model, cluster, job, config, base);
  if (!before.feasible)
    throw InvalidInput(measured.source, "config",
                StrCat(config.ToString(), " is infeasible for stack '", base.name, "': ", before.infeasible_reason));
  const ClassTimes p = Predicted(before);
  const std::string trace = measured.source.empty() ? std::string("the measured step") : measured.source;

  StackFit fit;
  fit.stack = base;
  fit.stack.name = fitted_name;
  fit.stack.description = StrCat(base.description, "; refitted to ", trace);
  SoftwareStack& s = fit.stack;
  const double step_ratio = measured.step_s / before.step_time.si();
  if (step_ratio > 3.0 || step_ratio < 1.0 / 3.0)
    fit.notes.push_back(StrCat("the measured step is ", Num(step_ratio),
                               "x the predicted one: is the trace of this model, cluster and --config?"));
  if (config.pp > 1)
    fit.notes.push_back(
        "pp > 1: the trace is taken as the critical (slowest) pipeline stage; kernel counts include both the "
        "embedding and the LM head");

  // Memory-bound ops: time is bytes / HBM rate, linear in the stack's
  // per-element traffic, plus traffic the stack does not declare (embedding,
  // unfused scores). Evaluating with the declared traffic zeroed gives that
  // fixed part, so one ratio on the declared fields reproduces the measurement.
  struct Field {
    const char* name;
    double SoftwareStack::*value;
  };
  const Field kMemoryFields[] = {{"norm_bytes_per_element", &SoftwareStack::norm_bytes_per_element},
                                 {"rope_bytes_per_element", &SoftwareStack::rope_bytes_per_element},
                                 {"act_bytes_per_element", &SoftwareStack::act_bytes_per_element},
                                 {"residual_bytes_per_element", &SoftwareStack::residual_bytes_per_element},
                                 {"loss_bytes_per_element", &SoftwareStack::loss_bytes_per_element},
                                 {"copy_passes_forward", &SoftwareStack::copy_passes_forward},
                                 {"copy_passes_backward", &SoftwareStack::copy_passes_backward}};
  SoftwareStack zeroed = base;
  for (const Field& f : kMemoryFields) zeroed.*f.value = 0;
  const double fixed_memory = Predicted(EvaluateWith(model, cluster, job, config, zeroed)).memory_bound;
  const double declared = p.memory_bound - fixed_memory;
  if (measured.memory_bound_s > fixed_memory && declared > 0) {
    const double r = (measured.memory_bound_s - fixed_memory) / declared;
    const std::string why = StrCat(base.name, " value x ", Num(r), " (memory-bound kernel time ",
                                   Num(measured.memory_bound_s), " s measured / ", Num(p.memory_bound),
                                   " s predicted per step, of which ", Num(fixed_memory),
                                   " s not from the stack's per-element traffic; ", trace, ")");
    for (const Field& f : kMemoryFields) {
      s.*f.value *= r;
      fit.sources[f.name] = why;
    }
  } else {
    fit.notes.push_back("memory-bound ops: measured time not above the part the stack does not declare; kept");
  }

  // Attention: time = FLOPs / (peak x efficiency x sustained).
  if (measured.attention_s > 0 && p.attention > 0) {
    const double r = p.attention / measured.attention_s;
    const std::string& arch = cluster.gpu.architecture;
    AttentionKernel kernel = base.AttentionFor(cluster.gpu);
    if (kernel.forward_efficiency * r > 1.0) {
      // Faster than the tensor peak: the trace's classes do not match the
      // model's (attention counted elsewhere, or another config traced).
      fit.notes.push_back(StrCat("attention: the measurement implies an efficiency of ",
                                 Num(kernel.forward_efficiency * r),
                                 " of peak (> 1): check the trace and --config; efficiency kept"));
    } else {
      kernel.forward_efficiency *= r;
      bool found = false;
      for (auto& [a, k] : s.attention_by_arch)
        if (a == arch) {
          k = kernel;
          found = true;
        }
      if (found) {
        fit.sources[StrCat("attention.", arch, ".forward_efficiency")] =
            StrCat(base.name, " value x ", Num(r), " (attention kernel time ", Num(measured.attention_s),
                   " s measured / ", Num(p.attention), " s predicted, ", trace, ")");
      } else {
        // A stack file names only the architectures its base has.
        fit.notes.push_back(StrCat("attention: the stack has no kernel for architecture '", arch,
                                   "'; efficiency not refitted"));
      }
    }
  } else {
    fit.notes.push_back("attention: no attention kernels measured; efficiency kept");
  }

  // Optimizer step: HBM traffic per parameter.
  if (measured.optimizer_s > 0 && p.optimizer > 0) {
    const double r = measured.optimizer_s / p.optimizer;
    s.optimizer_bytes_per_param *= r;
    fit.sources["optimizer_bytes_per_param"] =
        StrCat(base.name, " value x ", Num(r), " (optimizer kernel time ", Num(measured.optimizer_s),
               " s measured / ", Num(p.optimizer), " s predicted, ", trace, ")");
  } else {
    fit.notes.push_back("optimizer: no optimizer kernels measured (step outside the trace?); traffic kept");
  }

  // Kernel count: invert the evaluator's count for kernels per layer forward.
  const int m = before.num_micro_batches;
  const double per_k = ModelKernelsPerStep(model, config, m, 1.0) - ModelKernelsPerStep(model, config, m, 0.0);
  const double fixed = ModelKernelsPerStep(model, config, m, 0.0);
  if (measured.compute_kernels > fixed && per_k > 0) {
    const double k = std::round((measured.compute_kernels - fixed) / per_k);
    s.kernels_per_layer_forward = static_cast<int>(std::max(1.0, k));
    fit.sources["kernels_per_layer_forward"] =
        StrCat(Num(measured.compute_kernels), " compute kernels per step measured (", trace,
               "), minus the embedding and head's, over ", Num(per_k), " per unit of kernels_per_layer_forward");
  } else {
    fit.notes.push_back("kernel count: fewer kernels measured than the layers' fixed part; count kept");
  }

  // GPU idle between kernels (no kernel at all, outside the pipeline bubble)
  // is the launch gap: spread over the measured kernels.
  const double idle = measured.idle_s - before.bubble.si();
  if (measured.compute_kernels > 0 && idle > 0) {
    s.kernel_gap_s = idle / measured.compute_kernels;
    fit.sources["kernel_gap_s"] = StrCat("GPU idle ", Num(measured.idle_s), " s per step minus the predicted bubble ",
                                         Num(before.bubble.si()), " s, over ", Num(measured.compute_kernels),
                                         " kernels (", trace, ")");
    fit.notes.push_back(
        "kernel_gap_s absorbs every idle gap, host-bound stalls included (a trace cannot tell them apart)");
  } else {
    fit.notes.push_back("kernel gap: no idle time beyond the bubble measured; gap kept");
  }

  fit.notes.push_back(StrCat("gemm: measured / predicted = ", Num(p.gemm > 0 ? measured.gemm_s / p.gemm : 0),
                             "; GEMM efficiency belongs to the GPU profile (calibrate fit), not refitted here"));
  fit.notes.push_back(StrCat("communication: measured ", Num(measured.comm_s), " s / predicted ",
                             Num(before.comm.si()),
                             " s; collective bandwidth belongs to the cluster (calibrate import-nccl-tests)"));
  // Interference on matmul kernels is the SM share NCCL takes (evaluator.cc
  // OverlapInterference): channels = (slowdown - 1) x SMs.
  if (measured.matmul_slowdown > 0 && cluster.gpu.sm_count > 0) {
    const double channels = std::max(0.0, std::round((measured.matmul_slowdown - 1.0) * cluster.gpu.sm_count));
    s.nccl_channels = static_cast<int>(channels);
    fit.sources["nccl_channels"] =
        StrCat("GEMM/attention kernels ", Num(measured.matmul_slowdown), "x slower beside NCCL than alone (same "
               "kernel names, ", trace, ") x ", cluster.gpu.sm_count, " SMs");
  } else {
    fit.notes.push_back("interference: no kernel name ran both beside NCCL and alone; nccl_channels kept");
  }
  if (measured.memory_slowdown > 0)
    fit.notes.push_back(StrCat("memory-bound kernels ran ", Num(measured.memory_slowdown),
                               "x slower beside NCCL (nccl_memory_passes is not refitted: the trace does not "
                               "carry the collectives' bytes)"));

  const Report after = EvaluateWith(model, cluster, job, config, s);
  PARASIM_CHECK(after.feasible, "the refitted stack made the traced config infeasible: ", after.infeasible_reason);
  const ClassTimes q = Predicted(after);
  fit.classes = {
      {"gemm", measured.gemm_s, p.gemm, q.gemm},
      {"attention", measured.attention_s, p.attention, q.attention},
      {"memory_bound", measured.memory_bound_s, p.memory_bound, q.memory_bound},
      {"optimizer", measured.optimizer_s, p.optimizer, q.optimizer},
      {"idle", measured.idle_s, p.launch + before.bubble.si(), q.launch + after.bubble.si()},
      {"comm", measured.comm_s, before.comm.si(), after.comm.si()},
      {"exposed_comm", measured.exposed_comm_s, before.exposed_comm.si(), after.exposed_comm.si()},
      {"step", measured.step_s, before.step_time.si(), after.step_time.si()},
  };
  return fit;
}

}  // namespace parasim::calibrate
