// Tier-A evaluation of one parallel config, as passes over plain structs
// (DESIGN.md §1): unit costs (evaluator_units) -> their collectives timed on
// the placed groups (evaluator_comm) -> per-stage time through the overlap
// rules and the pipeline (evaluator_stage_time) -> memory per stage
// (evaluator_memory) -> the report (evaluator_report, whose shared metrics
// come from evaluator_finish), and the simulator's workload from the same
// passes (evaluator_workload). Config-independent data is precomputed in
// the constructor (EvaluatorData).
#include "cost_model/evaluator.h"

#include "cost_model/precision.h"
#include "cost_model/precision_memory.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/validate.h"
#include "cost_model/evaluator_comm.h"
#include "cost_model/evaluator_context.h"
#include "cost_model/evaluator_finish.h"
#include "cost_model/evaluator_memory.h"
#include "cost_model/evaluator_report.h"
#include "cost_model/evaluator_stage_time.h"
#include "cost_model/evaluator_units.h"
#include "cost_model/evaluator_workload.h"
#include "cost_model/power.h"
#include "cost_model/software_stack.h"
#include "cost_model/stack_field_registry.h"
#include "cost_model/straggler.h"

namespace parasim {

struct AnalyticalEvaluator::Impl : EvaluatorData {
  Report Analyze(const ParallelConfig& c, StepWorkload* wl) const;
  ConfigMetrics Rank(const ParallelConfig& c) const;
  // Validates the config and sizes it; false (with the reason) for an invalid one.
  bool Shape(const ParallelConfig& c, ConfigShape* cs, std::string* reason) const;
};

namespace {

// Partial full recompute: the kept layers' unit costs and communication (as
// recompute=none), copied out of the per-thread memos. Taken before the
// config's own lookups, whose results stay valid until their next call.
struct KeptCosts {
  Units units;
  TimedComm comm;
  std::array<UnitComm, kNumLayerKinds> kinds{};
  KeptLayers view() const { return KeptLayers{&units, &comm}; }
};

bool PartialRecompute(const ParallelConfig& c, const std::vector<int>& stage_layers) {
  if (c.recompute != RecomputeMode::kFull || c.recompute_layers == 0) return false;
  for (int layers : stage_layers) {
    if (c.RecomputedLayers(layers) < layers) return true;
  }
  return false;
}

void KeptCostsOf(const EvaluatorData& d, const ParallelConfig& c, const ConfigShape& cs, KeptCosts* out) {
  ParallelConfig kept = c;
  kept.recompute = RecomputeMode::kNone;
  kept.recompute_layers = 0;
  out->units = UnitCostsOf(d, kept, cs);
  out->comm = TimeCommunication(d, kept, cs, out->units, nullptr);
  if (out->comm.kinds != nullptr) {
    out->kinds = *out->comm.kinds;
    out->comm.kinds = &out->kinds;
  }
}

// The GPU's rates as the kernel-time model sees them.
DeviceRates DeviceRatesOf(const GpuProfile& g, Precision precision, double peak, const AttentionKernel& ak) {
  DeviceRates d;
  d.peak_flops = peak;
  d.gemm_max_efficiency = GemmMaxEfficiencyFor(g, precision);
  d.high_precision_gemm_max_efficiency = g.gemm_max_efficiency;
  d.gemm_k0 = g.gemm_k0;
  d.gemm_half_outputs = g.gemm_half_outputs;
  d.hbm_Bps = g.hbm_bandwidth.si() * g.memory_efficiency;
  d.sm_count = g.sm_count > 0 ? g.sm_count : 100;
  // Attention efficiencies are kernel papers' burst figures; training runs at the power cap.
  // The GPU's own scale (Blackwell Ultra over B200) applies to the architecture's figure.
  const double fwd_scale = g.attention_forward_scale > 0 ? g.attention_forward_scale : 1.0;
  const double bwd_scale = g.attention_backward_scale > 0 ? g.attention_backward_scale : 1.0;
  d.attention_fwd_efficiency = std::min(1.0, ak.forward_efficiency * fwd_scale) * g.sustained_fraction;
  d.attention_bwd_efficiency =
      std::min(1.0, ak.forward_efficiency * ak.backward_ratio * bwd_scale) * g.sustained_fraction;
  d.attention_non_causal_speedup = ak.non_causal_speedup > 0 ? ak.non_causal_speedup : 1.0;
  return d;
}

uint64_t NextEvaluatorId() {
  static std::atomic<uint64_t> next_id{1};
  return next_id.fetch_add(1);
}

}  // namespace

AnalyticalEvaluator::AnalyticalEvaluator(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job)
    : AnalyticalEvaluator(model, cluster, job, LoadSoftwareStack(job.stack)) {}

AnalyticalEvaluator::AnalyticalEvaluator(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                                         const SoftwareStack& stack)
    : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  s.model = model;
  s.cluster = cluster;
  s.job = job;
  // The stack as this job runs it: fp32 tensors for an fp32 job; weights
  // gathered in FP8/NVFP4 where it can.
  s.stack = StackForPrecision(stack, job.precision);
  s.stack.comm_param_bytes = ParamGatherBytes(s.stack, job.precision);
  // Every spec checked once, here, whether it came through a loader or was built in code.
  std::vector<Issue> issues = ValidateSpecs(model, cluster, job);
  for (Issue& issue : ValidateSoftwareStack(stack, StrCat("stack ", stack.name))) issues.push_back(std::move(issue));
  if (!issues.empty()) throw InvalidInput(issues);
  const GpuProfile& g = cluster.gpu;
  const PrecisionRates rates = PrecisionRatesOf(g, job.precision, model.num_layers, s.stack.fp32_matmul_tf32,
                                                s.stack.nvfp4_bf16_layer_share);
  if (g.hbm_bandwidth.si() <= 0) throw InvalidInput(g.file, "memory.bandwidth", "must be positive");
  s.peak_flops = rates.mfu_peak;
  s.own_peak_flops = rates.own_peak;
  const AttentionKernel& ak = s.stack.AttentionFor(g);
  DeviceRates d = DeviceRatesOf(g, job.precision, rates.gemm_peak, ak);
  d.attention_peak_flops = rates.attention_peak;
  d.element_bytes = rates.element_bytes;
  d.quantize_bytes = rates.quantize_bytes;
  SetSplitAccumRates(d, g, s.stack, job.precision);
  s.lcm = MakeLayerCostModel(s.model, d, s.stack, job.seq_len);
  s.lcm.attention = ak;
  s.lcm.stack = &s.stack;
  // FP8/NVFP4: the linear layers' saved inputs quantized (MXFP8 on Blackwell);
  // NVFP4's BF16 blocks keep the stack's bytes, counted per stage.
  const bool fp4 = job.precision == Precision::kFp4;
  auto saved = [&](const ModelSpec& layer_model, ActivationPerToken& act, ActivationPerToken& act_bf16) {
    act_bf16 = LayerActivationPerToken(layer_model, s.stack);
    act = QuantizedActivations(act_bf16, layer_model, s.stack, job.precision, g.architecture == "blackwell", 0.0);
    if (!fp4) act_bf16 = act;
  };
  saved(s.model, s.act, s.act_bf16);
  if (s.model.MixesLayerKinds()) {
    saved(DenseMlpLayerModel(s.model), s.act_mlp[0], s.act_bf16_mlp[0]);
    saved(s.model, s.act_mlp[1], s.act_bf16_mlp[1]);
  }
  if (fp4) {
    const Bf16Layers kept = Nvfp4Bf16Layers(model.num_layers, s.stack.nvfp4_bf16_layer_share);
    s.bf16_first = kept.first;
    s.bf16_last = kept.last;
  }
  // Unfused attention keeps score-sized tensors per token: a·s elements × bytes.
  s.score_bytes_per_token = ak.fused ? 0.0 : static_cast<double>(model.num_attention_heads) * job.seq_len *
                                                 ak.score_bytes_saved;
  s.power = PowerStatesOf(g);
  s.features = NcclFeaturesFor(cluster, s.stack.nccl_version);
  // NCCL's SMs taken from compute while a collective overlaps it.
  s.sm_share = static_cast<double>(s.stack.nccl_channels) / d.sm_count;
  s.model_flops_per_token = s.lcm.flops.ModelFlopsPerToken(job.seq_len);
  s.capacity = g.hbm_capacity.si();
  s.capacity_text = StrCat(std::round(s.capacity / 1e8) / 10.0);
  s.facility = FacilityPowerOf(cluster);
  s.id = NextEvaluatorId();
  s.kernel_id = s.fabric_id = s.id;
}

