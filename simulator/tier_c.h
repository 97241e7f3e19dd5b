// Tier C's collectives: every rank of a group takes part in one group op (it
// starts when the last member is ready); its time splits into a latency part
// (fixed) and a bandwidth part that runs as one max-min variable over the
// links of the group's ring on the topology graph (a ring's hops move in
// lock step, so one pipelined flow per hop, coupled: SimGrid-style element
// weights count hops per link). The bandwidth part's nominal time is the
// workload's; the engine stretches it by nominal rate / actual rate, where
// the nominal rate is the variable's max-min rate with every symmetric group
// of the same kind running at once (the scenario the collective model
// prices). So tiers B and C agree when nothing else contends, and TP, DP, PP
// and background traffic slow each other where they share links.
//
// Two schedules (DESIGN.md §3): step-level (the default up to
// kTierCStepMaxGpus) replays each collective as its NCCL step schedule
// (simulator/collective_schedule.h): ring AllGather/ReduceScatter n−1 steps,
// AllReduce 2(n−1), tree AllReduce 2·depth, each step a latency share and
// one flow per link class (NVLink hops, network hops) of every member's hop
// that step, merged since the hops of a step are symmetric; coarse (up to
// kTierCCoarseMaxGpus) keeps one latency part and one variable per
// collective as described above.
//
// Symmetric work is aggregated (DESIGN.md §3 tier C): a TP group runs its
// blocking collectives in lock step, so it is one lane, standing for its tp
// GPUs (a straggler in it slows the lane); the tp identical copies of every
// other collective (DP, CP, EP, PP, one per TP rank) run at once and are one
// variable over the union of their rings.
//
// A group whose members sit on different stages (the tied embedding's pair
// of stages 0 and pp − 1, SubGroup::ends) is one group op over both stages'
// lanes, made when its first stage issues it: the later stage's member runs
// on a stream of its own (its pp stream is still empty then, and its sends
// must not queue behind the op), and the later stage's issue claims it.
#pragma once

#include <map>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "core/cluster_spec.h"
#include "cost_model/workload.h"
#include "simulator/collective_schedule.h"
#include "simulator/simulate.h"
#include "simulator/step_builder.h"
#include "topology/placement.h"
#include "topology/topology.h"

namespace parasim::simulator {

class FlowCollectives : public CollectiveFactory {
 public:
  // Throws parasim::Error when the cluster cannot be built as a graph.
  // `step_level`: replay step schedules; otherwise one flow set per collective.
  FlowCollectives(const StepWorkload& workload, const ClusterSpec& cluster,
                  std::span<const BackgroundLoad> background, bool step_level = true);

  // GPUs that get a lane: the first GPU of each TP group.
  static std::vector<int> LaneGpus(const ParallelConfig& config, int world);
  // The TP group (GPUs) of each lane GPU.
  const std::vector<int>& TpGroupOf(int lane_gpu) const;

  // Link capacities for the engine: the topology's, less background load.
  const std::vector<double>& link_capacity_Bps() const { return capacity_Bps_; }

  void AddCollective(TaskGraph& graph, int stage, const StageLanes& lanes, const WorkloadCollective& coll,
                     const ActivitySpec& spec, std::span<const int> streams, std::vector<int32_t>& lane_ops) override;
  int32_t AddSend(TaskGraph& graph, int from_stage, int to_stage, const StageLanes& from_lanes,
                  std::span<const int> streams, double seconds, const ActivitySpec& spec) override;

 private:
  // Every group of one (dimension, sub-group): members, and per group the
  // flow set of its ring (added to the graph once, reused by every issue).
  struct GroupSet {
    std::vector<std::vector<int>> members;
    std::vector<int> group_of_gpu;
    std::vector<int32_t> flow_set;     // per group, -1 until added (coarse)
    // Step-level: per schedule shape, per group, the first flow set of its
    // link classes and their count (-1 until added).
    std::vector<int32_t> step_flow_set[kNumScheduleShapes];
    std::vector<int8_t> step_classes[kNumScheduleShapes];
  };
  GroupSet& Groups(ParallelDim dim, SubGroup sub, bool all_to_all);
  void AddRingFlowSets(TaskGraph& graph, GroupSet& set, bool all_to_all, bool tp_dim);
  void AddStepFlowSets(TaskGraph& graph, GroupSet& set, ScheduleShape shape, bool tp_dim);
  void AppendPattern(const std::vector<int>& members, bool all_to_all, std::vector<LinkUse>& out) const;
  // The model's split of one collective: latency fraction, algorithm, steps.
  const CollectiveSchedule& Schedule(const WorkloadCollective& coll, int group_size);
  double LatencyFraction(const WorkloadCollective& coll) { return Schedule(coll, 0).latency_fraction; }
  void AppendRoute(int from_gpu, int to_gpu, std::vector<LinkUse>& out) const;
  void AddStepCollective(TaskGraph& graph, GroupSet& set, int group, const WorkloadCollective& coll,
                         ActivitySpec& a);
  // Cross-stage groups: the stream a later stage's member runs on, and the
  // op an earlier stage made for `gpu`'s issue of `coll` (false: none).
  int CrossStageStream(TaskGraph& graph, int gpu);
  bool ClaimCrossStage(const WorkloadCollective& coll, int gpu, int32_t* op);
  using CrossKey = std::tuple<int, int, double, std::string>;   // op, dim, size, what
  static CrossKey CrossKeyOf(const WorkloadCollective& coll);

  const StepWorkload& workload_;
  const ClusterSpec& cluster_;
  Topology topology_;
  Placement placement_;
  Placement weight_placement_;   // dp groups of dense weights span dp·cp ranks (WeightGroupConfig)
  std::vector<double> capacity_Bps_;
  std::map<std::tuple<int, int, int, bool, int>, GroupSet> groups_;   // (dim, sub.size, .stride, .ends, all-to-all)
  bool step_level_ = true;
  std::map<std::tuple<int, int, int, int, bool, double>, CollectiveSchedule> schedules_;
  std::map<std::pair<int, int>, std::vector<int32_t>> send_flow_sets_;   // (from, to stage) -> per lane
  std::vector<int> lane_of_gpu_;
  // Graph rank of each lane GPU as BuildStepGraphInto numbers them (stage by
  // stage, lanes in ascending GPU order; -1: not a lane), checked per call.
  std::vector<int> rank_of_gpu_;
  std::map<int, int> cross_stream_of_rank_;
  std::map<CrossKey, std::multimap<int, int32_t>> cross_pending_;   // gpu -> op, in issue order
  std::vector<int> member_lanes_;   // scratch
  std::vector<std::vector<int>> tp_groups_;
  std::vector<int> tp_group_of_gpu_;
};

}  // namespace parasim::simulator
