#include "simulator/collective_schedule.h"

#include <algorithm>
#include <cmath>

namespace parasim::simulator {

namespace {
int FloorLog2(int x) {
  int r = 0;
  while (x > 1) {
    x >>= 1;
    ++r;
  }
  return r;
}
}  // namespace

int RingStepCount(CollectiveOp op, int n) {
  return std::max(1, op == CollectiveOp::kAllReduce ? 2 * (n - 1) : n - 1);
}

int TreeStepCount(int ranks_per_node, int nodes) {
  return std::max(1, 2 * (std::max(0, ranks_per_node - 1) + FloorLog2(std::max(1, nodes))));
}

CollectiveSchedule PlanSchedule(CollectiveOp op, const CollectiveCost& cost, const GroupPath& path) {
  CollectiveSchedule s;
  s.algo = cost.algo;
  const double ratio = cost.latency.si() / cost.time.si();
  s.latency_fraction = std::isfinite(ratio) ? std::clamp(ratio, 0.0, 1.0) : 0.0;
  const bool ring_op =
      op == CollectiveOp::kAllGather || op == CollectiveOp::kReduceScatter || op == CollectiveOp::kAllReduce;
  if (op == CollectiveOp::kAllToAll) {
    s.shape = ScheduleShape::kAllToAll;
  } else if (ring_op && cost.algo == CollectiveAlgo::kRing) {
    s.steps = RingStepCount(op, path.ranks);
  } else if (op == CollectiveOp::kAllReduce && cost.algo == CollectiveAlgo::kTree) {
    s.shape = ScheduleShape::kTree;
    s.steps = TreeStepCount(path.ranks_per_node, path.nodes);
  } else if (op == CollectiveOp::kAllReduce && cost.algo == CollectiveAlgo::kNvlsTree) {
    // NVLS inside each node (one switch-reduced hop each way) + the tree
    // over nodes; its NVLink traffic is carried on the chain edges.
    s.shape = ScheduleShape::kTree;
    s.steps = TreeStepCount(2, path.nodes);
  }
  return s;
}

void AppendStepHops(ScheduleShape shape, std::span<const int> m, const std::function<int(int)>& domain_of,
                    std::vector<std::pair<int, int>>& out) {
  const size_t n = m.size();
  if (n < 2) return;
  switch (shape) {
    case ScheduleShape::kRing:
      for (size_t k = 0; k < n; ++k) out.emplace_back(m[k], m[(k + 1) % n]);
      return;
    case ScheduleShape::kAllToAll:
      for (size_t k = 0; k < n; ++k) {
        for (size_t j = 0; j < n; ++j) {
          if (j != k) out.emplace_back(m[k], m[j]);
        }
      }
      return;
    case ScheduleShape::kTree: {
      // Members by node, nodes in order of first appearance.
      std::vector<std::pair<int, std::vector<int>>> nodes;
      for (int gpu : m) {
        const int d = domain_of(gpu);
        auto it = std::find_if(nodes.begin(), nodes.end(), [d](const auto& p) { return p.first == d; });
        if (it == nodes.end()) {
          nodes.push_back({d, {gpu}});
        } else {
          it->second.push_back(gpu);
        }
      }
      for (const auto& [d, gpus] : nodes) {
        for (size_t k = 0; k + 1 < gpus.size(); ++k) {
          out.emplace_back(gpus[k], gpus[k + 1]);
          out.emplace_back(gpus[k + 1], gpus[k]);
        }
      }
      for (size_t i = 1; i < nodes.size(); ++i) {
        const int child = nodes[i].second.front();
        const int parent = nodes[(i - 1) / 2].second.front();
        out.emplace_back(child, parent);
        out.emplace_back(parent, child);
      }
      return;
    }
  }
}

}  // namespace parasim::simulator
