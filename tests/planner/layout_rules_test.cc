// The planner's search and ParallelConfig::Validate read one table of layout
// rules (core/layout_rules.h): over a grid of models, jobs and GPU counts, a
// layout the search rejects by a rule is exactly one Validate rejects, with
// the same key and message, and every candidate the search keeps validates.
#include <map>
#include <string>

#include <catch2/catch.hpp>

#include "core/layout_rules.h"
#include "planner/search_space.h"
#include "test_specs.h"

using namespace parasim;
using namespace parasim::planner;
using parasim::planner::testing::Job;
using parasim::planner::testing::TinyModel;

namespace {

ModelSpec Moe(int layers, int heads, int experts) {
  ModelSpec m = TinyModel(layers, heads, 0);
  m.num_experts = experts;
  m.experts_per_token = 2;
  m.moe_ffn_hidden_size = 48;
  return m;
}

// The rule whose message `issue` carries, or nullptr.
const LayoutRule* RuleOf(const Issue& issue, const ModelSpec& model, const JobSpec& job, const Layout& l) {
  for (const LayoutRule& rule : LayoutRules()) {
    if (issue.key == rule.key && issue.message == rule.problem(model, job, l)) return &rule;
  }
  return nullptr;
}

// What the search should count per reason, layout by layout, from Validate alone.
std::map<std::string, int64_t> ExpectedRejections(const ModelSpec& model, const JobSpec& job, int world) {
  std::map<std::string, int64_t> out;
  for (int64_t tp : Divisors(world)) {
    for (int64_t pp : Divisors(world / tp)) {
      for (int64_t cp : Divisors(world / (tp * pp))) {
        const int64_t dp = world / (tp * pp * cp);
        for (int64_t ep : model.IsMoe() ? Divisors(dp) : std::vector<int64_t>{1}) {
          ParallelConfig c;
          c.dp = static_cast<int>(dp);
          c.tp = static_cast<int>(tp);
          c.pp = static_cast<int>(pp);
          c.cp = static_cast<int>(cp);
          c.ep = static_cast<int>(ep);
          const Layout l{dp, tp, pp, cp, ep};
          const std::vector<Issue> issues = c.Validate(model, job, world);
          if (issues.empty()) {
            const bool split = model.num_layers % pp == 0 || !EndsLighterSplit(model.num_layers, static_cast<int>(pp), 1).empty() ||
                               !EndsLighterSplit(model.num_layers, static_cast<int>(pp), 2).empty();
            if (!split) ++out["divisibility: layers % pp"];   // valid, but not a split the search tries
            continue;
          }
          const LayoutRule* rule = RuleOf(issues.front(), model, job, l);
          REQUIRE(rule != nullptr);   // a default config breaks layout rules only
          CHECK(FirstBrokenLayoutRule(model, job, l) == rule);
          ++out[rule->reason];
        }
      }
    }
  }
  return out;
}

}  // namespace

TEST_CASE("layout rules: the search rejects exactly what Validate rejects, for the same reason", "[planner]") {
  const ModelSpec models[] = {TinyModel(2, 4), TinyModel(3, 6, 36), TinyModel(8, 12, 40), Moe(4, 4, 6)};
  const JobSpec jobs[] = {Job(6, 4), Job(8, 6), Job(12, 16)};
  int64_t rule_rejections = 0, candidates = 0;
  for (const ModelSpec& model : models) {
    for (const JobSpec& job : jobs) {
      for (int world : {1, 2, 3, 4, 6, 8, 12, 16, 24}) {
        SpaceOptions options;
        options.max_tp = world;   // no tp limit: only the rules cut
        const SearchSpace space = EnumerateSpace(model, job, world, 8, ConstraintSet{}, options);
        std::map<std::string, int64_t> layout_cuts;
        for (const auto& [reason, n] : space.rejected) {
          if (reason != "divisibility: micro-batches % pp (interleaved)") layout_cuts[reason] = n;
        }
        const std::map<std::string, int64_t> expected = ExpectedRejections(model, job, world);
        INFO("model " << model.num_layers << " layers, " << model.num_attention_heads << " heads; batch "
                      << job.global_batch << ", seq " << job.seq_len << "; " << world << " GPUs");
        CHECK(layout_cuts == expected);
        for (const auto& [reason, n] : expected) rule_rejections += reason == "divisibility: layers % pp" ? 0 : n;
        for (size_t i = 0; i < space.candidates.size(); ++i) {
          const std::vector<Issue> issues = space.ToConfig(i).Validate(model, job, world);
          CHECK(issues.empty());
          ++candidates;
        }
      }
    }
  }
  CHECK(rule_rejections > 50);   // the grid exercises the rules, not just the valid corner
  CHECK(candidates > 1000);
}

TEST_CASE("layout rules: Validate reports every broken rule at once", "[planner]") {
  // tp=3 breaks the 4 heads and the FFN width 64; cp=2 the sequence 6 (2·cp = 4);
  // dp=1, batch 6: fine.
  const ModelSpec model = TinyModel(2, 4);
  const JobSpec job = Job(6, 6);
  ParallelConfig c;
  c.tp = 3;
  c.cp = 2;
  const std::vector<Issue> issues = c.Validate(model, job, 6);
  REQUIRE(issues.size() == 3);
  CHECK(issues[0].message == "tp=3 does not divide the 4 attention heads");
  CHECK(issues[1].message == "tp=3 does not divide the FFN width 64");
  CHECK(issues[2].key == "cp");
  CHECK(FirstBrokenLayoutRule(model, job, Layout{1, 3, 1, 2, 1})->reason ==
        std::string("divisibility: attention heads % tp"));
}
