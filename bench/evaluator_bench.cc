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

// A model of two layer kinds (Mixtral 8x7B with every other layer dense, as
// Llama 4 Maverick's interleave_moe_layer_step 2) on 192 H100: each stage
// counts its layers of each kind (CountStageKinds). Arg 0: the stack's
// balanced split (memoized per pp and vpp); arg 1: the planner's
// ends-lighter splits (explicit pp_layers, the end stages two layers
// lighter, as SearchSpace::ToConfig sets them). Counter: configs feasible.
void BM_MetricsSeveralKinds(benchmark::State& state) {
  parasim::JobSpec job;
  job.global_batch = 1536;
  job.seq_len = 4096;
  parasim::ModelSpec model = parasim::LoadModel("mixtral-8x7b");
  model.moe_layer_interval = 2;
  const parasim::AnalyticalEvaluator ev(model, parasim::LoadCluster("dgx-h100", 24), job,
                                        parasim::LoadSoftwareStack("megatron-core"));
  std::vector<parasim::ParallelConfig> configs;
  for (int tp : {1, 2, 4, 8}) {
    for (int pp : {3, 4, 6}) {   // (32 + 2·2) / pp whole
      for (const char* rc : {"none", "selective", "full"}) {
        parasim::ParallelConfig c = parasim::ParseParallelConfig(
            parasim::StrCat("dp=", 192 / (tp * pp), ",tp=", tp, ",pp=", pp, ",mbs=1,sharding=zero1,recompute=", rc,
                            tp > 1 ? ",sp=on" : ""));
        if (state.range(0) == 1) {
          c.pp_layers.assign(pp, (32 + 2 * 2) / pp);
          c.pp_layers.front() -= 2;
          c.pp_layers.back() -= 2;
        }
        configs.push_back(c);
      }
    }
  }
  int feasible = 0;
  for (const parasim::ParallelConfig& c : configs) feasible += ev.Metrics(c).feasible ? 1 : 0;
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(ev.Metrics(configs[i]));
    i = i + 1 == configs.size() ? 0 : i + 1;
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["feasible"] = feasible;
}
BENCHMARK(BM_MetricsSeveralKinds)->Arg(0)->Arg(1);

}  // namespace

BENCHMARK_MAIN();
