// Data-parallel collectives chunk by chunk under the interleaved schedule
// (SoftwareStack::dp_overlap_per_chunk; cost_model/overlap.h
// OverlapPassCollectives, cost_model/evaluator_stage_time.cc PerChunkDeltas).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "cost_model/evaluator.h"
#include "cost_model/overlap.h"
#include "cost_model/software_stack.h"
#include "test_specs.h"

using namespace parasim;
using Catch::Matchers::WithinAbs;

namespace {

double DpExposed(const Report& r) {
  for (const auto& e : r.by_dimension)
    if (e.name == "dp") return e.exposed.si();
  return -1;
}

// 48 layers over 4 stages: 12 a stage, whole chunks for v = 2, 3, 4, 6, 12.
// Short sequences make the gradient reduction large beside a micro-batch.
Report Eval(const SoftwareStack& stack, const std::string& cfg, int64_t seq = 4096) {
  const ModelSpec m = testing::Gpt(4096, 48, 32, 50257);
  return AnalyticalEvaluator(m, testing::Dgx(testing::H100(), 8), testing::Job(128, seq), stack)
      .Evaluate(ParseParallelConfig(cfg));
}

SoftwareStack Core(bool per_chunk) {
  SoftwareStack s = LoadSoftwareStack("megatron-core");
  s.dp_overlap_per_chunk = per_chunk;
  return s;
}

}  // namespace

TEST_CASE("cost_model: pass collectives queue on one stream and the tail is exposed", "[cost_model]") {
  // Three 10 s passes; two 4 s reductions issued after the first, a 3 s one
  // after the last: the first two run under passes 1 and 2, the last is exposed.
  const std::vector<OverlapUnit> passes(3, OverlapUnit{10, 0, 0, 0});
  const PhaseResult r =
      OverlapPassCollectives(passes, {PassCollective{4, 0, -1}, PassCollective{4, 0, -1}, PassCollective{3, 2, -1}}, 1.0);
  CHECK_THAT(r.time, WithinAbs(33, 1e-12));
  CHECK_THAT(r.exposed, WithinAbs(3, 1e-12));
  CHECK_THAT(r.comm, WithinAbs(11, 1e-12));
  CHECK(r.interference == 0);
  // Gathers awaited by the pass that needs them: two issued at the start
  // (5 s each, back to back), the third after pass 0 (3 s). Pass 0 waits 5,
  // runs 5-8; the third gather queues behind the second (done 10) until 15;
  // pass 1 waits until 10 and runs to 13; pass 2 waits until 15, ends 18.
  const std::vector<OverlapUnit> fwd(3, OverlapUnit{3, 0, 0, 0});
  const PhaseResult g =
      OverlapPassCollectives(fwd, {PassCollective{5, -1, 0}, PassCollective{5, -1, 1}, PassCollective{5, 0, 2}}, 1.0);
  CHECK_THAT(g.time, WithinAbs(18, 1e-12));
  CHECK_THAT(g.exposed, WithinAbs(5 + 2 + 2, 1e-12));
  // Interference as the layer recurrences: 4 s of comm beside a 10 s pass
  // slowed 1.5x cover 4 / 15 of it: + 0.5 · 10 · 4 / 15.
  const PhaseResult s = OverlapPassCollectives({OverlapUnit{10, 0, 0, 0}}, {PassCollective{4, -1, -1}}, 1.5);
  CHECK_THAT(s.interference, WithinAbs(4.0 / 3.0, 1e-12));
  CHECK_THAT(s.exposed, WithinAbs(0, 1e-12));
  // Nothing to overlap: the passes' sum, nothing exposed.
  const PhaseResult none = OverlapPassCollectives(passes, {}, 1.5);
  CHECK(none.time == 30);
  CHECK(none.exposed == 0);
}

TEST_CASE("cost_model: without interleaving the per-chunk switch changes nothing", "[cost_model]") {
  for (const char* cfg : {"dp=16,pp=4,mbs=1,sharding=zero1", "dp=16,pp=4,mbs=1,sharding=ddp",
                          "dp=64,mbs=1,sharding=zero1", "dp=16,pp=4,mbs=1,sharding=zero3"}) {
    INFO(cfg);
    const Report on = Eval(Core(true), cfg), off = Eval(Core(false), cfg);
    REQUIRE(on.tokens_per_s_per_gpu > 0);
    CHECK(on.step_time.si() == off.step_time.si());
    CHECK(on.exposed_comm.si() == off.exposed_comm.si());
    CHECK(on.compute.si() == off.compute.si());
  }
}

TEST_CASE("cost_model: chunk by chunk, exposed data-parallel time falls with the chunks", "[cost_model]") {
  for (int64_t seq : {4096, 256}) {
    for (const char* sharding : {"zero1", "ddp"}) {
      double previous = 1e30;
      for (int v : {2, 3, 4, 6, 12}) {
        const std::string cfg = std::string("dp=16,pp=4,mbs=1,sharding=") + sharding + ",vpp=" + std::to_string(v) +
                                ",schedule=interleaved";
        INFO(cfg << " seq " << seq);
        const Report on = Eval(Core(true), cfg, seq);
        REQUIRE(on.tokens_per_s_per_gpu > 0);
        const double dp = DpExposed(on);
        CHECK(dp >= 0);
        CHECK(dp <= previous * (1 + 1e-12));
        previous = dp;
      }
    }
  }
}

TEST_CASE("cost_model: chunk by chunk hides a large reduction the last micro-batch cannot", "[cost_model]") {
  // At 256 tokens a micro-batch the stage's reduction is large beside one
  // micro-batch's backward: layer by layer it hides only under that one;
  // chunk by chunk all but the last chunks' shares (and the rank delay) hide
  // under the cooldown.
  for (int v : {3, 6, 12}) {
    const std::string cfg = "dp=16,pp=4,mbs=1,sharding=zero1,vpp=" + std::to_string(v) + ",schedule=interleaved";
    INFO(cfg);
    const Report on = Eval(Core(true), cfg, 256), off = Eval(Core(false), cfg, 256);
    REQUIRE(on.tokens_per_s_per_gpu > 0);
    CHECK(DpExposed(on) < DpExposed(off));
    CHECK(on.step_time.si() < off.step_time.si());
  }
  // A small reduction (4,096 tokens) is launched whole after the chunk's
  // last backward: the last chunk's share cannot hide under that backward,
  // as it does layer by layer, so chunk by chunk exposes more there.
  const std::string cfg = "dp=16,pp=4,mbs=1,sharding=zero1,vpp=2,schedule=interleaved";
  CHECK(DpExposed(Eval(Core(true), cfg)) > DpExposed(Eval(Core(false), cfg)));
}
