#include "cost_model/evaluator_stage_time.h"

#include <algorithm>

#include "cost_model/comm_plan.h"
#include "cost_model/eval_memo.h"
#include "cost_model/interleaved_chunks.h"
#include "cost_model/nanotron_stage_split.h"
#include "cost_model/overlap.h"

namespace parasim {

namespace {

// Layers per stage of a config without pp_layers (the stack's rule): kernel
// id (the model and the stack), pp.
using StageSplitKey = WordKey<2>;

// One overlap phase of a stage shape (overlap.h), exactly its inputs:
// configs that differ only in step-level collectives (ddp vs zero1) or in
// the schedule share their middle micro-batch phases.
using PhaseKey = WordKey<15>;
PhaseKey MakePhaseKey(bool forward, const UnitRuns& r, int depth, double interference) {
  PhaseKey k;
  k.w = {static_cast<uint64_t>(forward) | static_cast<uint64_t>(r.has_first) << 1 |
             static_cast<uint64_t>(r.has_last) << 2,
         Pack(r.count, depth), DoubleBits(interference),
         DoubleBits(r.first.compute), DoubleBits(r.first.fixed), DoubleBits(r.first.gather),
         DoubleBits(r.first.reduce), DoubleBits(r.body.compute), DoubleBits(r.body.fixed),
         DoubleBits(r.body.gather), DoubleBits(r.body.reduce), DoubleBits(r.last.compute),
         DoubleBits(r.last.fixed), DoubleBits(r.last.gather), DoubleBits(r.last.reduce)};
  return k;
}

PhaseResult Forward(const UnitRuns& runs, int depth, double interference) {
  thread_local SlotMemo<PhaseKey, PhaseResult, 256> memo;
  return memo.Get(MakePhaseKey(true, runs, depth, interference),
                  [&] { return ForwardWithPrefetch(runs, depth, interference); });
}
PhaseResult Backward(const UnitRuns& runs, double interference) {
  thread_local SlotMemo<PhaseKey, PhaseResult, 256> memo;
  return memo.Get(MakePhaseKey(false, runs, 0, interference), [&] { return BackwardWithReduce(runs, interference); });
}

// A stage's units in forward order and what they add up to per micro-batch.
struct StageUnits {
  UnitRuns fwd, bwd;
  KernelSeconds kernels_mb;
  UnitRuns wgrad;             // zero bubble's W pass: each unit's weight-gradient GEMMs, its reductions
  double blocking_mb = 0;
  double tp_hidden_mb = 0;   // TP time hidden under GEMMs (stack.tp_comm_overlap)
  double cp_slowed_mb = 0;   // attention blocks' extra time beside the CP ring's steps
  std::array<double, kNumDims> dim_mb{}, dim_step{}, step_end_dim{};
  double gather_step = 0, reduce_step = 0, step_end = 0;

  void Add(const UnitCost& uc, const UnitComm& cm, int copies, OverlapUnit& f_unit, OverlapUnit& b_unit) {
    // Blocking comm, ring waits and the attention blocks the ring already
    // slows are the units' fixed time: a gather or reduction beside them
    // slows nothing more (one NCCL kernel's SMs at a time, as the simulator).
    const double f_fixed = cm.fwd_blocking + cm.cp_exposed_fwd + cm.cp_covered_fwd + cm.cp_slowed_fwd;
    const double b_fixed = cm.bwd_blocking + cm.cp_exposed_bwd + cm.cp_covered_bwd + cm.cp_slowed_bwd;
    const double f = uc.fwd.Total() + cm.fwd_blocking + cm.cp_exposed_fwd + cm.cp_slowed_fwd;
    const double b = uc.bwd.Total() + cm.bwd_blocking + cm.cp_exposed_bwd + cm.cp_slowed_bwd;
    f_unit = OverlapUnit{f, cm.gather_mb, 0, std::min(f, f_fixed)};
    b_unit = OverlapUnit{b, cm.bwd_gather_mb, cm.reduce_mb, std::min(b, b_fixed)};
    cp_slowed_mb += copies * (cm.cp_slowed_fwd + cm.cp_slowed_bwd);
    kernels_mb += (KernelSeconds(uc.fwd) += uc.bwd).Scaled(copies);
    blocking_mb += copies * (cm.fwd_blocking + cm.bwd_blocking + cm.cp_exposed_fwd + cm.cp_exposed_bwd);
    tp_hidden_mb += copies * cm.tp_hidden;
    for (int k = 0; k < kNumDims; ++k) {
      dim_mb[k] += copies * cm.dim_total_mb[k];
      dim_step[k] += copies * cm.dim_total_step[k];
      step_end_dim[k] += copies * cm.step_end_dim[k];
    }
    gather_step += copies * cm.gather_step;
    reduce_step += copies * cm.reduce_step;
    step_end += copies * cm.step_end;
  }

