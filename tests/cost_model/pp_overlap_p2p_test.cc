// Interleaved pipeline p2p overlapped with the passes (SoftwareStack::
// pp_overlap_p2p, Megatron-Core's overlap_p2p_comm; cost_model/overlap.h
// OverlappedP2pPerStep): warm-up and cool-down transfers in full, the steady
// state's beyond the pass each runs beside, that pass slowed by the
// interference rule of the gathers and reductions.
#include <catch2/catch.hpp>

#include <string>

#include "cost_model/evaluator.h"
#include "cost_model/overlap.h"
#include "cost_model/software_stack.h"
#include "test_specs.h"

using namespace parasim;
using Catch::Matchers::WithinAbs;

namespace {

double Exposed(const Report& r, const char* dim) {
  for (const auto& e : r.by_dimension)
    if (e.name == dim) return e.exposed.si();
  return -1;
}
double Total(const Report& r, const char* dim) {
  for (const auto& e : r.by_dimension)
    if (e.name == dim) return e.total.si();
  return -1;
}

// 48 layers over 4 stages on 8 nodes of 8: the pipeline boundary crosses
// nodes; 4 layers a chunk with vpp 3.
Report Eval(const SoftwareStack& stack, const std::string& cfg, int64_t gbs = 128) {
  const ModelSpec m = testing::Gpt(4096, 48, 32, 50257);
  return AnalyticalEvaluator(m, testing::Dgx(testing::H100(), 8), testing::Job(gbs, 2048), stack)
      .Evaluate(ParseParallelConfig(cfg));
}

SoftwareStack Core(bool overlap) {
  SoftwareStack s = LoadSoftwareStack("megatron-core");
  s.pp_overlap_p2p = overlap;
  return s;
}

}  // namespace

TEST_CASE("cost_model: overlapped pipeline p2p by phase, closed forms", "[cost_model]") {
  // p 4, v 2, m 8: rank 0 warms up 2·3 + 1·4 = 10 of 16 chunk forwards, so
  // 10 forward and 10 cool-down transfers in full and 6 steady iterations
  // whose forward transfer (1 s) hides under a 2 s backward and whose
  // backward transfer shows 0.5 s beyond a 0.5 s forward.
  CHECK_THAT(ExposedP2pPerStep(1.0, 0.5, 2.0, 4, 8, 2, 0, false), WithinAbs(2 * 10 + 6 * 0.5, 1e-12));
  // Rank 3 (last) warms up 4: 8 in full, 12 steady iterations.
  CHECK_THAT(ExposedP2pPerStep(1.0, 0.5, 2.0, 4, 8, 2, 3, false), WithinAbs(2 * 4 + 12 * 0.5, 1e-12));
  // m = p with the full warm-up: every transfer in full, 2·m·v.
  CHECK_THAT(ExposedP2pPerStep(1.0, 5.0, 5.0, 4, 4, 2, 3, true), WithinAbs(2 * 4 * 2, 1e-12));
  // Without it the count caps at m·v (rank 0: 6 + 4 = 10 > 8).
  CHECK_THAT(ExposedP2pPerStep(1.0, 5.0, 5.0, 4, 4, 2, 0, false), WithinAbs(2 * 8, 1e-12));
  CHECK_THAT(ExposedP2pPerStep(1.0, 5.0, 5.0, 4, 4, 2, 3, false), WithinAbs(2 * 4, 1e-12));
  // Passes of no time hide nothing: every transfer in full, as without overlap.
  CHECK_THAT(ExposedP2pPerStep(1.0, 0.0, 0.0, 4, 8, 2, 1, false), WithinAbs(2 * 8 * 2, 1e-12));
}

TEST_CASE("cost_model: a hidden pipeline transfer slows the pass beside it, closed form", "[cost_model]") {
  // p 4, v 2, m 8, rank 0: 6 steady iterations. Factor 1.1. The forward's
  // transfer (1 s) runs beside a 2 s backward with 0.5 s fixed: it covers
  // 1 / (1.1·1.5 + 0.5) of it, whose 1.5 s of kernels take 0.1 s more each
  // second: 0.15 / 2.15 s. The backward's transfer outlasts a 0.5 s forward
  // of kernels only, slowed in full: 0.05 s, leaving 1 − 0.55 s exposed.
  const OverlapUnit f{0.5, 0, 0, 0}, b{2.0, 0, 0, 0.5};
  const P2pStep r = OverlappedP2pPerStep(1.0, f, b, 4, 8, 2, 0, false, 1.1);
  CHECK_THAT(r.interference, WithinAbs(6 * (0.15 / 2.15 + 0.05), 1e-12));
  CHECK_THAT(r.exposed, WithinAbs(2 * 10 + 6 * 0.45, 1e-12));
  // Factor 1 (no SMs taken): the exposure of the plain rule, nothing slowed.
  const P2pStep plain = OverlappedP2pPerStep(1.0, f, b, 4, 8, 2, 0, false, 1.0);
  CHECK(plain.interference == 0);
  CHECK(plain.exposed == ExposedP2pPerStep(1.0, 0.5, 2.0, 4, 8, 2, 0, false));
  // Under a full warm-up nothing overlaps, so nothing slows.
  CHECK(OverlappedP2pPerStep(1.0, f, b, 4, 4, 2, 3, true, 1.5).interference == 0);
}

