#include "simulator/step_builder.h"

#include <algorithm>
#include <string>

#include "core/check.h"
#include "core/error.h"
#include "cost_model/interleaved_chunks.h"
#include "simulator/pipeline_schedule.h"

namespace parasim::simulator {

int RankStreams::For(ParallelDim dim) const {
  switch (dim) {
    case ParallelDim::kTp: return tp;
    case ParallelDim::kCp: return cp;
    case ParallelDim::kEp: return ep;
    case ParallelDim::kDp: return dp;
    case ParallelDim::kPp: return pp;
  }
  return dp;
}

namespace {

// What one unit (layer, embedding, LM head) issues, sorted by role.
struct UnitPlan {
  const LayerWork* work = nullptr;
  std::vector<const WorkloadCollective*> fwd_blocking;   // one entry per issue (count expanded)
  std::vector<const WorkloadCollective*> bwd_blocking;
  const WorkloadCollective* cp_fwd = nullptr;
  const WorkloadCollective* cp_bwd = nullptr;
  const WorkloadCollective* cp_recompute = nullptr;      // the forward's ring again, before the backward's
  int recompute_blocking = 0;                            // bwd_blocking's leading recomputed-forward issues
  std::vector<const WorkloadCollective*> gathers;        // forward prefetch
  std::vector<const WorkloadCollective*> bwd_gathers;    // zero3 / hsdp re-gather
  std::vector<const WorkloadCollective*> reduces;        // after the unit's backward
  std::vector<const WorkloadCollective*> step_end;
};

// `attention_again`: recompute=selective re-runs the attention core with its
// CP collectives (StepWorkload::selective_reruns_attention).
UnitPlan PlanUnit(const LayerWork& w, RecomputeMode recompute, bool attention_again) {
  UnitPlan u;
  u.work = &w;
  for (const WorkloadCollective& c : w.collectives) {
    PARASIM_CHECK(c.count >= 1, "collective count ", c.count);
    // The CP ring's steps run beside attention blocks; blocking CP kinds
    // (all-to-all, all-gather) split the GEMM time like TP collectives.
    // A second one in the same phase (torch's all-gather loop: the
    // backward's K,V gather beside its dK,dV ring) blocks here, a bound above
    // tier A, which hides it under one block too.
    if (c.dim == ParallelDim::kCp && !c.blocking &&
        (c.phase == CommPhase::kForward || c.phase == CommPhase::kBackward)) {
      const WorkloadCollective*& slot = c.phase == CommPhase::kForward ? u.cp_fwd : u.cp_bwd;
      if (slot == nullptr) {
        slot = &c;
        continue;
      }
    }
    switch (c.phase) {
      case CommPhase::kForward:
        for (int i = 0; i < c.count; ++i) u.fwd_blocking.push_back(&c);
        break;
      case CommPhase::kBackward:
        for (int i = 0; i < c.count; ++i) u.bwd_blocking.push_back(&c);
        break;
      case CommPhase::kForwardPrefetch: u.gathers.push_back(&c); break;
      case CommPhase::kBackwardPrefetch: u.bwd_gathers.push_back(&c); break;
      case CommPhase::kGradientReduce: u.reduces.push_back(&c); break;
      case CommPhase::kStepEnd: u.step_end.push_back(&c); break;
    }
  }
  const bool full = recompute == RecomputeMode::kFull;
  if (full || (recompute == RecomputeMode::kSelective && attention_again)) {
    // Full recomputation re-runs the forward, blocking collectives and the
    // CP ring beside its attention blocks included (Megatron-Core
    // CheckpointFunction re-runs the whole layer, TE's ring attention with
    // it); attention-only selective re-runs the attention core's CP ones.
    std::vector<const WorkloadCollective*> again;
    for (const WorkloadCollective* c : u.fwd_blocking) {
      if (full || c->dim == ParallelDim::kCp) again.push_back(c);
    }
    const int recompute_blocking = static_cast<int>(again.size());
    again.insert(again.end(), u.bwd_blocking.begin(), u.bwd_blocking.end());
    u.bwd_blocking = std::move(again);
    u.recompute_blocking = recompute_blocking;
    u.cp_recompute = u.cp_fwd;
  }
  return u;
}

using LaneOps = std::vector<int32_t>;

class Builder {
 public:
  Builder(const StepWorkload& wl, StepGraph& out, CollectiveFactory& factory)
      : wl_(wl), out_(out), g_(out.graph), factory_(factory) {}

