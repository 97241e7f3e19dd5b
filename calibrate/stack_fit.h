// Refits a software-stack profile (cost_model/software_stack.h) to one
// measured training step: DESIGN.md §4's framework-dependent parts —
// memory-bound op traffic, attention kernel efficiency, optimizer traffic,
// kernel count and the GPU idle gap between kernels — from a profiler trace
// of one real step (summarized by calibrate/kineto_trace.h). GEMM efficiency
// and collective bandwidth are the GPU and cluster profiles' business
// (`calibrate fit`, `calibrate import-nccl-tests`): the fit only compares them.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "calibrate/kineto_trace.h"
#include "core/cluster_spec.h"
#include "core/job_spec.h"
#include "core/model_spec.h"
#include "core/parallel_config.h"
#include "cost_model/software_stack.h"

namespace parasim::calibrate {

// One training step on one GPU as the profiler saw it (seconds; mean over
// the steps kept). Kernel busy times are sums of kernel durations, so compute
// that ran beside a collective carries its interference slowdown.
struct MeasuredStep {
  std::string source;          // the trace, for provenance
  double step_s = 0;           // GPU span of the step
  double gemm_s = 0;
  double attention_s = 0;
  double memory_bound_s = 0;   // elementwise, norms, loss, framework copies, memcpy/memset
  double optimizer_s = 0;
  double comm_s = 0;           // NCCL kernels
  double exposed_comm_s = 0;   // NCCL with no compute kernel beside it
  double idle_s = 0;           // no kernel at all
  double compute_kernels = 0;  // non-NCCL kernels (and copies) per step
  // Same-name kernels beside NCCL over alone (kineto_trace.h OverlapSlowdown);
  // 0 = not measured.
  double matmul_slowdown = 0;
  double memory_slowdown = 0;
};

// One GPU's step from a trace summary (its mean over the kept steps):
// `device`, else the first device with GPU work. Memory-bound time is the
// elementwise/other kernels plus memcpy/memset; the kernel count is the
// compute kernels less the optimizer's. parasim's own timelines (fused
// blocks, not kernels) are refused with an Error.
MeasuredStep MeasuredStepFromTrace(const StepTraceSummary& trace, std::optional<int> device);

// Measured against predicted, per class (seconds per step).
struct ClassComparison {
  std::string name;
  double measured = 0;
  double before = 0;  // the base stack's prediction
  double after = 0;   // the fitted stack's prediction
};

struct StackFit {
  SoftwareStack stack;                         // the refitted profile
  std::map<std::string, std::string> sources;  // field -> where its value comes from
  std::vector<ClassComparison> classes;        // gemm, attention, memory-bound, ..., step
  std::vector<std::string> notes;              // what was not fitted, and why
};

// Throws parasim::Error when the config is infeasible for the base stack or
// the measurement is unusable (no step time, negative times).
StackFit FitStackToStep(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                        const ParallelConfig& config, const SoftwareStack& base, const MeasuredStep& measured,
                        const std::string& fitted_name);

// Kernels per step the evaluator assumes on the critical pipeline stage for
// `kernels_per_layer_forward` = k (layer_cost.cc: a layer launches k forward
// and 2k backward; embedding 2 + 3, LM head and loss 12 + 16; full
// recomputation repeats the forward). The fit inverts it for k.
double ModelKernelsPerStep(const ModelSpec& model, const ParallelConfig& config, int num_micro_batches,
                           double kernels_per_layer_forward);

}  // namespace parasim::calibrate
