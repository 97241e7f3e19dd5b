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
  // Lane GPUs by stage (a GPU's stage is its index in its pipeline group).
  std::vector<int> stage_of(workload.world_size, 0);
  int stages = 1;
  for (const auto& group : placement_.AllGroups(ParallelDim::kPp)) {
    stages = static_cast<int>(group.size());
    for (size_t k = 0; k < group.size(); ++k) stage_of[group[k]] = static_cast<int>(k);
  }
  std::vector<std::vector<int>> stage_lanes(stages);
  for (int gpu : LaneGpus(workload.config, workload.world_size)) stage_lanes[stage_of[gpu]].push_back(gpu);
  rank_of_gpu_.assign(workload.world_size, -1);
  int rank = 0;
  for (const auto& lanes : stage_lanes) {
    for (int gpu : lanes) rank_of_gpu_[gpu] = rank++;
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
  auto key = std::make_tuple(static_cast<int>(dim), sub.size, sub.stride, sub.ends, all_to_all ? 1 : 0);
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
                             coll.sub.stride, coll.sub.ends, coll.size.si());
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

FlowCollectives::CrossKey FlowCollectives::CrossKeyOf(const WorkloadCollective& coll) {
  return CrossKey{static_cast<int>(coll.op), static_cast<int>(coll.dim), coll.size.si(), coll.what};
}

int FlowCollectives::CrossStageStream(TaskGraph& graph, int gpu) {
  const int rank = rank_of_gpu_[gpu];
  PARASIM_CHECK(rank >= 0, "group member ", gpu, " has no lane");
  auto it = cross_stream_of_rank_.find(rank);
  if (it == cross_stream_of_rank_.end()) {
    it = cross_stream_of_rank_.emplace(rank, graph.AddStream(rank, StreamKind::kPp)).first;
  }
  return it->second;
}

bool FlowCollectives::ClaimCrossStage(const WorkloadCollective& coll, int gpu, int32_t* op) {
  auto pending = cross_pending_.find(CrossKeyOf(coll));
  if (pending == cross_pending_.end()) return false;
  auto it = pending->second.find(gpu);   // the earliest unclaimed issue of this GPU
  if (it == pending->second.end()) return false;
  *op = it->second;
  pending->second.erase(it);
  return true;
}

void FlowCollectives::AddCollective(TaskGraph& graph, int, const StageLanes& lanes, const WorkloadCollective& coll,
                                    const ActivitySpec& spec, std::span<const int> streams,
                                    std::vector<int32_t>& lane_ops) {
  for (size_t lane = 0; lane < lanes.gpus.size(); ++lane) {
    lane_of_gpu_[lanes.gpus[lane]] = static_cast<int>(lane);
    PARASIM_CHECK(rank_of_gpu_[lanes.gpus[lane]] == lanes.ranks[lane], "graph rank of GPU ", lanes.gpus[lane]);
  }
  const bool all_to_all = coll.op == CollectiveOp::kAllToAll;
  GroupSet& set = Groups(coll.dim, coll.sub, all_to_all);
  const double total_s = coll.duration.si();
  const double latency_s = step_level_ ? 0 : total_s * LatencyFraction(coll);
  std::vector<int32_t> member_streams;
  std::vector<int> later_gpus;   // members on other stages, by participant index
  std::fill(lane_ops.begin(), lane_ops.end(), -1);
  for (size_t lane = 0; lane < lanes.gpus.size(); ++lane) {
    if (lane_ops[lane] >= 0) continue;
    const int group = set.group_of_gpu[lanes.gpus[lane]];
    PARASIM_CHECK(group >= 0, "GPU ", lanes.gpus[lane], " is in no group of ", coll.what);
    if (coll.sub.ends && ClaimCrossStage(coll, lanes.gpus[lane], &lane_ops[lane])) continue;
    const std::vector<int>& members = set.members[group];
    // Participants: the members that are lanes (a TP group has one, its leader).
    member_streams.clear();
    member_lanes_.clear();
    later_gpus.clear();
    for (int gpu : members) {
      const int l = lane_of_gpu_[gpu];
      if (l < 0 || lanes.gpus[l] != gpu) {
        if (coll.dim == ParallelDim::kTp) continue;
        PARASIM_CHECK(coll.sub.ends, "group member ", gpu, " has no lane in its stage");
        member_streams.push_back(CrossStageStream(graph, gpu));
        member_lanes_.push_back(-1);
        later_gpus.push_back(gpu);
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
    size_t later = 0;
    for (size_t k = 0; k < member_lanes_.size(); ++k) {
      const int32_t op = first + static_cast<int32_t>(k);
      if (member_lanes_[k] >= 0) {
        lane_ops[member_lanes_[k]] = op;
      } else {
        cross_pending_[CrossKeyOf(coll)].emplace(later_gpus[later++], op);
      }
    }
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