  void Build();

 private:
  int lanes(int s) const { return static_cast<int>(out_.stages[s].ranks.size()); }
  int32_t AddCompute(int s, WorkKind kind, double seconds, ActivitySpec spec);
  LaneOps AddColl(int s, const WorkloadCollective& c, ActivitySpec spec);
  void DependOn(int s, const LaneOps& before, int32_t after_base);
  void DependOnBase(int s, int32_t before_base, const LaneOps& after);
  void DependOnPending(int s, const LaneOps& after);

  void HostDelay(int s, int mb);
  void ForwardPass(int s, int mb, int chunk);
  void BackwardPass(int s, int mb, int chunk, bool zero_bubble);
  void WeightPass(int s, int mb, int chunk);
  void UnitCompute(int s, const UnitPlan& u, bool forward, double total_s, double matmul_s, int mb,
                   const std::string& what);
  void CpBlocks(int s, const WorkloadCollective& ring, double attention_s, ActivitySpec spec);
  void Reductions(int s, const UnitPlan& u, int mb);
  bool PerChunkDp(int s) const;
  bool ChunkSynced(int s, const WorkloadCollective& c) const { return per_chunk_dp_[s] && !c.every_micro_batch; }
  void ChunkGathers(int s, int chunk);
  void ChunkReductions(int s, int chunk);
  void StepEnd(int s);
  ActivitySpec Label(const UnitPlan& u, const std::string& what, int mb, int chunk);

  const StepWorkload& wl_;
  StepGraph& out_;
  TaskGraph& g_;
  CollectiveFactory& factory_;
  int m_ = 1, v_ = 1, p_ = 1;

  std::vector<std::vector<UnitPlan>> units_;                 // per stage, forward order
  std::vector<std::vector<std::vector<int>>> chunk_units_;   // per stage, per chunk: unit indices
  std::vector<int32_t> last_compute_;                        // per stage: base op id, -1 none
  std::vector<LaneOps> last_dp_;                             // per stage
  std::vector<std::vector<LaneOps>> pending_;                // per stage: the next compute waits for these
  int32_t first_compute_in_pass_ = -1;
  std::vector<char> per_chunk_dp_;                           // per stage: PerChunkDp
  std::vector<std::vector<LaneOps>> chunk_gathers_;          // per chunk of the stage being built
  std::vector<int> stream_scratch_;

