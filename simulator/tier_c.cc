#include "simulator/tier_c.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "core/check.h"
#include "cost_model/collective_cost.h"
#include "cost_model/comm_plan.h"
#include "simulator/flow_solver.h"

namespace parasim::simulator {

FlowCollectives::FlowCollectives(const StepWorkload& workload, const ClusterSpec& cluster,
                                 std::span<const BackgroundLoad> background, bool step_level)
    : workload_(workload),
      cluster_(cluster),
      topology_(Topology::Build(cluster)),
      placement_(workload.config, workload.world_size),
      weight_placement_(WeightGroupConfig(workload.config), workload.world_size) {
  PARASIM_CHECK(workload.world_size <= topology_.gpu_count(), "job larger than the cluster");
  step_level_ = step_level;
  capacity_Bps_ = topology_.capacity_Bps();
  for (const BackgroundLoad& b : background) {
    for (size_t l = 0; l < capacity_Bps_.size(); ++l) {
      if (topology_.link_class()[l] == b.link_class) capacity_Bps_[l] *= 1.0 - b.fraction;
    }
  }
  lane_of_gpu_.assign(workload.world_size, -1);
  tp_groups_ = placement_.AllGroups(ParallelDim::kTp);
  tp_group_of_gpu_.assign(workload.world_size, -1);
  for (size_t g = 0; g < tp_groups_.size(); ++g) {
    for (int gpu : tp_groups_[g]) tp_group_of_gpu_[gpu] = static_cast<int>(g);
  }
}

std::vector<int> FlowCollectives::LaneGpus(const ParallelConfig& config, int world) {
  Placement placement(config, world);
  std::vector<int> out;
  for (const auto& group : placement.AllGroups(ParallelDim::kTp)) out.push_back(group.front());
  std::sort(out.begin(), out.end());
  return out;
}

const std::vector<int>& FlowCollectives::TpGroupOf(int lane_gpu) const {
  return tp_groups_[tp_group_of_gpu_[lane_gpu]];
}

void FlowCollectives::AppendPattern(const std::vector<int>& m, bool all_to_all, std::vector<LinkUse>& out) const {
  const size_t n = m.size();
  for (size_t k = 0; k < n && n > 1; ++k) {
    if (all_to_all) {
      for (size_t j = 0; j < n; ++j) {
        if (j != k) AppendRoute(m[k], m[j], out);
      }
    } else {
      AppendRoute(m[k], m[(k + 1) % n], out);
    }
  }
}

void FlowCollectives::AppendRoute(int from_gpu, int to_gpu, std::vector<LinkUse>& out) const {
  if (from_gpu == to_gpu) return;
  Route r = topology_.RouteBetween(from_gpu, to_gpu);
  for (int32_t link : r) out.push_back(LinkUse{link, 1.0});
}

FlowCollectives::GroupSet& FlowCollectives::Groups(ParallelDim dim, SubGroup sub, bool all_to_all) {
  auto key = std::make_tuple(static_cast<int>(dim), sub.size, sub.stride, all_to_all ? 1 : 0);
  auto it = groups_.find(key);
  if (it != groups_.end()) return it->second;
  GroupSet set;
  set.members = (dim == ParallelDim::kDp ? weight_placement_ : placement_).AllGroups(dim, sub);
  set.group_of_gpu.assign(workload_.world_size, -1);
  for (size_t g = 0; g < set.members.size(); ++g) {
    for (int gpu : set.members[g]) set.group_of_gpu[gpu] = static_cast<int>(g);
  }
  set.flow_set.assign(set.members.size(), -1);
  return groups_.emplace(key, std::move(set)).first->second;
}

// Ring traffic: member k sends to member k+1 (NCCL rings follow rank order as
// placed); all-to-all: every member to every other. A group led by TP leaders
// carries its tp sibling groups' traffic too (one per TP rank). Nominal rates
// come from one max-min solve of every such variable at once on the
// full-capacity graph.
void FlowCollectives::AddRingFlowSets(TaskGraph& graph, GroupSet& set, bool all_to_all, bool tp_dim) {
  const size_t groups = set.members.size();
  std::vector<std::vector<LinkUse>> uses(groups);
  std::vector<int> sibling;
  for (size_t g = 0; g < groups; ++g) {
    const auto& m = set.members[g];
    if (tp_dim) {
      if (TpGroupOf(m.front()).front() == m.front()) AppendPattern(m, all_to_all, uses[g]);
      continue;
    }
    if (TpGroupOf(m.front()).front() != m.front()) continue;   // a sibling: carried by its leader's group
    const int tp = static_cast<int>(TpGroupOf(m.front()).size());
    for (int t = 0; t < tp; ++t) {
      sibling.clear();
      for (int gpu : m) sibling.push_back(TpGroupOf(gpu)[t]);
      AppendPattern(sibling, all_to_all, uses[g]);
    }
  }
  FlowSolver solver(topology_.capacity_Bps());
  std::vector<int32_t> ids(groups, -1);
  for (size_t g = 0; g < groups; ++g) {
    if (!uses[g].empty()) ids[g] = solver.AddFlow(uses[g]);
  }
  solver.Solve();
  for (size_t g = 0; g < groups; ++g) {
    if (ids[g] >= 0) set.flow_set[g] = graph.AddFlowSet(uses[g], solver.rate_Bps(ids[g]));
  }
}

// The workload carries each collective's time but not the stack's NCCL
// features; the algorithm and the latency/bandwidth split come from the
// collective model with the default stack's NCCL (kNcclPaperVersion) on this
// cluster. Keyed by size too: the split and the algorithm change with it.
const CollectiveSchedule& FlowCollectives::Schedule(const WorkloadCollective& coll, int) {
  auto key = std::make_tuple(static_cast<int>(coll.op), static_cast<int>(coll.dim), coll.sub.size,
                             coll.sub.stride, coll.size.si());
  auto it = schedules_.find(key);
  if (it != schedules_.end()) return it->second;
  const ParallelConfig config =
      coll.dim == ParallelDim::kDp ? WeightGroupConfig(workload_.config) : workload_.config;
  const GroupPath path = ResolveGroupPath(cluster_, config, coll.dim, coll.sub);
  const NcclFeatures features = NcclFeaturesFor(cluster_, kNcclPaperVersion);
  const CollectiveCost cost = EstimateCollective(coll.op, coll.size, path, features);
  return schedules_.emplace(key, PlanSchedule(coll.op, cost, path)).first->second;
}

// Step-level flow sets of every group of `set` for one schedule shape: per
// group (with its TP siblings' copies, as AddRingFlowSets), the hops of one
// step split by link class (inside a node: NVLink; across: the network), one
// flow set per non-empty class. Nominal rates: one max-min solve of every
// group's classes at once on the full-capacity graph (a step of every
// symmetric group running together, the scenario the model prices).
void FlowCollectives::AddStepFlowSets(TaskGraph& graph, GroupSet& set, ScheduleShape shape, bool tp_dim) {
  const int sh = static_cast<int>(shape);
  const size_t groups = set.members.size();
  std::vector<std::array<std::vector<LinkUse>, 2>> uses(groups);
  std::vector<int> sibling;
  std::vector<std::pair<int, int>> hops;
  auto domain_of = [this](int gpu) { return topology_.DomainOf(gpu); };
  for (size_t g = 0; g < groups; ++g) {
    const auto& m = set.members[g];
    if (TpGroupOf(m.front()).front() != m.front()) continue;   // carried by its leader's group
    const int copies = tp_dim ? 1 : static_cast<int>(TpGroupOf(m.front()).size());
    hops.clear();
    for (int t = 0; t < copies; ++t) {
      sibling.clear();
      for (int gpu : m) sibling.push_back(tp_dim ? gpu : TpGroupOf(gpu)[t]);
      AppendStepHops(shape, sibling, domain_of, hops);
    }
    for (const auto& [from, to] : hops) {
      AppendRoute(from, to, uses[g][topology_.DomainOf(from) == topology_.DomainOf(to) ? 0 : 1]);
    }
  }
  FlowSolver solver(topology_.capacity_Bps());
  std::vector<std::array<int32_t, 2>> ids(groups, {-1, -1});
  for (size_t g = 0; g < groups; ++g) {
    for (int c = 0; c < 2; ++c) {
      if (!uses[g][c].empty()) ids[g][c] = solver.AddFlow(uses[g][c]);
    }
  }
  solver.Solve();
  set.step_flow_set[sh].assign(groups, -1);
  set.step_classes[sh].assign(groups, 0);
  for (size_t g = 0; g < groups; ++g) {
    for (int c = 0; c < 2; ++c) {
      if (ids[g][c] < 0) continue;
      const int32_t id = graph.AddFlowSet(uses[g][c], solver.rate_Bps(ids[g][c]));
      if (set.step_flow_set[sh][g] < 0) set.step_flow_set[sh][g] = id;
      ++set.step_classes[sh][g];
    }
  }
}

void FlowCollectives::AddStepCollective(TaskGraph& graph, GroupSet& set, int group, const WorkloadCollective& coll,
                                        ActivitySpec& a) {
  const CollectiveSchedule& sched = Schedule(coll, static_cast<int>(set.members[group].size()));
  const int sh = static_cast<int>(sched.shape);
  if (set.step_flow_set[sh].empty()) AddStepFlowSets(graph, set, sched.shape, coll.dim == ParallelDim::kTp);
  if (set.step_flow_set[sh][group] < 0) return;
  const double total_s = coll.duration.si();
  a.duration_s = total_s * sched.latency_fraction;
  a.network_s = total_s - a.duration_s;
  a.flow_set = set.step_flow_set[sh][group];
  a.flow_classes = set.step_classes[sh][group];
  a.steps = sched.steps;
}

void FlowCollectives::AddCollective(TaskGraph& graph, int, const StageLanes& lanes, const WorkloadCollective& coll,
                                    const ActivitySpec& spec, std::span<const int> streams,
                                    std::vector<int32_t>& lane_ops) {
  for (size_t lane = 0; lane < lanes.gpus.size(); ++lane) lane_of_gpu_[lanes.gpus[lane]] = static_cast<int>(lane);
  const bool all_to_all = coll.op == CollectiveOp::kAllToAll;
  GroupSet& set = Groups(coll.dim, coll.sub, all_to_all);
  const double total_s = coll.duration.si();
  const double latency_s = step_level_ ? 0 : total_s * LatencyFraction(coll);
  std::vector<int32_t> member_streams;
  std::fill(lane_ops.begin(), lane_ops.end(), -1);
  for (size_t lane = 0; lane < lanes.gpus.size(); ++lane) {
    if (lane_ops[lane] >= 0) continue;
    const int group = set.group_of_gpu[lanes.gpus[lane]];
    const std::vector<int>& members = set.members[group];
    // Participants: the members that are lanes (a TP group has one, its leader).
    member_streams.clear();
    member_lanes_.clear();
    for (int gpu : members) {
      const int l = lane_of_gpu_[gpu];
      if (l < 0 || lanes.gpus[l] != gpu) {
        PARASIM_CHECK(coll.dim == ParallelDim::kTp, "group member ", gpu, " has no lane in its stage");
        continue;
      }
      member_streams.push_back(streams[l]);
      member_lanes_.push_back(l);
    }
    ActivitySpec a = spec;
    a.duration_s = total_s;
    if (members.size() > 1 && total_s > 0 && step_level_) {
      AddStepCollective(graph, set, group, coll, a);
    } else if (members.size() > 1 && total_s > 0) {
      if (set.flow_set[group] < 0) AddRingFlowSets(graph, set, all_to_all, coll.dim == ParallelDim::kTp);
      if (set.flow_set[group] >= 0) {
        a.duration_s = latency_s;
        a.network_s = total_s - latency_s;
        a.flow_set = set.flow_set[group];
      }
    }
    const int32_t first = graph.AddGroupOp(member_streams, a);
    for (size_t k = 0; k < member_lanes_.size(); ++k) lane_ops[member_lanes_[k]] = first + static_cast<int32_t>(k);
  }
}

int32_t FlowCollectives::AddSend(TaskGraph& graph, int from_stage, int to_stage, const StageLanes& from_lanes,
                                 std::span<const int> streams, double seconds, const ActivitySpec& spec) {
  // Each TP rank of a lane sends to its peer in the same pipeline group.
  GroupSet& pp = Groups(ParallelDim::kPp, SubGroup{}, false);
  auto key = std::make_pair(from_stage, to_stage);
  auto it = send_flow_sets_.find(key);
  if (it == send_flow_sets_.end()) {
    std::vector<std::vector<LinkUse>> uses(from_lanes.gpus.size());
    FlowSolver solver(topology_.capacity_Bps());
    std::vector<int32_t> ids(uses.size(), -1);
    for (size_t lane = 0; lane < uses.size(); ++lane) {
      for (int gpu : TpGroupOf(from_lanes.gpus[lane])) {
        const std::vector<int>& group = pp.members[pp.group_of_gpu[gpu]];
        PARASIM_CHECK(group[from_stage] == gpu, "pipeline group order");
        AppendRoute(gpu, group[to_stage], uses[lane]);
      }
      if (!uses[lane].empty()) ids[lane] = solver.AddFlow(uses[lane]);
    }
    solver.Solve();
    std::vector<int32_t> sets(uses.size(), -1);
    for (size_t lane = 0; lane < uses.size(); ++lane) {
      if (ids[lane] >= 0) sets[lane] = graph.AddFlowSet(uses[lane], solver.rate_Bps(ids[lane]));
    }
    it = send_flow_sets_.emplace(key, std::move(sets)).first;
  }
  WorkloadCollective p2p;
  p2p.op = CollectiveOp::kSendRecv;
  p2p.dim = ParallelDim::kPp;
  p2p.size = Bytes(spec.bytes);
  const double latency_s = seconds * LatencyFraction(p2p);
  int32_t base = -1;
  for (size_t lane = 0; lane < from_lanes.gpus.size(); ++lane) {
    ActivitySpec a = spec;
    a.kind = WorkKind::kComm;
    a.duration_s = seconds;
    if (seconds > 0 && it->second[lane] >= 0) {
      a.duration_s = latency_s;
      a.network_s = seconds - latency_s;
      a.flow_set = it->second[lane];
    }
    int32_t op = graph.AddOp(streams[lane], a);
    if (lane == 0) base = op;
  }
  return base;
}

}  // namespace parasim::simulator
