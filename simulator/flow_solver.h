// Max-min fair sharing of link bandwidth between flows (tier C's network).
//
// System (SimGrid's lmm, Bertsekas & Gallager §6.5.2): each flow f has a rate
// ρ_f; each link l a capacity C_l; a flow loads link l with coefficient a_fl
// (the number of its hops on l). Constraints Σ_f a_fl·ρ_f ≤ C_l, and optional
// per-flow caps ρ_f ≤ cap_f. The max-min fair allocation is found by
// progressive filling: all unfixed flows grow at one common level t; the
// first link to saturate, at t_l = (C_l − Σ_fixed a·ρ) / Σ_unfixed a, fixes
// every unfixed flow crossing it at t_l (a cap fixes its own flow); repeat.
// Links saturating at the same level are fixed in one round.
//
// Worked example: flows f0 over links {L1 (1 B/s), L2 (2 B/s)}, f1 over L1,
// f2 over L2. L1 saturates first at t = 1/2, fixing f0 = f1 = 0.5; L2 then has
// 1.5 left for f2 alone: f2 = 1.5.
//
// Incremental (SimGrid's selective update): AddFlow/RemoveFlow/SetCapacity
// only mark links; Solve() re-solves just the connected components of flows
// and links reachable from marked links, and reports whose rate changed.
// Flow slots are pooled and per-link member lists are index-linked, so a
// steady stream of flows starting and ending allocates nothing once warm.
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "simulator/task_graph.h"

namespace parasim::simulator {

class FlowSolver {
 public:
  static constexpr double kUncapped = std::numeric_limits<double>::infinity();

  FlowSolver() = default;
  explicit FlowSolver(std::span<const double> capacity_Bps) { Reset(capacity_Bps); }

  // Drops every flow and sets the links (capacity > 0, bytes per second).
  void Reset(std::span<const double> capacity_Bps);
  int num_links() const { return static_cast<int>(capacity_Bps_.size()); }
  double capacity_Bps(int link) const { return capacity_Bps_[link]; }
  void SetCapacity(int link, double capacity_Bps);

  // A flow over `links` (a link listed twice counts its coefficients summed),
  // at most `rate_cap_Bps`. It needs a link or a finite cap. Returns its id;
  // ids of removed flows are reused.
  int32_t AddFlow(std::span<const LinkUse> links, double rate_cap_Bps = kUncapped);
  void RemoveFlow(int32_t flow);

  bool dirty() const { return !dirty_links_.empty() || !dirty_flows_.empty(); }
  // Re-solves what changed since the last call. Returns the flows (ascending
  // ids) whose rate changed, valid until the next call.
  std::span<const int32_t> Solve();
  double rate_Bps(int32_t flow) const { return flows_[flow].rate_Bps; }
  int num_active_flows() const { return num_active_; }
  // Flows re-solved so far (work counter for benchmarks).
  uint64_t flows_solved() const { return flows_solved_; }

 private:
  struct Use {
    int32_t link;
    double coefficient;
    int32_t pos;        // index of this flow in the link's member list
  };
  struct Flow {
    std::vector<Use> uses;
    double cap_Bps = kUncapped;
    double rate_Bps = 0;
    bool active = false;
    bool fixed = false;
    uint32_t stamp = 0;
  };
  struct Member {
    int32_t flow;
    int32_t use;        // index into the flow's uses
  };
  void MarkLink(int32_t link);
  void Fix(int32_t flow, double rate_Bps);

  std::vector<double> capacity_Bps_;
  std::vector<std::vector<Member>> members_;
  std::vector<uint32_t> link_stamp_;
  std::vector<double> remaining_Bps_;   // scratch: capacity left during filling
  std::vector<double> unfixed_weight_;  // scratch: Σ a over unfixed members
  std::vector<int32_t> unfixed_count_;  // scratch: unfixed members

  std::vector<Flow> flows_;
  std::vector<int32_t> free_flows_;
  int num_active_ = 0;

  std::vector<int32_t> dirty_links_;
  std::vector<int32_t> dirty_flows_;    // flows with no link (cap only)
  uint32_t epoch_ = 0;
  std::vector<int32_t> component_links_;
  std::vector<int32_t> component_flows_;
  std::vector<int32_t> stack_;
  std::vector<int32_t> changed_;
  std::vector<int32_t> bottlenecks_;   // scratch: links saturating at the current level
  std::vector<double> remaining_scratch_rates_;
  uint64_t flows_solved_ = 0;
};

}  // namespace parasim::simulator
