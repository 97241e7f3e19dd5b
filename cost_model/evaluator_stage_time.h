// Tier-A pass 3: per-stage time. Each stage's units ([embedding] + layers +
// [LM head]) with their communication go through the overlap rules
// (overlap.h) for a middle micro-batch, the first (once-per-step gathers) and
// the last (once-per-step reductions); the stages then compose into the
// pipeline's step time. Stages of the same shape (layers, first, last) time
// the same, so each shape is timed once.
#pragma once

#include <array>
#include <vector>

#include "cost_model/evaluator_comm.h"
#include "cost_model/evaluator_context.h"

namespace parasim {

struct StageResult {
  double per_mb = 0;              // fwd + bwd + p2p of a middle micro-batch
  double fwd_mb = 0, bwd_mb = 0;  // of it, the forward and the backward passes
  double ends_fwd_mb = 0, ends_bwd_mb = 0;   // of those, the embedding's and LM head's kernels
  double wgrad_mb = 0;            // of bwd_mb: zero bubble's weight-gradient (W) pass
  double fwd_side_mb = 0;         // of per_mb beyond the passes: what goes with the forward (host, its send)
  double p2p_hidden_mb = 0;       // of its p2p, what overlap_p2p_comm hides (a mean over the step)
  double extra = 0;               // once-per-step additions (first gathers, last reductions, step end, optimizer)
  double extra_on_passes = 0;     // of extra: what lengthens the first forward and the last backward's kernels
  double extra_after = 0;         // of extra: what follows the last backward (reductions' tail, step end, optimizer)
  double compute = 0;             // kernel time per step incl. interference and optimizer
  double exposed = 0;             // exposed comm per step
  double comm = 0;                // comm time per step (all streams)
  double matmul = 0, memory = 0;  // power-state split of `compute`
  KernelSeconds kernels;          // per step
  double interference = 0, optimizer = 0;
  std::array<double, kNumDims> dim_total{}, dim_exposed{};
};

// The timing of one stage shape, shared by the stages of that shape.
struct StageShape {
  int layers = 0;
  bool first = false, last = false;
  StageKinds kinds{};   // all zero for a model of one layer kind
  StageResult t;
};

struct StagePlan {
  std::vector<StageShape> shapes;
  std::vector<int> shape_of;   // per stage: index into shapes
  bool zero_bubble = false;    // schedule=zb-h1: the backward splits into B and W
  const StageResult& Of(int stage) const { return shapes[shape_of[stage]].t; }
};

struct PipelineStep {
  double step_s = 0;
  int critical = 0;   // the stage with the longest middle micro-batch (first of equals)
};

// Layers per stage: explicit pp_layers as given; otherwise the stack's rule
// (stack.pp_balance_by_compute: nanotron's compute balance, else
// ParallelConfig::StageLayers), memoized per model, stack and pp. Valid
// until the next call on this thread.
const std::vector<int>& StageLayerSplit(const EvaluatorData& d, const ParallelConfig& c);

// Layers of each kind per stage (empty for a model of one kind): the
// stages' layer ranges in model order, or Megatron's interleaved chunks with
// vpp > 1. Memoized like StageLayerSplit; valid until the next call on this thread.
std::vector<StageKinds> CountStageKinds(const ModelSpec& model, const std::vector<int>& stage_layers, int vpp);
const std::vector<StageKinds>& StageKindSplit(const EvaluatorData& d, const ParallelConfig& c,
                                              const std::vector<int>& stage_layers);

// Partial full recompute (recompute=full, recompute_layers < a stage's
// layers): the kept layers' costs, as recompute=none, beside the config's
// own (recomputed) units. A stage's mean layer weights the two by their counts.
struct KeptLayers {
  const Units* units = nullptr;
  const TimedComm* comm = nullptr;
};

// Times every stage shape of the config into `out` (reused between calls).
void TimeStages(const EvaluatorData& d, const ParallelConfig& c, const ConfigShape& cs, const Units& u,
                const TimedComm& comm, const std::vector<int>& stage_layers, StagePlan* out,
                const KeptLayers& kept = {});

// The step: the pipeline over the stages' middle micro-batches plus the
// once-per-step additions. The fill and drain (the other stages' share)
// keep their p2p in full: each hop waits for the tensor it carries. Without
// interleaving they run through each other stage's first forward and last
// backward, so each stage's additions on those passes (extra_on_passes: its
// gathers' wait and slowdown, its last backward slowed beside its
// reductions) lengthen them; the critical stage adds its own, and the step
// ends with the largest extra_after (interleaved: all of extra).
// Interleaved stages whose layers split into unequal chunks
// (HasSplitChunks): the replay of the schedule's order with each chunk's
// passes (InterleavedPipelineSeconds), whose fill and drain the longest
// chunks set; equal chunks keep the closed form (overlap.h PipelineSeconds).
// Zero bubble (schedule=zb-h1, zero_bubble): the same additions; the
// pipeline is ZeroBubblePipelineSeconds over each stage's F, B and W.
PipelineStep ComposePipeline(const StagePlan& plan, const ConfigShape& cs);

// ZB-H1 as torch.distributed.pipelining's ScheduleInterleavedZeroBubble runs
// it with one stage per rank (and simulator/pipeline_schedule.cc replays):
// 1F1B's order of F and B (input gradient), stage s running W(k) after
// B(k + s). Per stage the passes of a middle micro-batch with their sends;
// `crit`: the stage with the largest f + b + w. Stage c = crit runs its m
// micro-batches; every other stage adds its forward (the fill); a later
// stage (s > c) adds max(F + B − W, F, B) − F (its first backward's round
// trip less the W its backlog hides, Qi et al. 2023 §3: (p − 1)(F + B − W)
// for equal stages); an earlier stage (s < c) ends on the last B's way up
// and its s + 1 W passes, beyond c's own c + 1; with m < p only m − 1 of a
// stage's p − 1 W passes fill the bubble. Equal stages: exact; a heavier
// last stage: exact (pipeline_schedule_test replays both).
double ZeroBubblePipelineSeconds(const double* f, const double* b, const double* w, int pp, int m, int crit);

}  // namespace parasim
