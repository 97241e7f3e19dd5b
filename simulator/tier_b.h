// Tier B's collectives: one op per lane whose duration is the workload's
// (the collective model's time on the placed group), and pipeline sends of
// the workload's SendRecv time.
#pragma once

#include "simulator/step_builder.h"

namespace parasim::simulator {

class TimedCollectives : public CollectiveFactory {
 public:
  void AddCollective(TaskGraph& graph, int stage, const StageLanes& lanes, const WorkloadCollective& coll,
                     const ActivitySpec& spec, std::span<const int> streams, std::vector<int32_t>& lane_ops) override;
  int32_t AddSend(TaskGraph& graph, int from_stage, int to_stage, const StageLanes& from_lanes,
                  std::span<const int> streams, double seconds, const ActivitySpec& spec) override;
};

}  // namespace parasim::simulator
