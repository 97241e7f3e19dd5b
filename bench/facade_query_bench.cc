// Scheduler queries through the facade (include/parasim/): the best plan for
// Llama-3-70B (global batch 1024, sequence 8192) on 2,048 DGX H100 GPUs,
// today's default space, tier A, one thread.
//   FirstQuery:          a fresh Planner, nothing cached.
//   ChangedGpuCount:     the Planner has answered 2,048 GPUs; now 1,024.
//   ChangedGlobalBatch:  the Planner has answered batch 1024; now 2048.
// Counters: configs scored (tier A) per query, searched, and feasible.
//
// Before the metrics-only ranking path and the facade's caches (one H100-less
// 2-core build machine, CPU time): first query 183 ms, changed GPU count
// 155 ms, changed batch 201 ms; scored 110,814 / 92,981 / 118,305 configs
// (searched 238,878 / 216,283 / 275,966). The scored counts must not drop.
// After (same machine, as loaded): about 90 / 76 / 98 ms, same counts.
// Then (query buffers for the scores, memory sized only up to the first stage
// that does not fit, best-first ranking from a heap, Pareto points cut before
// sorting, reason categories compared inline), the same 2-core machine under
// a load average of ~9, CPU time, min of 3 repetitions, both binaries back to
// back twice: before 101-103 / 83 / 104 ms, after 79 / 63-64 / 82 ms; the same
// counts. The issue's 20 ms / 2 ms are not reached (docs/DECISIONS.md, "Fast
// scheduler queries").
// Kernels-only interference (a `fixed` part per overlap unit) then cost ~8%
// (87-89 -> 96 ms). Recovered bit-identically (one fold for the factor's
// inputs, memo hashes in a table of their own), load average ~3.5, medians of
// 5, both binaries back to back twice, CPU time: before 96-100 / 76-77 /
// 99-101 ms, after 91-93 / 72-73 / 93-95 ms (real time 97-107 / 77-81 /
// 103-105 -> 92-94 / 74-75 / 99 ms); the same counts.
// Later model changes (GEMM library workspaces in memory, +64-100 MiB per GPU)
// push a few more configs over memory, and the memory implication then skips
// their larger micro-batches: scored 110,301 / 92,960 / 118,239 ->
// 110,295 / 92,949 / 118,206, searched unchanged. Both binaries back to back,
// medians of 5, twice: before 86.5 / 72.3 / 90.3-92.5 ms, after 89.8-92.5 /
// 72.5-73.4 / 94.7-97.2 ms (the machine's noise is a few ms).
// After the EFA tree rate, Megatron's backward TP overlap and nanotron's
// memory terms (none on this query's hot path but a few branches): 88.7 /
// 70.1 / 91.6 ms on an idle machine, the same scored and searched counts.
// Caching a config's dp- and m-free work for a changed GPU count or batch
// (docs/DECISIONS.md, "Fast scheduler queries", fourth pass): nothing kept.
// A layout's placement verdict for memory-rejected configs and memoized
// memory terms cut instructions by 3.5% / 4.3% / 4.2% (callgrind) but not
// time: CPU time, medians of 5, back to back with main on the loaded 2-core
// machine (load average 3-6): main 87.8-90.7 / 69.6-70.7 / 91.4-92.3 ms,
// with them 87.6-90.2 / 69.9-72.7 / 91.2-92.8 ms (the memo's L1 misses).
// BM_Enumerate_* times the space enumeration alone (a part of each query).
// "First query" means a fresh Planner (its caches empty); the process has
// run queries before, so the planner's per-thread buffers (planner.cc
// QueryBuffers) are already paged in, as in a scheduler that stays up.
#include <benchmark/benchmark.h>

#include "core/loaders.h"
#include "cost_model/software_stack.h"
#include "parasim/parasim.h"
#include "planner/search_space.h"

namespace {

parasim::Planner Make() {
  return parasim::Planner(parasim::Model::Load("llama3-70b"), parasim::Cluster::Load("dgx-h100"),
                          parasim::Job{.global_batch = 1024, .seq_len = 8192});
}

parasim::PlanQuery Query(int gpus, long long global_batch) {
  parasim::PlanQuery q;
  q.gpus = gpus;
  q.global_batch = global_batch;
  q.top = 1;
  q.threads = 1;
  return q;
}

void Report(benchmark::State& state, const parasim::PlanResult& r) {
  state.counters["scored"] = static_cast<double>(r.scored);
  state.counters["searched"] = static_cast<double>(r.searched);
  state.counters["feasible"] = static_cast<double>(r.feasible);
}

void BM_FirstQuery_70B_2048xH100(benchmark::State& state) {
  parasim::PlanResult r;
  for (auto _ : state) {
    state.PauseTiming();
    const parasim::Planner planner = Make();
    state.ResumeTiming();
    r = planner.Plan(Query(2048, 0));
    benchmark::DoNotOptimize(r.plans.data());
  }
  Report(state, r);
}

// `warm` is answered first (untimed), then `timed`.
void Changed(benchmark::State& state, const parasim::PlanQuery& warm, const parasim::PlanQuery& timed) {
  parasim::PlanResult r;
  for (auto _ : state) {
    state.PauseTiming();
    const parasim::Planner planner = Make();
    benchmark::DoNotOptimize(planner.Plan(warm).plans.data());
    state.ResumeTiming();
    r = planner.Plan(timed);
    benchmark::DoNotOptimize(r.plans.data());
  }
  Report(state, r);
}

void BM_ChangedGpuCount_70B_1024xH100(benchmark::State& state) {
  Changed(state, Query(2048, 0), Query(1024, 0));
}
void BM_ChangedGlobalBatch_70B_2048xH100(benchmark::State& state) {
  Changed(state, Query(2048, 0), Query(2048, 2048));
}

void BM_Enumerate_70B_2048xH100(benchmark::State& state) {
  const parasim::ModelSpec model = parasim::LoadModel("llama3-70b");
  parasim::JobSpec job;
  job.global_batch = 1024;
  job.seq_len = 8192;
  const parasim::planner::SpaceOptions options = parasim::planner::SpaceFor(parasim::LoadSoftwareStack(job.stack));
  size_t candidates = 0;
  parasim::planner::SearchSpace space;   // reused, as the planner reuses its per-thread one
  for (auto _ : state) {
    parasim::planner::EnumerateSpace(model, job, 2048, 8, parasim::planner::ConstraintSet{}, options, &space);
    candidates = space.candidates.size();
    benchmark::DoNotOptimize(space.candidates.data());
  }
  state.counters["candidates"] = static_cast<double>(candidates);
}

BENCHMARK(BM_Enumerate_70B_2048xH100)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FirstQuery_70B_2048xH100)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ChangedGpuCount_70B_1024xH100)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ChangedGlobalBatch_70B_2048xH100)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
