#include "topology/placement.h"

#include <algorithm>
#include <array>
#include <string_view>

#include "core/check.h"
#include "core/error.h"

namespace parasim {
namespace {

// Order tokens as ParallelDim values, in the enum's order.
constexpr std::array<const char*, 5> kTokens = {"tp", "cp", "ep", "dp", "pp"};

int DegreeOf(const ParallelConfig& c, ParallelDim d) {
  switch (d) {
    case ParallelDim::kTp: return c.tp;
    case ParallelDim::kCp: return c.cp;
    case ParallelDim::kEp: return c.ep;
    case ParallelDim::kDp: return c.dp / c.ep;   // expert-data-parallel coordinate
    case ParallelDim::kPp: return c.pp;
  }
  return 1;
}

// The order's dimensions, innermost first, completed with missing size-1
// dims (a missing ep goes just inside dp, as Megatron-Core does). No heap
// allocation on the valid path: the planner calls this per config.
std::array<ParallelDim, 5> OrderDims(const ParallelConfig& c) {
  if (c.tp < 1 || c.cp < 1 || c.pp < 1 || c.dp < 1 || c.ep < 1)
    throw InvalidInput("", "config", StrCat("parallel degrees must be >= 1 (dp=", c.dp, " tp=", c.tp, " pp=", c.pp,
                                     " cp=", c.cp, " ep=", c.ep, ")"));
  if (c.dp % c.ep != 0)
    throw InvalidInput("", "config.ep", StrCat("ep=", c.ep, " must divide dp=", c.dp, " (experts shard the data-parallel group)"));
  std::array<ParallelDim, 5> dims{};
  int n = 0;
  bool seen[5] = {false, false, false, false, false};
  const std::string_view order(c.order);
  size_t pos = 0;
  while (pos <= order.size()) {
    size_t end = order.find('-', pos);
    if (end == std::string_view::npos) end = order.size();
    const std::string_view t = order.substr(pos, end - pos);
    int idx = -1;
    for (int i = 0; i < 5; ++i)
      if (t == kTokens[i]) idx = i;
    if (idx < 0)
      throw InvalidInput("", "config.order", StrCat("unknown dimension '", std::string(t), "' in order '", c.order,
                                             "' (use tp, cp, ep, dp, pp)"));
    if (seen[idx])
      throw InvalidInput("", "config.order", StrCat("dimension '", std::string(t), "' appears twice in order '", c.order, "'"));
    seen[idx] = true;
    dims[n++] = static_cast<ParallelDim>(idx);
    pos = end + 1;
  }
  const int ep = static_cast<int>(ParallelDim::kEp);
  if (!seen[ep]) {
    int at = n;
    for (int i = 0; i < n; ++i)
      if (dims[i] == ParallelDim::kDp) at = i;
    for (int i = n; i > at; --i) dims[i] = dims[i - 1];
    dims[at] = ParallelDim::kEp;
    ++n;
    seen[ep] = true;
  }
  for (int i = 0; i < 5; ++i) {
    if (seen[i]) continue;
    if (DegreeOf(c, static_cast<ParallelDim>(i)) > 1)
      throw InvalidInput("", "config.order", StrCat("order '", c.order, "' leaves out '", kTokens[i], "' whose degree is > 1"));
    dims[n++] = static_cast<ParallelDim>(i);
  }
  return dims;
}

}  // namespace

GroupLayout LayoutOf(const ParallelConfig& config, ParallelDim dim, SubGroup sub) {
  const std::array<ParallelDim, 5> dims = OrderDims(config);
  long long stride = 1;
  std::vector<GroupFactor> factors;
  factors.reserve(2);
  const char* want = ToString(dim);
  for (ParallelDim t : dims) {
    const int n = DegreeOf(config, t);
    const bool member = t == dim || (dim == ParallelDim::kDp && t == ParallelDim::kEp);
    if (member && n > 1) {
      if (!factors.empty() && factors.back().stride * factors.back().size == stride)
        factors.back().size *= n;   // adjacent in the order: one strided factor
      else
        factors.push_back({n, stride});
    }
    stride *= n;
  }
  int size = 1;
  for (const auto& f : factors) size *= f.size;
  if (sub.ends) {
    // The first and the last member, b and b + sum_i (size_i − 1)·stride_i:
    // one factor of two. The pairs do not tile the ranks (the middle members
    // belong to none), so Placement enumerates them from the whole groups.
    long long last = 0;
    for (const auto& f : factors) last += (f.size - 1) * f.stride;
    GroupLayout ends;
    ends.extent = factors.empty() ? 1 : factors.back().stride * factors.back().size;
    if (last > 0) ends.factors.push_back({2, last});
    ends.size = last > 0 ? 2 : 1;
    return ends;
  }
  if (sub.size > 0 && !(sub.size == size && sub.stride == 1)) {
    if (sub.stride < 1 || static_cast<long long>(sub.size) * sub.stride > size || size % (sub.size * sub.stride) != 0)
      throw InvalidInput("", "config", StrCat("sub-group of ", sub.size, " every ", sub.stride, " does not tile a ",
                                       want, " group of ", size));
    // Re-express members j*stride (j < sub.size) of the group in rank strides.
    std::vector<GroupFactor> out;
    long long skip = sub.stride;   // member index step
    int remaining = sub.size;
    for (const auto& f : factors) {
      if (remaining == 1) break;
      if (skip >= f.size) {
        if (skip % f.size != 0) throw InvalidInput("", "config", StrCat("sub-group stride ", sub.stride, " does not align with the ", want, " group's layout"));
        skip /= f.size;
        continue;
      }
      const int avail = static_cast<int>(f.size / skip);
      const int take = std::min(avail, remaining);
      if (remaining % take != 0) throw InvalidInput("", "config", StrCat("sub-group of ", sub.size, " does not align with the ", want, " group's layout"));
      out.push_back({take, f.stride * skip});
      remaining /= take;
      skip = 1;
    }
    PARASIM_CHECK(remaining == 1, "sub-group does not fit its group");
    factors = out;
    size = sub.size;
  }
  GroupLayout layout;
  layout.factors = factors;
  layout.size = size;
  layout.extent = factors.empty() ? 1 : factors.back().stride * factors.back().size;
  return layout;
}

std::vector<int> GroupMembersAt(const GroupLayout& layout, long long base) {
  std::vector<int> out{static_cast<int>(base)};
  for (const auto& f : layout.factors) {
    const size_t n = out.size();
    for (int c = 1; c < f.size; ++c)
      for (size_t i = 0; i < n; ++i) out.push_back(static_cast<int>(out[i] + c * f.stride));
  }
  std::sort(out.begin(), out.end());
  return out;
}

Placement::Placement(const ParallelConfig& config, int world) : config_(config), world_(world) {
  if (config.WorldSize() != world)
    throw InvalidInput("", "config", StrCat("dp*tp*pp*cp = ", config.WorldSize(), " but the cluster has ", world, " GPUs"));
  (void)OrderDims(config);   // validate once
}

int Placement::GroupCount(ParallelDim dim, SubGroup sub) const {
  if (sub.ends) return GroupCount(dim);   // one pair per group
  return world_ / LayoutOf(config_, dim, sub).size;
}

namespace {
// True when rank r has coordinate 0 along every factor (r is a group's lowest rank).
bool IsBase(const GroupLayout& l, long long r) {
  for (const auto& f : l.factors)
    if ((r / f.stride) % f.size != 0) return false;
  return true;
}
}  // namespace

namespace {
// The first and last member of a group (ascending), or its only member.
std::vector<int> Ends(std::vector<int> group) {
  if (group.size() > 2) group = {group.front(), group.back()};
  return group;
}
}  // namespace

std::vector<std::vector<int>> Placement::AllGroups(ParallelDim dim, SubGroup sub) const {
  if (sub.ends) {
    std::vector<std::vector<int>> pairs = AllGroups(dim);
    for (auto& g : pairs) g = Ends(std::move(g));
    return pairs;
  }
  const GroupLayout l = LayoutOf(config_, dim, sub);
  std::vector<std::vector<int>> groups;
  groups.reserve(world_ / l.size);
  for (long long r = 0; r < world_; ++r)
    if (IsBase(l, r)) groups.push_back(GroupMembersAt(l, r));
  return groups;
}

std::vector<int> Placement::Members(ParallelDim dim, int index, SubGroup sub) const {
  if (sub.ends) return Ends(Members(dim, index));
  const GroupLayout l = LayoutOf(config_, dim, sub);
  PARASIM_CHECK(index >= 0 && index < world_ / l.size, "group index out of range");
  int seen = 0;
  for (long long r = 0; r < world_; ++r)
    if (IsBase(l, r) && seen++ == index) return GroupMembersAt(l, r);
  PARASIM_CHECK(false, "group not found");
}

}  // namespace parasim
