#include "simulator/engine.h"

#include <algorithm>
#include <cmath>

#include "core/check.h"

namespace parasim::simulator {

namespace {
// Remaining nominal work below this counts as done (SimGrid's
// precision/timing is 1e-9 s; steps here are 1e-6..1e2 s long, so a far
// smaller snap keeps results exact to the tests' 1e-12).
constexpr double kWorkEpsilon_s = 1e-15;
}  // namespace

const Timeline& Engine::Run(const TaskGraph& graph, const EngineOptions& options) {
  PARASIM_CHECK(graph.finalized(), "graph not finalized");
  PARASIM_CHECK(options.interference_slowdown >= 0, "interference must be >= 0");
  PARASIM_CHECK(options.rank_compute_slowdown.empty() ||
                    static_cast<int>(options.rank_compute_slowdown.size()) == graph.num_ranks(),
                "one slowdown per rank");
  for (double s : options.rank_compute_slowdown) PARASIM_CHECK(s > 0, "slowdown must be > 0");
  graph_ = &graph;
  options_ = options;
  now_ = 0;
  completed_ = 0;
  const int32_t num_ops = graph.num_ops();
  const int32_t num_acts = graph.num_activities();
  unmet_ = graph.initial_unmet();
  state_.assign(num_acts, State{0, 1, 0, 0, 0, 0, 0, 0});
  subs_.clear();
  free_subs_.clear();
  flow_owner_.clear();
  running_compute_.assign(graph.num_ranks(), -1);
  comm_active_.assign(graph.num_ranks(), 0);
  timeline_.start_s.assign(num_acts, 0);
  timeline_.end_s.assign(num_acts, 0);
  timeline_.makespan_s = 0;
  timeline_.events = 0;
  timeline_.network_steps = 0;
  queue_.Clear();
  queue_.Reserve(static_cast<size_t>(graph.num_streams()) * 2 + 64);
  if (graph.num_flow_sets() > 0) {
    PARASIM_CHECK(!options.link_capacity_Bps.empty(), "network activities need link capacities");
    network_.Reset(options.link_capacity_Bps);
    ClassifyFlowSets();
  }
  const uint64_t solved_before = network_.flows_solved();

  for (int32_t op = 0; op < num_ops; ++op) {
    if (unmet_[op] == 0) OpReady(op);
  }
  while (true) {
    if (network_.dirty() && (queue_.empty() || queue_.Top().time_s > now_)) SolveNetwork();
    if (queue_.empty()) break;
    Event e = queue_.Pop();
    if (e.target < 0) {
      const int32_t sub = ~e.target;
      if (e.version != subs_[sub].version) continue;
      now_ = e.time_s;
      ++timeline_.events;
      FlowDone(sub);
      continue;
    }
    if (e.version != state_[e.target].version) continue;
    now_ = e.time_s;
    ++timeline_.events;
    PhaseDone(e.target);
  }
  PARASIM_CHECK(completed_ == num_acts, "deadlock: ", num_acts - completed_,
                " activities never ran (a dependency cycle or a stream order conflict)");
  timeline_.solved_flows = network_.flows_solved() - solved_before;
  return timeline_;
}

// Which flow sets may contend: those sharing a link with another flow set,
// and those whose activities run on more than one stream (two could overlap).
// The others run at their bottleneck rate on this run's capacities.
void Engine::ClassifyFlowSets() {
  const TaskGraph& g = *graph_;
  const int32_t sets = g.num_flow_sets();
  alone_rate_Bps_.assign(sets, 0);
  for (int32_t fs = 0; fs < sets; ++fs) {
    double rate = FlowSolver::kUncapped;
    for (const LinkUse& use : g.flow_links(fs)) {
      PARASIM_CHECK(use.link < network_.num_links(), "flow set link ", use.link, " outside the fabric");
      rate = std::min(rate, network_.capacity_Bps(use.link) / use.coefficient);
    }
    alone_rate_Bps_[fs] = rate;
  }
  scratch_.assign(sets, -1);   // the stream each flow set's activities run on
  std::vector<uint8_t> shared_stream(sets, 0);
  for (int32_t act = 0; act < g.num_activities(); ++act) {
    const ActivityCore& core = g.core(act);
    if (core.network_s <= 0) continue;
    const int32_t stream = g.op_stream(core.first_op);
    for (int32_t fs = core.flow_set; fs < core.flow_set + core.flow_classes; ++fs) {
      if (scratch_[fs] < 0) scratch_[fs] = stream;
      else if (scratch_[fs] != stream) shared_stream[fs] = 1;
    }
  }
  contention_.Build(g, network_.num_links(), shared_stream, options_.dynamic_contention);
  alone_sub_.assign(sets, -1);
}

void Engine::OpReady(int32_t op) {
  int32_t act = graph_->op(op).activity;
  if (++state_[act].arrived == graph_->core(act).num_ops) Start(act);
}

double Engine::ComputeSpeed(int rank) const {
  double speed = options_.rank_compute_slowdown.empty() ? 1.0 : 1.0 / options_.rank_compute_slowdown[rank];
  if (comm_active_[rank] > 0) speed /= 1.0 + options_.interference_slowdown;
  return speed;
}

void Engine::Start(int32_t act) {
  const ActivityCore& core = graph_->core(act);
  State& st = state_[act];
  timeline_.start_s[act] = now_;
  if (core.kind == WorkKind::kHost) {
    // The CPU's time: neither a slow GPU nor NCCL kernels beside it stretch it.
    queue_.Push(now_ + core.duration_s, act, st.version);
    return;
  }
  if (core.kind != WorkKind::kComm) {
    int rank = graph_->op(core.first_op).rank;
    running_compute_[rank] = act;
    st.last_update_s = now_;
    st.remaining_s = core.duration_s;
    st.speed = ComputeSpeed(rank);
    queue_.Push(now_ + st.remaining_s / st.speed, act, st.version);
    return;
  }
  for (int32_t op = core.first_op; op < core.first_op + core.num_ops; ++op) CommBegins(graph_->op(op).rank);
  st.step = 0;
  BeginStep(act);
}

// A step's latency part: its share of the activity's latency.
void Engine::BeginStep(int32_t act) {
  const ActivityCore& core = graph_->core(act);
  State& st = state_[act];
  st.phase = 0;
  st.speed = 1;
  st.last_update_s = now_;
  st.remaining_s = core.duration_s / core.steps;
  ++st.version;
  queue_.Push(now_ + st.remaining_s, act, st.version);
}

void Engine::Reschedule(int32_t act, double speed) {
  State& st = state_[act];
  st.remaining_s -= (now_ - st.last_update_s) * st.speed;
  if (st.remaining_s < kWorkEpsilon_s) st.remaining_s = 0;
  st.last_update_s = now_;
  st.speed = speed;
  ++st.version;
  queue_.Push(now_ + st.remaining_s / speed, act, st.version);
}

void Engine::CommBegins(int rank) {
  if (comm_active_[rank]++ == 0 && options_.interference_slowdown > 0) {
    int32_t c = running_compute_[rank];
    if (c >= 0) Reschedule(c, ComputeSpeed(rank));
  }
}

void Engine::CommEnds(int rank) {
  if (--comm_active_[rank] == 0 && options_.interference_slowdown > 0) {
    int32_t c = running_compute_[rank];
    if (c >= 0) Reschedule(c, ComputeSpeed(rank));
  }
}

void Engine::PhaseDone(int32_t act) {
  const ActivityCore& core = graph_->core(act);
  State& st = state_[act];
  if (core.kind != WorkKind::kComm) {
    Complete(act);
    return;
  }
  if (core.network_s <= 0) {
    StepDone(act);
    return;
  }
  // Latency part done: the step's bytes go out on every link class at once.
  // Bytes: nominal bandwidth seconds × the slowest class's nominal rate.
  double nominal = FlowSolver::kUncapped;
  for (int32_t c = 0; c < core.flow_classes; ++c) {
    nominal = std::min(nominal, graph_->flow_nominal_rate_Bps(core.flow_set + c));
  }
  const double bytes = core.network_s / core.steps * nominal;
  st.phase = 1;
  st.pending = core.flow_classes;
  for (int32_t c = 0; c < core.flow_classes; ++c) StartFlow(act, core.flow_set + c, bytes);
}

void Engine::StartFlow(int32_t act, int32_t flow_set, double bytes) {
  int32_t sub;
  if (!free_subs_.empty()) {
    sub = free_subs_.back();
    free_subs_.pop_back();
  } else {
    sub = static_cast<int32_t>(subs_.size());
    subs_.push_back(SubFlow{0, 0, 0, -1, -1, -1, 0});
  }
  SubFlow& f = subs_[sub];
  f.act = act;
  f.flow_set = flow_set;
  f.remaining_B = bytes;
  f.last_update_s = now_;
  f.solver_flow = -1;
  ++f.version;
  bool solver = false;
  if (contention_.may_contend(flow_set)) {
    promote_.clear();
    solver = contention_.Start(flow_set, promote_);
    for (int32_t other : promote_) {
      EnterSolver(alone_sub_[other], other);
      contention_.Promoted(other);
      alone_sub_[other] = -1;
    }
    if (!solver) alone_sub_[flow_set] = sub;
  }
  if (!solver) {
    f.rate_Bps = alone_rate_Bps_[flow_set];
    queue_.Push(now_ + bytes / f.rate_Bps, ~sub, f.version);
    return;
  }
  // Its rate is set when the solver runs, before time moves on.
  f.rate_Bps = 0;
  EnterSolver(sub, flow_set);
}

// A running sub-flow joins the max-min solver; it keeps its current rate (and
// its completion event) until the solve, which reports it as changed.
void Engine::EnterSolver(int32_t sub, int32_t flow_set) {
  const int32_t flow = network_.AddFlow(graph_->flow_links(flow_set));
  if (static_cast<size_t>(flow) >= flow_owner_.size()) flow_owner_.resize(flow + 1, -1);
  flow_owner_[flow] = sub;
  subs_[sub].solver_flow = flow;
}

void Engine::RescheduleFlow(int32_t sub, double rate_Bps) {
  SubFlow& f = subs_[sub];
  f.remaining_B -= (now_ - f.last_update_s) * f.rate_Bps;
  if (f.remaining_B < kWorkEpsilon_s * rate_Bps) f.remaining_B = 0;
  f.last_update_s = now_;
  f.rate_Bps = rate_Bps;
  ++f.version;
  queue_.Push(now_ + f.remaining_B / rate_Bps, ~sub, f.version);
}

void Engine::FlowDone(int32_t sub) {
  SubFlow& f = subs_[sub];
  const int32_t act = f.act;
  const bool alone = f.solver_flow < 0;
  if (!alone) {
    network_.RemoveFlow(f.solver_flow);
    flow_owner_[f.solver_flow] = -1;
    f.solver_flow = -1;
  }
  if (contention_.may_contend(f.flow_set)) {
    contention_.End(f.flow_set, alone);
    if (alone) alone_sub_[f.flow_set] = -1;
  }
  ++f.version;
  free_subs_.push_back(sub);
  if (--state_[act].pending == 0) StepDone(act);
}

void Engine::StepDone(int32_t act) {
  ++timeline_.network_steps;
  State& st = state_[act];
  if (++st.step < graph_->core(act).steps) {
    BeginStep(act);
  } else {
    Complete(act);
  }
}

void Engine::SolveNetwork() {
  for (int32_t flow : network_.Solve()) {
    int32_t sub = flow_owner_[flow];
    if (sub < 0) continue;
    RescheduleFlow(sub, network_.rate_Bps(flow));
  }
}
void Engine::Complete(int32_t act) {
  const ActivityCore& core = graph_->core(act);
  timeline_.end_s[act] = now_;
  if (now_ > timeline_.makespan_s) timeline_.makespan_s = now_;
  ++completed_;
  const int32_t first = core.first_op;
  const int32_t last = first + core.num_ops;
  if (core.kind == WorkKind::kHost) {
    // Nothing to release: a host delay never holds the rank's compute slot.
  } else if (core.kind != WorkKind::kComm) {
    running_compute_[graph_->op(first).rank] = -1;
  } else {
    for (int32_t op = first; op < last; ++op) CommEnds(graph_->op(op).rank);
  }
  for (int32_t op = first; op < last; ++op) {
    int32_t next = graph_->op(op).stream_next;
    if (next >= 0 && --unmet_[next] == 0) OpReady(next);
    for (int32_t succ : graph_->successors(op)) {
      if (--unmet_[succ] == 0) OpReady(succ);
    }
  }
}

}  // namespace parasim::simulator