AnalyticalEvaluator AnalyticalEvaluator::Resized(const ClusterSpec& cluster, int64_t global_batch) const {
  JobSpec job = impl_->job;
  job.global_batch = global_batch;
  AnalyticalEvaluator out(impl_->model, cluster, job, impl_->stack);
  // (Names as a guard against a different cluster or GPU; the contract is the same file.)
  if (cluster.gpu.name != impl_->cluster.gpu.name) return out;
  out.impl_->kernel_id = impl_->kernel_id;
  if (cluster.name == impl_->cluster.name && cluster.TotalGpus() == impl_->cluster.TotalGpus())
    out.impl_->fabric_id = impl_->fabric_id;
  return out;
}

AnalyticalEvaluator::~AnalyticalEvaluator() = default;
AnalyticalEvaluator::AnalyticalEvaluator(AnalyticalEvaluator&&) noexcept = default;
AnalyticalEvaluator& AnalyticalEvaluator::operator=(AnalyticalEvaluator&&) noexcept = default;

const ModelSpec& AnalyticalEvaluator::model() const { return impl_->model; }
const ClusterSpec& AnalyticalEvaluator::cluster() const { return impl_->cluster; }
const JobSpec& AnalyticalEvaluator::job() const { return impl_->job; }
const SoftwareStack& AnalyticalEvaluator::stack() const { return impl_->stack; }

