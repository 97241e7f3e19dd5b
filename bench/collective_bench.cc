// EstimateCollective calls per second: the planner asks for several
// collectives per config, millions of configs. Mixed ops, sizes and group
// shapes (one node, 4 to 512 nodes, one rank per node), NCCL's full
// algorithm set; the forced-pair path is measured too.
#include <vector>

#include <benchmark/benchmark.h>

#include "cost_model/collective_cost.h"

namespace {

using namespace parasim;

GroupPath Group(int nodes, int per_node) {
  GroupPath p;
  p.nodes = nodes;
  p.ranks_per_node = per_node;
  p.ranks = nodes * per_node;
  p.crosses_nodes = nodes > 1;
  p.intra_bandwidth = GBps(450);
  p.inter_bandwidth = GBps(50.0 * per_node);
  p.ring_bandwidth = nodes > 1 ? GBps(std::min(450.0, 50.0 * per_node)) : GBps(450);
  p.intra_hop_latency = Microseconds(0.6);
  p.max_switch_hops = nodes <= 1 ? 0 : (nodes <= 32 ? 1 : 3);
  p.inter_hop_latency = Microseconds(1.0 + 0.2 * p.max_switch_hops);
  p.nvls_capable = nodes == 1;
  p.single_rail = per_node == 1 && nodes > 1;
  return p;
}

struct Workload {
  std::vector<GroupPath> groups = {Group(1, 8), Group(4, 8), Group(64, 8), Group(512, 8), Group(256, 1), Group(16, 2)};
  std::vector<CollectiveOp> ops = {CollectiveOp::kAllReduce, CollectiveOp::kAllGather, CollectiveOp::kReduceScatter,
                                   CollectiveOp::kAllToAll, CollectiveOp::kSendRecv};
  std::vector<double> sizes = {4096, 1 << 20, 16 << 20, 404766720.0, 4e9};
};

void BM_EstimateCollective(benchmark::State& state) {
  Workload w;
  NcclFeatures f;
  f.nvls = f.nvls_tree = f.pat = state.range(0) != 0;
  size_t i = 0;
  for (auto _ : state) {
    const GroupPath& g = w.groups[i % w.groups.size()];
    CollectiveOp op = w.ops[(i / 3) % w.ops.size()];
    double s = w.sizes[(i / 7) % w.sizes.size()];
    benchmark::DoNotOptimize(EstimateCollective(op, Bytes(s), g, f));
    ++i;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EstimateCollective)->Arg(0)->Arg(1)->ArgNames({"all_algos"});

void BM_EstimateCollectiveWith(benchmark::State& state) {
  Workload w;
  NcclFeatures f;
  CollectiveModelParams p;
  size_t i = 0;
  for (auto _ : state) {
    const GroupPath& g = w.groups[i % w.groups.size()];
    double s = w.sizes[(i / 7) % w.sizes.size()];
    benchmark::DoNotOptimize(
        EstimateCollectiveWith(CollectiveOp::kAllGather, Bytes(s), g, f, p, CollectiveAlgo::kRing, Protocol::kSimple));
    ++i;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EstimateCollectiveWith);

}  // namespace

BENCHMARK_MAIN();
