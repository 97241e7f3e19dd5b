// nanotron's pipeline engine as the nanotron preset prices it (docs/DECISIONS.md
// "nanotron's pipeline engine as the sweep ran it"): four host-blocking one-way
// transfers in turn per micro-batch, two metadata messages before each tensor
// and the sequence mask beside every activation (3.5 small messages per
// transfer). Megatron's presets keep their two paired exchanges.
#include <catch2/catch.hpp>

#include "core/parallel_config.h"
#include "cost_model/evaluator.h"
#include "cost_model/pipeline_boundary.h"
#include "cost_model/software_stack.h"
#include "report_dimensions.h"
#include "test_specs.h"

using namespace parasim;
using Catch::Matchers::WithinRel;

namespace {

// Two H100 nodes, tp 8 with sequence parallelism, pp 2: the boundary crosses nodes.
double PpTotal(const SoftwareStack& s, const char* cfg) {
  const AnalyticalEvaluator e(testing::Gpt(4096, 16, 32, 51200), testing::Dgx(testing::H100(), 2),
                              testing::Job(64, 4096), s);
  const Report r = e.Evaluate(ParseParallelConfig(cfg));
  REQUIRE(r.step_time.si() > 0);
  return testing::DimTotal(r, "pp");
}

}  // namespace

TEST_CASE("cost_model: nanotron's boundary is four blocking transfers with 3.5 small messages each",
          "[cost_model][pipeline]") {
  const SoftwareStack nanotron = LoadSoftwareStack("nanotron");
  CHECK(nanotron.pp_host_synchronous);
  CHECK(nanotron.pp_transfers_per_micro_batch == 4);
  // Activation: (2 metadata + data) for hidden_states, (2 metadata + mask) for
  // sequence_mask; gradient: 2 metadata + data. (5 + 2) / 2 small messages.
  CHECK(nanotron.pp_meta_messages == (2 + 2 + 1 + 2) / 2.0);
  PipelineBoundaryParts p;
  p.send = 1e-3;
  p.meta = 12e-6;
  p.meta_count = nanotron.pp_meta_messages;
  // Per direction: two of the four transfers, each behind its small messages.
  CHECK_THAT(PipelineBoundaryTime(nanotron, p), WithinRel(2 * (1e-3 + 3.5 * 12e-6), 1e-15));
  // Twice what Megatron's paired exchanges cost for the same messages.
  const SoftwareStack core = LoadSoftwareStack("megatron-core");
  CHECK_THAT(PipelineBoundaryTime(nanotron, p), WithinRel(2 * PipelineBoundaryTime(core, p), 1e-15));
}

TEST_CASE("cost_model: other presets keep Megatron's two paired pipeline exchanges", "[cost_model][pipeline]") {
  for (const char* name : {"megatron-core", "megatron-lm-2021", "torchtitan", "pytorch-fsdp"}) {
    INFO(name);
    const SoftwareStack s = LoadSoftwareStack(name);
    CHECK(s.pp_transfers_per_micro_batch == 2);
  }
  CHECK(LoadSoftwareStack("megatron-core").pp_meta_messages == 0);
  CHECK(LoadSoftwareStack("megatron-deepspeed").pp_meta_messages == 1);
}

TEST_CASE("cost_model: nanotron's pipeline time grows with its transfers and small messages, pp = 1 unmoved",
          "[cost_model][pipeline]") {
  SoftwareStack s = LoadSoftwareStack("nanotron");
  const char* cfg = "dp=1,tp=8,pp=2,mbs=1,sp=on";
  auto at = [&](double transfers, double messages) {
    s.pp_transfers_per_micro_batch = transfers;
    s.pp_meta_messages = messages;
    return PpTotal(s, cfg);
  };
  const double megatron_like = at(2, 2), four = at(4, 2), engine = at(4, 3.5), more = at(4, 5);
  CHECK(megatron_like > 0);
  // Twice the transfers, twice the boundary time (the pp dimension is all boundary here).
  CHECK_THAT(four, WithinRel(2 * megatron_like, 1e-9));
  CHECK(engine > four);
  // Linear in the small messages.
  CHECK_THAT(more - engine, WithinRel(engine - four, 1e-9));
  // No pipeline: neither count moves anything.
  const char* flat = "dp=2,tp=8,pp=1,mbs=1,sp=on";
  s.pp_transfers_per_micro_batch = 2;
  s.pp_meta_messages = 2;
  const double flat_before = PpTotal(s, flat);
  s.pp_transfers_per_micro_batch = 4;
  s.pp_meta_messages = 3.5;
  CHECK(PpTotal(s, flat) == flat_before);
}
