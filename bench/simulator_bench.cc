// Simulator benchmarks: raw engine event rate (target ≥ 10^7 events/s on one
// core), max-min re-solves, and (once the schedule builder exists) one tier-B
// training step.
#include <benchmark/benchmark.h>

#include <vector>

#include "simulator/engine.h"
#include "simulator/flow_solver.h"
#include "simulator/task_graph.h"

namespace parasim::simulator {
namespace {

// A pipeline-like graph: `ranks` ranks, each a compute stream and a comm
// stream; every compute op feeds a comm op, and every comm op feeds the next
// rank's compute op of the next step (a cross-rank chain), so the queue holds
// events of many ranks at once as in a real step.
TaskGraph MakeBenchGraph(int ranks, int ops_per_rank) {
  TaskGraph g;
  std::vector<int> compute(ranks), comm(ranks);
  for (int r = 0; r < ranks; ++r) {
    int rank = g.AddRank("r");
    compute[r] = g.AddStream(rank, StreamKind::kCompute);
    comm[r] = g.AddStream(rank, StreamKind::kTp);
  }
  std::vector<int32_t> prev_comm(ranks, -1);
  for (int i = 0; i < ops_per_rank; ++i) {
    std::vector<int32_t> this_comm(ranks);
    for (int r = 0; r < ranks; ++r) {
      int32_t k = g.AddOp(compute[r], {.kind = WorkKind::kMatmul, .duration_s = 1e-4 * (1 + (i + r) % 3)});
      int32_t x = g.AddOp(comm[r], {.kind = WorkKind::kComm, .duration_s = 5e-5});
      g.AddDependency(k, x);
      if (prev_comm[(r + ranks - 1) % ranks] >= 0) g.AddDependency(prev_comm[(r + ranks - 1) % ranks], k);
      this_comm[r] = x;
    }
    prev_comm = this_comm;
  }
  g.Finalize();
  return g;
}

void BM_EngineEvents(benchmark::State& state) {
  TaskGraph g = MakeBenchGraph(static_cast<int>(state.range(0)), 20000);
  Engine engine;
  EngineOptions opt;
  opt.interference_slowdown = state.range(1) ? 0.1 : 0.0;
  uint64_t events = 0;
  for (auto _ : state) {
    const Timeline& t = engine.Run(g, opt);
    events += t.events;
    benchmark::DoNotOptimize(t.makespan_s);
  }
  state.counters["events_per_s"] = benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_EngineEvents)->Args({8, 0})->Args({64, 0})->Args({64, 1})->Unit(benchmark::kMillisecond);

// Max-min: flows arriving and leaving on a shared fat-tree-like core: each
// solve re-solves one connected component.
void BM_FlowSolverChurn(benchmark::State& state) {
  const int links = 256;
  std::vector<double> caps(links, 50e9);
  FlowSolver s(caps);
  std::vector<int32_t> live;
  uint64_t step = 0;
  for (auto _ : state) {
    LinkUse path[3] = {{static_cast<int32_t>(step % 128), 1},
                       {static_cast<int32_t>(128 + step % 64), 1},
                       {static_cast<int32_t>(192 + (step * 7) % 64), 1}};
    live.push_back(s.AddFlow(path));
    if (live.size() > static_cast<size_t>(state.range(0))) {
      s.RemoveFlow(live.front());
      live.erase(live.begin());
    }
    benchmark::DoNotOptimize(s.Solve().size());
    ++step;
  }
  state.counters["flows_solved_per_s"] =
      benchmark::Counter(static_cast<double>(s.flows_solved()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_FlowSolverChurn)->Arg(16)->Arg(256);

}  // namespace
}  // namespace parasim::simulator

BENCHMARK_MAIN();