Report AnalyticalEvaluator::Evaluate(const ParallelConfig& config) const {
  try {
    return impl_->Analyze(config, nullptr);
  } catch (const InvalidInput& e) {   // a rule only the placement checks (order, groups): not a plan
    Report r;
    r.config = config;
    r.feasible = false;
    r.infeasible_reason = StrCat("config: ", e.what());
    return r;
  }
}

ConfigMetrics AnalyticalEvaluator::Metrics(const ParallelConfig& config) const {
  try {
    return impl_->Rank(config);
  } catch (const InvalidInput&) {   // as Evaluate: "config: ..."
    ConfigMetrics m;
    m.reason_category = "config";
    return m;
  }
}

StepWorkload AnalyticalEvaluator::BuildWorkload(const ParallelConfig& config) const {
  StepWorkload wl;
  const Report r = impl_->Analyze(config, &wl);
  if (!r.feasible && wl.stages.empty()) throw InvalidInput("", "config", r.infeasible_reason);
  return wl;
}

bool AnalyticalEvaluator::Impl::Shape(const ParallelConfig& c, ConfigShape* cs, std::string* reason) const {
  cs->world = cluster.TotalGpus();
  const std::vector<Issue> issues = c.Validate(model, job, cs->world);
  if (!issues.empty()) {
    *reason = StrCat("config: ", issues.front().key, ": ", issues.front().message);
    return false;
  }
  cs->m = c.NumMicroBatches(job);
  cs->pp = c.pp;
  cs->v = std::max(1, c.vpp);
  cs->T = static_cast<double>(c.micro_batch) * static_cast<double>(job.seq_len) / c.cp;
  cs->tied_single_copy = model.tied_embeddings && c.pp == 1;
  const int weight_group = c.dp * c.cp;
  cs->shard = c.sharding == ShardingMode::kHsdp && c.hsdp_group > 0 ? c.hsdp_group : weight_group;
  cs->expert_shard = std::max(1, std::min(cs->shard, weight_group / std::max(1, c.ep)));
  cs->sharded_optimizer = c.sharding != ShardingMode::kDdp;
  return true;
}

