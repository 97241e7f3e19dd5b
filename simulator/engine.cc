#include "simulator/engine.h"

#include <cmath>
#include <limits>

#include "core/check.h"

namespace parasim::simulator {

namespace {
// Remaining nominal work below this counts as done (SimGrid's
// precision/timing, 1e-9 s, scaled down: steps are 1e-6..1e2 s long).
constexpr double kWorkEpsilon_s = 1e-15;
}  // namespace

const Timeline& Engine::Run(const TaskGraph& graph, const EngineOptions& options) {
  PARASIM_CHECK(graph.finalized(), "graph not finalized");
  PARASIM_CHECK(options.interference_slowdown >= 0, "interference must be >= 0");
  PARASIM_CHECK(options.rank_compute_slowdown.empty() ||
                    static_cast<int>(options.rank_compute_slowdown.size()) == graph.num_ranks(),
                "one slowdown per rank");
  graph_ = &graph;
  options_ = options;
  now_ = 0;
  completed_ = 0;
  const int32_t num_ops = graph.num_ops();
  const int32_t num_acts = graph.num_activities();
  unmet_.resize(num_ops);
  for (int32_t op = 0; op < num_ops; ++op) unmet_[op] = graph.initial_unmet(op);
  arrived_.assign(num_acts, 0);
  version_.assign(num_acts, 0);
  phase_.assign(num_acts, 0);
  remaining_.assign(num_acts, 0);
  speed_.assign(num_acts, 1);
  last_update_s_.assign(num_acts, 0);
  flow_id_.assign(num_acts, -1);
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
    if (e.version != version_[e.target]) continue;
    now_ = e.time_s;
    ++timeline_.events;
    PhaseDone(e.target);
  }
  PARASIM_CHECK(completed_ == num_acts, "deadlock: ", num_acts - completed_,
                " activities never started (dependency cycle or stream order conflict)");
  return timeline_;
}

void Engine::OpReady(int32_t op) {
  int32_t act = graph_->op_activity(op);
  if (++arrived_[act] == graph_->activity_num_ops(act)) Start(act);
}

double Engine::ComputeSpeed(int rank) const {
  double speed = options_.rank_compute_slowdown.empty() ? 1.0 : 1.0 / options_.rank_compute_slowdown[rank];
  if (comm_active_[rank] > 0) speed /= 1.0 + options_.interference_slowdown;
  return speed;
}

void Engine::Start(int32_t act) {
  const ActivitySpec& spec = graph_->activity(act);
  timeline_.start_s[act] = now_;
  last_update_s_[act] = now_;
  remaining_[act] = spec.duration_s;
  if (spec.kind != WorkKind::kComm) {
    int rank = graph_->op_rank(graph_->activity_first_op(act));
    running_compute_[rank] = act;
    speed_[act] = ComputeSpeed(rank);
  } else {
    speed_[act] = 1;
    const int32_t first = graph_->activity_first_op(act);
    const int32_t n = graph_->activity_num_ops(act);
    for (int32_t op = first; op < first + n; ++op) CommBegins(graph_->op_rank(op));
  }
  queue_.Push(now_ + remaining_[act] / speed_[act], act, version_[act]);
}

void Engine::Reschedule(int32_t act, double speed) {
  remaining_[act] -= (now_ - last_update_s_[act]) * speed_[act];
  if (remaining_[act] < kWorkEpsilon_s) remaining_[act] = 0;
  last_update_s_[act] = now_;
  speed_[act] = speed;
  ++version_[act];
  queue_.Push(now_ + remaining_[act] / speed, act, version_[act]);
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
  const ActivitySpec& spec = graph_->activity(act);
  if (spec.kind == WorkKind::kComm && phase_[act] == 0 && spec.network_s > 0) {
    // Latency part done: the bandwidth part joins the network. Its speed is
    // set when the solver runs, before time moves on.
    phase_[act] = 1;
    remaining_[act] = spec.network_s;
    last_update_s_[act] = now_;
    speed_[act] = 0;
    ++version_[act];
    int32_t flow = network_.AddFlow(graph_->flow_links(spec.flow_set));
    if (static_cast<size_t>(flow) >= flow_owner_.size()) flow_owner_.resize(flow + 1, -1);
    flow_owner_[flow] = act;
    flow_id_[act] = flow;
    return;
  }
  if (phase_[act] == 1) {
    network_.RemoveFlow(flow_id_[act]);
    flow_owner_[flow_id_[act]] = -1;
    flow_id_[act] = -1;
  }
  Complete(act);
}

void Engine::SolveNetwork() {
  for (int32_t flow : network_.Solve()) {
    int32_t act = flow_owner_[flow];
    if (act < 0) continue;
    double nominal = graph_->flow_nominal_rate_Bps(graph_->activity(act).flow_set);
    Reschedule(act, network_.rate_Bps(flow) / nominal);
  }
}

void Engine::Complete(int32_t act) {
  const ActivitySpec& spec = graph_->activity(act);
  timeline_.end_s[act] = now_;
  if (now_ > timeline_.makespan_s) timeline_.makespan_s = now_;
  ++completed_;
  const int32_t first = graph_->activity_first_op(act);
  const int32_t n = graph_->activity_num_ops(act);
  if (spec.kind != WorkKind::kComm) {
    running_compute_[graph_->op_rank(first)] = -1;
  } else {
    for (int32_t op = first; op < first + n; ++op) CommEnds(graph_->op_rank(op));
  }
  for (int32_t op = first; op < first + n; ++op) {
    int32_t next = graph_->stream_next(op);
    if (next >= 0 && --unmet_[next] == 0) OpReady(next);
    for (int32_t succ : graph_->successors(op)) {
      if (--unmet_[succ] == 0) OpReady(succ);
    }
  }
}

}  // namespace parasim::simulator