  // The stage's own step-end collectives (TimeStageStepEnd), exposed in full.
  void AddStepEnd(const StageStepEnd& se) {
    step_end += se.seconds;
    for (int k = 0; k < kNumDims; ++k) {
      step_end_dim[k] += se.by_dim[k];
      dim_step[k] += se.by_dim[k];
    }
  }
};

// The mean layer of a stage with its communication (Units::StageLayer): the
// overlap recurrences run over `layers` copies of it, so the stage's sums are
// exact and the gathers hide under the stage's mean layer.
struct StageLayer {
  const UnitCost* cost = nullptr;
  const UnitComm* comm = nullptr;
};

void AddScaledComm(UnitComm& into, const UnitComm& c, double w) {
  into.fwd_blocking += w * c.fwd_blocking;
  into.bwd_blocking += w * c.bwd_blocking;
  into.tp_fwd += w * c.tp_fwd;
  into.tp_bwd += w * c.tp_bwd;
  into.tp_bwd_reductions += w * c.tp_bwd_reductions;
  into.tp_hidden += w * c.tp_hidden;
  into.cp_exposed_fwd += w * c.cp_exposed_fwd;
  into.cp_exposed_bwd += w * c.cp_exposed_bwd;
  into.cp_total += w * c.cp_total;
  into.cp_covered_fwd += w * c.cp_covered_fwd;
  into.cp_covered_bwd += w * c.cp_covered_bwd;
  into.cp_slowed_fwd += w * c.cp_slowed_fwd;
  into.cp_slowed_bwd += w * c.cp_slowed_bwd;
  into.gather_mb += w * c.gather_mb;
  into.gather_step += w * c.gather_step;
  into.bwd_gather_mb += w * c.bwd_gather_mb;
  into.reduce_mb += w * c.reduce_mb;
  into.reduce_step += w * c.reduce_step;
  into.step_end += w * c.step_end;
  into.overlap_bus_bytes += w * c.overlap_bus_bytes;
  into.overlap_time += w * c.overlap_time;
  for (int k = 0; k < kNumDims; ++k) {
    into.dim_total_mb[k] += w * c.dim_total_mb[k];
    into.dim_total_step[k] += w * c.dim_total_step[k];
    into.step_end_dim[k] += w * c.step_end_dim[k];
  }
}

// Valid until the next call on this thread.
StageLayer StageLayerOf(const Units& u, const TimedComm& comm, const StageKinds& kinds, int layers) {
  if (!u.several_kinds || layers <= 0 || comm.kinds == nullptr) return StageLayer{&u.layer, &comm.layer};
  thread_local UnitCost mixed_cost;
  thread_local UnitComm mixed_comm;
  mixed_cost = u.StageLayer(kinds, layers);
  mixed_comm = UnitComm{};
  for (int k = 0; k < kNumLayerKinds; ++k) {
    if (kinds[k] > 0) AddScaledComm(mixed_comm, (*comm.kinds)[k], static_cast<double>(kinds[k]) / layers);
  }
  return StageLayer{&mixed_cost, &mixed_comm};
}

StageUnits CollectUnits(const Units& u, const TimedComm& comm, const StageLayer& sl, int layers, bool first,
                        bool last) {
  StageUnits su;
  su.fwd.has_first = su.bwd.has_first = first;
  su.fwd.has_last = su.bwd.has_last = last;
  su.fwd.count = su.bwd.count = layers;
  if (first) su.Add(u.emb, comm.emb, 1, su.fwd.first, su.bwd.first);
  su.Add(*sl.cost, *sl.comm, layers, su.fwd.body, su.bwd.body);
  if (last) su.Add(u.head, comm.head, 1, su.fwd.last, su.bwd.last);
  // Zero bubble's W: the weight-gradient GEMMs (WeightGradSeconds), no
  // blocking comm, no re-gather; the unit's reductions follow it
  // (simulator/step_builder.cc WeightPass).
  auto weight_pass = [](double seconds, OverlapUnit b) {
    b.compute = seconds;
    b.fixed = 0;
    b.gather = 0;
    return b;
  };
  su.wgrad = su.bwd;
  if (first) su.wgrad.first = weight_pass(WeightGradSeconds(u.emb), su.bwd.first);
  su.wgrad.body = weight_pass(WeightGradSeconds(*sl.cost), su.bwd.body);
  if (last) su.wgrad.last = weight_pass(WeightGradSeconds(u.head), su.bwd.last);
  return su;
}

// The four overlap phases of a stage: middle micro-batch forward and
// backward, the first forward (with the once-per-step gathers) and the last
// backward (with the once-per-step reductions).
// `f_first_waited`: the first forward of a stage the pipeline's fill
// reaches after another stage's forward (pipeline rank > 0, v = 1).
struct StagePhases {
  PhaseResult f_mid, b_mid, f_first, b_last, f_first_waited;
};

// The first forward of a stage that waits for its input: the gathers issued
// at its start (the first depth + 1 units', overlap.h) run while it waits,
// so it waits for and is slowed by the later ones only. Megatron-Core
// dispatches the first bucket's all-gather in zero_grad at the step's start
// and each next one from a forward pre-hook (core_r0.10.0 megatron/core/
// optimizer/distrib_optimizer.py step_with_ready_grads, distributed/
// distributed_data_parallel.py _make_forward_pre_hook); tier B issues them
// with no compute before them, at the step's start. One lookup for both
// first forwards: {without, with the wait}.
struct FirstForwards {
  PhaseResult first, waited;
};
FirstForwards FirstForwardsAfterWait(const UnitRuns& runs, int depth, double interference) {
  thread_local SlotMemo<PhaseKey, FirstForwards, 256> memo;
  return memo.Get(MakePhaseKey(true, runs, depth, interference), [&] {
    thread_local std::vector<OverlapUnit> units;
    const int n = runs.size();
    units.resize(n);
    for (int i = 0; i < n; ++i) units[i] = runs[i];
    for (int i = 0; i <= std::min(std::max(0, depth), n - 1); ++i) units[i].gather = 0;
    return FirstForwards{Forward(runs, depth, interference), ForwardWithPrefetch(units.data(), n, depth, interference)};
  });
}

PhaseResult Plus(const PhaseResult& a, const PhaseResult& b) {
  return PhaseResult{a.time + b.time, a.exposed + b.exposed, a.comm + b.comm, a.interference + b.interference};
}
PhaseResult Minus(const PhaseResult& a, const PhaseResult& b) {
  return PhaseResult{a.time - b.time, a.exposed - b.exposed, a.comm - b.comm, a.interference - b.interference};
}

// `zero_bubble`: the once-per-step reductions run beside the last W pass
// (StageUnits::wgrad), not the whole backward; b_last is b_mid with what
// they add to that W.
StagePhases RunPhases(const StageUnits& su, const TimedComm& comm, const UnitComm& layer_comm, int prefetch,
                      bool first, bool last, bool waits, bool zero_bubble) {
  StagePhases p;
  p.f_mid = Forward(su.fwd, prefetch, comm.interference);
  p.b_mid = Backward(su.bwd, comm.interference);
  p.f_first = p.f_mid;
  p.b_last = p.b_mid;
  p.f_first_waited = p.f_mid;
  if (su.gather_step > 0) {
    UnitRuns scratch = su.fwd;
    if (first) scratch.first.gather += comm.emb.gather_step;
    scratch.body.gather += layer_comm.gather_step;
    if (last) scratch.last.gather += comm.head.gather_step;
    if (waits) {
      const FirstForwards ff = FirstForwardsAfterWait(scratch, prefetch, comm.interference);
      p.f_first = ff.first;
      p.f_first_waited = ff.waited;
    } else {
      p.f_first = Forward(scratch, prefetch, comm.interference);
      p.f_first_waited = p.f_first;
    }
  }
  if (su.reduce_step > 0) {
    UnitRuns scratch = zero_bubble ? su.wgrad : su.bwd;
    if (first) scratch.first.reduce += comm.emb.reduce_step;
    scratch.body.reduce += layer_comm.reduce_step;
    if (last) scratch.last.reduce += comm.head.reduce_step;
    p.b_last = zero_bubble ? Plus(p.b_mid, Minus(Backward(scratch, comm.interference), Backward(su.wgrad, comm.interference)))
                           : Backward(scratch, comm.interference);
  }
  return p;
}

// What the once-per-step gathers (f) and reductions (b) add to a step
// beyond its middle micro-batches' passes: time, exposed comm, interference.
struct StepDeltas {
  PhaseResult f, b;
};

// Layer by layer: the gathers under the first micro-batch's forward, the
// reductions under the last one's backward (RunPhases).
StepDeltas WholeStageDeltas(const StagePhases& p) { return StepDeltas{Minus(p.f_first, p.f_mid), Minus(p.b_last, p.b_mid)}; }

// Chunk by chunk (SoftwareStack::dp_overlap_per_chunk): Megatron-Core's
// interleaved schedule (megatron/core/pipeline_parallel/schedules.py,
// forward_backward_pipelining_with_interleaving) keeps one gradient buffer
// and one parameter buffer per model chunk and passes each chunk's
// param_sync_func / grad_sync_func at its own time, so a chunk's collective
// overlaps the other chunks' passes. Only once-per-step collectives (ddp,
// zero1) with whole chunks of layers.
bool PerChunkApplies(const EvaluatorData& d, const ParallelConfig& c, const ConfigShape& cs, const StageUnits& su,
                     int layers) {
  if (!d.stack.dp_overlap_per_chunk || c.schedule != PipelineSchedule::kInterleaved || cs.v <= 1 || cs.pp <= 1 ||
      layers <= 0 || StageHasSplitChunks(layers, cs.v))
    return false;
  const auto step_only = [](const OverlapUnit& u) { return u.gather == 0 && u.reduce == 0; };
  return step_only(su.fwd.body) && step_only(su.bwd.body) &&
         (!su.fwd.has_first || (step_only(su.fwd.first) && step_only(su.bwd.first))) &&
         (!su.fwd.has_last || (step_only(su.fwd.last) && step_only(su.bwd.last)));
}

// One pass of one chunk: its share of the stage's layers, with the
// embedding (chunk 0 of the first stage) or the LM head (chunk v - 1 of the
// last stage) where it holds them.
OverlapUnit ChunkPass(const UnitRuns& r, int per_chunk, bool with_first, bool with_last) {
  OverlapUnit u;
  u.compute = per_chunk * r.body.compute;
  u.fixed = per_chunk * r.body.fixed;
  if (with_first) {
    u.compute += r.first.compute;
    u.fixed += r.first.fixed;
  }
  if (with_last) {
    u.compute += r.last.compute;
    u.fixed += r.last.fixed;
  }
  return u;
}

// The collectives' delta over the same passes without them.
PhaseResult DeltaOverPasses(const std::vector<OverlapUnit>& passes, const std::vector<PassCollective>& colls,
                            double interference) {
  PhaseResult r = OverlapPassCollectives(passes, colls, interference);
  double bare = 0;
  for (const OverlapUnit& u : passes) bare += u.compute;
  r.time -= bare;
  return r;
}

// Chunk c of a stage's once-per-step collective (layers' share plus the
// embedding's or head's).
double ChunkShare(double layer_step, double emb_step, double head_step, int per_chunk, int c, int v, bool first,
                  bool last) {
  return per_chunk * layer_step + (first && c == 0 ? emb_step : 0.0) + (last && c == v - 1 ? head_step : 0.0);
}

// The deltas of pipeline rank `rank` with v chunks over pp stages. Forward
// ids k run chunk (k mod p·v) / p, so a stage's first p·v forwards are p of
// chunk 0, then p of chunk 1, …: chunk c's first forward is the (c·p)-th.
// Backward ids run the chunks from v - 1 down, so in the last group chunk
// v-1-j ends with the (j·p)-th of the final (v-1)·p + 1 backwards.
StepDeltas PerChunkDeltas(const StageUnits& su, const TimedComm& comm, const UnitComm& layer_comm, int pp, int v,
                          int rank, bool first, bool last) {
  const int per_chunk = su.fwd.count / v;
  const int n = (v - 1) * pp + 1;
  thread_local std::vector<OverlapUnit> passes;
  thread_local std::vector<PassCollective> colls;
  StepDeltas out;
  if (su.gather_step > 0) {
    // param_sync_func: chunks 0 and 1 at the start; chunk c >= 2 when forward
    // id (c-1)·p − rank starts (launched when id + rank is chunk c−1's first,
    // aligned over the pipeline); chunk c's first forward waits for it.
    passes.clear();
    colls.clear();
    for (int i = 0; i < n; ++i) passes.push_back(ChunkPass(su.fwd, per_chunk, first && i / pp == 0, last && i / pp == v - 1));
    for (int c = 0; c < v; ++c) {
      const double g = ChunkShare(layer_comm.gather_step, comm.emb.gather_step, comm.head.gather_step, per_chunk, c, v,
                                  first, last);
      colls.push_back(PassCollective{g, c < 2 ? -1 : (c - 1) * pp - rank - 1, c * pp});
    }
    out.f = DeltaOverPasses(passes, colls, comm.interference);
  }
  if (su.reduce_step > 0) {
    // grad_sync_func: chunk v-1-j's whole reduction launched after backward
    // id (its last) + rank; ids past the cooldown launch at its end.
    passes.clear();
    colls.clear();
    for (int i = 0; i < n; ++i) {
      const int chunk = i == 0 ? v - 1 : v - 1 - ((i - 1) / pp + 1);
      passes.push_back(ChunkPass(su.bwd, per_chunk, first && chunk == 0, last && chunk == v - 1));
    }
    for (int j = 0; j < v; ++j) {
      const int c = v - 1 - j;
      const double r = ChunkShare(layer_comm.reduce_step, comm.emb.reduce_step, comm.head.reduce_step, per_chunk, c, v,
                                  first, last);
      colls.push_back(PassCollective{r, std::min(j * pp + rank, n - 1), -1});
    }
    out.b = DeltaOverPasses(passes, colls, comm.interference);
  }
  return out;
}

// Per-dimension totals and exposure of a stage over the step.
void DimensionTotals(const StageUnits& su, const StagePhases& p, const StepDeltas& once, const UnitComm& layer_comm,
                     int m, int layers, double p2p_sent_mb, double p2p_exposed_mb, bool cp_blocking, bool cp_mixed,
                     StageResult& st) {
  // The gathers and reductions are data-parallel; of the blocking step-end
  // collectives, each dimension is exposed its own (the tied embedding's
  // all-reduce is pp's, the tp-replicated gradients' tp's, the rest dp's;
  // tp's exposure is its total less what its GEMMs hide).
  const double pp_step_end = su.step_end_dim[DimIndex(ParallelDim::kPp)];
  const double tp_step_end = su.step_end_dim[DimIndex(ParallelDim::kTp)];
  const double fsdp_exposed = m * (p.f_mid.exposed + p.b_mid.exposed) + once.f.exposed + once.b.exposed +
                              su.step_end - pp_step_end - tp_step_end;
  for (int k = 0; k < kNumDims; ++k) st.dim_total[k] = m * su.dim_mb[k] + su.dim_step[k];
  st.dim_total[DimIndex(ParallelDim::kPp)] += m * p2p_sent_mb;
  st.dim_exposed[DimIndex(ParallelDim::kDp)] = fsdp_exposed;
  st.dim_exposed[DimIndex(ParallelDim::kTp)] = st.dim_total[DimIndex(ParallelDim::kTp)] - m * su.tp_hidden_mb;
  st.dim_exposed[DimIndex(ParallelDim::kEp)] = st.dim_total[DimIndex(ParallelDim::kEp)];
  // CP: the ring's steps beyond their attention blocks; the blocking kinds (a2a, allgather) in full.
  st.dim_exposed[DimIndex(ParallelDim::kCp)] =
      cp_blocking ? st.dim_total[DimIndex(ParallelDim::kCp)]
                  : m * (layer_comm.cp_exposed_fwd + layer_comm.cp_exposed_bwd) * layers;
  if (cp_mixed) {
    // a2a+p2p: the all-to-alls in full, the ring beyond its attention blocks.
    const double ring_hidden =
        m * (layer_comm.cp_total - layer_comm.cp_exposed_fwd - layer_comm.cp_exposed_bwd) * layers;
    st.dim_exposed[DimIndex(ParallelDim::kCp)] = std::max(0.0, st.dim_total[DimIndex(ParallelDim::kCp)] - ring_hidden);
  }
  // Within the sends' total: the first and last stages' overlapped
  // recurrences also count a receive (TimeShape).
  st.dim_exposed[DimIndex(ParallelDim::kPp)] = std::min(m * p2p_exposed_mb, m * p2p_sent_mb) + pp_step_end;
  st.comm = 0;
  for (int k = 0; k < kNumDims; ++k) st.comm += st.dim_total[k];
}

// The stage's mean layer under partial full recompute: its recomputed layers
// (the config's units) and kept layers (recompute=none) weighted by count.
// Valid until the next call on this thread.
StageLayer BlendKept(const StageLayer& recomputed, const KeptLayers& kept, const StageKinds& kinds, int layers, int recomputed_layers) {
  thread_local UnitCost cost;
  thread_local UnitComm cm;
  const UnitCost recomputed_cost = *recomputed.cost;   // StageLayerOf reuses its storage
  const UnitComm recomputed_comm = *recomputed.comm;
  const StageLayer k = StageLayerOf(*kept.units, *kept.comm, kinds, layers);
  const double r = static_cast<double>(recomputed_layers) / layers;
  cost = UnitCost{};
  AddScaled(cost, recomputed_cost, r);
  AddScaled(cost, *k.cost, 1.0 - r);
  cm = UnitComm{};
  AddScaledComm(cm, recomputed_comm, r);
  AddScaledComm(cm, *k.comm, 1.0 - r);
  return StageLayer{&cost, &cm};
}

// One chunk's pass of a stage's middle micro-batch phase (v chunks of equal
// layers; unequal: ChunkOfPassShare): what a pipeline transfer beside it
// slows is its kernels; its blocking comm, its waits for gathers and the
// time gathers already slowed it are fixed (one NCCL kernel's SMs at a
// time, as in the recurrences).
OverlapUnit ChunkOfPass(const PhaseResult& phase, const UnitRuns& r, int v) {
  const double fixed = (r.has_first ? r.first.fixed : 0.0) + r.count * r.body.fixed + (r.has_last ? r.last.fixed : 0.0);
  const double compute = phase.time / v;
  return OverlapUnit{compute, 0, 0, std::min(compute, (fixed + phase.exposed + phase.interference) / v)};
}

// Chunk `layers_c` of a stage of `layers` split into unequal chunks: its
// layers' share of the pass (the embedding or head, where the stage has one,
// spread in proportion: the phase does not tell where they sit).
OverlapUnit ChunkOfPassShare(const PhaseResult& phase, const UnitRuns& r, int layers_c, int layers) {
  const double share = static_cast<double>(layers_c) / layers;
  const double fixed = (r.has_first ? r.first.fixed : 0.0) + r.count * r.body.fixed + (r.has_last ? r.last.fixed : 0.0);
  const double compute = phase.time * share;
  return OverlapUnit{compute, 0, 0, std::min(compute, (fixed + phase.exposed + phase.interference) * share)};
}

// `ranks`: the pipeline ranks of the stages of this shape; where the
// once-per-step additions depend on the rank (per chunk), the shape takes
// the rank with the largest.
StageResult TimeShape(const EvaluatorData& d, const ParallelConfig& c, const ConfigShape& cs, const Units& u,
                      const TimedComm& comm, const StageKinds& kinds, int layers, bool first, bool last,
                      const KeptLayers& kept, const std::vector<int>& ranks) {
  StageLayer sl = StageLayerOf(u, comm, kinds, layers);
  const int recomputed = c.RecomputedLayers(layers);
  const bool blended = kept.units != nullptr && recomputed < layers;
  if (blended) sl = BlendKept(sl, kept, kinds, layers, recomputed);
  StageUnits su = CollectUnits(u, comm, sl, layers, first, last);
  su.AddStepEnd(TimeStageStepEnd(d, c, layers, StageMoeLayers(d, kinds, layers), last, nullptr));
  // Interleaved stages keep their once-per-step additions whole (below).
  // One stage runs no pipeline schedule: the backward stays whole (as tier B).
  const bool zero_bubble = ZeroBubbleApplies(c.schedule, cs.pp, cs.v);
  const StagePhases p =
      RunPhases(su, comm, *sl.comm, c.prefetch, first, last, cs.pp > 1 && cs.v == 1 && !first, zero_bubble);
  StepDeltas once = WholeStageDeltas(p);
  const bool per_chunk = PerChunkApplies(d, c, cs, su, layers);
  if (per_chunk) {
    bool have = false;
    for (int rank : ranks) {
      const StepDeltas r = PerChunkDeltas(su, comm, *sl.comm, cs.pp, cs.v, rank, first, last);
      if (!have || r.f.time + r.b.time > once.f.time + once.b.time) once = r;
      have = true;
    }
  }
  const int m = cs.m;
  // The transfers this stage sends per micro-batch: each chunk's activation
  // downstream and gradient upstream, but the model's last chunk sends no
  // activation and its first no gradient (1F1B: one send on the first and
  // last stages, two in between). Megatron-Core's 1F1B pairs each send with
  // the opposite receive and waits for both (schedules.py
  // forward_backward_pipelining_without_interleaving: send_forward_recv_backward,
  // send_backward_recv_forward; p2p_communication.py _communicate,
  // wait_on_reqs), as torch pipelining's Schedule1F1B (_wait_batch_p2p on
  // fwd_send_bwd_recv / bwd_send_fwd_recv): one exchange per send.
  const int sends = cs.pp > 1 ? 2 * cs.v - (first ? 1 : 0) - (last ? 1 : 0) : 0;
  const double p2p_sent_mb = sends * comm.p2p;   // the pp dimension's total
  double p2p_mb = p2p_sent_mb;
  // What of it the compute stream waits for, per micro-batch on average: all
  // of it, or with overlap_p2p_comm (interleaved only: Megatron-Core refuses
  // it without, schedules.py forward_backward_pipelining_without_interleaving)
  // the steady state's beyond the passes it runs beside, those passes slowed
  // as beside a gather (the config's factor, as tier B slows compute beside
  // any NCCL kernel). A shape takes the rank of its stages with the most
  // (the earliest: the longest warm-up).
  double p2p_exposed_mb = p2p_mb, p2p_slowed_mb = 0;
  if (p2p_mb > 0 && d.stack.pp_overlap_p2p && c.schedule == PipelineSchedule::kInterleaved && cs.v > 1) {
    // The overlapped recurrences (overlap.h) price 2·v transfers on every
    // stage (the first and last stages' extra one is a receive they wait for).
    p2p_mb = 2.0 * cs.v * comm.p2p;
    p2p_exposed_mb = p2p_mb;
    const OverlapUnit f_chunk = ChunkOfPass(p.f_mid, su.fwd, cs.v), b_chunk = ChunkOfPass(p.b_mid, su.bwd, cs.v);
    // Unequal chunks: each transfer beside the pass of the chunk it runs beside.
    const bool split = StageHasSplitChunks(layers, cs.v);
    std::vector<OverlapUnit> f_chunks, b_chunks;
    if (split) {
      for (int n : ChunkLayers(layers, cs.v)) {
        f_chunks.push_back(ChunkOfPassShare(p.f_mid, su.fwd, n, layers));
        b_chunks.push_back(ChunkOfPassShare(p.b_mid, su.bwd, n, layers));
      }
    }
    P2pStep most;
    bool have = false;
    for (int rank : ranks) {
      const P2pStep r =
          split ? OverlappedP2pSplitChunks(comm.p2p, f_chunks, b_chunks, cs.pp, m, rank,
                                           d.stack.pp_interleaved_full_warmup, comm.interference)
                : OverlappedP2pPerStep(comm.p2p, f_chunk, b_chunk, cs.pp, m, cs.v, rank,
                                       d.stack.pp_interleaved_full_warmup, comm.interference);
      if (!have || r.exposed + r.interference > most.exposed + most.interference) most = r;
      have = true;
    }
    p2p_exposed_mb = most.exposed / m;
    p2p_slowed_mb = most.interference / m;
  }
  // Host-synchronous pipeline p2p: every pass starts from an empty GPU queue,
  // so the host's per-micro-batch work is not hidden behind earlier kernels.
  const double host_mb = cs.pp > 1 && d.stack.pp_host_synchronous ? d.stack.host_per_micro_batch_s : 0.0;
  StageResult st;
  // Optimizer step over the parameters this GPU updates.
  const StageParamCount params = StageParamsOf(*sl.cost, u, cs, layers, first, last);
  const double stage_params_sharded = cs.sharded_optimizer
                                          ? params.dense / cs.shard + params.expert / cs.expert_shard
                                          : params.dense + params.expert;
  // Plus what runs over the whole local gradient whatever the sharding
  // (stack.unsharded_step_bytes_per_param; 0 adds nothing, bit for bit).
  st.optimizer = (stage_params_sharded * d.stack.optimizer_bytes_per_param +
                  (params.dense + params.expert) * d.stack.unsharded_step_bytes_per_param) /
                 d.lcm.rates.hbm_Bps;

  st.per_mb = p.f_mid.time + p.b_mid.time + p2p_exposed_mb + p2p_slowed_mb + host_mb;
  st.fwd_mb = p.f_mid.time;
  st.bwd_mb = p.b_mid.time;
  // Zero bubble: W runs the weight-gradient GEMMs (StageUnits::wgrad) and
  // sends nothing; the forward pass carries the host wait and the
  // activation's send (blocking: no overlap without interleaving).
  const UnitRuns& w = su.wgrad;
  st.wgrad_mb = std::min(p.b_mid.time, (w.has_first ? w.first.compute : 0.0) + w.count * w.body.compute +
                                           (w.has_last ? w.last.compute : 0.0));
  st.fwd_side_mb = host_mb + (cs.pp > 1 && !last ? comm.p2p : 0.0);
  st.ends_fwd_mb = (first ? su.fwd.first.compute : 0.0) + (last ? su.fwd.last.compute : 0.0);
  st.ends_bwd_mb = (first ? su.bwd.first.compute : 0.0) + (last ? su.bwd.last.compute : 0.0);
  st.p2p_hidden_mb = p2p_mb - p2p_exposed_mb;
  st.extra = once.f.time + once.b.time + su.step_end + st.optimizer;
  if (per_chunk || cs.v > 1) {
    // Interleaved: the chunks' collectives go out with each chunk's first
    // forward and last backward (or between passes, PerChunkDeltas), and the
    // closed form's fill of (pp − 1)/v stages does not say which of those
    // passes it runs through: all of it after the last backward.
    st.extra_after = st.extra;
  } else {
    // The first forward waits for and is slowed by its gathers; the last
    // backward's kernels are slowed beside its reductions, whose tail after
    // them runs beside the upstream stages' drain (the gradient's send does
    // not wait for it: another stream and communicator).
    // Zero bubble: the reductions follow the weight-gradient passes, which
    // fill the drain's bubbles rather than run on it.
    const double first_fwd = std::max(0.0, p.f_first_waited.time - p.f_mid.time);
    const bool drain_reduces = !zero_bubble;
    const double last_bwd = drain_reduces ? std::max(0.0, once.b.time - once.b.exposed) : 0.0;
    st.extra_on_passes = first_fwd + last_bwd;
    st.extra_after = once.b.time - last_bwd + su.step_end + st.optimizer;
  }
  st.kernels = su.kernels_mb.Scaled(m);
  st.interference =
      m * (p.f_mid.interference + p.b_mid.interference + su.cp_slowed_mb + p2p_slowed_mb) + once.f.interference +
      once.b.interference;
  st.compute = st.kernels.Total() + st.interference + st.optimizer;
  st.matmul = st.kernels.Matmul() + st.interference;
  st.memory = st.compute - st.matmul;
  const double exposed_mb = p.f_mid.exposed + p.b_mid.exposed + su.blocking_mb + p2p_exposed_mb;
  st.exposed = m * exposed_mb + once.f.exposed + once.b.exposed + su.step_end;
  // a2a+p2p, and torch's all-gather loop (its last dK,dV exchange blocks):
  // the ring's steps beside their blocks, the rest in full.
  const int cp_steps = CpRingSteps(c, d.stack);
  const bool cp_mixed = c.cp > 1 && cp_steps > 1 && (c.CpA2aSize() > 1 || c.CpRingSize() != cp_steps);
  DimensionTotals(su, p, once, *sl.comm, m, layers, p2p_sent_mb, p2p_exposed_mb, c.cp > 1 && cp_steps == 1, cp_mixed,
                  st);
  return st;
}

}  // namespace

const std::vector<int>& StageLayerSplit(const EvaluatorData& d, const ParallelConfig& c) {
  thread_local std::vector<int> explicit_layers;
  thread_local SlotMemo<StageSplitKey, std::vector<int>, 16> split_memo;
  if (c.pp_layers.empty()) {
    return split_memo.Get(StageSplitKey{{d.kernel_id, static_cast<uint64_t>(c.pp)}},
                          [&] {
                            // The stack decides a split the config leaves open (kernel_id covers the stack).
                            if (d.stack.pp_balance_by_compute)
                              return NanotronBalancedStageLayers(d.model, c.pp, d.stack.pp_balance_close_at_threshold)
                                  .layers;
                            return c.StageLayers(d.model);
                          });
  }
  explicit_layers = c.StageLayers(d.model);
  return explicit_layers;
}

std::vector<StageKinds> CountStageKinds(const ModelSpec& model, const std::vector<int>& stage_layers, int vpp) {
  const int pp = static_cast<int>(stage_layers.size());
  std::vector<StageKinds> out(pp, StageKinds{});
  // Interleaved: the model's layers through the pp·vpp chunks, chunk j on
  // stage j mod pp (Megatron's virtual pipeline, InterleavedModelLayers);
  // otherwise contiguous stages.
  if (vpp > 1) {
    const std::vector<std::vector<int64_t>> layers = InterleavedModelLayers(stage_layers, vpp);
    for (int s = 0; s < pp; ++s) {
      for (int64_t i : layers[s]) ++out[s][model.LayerKindOf(i)];
    }
    return out;
  }
  int64_t i = 0;
  for (int s = 0; s < pp; ++s) {
    for (int n = 0; n < stage_layers[s]; ++n, ++i) ++out[s][model.LayerKindOf(i)];
  }
  return out;
}

namespace {

// An explicit split (pp_layers) of up to 16 stages as 16-bit layer counts,
// with the kernel id (the model) and vpp; false when it does not fit (such a
// split is counted on every call).
using ExplicitKindsKey = WordKey<6>;
bool MakeExplicitKindsKey(uint64_t kernel_id, int vpp, const std::vector<int>& stage_layers, ExplicitKindsKey* key) {
  if (stage_layers.size() > 16) return false;
  key->w = {kernel_id, Pack(static_cast<int>(stage_layers.size()), vpp), 0, 0, 0, 0};
  for (size_t s = 0; s < stage_layers.size(); ++s) {
    const int n = stage_layers[s];
    if (n < 0 || n > 0xFFFF) return false;
    key->w[2 + s / 4] |= static_cast<uint64_t>(n) << (16 * (s % 4));
  }
  return true;
}

}  // namespace

const std::vector<StageKinds>& StageKindSplit(const EvaluatorData& d, const ParallelConfig& c,
                                              const std::vector<int>& stage_layers) {
  static const std::vector<StageKinds> none;
  thread_local std::vector<StageKinds> explicit_kinds;
  thread_local SlotMemo<StageSplitKey, std::vector<StageKinds>, 16> memo;
  // The planner's ends-lighter splits are explicit: the memory and the
  // stages' times of one config ask for the same counts, and configs that
  // differ in tp, dp or recompute share them.
  thread_local SlotMemo<ExplicitKindsKey, std::vector<StageKinds>, 16> explicit_memo;
  if (!d.lcm.several_kinds) return none;
  if (c.pp_layers.empty()) {
    return memo.Get(StageSplitKey{{d.kernel_id, Pack(c.pp, c.vpp)}},
                    [&] { return CountStageKinds(d.model, stage_layers, c.vpp); });
  }
  ExplicitKindsKey key;
  if (MakeExplicitKindsKey(d.kernel_id, c.vpp, stage_layers, &key)) {
    return explicit_memo.Get(key, [&] { return CountStageKinds(d.model, stage_layers, c.vpp); });
  }
  explicit_kinds = CountStageKinds(d.model, stage_layers, c.vpp);
  return explicit_kinds;
}

void TimeStages(const EvaluatorData& d, const ParallelConfig& c, const ConfigShape& cs, const Units& u,
                const TimedComm& comm, const std::vector<int>& stage_layers, StagePlan* out, const KeptLayers& kept) {
  out->shapes.clear();
  out->shape_of.resize(cs.pp);
  out->zero_bubble = ZeroBubbleApplies(c.schedule, cs.pp, cs.v);
  const std::vector<StageKinds>& stage_kinds = StageKindSplit(d, c, stage_layers);
  static const StageKinds kOneKind{};
  const bool several = !stage_kinds.empty();
  thread_local std::vector<std::vector<int>> ranks;   // per shape: its stages
  for (auto& r : ranks) r.clear();
  for (int s = 0; s < cs.pp; ++s) {
    const bool first = s == 0, last = s == cs.pp - 1;
    const int layers = stage_layers[s];
    const StageKinds& kinds = stage_kinds.empty() ? kOneKind : stage_kinds[s];
    int same = -1;
    for (int q = 0; q < static_cast<int>(out->shapes.size()) && same < 0; ++q) {
      const StageShape& shape = out->shapes[q];
      if (shape.layers == layers && shape.first == first && shape.last == last && (!several || shape.kinds == kinds)) same = q;
    }
    if (same < 0) {
      same = static_cast<int>(out->shapes.size());
      out->shapes.push_back(StageShape{layers, first, last, kinds, StageResult{}});
      if (ranks.size() < out->shapes.size()) ranks.resize(out->shapes.size());
    }
    ranks[same].push_back(s);
    out->shape_of[s] = same;
  }
  for (size_t q = 0; q < out->shapes.size(); ++q) {
    StageShape& shape = out->shapes[q];
    shape.t = TimeShape(d, c, cs, u, comm, shape.kinds, shape.layers, shape.first, shape.last, kept, ranks[q]);
  }
}

namespace {

// The pipeline's middle micro-batches with unequal chunks: chunk c of stage
// s takes its layers' share of the stage's passes, the embedding (chunk 0
// of the first stage) and LM head (chunk v − 1 of the last) where they sit,
// and an equal share of the stage's per-micro-batch rest (p2p, host), as one
// pass of 2·v.
double SplitChunkPipelineSeconds(const StagePlan& plan, const ConfigShape& cs) {
  thread_local std::vector<double> fwd, bwd;
  fwd.assign(static_cast<size_t>(cs.pp) * cs.v, 0.0);
  bwd.assign(fwd.size(), 0.0);
  for (int s = 0; s < cs.pp; ++s) {
    const StageResult& t = plan.Of(s);
    const StageShape& shape = plan.shapes[plan.shape_of[s]];
    const std::vector<int> chunks = ChunkLayers(shape.layers, cs.v);
    const double rest = (t.per_mb - t.fwd_mb - t.bwd_mb) / (2.0 * cs.v);
    const int ends_chunk = shape.first ? 0 : cs.v - 1;
    for (int c = 0; c < cs.v; ++c) {
      const double share = shape.layers > 0 ? static_cast<double>(chunks[c]) / shape.layers : 1.0 / cs.v;
      const bool ends = c == ends_chunk;
      fwd[s * cs.v + c] = (t.fwd_mb - t.ends_fwd_mb) * share + (ends ? t.ends_fwd_mb : 0.0) + rest;
      bwd[s * cs.v + c] = (t.bwd_mb - t.ends_bwd_mb) * share + (ends ? t.ends_bwd_mb : 0.0) + rest;
    }
  }
  return InterleavedPipelineSeconds(fwd, bwd, cs.pp, cs.m, cs.v);
}

}  // namespace

double ZeroBubblePipelineSeconds(const double* f, const double* b, const double* w, int pp, int m, int crit) {
  const int c = crit;
  double t = m * (f[c] + b[c] + w[c]);
  for (int s = 0; s < pp; ++s) {
    if (s != c) t += f[s];
  }
  for (int s = c + 1; s < pp; ++s) t += b[s] - std::min({w[s], f[s], b[s]});
  double up = 0, tail = 0;
  for (int s = c - 1; s >= 0; --s) {
    up += b[s];
    tail = std::max(tail, up + (s + 1) * w[s]);
  }
  t += std::max(0.0, tail - (c + 1) * w[c]);
  if (m < pp) t += (pp - m) * w[c];
  return t;
}

PipelineStep ComposePipeline(const StagePlan& plan, const ConfigShape& cs) {
  thread_local std::vector<double> per_mb;
  thread_local std::vector<int> layers;
  per_mb.resize(cs.pp);
  layers.resize(cs.pp);
  int crit = 0;
  double extra_max = 0, rest_max = 0;
  for (int s = 0; s < cs.pp; ++s) {
    per_mb[s] = plan.Of(s).per_mb;
    layers[s] = plan.shapes[plan.shape_of[s]].layers;
    if (plan.Of(s).per_mb > plan.Of(crit).per_mb) crit = s;
    extra_max = std::max(extra_max, plan.Of(s).extra);
    rest_max = std::max(rest_max, plan.Of(s).extra_after);
  }
  double fill_p2p = 0, fill_once = 0;
  for (int s = 0; s < cs.pp; ++s) {
    if (s == crit) continue;
    fill_p2p += plan.Of(s).p2p_hidden_mb;
    fill_once += plan.Of(s).extra_on_passes;
  }
  // One stage: its additions in turn (bit for bit extra).
  const double once = cs.pp == 1 ? extra_max : fill_once + plan.Of(crit).extra_on_passes + rest_max;
  // Unequal chunks, or unequal stages (a critical stage's closed form
  // charges every stage its passes): replay the interleaved order.
  const bool unequal = std::any_of(layers.begin(), layers.end(), [&](int n) { return n != layers[0]; });
  const bool split = cs.pp > 1 && cs.v > 1 && cs.m % cs.pp == 0 && (unequal || HasSplitChunks(layers, cs.v));
  double pipeline = 0;
  if (plan.zero_bubble) {
    thread_local std::vector<double> f, b, w;
    f.resize(cs.pp);
    b.resize(cs.pp);
    w.resize(cs.pp);
    for (int s = 0; s < cs.pp; ++s) {
      const StageResult& t = plan.Of(s);
      f[s] = t.fwd_mb + t.fwd_side_mb;
      w[s] = t.wgrad_mb;
      b[s] = t.per_mb - f[s] - w[s];
    }
    pipeline = ZeroBubblePipelineSeconds(f.data(), b.data(), w.data(), cs.pp, cs.m, crit);
  } else {
    pipeline = split ? SplitChunkPipelineSeconds(plan, cs) : PipelineSeconds(per_mb.data(), cs.pp, cs.m, cs.v);
  }
  return PipelineStep{pipeline + fill_p2p / std::max(1, cs.v) + once, crit};
}

}  // namespace parasim
