#include "simulator/flow_contention.h"

#include <algorithm>

namespace parasim::simulator {

namespace {
// A set with more conflicting sets than this is heavy: its light neighbours
// count themselves into it instead of it scanning them.
constexpr size_t kHeavyConflicts = 16;
// Building the conflict lists costs Σ over links of (sets on the link)²;
// above this the graph keeps the reference path (every set that may contend
// always in the solver): correct, only slower.
constexpr uint64_t kMaxConflictWork = uint64_t{1} << 26;
}  // namespace

void FlowContention::Build(const TaskGraph& graph, int num_links, std::span<const uint8_t> shared_stream,
                           bool enabled) {
  const int32_t sets = graph.num_flow_sets();
  std::vector<int32_t> sets_on_link(num_links, 0);
  for (int32_t fs = 0; fs < sets; ++fs) {
    for (const LinkUse& use : graph.flow_links(fs)) ++sets_on_link[use.link];   // each link once per set
  }
  uint64_t work = 0;
  for (int32_t n : sets_on_link) work += static_cast<uint64_t>(n) * static_cast<uint64_t>(n);
  may_contend_.assign(sets, 0);
  always_solver_.assign(sets, 0);
  for (int32_t fs = 0; fs < sets; ++fs) {
    bool shares = false;
    for (const LinkUse& use : graph.flow_links(fs)) shares = shares || sets_on_link[use.link] > 1;
    may_contend_[fs] = shares || shared_stream[fs];
    always_solver_[fs] = shared_stream[fs];
  }
  const bool dynamic = enabled && work <= kMaxConflictWork;
  conflict_offset_.assign(sets + 1, 0);
  conflict_.clear();
  if (dynamic) {
    BuildConflicts(graph, num_links);
  } else {
    for (int32_t fs = 0; fs < sets; ++fs) always_solver_[fs] = may_contend_[fs];
  }
  is_heavy_.assign(sets, 0);
  for (int32_t fs = 0; fs < sets; ++fs) is_heavy_[fs] = conflicts(fs).size() > kHeavyConflicts;
  heavy_offset_.assign(sets + 1, 0);
  heavy_.clear();
  for (int32_t fs = 0; fs < sets; ++fs) {
    for (int32_t other : conflicts(fs)) {
      if (is_heavy_[other]) heavy_.push_back(other);
    }
    heavy_offset_[fs + 1] = static_cast<int32_t>(heavy_.size());
  }
  running_.assign(sets, 0);
  running_light_.assign(sets, 0);
  alone_.assign(sets, 0);
}

// Per set, the sets sharing one of its links (ascending, each once).
void FlowContention::BuildConflicts(const TaskGraph& graph, int num_links) {
  const int32_t sets = graph.num_flow_sets();
  std::vector<int32_t> link_offset(num_links + 1, 0);
  for (int32_t fs = 0; fs < sets; ++fs) {
    for (const LinkUse& use : graph.flow_links(fs)) ++link_offset[use.link + 1];
  }
  for (int l = 0; l < num_links; ++l) link_offset[l + 1] += link_offset[l];
  std::vector<int32_t> link_sets(link_offset[num_links]);
  std::vector<int32_t> fill(link_offset.begin(), link_offset.end() - 1);
  for (int32_t fs = 0; fs < sets; ++fs) {
    for (const LinkUse& use : graph.flow_links(fs)) link_sets[fill[use.link]++] = fs;
  }
  std::vector<int32_t> seen(sets, -1);
  for (int32_t fs = 0; fs < sets; ++fs) {
    const size_t begin = conflict_.size();
    for (const LinkUse& use : graph.flow_links(fs)) {
      for (int32_t k = link_offset[use.link]; k < link_offset[use.link + 1]; ++k) {
        const int32_t other = link_sets[k];
        if (other == fs || seen[other] == fs) continue;
        seen[other] = fs;
        conflict_.push_back(other);
      }
    }
    std::sort(conflict_.begin() + static_cast<std::ptrdiff_t>(begin), conflict_.end());
    conflict_offset_[fs + 1] = static_cast<int32_t>(conflict_.size());
  }
}

bool FlowContention::Start(int32_t fs, std::vector<int32_t>& promote) {
  const bool heavy = is_heavy_[fs] != 0;
  bool busy = false;
  if (heavy) {
    busy = running_light_[fs] > 0;
    for (int32_t other : heavy_conflicts(fs)) busy = busy || running_[other] > 0;
  } else {
    for (int32_t other : conflicts(fs)) busy = busy || running_[other] > 0;
  }
  if (busy) {
    // Alone neighbours must share with this flow now. A heavy set with no
    // running light neighbour can only meet heavy ones.
    const auto candidates = heavy && running_light_[fs] == 0 ? heavy_conflicts(fs) : conflicts(fs);
    for (int32_t other : candidates) {
      if (alone_[other]) promote.push_back(other);
    }
  }
  ++running_[fs];
  if (!heavy) {
    for (int32_t h : heavy_conflicts(fs)) ++running_light_[h];
  }
  const bool solver = busy || always_solver_[fs];
  alone_[fs] = solver ? 0 : 1;
  return solver;
}

void FlowContention::End(int32_t fs, bool was_alone) {
  --running_[fs];
  if (!is_heavy_[fs]) {
    for (int32_t h : heavy_conflicts(fs)) --running_light_[h];
  }
  if (was_alone) alone_[fs] = 0;
}

}  // namespace parasim::simulator
