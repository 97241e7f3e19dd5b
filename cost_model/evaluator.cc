// Tier-A evaluation of one parallel config: per-unit compute (layer_cost),
// the collectives each parallelism issues (comm_plan) timed on their placed
// groups (collective_cost over topology/group_path), composed by the overlap
// rules (overlap) into stage and pipeline time; memory, power and FLOP-based
// metrics on top. Config-independent data is precomputed in the constructor.
#include "cost_model/evaluator.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/check.h"
#include "core/error.h"
#include "cost_model/collective_cost.h"
#include "cost_model/comm_plan.h"
#include "cost_model/flops.h"
#include "cost_model/layer_cost.h"
#include "cost_model/memory.h"
#include "cost_model/overlap.h"
#include "cost_model/power.h"
#include "cost_model/software_stack.h"
#include "cost_model/workload.h"
#include "topology/group_path.h"

namespace parasim {

namespace {

constexpr int kNumDims = 5;  // ParallelDim values
int DimIndex(ParallelDim d) { return static_cast<int>(d); }

// A unit's collectives reduced to what the overlap rules need (seconds, per micro-batch).
struct UnitComm {
  double fwd_blocking = 0, bwd_blocking = 0;  // TP / EP / embedding-head TP (exposed)
  double cp_exposed_fwd = 0, cp_exposed_bwd = 0, cp_total = 0;
  double gather_mb = 0, gather_step = 0;          // forward gathers (every micro-batch / once)
  double bwd_gather_mb = 0;                       // zero3 re-gather
  double reduce_mb = 0, reduce_step = 0;          // gradient reductions
  double step_end = 0;                            // blocking, after the last micro-batch
  std::array<double, kNumDims> dim_total_mb{};    // per micro-batch comm by dimension
  std::array<double, kNumDims> dim_total_step{};  // once per step
};

// Group paths, resolved by topology/group_path.h and reused: a planner asks
// for many configs that share their degrees and order (they differ in
// micro-batch, sharding, recompute), so each thread keeps a small
// direct-mapped cache keyed by the evaluator instance and the group's
// inputs. Lookups only (no iteration), so the output never depends on it.
struct PathKey {
  uint64_t evaluator = 0;
  int dp = 0, tp = 0, pp = 0, cp = 0, ep = 0;
  int dim = 0, sub_size = 0, sub_stride = 0;
  std::string order;
  bool operator==(const PathKey& o) const {
    return evaluator == o.evaluator && dp == o.dp && tp == o.tp && pp == o.pp && cp == o.cp && ep == o.ep &&
           dim == o.dim && sub_size == o.sub_size && sub_stride == o.sub_stride && order == o.order;
  }
  uint64_t Hash() const {
    uint64_t h = 1469598103934665603ull;
    auto mix = [&h](uint64_t x) { h = (h ^ x) * 1099511628211ull; };
    mix(evaluator);
    for (int x : {dp, tp, pp, cp, ep, dim, sub_size, sub_stride}) mix(static_cast<uint64_t>(x));
    for (char ch : order) mix(static_cast<unsigned char>(ch));
    return h;
  }
};

struct PathSlot {
  bool used = false;
  PathKey key;
  GroupPath path;
};

class PathCache {
 public:
  PathCache(const ClusterSpec& cluster, const ParallelConfig& config, uint64_t evaluator_id)
      : cluster_(cluster), config_(config), id_(evaluator_id) {}
  const GroupPath& Get(ParallelDim dim, SubGroup sub) {
    for (int i = 0; i < n_; ++i) {
      if (local_[i].dim == dim && local_[i].sub.size == sub.size && local_[i].sub.stride == sub.stride)
        return local_[i].path;
    }
    PARASIM_CHECK(n_ < static_cast<int>(local_.size()), "too many distinct groups");
    Local& e = local_[n_++];
    e.dim = dim;
    e.sub = sub;
    const ParallelConfig& c = dim == ParallelDim::kDp && config_.cp > 1 ? Merged() : config_;
    PathKey key{id_, c.dp, c.tp, c.pp, c.cp, c.ep, static_cast<int>(dim), sub.size, sub.stride, c.order};
    thread_local std::array<PathSlot, 512> slots;
    PathSlot& slot = slots[key.Hash() % slots.size()];
    if (!slot.used || !(slot.key == key)) {
      slot.path = ResolveGroupPath(cluster_, c, dim, sub);
      slot.key = std::move(key);
      slot.used = true;
    }
    e.path = slot.path;
    e.key = slot.key;
    return e.path;
  }