Report AnalyticalEvaluator::Impl::Analyze(const ParallelConfig& c, StepWorkload* wl) const {
  Report rep;
  rep.config = c;
  rep.fidelity = Fidelity::kAnalytical;
  ConfigShape cs;
  if (!Shape(c, &cs, &rep.infeasible_reason)) {
    rep.feasible = false;
    return rep;
  }
  rep.num_micro_batches = cs.m;

  // Each pass's result lives in a per-thread table or buffer: references
  // stay valid because no pass looks another's table up again.
  const std::vector<int>& stage_layers = StageLayerSplit(*this, c);
  thread_local KeptCosts kept;
  const bool partial = PartialRecompute(c, stage_layers);
  if (partial) KeptCostsOf(*this, c, cs, &kept);
  const KeptLayers kept_view = partial ? kept.view() : KeptLayers{};
  const Units& units = UnitCostsOf(*this, c, cs);
  std::optional<CommRecord> record;
  if (wl) record.emplace();
  const TimedComm comm = TimeCommunication(*this, c, cs, units, record ? &*record : nullptr);
  thread_local StagePlan stages;
  TimeStages(*this, c, cs, units, comm, stage_layers, &stages, kept_view);
  thread_local MemoryPlan memory;
  SizeStageMemory(*this, c, cs, units, stage_layers, &memory);
  PipelineStep step = ComposePipeline(stages, cs);
  // The slowest of the world's GPUs paces every synchronisation (straggler.h).
  const double straggle = StragglerSeconds(stack.straggler_sigma, cs.world, stages.Of(step.critical).compute);
  step.step_s += straggle;
  FinishAnalyticalReport(*this, c, cs, stages, step, memory, &rep);

  if (wl) {
    BuildStepWorkload(*this, c, cs, units, comm, *record, stage_layers, stages, memory, wl,
                      partial ? &kept.units : nullptr);
    wl->straggler_s = straggle;
  }
  return rep;
}

// Analyze's passes for the ranking metrics only, with memory sized before
// anything is timed (memory does not depend on timing): a config that does
// not fit is not timed. Its collectives are still placed (memoized), as in
// Analyze, so a placement error is a "config" reason on both paths.
ConfigMetrics AnalyticalEvaluator::Impl::Rank(const ParallelConfig& c) const {
  ConfigMetrics out;
  ConfigShape cs;
  thread_local std::string reason;
  if (!Shape(c, &cs, &reason)) {
    out.reason_category = "config";
    return out;
  }
  const std::vector<int>& stage_layers = StageLayerSplit(*this, c);
  thread_local KeptCosts kept;
  const bool partial = PartialRecompute(c, stage_layers);
  if (partial) KeptCostsOf(*this, c, cs, &kept);
  const Units& units = UnitCostsOf(*this, c, cs);
  thread_local MemoryPlan memory;
  SizeStageMemory(*this, c, cs, units, stage_layers, &memory, capacity);   // stops at a stage that does not fit
  if (ExceedsMemory(*this, memory)) {
    PlaceCommunication(*this, c, cs, units);   // a placement error outranks memory, as in Analyze
    out.reason_category = "memory";
    return out;
  }
  const TimedComm comm = TimeCommunication(*this, c, cs, units, nullptr);
  thread_local StagePlan stages;
  TimeStages(*this, c, cs, units, comm, stage_layers, &stages, partial ? kept.view() : KeptLayers{});
  PipelineStep step = ComposePipeline(stages, cs);
  step.step_s += StragglerSeconds(stack.straggler_sigma, cs.world, stages.Of(step.critical).compute);
  thread_local Report finished;   // FinishReport's arithmetic, so the numbers are the Report's bit for bit
  FinishReport(AnalyticalStepMeasures(*this, c, cs, stages, step.step_s), facility, &finished);
  out.feasible = true;
  out.tokens_per_s = finished.tokens_per_s;
  out.tokens_per_joule = finished.tokens_per_joule;
  out.exposed_comm_fraction = ExposedCommFraction(stages.Of(step.critical), step.step_s);
  return out;
}

}  // namespace parasim
