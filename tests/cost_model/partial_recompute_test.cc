// Partial full recompute (recompute=full, recompute_layers=N): the first N
// layers of each stage are rebuilt in backward, the others keep everything.
// Its limits are recompute=full and recompute=none; in between, time and
// memory move monotonically and linearly in N.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "cost_model/evaluator.h"
#include "cost_model/workload.h"
#include "test_specs.h"

using namespace parasim;
using Catch::Matchers::WithinRel;

namespace {

// Llama-2-7B on one DGX H100, tp=8 (no data-parallel reductions, so no
// interference between compute and gathers: kernel time adds up exactly),
// four sequences of 4096 per micro-batch so the backward's activations set
// the peak until nearly every layer is recomputed.
const AnalyticalEvaluator& Eval() {
  static const AnalyticalEvaluator ev(testing::Llama2_7b(), testing::Dgx(testing::H100(), 1), testing::Job(8, 4096));
  return ev;
}

Report Run(const std::string& recompute) {
  return Eval().Evaluate(ParseParallelConfig("dp=1,tp=8,mbs=4,sharding=ddp,sp=on," + recompute));
}

}  // namespace

TEST_CASE("partial recompute: N = the stage's layers is recompute=full bit for bit", "[cost_model][recompute]") {
  const Report full = Run("recompute=full");
  const Report all = Run("recompute=full,recompute_layers=32");
  CHECK(all.step_time.si() == full.step_time.si());
  CHECK(all.memory_per_gpu.si() == full.memory_per_gpu.si());
  CHECK(all.compute.si() == full.compute.si());
  CHECK(all.hfu == full.hfu);
}

TEST_CASE("partial recompute: time and recomputed FLOPs rise, memory falls with N between none and full",
          "[cost_model][recompute]") {
  const Report none = Run("recompute=none");
  double time = none.step_time.si(), memory = none.memory_per_gpu.si();
  double flops = none.hardware_tflops_per_gpu * none.step_time.si();
  for (int n : {8, 16, 24, 32}) {
    INFO("recompute_layers=" << n);
    const Report r = Run("recompute=full,recompute_layers=" + std::to_string(n));
    CHECK(r.step_time.si() > time);
    CHECK(r.memory_per_gpu.si() <= memory);
    if (n < 32) CHECK(r.memory_per_gpu.si() < memory);   // at 32 the optimizer step may set the peak
    CHECK(r.hardware_tflops_per_gpu * r.step_time.si() > flops);
    time = r.step_time.si();
    memory = r.memory_per_gpu.si();
    flops = r.hardware_tflops_per_gpu * r.step_time.si();
  }
}

TEST_CASE("partial recompute: kernel time and activations are linear in N, anchored at none and full",
          "[cost_model][recompute]") {
  // Kernel time: none + N/L of what full recompute adds (its forward again).
  const Report none = Run("recompute=none"), full = Run("recompute=full");
  const Report r8 = Run("recompute=full,recompute_layers=8");
  const Report r16 = Run("recompute=full,recompute_layers=16");
  const Report r24 = Run("recompute=full,recompute_layers=24");
  for (const Report* r : {&r8, &r16, &r24}) {
    const double share = r->config.recompute_layers / 32.0;
    INFO("recompute_layers=" << r->config.recompute_layers);
    CHECK_THAT(r->compute.si(), WithinRel(none.compute.si() + share * (full.compute.si() - none.compute.si()), 1e-9));
  }
  // Each further recomputed layer trades its activations for its input alone
  // (the same bytes per layer); the working set of one rebuilt layer is there
  // whatever N > 0 is.
  const double per_8 = r8.memory_per_gpu.si() - r16.memory_per_gpu.si();
  CHECK(per_8 > 0);
  CHECK_THAT(r16.memory_per_gpu.si() - r24.memory_per_gpu.si(), WithinRel(per_8, 1e-9));
}

TEST_CASE("partial recompute: the workload recomputes the first N/vpp layers of every chunk",
          "[cost_model][recompute]") {
  const AnalyticalEvaluator ev(testing::Llama2_7b(), testing::Dgx(testing::H100(), 4), testing::Job(64, 4096));
  const struct {
    const char* config;
    int per_chunk;
  } cases[] = {{"dp=8,pp=4,sharding=zero1,recompute=full,recompute_layers=3", 3},
               {"dp=8,pp=4,vpp=2,schedule=interleaved,sharding=zero1,recompute=full,recompute_layers=4", 2}};
  for (const auto& k : cases) {
    INFO(k.config);
    const StepWorkload wl = ev.BuildWorkload(ParseParallelConfig(k.config));
    for (const StageWork& st : wl.stages) {
      std::vector<int> recomputed(wl.virtual_stages, 0), seen(wl.virtual_stages, 0);
      for (const LayerWork& w : st.layers) {
        if (w.layer_index < 0) continue;
        const bool rc = w.recompute_time.si() > 0;
        CHECK(rc == (seen[w.chunk] < k.per_chunk));   // the chunk's first layers
        recomputed[w.chunk] += rc ? 1 : 0;
        ++seen[w.chunk];
      }
      for (int n : recomputed) CHECK(n == k.per_chunk);
    }
  }
}

TEST_CASE("partial recompute: recompute_layers beyond a stage or without full is refused by name",
          "[cost_model][recompute]") {
  const Report over = Run("recompute=full,recompute_layers=33");
  CHECK_FALSE(over.feasible);
  CHECK(over.infeasible_reason.find("recompute_layers") != std::string::npos);
  const Report selective = Run("recompute=selective,recompute_layers=4");
  CHECK_FALSE(selective.feasible);
  CHECK(selective.infeasible_reason.find("recompute_layers") != std::string::npos);
}

TEST_CASE("partial recompute: each layer is recompute=none's or recompute=full's, bit for bit",
          "[cost_model][recompute]") {
  // N = 0 per layer: a kept layer's work is recompute=none's; a recomputed one is recompute=full's.
  const AnalyticalEvaluator ev(testing::Llama2_7b(), testing::Dgx(testing::H100(), 4), testing::Job(64, 4096));
  const std::string base = "dp=4,tp=2,pp=4,sharding=zero1,sp=on,";
  const StepWorkload none = ev.BuildWorkload(ParseParallelConfig(base + "recompute=none"));
  const StepWorkload full = ev.BuildWorkload(ParseParallelConfig(base + "recompute=full"));
  const StepWorkload part = ev.BuildWorkload(ParseParallelConfig(base + "recompute=full,recompute_layers=3"));
  REQUIRE(part.stages.size() == none.stages.size());
  for (size_t s = 0; s < part.stages.size(); ++s) {
    int index = 0;
    for (size_t i = 0; i < part.stages[s].layers.size(); ++i) {
      const LayerWork& w = part.stages[s].layers[i];
      if (w.layer_index < 0) continue;
      const LayerWork& want = index++ < 3 ? full.stages[s].layers[i] : none.stages[s].layers[i];
      INFO("stage " << s << " " << w.name);
      CHECK(w.forward_time.si() == want.forward_time.si());
      CHECK(w.backward_time.si() == want.backward_time.si());
      CHECK(w.recompute_time.si() == want.recompute_time.si());
      CHECK(w.backward_flops.si() == want.backward_flops.si());
    }
  }
}
