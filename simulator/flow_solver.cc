#include "simulator/flow_solver.h"

#include <algorithm>
#include <cmath>

#include "core/check.h"

namespace parasim::simulator {

void FlowSolver::Reset(std::span<const double> capacity_Bps) {
  capacity_Bps_.assign(capacity_Bps.begin(), capacity_Bps.end());
  for (double c : capacity_Bps_) PARASIM_CHECK(c > 0 && std::isfinite(c), "link capacity ", c);
  const size_t n = capacity_Bps_.size();
  members_.resize(n);
  for (auto& m : members_) m.clear();
  link_stamp_.assign(n, 0);
  remaining_Bps_.assign(n, 0);
  unfixed_weight_.assign(n, 0);
  unfixed_count_.assign(n, 0);
  free_flows_.clear();
  for (int32_t f = static_cast<int32_t>(flows_.size()) - 1; f >= 0; --f) {
    flows_[f].active = false;
    flows_[f].uses.clear();
    flows_[f].stamp = 0;   // the epoch restarts: a stale stamp would hide a pooled flow from the next search
    free_flows_.push_back(f);
  }
  num_active_ = 0;
  dirty_links_.clear();
  dirty_flows_.clear();
  epoch_ = 0;
}

void FlowSolver::SetCapacity(int link, double capacity_Bps) {
  PARASIM_CHECK(capacity_Bps > 0 && std::isfinite(capacity_Bps), "link capacity ", capacity_Bps);
  capacity_Bps_[link] = capacity_Bps;
  MarkLink(link);
}

void FlowSolver::MarkLink(int32_t link) { dirty_links_.push_back(link); }

int32_t FlowSolver::AddFlow(std::span<const LinkUse> links, double rate_cap_Bps) {
  PARASIM_CHECK(rate_cap_Bps > 0, "rate cap must be positive");
  PARASIM_CHECK(!links.empty() || std::isfinite(rate_cap_Bps), "a flow needs a link or a finite cap");
  int32_t id;
  if (!free_flows_.empty()) {
    id = free_flows_.back();
    free_flows_.pop_back();
  } else {
    id = static_cast<int32_t>(flows_.size());
    flows_.emplace_back();
  }
  Flow& flow = flows_[id];
  flow.uses.clear();
  for (const LinkUse& lu : links) {
    PARASIM_CHECK(lu.link >= 0 && lu.link < num_links() && lu.coefficient > 0, "bad link use");
    flow.uses.push_back(Use{lu.link, lu.coefficient, -1});
  }
  // Merge repeated links so each link holds a flow once (flow sets come
  // sorted and merged already: TaskGraph::AddFlowSet).
  auto by_link = [](const Use& a, const Use& b) { return a.link < b.link; };
  if (!std::is_sorted(flow.uses.begin(), flow.uses.end(), by_link)) {
    std::sort(flow.uses.begin(), flow.uses.end(), by_link);
  }
  size_t out = 0;
  for (size_t i = 0; i < flow.uses.size(); ++i) {
    if (out > 0 && flow.uses[out - 1].link == flow.uses[i].link) {
      flow.uses[out - 1].coefficient += flow.uses[i].coefficient;
    } else {
      flow.uses[out++] = flow.uses[i];
    }
  }
  flow.uses.resize(out);
  for (size_t u = 0; u < flow.uses.size(); ++u) {
    auto& list = members_[flow.uses[u].link];
    flow.uses[u].pos = static_cast<int32_t>(list.size());
    list.push_back(Member{id, static_cast<int32_t>(u)});
    MarkLink(flow.uses[u].link);
  }
  flow.cap_Bps = rate_cap_Bps;
  flow.rate_Bps = 0;
  flow.active = true;
  ++num_active_;
  if (flow.uses.empty()) dirty_flows_.push_back(id);
  return id;
}

void FlowSolver::RemoveFlow(int32_t id) {
  PARASIM_CHECK(id >= 0 && id < static_cast<int32_t>(flows_.size()) && flows_[id].active, "flow ", id);
  Flow& flow = flows_[id];
  for (const Use& use : flow.uses) {
    auto& list = members_[use.link];
    Member last = list.back();
    list[use.pos] = last;
    flows_[last.flow].uses[last.use].pos = use.pos;
    list.pop_back();
    MarkLink(use.link);
  }
  flow.uses.clear();
  flow.active = false;
  flow.rate_Bps = 0;
  --num_active_;
  free_flows_.push_back(id);
}

void FlowSolver::Fix(int32_t id, double rate_Bps) {
  Flow& flow = flows_[id];
  flow.fixed = true;
  flow.rate_Bps = rate_Bps;
  for (const Use& use : flow.uses) {
    remaining_Bps_[use.link] -= use.coefficient * rate_Bps;
    unfixed_weight_[use.link] -= use.coefficient;
    --unfixed_count_[use.link];
  }
}

std::span<const int32_t> FlowSolver::Solve() {
  changed_.clear();
  if (!dirty()) return changed_;
  ++epoch_;
  component_links_.clear();
  component_flows_.clear();
  // Everything reachable from the marked links: links -> member flows -> their links.
  for (int32_t link : dirty_links_) {
    if (link_stamp_[link] == epoch_) continue;
    link_stamp_[link] = epoch_;
    stack_.push_back(link);
    while (!stack_.empty()) {
      int32_t l = stack_.back();
      stack_.pop_back();
      component_links_.push_back(l);
      for (const Member& m : members_[l]) {
        Flow& flow = flows_[m.flow];
        if (flow.stamp == epoch_) continue;
        flow.stamp = epoch_;
        component_flows_.push_back(m.flow);
        for (const Use& use : flow.uses) {
          if (link_stamp_[use.link] != epoch_) {
            link_stamp_[use.link] = epoch_;
            stack_.push_back(use.link);
          }
        }
      }
    }
  }
  for (int32_t f : dirty_flows_) {
    if (flows_[f].active && flows_[f].stamp != epoch_) {
      flows_[f].stamp = epoch_;
      component_flows_.push_back(f);
    }
  }
  dirty_links_.clear();
  dirty_flows_.clear();
  // No canonical sort of the component: links saturating at one level are
  // fixed together, so the result does not depend on the visit order, and
  // the order itself (a search from the marked links) is deterministic.

  for (int32_t l : component_links_) {
    remaining_Bps_[l] = capacity_Bps_[l];
    double weight = 0;
    for (const Member& m : members_[l]) weight += flows_[m.flow].uses[m.use].coefficient;
    unfixed_weight_[l] = weight;
    unfixed_count_[l] = static_cast<int32_t>(members_[l].size());
  }
  // Old rates, to report changes.
  stack_.clear();
  for (int32_t f : component_flows_) {
    flows_[f].fixed = false;
  }
  std::vector<double>& old_rates = remaining_scratch_rates_;
  old_rates.resize(component_flows_.size());
  for (size_t i = 0; i < component_flows_.size(); ++i) old_rates[i] = flows_[component_flows_[i]].rate_Bps;

  size_t unfixed = component_flows_.size();
  while (unfixed > 0) {
    double level = kUncapped;
    for (int32_t l : component_links_) {
      if (unfixed_count_[l] == 0) continue;
      level = std::min(level, std::max(0.0, remaining_Bps_[l]) / unfixed_weight_[l]);
    }
    int32_t capped = -1;
    for (int32_t f : component_flows_) {
      if (!flows_[f].fixed && flows_[f].cap_Bps < level) {
        level = flows_[f].cap_Bps;
        capped = f;
      }
    }
    if (capped >= 0) {
      Fix(capped, level);
      --unfixed;
      continue;
    }
    PARASIM_CHECK(level < kUncapped, "max-min: unfixed flow with no link and no cap");
    // Every link that saturates at this level at once: fixing the flows of
    // one leaves the others' level unchanged, so they are fixed in one round
    // (symmetric traffic saturates thousands of links together).
    bottlenecks_.clear();
    const double tie = level * (1 + 1e-12);
    for (int32_t l : component_links_) {
      if (unfixed_count_[l] > 0 && std::max(0.0, remaining_Bps_[l]) / unfixed_weight_[l] <= tie) bottlenecks_.push_back(l);
    }
    for (int32_t l : bottlenecks_) {
      for (const Member& m : members_[l]) {
        if (!flows_[m.flow].fixed) {
          Fix(m.flow, level);
          --unfixed;
        }
      }
    }
  }
  flows_solved_ += component_flows_.size();
  for (size_t i = 0; i < component_flows_.size(); ++i) {
    if (flows_[component_flows_[i]].rate_Bps != old_rates[i]) changed_.push_back(component_flows_[i]);
  }
  std::sort(changed_.begin(), changed_.end());
  return changed_;
}

}  // namespace parasim::simulator
