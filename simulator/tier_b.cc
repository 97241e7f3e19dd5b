#include "simulator/tier_b.h"

namespace parasim::simulator {

void TimedCollectives::AddCollective(TaskGraph& graph, int, const StageLanes& lanes, const WorkloadCollective& coll,
                                     const ActivitySpec& spec, std::span<const int> streams,
                                     std::vector<int32_t>& lane_ops) {
  ActivitySpec timed = spec;
  timed.duration_s = coll.duration.si();
  for (size_t lane = 0; lane < lanes.ranks.size(); ++lane) lane_ops[lane] = graph.AddOp(streams[lane], timed);
}

int32_t TimedCollectives::AddSend(TaskGraph& graph, int, int, const StageLanes& from_lanes,
                                  std::span<const int> streams, double seconds, const ActivitySpec& spec) {
  ActivitySpec timed = spec;
  timed.kind = WorkKind::kComm;
  timed.duration_s = seconds;
  int32_t base = -1;
  for (size_t lane = 0; lane < from_lanes.ranks.size(); ++lane) {
    int32_t op = graph.AddOp(streams[lane], timed);
    if (lane == 0) base = op;
  }
  return base;
}

}  // namespace parasim::simulator