  // Per stage, per pass key: first and last compute op (base) and the send (base, -1 none).
  std::vector<std::vector<int32_t>> pass_first_, pass_last_, pass_send_;
  int Key(PassKind k, int mb, int chunk) const { return (static_cast<int>(k) * m_ + mb) * v_ + chunk; }
};

ActivitySpec Builder::Label(const UnitPlan& u, const std::string& what, int mb, int chunk) {
  ActivitySpec spec;
  const LayerWork& w = *u.work;
  spec.name = g_.InternName(w.layer_index >= 0 ? what : w.name + " " + what);
  spec.layer = w.layer_index;
  spec.micro_batch = mb;
  spec.chunk = v_ > 1 ? chunk : -1;
  return spec;
}

int32_t Builder::AddCompute(int s, WorkKind kind, double seconds, ActivitySpec spec) {
  spec.kind = kind;
  spec.duration_s = std::max(0.0, seconds);
  const StageLanes& st = out_.stages[s];
  int32_t base = -1;
  for (int lane = 0; lane < lanes(s); ++lane) {
    int32_t op = g_.AddOp(out_.streams[st.ranks[lane]].compute, spec);
    if (lane == 0) base = op;
  }
  for (const LaneOps& before : pending_[s]) DependOn(s, before, base);
  pending_[s].clear();
  last_compute_[s] = base;
  if (first_compute_in_pass_ < 0) first_compute_in_pass_ = base;
  return base;
}

LaneOps Builder::AddColl(int s, const WorkloadCollective& c, ActivitySpec spec) {
  spec.kind = WorkKind::kComm;
  spec.bytes = c.size.si();
  spec.dim = static_cast<int8_t>(c.dim);
  spec.name = g_.InternName(c.what.empty() ? ToString(c.op) : c.what);
  const StageLanes& st = out_.stages[s];
  stream_scratch_.resize(lanes(s));
  for (int lane = 0; lane < lanes(s); ++lane) stream_scratch_[lane] = out_.streams[st.ranks[lane]].For(c.dim);
  LaneOps ops(lanes(s), -1);
  factory_.AddCollective(g_, s, st, c, spec, stream_scratch_, ops);
  if (c.dim == ParallelDim::kDp) last_dp_[s] = ops;
  out_.stage_hidden_comm[s][static_cast<int>(c.dim)] += c.hidden.si();   // one issue per call
  return ops;
}

void Builder::DependOn(int s, const LaneOps& before, int32_t after_base) {
  for (int lane = 0; lane < lanes(s); ++lane) g_.AddDependency(before[lane], after_base + lane);
}

void Builder::DependOnBase(int s, int32_t before_base, const LaneOps& after) {
  if (before_base < 0) return;
  for (int lane = 0; lane < lanes(s); ++lane) g_.AddDependency(before_base + lane, after[lane]);
}

void Builder::DependOnPending(int s, const LaneOps& after) {
  for (const LaneOps& before : pending_[s]) {
    for (int lane = 0; lane < lanes(s); ++lane) g_.AddDependency(before[lane], after[lane]);
  }
}

// Attention blocks with ring steps beside them: step k is issued when block k
// starts and block k+1 waits for it, so the attention takes
// blocks·block + steps·max(0, t_step − block) (tier A's CP rule).
void Builder::CpBlocks(int s, const WorkloadCollective& ring, double attention_s, ActivitySpec spec) {
  const int steps = ring.count;
  const double block = attention_s / (steps + 1);
  WorkloadCollective one = ring;
  one.count = 1;
  LaneOps prev;
  for (int b = 0; b <= steps; ++b) {
    LaneOps step;
    if (b < steps) {
      step = AddColl(s, one, spec);
      DependOnBase(s, last_compute_[s], step);
    }
    if (!prev.empty()) pending_[s].push_back(prev);
    AddCompute(s, WorkKind::kMatmul, block, spec);
    prev = std::move(step);
  }
}

void Builder::UnitCompute(int s, const UnitPlan& u, bool forward, double total_s, double matmul_s, int mb,
                          const std::string& what) {
  const int chunk = u.work->chunk;
  ActivitySpec spec = Label(u, what, mb, chunk);
  const auto& blocking = forward ? u.fwd_blocking : u.bwd_blocking;
  const WorkloadCollective* ring = forward ? u.cp_fwd : u.cp_bwd;
  // Full recompute: the recomputed forward's ring on the first piece, the
  // backward's own on the first piece after the recomputed forward's issues.
  const WorkloadCollective* again = forward ? nullptr : u.cp_recompute;
  // Ring steps hide under attention blocks only (TE's ring overlaps each
  // step with one block's attention kernel), so those come out of the GEMMs.
  const double fwd_attn = u.work->forward_attention_time.si();
  double ring_s = ring ? (forward ? fwd_attn : u.work->backward_attention_time.si()) : 0.0;
  double again_s = again ? fwd_attn : 0.0;
  if (ring_s + again_s > matmul_s) {
    const double k = matmul_s / (ring_s + again_s);
    ring_s *= k;
    again_s *= k;
  }
  const double gemm_s = std::max(0.0, matmul_s - ring_s - again_s);
  const double memory_s = std::max(0.0, total_s - matmul_s);
  int pieces = std::max<int>(1, static_cast<int>(blocking.size()));
  int ring_piece = 0;
  if (again && ring) {
    ring_piece = std::max(1, u.recompute_blocking);
    pieces = std::max(pieces, ring_piece + 1);
  }
  // Memory-bound kernels (norms, activations, rotary, residuals) first, then
  // the GEMM pieces (with the attention blocks), each followed by its
  // blocking collective.
  if (memory_s > 0 || (matmul_s <= 0 && blocking.empty() && !ring && !again)) {
    AddCompute(s, WorkKind::kMemory, memory_s, spec);
  }
  for (int i = 0; i < pieces; ++i) {
    const double piece = gemm_s / pieces;
    const bool blocks_here = (i == 0 && again) || (i == ring_piece && ring);
    if (piece > 0 || (i < static_cast<int>(blocking.size()) && !blocks_here)) {
      AddCompute(s, WorkKind::kMatmul, piece, spec);
    }
    if (i == 0 && again) CpBlocks(s, *again, again_s, spec);
    if (i == ring_piece && ring) CpBlocks(s, *ring, ring_s, spec);
    if (i < static_cast<int>(blocking.size())) {
      LaneOps c = AddColl(s, *blocking[i], Label(u, what, mb, chunk));
      DependOnBase(s, last_compute_[s], c);
      DependOnPending(s, c);
      pending_[s].clear();
      pending_[s].push_back(std::move(c));
    }
  }
}

void Builder::Reductions(int s, const UnitPlan& u, int mb) {
  for (const WorkloadCollective* r : u.reduces) {
    if ((!r->every_micro_batch && mb != m_ - 1) || ChunkSynced(s, *r)) continue;
    LaneOps c = AddColl(s, *r, Label(u, "reduce", mb, u.work->chunk));
    DependOnBase(s, last_compute_[s], c);
    DependOnPending(s, c);
  }
}

// A host-synchronous pipeline (tier A's host_mb): the host reads the pass's
// input on the CPU, then spends its per-micro-batch time launching nothing,
// so the stage's GPU waits for it. It is the pass's first op, so the upstream
// transfer gates it; it holds no dependency of the compute it precedes.
void Builder::HostDelay(int s, int mb) {
  ActivitySpec spec;
  spec.kind = WorkKind::kHost;
  spec.duration_s = wl_.host_per_micro_batch.si();
  spec.name = g_.InternName("host");
  spec.micro_batch = mb;
  const StageLanes& st = out_.stages[s];
  int32_t base = -1;
  for (int lane = 0; lane < lanes(s); ++lane) {
    const int32_t op = g_.AddOp(out_.streams[st.ranks[lane]].compute, spec);
    if (lane == 0) base = op;
  }
  if (first_compute_in_pass_ < 0) first_compute_in_pass_ = base;
}

void Builder::ForwardPass(int s, int mb, int chunk) {
  // Tier A charges the host once per micro-batch and stage: before the first chunk.
  if (chunk == 0 && wl_.host_per_micro_batch.si() > 0) HostDelay(s, mb);
  const std::vector<int>& order = chunk_units_[s][chunk];
  const int n = static_cast<int>(order.size());
  const int depth = std::max(0, wl_.prefetch_depth);
  std::vector<LaneOps> gathered(n);
  auto issue = [&](int i) {
    const UnitPlan& u = units_[s][order[i]];
    for (const WorkloadCollective* c : u.gathers) {
      if ((!c->every_micro_batch && mb != 0) || ChunkSynced(s, *c)) continue;
      LaneOps ops = AddColl(s, *c, Label(u, "gather", mb, chunk));
      DependOnBase(s, last_compute_[s], ops);
      gathered[i] = std::move(ops);
    }
  };
  for (int j = 0; j < n; ++j) {
    // FSDP issues unit i's AllGather when unit i − depth starts (the first
    // depth + 1 at the pass start), on the DP stream in order.
    if (j == 0) {
      for (int i = 0; i <= std::min(depth, n - 1); ++i) issue(i);
    } else if (j + depth < n) {
      issue(j + depth);
    }
    const UnitPlan& u = units_[s][order[j]];
    if (!gathered[j].empty()) pending_[s].push_back(gathered[j]);
    UnitCompute(s, u, /*forward=*/true, u.work->forward_time.si(), u.work->forward_matmul_time.si(), mb, "fwd");
  }
}

void Builder::BackwardPass(int s, int mb, int chunk, bool zero_bubble) {
  const std::vector<int>& order = chunk_units_[s][chunk];
  const int n = static_cast<int>(order.size());
  std::vector<LaneOps> gathered(n);
  auto issue = [&](int k) {   // k-th unit in backward order
    const UnitPlan& u = units_[s][order[n - 1 - k]];
    for (const WorkloadCollective* c : u.bwd_gathers) {
      LaneOps ops = AddColl(s, *c, Label(u, "regather", mb, chunk));
      DependOnBase(s, last_compute_[s], ops);
      gathered[k] = std::move(ops);
    }
  };
  for (int k = 0; k < n; ++k) {
    // zero3: the re-gather of the next unit is issued when this one starts
    // and shares the DP stream with the reductions.
    if (k == 0) issue(0);
    if (k + 1 < n) issue(k + 1);
    const UnitPlan& u = units_[s][order[n - 1 - k]];
    if (!gathered[k].empty()) pending_[s].push_back(gathered[k]);
    double total = u.work->backward_time.si(), matmul = u.work->backward_matmul_time.si();
    if (zero_bubble) {
      // ZB: B keeps everything but the weight-gradient GEMMs (the input
      // gradient's, the attention core's backward, the recomputed forward);
      // W runs them later.
      const double w = std::min(matmul, u.work->weight_grad_time.si());
      total -= w;
      matmul -= w;
    }
    UnitCompute(s, u, /*forward=*/false, total, matmul, mb, "bwd");
    if (!zero_bubble) Reductions(s, u, mb);
  }
}

void Builder::WeightPass(int s, int mb, int chunk) {
  const std::vector<int>& order = chunk_units_[s][chunk];
  for (int k = static_cast<int>(order.size()) - 1; k >= 0; --k) {
    const UnitPlan& u = units_[s][order[k]];
    AddCompute(s, WorkKind::kMatmul, std::min(u.work->backward_matmul_time.si(), u.work->weight_grad_time.si()),
               Label(u, "wgrad", mb, chunk));
    Reductions(s, u, mb);
  }
}

// Megatron-Core's per-chunk data-parallel sync (StepWorkload::
// dp_overlap_per_chunk): the interleaved schedule keeps one gradient and
// one parameter buffer per model chunk, so each chunk's once-per-step
// collectives go out on their own (tier A's PerChunkApplies: whole chunks of
// layers, only once-per-step DP collectives, as ddp and zero1 issue).
bool Builder::PerChunkDp(int s) const {
  if (!wl_.dp_overlap_per_chunk || wl_.schedule != PipelineSchedule::kInterleaved || v_ <= 1 || p_ <= 1) {
    return false;
  }
  int layers = 0;
  for (const UnitPlan& u : units_[s]) {
    if (u.work->layer_index >= 0) ++layers;
    if (!u.bwd_gathers.empty()) return false;
    for (const WorkloadCollective* c : u.gathers) {
      if (c->every_micro_batch) return false;
    }
    for (const WorkloadCollective* c : u.reduces) {
      if (c->every_micro_batch) return false;
    }
  }
  return layers > 0 && !StageHasSplitChunks(layers, v_);
}

// The chunk's parameter all-gathers (param_sync_func), in forward order; its
// first forward waits for them.
void Builder::ChunkGathers(int s, int chunk) {
  for (int i : chunk_units_[s][chunk]) {
    const UnitPlan& u = units_[s][i];
    for (const WorkloadCollective* c : u.gathers) {
      if (!ChunkSynced(s, *c)) continue;
      LaneOps ops = AddColl(s, *c, Label(u, "gather", 0, chunk));
      DependOnBase(s, last_compute_[s], ops);
      chunk_gathers_[chunk].push_back(std::move(ops));
    }
  }
}

// The chunk's gradient reductions (grad_sync_func), in backward order, after
// the pass that launches them.
void Builder::ChunkReductions(int s, int chunk) {
  const std::vector<int>& order = chunk_units_[s][chunk];
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const UnitPlan& u = units_[s][*it];
    for (const WorkloadCollective* r : u.reduces) {
      if (!ChunkSynced(s, *r)) continue;
      LaneOps c = AddColl(s, *r, Label(u, "reduce", m_ - 1, chunk));
      DependOnBase(s, last_compute_[s], c);
      DependOnPending(s, c);
    }
  }
}

void Builder::StepEnd(int s) {
  std::vector<const WorkloadCollective*> before, after;
  const UnitPlan* owner = nullptr;
  for (const UnitPlan& u : units_[s]) {
    for (const WorkloadCollective* c : u.step_end) {
      (c->op == CollectiveOp::kAllGather ? after : before).push_back(c);
      owner = &u;
    }
  }
  ActivitySpec spec;
  spec.name = g_.InternName("optimizer");
  // The data-parallel ones first; the others (the tied embedding's pair)
  // after them, not beside them: every framework that runs both does them
  // one after the other (Megatron-Core's finalize_model_grads finishes the
  // DP sync, then the embedding group's; nanotron's DDP sync completes in
  // backward before sync_tied_weights_gradients; DeepSpeed's pipeline
  // engine reduces tied then DP gradients, blocking both), as tier A
  // charges them in full.
  std::stable_partition(before.begin(), before.end(),
                        [](const WorkloadCollective* c) { return c->dim == ParallelDim::kDp; });
  for (const WorkloadCollective* c : before) {
    LaneOps ops = AddColl(s, *c, Label(*owner, "step_end", -1, 0));
    DependOnBase(s, last_compute_[s], ops);
    DependOnPending(s, ops);
    if (c->dim != ParallelDim::kDp && !last_dp_[s].empty()) {
      for (int lane = 0; lane < lanes(s); ++lane) g_.AddDependency(last_dp_[s][lane], ops[lane]);
    }
    pending_[s].push_back(ops);
  }
  // The optimizer updates once every gradient is reduced (the DP stream is in order).
  if (!last_dp_[s].empty()) pending_[s].push_back(last_dp_[s]);
  AddCompute(s, WorkKind::kMemory, wl_.stages[s].optimizer_time.si(), spec);
  for (const WorkloadCollective* c : after) {
    LaneOps ops = AddColl(s, *c, Label(*owner, "step_end", -1, 0));
    DependOnBase(s, last_compute_[s], ops);
  }
}

void Builder::Build() {
  p_ = static_cast<int>(wl_.stages.size());
  m_ = std::max(1, wl_.num_micro_batches);
  v_ = wl_.schedule == PipelineSchedule::kInterleaved ? std::max(1, wl_.virtual_stages) : 1;
  PARASIM_CHECK(p_ >= 1 && static_cast<int>(out_.stages.size()) == p_, "one lane set per stage");
  units_.assign(p_, {});
  chunk_units_.assign(p_, std::vector<std::vector<int>>(v_));
  for (int s = 0; s < p_; ++s) {
    PARASIM_CHECK(lanes(s) == lanes(0), "every stage needs the same number of lanes");
    const auto& layers = wl_.stages[s].layers;
    std::vector<int> layers_in_chunk(v_, 0);   // transformer layers seen so far per chunk
    for (size_t i = 0; i < layers.size(); ++i) {
      const int chunk = std::clamp(layers[i].chunk, 0, v_ - 1);
      // Partial full recompute: only the first recompute_layers/vpp layers of
      // each chunk re-run their forward (and its collectives) in backward.
      // The embedding and LM head are not checkpointed (tier A folds their
      // collectives without recompute).
      RecomputeMode mode = layers[i].layer_index >= 0 ? wl_.config.recompute : RecomputeMode::kNone;
      if (layers[i].layer_index >= 0 && mode == RecomputeMode::kFull &&
          !wl_.config.FullyRecomputes(layers_in_chunk[chunk]++)) {
        mode = RecomputeMode::kNone;
      }
      units_[s].push_back(PlanUnit(layers[i], mode, wl_.selective_reruns_attention));
      chunk_units_[s][chunk].push_back(static_cast<int>(i));
    }
  }
  per_chunk_dp_.assign(p_, 0);
  for (int s = 0; s < p_; ++s) per_chunk_dp_[s] = PerChunkDp(s) ? 1 : 0;
  last_compute_.assign(p_, -1);
  last_dp_.assign(p_, {});
  pending_.assign(p_, {});
  const int keys = 3 * m_ * v_;
  pass_first_.assign(p_, std::vector<int32_t>(keys, -1));
  pass_last_ = pass_first_;
  pass_send_ = pass_first_;
  // Zero bubble's split backward (ZeroBubbleApplies: pp > 1; v_ is 1 but
  // for the interleaved schedule); zb-h1 over one stage runs as 1F1B.
  const bool zero_bubble = ZeroBubbleApplies(wl_.schedule, p_, v_);
  const auto orders =
      BuildPipelineOrder(wl_.schedule == PipelineSchedule::kZeroBubble && !zero_bubble ? PipelineSchedule::k1F1B
                                                                                       : wl_.schedule,
                         p_, m_, v_);

  for (int s = 0; s < p_; ++s) {
    std::vector<int> pp_streams(lanes(s));
    for (int lane = 0; lane < lanes(s); ++lane) pp_streams[lane] = out_.streams[out_.stages[s].ranks[lane]].pp;
    // Per-chunk DP sync (megatron/core/pipeline_parallel/schedules.py,
    // forward_backward_pipelining_with_interleaving; tier A's
    // PerChunkDeltas): with the stage's forwards and backwards numbered in
    // order, chunks 0 and 1 gather before the first forward and chunk c >= 2
    // at forward (chunk c-1's first) − rank; chunk c reduces after backward
    // (its last) + rank, the cool-down's last at the latest.
    const bool per_chunk = per_chunk_dp_[s] != 0;
    std::vector<int> first_fwd(v_, -1), last_bwd(v_, -1);
    int forwards = 0, backwards = 0;
    if (per_chunk) {
      for (const PipelinePass& pass : orders[s]) {
        if (pass.kind == PassKind::kForward && first_fwd[pass.chunk] < 0) first_fwd[pass.chunk] = forwards;
        if (pass.kind == PassKind::kForward) ++forwards;
        if (pass.kind == PassKind::kBackward) last_bwd[pass.chunk] = backwards++;
      }
      chunk_gathers_.assign(v_, {});
    }
    int fwd_id = 0, bwd_id = 0;
    for (const PipelinePass& pass : orders[s]) {
      first_compute_in_pass_ = -1;
      if (per_chunk && pass.kind == PassKind::kForward) {
        for (int c = 0; c < v_; ++c) {
          const int at = c < 2 ? 0 : std::max(0, first_fwd[c - 1] - s);
          if (at == fwd_id) ChunkGathers(s, c);
        }
        if (fwd_id == first_fwd[pass.chunk]) {
          for (LaneOps& ops : chunk_gathers_[pass.chunk]) pending_[s].push_back(std::move(ops));
          chunk_gathers_[pass.chunk].clear();
        }
        ++fwd_id;
      }
      switch (pass.kind) {
        case PassKind::kForward: ForwardPass(s, pass.micro_batch, pass.chunk); break;
        case PassKind::kBackward: BackwardPass(s, pass.micro_batch, pass.chunk, zero_bubble); break;
        case PassKind::kWeightGrad: WeightPass(s, pass.micro_batch, pass.chunk); break;
      }
      if (per_chunk && pass.kind == PassKind::kBackward) {
        for (int c = v_ - 1; c >= 0; --c) {
          if (std::min(last_bwd[c] + s, backwards - 1) == bwd_id) ChunkReductions(s, c);
        }
        ++bwd_id;
      }
      const int key = Key(pass.kind, pass.micro_batch, pass.chunk);
      pass_first_[s][key] = first_compute_in_pass_;
      pass_last_[s][key] = last_compute_[s];
      // Activations go downstream after a forward, gradients upstream after a backward.
      int to = -1;
      if (pass.kind == PassKind::kForward) {
        to = s < p_ - 1 ? s + 1 : (pass.chunk < v_ - 1 ? 0 : -1);
      } else if (pass.kind == PassKind::kBackward) {
        to = s > 0 ? s - 1 : (pass.chunk > 0 ? p_ - 1 : -1);
      }
      if (to >= 0 && to != s) {
        ActivitySpec spec;
        spec.name = g_.InternName(pass.kind == PassKind::kForward ? "send_activation" : "send_gradient");
        spec.micro_batch = pass.micro_batch;
        spec.chunk = v_ > 1 ? pass.chunk : -1;
        spec.bytes = wl_.stages[s].pp_send_bytes.si();
        spec.dim = static_cast<int8_t>(ParallelDim::kPp);
        int32_t send = factory_.AddSend(g_, s, to, out_.stages[s], pp_streams, wl_.stages[s].pp_send_time.si(), spec);
        LaneOps send_ops(lanes(s));
        for (int lane = 0; lane < lanes(s); ++lane) send_ops[lane] = send + lane;
        DependOnBase(s, last_compute_[s], send_ops);
        DependOnPending(s, send_ops);
        // Blocking p2p (StepWorkload::pp_sends_block): the next pass waits for the send.
        if (wl_.pp_sends_block) pending_[s].push_back(send_ops);
        pass_send_[s][key] = send;
      }
    }
    StepEnd(s);
  }
  // Each pass waits for its input from the neighbouring stage.
  for (int s = 0; s < p_; ++s) {
    for (const PipelinePass& pass : orders[s]) {
      UpstreamPass up = PassUpstream(s, pass, p_, v_);
      if (!up.has_upstream || up.stage == s) continue;
      int32_t send = pass_send_[up.stage][Key(up.pass.kind, up.pass.micro_batch, up.pass.chunk)];
      int32_t first = pass_first_[s][Key(pass.kind, pass.micro_batch, pass.chunk)];
      PARASIM_CHECK(send >= 0 && first >= 0, "pipeline pass without its transfer");
      for (int lane = 0; lane < lanes(s); ++lane) g_.AddDependency(send + lane, first + lane);
    }
  }
}

}  // namespace