TEST_CASE("cost_model: a hidden pipeline transfer's slowdown is bounded by the transfer", "[cost_model]") {
  // Each steady transfer slows its pass by at most (1 − 1/f) of its own
  // time; a larger factor hides more of the transfer and costs more in all.
  const int steady = 16 * 3 - (2 * 3 + 2 * 4);   // rank 0, p 4, v 3, m 16
  for (double pass : {0.0, 0.25, 0.5, 1.0, 2.0, 8.0}) {
    for (double fixed_share : {0.0, 0.3, 1.0}) {
      const OverlapUnit u{pass, 0, 0, fixed_share * pass};
      P2pStep prev = OverlappedP2pPerStep(1.0, u, u, 4, 16, 3, 0, false, 1.0);
      for (double factor : {1.05, 1.1, 1.3, 2.0}) {
        INFO(pass << " " << fixed_share << " " << factor);
        const P2pStep r = OverlappedP2pPerStep(1.0, u, u, 4, 16, 3, 0, false, factor);
        CHECK(r.interference >= 0);
        CHECK(r.interference <= steady * 2 * (1.0 - 1.0 / factor) + 1e-12);
        CHECK(r.exposed <= prev.exposed + 1e-12);
        CHECK(r.exposed + r.interference >= prev.exposed + prev.interference - 1e-12);
        if (fixed_share == 1.0 || pass == 0.0) CHECK(r.interference == 0);
        prev = r;
      }
    }
  }
}

TEST_CASE("cost_model: overlapped pipeline p2p never grows and falls with the passes", "[cost_model]") {
  // Monotonic: longer passes hide more; more micro-batches leave a smaller
  // share of the transfers exposed; later ranks (shorter warm-up) less.
  double prev = 1e300;
  for (double pass : {0.0, 0.25, 0.5, 1.0, 2.0}) {
    const double e = ExposedP2pPerStep(1.0, pass, pass, 4, 16, 3, 0, false);
    CHECK(e <= prev);
    CHECK(e <= 2.0 * 16 * 3);
    prev = e;
  }
  double share = 1.0;
  for (int m : {4, 8, 16, 32, 64}) {
    const double s = ExposedP2pPerStep(1.0, 2.0, 2.0, 4, m, 3, 0, false) / (2.0 * m * 3);
    CHECK(s <= share);
    share = s;
  }
  for (int rank = 1; rank < 4; ++rank)
    CHECK(ExposedP2pPerStep(1.0, 2.0, 2.0, 4, 16, 3, rank, false) <
          ExposedP2pPerStep(1.0, 2.0, 2.0, 4, 16, 3, rank - 1, false));
}

TEST_CASE("cost_model: overlapped pipeline p2p hides steady-state transfers only under interleaving",
          "[cost_model]") {
  // 1F1B (Megatron-Core refuses overlap_p2p_comm without interleaving) and
  // interleaving with the switch off: the same numbers either way.
  for (const char* cfg : {"dp=16,pp=4,mbs=1,sharding=zero1", "dp=16,pp=4,mbs=1,sharding=ddp"}) {
    INFO(cfg);
    const Report on = Eval(Core(true), cfg), off = Eval(Core(false), cfg);
    REQUIRE(on.tokens_per_s_per_gpu > 0);
    CHECK(on.step_time.si() == off.step_time.si());
    CHECK(on.exposed_comm.si() == off.exposed_comm.si());
  }
  const std::string inter = "dp=16,pp=4,vpp=3,schedule=interleaved,mbs=1,sharding=zero1";
  const Report on = Eval(Core(true), inter), off = Eval(Core(false), inter);
  REQUIRE(on.tokens_per_s_per_gpu > 0);
  REQUIRE(off.tokens_per_s_per_gpu > 0);
  // Off: every transfer exposed. On: the same traffic, less of it exposed,
  // a shorter step by no more than what stopped being exposed.
  CHECK(Exposed(off, "pp") == Total(off, "pp"));
  CHECK(Total(on, "pp") == Total(off, "pp"));
  CHECK(Exposed(on, "pp") < Exposed(off, "pp"));
  CHECK(Exposed(on, "pp") > 0);   // warm-up and cool-down still wait
  CHECK(on.step_time.si() < off.step_time.si());
  CHECK(off.step_time.si() - on.step_time.si() <= Exposed(off, "pp") - Exposed(on, "pp") + 1e-9);
  // The passes the hidden transfers run beside are slowed (the config's
  // interference factor), by less than what the transfers hide.
  CHECK(on.compute.si() > off.compute.si());
  CHECK(on.compute.si() - off.compute.si() < Total(on, "pp") - Exposed(on, "pp"));
  // More micro-batches: a larger share of the transfers hides.
  const Report on_more = Eval(Core(true), inter, 512), off_more = Eval(Core(false), inter, 512);
  CHECK(Exposed(on_more, "pp") / Exposed(off_more, "pp") < Exposed(on, "pp") / Exposed(off, "pp"));
}

TEST_CASE("cost_model: which presets overlap the pipeline p2p", "[cost_model]") {
  CHECK(LoadSoftwareStack("megatron-core").pp_overlap_p2p);
  // The 2021 code (and the presets built on it) blocks on every transfer.
  for (const char* name : {"megatron-lm-2021", "megatron-lm-2022", "megatron-deepspeed", "nanotron", "pytorch-fsdp",
                           "deepspeed-zero"}) {
    INFO(name);
    CHECK_FALSE(LoadSoftwareStack(name).pp_overlap_p2p);
  }
}
