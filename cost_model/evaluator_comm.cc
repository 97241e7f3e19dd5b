#include "cost_model/evaluator_comm.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>

#include "core/check.h"
#include "cost_model/collective_cost.h"
#include "cost_model/comm_plan.h"
#include "cost_model/eval_memo.h"
#include "cost_model/kernel_time.h"
#include "cost_model/pipeline_boundary.h"
#include "topology/group_path.h"

namespace parasim {

namespace {

// NCCL never takes all of HBM from a kernel beside it (its own copies are
// HBM-bound): caps the memory-bound slowdown at 10x for absurd inputs.
constexpr double kMaxNcclHbmShare = 0.9;

// Group paths, resolved by topology/group_path.h and reused: a planner asks
// for many configs that share their degrees and order (they differ in
// micro-batch, sharding, recompute), so each thread keeps a memo keyed by the
// evaluator instance and the group's inputs (eval_memo.h).
// Path: evaluator, degrees, dim and sub-group, order. Time: + op, size.
using PathKey = WordKey<8>;
using TimeKey = WordKey<10>;

class PathCache {
 public:
  PathCache(const ClusterSpec& cluster, const ParallelConfig& config, uint64_t evaluator_id)
      : cluster_(cluster), config_(config), id_(evaluator_id), memo_(config.order.size() <= 23) {}
  const GroupPath& Get(ParallelDim dim, SubGroup sub) { return Find(dim, sub).path; }

  // Collective time on the group (dim, sub), memoized per thread like the paths.
  double Time(ParallelDim dim, SubGroup sub, CollectiveOp op, Bytes size, const NcclFeatures& features) {
    const Local& e = Find(dim, sub);
    if (!memo_) return EstimateCollective(op, size, e.path, features).time.si();
    thread_local SlotMemo<TimeKey, double, 1024> times;
    TimeKey key;
    std::memcpy(key.w.data(), e.key.w.data(), sizeof e.key.w);
    key.w[8] = static_cast<uint64_t>(op);
    key.w[9] = DoubleBits(size.si());
    return times.Get(key, [&] { return EstimateCollective(op, size, e.path, features).time.si(); });
  }

 private:
  struct Local {
    ParallelDim dim = ParallelDim::kDp;
    SubGroup sub;
    GroupPath path;
    PathKey key;
  };
  const Local& Find(ParallelDim dim, SubGroup sub) {
    for (int i = 0; i < n_; ++i) {
      if (local_[i].dim == dim && local_[i].sub.size == sub.size && local_[i].sub.stride == sub.stride &&
          local_[i].sub.ends == sub.ends)
        return local_[i];
    }
    PARASIM_CHECK(n_ < static_cast<int>(local_.size()), "too many distinct groups");
    Local& e = local_[n_];
    e.dim = dim;
    e.sub = sub;
    const ParallelConfig& c = dim == ParallelDim::kDp && config_.cp > 1 ? Merged() : config_;
    if (memo_) {
      e.key.w = {id_, Pack(c.dp, c.tp), Pack(c.pp, c.cp), Pack(c.ep, static_cast<int>(dim)),
                 Pack(sub.size, sub.stride | (sub.ends ? 1 << 30 : 0))};
      PackOrder(c.order, &e.key.w[5]);
      thread_local SlotMemo<PathKey, GroupPath, 256> paths;
      e.path = paths.Get(e.key, [&] { return ResolveGroupPath(cluster_, c, dim, sub); });
    } else {
      e.path = ResolveGroupPath(cluster_, c, dim, sub);
    }
    ++n_;
    return e;
  }

