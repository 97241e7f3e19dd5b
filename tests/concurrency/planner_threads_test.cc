// Concurrency (ctest label `tsan`, run under ThreadSanitizer in CI): the
// planner's worker threads and concurrent evaluators share memo tables and
// specs; their results must equal the serial ones exactly.
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "core/loaders.h"
#include "cost_model/evaluator.h"
#include "planner/planner.h"
#include "planner/scaling.h"
#include "tests/planner/plan_digest.h"

using namespace parasim;
using namespace parasim::planner;

namespace {

JobSpec Job(int global_batch) {
  JobSpec job;
  job.global_batch = global_batch;
  job.seq_len = 4096;
  return job;
}

std::string PlanText(const AnalyticalEvaluator& evaluator, int threads) {
  PlanOptions o;
  o.threads = threads;
  o.top_k = 4;
  return parasim_test::PlanDigest(RunPlan(evaluator, o));
}

}  // namespace

TEST_CASE("concurrency: a plan on 4 threads equals the serial plan byte for byte", "[concurrency]") {
  const AnalyticalEvaluator evaluator(LoadModel("llama2-7b"), ResizeCluster(LoadCluster("dgx-h100"), 32), Job(256));
  const std::string serial = PlanText(evaluator, 1);
  CHECK(PlanText(evaluator, 4) == serial);
}

TEST_CASE("concurrency: evaluators used from 8 threads at once give the serial reports", "[concurrency]") {
  const ModelSpec model = LoadModel("llama2-7b");
  const ClusterSpec cluster = ResizeCluster(LoadCluster("dgx-h100"), 16);
  const AnalyticalEvaluator shared(model, cluster, Job(128));
  const std::vector<std::string> configs = {"dp=128,tp=1,pp=1,mbs=1,sharding=zero2",
                                            "dp=64,tp=2,pp=1,mbs=1,sharding=zero3",
                                            "dp=32,tp=2,pp=2,mbs=1,sharding=zero1",
                                            "dp=16,tp=8,pp=1,mbs=2,sharding=ddp"};
  std::vector<double> serial;
  for (const std::string& c : configs) serial.push_back(shared.Evaluate(ParseParallelConfig(c, "test")).step_time.si());

  constexpr int kThreads = 8;
  std::vector<std::vector<double>> got(kThreads);
  std::vector<std::thread> pool;
  for (int t = 0; t < kThreads; ++t) {
    pool.emplace_back([&, t] {
      // Half the threads share one evaluator, half build their own: both
      // paths touch the per-thread memo tables keyed by evaluator.
      const AnalyticalEvaluator own(model, cluster, Job(128));
      const AnalyticalEvaluator& e = t % 2 == 0 ? shared : own;
      for (int round = 0; round < 3; ++round) {
        got[t].clear();
        for (size_t i = 0; i < configs.size(); ++i) {
          const std::string& c = configs[(i + t) % configs.size()];
          got[t].push_back(e.Evaluate(ParseParallelConfig(c, "test")).step_time.si());
        }
      }
    });
  }
  for (std::thread& th : pool) th.join();
  for (int t = 0; t < kThreads; ++t) {
    for (size_t i = 0; i < configs.size(); ++i) CHECK(got[t][i] == serial[(i + t) % configs.size()]);
  }
}
