// Compute/communication interference (evaluator.cc OverlapInterference):
// matmul kernels lose NCCL's SMs, memory-bound kernels the HBM bandwidth of
// NCCL's data path, which grows with the collective's bus bandwidth.
#include <catch2/catch.hpp>

#include "cost_model/evaluator.h"
#include "cost_model/software_stack.h"
#include "cost_model/workload.h"
#include "test_specs.h"

using namespace parasim;

namespace {

double Kappa(const ClusterSpec& c, const SoftwareStack& stack, const std::string& config) {
  const AnalyticalEvaluator e(testing::Llama2_7b(), c, testing::Job(c.TotalGpus() * 2, 4096), stack);
  return e.BuildWorkload(ParseParallelConfig(config)).comm_interference;
}

double InterferenceSeconds(const ClusterSpec& c, const SoftwareStack& stack, const std::string& config) {
  const AnalyticalEvaluator e(testing::Llama2_7b(), c, testing::Job(c.TotalGpus() * 2, 4096), stack);
  for (const TimeBreakdownEntry& op : e.Evaluate(ParseParallelConfig(config)).by_op)
    if (op.name == "interference") return op.total.si();
  return -1;
}

}  // namespace

TEST_CASE("cost_model: no SMs and no HBM taken, no interference", "[cost_model][interference]") {
  SoftwareStack s = LoadSoftwareStack("pytorch-fsdp");
  s.nccl_channels = 0;
  s.nccl_memory_passes = 0;
  const ClusterSpec c = testing::Dgx(testing::H100(), 4);
  CHECK(Kappa(c, s, "dp=32,mbs=2,sharding=zero2") == 1.0);
  CHECK(InterferenceSeconds(c, s, "dp=32,mbs=2,sharding=zero2") == 0.0);
}

TEST_CASE("cost_model: HBM interference grows with NCCL's traffic", "[cost_model][interference]") {
  SoftwareStack s = LoadSoftwareStack("pytorch-fsdp");
  s.nccl_channels = 0;  // isolate the memory-bandwidth part
  const ClusterSpec one = testing::Dgx(testing::H100(), 1);
  const ClusterSpec sixteen = testing::Dgx(testing::H100(), 16);
  const double k_one = Kappa(one, s, "dp=8,mbs=2,sharding=zero2");
  const double k_sixteen = Kappa(sixteen, s, "dp=128,mbs=2,sharding=zero2");
  // NVLink rings move bytes faster than rings through the NICs: more HBM taken.
  CHECK(k_one > k_sixteen);
  CHECK(k_sixteen > 1.0);
  // Twice the passes, more than twice the slowdown (1/(1-h) is convex).
  SoftwareStack twice = s;
  twice.nccl_memory_passes *= 2;
  CHECK(Kappa(one, twice, "dp=8,mbs=2,sharding=zero2") - 1.0 > 2.0 * (k_one - 1.0));
  // Bounded: memory-bound ops are a minority of a 7B layer, so even a single
  // node's NVLink rings cost less than a quarter more time.
  CHECK(k_one < 1.25);
}

TEST_CASE("cost_model: SM interference weighs matmul time only", "[cost_model][interference]") {
  SoftwareStack s = LoadSoftwareStack("pytorch-fsdp");
  s.nccl_memory_passes = 0;
  const ClusterSpec c = testing::Dgx(testing::H100(), 4);
  const double k = Kappa(c, s, "dp=32,mbs=2,sharding=zero2");
  const double sm_share = 16.0 / 132.0;
  // Matmul kernels are most of the layer but not all of it.
  CHECK(k > 1.0 + 0.5 * sm_share);
  CHECK(k < 1.0 + sm_share);
}
