// The evaluator keeps per-thread memo tables (cost_model/eval_memo.h) of
// pure results keyed by what they depend on. A report must never depend on
// what the tables held before: every config is checked bit for bit against a
// fresh evaluator (cold tables), against a shared one warmed by all the other
// configs in two orders, and on two threads at once.
#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <thread>
#include <vector>

#include "cost_model/evaluator.h"
#include "report_golden.h"
#include "test_specs.h"

using namespace parasim;

namespace {

struct Setup {
  ModelSpec model;
  ClusterSpec cluster;
  JobSpec job;
};

std::vector<Setup> Setups() {
  ModelSpec moe = testing::Llama2_7b();
  moe.name = "moe";
  moe.num_kv_heads = 8;
  moe.num_experts = 8;
  moe.experts_per_token = 2;
  moe.moe_ffn_hidden_size = 3584;
  ModelSpec gpt = testing::Gpt(2048, 24, 16, 51200);
  gpt.tied_embeddings = true;
  JobSpec megatron = testing::Job(64, 2048);
  megatron.stack = "megatron-core";
  JobSpec unfused = testing::Job(128, 2048);
  unfused.stack = "megatron-lm-2021";   // unfused attention: score activations and traffic
  return {{testing::Llama2_7b(), testing::Dgx(testing::H100(), 4), testing::Job(64, 4096)},
          {moe, testing::Dgx(testing::H100(), 4), megatron},
          {gpt, testing::Dgx(testing::A100(), 2), unfused}};
}

// A sample of every kind of config (invalid ones included: their reports must match too).
std::vector<ParallelConfig> Configs(int world, uint32_t seed) {
  std::mt19937 rng(seed);
  const char* shardings[] = {"ddp", "zero1", "zero2-replicated", "zero2", "zero3", "hsdp:2"};
  const char* recomputes[] = {"none", "selective", "full"};
  const char* orders[] = {"tp-cp-ep-dp-pp", "tp-dp-cp-ep-pp", "dp-tp-cp-ep-pp"};
  std::vector<ParallelConfig> out;
  for (int tp : {1, 2, 4, 8}) {
    for (int pp : {1, 2, 4}) {
      for (int cp : {1, 2}) {
        if (world % (tp * pp * cp) != 0) continue;
        const int dp = world / (tp * pp * cp);
        for (int ep : {1, 2}) {
          for (int mbs : {1, 2}) {
            for (const char* sh : shardings) {
              for (const char* rc : recomputes) {
                const bool interleaved = pp > 1 && rng() % 3 == 0;
                std::string text = "dp=" + std::to_string(dp) + ",tp=" + std::to_string(tp) +
                                   ",pp=" + std::to_string(pp) + ",cp=" + std::to_string(cp) +
                                   ",ep=" + std::to_string(ep) + ",mbs=" + std::to_string(mbs) +
                                   ",sharding=" + sh + ",recompute=" + rc + ",order=" + orders[rng() % 3] +
                                   ",prefetch=" + std::to_string(1 + rng() % 2) +
                                   (interleaved ? ",vpp=2,schedule=interleaved"
                                                : (rng() % 2 ? ",schedule=gpipe" : ",schedule=1f1b")) +
                                   (tp > 1 && rng() % 2 ? ",sp=on" : "");
                out.push_back(ParseParallelConfig(text));
              }
            }
          }
        }
      }
    }
  }
  return out;
}

}  // namespace

TEST_CASE("cost_model: memoized evaluation equals a cold evaluation, in any order", "[cost_model]") {
  for (const Setup& s : Setups()) {
    const std::vector<ParallelConfig> configs = Configs(s.cluster.TotalGpus(), 7);
    std::vector<std::string> cold;
    for (const ParallelConfig& c : configs) {
      cold.push_back(testing::GoldenText(AnalyticalEvaluator(s.model, s.cluster, s.job).Evaluate(c)));
    }
    const AnalyticalEvaluator warm(s.model, s.cluster, s.job);
    int feasible = 0;
    for (size_t i = 0; i < configs.size(); ++i) {
      const Report r = warm.Evaluate(configs[i]);
      feasible += r.feasible ? 1 : 0;
      REQUIRE(testing::GoldenText(r) == cold[i]);
    }
    CHECK(feasible > 20);   // the sample reaches the model, not only the rules
    for (size_t i = configs.size(); i-- > 0;) REQUIRE(testing::GoldenText(warm.Evaluate(configs[i])) == cold[i]);
  }
}

TEST_CASE("cost_model: per-thread memos give the same reports on concurrent threads", "[cost_model]") {
  const Setup s = Setups()[1];
  const std::vector<ParallelConfig> configs = Configs(s.cluster.TotalGpus(), 11);
  const AnalyticalEvaluator ev(s.model, s.cluster, s.job);
  std::vector<std::string> sequential;
  for (const ParallelConfig& c : configs) sequential.push_back(testing::GoldenText(ev.Evaluate(c)));
  std::vector<std::string> forward(configs.size()), backward(configs.size());
  std::thread a([&] {
    for (size_t i = 0; i < configs.size(); ++i) forward[i] = testing::GoldenText(ev.Evaluate(configs[i]));
  });
  std::thread b([&] {
    for (size_t i = configs.size(); i-- > 0;) backward[i] = testing::GoldenText(ev.Evaluate(configs[i]));
  });
  a.join();
  b.join();
  CHECK(forward == sequential);
  CHECK(backward == sequential);
}