  const ParallelConfig& Merged() {
    if (!merged_ready_) {
      merged_ = WeightGroupConfig(config_);
      merged_ready_ = true;
    }
    return merged_;
  }
  const ClusterSpec& cluster_;
  const ParallelConfig& config_;
  uint64_t id_;
  bool memo_;   // the order fits a memo key
  std::array<Local, 12> local_{};
  int n_ = 0;
  ParallelConfig merged_;
  bool merged_ready_ = false;
};

// What the collectives and their times depend on: group shapes and order
// (paths), sizes (mbs, sp, tp/ep-split parameters), sharding.
// Keyed by the fabric id and the micro-batch count (the batch sets it).
using CommKey = WordKey<9>;

// A unit's collectives with their times: what the overlap fold needs.
struct TimedCollective {
  double time = 0;   // one issue
  double bus_bytes = 0;  // one issue: size x nccl-tests bus factor
  int count = 1;
  uint8_t dim = 0;     // ParallelDim
  uint8_t phase = 0;   // CommPhase
  bool every_micro_batch = true;
  bool blocking = true;  // false: runs beside compute (the CP ring's steps, the column-parallel backward's)
  uint8_t op = 0;        // CollectiveOp
};

// `c` taking `t` seconds per issue over a group of `ranks`.
TimedCollective Timed(const WorkloadCollective& c, double t, int ranks) {
  return TimedCollective{t,
                         c.size.si() * BusBandwidthFactor(c.op, ranks),
                         c.count,
                         static_cast<uint8_t>(c.dim),
                         static_cast<uint8_t>(c.phase),
                         c.every_micro_batch,
                         c.blocking,
                         static_cast<uint8_t>(c.op)};
}

template <int N>
struct TimedList {
  std::array<TimedCollective, N> items{};
  int n = 0;
};
struct CommTimes {
  TimedList<24> layer;       // TP, CP, EP and dense + expert sharding (16 at most today)
  UnitComm emb, head;        // sharding and vocab-parallel TP, folded (no recompute, no attention)
  double p2p = 0;            // one pipeline send (0 without pp)
};

// Adds one timed collective to a unit's overlap buckets.
// `cp`: the K/V ring's steps (CpRingSteps), one attention block each.
// `attention_again`: backward re-runs the attention core (RecomputesAttention).
// `interference`: the config's slowdown factor of kernels beside an NCCL kernel.
void FoldOne(const TimedCollective& tc, double attn_fwd_s, double attn_bwd_s, int cp, RecomputeMode recompute,
             bool attention_again, double interference, UnitComm& u) {
  const ParallelDim dim = static_cast<ParallelDim>(tc.dim);
  const CommPhase phase = static_cast<CommPhase>(tc.phase);
  const double t = tc.time;
  const double total = t * tc.count;
  // Re-run in backward: full recompute re-runs every forward collective,
  // attention-only selective the CP ones (they live in the attention core).
  const bool again = phase == CommPhase::kForward &&
                     (recompute == RecomputeMode::kFull || (attention_again && dim == ParallelDim::kCp));
  auto& dim_bucket = tc.every_micro_batch ? u.dim_total_mb : u.dim_total_step;
  dim_bucket[DimIndex(dim)] += total;
  if (dim == ParallelDim::kCp && !tc.blocking) {
    // Ring attention: each step's K,V transfer hides under one block of
    // attention, whose kernel runs slower while the step's SendRecv kernel
    // holds its SMs (covered block seconds take `interference` each).
    const double block = (phase == CommPhase::kForward ? attn_fwd_s : attn_bwd_s) / cp;
    const double covered = tc.count * std::min(block, t / interference);
    const double slowed = (interference - 1.0) * covered;
    const double exposed = tc.count * std::max(0.0, t - block * interference);
    const bool fwd = phase == CommPhase::kForward;
    (fwd ? u.cp_exposed_fwd : u.cp_exposed_bwd) += exposed;
    (fwd ? u.cp_covered_fwd : u.cp_covered_bwd) += covered;
    (fwd ? u.cp_slowed_fwd : u.cp_slowed_bwd) += slowed;
    u.cp_total += total;
    if (again) {
      // The recomputed attention runs the ring again beside its blocks (same
      // blocks, same exposure), before the backward's own.
      u.cp_exposed_bwd += exposed;
      u.cp_covered_bwd += covered;
      u.cp_slowed_bwd += slowed;
      u.cp_total += total;
      dim_bucket[DimIndex(dim)] += total;
    }
    return;
  }
  if (dim == ParallelDim::kTp && (phase == CommPhase::kForward || phase == CommPhase::kBackward)) {
    (phase == CommPhase::kForward ? u.tp_fwd : u.tp_bwd) += total;
    if (phase == CommPhase::kForward && recompute == RecomputeMode::kFull) u.tp_bwd += total;
    const CollectiveOp op = static_cast<CollectiveOp>(tc.op);
    if (phase == CommPhase::kBackward && (op == CollectiveOp::kReduceScatter || op == CollectiveOp::kAllReduce))
      u.tp_bwd_reductions += total;
  }
  switch (phase) {
    case CommPhase::kForward:
      u.fwd_blocking += total;
      // Recomputation re-runs the forward's blocking collectives.
      if (again) {
        u.bwd_blocking += total;
        dim_bucket[DimIndex(dim)] += total;
      }
      break;
    case CommPhase::kBackward:
      u.bwd_blocking += total;
      break;
    case CommPhase::kForwardPrefetch:
      (tc.every_micro_batch ? u.gather_mb : u.gather_step) += total;
      break;
    case CommPhase::kBackwardPrefetch:
      u.bwd_gather_mb += total;
      break;
    case CommPhase::kGradientReduce:
      (tc.every_micro_batch ? u.reduce_mb : u.reduce_step) += total;
      break;
    case CommPhase::kStepEnd:
      u.step_end += total;
      u.step_end_dim[DimIndex(dim)] += total;
      break;
  }
  if (phase == CommPhase::kForwardPrefetch || phase == CommPhase::kBackwardPrefetch ||
      phase == CommPhase::kGradientReduce) {
    u.overlap_bus_bytes += tc.bus_bytes * tc.count;
    u.overlap_time += total;
  }
}

// Folds a unit's timed collectives into what the overlap rules need.
template <int N>
UnitComm FoldComm(const TimedList<N>& list, double attn_fwd_s, double attn_bwd_s, int cp, RecomputeMode recompute,
                  bool attention_again, double interference) {
  UnitComm u;
  for (int i = 0; i < list.n; ++i)
    FoldOne(list.items[i], attn_fwd_s, attn_bwd_s, cp, recompute, attention_again, interference, u);
  return u;
}

// The gathers' and reductions' bus bytes and time, what OverlapInterference
// reads: the same sums, in the same order, as FoldOne's (which adds them for
// these phases only and never for the CP ring's steps), without folding the
// layer a second time. Neither sum depends on the interference factor.
template <int N>
void OverlapSums(const TimedList<N>& list, double& bus_bytes, double& time) {
  bus_bytes = 0;
  time = 0;
  for (int i = 0; i < list.n; ++i) {
    const TimedCollective& tc = list.items[i];
    const CommPhase phase = static_cast<CommPhase>(tc.phase);
    if (static_cast<ParallelDim>(tc.dim) == ParallelDim::kCp && !tc.blocking) continue;
    if (phase != CommPhase::kForwardPrefetch && phase != CommPhase::kBackwardPrefetch &&
        phase != CommPhase::kGradientReduce)
      continue;
    bus_bytes += tc.bus_bytes * tc.count;
    time += tc.time * tc.count;
  }
}

// Times each collective of `list` on its placed group; records them when asked.
template <int N>
void TimeList(const std::vector<WorkloadCollective>& list, PathCache& paths, const NcclFeatures& features,
              TimedList<N>& out, std::vector<WorkloadCollective>* record) {
  PARASIM_CHECK(list.size() <= out.items.size(), "too many collectives in one unit");
  out.n = 0;
  for (const WorkloadCollective& c : list) {
    const double t = paths.Time(c.dim, c.sub, c.op, c.size, features);
    if (record) {
      record->push_back(c);
      record->back().duration = Seconds(t);
    }
    out.items[out.n++] = Timed(c, t, paths.Get(c.dim, c.sub).ranks);
  }
}

// Vocab-parallel TP collectives of the embedding and LM head activations
// (embedding output reduce; head input gather and its gradient reduction).
void AddVocabParallelCollectives(const ParallelConfig& c, double activation_bytes,
                                 std::vector<WorkloadCollective>& emb_list,
                                 std::vector<WorkloadCollective>& head_list) {
  WorkloadCollective x;
  x.dim = ParallelDim::kTp;
  x.size = Bytes(activation_bytes);
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

// NeMo's distributed Adam (stack.embedding_grads_after_backward): the
// embedding's and LM head's gradients sit in its last bucket beside the
// weights whose overlapped sync it disables (the tied embedding at pp > 1,
// the sequence-parallel ones), so their reduction runs, blocking, after the
// last backward (_finish_bucket_grad_sync).
void DeferGradientReductions(std::vector<WorkloadCollective>& list) {
  for (WorkloadCollective& w : list) {
    if (w.phase != CommPhase::kGradientReduce || w.every_micro_batch) continue;   // once-per-step buckets only
    w.phase = CommPhase::kStepEnd;
    w.blocking = true;
  }
}

// The tied embedding's gradient all-reduce (comm_plan.h) on the first stage's
// embedding and the last stage's LM head: each end stage waits for it.
template <int N>
void AddTiedEmbedding(const EvaluatorData& d, const ParallelConfig& c, const Units& u, PathCache& paths,
                      TimedList<N>& emb, TimedList<N>& head, CommRecord* rec) {
  WorkloadCollective w;
  if (!d.model.tied_embeddings || !TiedEmbeddingCollective(c, d.stack, u.emb.params, &w)) return;
  const double t = EstimateCollective(w.op, w.size, GroupEndsPath(paths.Get(ParallelDim::kPp, {})), d.features)
                       .time.si();
  const TimedCollective tc = Timed(w, t, 2);   // the first-last pair
  for (TimedList<N>* list : {&emb, &head}) {
    PARASIM_CHECK(list->n < static_cast<int>(list->items.size()), "too many collectives in one unit");
    list->items[list->n++] = tc;
  }
  if (!rec) return;
  w.duration = Seconds(t);
  rec->emb.push_back(w);
  rec->head.push_back(w);
}

// A layer kind the model has with a dense (moe = false) or an MoE MLP.
int KindWithMlp(const EvaluatorData& d, bool moe) {
  for (int k = 0; k < kNumLayerKinds; ++k) {
    if (((k & kLayerKindMoe) != 0) == moe && d.lcm.kind_layers[k] > 0) return k;
  }
  return 0;
}

// What the layer's collectives depend on beside the config.
CommPlanInputs LayerPlanInputs(const EvaluatorData& d, const ConfigShape& cs, const Units& u) {
  CommPlanInputs ci;
  ci.tokens = cs.T;
  ci.hidden = d.lcm.h;
  // K/V as CP moves them: a·d wide where the stack repeats them to every head
  // before attention (torchtitan: CP hooks the SDPA call, after repeat_kv).
  ci.kv_width = d.stack.repeats_kv_heads ? d.lcm.ad : d.lcm.gd;
  ci.query_width = d.lcm.ad;
  ci.layer_dense_params = u.layer.dense_params;
  ci.layer_expert_params = u.layer.params - u.layer.dense_params;
  ci.experts_per_token = d.model.IsMoe() ? d.lcm.top_k : 0;
  ci.moe_layer_fraction =
      d.model.IsMoe() ? static_cast<double>(d.model.MoeLayerCount()) / static_cast<double>(d.model.num_layers) : 1.0;
  ci.num_micro_batches = cs.m;
  if (d.job.precision == Precision::kFp8 && d.stack.fp8_tp_gathers) ci.tp_gather_bytes = 1.0;
  return ci;
}

// A model mixing dense and MoE layers: each MLP kind's own layer collectives
// (its sharding sizes; the all-to-all only on MoE layers). [0] dense, [1] MoE.
using MlpKindLists = std::array<TimedList<24>, 2>;
MlpKindLists TimeMlpKindCollectives(const EvaluatorData& d, const ParallelConfig& c, const ConfigShape& cs,
                                    const Units& u) {
  PathCache paths(d.cluster, c, d.fabric_id);
  MlpKindLists out;
  for (int moe = 0; moe < 2; ++moe) {
    const UnitCost& k = u.kinds[KindWithMlp(d, moe == 1)];
    CommPlanInputs ck = LayerPlanInputs(d, cs, u);
    ck.layer_dense_params = k.dense_params;
    ck.layer_expert_params = k.params - k.dense_params;
    ck.experts_per_token = moe == 1 ? d.lcm.top_k : 0;
    ck.moe_layer_fraction = 1.0;
    TimeList(BuildCommPlan(c, d.stack, ck).layer, paths, d.features, out[moe], nullptr);
  }
  return out;
}

CommTimes TimeCollectives(const EvaluatorData& d, const ParallelConfig& c, const ConfigShape& cs, const Units& u,
                          CommRecord* rec) {
  PathCache paths(d.cluster, c, d.fabric_id);
  const CommPlan plan = BuildCommPlan(c, d.stack, LayerPlanInputs(d, cs, u));
  CommTimes out;
  TimeList(plan.layer, paths, d.features, out.layer, rec ? &rec->layer : nullptr);
  // Embedding and LM head: their own sharding units, plus vocab-parallel TP.
  std::vector<WorkloadCollective> emb_list =
      ShardingCollectives(c, d.stack, cs.tied_single_copy ? 0.0 : u.emb.params, cs.m, "dp_embedding");
  std::vector<WorkloadCollective> head_list = ShardingCollectives(c, d.stack, u.head.params, cs.m, "dp_lm_head");
  if (d.stack.embedding_grads_after_backward && (c.pp > 1 || c.sequence_parallel)) {
    for (auto* list : {&emb_list, &head_list}) DeferGradientReductions(*list);
  }
  if (c.tp > 1) AddVocabParallelCollectives(c, cs.T * d.lcm.h * d.stack.activation_bytes, emb_list, head_list);
  TimedList<12> emb_timed, head_timed;
  TimeList(emb_list, paths, d.features, emb_timed, rec ? &rec->emb : nullptr);
  TimeList(head_list, paths, d.features, head_timed, rec ? &rec->head : nullptr);
  AddTiedEmbedding(d, c, u, paths, emb_timed, head_timed, rec);
  out.emb = FoldComm(emb_timed, 0, 0, c.CpRingSize(), RecomputeMode::kNone, false, 1.0);
  out.head = FoldComm(head_timed, 0, 0, c.CpRingSize(), RecomputeMode::kNone, false, 1.0);
  if (rec) rec->pp_send = plan.pp_send;
  if (plan.has_pp_send) {
    // Shape messages before each transfer, tp all-gathers of a partitioning
    // engine, as many of each as the engine runs in turn (pipeline_boundary.h).
    PipelineBoundaryParts parts;
    parts.send = paths.Time(ParallelDim::kPp, {}, plan.pp_send.op, plan.pp_send.size, d.features);
    if (plan.pp_meta_count > 0) {
      parts.meta_count = plan.pp_meta_count;
      parts.meta = paths.Time(ParallelDim::kPp, {}, plan.pp_meta.op, plan.pp_meta.size, d.features);
    }
    if (plan.has_pp_gather)
      parts.gather = paths.Time(ParallelDim::kTp, {}, plan.pp_gather.op, plan.pp_gather.size, d.features);
    out.p2p = PipelineBoundaryTime(d.stack, parts);
    if (rec) rec->pp_send.duration = Seconds(out.p2p);
  }
  return out;
}

// Slowdown of compute while a gather or reduction runs beside it (DESIGN.md
// §4: NCCL takes SMs and memory bandwidth). Matmul-bound kernels lose the
// SMs NCCL occupies; memory-bound kernels lose the HBM bandwidth NCCL's data
// path uses (passes x bus bytes/s: FIFO written by the peer or NIC, read and
// copied out by the NCCL kernel); launch gaps lose nothing. Weighted by the
// layer's time in each kind of kernel. One factor per config, shared with
// the simulator through the workload.
double OverlapInterference(const EvaluatorData& d, const UnitCost& layer, const UnitComm& comm) {
  if (comm.overlap_time <= 0) return 1.0 + d.sm_share;
  KernelSeconds k = layer.fwd;
  k += layer.bwd;
  const double total = k.Total();
  if (total <= 0) return 1.0 + d.sm_share;
  const double nccl_hbm_Bps = d.stack.nccl_memory_passes * comm.overlap_bus_bytes / comm.overlap_time;
  const double hbm_share = std::min(kMaxNcclHbmShare, nccl_hbm_Bps / d.lcm.rates.hbm_Bps);
  const double memory_bound = k.elementwise + k.loss + k.copy;
  return 1.0 + (k.Matmul() * d.sm_share + memory_bound * hbm_share / (1.0 - hbm_share)) / total;
}

// TP collectives overlapped with their adjacent GEMMs (stack.tp_comm_overlap,
// sequence parallelism only, as Megatron and torchtitan require): the hidden
// part is at most the phase's GEMM time, and the GEMMs run slower by
// tp_overlap_gemm_slowdown while the communication takes SMs, which the unit
// pays as exposed TP time. A stack whose overlap leaves the backward's own
// reductions out (tp_overlap_backward_reductions false) hides only the rest
// of the backward's TP time. The recorded TP collectives shrink to their
// exposed share so the simulator schedules what tier A charges.
// Seconds of the local reductions the overlapped matmul -> reduce-scatters
// end with (stack.tp_overlap_rs_local_reduce), forward and backward: per
// reduce-scatter of a full partial output of `size` bytes, a read of it and a
// write of the rank's 1/tp shard. The overlapped ones: the forward's (again in
// backward under full recompute) and the backward's own where the overlap
// covers them (tp_overlap_backward_reductions).
template <int N>
std::array<double, 2> LocalReduceSeconds(const EvaluatorData& d, const ParallelConfig& c, const TimedList<N>& list) {
  std::array<double, 2> t{};
  const SoftwareStack& s = d.stack;
  if (!s.tp_overlap_rs_local_reduce || s.tp_comm_overlap <= 0 || c.tp <= 1 || !c.sequence_parallel) return t;
  for (int i = 0; i < list.n; ++i) {
    const TimedCollective& tc = list.items[i];
    if (static_cast<ParallelDim>(tc.dim) != ParallelDim::kTp ||
        static_cast<CollectiveOp>(tc.op) != CollectiveOp::kReduceScatter)
      continue;
    const double size = tc.bus_bytes / BusBandwidthFactor(CollectiveOp::kReduceScatter, c.tp);
    const double sec = tc.count * MemorySeconds(d.lcm.rates, size * (1.0 + 1.0 / c.tp));
    const CommPhase phase = static_cast<CommPhase>(tc.phase);
    if (phase == CommPhase::kForward) {
      t[0] += sec;
      if (c.recompute == RecomputeMode::kFull) t[1] += sec;
    } else if (phase == CommPhase::kBackward && s.tp_overlap_backward_reductions) {
      t[1] += sec;
    }
  }
  return t;
}

void HideTpUnderGemms(const SoftwareStack& s, const ParallelConfig& c, const UnitCost& layer, UnitComm& u,
                      CommRecord* record, std::array<double, 2> local_reduce = {}) {
  if (s.tp_comm_overlap <= 0 || c.tp <= 1 || !c.sequence_parallel) return;
  // The local reductions are charged as TP time the overlap did not hide.
  auto exposed_share = [&](double tp_total, double gemm_s, double reduce_s, double& blocking) {
    if (tp_total <= 0) return 1.0;
    const double hidden = std::min(s.tp_comm_overlap * tp_total, gemm_s);
    const double net = hidden - s.tp_overlap_gemm_slowdown * gemm_s - reduce_s;
    blocking -= net;
    u.tp_hidden += net;
    return (tp_total - net) / tp_total;
  };
  const bool bwd_reductions_block = !s.tp_overlap_backward_reductions;
  const double fwd = exposed_share(u.tp_fwd, layer.fwd.gemm, local_reduce[0], u.fwd_blocking);
  const double bwd = exposed_share(u.tp_bwd - (bwd_reductions_block ? u.tp_bwd_reductions : 0.0), layer.bwd.gemm,
                                   local_reduce[1], u.bwd_blocking);
  if (!record) return;
  for (WorkloadCollective& w : record->layer) {
    if (w.dim != ParallelDim::kTp) continue;
    const bool blocks = bwd_reductions_block && w.phase == CommPhase::kBackward &&
                        (w.op == CollectiveOp::kReduceScatter || w.op == CollectiveOp::kAllReduce);
    const double share =
        blocks ? 1.0 : w.phase == CommPhase::kForward ? fwd : w.phase == CommPhase::kBackward ? bwd : 1.0;
    w.hidden = Seconds(w.duration.si() * (1.0 - share));
    w.duration = Seconds(w.duration.si() * share);
  }
}

// The column-parallel linears of a layer (QKV, then fc1 unless the MLP is
// the experts'): their dgrad and wgrad GEMM seconds, what the overlapped
// backward collectives run beside (comm_plan.cc, tp_backward_overlap).
struct ColumnGemms {
  std::array<double, 2> dgrad{}, wgrad{};
};
ColumnGemms ColumnParallelGemms(const EvaluatorData& d, const ParallelConfig& c, double tokens, bool moe) {
  const LayerCostModel& m = d.lcm;
  ColumnGemms g;
  const double qkv = m.qkv_width / c.tp;
  const double fc1 = (m.swiglu ? 2.0 : 1.0) * m.ffn / c.tp;
  g.dgrad[0] = GemmSeconds(m.rates, tokens, m.h, qkv, GemmPass::kDgrad);   // dX = dY·Wᵀ (LinearSeconds)
  g.wgrad[0] = GemmSeconds(m.rates, m.h, qkv, tokens, GemmPass::kWgrad);   // dW = Xᵀ·dY
  if (!moe) {
    g.dgrad[1] = GemmSeconds(m.rates, tokens, m.h, fc1, GemmPass::kDgrad);
    g.wgrad[1] = GemmSeconds(m.rates, m.h, fc1, tokens, GemmPass::kWgrad);
  }
  return g;
}

// Seconds `count` issues of a column-parallel backward collective of `t`
// each add to the backward when each runs beside its GEMM (the SP input's
// re-gather beside the dgrad, the dgrad's reduction beside the wgrad). NCCL's
// kernel holds `share` of the SMs, so the GEMM runs at 1 − share of its rate
// while both run: it is covered for t seconds and loses share·t of them when
// t·(1 − share) ≤ g; past that the GEMM is done and t − g is exposed.
double BesideGemmSeconds(const ColumnGemms& g, CollectiveOp op, double t, int count, double share) {
  const auto& gemm = op == CollectiveOp::kAllGather ? g.dgrad : g.wgrad;
  double total = 0;
  for (int i = 0; i < count; ++i) total += std::max(share * t, t - gemm[std::min(i, 1)]);
  return total;
}

// Megatron's / Transformer Engine's column-parallel backward
// (stack.tp_backward_overlap): the non-blocking TP backward collectives were
// folded as blocking; what their GEMMs hide comes off the unit's blocking
// time and is reported as hidden TP time. The recorded collectives shrink to
// their exposed share so the simulator schedules what tier A charges. Left
// to HideTpUnderGemms where userbuffers overlap every SP TP collective.
template <int N>
void HideColumnBackwardBesideGemms(const EvaluatorData& d, const ParallelConfig& c, double tokens, bool moe,
                                   const TimedList<N>& list, UnitComm& u, CommRecord* record) {
  const SoftwareStack& s = d.stack;
  if (!s.tp_backward_overlap || c.tp <= 1) return;
  if (s.tp_comm_overlap > 0 && c.sequence_parallel) return;
  const ColumnGemms g = ColumnParallelGemms(d, c, tokens, moe);
  const double share = std::min(d.sm_share, 1.0);
  auto beside = [](const auto& x) {
    return static_cast<ParallelDim>(x.dim) == ParallelDim::kTp &&
           static_cast<CommPhase>(x.phase) == CommPhase::kBackward && !x.blocking;
  };
  for (int i = 0; i < list.n; ++i) {
    const TimedCollective& tc = list.items[i];
    if (!beside(tc)) continue;
    const double hidden =
        tc.time * tc.count - BesideGemmSeconds(g, static_cast<CollectiveOp>(tc.op), tc.time, tc.count, share);
    u.bwd_blocking -= hidden;
    u.tp_hidden += hidden;
  }
  if (!record) return;
  for (WorkloadCollective& w : record->layer) {
    const double t = w.duration.si();
    if (!beside(w) || t <= 0) continue;
    w.duration = Seconds(BesideGemmSeconds(g, w.op, t, w.count, share) / w.count);
    w.hidden = Seconds(t - w.duration.si());
  }
}

CommKey MakeCommKey(const EvaluatorData& d, const ParallelConfig& c, const ConfigShape& cs, bool* order_fits) {
  CommKey key{{d.fabric_id, Pack(c.dp, c.tp), Pack(c.pp, c.cp), Pack(c.ep, c.micro_batch),
               Pack(c.hsdp_group, static_cast<int>(c.sharding) | (c.sequence_parallel ? 0x100 : 0) |
                                      static_cast<int>(c.cp_comm) << 9 | c.cp_a2a_size << 11),
               0, 0, 0,
               static_cast<uint64_t>(cs.m)}};
  *order_fits = PackOrder(c.order, &key.w[5]);
  return key;
}

// The MLP kinds' collectives timed (memoized like CollectiveTimes).
const MlpKindLists& MlpKindTimes(const EvaluatorData& d, const ParallelConfig& c, const ConfigShape& cs,
                                 const Units& u) {
  bool order_fits = false;
  const CommKey key = MakeCommKey(d, c, cs, &order_fits);
  if (!order_fits) {
    thread_local MlpKindLists direct;
    direct = TimeMlpKindCollectives(d, c, cs, u);
    return direct;
  }
  thread_local SlotMemo<CommKey, MlpKindLists, 128> memo;
  return memo.Get(key, [&] { return TimeMlpKindCollectives(d, c, cs, u); });
}

// The config's collectives timed (memoized unless recorded).
const CommTimes& CollectiveTimes(const EvaluatorData& d, const ParallelConfig& c, const ConfigShape& cs,
                                 const Units& u, CommRecord* record) {
  bool order_fits = false;
  const CommKey key = MakeCommKey(d, c, cs, &order_fits);
  if (record || !order_fits) {
    thread_local CommTimes direct;   // (thread_local: no zeroing per call)
    direct = TimeCollectives(d, c, cs, u, record);
    return direct;
  }
  thread_local SlotMemo<CommKey, CommTimes, 512> memo;
  return memo.Get(key, [&] { return TimeCollectives(d, c, cs, u, nullptr); });
}

}  // namespace

void PlaceCommunication(const EvaluatorData& d, const ParallelConfig& c, const ConfigShape& cs, const Units& u) {
  CollectiveTimes(d, c, cs, u, nullptr);
}

namespace {

StageStepEnd TimeStageStepEndDirect(const EvaluatorData& d, const ParallelConfig& c, double layers,
                                    double moe_layers, bool last, std::vector<WorkloadCollective>* record) {
  StageStepEnd out;
  auto add = [&](const WorkloadCollective& w, double t) {
    out.seconds += t;
    out.by_dim[DimIndex(w.dim)] += t;
    if (!record) return;
    record->push_back(w);
    record->back().duration = Seconds(t);
  };
  WorkloadCollective w;
  if (TpReplicatedGradCollective(c, d.stack, TpReplicatedGradElements(d.model, c, layers, moe_layers, last), &w)) {
    PathCache paths(d.cluster, c, d.fabric_id);
    add(w, paths.Time(ParallelDim::kTp, {}, w.op, w.size, d.features));
  }
  bool world = false;
  if (GradNormCollective(c, d.stack, &w, &world)) {
    // Timed as a data-parallel group of a config whose dp is every rank:
    // the whole of it, or its first tp·pp consecutive ranks for the
    // model-parallel group (as many members; the real group's tp ranks sit
    // together and its pp ranks apart, so it may cross more nodes: one fp32,
    // latency-bound, DECISIONS.md).
    ParallelConfig all = c;
    all.dp = c.WorldSize();
    all.tp = all.pp = all.cp = all.ep = 1;
    all.hsdp_group = 0;
    PathCache paths(d.cluster, all, d.fabric_id);
    add(w, paths.Time(ParallelDim::kDp, world ? SubGroup{} : SubGroup{c.tp * c.pp, 1}, w.op, w.size, d.features));
  }
  return out;
}

}  // namespace

StageStepEnd TimeStageStepEnd(const EvaluatorData& d, const ParallelConfig& c, double layers, double moe_layers,
                              bool last, std::vector<WorkloadCollective>* record) {
  if (d.stack.sp_grad_bytes <= 0 && !d.stack.grad_norm_allreduce) return StageStepEnd{};
  // What they depend on beside the evaluator: the degrees, order, sharding
  // (the grad norm's group), sp, and the stage's layers (memoized per thread
  // unless recorded, as the collectives' times).
  WordKey<8> key{{d.fabric_id, Pack(c.dp, c.tp), Pack(c.pp, c.cp),
                  Pack(c.ep, static_cast<int>(c.sharding) | (c.sequence_parallel ? 0x100 : 0) | (last ? 0x200 : 0)),
                  Pack(static_cast<int>(layers), static_cast<int>(moe_layers)), 0, 0, 0}};
  if (record || layers != static_cast<int>(layers) || moe_layers != static_cast<int>(moe_layers) ||
      !PackOrder(c.order, &key.w[5]))
    return TimeStageStepEndDirect(d, c, layers, moe_layers, last, record);
  thread_local SlotMemo<WordKey<8>, StageStepEnd, 1024> memo;
  return memo.Get(key, [&] { return TimeStageStepEndDirect(d, c, layers, moe_layers, last, nullptr); });
}

double StageMoeLayers(const EvaluatorData& d, const StageKinds& kinds, int layers) {
  if (!d.model.IsMoe()) return 0;
  if (!d.lcm.several_kinds) return layers;   // every layer routes
  int moe = 0;
  for (int k = 0; k < kNumLayerKinds; ++k) {
    if ((k & kLayerKindMoe) != 0) moe += kinds[k];
  }
  return moe;
}

TimedComm TimeCommunication(const EvaluatorData& d, const ParallelConfig& c, const ConfigShape& cs, const Units& u,
                            CommRecord* record) {
  const CommTimes* timed = &CollectiveTimes(d, c, cs, u, record);
  TimedComm out;
  const bool attention_again = RecomputesAttention(c.recompute, d.stack);
  const double own_bwd_attention = OwnBackwardAttention(u.layer);
  // The factor reads the gathers and reductions only; the ring's blocks need it.
  UnitComm dp_only;
  OverlapSums(timed->layer, dp_only.overlap_bus_bytes, dp_only.overlap_time);
  out.interference = OverlapInterference(d, u.layer, dp_only);
  out.layer = FoldComm(timed->layer, u.layer.fwd.attention, own_bwd_attention, CpRingSteps(c, d.stack), c.recompute,
                       attention_again, out.interference);
  HideTpUnderGemms(d.stack, c, u.layer, out.layer, record, LocalReduceSeconds(d, c, timed->layer));
  HideColumnBackwardBesideGemms(d, c, cs.T, d.model.IsMoe(), timed->layer, out.layer, record);
  out.emb = timed->emb;
  out.head = timed->head;
  out.p2p = timed->p2p;
  if (!u.several_kinds) return out;
  // Each layer kind's communication (valid until the next call on this thread).
  thread_local std::array<UnitComm, kNumLayerKinds> kinds;
  const MlpKindLists* mlp = d.model.MixesLayerKinds() ? &MlpKindTimes(d, c, cs, u) : nullptr;
  for (int k = 0; k < kNumLayerKinds; ++k) {
    if (d.lcm.kind_layers[k] <= 0) continue;
    const UnitCost& uk = u.kinds[k];
    const TimedList<24>& list = mlp ? (*mlp)[(k & kLayerKindMoe) != 0 ? 1 : 0] : timed->layer;
    kinds[k] = FoldComm(list, uk.fwd.attention, OwnBackwardAttention(uk), CpRingSteps(c, d.stack),
                        c.recompute, attention_again, out.interference);
    HideTpUnderGemms(d.stack, c, uk, kinds[k], nullptr, LocalReduceSeconds(d, c, list));   // the record follows the mean layer
    HideColumnBackwardBesideGemms(d, c, cs.T, (k & kLayerKindMoe) != 0, list, kinds[k], nullptr);
  }
  out.kinds = &kinds;
  return out;
}

}  // namespace parasim
