// Tier-A pass 2: the collectives each parallelism issues (comm_plan.h),
// timed on their placed groups (collective_cost.h over group_path.h) and
// folded into what the overlap rules need, with the compute slowdown while
// NCCL runs beside compute. Memoized per thread unless the collectives are
// recorded for the simulator's workload.
#pragma once

#include <array>
#include <vector>

#include "cost_model/evaluator_context.h"
#include "cost_model/workload.h"

namespace parasim {

// A unit's collectives reduced to what the overlap rules need (seconds, per micro-batch).
struct UnitComm {
  double fwd_blocking = 0, bwd_blocking = 0;  // TP / EP / CP a2a, allgather / embedding-head TP (exposed)
  double tp_fwd = 0, tp_bwd = 0;              // of which tensor-parallel (before any GEMM overlap)
  double tp_bwd_reductions = 0;               // of tp_bwd: the backward's own reduce-scatters / all-reduces
  double tp_hidden = 0;                       // TP time hidden under GEMMs net of their slowdown (stack.tp_comm_overlap)
  double cp_exposed_fwd = 0, cp_exposed_bwd = 0, cp_total = 0;
  // CP ring steps beside attention blocks: the blocks' kernel seconds they
  // cover and the extra time the ring's NCCL kernels cost them (interference).
  double cp_covered_fwd = 0, cp_covered_bwd = 0, cp_slowed_fwd = 0, cp_slowed_bwd = 0;
  double gather_mb = 0, gather_step = 0;          // forward gathers (every micro-batch / once)
  double bwd_gather_mb = 0;                       // zero3 re-gather
  double reduce_mb = 0, reduce_step = 0;          // gradient reductions
  double step_end = 0;                            // blocking, after the last micro-batch
  std::array<double, kNumDims> step_end_dim{};    // of which by dimension (all of it exposed)
  // Gathers and reductions that run beside compute: bus bytes and time (all
  // issues), whose ratio is the HBM traffic NCCL adds to the compute's.
  double overlap_bus_bytes = 0, overlap_time = 0;
  std::array<double, kNumDims> dim_total_mb{};    // per micro-batch comm by dimension
  std::array<double, kNumDims> dim_total_step{};  // once per step
};

// The communication of one config, per unit kind.
struct TimedComm {
  UnitComm layer, emb, head;
  // Per layer kind where the model has several (else null); valid until the
  // next TimeCommunication on this thread.
  const std::array<UnitComm, kNumLayerKinds>* kinds = nullptr;
  double p2p = 0;             // one pipeline send (0 without pp)
  double interference = 1;    // compute slowdown factor while a gather or reduction overlaps it
};

// The full collectives with their durations, for the simulator's workload.
struct CommRecord {
  std::vector<WorkloadCollective> layer, emb, head;
  WorkloadCollective pp_send;
};

// What a stage runs, blocking, once per step after its last backward beside
// its units' own collectives: the all-reduce of the gradients every tp rank
// holds whole (comm_plan.h TpReplicatedGradCollective) and the clip-grad-norm
// all-reduce (GradNormCollective), each timed on its placed group. Appends
// them, timed, to `record` when given.
struct StageStepEnd {
  double seconds = 0;
  std::array<double, kNumDims> by_dim{};   // where each is booked
};
StageStepEnd TimeStageStepEnd(const EvaluatorData& d, const ParallelConfig& c, double layers, double moe_layers,
                              bool last, std::vector<WorkloadCollective>* record);

// The stage's layers that route to experts (for the router's gradients).
double StageMoeLayers(const EvaluatorData& d, const StageKinds& kinds, int layers);

// Times the config's collectives; fills `record` when given (and then
// bypasses the memo, which keeps times only).
// Places and times the config's collectives (memoized) without folding
// them: throws exactly where TimeCommunication would (a placement the
// cluster cannot hold), for a caller that needs the verdict, not the times.
void PlaceCommunication(const EvaluatorData& d, const ParallelConfig& c, const ConfigShape& cs, const Units& u);

TimedComm TimeCommunication(const EvaluatorData& d, const ParallelConfig& c, const ConfigShape& cs, const Units& u,
                            CommRecord* record);

}  // namespace parasim
