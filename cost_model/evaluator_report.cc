#include "cost_model/evaluator_report.h"


#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "cost_model/evaluator_stage_time.h"
#include "cost_model/power.h"
#include "cost_model/report_check.h"

namespace parasim {

namespace {

// StrCat (precision 12) of k/10 for an integral k: the "needs 91.2 GB" of a
// memory verdict, without an ostringstream. Exact for 0 <= k < 1e11 (at most
// 11 significant digits); anything else goes through StrCat.
std::string TenthsText(double k) {
  if (!(k >= 0 && k < 1e11) || k != std::floor(k)) return StrCat(k / 10.0);
  auto n = static_cast<long long>(k);
  char buf[24];
  char* p = buf + sizeof buf;
  if (n % 10 != 0) {
    *--p = static_cast<char>('0' + n % 10);
    *--p = '.';
  }
  n /= 10;
  do {
    *--p = static_cast<char>('0' + n % 10);
    n /= 10;
  } while (n > 0);
  return std::string(p, buf + sizeof buf);
}

struct GpuEnergy {
  double avg_w = 0;         // per GPU, averaged over the stages
  double comm_only_j = 0;   // all GPUs
};

// Each stage's GPUs in their own power states, averaged. (EstimatePower
// depends on the stage's shape only: once per shape.)
GpuEnergy StageGpuPower(const EvaluatorData& d, const ConfigShape& cs, const StagePlan& stages, double step) {
  thread_local std::vector<PowerEstimate> by_shape;
  by_shape.resize(stages.shapes.size());
  for (size_t q = 0; q < stages.shapes.size(); ++q) {
    const StageResult& st = stages.shapes[q].t;
    StateTimes t;
    t.matmul_s = st.matmul;
    t.memory_s = st.memory;
    t.comm_only_s = std::min(st.exposed, std::max(0.0, step - st.compute));
    t.idle_s = std::max(0.0, step - st.compute - t.comm_only_s);
    by_shape[q] = EstimatePower(d.power, t, cs.world / cs.pp, d.cluster.gpus_per_node, 0.0);
  }
  GpuEnergy e;
  for (int s = 0; s < cs.pp; ++s) {
    const PowerEstimate& p = by_shape[stages.shape_of[s]];
    e.avg_w += p.gpu_avg_w / cs.pp;
    e.comm_only_j += p.comm_only_energy_j;
  }
  return e;
}

// Compute by op class and communication by dimension, on the critical
// stage. Names copied from per-thread prototypes (no strlen, one allocation
// per vector).
void NameBreakdowns(const StageResult& cs, double step, Report* rep) {
  thread_local const std::vector<TimeBreakdownEntry> op_names = {
      {"gemm", {}, {}},           {"attention", {}, {}},       {"elementwise", {}, {}},  {"loss", {}, {}},
      {"framework_copy", {}, {}}, {"launch_overhead", {}, {}}, {"interference", {}, {}}, {"optimizer", {}, {}}};
  rep->by_op = op_names;
  const double op_totals[] = {cs.kernels.gemm, cs.kernels.attention, cs.kernels.elementwise, cs.kernels.loss,
                              cs.kernels.copy,  cs.kernels.launch,    cs.interference,        cs.optimizer};
  for (size_t i = 0; i < rep->by_op.size(); ++i) rep->by_op[i].total = Seconds(op_totals[i]);
  static constexpr ParallelDim kReportDims[] = {ParallelDim::kDp, ParallelDim::kTp, ParallelDim::kPp, ParallelDim::kCp,
                                                ParallelDim::kEp};
  thread_local const std::vector<TimeBreakdownEntry> dim_names = [] {
    std::vector<TimeBreakdownEntry> v;
    for (ParallelDim d : kReportDims) v.push_back({ToString(d), {}, {}});
    return v;
  }();
  rep->by_dimension = dim_names;
  for (size_t i = 0; i < rep->by_dimension.size(); ++i) {
    const int d = DimIndex(kReportDims[i]);
    rep->by_dimension[i].total = Seconds(cs.dim_total[d]);
    rep->by_dimension[i].exposed = Seconds(std::min(cs.dim_exposed[d], step));
  }
}

void MemoryVerdict(const EvaluatorData& d, const MemoryPlan& memory, Report* rep) {
  if (!ExceedsMemory(d, memory)) return;
  rep->feasible = false;
  rep->infeasible_reason.reserve(64);
  rep->infeasible_reason += "memory: needs ";
  rep->infeasible_reason += TenthsText(std::round(rep->memory_per_gpu.si() / 1e8));
  rep->infeasible_reason += " GB of ";
  rep->infeasible_reason += d.capacity_text;
  rep->infeasible_reason += " GB";
}

}  // namespace

StepFlops StepFlopsOf(const EvaluatorData& d, const ParallelConfig& c) {
  StepFlops f;
  f.tokens = static_cast<double>(d.job.TokensPerStep());
  f.model = d.model_flops_per_token * f.tokens;
  f.hardware =
      d.lcm.flops.HardwareFlopsPerToken(d.job.seq_len, c.recompute, d.stack.sac_matmul_recompute_fraction) * f.tokens;
  if (c.recompute == RecomputeMode::kFull && c.recompute_layers > 0) {
    // Partial full recompute: only the recomputed layers' forward is added.
    int64_t recomputed = 0;
    for (int layers : StageLayerSplit(d, c)) recomputed += c.RecomputedLayers(layers);
    const double share = static_cast<double>(recomputed) / static_cast<double>(d.model.num_layers);
    const double none = d.lcm.flops.HardwareFlopsPerToken(d.job.seq_len, RecomputeMode::kNone) * f.tokens;
    f.hardware = none + share * (f.hardware - none);
  }
  return f;
}

StepMeasures AnalyticalStepMeasures(const EvaluatorData& d, const ParallelConfig& c, const ConfigShape& cs,
                                    const StagePlan& stages, double step_s) {
  const StepFlops flops = StepFlopsOf(d, c);
  const GpuEnergy gpu = StageGpuPower(d, cs, stages, step_s);
  StepMeasures m;
  m.step_s = step_s;
  m.tokens = flops.tokens;
  m.world = cs.world;
  m.model_flops = flops.model;
  m.hardware_flops = flops.hardware;
  m.peak_flops = d.peak_flops;
  m.own_peak_flops = d.own_peak_flops;
  m.gpu = GpuDraw::AveragePerGpu(gpu.avg_w);
  m.comm_only_energy_j = gpu.comm_only_j;
  return m;
}

void FinishAnalyticalReport(const EvaluatorData& d, const ParallelConfig& c, const ConfigShape& cs,
                            const StagePlan& stages, const PipelineStep& pipeline, const MemoryPlan& memory,
                            Report* rep) {
  const double step = pipeline.step_s;
  const StageResult& crit = stages.Of(pipeline.critical);
  FinishReport(AnalyticalStepMeasures(d, c, cs, stages, step), d.facility, rep);

  rep->compute = Seconds(crit.compute);
  rep->comm = Seconds(crit.comm);
  rep->exposed_comm = Seconds(std::min(crit.exposed, step));
  rep->exposed_comm_fraction = ExposedCommFraction(crit, step);
  rep->bubble = Seconds(std::max(0.0, step - crit.compute - crit.exposed));
  rep->memory_per_gpu = Bytes(memory.stage_bytes[memory.peak_stage]);
  rep->memory_bytes_per_stage = memory.stage_bytes;
  rep->memory_allocated_after_backward_per_stage = memory.stage_allocated_after_backward;
  rep->memory_peak_stage = memory.peak_stage;
  rep->memory_breakdown_bytes = memory.peak.Breakdown();
  NameBreakdowns(crit, step, rep);
  MemoryVerdict(d, memory, rep);
  CheckReportFinite(*rep, "tier A report");
}

}  // namespace parasim
