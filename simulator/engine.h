// The discrete-event engine: runs a finalized TaskGraph and returns when each
// activity started and ended. Events are activity phase completions, popped in
// (time, sequence) order; an op becomes ready when its stream predecessor and
// its dependencies have ended, and an activity starts when all its
// participant ops are ready (a collective waits for its last rank).
//
// Rates can change while an activity runs (SimGrid's actions): compute slows
// by 1/(1+κ) while a comm kernel runs on the same rank (interference), and a
// network activity (tier C) runs its step schedule: per step a latency part,
// then one flow per link class carrying the step's bytes at its max-min share
// of the links; the next step starts when the slowest class has delivered.
// The step's bytes are its nominal bandwidth seconds times the slowest
// class's nominal rate, so alone on the fabric a step takes its nominal time.
// A rate change reschedules a completion; the old event is dropped by its
// version number.
//
// A flow set that shares no link with any other flow set, and whose
// activities all run on one stream (so never two at once), cannot contend:
// its flows run at their bottleneck rate without entering the max-min
// solver (the common case of a pure data-parallel ring), which keeps a
// step-level replay of thousands of ranks cheap. One that could contend but
// finds no running neighbour when it starts runs the same way until a
// neighbour starts (simulator/flow_contention.h); only flows that really
// share links at the moment enter the solver.
//
//   Engine engine;
//   const Timeline& t = engine.Run(graph, EngineOptions{});
//   double step_s = t.makespan_s;
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "simulator/event_queue.h"
#include "simulator/flow_contention.h"
#include "simulator/flow_solver.h"
#include "simulator/task_graph.h"

namespace parasim::simulator {

struct EngineOptions {
  // κ: a compute kernel overlapping a comm kernel on its rank runs at 1/(1+κ)
  // of its speed (comm kernels take SMs and HBM bandwidth). κ >= 0.
  double interference_slowdown = 0;
  // Per-rank compute time multipliers (stragglers: 1.2 = 20% slower). Empty:
  // all 1; otherwise one entry per rank, each > 0.
  std::span<const double> rank_compute_slowdown;
  // Tier C: link capacities (bytes/s) that flow sets index. Empty when the
  // graph has no network activities.
  std::span<const double> link_capacity_Bps;
  // Tier C: a flow that may contend but finds no running neighbour runs at its
  // bottleneck rate outside the max-min solver (FlowContention). false: every
  // such flow goes through the solver (the reference the fast path is tested
  // against; same results to rounding).
  bool dynamic_contention = true;
};

struct Timeline {
  std::vector<double> start_s;   // per activity
  std::vector<double> end_s;     // per activity
  double makespan_s = 0;
  uint64_t events = 0;           // events processed (stale ones excluded)
  uint64_t network_steps = 0;    // tier C collective steps run
  uint64_t solved_flows = 0;     // flows the max-min solver re-solved
};

class Engine {
 public:
  // Runs `graph` (finalized) from time 0 until nothing is left. Throws
  // InternalError if some op can never start (a dependency cycle). The result
  // stays valid until the next Run; buffers are reused between runs.
  const Timeline& Run(const TaskGraph& graph, const EngineOptions& options);

 private:
  void OpReady(int32_t op);
  void Start(int32_t act);
  void BeginStep(int32_t act);
  void PhaseDone(int32_t act);
  void StepDone(int32_t act);
  void Complete(int32_t act);
  void Reschedule(int32_t act, double speed);
  double ComputeSpeed(int rank) const;
  void CommBegins(int rank);
  void CommEnds(int rank);
  void SolveNetwork();
  void ClassifyFlowSets();
  void StartFlow(int32_t act, int32_t flow_set, double bytes);
  void EnterSolver(int32_t sub, int32_t flow_set);
  void FlowDone(int32_t sub);
  void RescheduleFlow(int32_t sub, double rate_Bps);

  const TaskGraph* graph_ = nullptr;
  EngineOptions options_;
  double now_ = 0;
  EventQueue queue_;
  FlowSolver network_;
  Timeline timeline_;

  // Per running activity, packed: one cache line per event.
  struct State {
    double remaining_s;     // nominal seconds left in the current phase
    double speed;           // nominal seconds done per second
    double last_update_s;   // when remaining_s was last brought up to date
    uint32_t version;       // bumped on reschedule; older events are stale
    int32_t arrived;        // participant ops ready so far
    int32_t step;           // network activity: current step
    int16_t pending;        // network activity: class flows of this step still moving
    uint8_t phase;          // 0: compute or latency part; 1: network part
  };
  // One link class's flow of a running step. Events for it carry target ~id.
  struct SubFlow {
    double remaining_B;
    double rate_Bps;
    double last_update_s;
    int32_t act;
    int32_t solver_flow;    // -1: uncontended, runs at its bottleneck rate
    int32_t flow_set;
    uint32_t version;
  };
  std::vector<int32_t> unmet_;           // per op
  std::vector<State> state_;             // per activity
  std::vector<SubFlow> subs_;
  std::vector<int32_t> free_subs_;
  std::vector<double> alone_rate_Bps_;   // per flow set: bottleneck rate on this run's capacities
  FlowContention contention_;
  std::vector<int32_t> alone_sub_;       // per flow set: its running sub-flow outside the solver, -1 = none
  std::vector<int32_t> promote_;         // scratch
  std::vector<int32_t> scratch_;
  std::vector<int32_t> flow_owner_;      // per solver flow id: sub-flow
  std::vector<int32_t> running_compute_; // per rank
  std::vector<int32_t> comm_active_;     // per rank
  int64_t completed_ = 0;
};

}  // namespace parasim::simulator
