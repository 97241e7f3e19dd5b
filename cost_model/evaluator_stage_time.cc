#include "cost_model/evaluator_stage_time.h"

#include <algorithm>

#include "cost_model/eval_memo.h"
#include "cost_model/overlap.h"

namespace parasim {

namespace {

// Layers per stage of a balanced split (ParallelConfig::StageLayers without
// pp_layers): kernel id (the model), pp.
using StageSplitKey = WordKey<2>;

// One overlap phase of a stage shape (overlap.h), exactly its inputs:
// configs that differ only in step-level collectives (ddp vs zero1) or in
// the schedule share their middle micro-batch phases.
using PhaseKey = WordKey<12>;
PhaseKey MakePhaseKey(bool forward, const UnitRuns& r, int depth, double interference) {
  PhaseKey k;
  k.w = {static_cast<uint64_t>(forward) | static_cast<uint64_t>(r.has_first) << 1 |
             static_cast<uint64_t>(r.has_last) << 2,
         Pack(r.count, depth), DoubleBits(interference),
         DoubleBits(r.first.compute), DoubleBits(r.first.gather), DoubleBits(r.first.reduce),
         DoubleBits(r.body.compute), DoubleBits(r.body.gather), DoubleBits(r.body.reduce),
         DoubleBits(r.last.compute), DoubleBits(r.last.gather), DoubleBits(r.last.reduce)};
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
  double blocking_mb = 0;
  double tp_hidden_mb = 0;   // TP time hidden under GEMMs (stack.tp_comm_overlap)
  std::array<double, kNumDims> dim_mb{}, dim_step{};
  double gather_step = 0, reduce_step = 0, step_end = 0;

  void Add(const UnitCost& uc, const UnitComm& cm, int copies, OverlapUnit& f_unit, OverlapUnit& b_unit) {
    const double f = uc.fwd.Total() + cm.fwd_blocking + cm.cp_exposed_fwd;
    const double b = uc.bwd.Total() + cm.bwd_blocking + cm.cp_exposed_bwd;
    f_unit = OverlapUnit{f, cm.gather_mb, 0};
    b_unit = OverlapUnit{b, cm.bwd_gather_mb, cm.reduce_mb};
    kernels_mb += (KernelSeconds(uc.fwd) += uc.bwd).Scaled(copies);
    blocking_mb += copies * (cm.fwd_blocking + cm.bwd_blocking + cm.cp_exposed_fwd + cm.cp_exposed_bwd);
    tp_hidden_mb += copies * cm.tp_hidden;
    for (int k = 0; k < kNumDims; ++k) {
      dim_mb[k] += copies * cm.dim_total_mb[k];
      dim_step[k] += copies * cm.dim_total_step[k];
    }
    gather_step += copies * cm.gather_step;
    reduce_step += copies * cm.reduce_step;
    step_end += copies * cm.step_end;
  }
};

StageUnits CollectUnits(const Units& u, const TimedComm& comm, int layers, bool first, bool last) {
  StageUnits su;
  su.fwd.has_first = su.bwd.has_first = first;
  su.fwd.has_last = su.bwd.has_last = last;
  su.fwd.count = su.bwd.count = layers;
  if (first) su.Add(u.emb, comm.emb, 1, su.fwd.first, su.bwd.first);
  su.Add(u.layer, comm.layer, layers, su.fwd.body, su.bwd.body);
  if (last) su.Add(u.head, comm.head, 1, su.fwd.last, su.bwd.last);
  return su;
}

// The four overlap phases of a stage: middle micro-batch forward and
// backward, the first forward (with the once-per-step gathers) and the last
// backward (with the once-per-step reductions).
struct StagePhases {
  PhaseResult f_mid, b_mid, f_first, b_last;
};

StagePhases RunPhases(const StageUnits& su, const TimedComm& comm, int prefetch, bool first, bool last) {
  StagePhases p;
  p.f_mid = Forward(su.fwd, prefetch, comm.interference);
  p.b_mid = Backward(su.bwd, comm.interference);
  p.f_first = p.f_mid;
  p.b_last = p.b_mid;
  if (su.gather_step > 0) {
    UnitRuns scratch = su.fwd;
    if (first) scratch.first.gather += comm.emb.gather_step;
    scratch.body.gather += comm.layer.gather_step;
    if (last) scratch.last.gather += comm.head.gather_step;
    p.f_first = Forward(scratch, prefetch, comm.interference);
  }
  if (su.reduce_step > 0) {
    UnitRuns scratch = su.bwd;
    if (first) scratch.first.reduce += comm.emb.reduce_step;
    scratch.body.reduce += comm.layer.reduce_step;
    if (last) scratch.last.reduce += comm.head.reduce_step;
    p.b_last = Backward(scratch, comm.interference);
  }
  return p;
}

// Per-dimension totals and exposure of a stage over the step.
void DimensionTotals(const StageUnits& su, const StagePhases& p, const TimedComm& comm, int m, int layers,
                     double p2p_mb, bool c_cp_blocking, StageResult& st) {
  const double fsdp_exposed = m * (p.f_mid.exposed + p.b_mid.exposed) + (p.f_first.exposed - p.f_mid.exposed) +
                              (p.b_last.exposed - p.b_mid.exposed) + su.step_end;
  for (int k = 0; k < kNumDims; ++k) st.dim_total[k] = m * su.dim_mb[k] + su.dim_step[k];
  st.dim_total[DimIndex(ParallelDim::kPp)] += m * p2p_mb;
  st.dim_exposed[DimIndex(ParallelDim::kDp)] = fsdp_exposed;
  st.dim_exposed[DimIndex(ParallelDim::kTp)] = st.dim_total[DimIndex(ParallelDim::kTp)] - m * su.tp_hidden_mb;
  st.dim_exposed[DimIndex(ParallelDim::kEp)] = st.dim_total[DimIndex(ParallelDim::kEp)];
  // CP: the ring's steps beyond their attention blocks; the blocking kinds (a2a, allgather) in full.
  st.dim_exposed[DimIndex(ParallelDim::kCp)] =
      c_cp_blocking ? st.dim_total[DimIndex(ParallelDim::kCp)]
                    : m * (comm.layer.cp_exposed_fwd + comm.layer.cp_exposed_bwd) * layers;
  st.dim_exposed[DimIndex(ParallelDim::kPp)] = m * p2p_mb;
  st.comm = 0;
  for (int k = 0; k < kNumDims; ++k) st.comm += st.dim_total[k];
}

StageResult TimeShape(const EvaluatorData& d, const ParallelConfig& c, const ConfigShape& cs, const Units& u,
                      const TimedComm& comm, int layers, bool first, bool last) {
  const StageUnits su = CollectUnits(u, comm, layers, first, last);
  const StagePhases p = RunPhases(su, comm, c.prefetch, first, last);
  const int m = cs.m;
  const double p2p_mb = cs.pp > 1 ? 2.0 * cs.v * comm.p2p : 0.0;
  // Host-synchronous pipeline p2p: every pass starts from an empty GPU queue,
  // so the host's per-micro-batch work is not hidden behind earlier kernels.
  const double host_mb = cs.pp > 1 && d.stack.pp_host_synchronous ? d.stack.host_per_micro_batch_s : 0.0;
  StageResult st;
  // Optimizer step over the parameters this GPU updates.
  const StageParamCount params = StageParamsOf(u, cs, layers, first, last);
  const double stage_params_sharded = cs.sharded_optimizer
                                          ? params.dense / cs.shard + params.expert / cs.expert_shard
                                          : params.dense + params.expert;
  st.optimizer = stage_params_sharded * d.stack.optimizer_bytes_per_param / d.lcm.rates.hbm_Bps;

  st.per_mb = p.f_mid.time + p.b_mid.time + p2p_mb + host_mb;
  st.extra = (p.f_first.time - p.f_mid.time) + (p.b_last.time - p.b_mid.time) + su.step_end + st.optimizer;
  st.kernels = su.kernels_mb.Scaled(m);
  st.interference = m * (p.f_mid.interference + p.b_mid.interference) +
                    (p.f_first.interference - p.f_mid.interference) + (p.b_last.interference - p.b_mid.interference);
  st.compute = st.kernels.Total() + st.interference + st.optimizer;
  st.matmul = st.kernels.Matmul() + st.interference;
  st.memory = st.compute - st.matmul;
  const double exposed_mb = p.f_mid.exposed + p.b_mid.exposed + su.blocking_mb + p2p_mb;
  st.exposed = m * exposed_mb + (p.f_first.exposed - p.f_mid.exposed) + (p.b_last.exposed - p.b_mid.exposed) +
               su.step_end;
  DimensionTotals(su, p, comm, m, layers, p2p_mb, c.cp > 1 && c.cp_comm != CpComm::kP2p, st);
  return st;
}

}  // namespace

const std::vector<int>& StageLayerSplit(const EvaluatorData& d, const ParallelConfig& c) {
  thread_local std::vector<int> explicit_layers;
  thread_local SlotMemo<StageSplitKey, std::vector<int>, 16> split_memo;
  if (c.pp_layers.empty()) {
    return split_memo.Get(StageSplitKey{{d.kernel_id, static_cast<uint64_t>(c.pp)}},
                          [&] { return c.StageLayers(d.model); });
  }
  explicit_layers = c.StageLayers(d.model);
  return explicit_layers;
}

void TimeStages(const EvaluatorData& d, const ParallelConfig& c, const ConfigShape& cs, const Units& u,
                const TimedComm& comm, const std::vector<int>& stage_layers, StagePlan* out) {
  out->shapes.clear();
  out->shape_of.resize(cs.pp);
  for (int s = 0; s < cs.pp; ++s) {
    const bool first = s == 0, last = s == cs.pp - 1;
    const int layers = stage_layers[s];
    int same = -1;
    for (int q = 0; q < static_cast<int>(out->shapes.size()) && same < 0; ++q) {
      const StageShape& shape = out->shapes[q];
      if (shape.layers == layers && shape.first == first && shape.last == last) same = q;
    }
    if (same < 0) {
      same = static_cast<int>(out->shapes.size());
      out->shapes.push_back(StageShape{layers, first, last, TimeShape(d, c, cs, u, comm, layers, first, last)});
    }
    out->shape_of[s] = same;
  }
}

PipelineStep ComposePipeline(const StagePlan& plan, const ConfigShape& cs) {
  thread_local std::vector<double> per_mb;
  per_mb.resize(cs.pp);
  int crit = 0;
  double extra_max = 0;
  for (int s = 0; s < cs.pp; ++s) {
    per_mb[s] = plan.Of(s).per_mb;
    if (plan.Of(s).per_mb > plan.Of(crit).per_mb) crit = s;
    extra_max = std::max(extra_max, plan.Of(s).extra);
  }
  return PipelineStep{PipelineSeconds(per_mb.data(), cs.pp, cs.m, cs.v) + extra_max, crit};
}

}  // namespace parasim
