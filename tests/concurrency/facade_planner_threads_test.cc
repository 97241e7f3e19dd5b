// One Planner (shared specs, one shared cache) answering mixed Plan and
// Simulate queries from 8 threads at once gives exactly the serial answers.
// (Label tsan: the ThreadSanitizer tree runs it to find races in the cache
// and the evaluator's memo tables.)
#include <catch2/catch.hpp>

#include <thread>
#include <vector>

#include "parasim/parasim.h"
#include "tests/facade/facade_test_util.h"

namespace {

// A query of the mix: a plan (top 2 of a narrowed space) or one config's prediction.
struct Query {
  bool plan = false;
  int gpus = 0;
  long long global_batch = 0;
  std::string config;
};

std::vector<Query> Mix() {
  std::vector<Query> mix;
  const char* configs[] = {"dp=2,tp=4,pp=2,mbs=1,sharding=zero1", "dp=4,tp=2,pp=2,mbs=2,sharding=zero2",
                           "dp=8,tp=2,pp=1,mbs=1,sharding=zero3,recompute=full"};
  for (int round = 0; round < 2; ++round) {
    for (int gpus : {16, 32}) {
      for (long long batch : {32LL, 64LL}) {
        mix.push_back({true, gpus, batch, ""});
        for (const char* c : configs) mix.push_back({false, gpus, batch, gpus == 16 ? c : std::string(c) + ",cp=2"});
      }
    }
  }
  return mix;
}

std::vector<parasim::Prediction> Answer(const parasim::Planner& planner, const Query& q) {
  if (!q.plan) return {planner.Simulate({.gpus = q.gpus, .config = q.config, .global_batch = q.global_batch})};
  parasim::PlanQuery pq;
  pq.gpus = q.gpus;
  pq.global_batch = q.global_batch;
  pq.constraints = "tp<=4,pp<=2,mbs<=2";
  pq.top = 2;
  return planner.Plan(pq).plans;
}

parasim::Planner MakePlanner() {
  return parasim::Planner(parasim::Model::Load("llama2-7b"), parasim::Cluster::Load("dgx-h100"),
                          parasim::Job{.global_batch = 64, .seq_len = 4096});
}

}  // namespace

TEST_CASE("8 threads of mixed Plan and Simulate on one Planner equal the serial answers", "[threads]") {
  const std::vector<Query> mix = Mix();
  std::vector<std::vector<parasim::Prediction>> serial;
  {
    const parasim::Planner planner = MakePlanner();
    for (const Query& q : mix) serial.push_back(Answer(planner, q));
  }

  const parasim::Planner shared = MakePlanner();   // fresh: the threads race to fill its cache
  constexpr int kThreads = 8;
  std::vector<std::vector<std::vector<parasim::Prediction>>> got(kThreads,
                                                                 std::vector<std::vector<parasim::Prediction>>(mix.size()));
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      // Each thread walks the mix from its own offset, so queries of every kind overlap.
      for (size_t k = 0; k < mix.size(); ++k) {
        const size_t i = (k + static_cast<size_t>(t) * mix.size() / kThreads) % mix.size();
        const parasim::Planner copy = shared;   // copies share the cache
        got[t][i] = Answer(t % 2 ? copy : shared, mix[i]);
      }
    });
  }
  for (std::thread& th : threads) th.join();

  for (int t = 0; t < kThreads; ++t) {
    for (size_t i = 0; i < mix.size(); ++i) {
      REQUIRE(got[t][i].size() == serial[i].size());
      REQUIRE_FALSE(serial[i].empty());
      for (size_t k = 0; k < serial[i].size(); ++k) CHECK(SamePrediction(got[t][i][k], serial[i][k]));
    }
  }
}
