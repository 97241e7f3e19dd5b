// nanotron's data-parallel gradient sync as its trainer runs it (a756526
// src/nanotron/trainer.py training_step): ZeRO-0 through torch DDP, whose comm
// hook all-reduces the fp32 accumulator's buckets under the last backward;
// ZeRO-1 without DDP, one blocking fp32 all-reduce of the whole gradient
// buffer after the pipeline pass (stack.zero1_grad_reduce_after_backward);
// its clipping and buffer zeroing then run over that whole buffer, not the
// rank's shard (stack.unsharded_step_bytes_per_param).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "cost_model/comm_plan.h"
#include "cost_model/evaluator.h"
#include "cost_model/software_stack.h"
#include "cost_model/workload.h"
#include "test_specs.h"

using namespace parasim;

namespace {

const WorkloadCollective* FindOp(const std::vector<WorkloadCollective>& list, CollectiveOp op) {
  for (const WorkloadCollective& w : list)
    if (w.op == op) return &w;
  return nullptr;
}

AnalyticalEvaluator Make(const SoftwareStack& stack) {
  return AnalyticalEvaluator(testing::Llama2_7b(), testing::Dgx(testing::H100(), 1), testing::Job(256, 4096), stack);
}

}  // namespace

TEST_CASE("nanotron grad sync: ZeRO-1 all-reduces the fp32 buffer after the backward, ZeRO-0 under it",
          "[cost_model][nanotron]") {
  const SoftwareStack s = LoadSoftwareStack("nanotron");
  REQUIRE(s.zero1_grad_reduce_after_backward);
  REQUIRE(s.zero1_grad_allreduce);
  REQUIRE(s.overlap_grad_reduce);
  const double params = 1e8;
  const std::vector<WorkloadCollective> zero1 =
      ShardingCollectives(ParseParallelConfig("dp=8,sharding=zero1"), s, params, 4, "dp_dense");
  const WorkloadCollective* ar = FindOp(zero1, CollectiveOp::kAllReduce);
  REQUIRE(ar != nullptr);
  CHECK(FindOp(zero1, CollectiveOp::kReduceScatter) == nullptr);
  CHECK(ar->phase == CommPhase::kStepEnd);
  CHECK(ar->blocking);
  CHECK(ar->size.si() == params * 4);   // the fp32 accumulator, whole
  CHECK_FALSE(ar->every_micro_batch);
  // The updated bf16 shards are gathered after the step, as before.
  const WorkloadCollective* ag = FindOp(zero1, CollectiveOp::kAllGather);
  REQUIRE(ag != nullptr);
  CHECK(ag->phase == CommPhase::kStepEnd);
  CHECK(ag->size.si() == params * 2);

  const std::vector<WorkloadCollective> ddp =
      ShardingCollectives(ParseParallelConfig("dp=8,sharding=ddp"), s, params, 4, "dp_dense");
  REQUIRE(ddp.size() == 1);
  CHECK(ddp[0].op == CollectiveOp::kAllReduce);
  CHECK(ddp[0].phase == CommPhase::kGradientReduce);   // the DDP hook, under the last backward
  CHECK_FALSE(ddp[0].blocking);
  CHECK(ddp[0].size.si() == params * 4);
}

TEST_CASE("nanotron grad sync: the flag only moves ZeRO-1's reduction and only makes a step slower",
          "[cost_model][nanotron]") {
  SoftwareStack on = LoadSoftwareStack("megatron-core");
  REQUIRE_FALSE(on.zero1_grad_reduce_after_backward);
  SoftwareStack off = on;
  on.zero1_grad_reduce_after_backward = true;
  const AnalyticalEvaluator with = Make(on), without = Make(off);
  for (const char* config : {"dp=8,tp=1,mbs=1,sharding=zero1", "dp=4,tp=2,mbs=2,sharding=zero1",
                             "dp=2,tp=4,mbs=1,sharding=zero1"}) {
    INFO(config);
    const Report a = with.Evaluate(ParseParallelConfig(config));
    const Report b = without.Evaluate(ParseParallelConfig(config));
    REQUIRE(a.feasible);
    // The reduce-scatter no longer hides under the backward: exposed in full.
    CHECK(a.step_time.si() > b.step_time.si());
    CHECK(a.exposed_comm.si() > b.exposed_comm.si());
    CHECK(a.compute.si() <= b.compute.si() + 1e-12);   // no interference beside the backward
  }
  // ddp never reads it: bit-identical.
  for (const char* config : {"dp=8,tp=1,mbs=1,sharding=ddp", "dp=4,tp=2,mbs=2,sharding=ddp"}) {
    INFO(config);
    CHECK(with.Evaluate(ParseParallelConfig(config)).step_time.si() ==
          without.Evaluate(ParseParallelConfig(config)).step_time.si());
  }
  // Without overlap the flag changes nothing either (already after the backward).
  on.overlap_grad_reduce = off.overlap_grad_reduce = false;
  CHECK(Make(on).Evaluate(ParseParallelConfig("dp=8,sharding=zero1")).step_time.si() ==
        Make(off).Evaluate(ParseParallelConfig("dp=8,sharding=zero1")).step_time.si());
}

TEST_CASE("nanotron grad sync: step bytes over the whole gradient do not shrink with the dp shard",
          "[cost_model][nanotron]") {
  const SoftwareStack nanotron = LoadSoftwareStack("nanotron");
  REQUIRE(nanotron.unsharded_step_bytes_per_param > 0);
  // Time added by B bytes per parameter in either field, on top of A.
  const double A = 28, B = 20;
  const auto step = [&](const char* config, double sharded, double whole) {
    SoftwareStack s = LoadSoftwareStack("megatron-core");
    s.optimizer_bytes_per_param = sharded;
    s.unsharded_step_bytes_per_param = whole;
    return Make(s).Evaluate(ParseParallelConfig(config)).step_time.si();
  };
  // ZeRO-1 over dp 8: per updated parameter the shard's, per whole-gradient
  // parameter all of them, 8x as many.
  const double base = step("dp=8,sharding=zero1", A, 0);
  const double whole = step("dp=8,sharding=zero1", A, B) - base;
  const double shard = step("dp=8,sharding=zero1", A + B, 0) - base;
  REQUIRE(shard > 0);
  CHECK_THAT(whole / shard, Catch::Matchers::WithinRel(8.0, 1e-6));
  // Unsharded (ddp): the same bytes in either field, the same step.
  CHECK_THAT(step("dp=8,sharding=ddp", A, B),
             Catch::Matchers::WithinRel(step("dp=8,sharding=ddp", A + B, 0), 1e-12));
}