StepGraph BuildStepGraph(const StepWorkload& workload, const std::vector<std::vector<int>>& stage_gpus,
                         double weight, CollectiveFactory& factory) {
  StepGraph out;
  BuildStepGraphInto(workload, stage_gpus, weight, factory, out);
  return out;
}

void BuildStepGraphInto(const StepWorkload& workload, const std::vector<std::vector<int>>& stage_gpus,
                        double weight, CollectiveFactory& factory, StepGraph& out) {
  PARASIM_CHECK(stage_gpus.size() == workload.stages.size(), "lanes for every stage");
  PARASIM_CHECK(weight >= 1, "weight");
  out.graph.Clear();
  out.rank_stage.clear();
  out.rank_gpu.clear();
  out.rank_weight.clear();
  out.stages.clear();
  out.streams.clear();
  out.stage_hidden_comm.assign(stage_gpus.size(), std::array<double, 5>{});
  out.world = workload.world_size;
  out.interference_slowdown = std::max(0.0, workload.comm_interference - 1.0);
  for (size_t s = 0; s < stage_gpus.size(); ++s) {
    StageLanes lanes;
    for (int gpu : stage_gpus[s]) {
      std::string name = weight > 1 ? StrCat("stage ", s, " (GPU ", gpu, " and ", weight - 1, " like it)")
                                    : StrCat("GPU ", gpu, " (stage ", s, ")");
      int rank = out.graph.AddRank(std::move(name));
      RankStreams st;
      st.compute = out.graph.AddStream(rank, StreamKind::kCompute);
      st.tp = out.graph.AddStream(rank, StreamKind::kTp);
      st.cp = out.graph.AddStream(rank, StreamKind::kCp);
      st.ep = out.graph.AddStream(rank, StreamKind::kEp);
      st.dp = out.graph.AddStream(rank, StreamKind::kDp);
      st.pp = out.graph.AddStream(rank, StreamKind::kPp);
      out.streams.push_back(st);
      out.rank_stage.push_back(static_cast<int>(s));
      out.rank_gpu.push_back(gpu);
      out.rank_weight.push_back(weight);
      lanes.ranks.push_back(rank);
      lanes.gpus.push_back(gpu);
    }
    out.stages.push_back(std::move(lanes));
  }
  // Reserve what the step will hold: per unit and micro-batch, forward and
  // backward each take a memory op, a GEMM piece and a collective per
  // blocking issue, CP blocks and ring steps, gathers and reductions.
  int64_t per_mb = 4;
  for (const StageWork& st : workload.stages) {
    for (const LayerWork& w : st.layers) {
      per_mb += 6;
      for (const WorkloadCollective& c : w.collectives) per_mb += 2 * (c.count + 1);
    }
  }
  const int64_t lanes = static_cast<int64_t>(stage_gpus.empty() ? 1 : stage_gpus[0].size());
  const int64_t ops = per_mb * std::max(1, workload.num_micro_batches) * lanes + 64;
  out.graph.Reserve(ops, ops, 2 * ops);
  Builder builder(workload, out, factory);
  builder.Build();
  out.graph.Finalize();
}

}  // namespace parasim::simulator