  // Collective time on the group (dim, sub), memoized per thread like the paths.
  double Time(ParallelDim dim, SubGroup sub, CollectiveOp op, Bytes size, const NcclFeatures& features) {
    const GroupPath& path = Get(dim, sub);
    const Local* e = nullptr;
    for (int i = 0; i < n_; ++i)
      if (local_[i].dim == dim && local_[i].sub.size == sub.size && local_[i].sub.stride == sub.stride) e = &local_[i];
    struct TimeSlot {
      bool used = false;
      PathKey key;
      int op = 0;
      double size = 0;
      double time = 0;
    };
    thread_local std::array<TimeSlot, 1024> slots;
    uint64_t h = e->key.Hash();
    h = (h ^ static_cast<uint64_t>(op)) * 1099511628211ull;
    uint64_t bits;
    const double sz = size.si();
    static_assert(sizeof bits == sizeof sz);
    std::memcpy(&bits, &sz, sizeof bits);
    h = (h ^ bits) * 1099511628211ull;
    TimeSlot& slot = slots[h % slots.size()];
    if (slot.used && slot.op == static_cast<int>(op) && slot.size == sz && slot.key == e->key) return slot.time;
    const double t = EstimateCollective(op, size, path, features).time.si();
    slot.used = true;
    slot.key = e->key;
    slot.op = static_cast<int>(op);
    slot.size = sz;
    slot.time = t;
    return t;
  }

 private:
  const ParallelConfig& Merged() {
    if (!merged_ready_) {
      merged_ = WeightGroupConfig(config_);
      merged_ready_ = true;
    }
    return merged_;
  }
  struct Local {
    ParallelDim dim = ParallelDim::kDp;
    SubGroup sub;
    GroupPath path;
    PathKey key;
  };
  const ClusterSpec& cluster_;
  const ParallelConfig& config_;
  uint64_t id_;
  std::array<Local, 12> local_{};
  int n_ = 0;
  ParallelConfig merged_;
  bool merged_ready_ = false;
};

struct StageResult {
  double per_mb = 0;              // fwd + bwd + p2p of a middle micro-batch
  double extra = 0;               // once-per-step additions (first gathers, last reductions, step end, optimizer)
  double compute = 0;             // kernel time per step incl. interference and optimizer
  double exposed = 0;             // exposed comm per step
  double comm = 0;                // comm time per step (all streams)
  double matmul = 0, memory = 0;  // power-state split of `compute`
  KernelSeconds kernels;          // per step
  double interference = 0, optimizer = 0;
  std::array<double, kNumDims> dim_total{}, dim_exposed{};
  double memory_bytes = 0;
  MemoryEstimate mem;
};

}  // namespace

struct AnalyticalEvaluator::Impl {
  ModelSpec model;
  ClusterSpec cluster;
  JobSpec job;
  SoftwareStack stack;
  LayerCostModel lcm;
  ActivationPerToken act;
  PowerStates power;
  NcclFeatures features;
  double peak_flops = 0;
  double interference = 1.0;
  double model_flops_per_token = 0;
  double capacity = 0;
  double score_bytes_per_token = 0;  // unfused attention activations (÷ tp; selective recompute drops them)
  int fabric_switches = 0;   // for network power (0 W per switch = not counted)
  uint64_t id = 0;  // unique per instance: keys the per-thread group-path cache

