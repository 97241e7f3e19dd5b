// DeepSpeed's pipeline engine as the megatron-deepspeed preset prices it
// (docs/DECISIONS.md "DeepSpeed's pipeline engine"): four one-way boundary
// transfers in turn per micro-batch, three tp all-gathers of the partitioned
// tensor, ZeRO-1 by a full gradient all-reduce, and the fp16 stack file's
// gradient accumulation. Defaults (2 transfers, 2 gathers, reduce-scatter)
// price Megatron's engine as before.
#include <catch2/catch.hpp>

#include "core/parallel_config.h"
#include "cost_model/evaluator.h"
#include "cost_model/pipeline_boundary.h"
#include "cost_model/software_stack.h"
#include "report_dimensions.h"
#include "test_specs.h"
#include "tests/cost_model/collective_test_util.h"

using namespace parasim;
using Catch::Matchers::WithinRel;

namespace {

PipelineBoundaryParts Parts(double send, double meta, double meta_count, double gather) {
  PipelineBoundaryParts p;
  p.send = send;
  p.meta = meta;
  p.meta_count = meta_count;
  p.gather = gather;
  return p;
}

// A 4-node A100 job whose pipeline crosses nodes: tp 4 (partitioned sends), pp 4.
double PpTotal(const SoftwareStack& s, const char* cfg) {
  const AnalyticalEvaluator e(testing::Gpt(4096, 16, 32, 51200), testing::Dgx(testing::A100(), 4),
                              testing::Job(64, 2048), s);
  const Report r = e.Evaluate(ParseParallelConfig(cfg));
  REQUIRE(r.step_time.si() > 0);
  return testing::DimTotal(r, "pp");
}

}  // namespace

TEST_CASE("cost_model: a pipeline boundary costs transfers/2 sends and gathers/2 gathers per direction",
          "[cost_model][pipeline]") {
  SoftwareStack megatron = LoadSoftwareStack("megatron-lm-2021");
  REQUIRE(megatron.pp_transfers_per_micro_batch == 2);
  REQUIRE(megatron.pp_tp_gathers_per_micro_batch == 2);
  const PipelineBoundaryParts p = Parts(3e-3, 20e-6, 1, 1e-3);
  // Megatron: one paired exchange and one gather per direction.
  CHECK(PipelineBoundaryTime(megatron, p) == 3e-3 + 20e-6 + 1e-3);
  // DeepSpeed: twice the transfers (each behind its shape message), 1.5 gathers.
  const SoftwareStack ds = LoadSoftwareStack("megatron-deepspeed");
  CHECK(ds.pp_transfers_per_micro_batch == 4);
  CHECK(ds.pp_tp_gathers_per_micro_batch == 3);
  CHECK_THAT(PipelineBoundaryTime(ds, p), WithinRel(2 * (3e-3 + 20e-6) + 1.5e-3, 1e-15));
  // Not partitioned: no gather to count.
  CHECK(PipelineBoundaryTime(ds, Parts(3e-3, 0, 0, 0)) == 2 * 3e-3);
  // Linear in each count.
  megatron.pp_transfers_per_micro_batch = 3;
  CHECK_THAT(PipelineBoundaryTime(megatron, p), WithinRel(1.5 * (3e-3 + 20e-6) + 1e-3, 1e-15));
}

TEST_CASE("cost_model: the engine's pipeline time grows linearly with its transfers and gathers",
          "[cost_model][pipeline]") {
  SoftwareStack s = LoadSoftwareStack("megatron-deepspeed");
  const char* cfg = "dp=2,tp=4,pp=4,mbs=1";
  auto at = [&](double transfers, double gathers) {
    s.pp_transfers_per_micro_batch = transfers;
    s.pp_tp_gathers_per_micro_batch = gathers;
    return PpTotal(s, cfg);
  };
  const double base = at(2, 2), t3 = at(3, 2), t4 = at(4, 2), g3 = at(2, 3), both = at(4, 3);
  CHECK(base > 0);
  CHECK(t3 > base);
  CHECK(g3 > base);
  // Each added transfer (or gather) adds the same time; the two add up.
  CHECK_THAT(t4 - t3, WithinRel(t3 - base, 1e-9));
  CHECK_THAT(both - base, WithinRel((t4 - base) + (g3 - base), 1e-9));
  // No pipeline, no boundary: the counts change nothing.
  const char* flat = "dp=8,tp=4,pp=1,mbs=1";
  s.pp_transfers_per_micro_batch = 2;
  s.pp_tp_gathers_per_micro_batch = 2;
  const double flat_before = PpTotal(s, flat);
  s.pp_transfers_per_micro_batch = 4;
  s.pp_tp_gathers_per_micro_batch = 3;
  CHECK(PpTotal(s, flat) == flat_before);
}

TEST_CASE("cost_model: ZeRO-1 by a full gradient all-reduce costs more than by reduce-scatter",
          "[cost_model][pipeline]") {
  SoftwareStack s = LoadSoftwareStack("megatron-deepspeed");
  REQUIRE(s.zero1_grad_allreduce);
  auto dp = [&](bool allreduce, const char* cfg) {
    s.zero1_grad_allreduce = allreduce;
    const AnalyticalEvaluator e(testing::Gpt(4096, 16, 32, 51200), testing::Dgx(testing::A100(), 4),
                                testing::Job(64, 2048), s);
    return testing::DimTotal(e.Evaluate(ParseParallelConfig(cfg)), "dp");
  };
  const char* cfg = "dp=8,tp=4,pp=1,mbs=1,sharding=zero1";
  const double rs = dp(false, cfg), ar = dp(true, cfg);
  CHECK(ar > rs);
  // The ring all-reduce moves twice the reduce-scatter's bytes: at most
  // twice its time, the parameter all-gather beside it unchanged.
  CHECK(ar < 2 * rs);
  // ddp is untouched by the flag.
  CHECK(dp(true, "dp=8,tp=4,pp=1,mbs=1") == dp(false, "dp=8,tp=4,pp=1,mbs=1"));
  // The megatron-core distributed optimizer reduce-scatters.
  CHECK_FALSE(LoadSoftwareStack("megatron-core").zero1_grad_allreduce);
}

TEST_CASE("cost_model: DeepSpeed's fp16 path accumulates into the fp16 .grad and reduces fp16",
          "[cost_model][pipeline]") {
  const SoftwareStack bf16 = LoadSoftwareStack("megatron-deepspeed");
  const SoftwareStack fp16 = LoadSoftwareStack(testing::DataPath("stacks/megatron-deepspeed-fp16.yaml"));
  // AccumulateGrad's add (6 B) against BF16_Optimizer's fold (18 B), the same eager factor.
  CHECK_THAT(fp16.grad_fold_passes / bf16.grad_fold_passes, WithinRel(6.0 / 18.0, 1e-12));
  // ... and megatron-lm-2021's identical fp16 accumulation.
  CHECK(fp16.grad_fold_passes == LoadSoftwareStack("megatron-lm-2021").grad_fold_passes);
  CHECK(fp16.comm_grad_bytes == 2);
  CHECK(bf16.comm_grad_bytes == 2);
  // Everything else is the preset's engine.
  CHECK(fp16.pp_transfers_per_micro_batch == bf16.pp_transfers_per_micro_batch);
  CHECK(fp16.pp_tp_gathers_per_micro_batch == bf16.pp_tp_gathers_per_micro_batch);
  CHECK(fp16.zero1_grad_allreduce == bf16.zero1_grad_allreduce);
}
