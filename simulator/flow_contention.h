// Which of tier C's running flows can share a link right now, so that a flow
// with no running neighbour runs at its bottleneck rate outside the max-min
// solver (the exact max-min rate of a flow that shares none of its links).
//
// Two flow sets conflict when they share a link (a static property of the
// graph). A flow of a set with no running conflicting flow starts "alone";
// one that finds a running neighbour goes to the solver and moves its alone
// neighbours there too (promotion). Invariant: an alone flow has no running
// conflicting flow, so the solver's components never touch alone flows and
// every rate is the max-min rate of all running flows. Without this, a
// data-parallel ring step over thousands of links entered the solver (and
// its component search) at every step even when nothing else was running:
// O(ranks) per step and O(ranks²) per collective.
//
// Sets with many neighbours ("heavy", a DP ring beside one TP group per
// node) keep a count of running light neighbours, updated by the light
// side, so their start is O(heavy neighbours) unless something runs beside
// them (then the solve that follows is O(neighbours) anyway).
//
//   FlowContention c;
//   c.Build(graph, num_links, multi_stream);
//   bool solver = c.Start(fs, promote);   // promote: alone sets to move into the solver
//   ...
//   c.End(fs);
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "simulator/task_graph.h"

namespace parasim::simulator {

class FlowContention {
 public:
  // `shared_stream[fs]`: the set's activities run on more than one stream,
  // so two of its flows may run at once; such a set always uses the solver
  // when it has a neighbour or a second copy could overlap it. With
  // `enabled` false every set that shares a link or several streams always
  // uses the solver (the reference path).
  void Build(const TaskGraph& graph, int num_links, std::span<const uint8_t> shared_stream, bool enabled);

  // Whether a flow of `fs` could ever meet another flow (it shares a link or
  // runs on several streams).
  bool may_contend(int32_t fs) const { return may_contend_[fs] != 0; }

  // A flow of `fs` starts. Returns true when it must enter the solver;
  // appends to `promote` the sets whose alone flow must enter it too.
  bool Start(int32_t fs, std::vector<int32_t>& promote);
  // The running flow of `fs` that was alone now uses the solver.
  void Promoted(int32_t fs) { alone_[fs] = 0; }
  // A flow of `fs` ended; `was_alone`: it ran outside the solver.
  void End(int32_t fs, bool was_alone);

 private:
  void BuildConflicts(const TaskGraph& graph, int num_links);
  std::span<const int32_t> conflicts(int32_t fs) const {
    return {conflict_.data() + conflict_offset_[fs], conflict_.data() + conflict_offset_[fs + 1]};
  }
  std::span<const int32_t> heavy_conflicts(int32_t fs) const {
    return {heavy_.data() + heavy_offset_[fs], heavy_.data() + heavy_offset_[fs + 1]};
  }

  std::vector<uint8_t> may_contend_;
  std::vector<uint8_t> always_solver_;
  std::vector<uint8_t> is_heavy_;
  std::vector<int32_t> conflict_offset_, conflict_;   // CSR: conflicting sets of each set
  std::vector<int32_t> heavy_offset_, heavy_;         // CSR: its heavy conflicting sets
  std::vector<int32_t> running_;                      // per set: running flows
  std::vector<int32_t> running_light_;                // per heavy set: running light neighbours' flows
  std::vector<uint8_t> alone_;                        // per set: its running flow is alone
};

}  // namespace parasim::simulator