  Report Analyze(const ParallelConfig& c, StepWorkload* wl) const;
  UnitComm TimeComm(const std::vector<WorkloadCollective>& list, PathCache& paths, double attn_fwd_s, double attn_bwd_s,
                    int cp, RecomputeMode recompute, std::vector<WorkloadCollective>* timed) const;
};

AnalyticalEvaluator::AnalyticalEvaluator(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job)
    : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  s.model = model;
  s.cluster = cluster;
  s.job = job;
  s.stack = LoadSoftwareStack(job.stack);
  if (model.hidden_size <= 0 || model.num_layers <= 0 || model.num_attention_heads <= 0)
    throw Error(model.source, "model", "hidden_size, num_layers and num_attention_heads must be positive");
  if (job.seq_len <= 0 || job.global_batch <= 0)
    throw Error(job.file, "job", "global_batch and seq_len must be positive");
  const GpuProfile& g = cluster.gpu;
  double peak = job.precision == Precision::kFp8 ? g.fp8_dense.si() : g.bf16_dense.si();
  if (peak <= 0) peak = g.fp16_dense.si();  // V100: fp16 tensor cores only
  if (peak <= 0)
    throw Error(g.file, "peak", StrCat("GPU profile '", g.name, "' has no tensor peak for this precision"));
  if (g.hbm_bandwidth.si() <= 0) throw Error(g.file, "memory.bandwidth", "must be positive");
  s.peak_flops = peak;
  DeviceRates d;
  d.peak_flops = peak;
  d.gemm_max_efficiency = g.gemm_max_efficiency;
  d.gemm_k0 = g.gemm_k0;
  d.gemm_half_outputs = g.gemm_half_outputs;
  d.hbm_Bps = g.hbm_bandwidth.si() * g.memory_efficiency;
  d.sm_count = g.sm_count > 0 ? g.sm_count : 100;
  const AttentionKernel& ak = s.stack.AttentionFor(g);
  // Attention efficiencies are kernel papers' burst figures; training runs at the power cap.
  d.attention_fwd_efficiency = ak.forward_efficiency * g.sustained_fraction;
  d.attention_bwd_efficiency = ak.forward_efficiency * ak.backward_ratio * g.sustained_fraction;
  s.lcm = MakeLayerCostModel(s.model, d, s.stack, job.seq_len);
  s.lcm.attention = ak;
  s.lcm.stack = &s.stack;
  s.act = LayerActivationPerToken(s.model, s.stack.dropout);
  // Unfused attention keeps score-sized tensors per token: a·s elements × bytes.
  s.score_bytes_per_token = ak.fused ? 0.0 : static_cast<double>(model.num_attention_heads) * job.seq_len *
                                                 ak.score_bytes_saved;
  s.power = PowerStatesOf(g);
  s.features = NcclFeaturesFor(cluster, s.stack.nccl_version);
  // NCCL's SMs taken from compute while a collective overlaps it.
  s.interference = 1.0 + static_cast<double>(s.stack.nccl_channels) / d.sm_count;
  s.model_flops_per_token = s.lcm.flops.ModelFlopsPerToken(job.seq_len);
  s.capacity = g.hbm_capacity.si();
  s.fabric_switches = FabricSwitchCount(cluster);
  static std::atomic<uint64_t> next_id{1};
  s.id = next_id.fetch_add(1);
}

AnalyticalEvaluator::~AnalyticalEvaluator() = default;
AnalyticalEvaluator::AnalyticalEvaluator(AnalyticalEvaluator&&) noexcept = default;
AnalyticalEvaluator& AnalyticalEvaluator::operator=(AnalyticalEvaluator&&) noexcept = default;

const ModelSpec& AnalyticalEvaluator::model() const { return impl_->model; }
const ClusterSpec& AnalyticalEvaluator::cluster() const { return impl_->cluster; }
const JobSpec& AnalyticalEvaluator::job() const { return impl_->job; }

Report AnalyticalEvaluator::Evaluate(const ParallelConfig& config) const {
  try {
    return impl_->Analyze(config, nullptr);
  } catch (const Error& e) {   // a rule only the placement checks (order, groups): not a plan
    Report r;
    r.config = config;
    r.feasible = false;
    r.infeasible_reason = StrCat("config: ", e.what());
    return r;
  }
}

StepWorkload AnalyticalEvaluator::BuildWorkload(const ParallelConfig& config) const {
  StepWorkload wl;
  const Report r = impl_->Analyze(config, &wl);
  if (!r.feasible && wl.stages.empty()) throw Error("", "config", r.infeasible_reason);
  return wl;
}

