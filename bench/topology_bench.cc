// Topology scale benchmark: building rail-optimized fat-trees of 16k-131k
// GPUs (graph + routing structures), route queries per second, the O(1)
// closed form, and a graph ring analysis. Heap held by a built topology is
// reported as the counter heap_MiB (glibc mallinfo2 delta).
#include <malloc.h>

#include <random>

#include <benchmark/benchmark.h>

#include "core/cluster_spec.h"
#include "topology/group_path.h"
#include "topology/topology.h"
#include "topology/traffic.h"

namespace {

using namespace parasim;

// DGX H100-like nodes on a rail-optimized 3-tier fat-tree.
ClusterSpec Cluster(int gpus, int radix) {
  ClusterSpec c;
  c.name = "bench";
  c.gpu.nvlink_bandwidth = GBps(450);
  c.gpu.nvlink_links = 18;
  c.gpu.pcie_bandwidth = GBps(64);
  c.gpus_per_node = 8;
  c.nodes = gpus / 8;
  c.inter_node.tiers = 3;
  c.inter_node.rail_optimized = true;
  c.inter_node.switch_radix = radix;
  c.inter_node.nics_per_node = 8;
  c.inter_node.nic_bandwidth = Gbps(400);
  return c;
}

size_t HeapInUse() { return mallinfo2().uordblks; }

void BM_Build(benchmark::State& state) {
  const ClusterSpec c = Cluster(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  double heap = 0;
  for (auto _ : state) {
    const size_t before = HeapInUse();
    Topology t = Topology::Build(c);
    heap = static_cast<double>(HeapInUse() - before);
    benchmark::DoNotOptimize(t.link_count());
    state.counters["links"] = t.link_count();
    state.counters["vertices"] = t.vertex_count();
  }
  state.counters["heap_MiB"] = heap / (1024.0 * 1024.0);
}
BENCHMARK(BM_Build)->Args({16384, 64})->Args({65536, 64})->Args({131072, 128})->Unit(benchmark::kMillisecond);

void BM_Route(benchmark::State& state) {
  const Topology t = Topology::Build(Cluster(static_cast<int>(state.range(0)), static_cast<int>(state.range(1))));
  std::mt19937 rng(1);
  std::uniform_int_distribution<int> gpu(0, t.gpu_count() - 1);
  std::vector<std::pair<int, int>> pairs(4096);
  for (auto& p : pairs) p = {gpu(rng), gpu(rng)};
  size_t i = 0;
  for (auto _ : state) {
    const auto& [a, b] = pairs[i++ & 4095];
    benchmark::DoNotOptimize(t.RouteBetween(a, b));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Route)->Args({16384, 64})->Args({131072, 128});

void BM_ResolveGroupPath(benchmark::State& state) {
  const ClusterSpec c = Cluster(16384, 64);
  ParallelConfig cfg;
  cfg.tp = 8;
  cfg.pp = 4;
  cfg.dp = 512;
  for (auto _ : state) benchmark::DoNotOptimize(ResolveGroupPath(c, cfg, ParallelDim::kDp));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ResolveGroupPath);

void BM_AnalyzeDpRings16k(benchmark::State& state) {
  const Topology t = Topology::Build(Cluster(16384, 64));
  ParallelConfig cfg;
  cfg.tp = 8;
  cfg.pp = 4;
  cfg.dp = 512;
  for (auto _ : state) benchmark::DoNotOptimize(AnalyzeRings(t, cfg, ParallelDim::kDp).bus_bandwidth);
}
BENCHMARK(BM_AnalyzeDpRings16k)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
