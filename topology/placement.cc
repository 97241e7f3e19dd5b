#include "topology/placement.h"

#include <algorithm>
#include <array>
#include <sstream>

#include "core/check.h"
#include "core/error.h"

namespace parasim {
namespace {

constexpr std::array<const char*, 5> kTokens = {"tp", "cp", "ep", "dp", "pp"};

int DegreeOfToken(const ParallelConfig& c, const std::string& t) {
  if (t == "tp") return c.tp;
  if (t == "cp") return c.cp;
  if (t == "ep") return c.ep;
  if (t == "dp") return c.dp / c.ep;   // expert-data-parallel coordinate
  return c.pp;
}

// The order's tokens, innermost first, completed with missing size-1 dims
// (and a missing ep placed just inside dp, as Megatron-Core does).
std::vector<std::string> OrderTokens(const ParallelConfig& c) {
  if (c.tp < 1 || c.cp < 1 || c.pp < 1 || c.dp < 1 || c.ep < 1)
    throw Error("", "config", StrCat("parallel degrees must be >= 1 (dp=", c.dp, " tp=", c.tp, " pp=", c.pp, " cp=", c.cp, " ep=", c.ep, ")"));
  if (c.dp % c.ep != 0)
    throw Error("", "config.ep", StrCat("ep=", c.ep, " must divide dp=", c.dp, " (experts shard the data-parallel group)"));
  std::vector<std::string> tokens;
  std::stringstream in(c.order);
  std::string t;
  while (std::getline(in, t, '-')) {
    if (std::find(kTokens.begin(), kTokens.end(), t) == kTokens.end())
      throw Error("", "config.order", StrCat("unknown dimension '", t, "' in order '", c.order, "' (use tp, cp, ep, dp, pp)"));
    if (std::find(tokens.begin(), tokens.end(), t) != tokens.end())
      throw Error("", "config.order", StrCat("dimension '", t, "' appears twice in order '", c.order, "'"));
    tokens.push_back(t);
  }
  auto has = [&](const char* x) { return std::find(tokens.begin(), tokens.end(), x) != tokens.end(); };
  if (!has("ep")) {
    auto dp = std::find(tokens.begin(), tokens.end(), "dp");
    tokens.insert(dp == tokens.end() ? tokens.end() : dp, "ep");
  }
  for (const char* x : kTokens) {
    if (has(x)) continue;
    if (DegreeOfToken(c, x) > 1)
      throw Error("", "config.order", StrCat("order '", c.order, "' leaves out '", x, "' whose degree is > 1"));
    tokens.push_back(x);
  }
  return tokens;
}

}  // namespace

GroupLayout LayoutOf(const ParallelConfig& config, ParallelDim dim, SubGroup sub) {
  const std::vector<std::string> tokens = OrderTokens(config);
  long long stride = 1;
  std::vector<GroupFactor> factors;
  const std::string want = ToString(dim);
  for (const std::string& t : tokens) {
    const int n = DegreeOfToken(config, t);
    const bool member = (t == want) || (dim == ParallelDim::kDp && t == "ep");
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
  if (sub.size > 0 && !(sub.size == size && sub.stride == 1)) {
    if (sub.stride < 1 || static_cast<long long>(sub.size) * sub.stride > size || size % (sub.size * sub.stride) != 0)
      throw Error("", "config", StrCat("sub-group of ", sub.size, " every ", sub.stride, " does not tile a ",
                                       want, " group of ", size));
    // Re-express members j*stride (j < sub.size) of the group in rank strides.
    std::vector<GroupFactor> out;
    long long skip = sub.stride;   // member index step
    int remaining = sub.size;
    for (const auto& f : factors) {
      if (remaining == 1) break;
      if (skip >= f.size) {
        PARASIM_CHECK(skip % f.size == 0, "sub-group stride must align with the group's factors");
        skip /= f.size;
        continue;
      }
      const int avail = static_cast<int>(f.size / skip);
      const int take = std::min(avail, remaining);
      PARASIM_CHECK(remaining % take == 0, "sub-group size must align with the group's factors");
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
    throw Error("", "config", StrCat("dp*tp*pp*cp = ", config.WorldSize(), " but the cluster has ", world, " GPUs"));
  (void)OrderTokens(config);   // validate once
}

int Placement::GroupCount(ParallelDim dim, SubGroup sub) const {
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

std::vector<std::vector<int>> Placement::AllGroups(ParallelDim dim, SubGroup sub) const {
  const GroupLayout l = LayoutOf(config_, dim, sub);
  std::vector<std::vector<int>> groups;
  groups.reserve(world_ / l.size);
  for (long long r = 0; r < world_; ++r)
    if (IsBase(l, r)) groups.push_back(GroupMembersAt(l, r));
  return groups;
}

std::vector<int> Placement::Members(ParallelDim dim, int index, SubGroup sub) const {
  const GroupLayout l = LayoutOf(config_, dim, sub);
  PARASIM_CHECK(index >= 0 && index < world_ / l.size, "group index out of range");
  int seen = 0;
  for (long long r = 0; r < world_; ++r)
    if (IsBase(l, r) && seen++ == index) return GroupMembersAt(l, r);
  PARASIM_CHECK(false, "group not found");
}

}  // namespace parasim
