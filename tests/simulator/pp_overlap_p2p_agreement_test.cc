// Tier A's overlapped interleaved pipeline p2p (SoftwareStack::pp_overlap_p2p)
// beside tier B's replay, which posts each send on the pp stream after its
// pass and makes only the receiving pass wait for it (simulator/
// step_builder.cc): the replay hides steady-state transfers in every case.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "core/loaders.h"
#include "cost_model/evaluator.h"
#include "cost_model/software_stack.h"
#include "simulator/simulate.h"

namespace parasim::simulator {
namespace {

using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

struct Steps {
  double a = 0, b = 0;
  double straggler = 0;   // tier A's step-end wait both tiers add (cost_model/straggler.h)
};

Steps StepsWith(bool overlap, const char* config) {
  SoftwareStack stack = LoadSoftwareStack("megatron-core");
  stack.pp_overlap_p2p = overlap;
  JobSpec job;
  job.global_batch = 64;
  job.seq_len = 4096;
  AnalyticalEvaluator eval(LoadModel("llama2-13b"), LoadCluster("dgx-h100", 4), job, stack);
  const ParallelConfig c = ParseParallelConfig(config);
  Steps s;
  s.a = eval.Evaluate(c).step_time.si();
  const StepWorkload wl = eval.BuildWorkload(c);
  s.b = SimulateStep(wl, eval.cluster(), SimulationOptions{}).report.step_time.si();
  s.straggler = wl.straggler_s;
  return s;
}

}  // namespace

TEST_CASE("simulator: tiers A and B agree on megatron-core's interleaved schedule with overlapped p2p",
          "[simulator]") {
  const char* config = "dp=4,tp=2,pp=4,vpp=2,schedule=interleaved,sharding=zero1";
  const Steps on = StepsWith(true, config), off = StepsWith(false, config);
  if (std::getenv("PARASIM_PRINT_AGREEMENT") != nullptr)
    std::printf("overlap on: A %.4f s, B %.4f s; off: A %.4f s, B %.4f s\n", on.a, on.b, off.a, off.b);
  // The replay's schedule does not depend on the switch (its sends never
  // block the sender); only the straggler wait, which scales with tier A's
  // compute, grows by the passes the hidden sends slow. Tier A with the
  // switch hides what the replay hides, slows the passes beside the hidden
  // sends as the replay does (the config's factor), and comes closer
  // (1.381 s against 1.378 s; 1.425 s without).
  CHECK_THAT(on.b - on.straggler, WithinAbs(off.b - off.straggler, 1e-9));
  CHECK(on.straggler > off.straggler);
  CHECK(on.a < off.a);
  CHECK(std::fabs(on.a - on.b) < std::fabs(off.a - off.b));
  CHECK_THAT(on.a, WithinRel(on.b, 0.01));
}

}  // namespace parasim::simulator
