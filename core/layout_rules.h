// The layout rules: what a (dp, tp, pp, cp, ep) layout must meet for a model
// and a job (divisibility of heads, FFN width, sequence, batch, experts). One
// table, read by ParallelConfig::Validate and by the planner's search
// (planner/search_space.cc), so each rule, its reason and its message are
// written once and the two can never disagree on what is valid.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/error.h"

namespace parasim {

struct ModelSpec;
struct JobSpec;

// The degrees of one layout; dp·tp·pp·cp is the world size.
struct Layout {
  int64_t dp = 1, tp = 1, pp = 1, cp = 1, ep = 1;
};

struct LayoutRule {
  // Fixed spelling: the key of the planner's "rejected" counts.
  const char* reason;
  // The parallel-config key an issue names.
  const char* key;
  // What is wrong, with the numbers; empty when the layout meets the rule.
  std::string (*problem)(const ModelSpec& model, const JobSpec& job, const Layout& layout);
};

// The table, in the order the planner applies it (the first broken rule names
// a rejected layout).
const std::vector<LayoutRule>& LayoutRules();

// The first rule `layout` breaks, or nullptr when it meets them all.
const LayoutRule* FirstBrokenLayoutRule(const ModelSpec& model, const JobSpec& job, const Layout& layout);

// One issue per broken rule, in table order, keyed by the rule's key.
std::vector<Issue> LayoutIssues(const ModelSpec& model, const JobSpec& job, const Layout& layout,
                                const std::string& where);

}  // namespace parasim