UnitComm AnalyticalEvaluator::Impl::TimeComm(const std::vector<WorkloadCollective>& list, PathCache& paths,
                                             double attn_fwd_s, double attn_bwd_s, int cp, RecomputeMode recompute,
                                             std::vector<WorkloadCollective>* timed) const {
  UnitComm u;
  for (const WorkloadCollective& c : list) {
    const double t = paths.Time(c.dim, c.sub, c.op, c.size, features);
    if (timed) {
      timed->push_back(c);
      timed->back().duration = Seconds(t);
    }
    const double total = t * c.count;
    auto& dim_bucket = c.every_micro_batch ? u.dim_total_mb : u.dim_total_step;
    dim_bucket[DimIndex(c.dim)] += total;
    if (c.dim == ParallelDim::kCp) {
      // Ring attention: each step's K,V transfer hides under one block of attention.
      const double block = (c.phase == CommPhase::kForward ? attn_fwd_s : attn_bwd_s) / cp;
      const double exposed = c.count * std::max(0.0, t - block);
      (c.phase == CommPhase::kForward ? u.cp_exposed_fwd : u.cp_exposed_bwd) += exposed;
      u.cp_total += total;
      continue;
    }
    switch (c.phase) {
      case CommPhase::kForward:
        u.fwd_blocking += total;
        // Full recomputation re-runs the forward's blocking collectives.
        if (recompute == RecomputeMode::kFull) {
          u.bwd_blocking += total;
          dim_bucket[DimIndex(c.dim)] += total;
        }
        break;
      case CommPhase::kBackward:
        u.bwd_blocking += total;
        break;
      case CommPhase::kForwardPrefetch:
        (c.every_micro_batch ? u.gather_mb : u.gather_step) += total;
        break;
      case CommPhase::kBackwardPrefetch:
        u.bwd_gather_mb += total;
        break;
      case CommPhase::kGradientReduce:
        (c.every_micro_batch ? u.reduce_mb : u.reduce_step) += total;
        break;
      case CommPhase::kStepEnd:
        u.step_end += total;
        break;
    }
  }
  return u;
}

