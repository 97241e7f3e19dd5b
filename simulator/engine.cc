#include "simulator/engine.h"

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
  state_.assign(num_acts, State{0, 1, 0, 0, 0, -1, 0});
  flow_owner_.clear();
  running_compute_.assign(graph.num_ranks(), -1);
  comm_active_.assign(graph.num_ranks(), 0);
  timeline_.start_s.assign(num_acts, 0);
  timeline_.end_s.assign(num_acts, 0);
  timeline_.makespan_s = 0;
  timeline_.events = 0;
  queue_.Clear();
  queue_.Reserve(static_cast<size_t>(graph.num_streams()) * 2 + 64);
  if (graph.num_flow_sets() > 0) {
    PARASIM_CHECK(!options.link_capacity_Bps.empty(), "network activities need link capacities");
    network_.Reset(options.link_capacity_Bps);
  }

  for (int32_t op = 0; op < num_ops; ++op) {
    if (unmet_[op] == 0) OpReady(op);
  }
  while (true) {
    if (network_.dirty() && (queue_.empty() || queue_.Top().time_s > now_)) SolveNetwork();
    if (queue_.empty()) break;
    Event e = queue_.Pop();
    if (e.version != state_[e.target].version) continue;
    now_ = e.time_s;
    ++timeline_.events;
    PhaseDone(e.target);
  }
  PARASIM_CHECK(completed_ == num_acts, "deadlock: ", num_acts - completed_,
                " activities never ran (a dependency cycle or a stream order conflict)");
  return timeline_;
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
  st.last_update_s = now_;
  st.remaining_s = core.duration_s;
  if (core.kind != WorkKind::kComm) {
    int rank = graph_->op(core.first_op).rank;
    running_compute_[rank] = act;
    st.speed = ComputeSpeed(rank);
  } else {
    st.speed = 1;
    for (int32_t op = core.first_op; op < core.first_op + core.num_ops; ++op) CommBegins(graph_->op(op).rank);
  }
  queue_.Push(now_ + st.remaining_s / st.speed, act, st.version);
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
  if (st.phase == 0 && core.network_s > 0) {
    // Latency part done: the bandwidth part joins the network. Its speed is
    // set when the solver runs, before time moves on.
    st.phase = 1;
    st.remaining_s = core.network_s;
    st.last_update_s = now_;
    st.speed = 0;
    ++st.version;
    int32_t flow = network_.AddFlow(graph_->flow_links(core.flow_set));
    if (static_cast<size_t>(flow) >= flow_owner_.size()) flow_owner_.resize(flow + 1, -1);
    flow_owner_[flow] = act;
    st.flow = flow;
    return;
  }
  if (st.phase == 1) {
    network_.RemoveFlow(st.flow);
    flow_owner_[st.flow] = -1;
    st.flow = -1;
  }
  Complete(act);
}

void Engine::SolveNetwork() {
  for (int32_t flow : network_.Solve()) {
    int32_t act = flow_owner_[flow];
    if (act < 0) continue;
    double nominal = graph_->flow_nominal_rate_Bps(graph_->core(act).flow_set);
    Reschedule(act, network_.rate_Bps(flow) / nominal);
  }
}

void Engine::Complete(int32_t act) {
  const ActivityCore& core = graph_->core(act);
  timeline_.end_s[act] = now_;
  if (now_ > timeline_.makespan_s) timeline_.makespan_s = now_;
  ++completed_;
  const int32_t first = core.first_op;
  const int32_t last = first + core.num_ops;
  if (core.kind != WorkKind::kComm) {
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
