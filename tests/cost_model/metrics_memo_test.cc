// The ranking path (AnalyticalEvaluator::Metrics) reads the per-thread memo
// tables (unit costs, collectives, overlap phases, stage splits) and skips
// timing for a config that does not fit: Metrics() of one evaluator that
// saw every other config first, in two orders, equals a fresh evaluator's
// (cold tables) config by config, over configs that share keys and differ
// in what the keys leave out (sharding, schedule, prefetch), with lighter
// end stages, an uneven split, partial recompute and FP8 parameter gathers,
// and configs that do not fit beside ones that do.
#include <catch2/catch.hpp>

#include <vector>

#include "core/loaders.h"
#include "cost_model/evaluator.h"
#include "test_specs.h"

using namespace parasim;

namespace {

std::vector<ParallelConfig> Configs(int world, int layers) {
  std::vector<ParallelConfig> out;
  const ShardingMode shardings[] = {ShardingMode::kDdp, ShardingMode::kZero1, ShardingMode::kZero3,
                                    ShardingMode::kHsdp};
  for (int tp : {1, 2, 4}) {
    for (int pp : {1, 2, 4}) {
      const int dp = world / (tp * pp);
      for (int mbs : {1, 2}) {
        for (ShardingMode sharding : shardings) {
          for (int rc = 0; rc < 4; ++rc) {
            for (int split = 0; split < (pp == 4 ? 3 : 1); ++split) {
              ParallelConfig c;
              c.dp = dp;
              c.tp = tp;
              c.pp = pp;
              c.micro_batch = mbs;
              c.sharding = sharding;
              c.hsdp_group = sharding == ShardingMode::kHsdp ? 2 : 0;
              c.recompute = rc == 0 ? RecomputeMode::kNone : rc == 1 ? RecomputeMode::kSelective : RecomputeMode::kFull;
              c.recompute_layers = rc == 3 ? 2 : 0;   // partial: 2 layers of each stage
              c.sequence_parallel = tp > 1 && mbs == 2;
              c.schedule = (mbs + rc) % 2 ? PipelineSchedule::kGpipe : PipelineSchedule::k1F1B;
              c.prefetch = 1 + rc % 2;
              if (split == 1) c.pp_layers = {layers / 4 - 1, layers / 4 + 1, layers / 4 + 1, layers / 4 - 1};
              if (split == 2) c.pp_layers = {layers / 4 - 2, layers / 4 + 1, layers / 4 + 3, layers / 4 - 2};
              out.push_back(c);
            }
          }
        }
      }
    }
  }
  return out;
}

void RequireSame(const ConfigMetrics& a, const ConfigMetrics& b, const ParallelConfig& c) {
  INFO(c.ToString());
  REQUIRE(a.feasible == b.feasible);
  REQUIRE(a.reason_category == b.reason_category);
  REQUIRE(a.tokens_per_s == b.tokens_per_s);
  REQUIRE(a.tokens_per_joule == b.tokens_per_joule);
  REQUIRE(a.exposed_comm_fraction == b.exposed_comm_fraction);
}

}  // namespace

TEST_CASE("cost_model: Metrics() with warm placement and memory-term memos equals a cold evaluation",
          "[cost_model]") {
  const ModelSpec model = testing::Llama2_7b();
  const ClusterSpec cluster = LoadCluster("dgx-h100", 4);   // (with its FP8 rate)
  JobSpec fp8 = testing::Job(128, 8192);
  fp8.precision = Precision::kFp8;
  for (const JobSpec& job : {testing::Job(128, 8192), fp8}) {
    const std::vector<ParallelConfig> configs = Configs(cluster.TotalGpus(), static_cast<int>(model.num_layers));
    std::vector<ConfigMetrics> cold;
    for (const ParallelConfig& c : configs) cold.push_back(AnalyticalEvaluator(model, cluster, job).Metrics(c));
    int feasible = 0, memory = 0;
    for (const ConfigMetrics& m : cold) {
      feasible += m.feasible ? 1 : 0;
      memory += m.reason_category == "memory" ? 1 : 0;
    }
    CHECK(feasible > 20);   // both verdicts are reached
    CHECK(memory > 20);
    const AnalyticalEvaluator warm(model, cluster, job);
    for (size_t i = 0; i < configs.size(); ++i) RequireSame(warm.Metrics(configs[i]), cold[i], configs[i]);
    for (size_t i = configs.size(); i-- > 0;) RequireSame(warm.Metrics(configs[i]), cold[i], configs[i]);
  }
}
