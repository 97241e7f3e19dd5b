// Whole plan searches with tier A: the demo set-up (Llama-2-7B on 32 DGX H100
// nodes, global batch 512, sequence 4096) and the large one
// (Llama-3-70B on 2,048 H100s, global batch 1024, sequence 8192), on 1 thread
// and on every hardware thread. Counters: configs scored (tier A) and searched
// per second of wall time.
#include <thread>

#include <benchmark/benchmark.h>

#include "core/loaders.h"
#include "cost_model/evaluator.h"
#include "planner/planner.h"

namespace {

using namespace parasim;

void RunPlanBench(benchmark::State& state, const char* model_name, int nodes, long long batch, long long seq,
                  Fidelity fidelity) {
  const ModelSpec model = LoadModel(model_name);
  const ClusterSpec cluster = LoadCluster("dgx-h100", nodes);
  JobSpec job;
  job.global_batch = batch;
  job.seq_len = seq;
  const AnalyticalEvaluator evaluator(model, cluster, job);
  planner::PlanOptions options;
  options.threads = static_cast<int>(state.range(0));
  options.fidelity = fidelity;   // tier B re-scores the best 16 when asked
  int64_t scored = 0, searched = 0;
  for (auto _ : state) {
    const planner::PlanResult r = planner::RunPlan(evaluator, options);
    benchmark::DoNotOptimize(r.plans.data());
    scored += r.scored;
    searched += r.searched;
  }
  state.counters["scored_per_s"] = benchmark::Counter(static_cast<double>(scored), benchmark::Counter::kIsRate);
  state.counters["searched_per_s"] = benchmark::Counter(static_cast<double>(searched), benchmark::Counter::kIsRate);
  state.counters["scored"] = static_cast<double>(scored) / static_cast<double>(state.iterations());
  state.counters["searched"] = static_cast<double>(searched) / static_cast<double>(state.iterations());
}

void BM_PlanDemoLlama2_7B_256xH100(benchmark::State& state) {
  RunPlanBench(state, "llama2-7b", 32, 512, 4096, Fidelity::kAnalytical);
}
// The target: full space, tier-B re-scoring of the top 16, under 1 s on 2 cores.
void BM_PlanLlama3_70B_2048xH100_TierB16(benchmark::State& state) {
  RunPlanBench(state, "llama3-70b", 256, 1024, 8192, Fidelity::kSimulated);
}

const int kHardwareThreads = std::max(1u, std::thread::hardware_concurrency());

BENCHMARK(BM_PlanDemoLlama2_7B_256xH100)->Arg(1)->Arg(kHardwareThreads)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_PlanLlama3_70B_2048xH100_TierB16)->Arg(1)->Arg(kHardwareThreads)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
