// Lays one training step of a StepWorkload out as a TaskGraph: per pipeline
// stage, the passes of the pipeline schedule (simulator/pipeline_schedule.h),
// each pass the stage's units (embedding, layers, LM head) with their
// compute, blocking TP/SP/EP collectives between compute pieces, CP ring
// steps overlapped with attention blocks, FSDP AllGathers issued `prefetch`
// units ahead, zero3 re-gathers in backward, gradient reductions after each
// unit's backward (per micro-batch or with the last one; chunk by chunk
// under Megatron-Core's interleaved per-chunk sync), pipeline sends, and the
// step-end collectives and optimizer step.
//
// A stage runs on one or more lanes: tier B gives each stage one lane (a
// representative rank), tier C one lane per GPU of the stage. How a
// collective becomes ops (one timed op, or a group op with network flows) is
// the CollectiveFactory's business, so both tiers share this builder.
#pragma once

#include <array>

#include <span>
#include <vector>

#include "cost_model/workload.h"
#include "simulator/task_graph.h"

namespace parasim::simulator {

// The graph ranks of one stage and the GPU each stands for.
struct StageLanes {
  std::vector<int> ranks;   // graph rank per lane
  std::vector<int> gpus;    // GPU (global rank) per lane
};

// Streams of one graph rank.
struct RankStreams {
  int compute = -1, tp = -1, cp = -1, ep = -1, dp = -1, pp = -1;
  int For(ParallelDim dim) const;
};

class CollectiveFactory {
 public:
  virtual ~CollectiveFactory() = default;
  // Adds one issue of `coll` on every lane of `stage` (streams[lane] is the
  // lane's stream for it) with labels `spec` (name, layer, ...); returns in
  // lane_ops[lane] the op of each lane.
  virtual void AddCollective(TaskGraph& graph, int stage, const StageLanes& lanes, const WorkloadCollective& coll,
                             const ActivitySpec& spec, std::span<const int> streams,
                             std::vector<int32_t>& lane_ops) = 0;
  // Adds a pipeline transfer of `seconds` (nominal) from each lane of
  // `from_stage` to the same lane of `to_stage` on the sender's pp stream;
  // lane ops are consecutive, the first is returned.
  virtual int32_t AddSend(TaskGraph& graph, int from_stage, int to_stage, const StageLanes& from_lanes,
                          std::span<const int> streams, double seconds, const ActivitySpec& spec) = 0;
};

struct StepGraph {
  TaskGraph graph;
  int world = 1;                        // GPUs of the job
  std::vector<int> rank_stage;          // per graph rank
  std::vector<int> rank_gpu;            // per graph rank
  std::vector<double> rank_weight;      // GPUs each graph rank stands for
  std::vector<StageLanes> stages;
  std::vector<RankStreams> streams;     // per graph rank
  double interference_slowdown = 0;     // κ = workload comm_interference − 1
  // Per stage and ParallelDim: the collective time the stage's GEMMs hide
  // (WorkloadCollective::hidden of every issue), not scheduled but part of
  // the dimension's total as in tier A.
  std::vector<std::array<double, 5>> stage_hidden_comm;
};

// Builds the step. `stage_gpus[s]` lists the GPUs that get their own graph
// rank on stage s (tier B: one representative; tier C: all of them), with
// `weight` GPUs per graph rank. The workload must be internally consistent
// (as AnalyticalEvaluator::BuildWorkload makes it); violations are bugs
// (InternalError).
StepGraph BuildStepGraph(const StepWorkload& workload, const std::vector<std::vector<int>>& stage_gpus,
                         double weight, CollectiveFactory& factory);
// The same into `out`, reusing its buffers.
void BuildStepGraphInto(const StepWorkload& workload, const std::vector<std::vector<int>>& stage_gpus,
                        double weight, CollectiveFactory& factory, StepGraph& out);

}  // namespace parasim::simulator
