// The step schedule NCCL runs for one collective, as tier C replays it
// (DESIGN.md §3): how many lock-step steps, which hops every step uses, and
// the share of the collective model's time each step takes.
//
//   Ring AllGather / ReduceScatter: n − 1 steps, AllReduce 2(n − 1)
//   (ReduceScatter then AllGather); in every step each member sends one
//   chunk (size / n) to its ring successor.
//   Tree AllReduce: 2·depth steps (reduce up, broadcast down; depth = g − 1
//   chain hops inside a node + ⌊log2 N⌋ levels of the tree over N nodes, as
//   the collective model's latency counts them); NCCL pipelines chunks
//   through the tree, so in steady state every tree edge, up and down, is
//   busy in every step.
//   NVLS-tree AllReduce: the same tree shape, 2·(1 + ⌊log2 N⌋) steps (one
//   NVLS hop inside a node each way).
//   Everything else (NVLS, CollNet, PAT, AllToAll, send/recv): one step on
//   its traffic pattern (ring hops, or all pairs for AllToAll).
//
// Per step: latency = the model's latency / steps; bandwidth part = the
// model's bandwidth time / steps. So the schedule follows the collective
// model's calibration (protocol, channels, per-hop latency, jitter pace),
// and the sum over steps is the model's time when nothing contends.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <utility>
#include <vector>

#include "cost_model/collective_cost.h"
#include "topology/group_path.h"

namespace parasim::simulator {

enum class ScheduleShape : uint8_t {
  kRing,       // each member to its ring successor
  kTree,       // chain inside each node + binary tree over nodes, both directions
  kAllToAll,   // every member to every other
};
inline constexpr int kNumScheduleShapes = 3;

struct CollectiveSchedule {
  ScheduleShape shape = ScheduleShape::kRing;
  int steps = 1;
  double latency_fraction = 0;   // latency / time of the model's estimate, in [0, 1]
  CollectiveAlgo algo = CollectiveAlgo::kRing;
};

// Lock-step steps of a ring collective over n ranks: AllReduce 2(n − 1),
// AllGather / ReduceScatter n − 1 (at least 1).
int RingStepCount(CollectiveOp op, int n);
// Steps of a tree AllReduce: 2·((g − 1) + ⌊log2 nodes⌋), at least 1.
int TreeStepCount(int ranks_per_node, int nodes);

// The schedule of `op` given the model's estimate `cost` on `path`.
CollectiveSchedule PlanSchedule(CollectiveOp op, const CollectiveCost& cost, const GroupPath& path);

// The (from, to) GPU hops one step of `shape` uses over `members` (in ring
// order); `domain_of` maps a GPU to its NVLink domain (node).
void AppendStepHops(ScheduleShape shape, std::span<const int> members, const std::function<int(int)>& domain_of,
                    std::vector<std::pair<int, int>>& out);

}  // namespace parasim::simulator
