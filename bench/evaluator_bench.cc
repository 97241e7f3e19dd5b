// Tier-A evaluation throughput: a mixed set of configs of a 70B model on
// 2048 H100 (256 DGX nodes), as the planner asks for them: the full Report
// (Evaluate) and the planner's ranking metrics (Metrics).
#include <benchmark/benchmark.h>

#include <vector>

#include "core/loaders.h"
#include "cost_model/evaluator.h"
#include "cost_model/software_stack.h"

namespace {

std::vector<parasim::ParallelConfig> MixedConfigs() {
  std::vector<parasim::ParallelConfig> out;
  const char* shardings[] = {"zero1", "zero2", "zero3", "ddp"};
  for (int tp : {1, 2, 4, 8}) {
    for (int pp : {1, 2, 4, 8, 16}) {
      const int dp = 2048 / (tp * pp);
      for (int mbs : {1, 2}) {
        for (const char* sh : shardings) {
          for (const char* rc : {"none", "selective", "full"}) {
            parasim::ParallelConfig c = parasim::ParseParallelConfig(
                parasim::StrCat("dp=", dp, ",tp=", tp, ",pp=", pp, ",mbs=", mbs, ",sharding=", sh,
                                ",recompute=", rc, tp > 1 ? ",sp=on" : ""));
            out.push_back(c);
          }
        }
      }
    }
  }
  return out;
}

parasim::AnalyticalEvaluator Mixed70BEvaluator() {
  parasim::JobSpec job;
  job.global_batch = 2048;
  job.seq_len = 4096;
  return parasim::AnalyticalEvaluator(parasim::LoadModel("llama2-70b"), parasim::LoadCluster("dgx-h100", 256), job);
}

// Times `score(config)` over the mixed configs, round robin.
template <typename Score>
void ScoreMixedConfigs(benchmark::State& state, Score score) {
  const auto configs = MixedConfigs();
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(score(configs[i]));
    i = i + 1 == configs.size() ? 0 : i + 1;
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_EvaluateMixed70B(benchmark::State& state) {
  const parasim::AnalyticalEvaluator ev = Mixed70BEvaluator();
  ScoreMixedConfigs(state, [&](const parasim::ParallelConfig& c) { return ev.Evaluate(c); });
}
BENCHMARK(BM_EvaluateMixed70B);

// The planner's metrics-only path (AnalyticalEvaluator::Metrics) on the same configs.
void BM_MetricsMixed70B(benchmark::State& state) {
  const parasim::AnalyticalEvaluator ev = Mixed70BEvaluator();
  ScoreMixedConfigs(state, [&](const parasim::ParallelConfig& c) { return ev.Metrics(c); });
}
BENCHMARK(BM_MetricsMixed70B);

// The metrics path on megatron-core, whose stages price their step-end
// finalize collectives (tp all-reduce of the tp-replicated gradients, the
// grad-norm all-reduce), against the same stack with them off (arg 0).
void BM_MetricsMixed70BMegatronCore(benchmark::State& state) {
  parasim::JobSpec job;
  job.global_batch = 2048;
  job.seq_len = 4096;
  parasim::SoftwareStack stack = parasim::LoadSoftwareStack("megatron-core");
  if (state.range(0) == 0) {
    stack.sp_grad_bytes = 0;
    stack.grad_norm_allreduce = false;
  }
  const parasim::AnalyticalEvaluator ev(parasim::LoadModel("llama2-70b"), parasim::LoadCluster("dgx-h100", 256), job,
                                        stack);
  ScoreMixedConfigs(state, [&](const parasim::ParallelConfig& c) { return ev.Metrics(c); });
}
BENCHMARK(BM_MetricsMixed70BMegatronCore)->Arg(0)->Arg(1);

}  // namespace

BENCHMARK_MAIN();