Report AnalyticalEvaluator::Impl::Analyze(const ParallelConfig& c, StepWorkload* wl) const {
  Report rep;
  rep.config = c;
  rep.fidelity = Fidelity::kAnalytical;
  const int world = cluster.TotalGpus();
  const std::vector<Issue> issues = c.Validate(model, job, world);
  if (!issues.empty()) {
    rep.feasible = false;
    rep.infeasible_reason = StrCat("config: ", issues.front().key, ": ", issues.front().message);
    return rep;
  }
  const int m = c.NumMicroBatches(job);
  rep.num_micro_batches = m;
  const int pp = c.pp, v = std::max(1, c.vpp);
  const double seq = static_cast<double>(job.seq_len);
  const double T = static_cast<double>(c.micro_batch) * seq / c.cp;  // tokens per micro-batch per GPU

  // --- compute of the three kinds of unit ---
  const UnitCost layer = TransformerLayerCost(lcm, c, T);
  const UnitCost emb = EmbeddingCost(lcm, c, T);
  const UnitCost head = LmHeadCost(lcm, c, T);
  const bool tied_single_copy = model.tied_embeddings && pp == 1;

  // --- their collectives, timed on the placed groups ---
  PathCache paths(cluster, c, id);
  CommPlanInputs ci;
  ci.tokens = T;
  ci.hidden = lcm.h;
  ci.kv_width = lcm.gd;
  ci.layer_dense_params = layer.dense_params;
  ci.layer_expert_params = layer.params - layer.dense_params;
  ci.experts_per_token = model.IsMoe() ? lcm.top_k : 0;
  ci.num_micro_batches = m;
  const CommPlan plan = BuildCommPlan(c, stack, ci);
  std::vector<WorkloadCollective> timed_layer, timed_emb, timed_head;
  const UnitComm layer_comm = TimeComm(plan.layer, paths, layer.fwd.attention, layer.bwd.attention - layer.recompute_s,
                                       c.cp, c.recompute, wl ? &timed_layer : nullptr);
  // Embedding and LM head: their own sharding units, plus vocab-parallel TP
  // collectives of the activations (embedding output reduce; head input
  // gather and its gradient reduction).
  std::vector<WorkloadCollective> emb_list =
      ShardingCollectives(c, stack, tied_single_copy ? 0.0 : emb.params, m, "dp_embedding");
  std::vector<WorkloadCollective> head_list = ShardingCollectives(c, stack, head.params, m, "dp_lm_head");
  if (c.tp > 1) {
    const double act = T * lcm.h * 2.0;
    WorkloadCollective x;
    x.dim = ParallelDim::kTp;
    x.size = Bytes(act);
    x.blocking = true;
    x.op = c.sequence_parallel ? CollectiveOp::kReduceScatter : CollectiveOp::kAllReduce;
    x.phase = CommPhase::kForward;
    x.what = "tp_embedding";
    emb_list.push_back(x);
    x.op = c.sequence_parallel ? CollectiveOp::kAllGather : CollectiveOp::kAllReduce;
    x.phase = c.sequence_parallel ? CommPhase::kForward : CommPhase::kBackward;
    x.what = "tp_lm_head";
    head_list.push_back(x);
    if (c.sequence_parallel) {
      x.op = CollectiveOp::kReduceScatter;
      x.phase = CommPhase::kBackward;
      head_list.push_back(x);
    }
  }
  const UnitComm emb_comm = TimeComm(emb_list, paths, 0, 0, c.cp, RecomputeMode::kNone, wl ? &timed_emb : nullptr);
  const UnitComm head_comm = TimeComm(head_list, paths, 0, 0, c.cp, RecomputeMode::kNone, wl ? &timed_head : nullptr);
  double p2p = 0;
  WorkloadCollective pp_send = plan.pp_send;
  if (plan.has_pp_send) {
    p2p = paths.Time(ParallelDim::kPp, {}, plan.pp_send.op, plan.pp_send.size, features);
    pp_send.duration = Seconds(p2p);
  }

  // --- per stage: overlap rules over its units ---
  const std::vector<int> stage_layers = c.StageLayers(model);
  std::vector<StageResult> stages(pp);
  const int weight_group = c.dp * c.cp;
  const int shard = c.sharding == ShardingMode::kHsdp && c.hsdp_group > 0 ? c.hsdp_group : weight_group;
  const int expert_shard = std::max(1, std::min(shard, weight_group / std::max(1, c.ep)));
  const bool sharded_optimizer = c.sharding != ShardingMode::kDdp;
  thread_local std::vector<OverlapUnit> fwd, bwd, scratch;
  for (int s = 0; s < pp; ++s) {
    StageResult& st = stages[s];
    const bool first = s == 0, last = s == pp - 1;
    const int L = stage_layers[s];
    const double stage_dense =
        L * layer.dense_params + (first && !tied_single_copy ? emb.params : 0.0) + (last ? head.params : 0.0);
    const double stage_expert = L * (layer.params - layer.dense_params);
    // Stages with the same shape time the same: reuse (pipelines of 8-16 stages).
    int same = -1;
    for (int q = 0; q < s && same < 0; ++q)
      if (stage_layers[q] == L && (q == 0) == first && (q == pp - 1) == last) same = q;
    if (same >= 0) {
      st = stages[same];
    } else {
      fwd.clear();
      bwd.clear();
      KernelSeconds kernels_mb;
      double blocking_mb = 0, cp_total_mb = 0;
      std::array<double, kNumDims> dim_mb{}, dim_step{};
      double gather_step = 0, reduce_step = 0, step_end = 0;
      auto add_unit = [&](const UnitCost& uc, const UnitComm& cm, int copies) {
        const double f = uc.fwd.Total() + cm.fwd_blocking + cm.cp_exposed_fwd;
        const double b = uc.bwd.Total() + cm.bwd_blocking + cm.cp_exposed_bwd;
        for (int i = 0; i < copies; ++i) {
          fwd.push_back(OverlapUnit{f, cm.gather_mb, 0});
          bwd.push_back(OverlapUnit{b, cm.bwd_gather_mb, cm.reduce_mb});
        }
        kernels_mb += (KernelSeconds(uc.fwd) += uc.bwd).Scaled(copies);
        blocking_mb += copies * (cm.fwd_blocking + cm.bwd_blocking + cm.cp_exposed_fwd + cm.cp_exposed_bwd);
        cp_total_mb += copies * cm.cp_total;
        for (int k = 0; k < kNumDims; ++k) {
          dim_mb[k] += copies * cm.dim_total_mb[k];
          dim_step[k] += copies * cm.dim_total_step[k];
        }
        gather_step += copies * cm.gather_step;
        reduce_step += copies * cm.reduce_step;
        step_end += copies * cm.step_end;
      };
      if (first) add_unit(emb, emb_comm, 1);
      add_unit(layer, layer_comm, L);
      if (last) add_unit(head, head_comm, 1);
      const int n = static_cast<int>(fwd.size());

      // Middle micro-batch, then the first (once-per-step gathers) and the last
      // (once-per-step reductions).
      const PhaseResult f_mid = ForwardWithPrefetch(fwd.data(), n, c.prefetch, interference);
      const PhaseResult b_mid = BackwardWithReduce(bwd.data(), n, interference);
      PhaseResult f_first = f_mid, b_last = b_mid;
      if (gather_step > 0) {
        scratch = fwd;
        int idx = 0;
        if (first) scratch[idx++].gather += emb_comm.gather_step;
        for (int i = 0; i < L; ++i) scratch[idx++].gather += layer_comm.gather_step;
        if (last) scratch[idx].gather += head_comm.gather_step;
        f_first = ForwardWithPrefetch(scratch.data(), n, c.prefetch, interference);
      }
      if (reduce_step > 0) {
        scratch = bwd;
        int idx = 0;
        if (first) scratch[idx++].reduce += emb_comm.reduce_step;
        for (int i = 0; i < L; ++i) scratch[idx++].reduce += layer_comm.reduce_step;
        if (last) scratch[idx].reduce += head_comm.reduce_step;
        b_last = BackwardWithReduce(scratch.data(), n, interference);
      }
      const double p2p_mb = pp > 1 ? 2.0 * v * p2p : 0.0;

      // Optimizer step over the parameters this GPU updates.
      const double stage_params_sharded =
          sharded_optimizer ? stage_dense / shard + stage_expert / expert_shard : stage_dense + stage_expert;
      st.optimizer = stage_params_sharded * stack.optimizer_bytes_per_param / lcm.rates.hbm_Bps;

      st.per_mb = f_mid.time + b_mid.time + p2p_mb;
      st.extra = (f_first.time - f_mid.time) + (b_last.time - b_mid.time) + step_end + st.optimizer;
      st.kernels = kernels_mb.Scaled(m);
      st.interference = m * (f_mid.interference + b_mid.interference) + (f_first.interference - f_mid.interference) +
                        (b_last.interference - b_mid.interference);
      st.compute = st.kernels.Total() + st.interference + st.optimizer;
      st.matmul = st.kernels.Matmul() + st.interference;
      st.memory = st.compute - st.matmul;
      const double exposed_mb = f_mid.exposed + b_mid.exposed + blocking_mb + p2p_mb;
      st.exposed = m * exposed_mb + (f_first.exposed - f_mid.exposed) + (b_last.exposed - b_mid.exposed) + step_end;
      const double fsdp_exposed = m * (f_mid.exposed + b_mid.exposed) + (f_first.exposed - f_mid.exposed) +
                                  (b_last.exposed - b_mid.exposed) + step_end;
      for (int k = 0; k < kNumDims; ++k) st.dim_total[k] = m * dim_mb[k] + dim_step[k];
      st.dim_total[DimIndex(ParallelDim::kPp)] += m * p2p_mb;
      st.dim_exposed[DimIndex(ParallelDim::kDp)] = fsdp_exposed;
      st.dim_exposed[DimIndex(ParallelDim::kTp)] = st.dim_total[DimIndex(ParallelDim::kTp)];
      st.dim_exposed[DimIndex(ParallelDim::kEp)] = st.dim_total[DimIndex(ParallelDim::kEp)];
      st.dim_exposed[DimIndex(ParallelDim::kCp)] = m * (layer_comm.cp_exposed_fwd + layer_comm.cp_exposed_bwd) * L;
      st.dim_exposed[DimIndex(ParallelDim::kPp)] = m * p2p_mb;
      st.comm = 0;
      for (int k = 0; k < kNumDims; ++k) st.comm += st.dim_total[k];
      (void)cp_total_mb;
    }

    // Memory of this stage.
    MemoryInputs mi;
    mi.sharding = c.sharding;
    mi.shard_group = shard;
    mi.expert_shard_group = expert_shard;
    mi.prefetch = c.prefetch;
    mi.pipelined = pp > 1;
    mi.params.dense = stage_dense;
    mi.params.expert = stage_expert;
    mi.params.layers = L;
    mi.params.largest_layer = std::max({layer.params, first ? emb.params : 0.0, last ? head.params : 0.0});
    const double in_flight = MicroBatchesInFlight(c.schedule, pp, m, v, s);
    const double scores = c.recompute == RecomputeMode::kNone ? T * score_bytes_per_token / c.tp : 0.0;
    mi.activation_bytes =
        in_flight * L * (LayerActivationBytes(act, T, c.tp, c.sequence_parallel, c.recompute) + scores);
    mi.working_bytes = c.recompute == RecomputeMode::kFull ? LayerWorkingBytes(act, T, c.tp, c.sequence_parallel) : 0.0;
    mi.logits_bytes = last ? T * lcm.vocab / c.tp * stack.logits_bytes_per_element : 0.0;
    st.mem = EstimateMemory(stack, mi);
    st.memory_bytes = st.mem.total;
  }

  // --- pipeline and step ---
  std::vector<double> per_mb(pp);
  int crit = 0, mem_stage = 0;
  double extra_max = 0;
  for (int s = 0; s < pp; ++s) {
    per_mb[s] = stages[s].per_mb;
    if (stages[s].per_mb > stages[crit].per_mb) crit = s;
    if (stages[s].memory_bytes > stages[mem_stage].memory_bytes) mem_stage = s;
    extra_max = std::max(extra_max, stages[s].extra);
  }
  const double pipeline = PipelineSeconds(per_mb.data(), pp, m, v);
  const double step = pipeline + extra_max;
  const StageResult& cs = stages[crit];

  const double tokens = static_cast<double>(job.TokensPerStep());
  rep.step_time = Seconds(step);
  rep.tokens_per_s = tokens / step;
  rep.tokens_per_s_per_gpu = rep.tokens_per_s / world;
  const double model_flops = model_flops_per_token * tokens;
  const double hw_flops = lcm.flops.HardwareFlopsPerToken(job.seq_len, c.recompute) * tokens;
  rep.tflops_per_gpu = model_flops / step / world / 1e12;
  rep.hardware_tflops_per_gpu = hw_flops / step / world / 1e12;
  rep.mfu = model_flops / (step * world * peak_flops);
  rep.hfu = hw_flops / (step * world * peak_flops);
  rep.compute = Seconds(cs.compute);
  rep.comm = Seconds(cs.comm);
  rep.exposed_comm = Seconds(std::min(cs.exposed, step));
  rep.exposed_comm_fraction = rep.exposed_comm.si() / step;
  rep.bubble = Seconds(std::max(0.0, step - cs.compute - cs.exposed));
  rep.memory_per_gpu = Bytes(stages[mem_stage].memory_bytes);
  rep.memory_breakdown_bytes = stages[mem_stage].mem.Breakdown();

  // --- power: each stage's GPUs in their own states, averaged ---
  double avg_w = 0, comm_only_j = 0;
  for (int s = 0; s < pp; ++s) {
    const StageResult& st = stages[s];
    StateTimes t;
    t.matmul_s = st.matmul;
    t.memory_s = st.memory;
    t.comm_only_s = std::min(st.exposed, std::max(0.0, step - st.compute));
    t.idle_s = std::max(0.0, step - st.compute - t.comm_only_s);
    const PowerEstimate e = EstimatePower(power, t, world / pp, cluster.gpus_per_node, 0.0);
    avg_w += e.gpu_avg_w / pp;
    comm_only_j += e.comm_only_energy_j;
  }
  const double nodes = static_cast<double>(world) / std::max(1, cluster.gpus_per_node);
  const double energy = avg_w * world * step + cluster.node_overhead_power.si() * nodes * step +
                        cluster.network_power_per_switch.si() * fabric_switches * step;
  rep.power_per_gpu = Watts(avg_w);
  rep.energy_per_step = Joules(energy);
  rep.tokens_per_joule = tokens / energy;
  rep.exposed_comm_energy_per_token = Joules(comm_only_j / tokens);

  // --- breakdowns on the critical stage ---
  rep.by_op = {{"gemm", Seconds(cs.kernels.gemm), Seconds(0)},
               {"attention", Seconds(cs.kernels.attention), Seconds(0)},
               {"elementwise", Seconds(cs.kernels.elementwise), Seconds(0)},
               {"loss", Seconds(cs.kernels.loss), Seconds(0)},
               {"framework_copy", Seconds(cs.kernels.copy), Seconds(0)},
               {"launch_overhead", Seconds(cs.kernels.launch), Seconds(0)},
               {"interference", Seconds(cs.interference), Seconds(0)},
               {"optimizer", Seconds(cs.optimizer), Seconds(0)}};
  for (ParallelDim d : {ParallelDim::kDp, ParallelDim::kTp, ParallelDim::kPp, ParallelDim::kCp, ParallelDim::kEp}) {
    rep.by_dimension.push_back(
        {ToString(d), Seconds(cs.dim_total[DimIndex(d)]), Seconds(std::min(cs.dim_exposed[DimIndex(d)], step))});
  }

  if (rep.memory_per_gpu.si() > capacity) {
    rep.feasible = false;
    rep.infeasible_reason = StrCat("memory: needs ", std::round(rep.memory_per_gpu.si() / 1e8) / 10.0, " GB of ",
                                   std::round(capacity / 1e8) / 10.0, " GB");
  }

  // --- the workload the simulator replays ---
  if (wl) {
    wl->config = c;
    wl->num_micro_batches = m;
    wl->virtual_stages = v;
    wl->schedule = c.schedule;
    wl->sharding = c.sharding;
    wl->prefetch_depth = c.prefetch;
    wl->reshard_after_forward = (c.sharding == ShardingMode::kZero3 || c.sharding == ShardingMode::kHsdp) &&
                                !(pp > 1 && stack.fsdp_pp_accumulate_unsharded);
    wl->comm_interference = interference;
    wl->tokens_per_step = job.TokensPerStep();
    wl->model_flops_per_step = Flops(model_flops);
    wl->hardware_flops_per_step = Flops(hw_flops);
    wl->power = power;
    wl->node_overhead_power = cluster.node_overhead_power;
    wl->world_size = world;
    wl->stages.clear();
    auto make = [](const UnitCost& u, const std::vector<WorkloadCollective>& coll, const std::string& name, int index,
                   int chunk) {
      LayerWork w;
      w.name = name;
      w.layer_index = index;
      w.chunk = chunk;
      w.forward_time = Seconds(u.fwd.Total());
      w.backward_time = Seconds(u.bwd.Total());
      w.recompute_time = Seconds(u.recompute_s);
      w.forward_matmul_time = Seconds(u.fwd.Matmul());
      w.backward_matmul_time = Seconds(u.bwd.Matmul());
      w.forward_flops = Flops(u.fwd_flops);
      w.backward_flops = Flops(u.bwd_flops);
      w.forward_bytes = Bytes(u.fwd_bytes);
      w.backward_bytes = Bytes(u.bwd_bytes);
      w.parameter_bytes = Bytes(2.0 * u.params);
      w.collectives = coll;
      return w;
    };
    int layer_index = 0;
    for (int s = 0; s < pp; ++s) {
      StageWork sw;
      sw.stage = s;
      const int L = stage_layers[s];
      if (s == 0) sw.layers.push_back(make(emb, timed_emb, "embedding", -1, 0));
      for (int i = 0; i < L; ++i, ++layer_index) {
        const int chunk = v > 1 ? i / std::max(1, L / v) : 0;
        sw.layers.push_back(make(layer, timed_layer, StrCat("layer ", layer_index), layer_index, chunk));
      }
      if (s == pp - 1) sw.layers.push_back(make(head, timed_head, "lm_head", -1, v - 1));
      sw.pp_send_bytes = pp > 1 ? pp_send.size : Bytes(0);
      sw.pp_send_time = pp > 1 ? pp_send.duration : Seconds(0);
      sw.optimizer_time = Seconds(stages[s].optimizer);
      sw.memory_peak = Bytes(stages[s].memory_bytes);
      wl->stages.push_back(std::move(sw));
    }
  }
  return rep;
}

}  // namespace parasim
