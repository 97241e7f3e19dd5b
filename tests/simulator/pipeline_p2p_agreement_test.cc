// Tiers A and B on 1F1B pipelines with tensor parallelism: the stage's
// compute waits for each pipeline send it issues (one on the first and last
// stages, two in between: Megatron-Core's send_forward_recv_backward /
// send_backward_recv_forward, torch pipelining's fused send/receive), and
// each dimension's total is every collective of it, hidden or not.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/loaders.h"
#include "cost_model/evaluator.h"
#include "cost_model/software_stack.h"
#include "simulator/simulate.h"

namespace parasim::simulator {
namespace {

using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

struct Case {
  const char* model;   // "llama2-7b", or "12-layer" (Llama-2-7B cut to 12 layers: 4 or 3 a stage)
  int nodes;
  const char* stack;
  const char* config;
  long long batch = 64;   // global batch, sequences of 2,048 tokens
};

ModelSpec ModelOf(const Case& k) {
  if (std::string(k.model) != "12-layer") return LoadModel(k.model);
  ModelSpec m = LoadModel("llama2-7b");
  m.num_layers = 12;
  return m;
}

struct Tiers {
  Report a, b;
};

Tiers Run(const Case& k) {
  JobSpec job;
  job.global_batch = k.batch;
  job.seq_len = 2048;
  AnalyticalEvaluator eval(ModelOf(k), LoadCluster("dgx-h100", k.nodes), job, LoadSoftwareStack(k.stack));
  const ParallelConfig c = ParseParallelConfig(k.config);
  Tiers t;
  t.a = eval.Evaluate(c);
  t.b = SimulateStep(eval.BuildWorkload(c), eval.cluster(), SimulationOptions{}).report;
  if (std::getenv("PARASIM_PRINT_AGREEMENT") != nullptr) {
    std::printf("%s %s %s batch %lld: A %.4f s, B %.4f s (%+.2f %%)\n", k.model, k.stack, k.config, k.batch,
                t.a.step_time.si(), t.b.step_time.si(), 100.0 * (t.a.step_time.si() / t.b.step_time.si() - 1.0));
    for (size_t i = 0; i < t.a.by_dimension.size(); ++i)
      std::printf("  %s A %.4f/%.4f B %.4f/%.4f\n", t.a.by_dimension[i].name.c_str(), t.a.by_dimension[i].total.si(),
                  t.a.by_dimension[i].exposed.si(), t.b.by_dimension[i].total.si(),
                  t.b.by_dimension[i].exposed.si());
  }
  return t;
}

// 1F1B with tp > 1 and pp > 1: the stacks with blocking pipeline p2p
// (megatron-core's overlap_p2p_comm needs the interleaved schedule).
const Case kOneFOneB[] = {
    {"llama2-7b", 2, "megatron-core", "dp=2,tp=2,pp=4,mbs=1,sharding=zero1"},
    {"llama2-7b", 2, "megatron-core", "dp=2,tp=4,pp=2,mbs=1,sharding=zero1"},
    {"llama2-7b", 2, "megatron-core", "dp=1,tp=2,pp=8,mbs=1,sharding=zero1"},
    {"llama2-7b", 2, "megatron-core", "dp=1,tp=4,pp=4,mbs=1,sharding=zero1"},
    {"12-layer", 2, "megatron-core", "dp=2,tp=2,pp=4,mbs=1,sharding=zero1"},
    {"12-layer", 3, "megatron-core", "dp=4,tp=2,pp=3,mbs=1,sharding=zero1"},
    {"llama2-7b", 2, "pytorch-fsdp", "dp=2,tp=2,pp=4,mbs=1,sharding=zero1"},
    {"llama2-7b", 2, "megatron-lm-2021", "dp=2,tp=2,pp=4,mbs=1,sharding=zero1"},
    {"llama2-7b", 2, "megatron-lm-2021", "dp=2,tp=2,pp=4,vpp=2,schedule=interleaved,mbs=1,sharding=zero1"},
    {"llama2-7b", 2, "megatron-core", "dp=2,tp=2,pp=4,vpp=2,schedule=interleaved,mbs=1,sharding=zero1"},
};

// Data-parallel pipelines without TP, where the once-per-step collectives
// (the first forward's parameter gathers, the last backward's gradient
// reductions) slow a pass of every stage the fill and drain run through:
// m = 4, 8, 16, 32 micro-batches, ddp and zero1, three stacks, 1F1B and
// interleaved.
const Case kOncePerStep[] = {
    {"llama2-7b", 2, "megatron-core", "dp=4,tp=1,pp=4,mbs=1,sharding=zero1", 16},
    {"llama2-7b", 2, "megatron-core", "dp=4,tp=1,pp=4,mbs=1,sharding=zero1", 32},
    {"llama2-7b", 2, "megatron-core", "dp=4,tp=1,pp=4,mbs=1,sharding=zero1", 64},
    {"llama2-7b", 2, "megatron-core", "dp=4,tp=1,pp=4,mbs=1,sharding=zero1", 128},
    {"llama2-7b", 2, "megatron-core", "dp=4,tp=1,pp=4,mbs=1,sharding=ddp", 64},
    {"llama2-7b", 2, "megatron-core", "dp=2,tp=1,pp=8,mbs=1,sharding=zero1", 64},
    {"llama2-7b", 2, "pytorch-fsdp", "dp=4,tp=1,pp=4,mbs=1,sharding=zero1", 16},
    {"llama2-7b", 2, "pytorch-fsdp", "dp=4,tp=1,pp=4,mbs=1,sharding=zero1", 64},
    {"llama2-7b", 2, "pytorch-fsdp", "dp=4,tp=1,pp=4,mbs=1,sharding=ddp", 64},
    {"llama2-7b", 2, "megatron-lm-2021", "dp=4,tp=1,pp=4,mbs=1,sharding=zero1", 64},
    {"llama2-7b", 2, "megatron-lm-2021", "dp=4,tp=1,pp=4,mbs=1,sharding=ddp", 128},
    {"llama2-7b", 2, "megatron-core", "dp=4,tp=1,pp=4,vpp=2,schedule=interleaved,mbs=1,sharding=zero1", 64},
    {"llama2-7b", 2, "megatron-core", "dp=4,tp=1,pp=4,vpp=2,schedule=interleaved,mbs=1,sharding=ddp", 64},
    {"llama2-7b", 2, "megatron-lm-2021", "dp=4,tp=1,pp=4,vpp=2,schedule=interleaved,mbs=1,sharding=ddp", 64},
};

// ZB-H1 (schedule=zb-h1) on the stacks that run it (torch.distributed.
// pipelining's ScheduleInterleavedZeroBubble with one stage per rank):
// pp 2-8, m 4-32, tp 1-2, ddp / zero1 / zero2 / zero3, recompute, a
// heavier last stage (llama3-8b's LM head) and an uneven split. Before tier
// A split the backward, it charged these 1F1B's bubble: +2.5 % (pp=8, m=32)
// to +27 % (pp=4, m=4) above tier B.
const Case kZeroBubble[] = {
    {"llama2-7b", 2, "torchtitan", "dp=4,tp=1,pp=4,mbs=1,sharding=zero1,schedule=zb-h1", 64},
    {"llama2-7b", 2, "torchtitan", "dp=4,tp=1,pp=4,mbs=1,sharding=zero1,schedule=zb-h1", 16},
    {"llama2-7b", 2, "torchtitan", "dp=8,tp=1,pp=2,mbs=1,sharding=zero1,schedule=zb-h1", 32},
    {"llama2-7b", 2, "torchtitan", "dp=2,tp=1,pp=8,mbs=1,sharding=zero1,schedule=zb-h1", 64},
    {"llama2-7b", 2, "torchtitan", "dp=2,tp=2,pp=4,mbs=1,sharding=zero1,schedule=zb-h1", 32},
    {"llama2-7b", 2, "torchtitan", "dp=4,tp=1,pp=4,mbs=1,sharding=ddp,schedule=zb-h1", 64},
    {"llama2-7b", 2, "torchtitan", "dp=8,tp=1,pp=2,mbs=1,sharding=ddp,schedule=zb-h1", 32},
    {"llama2-7b", 2, "torchtitan", "dp=4,tp=1,pp=4,mbs=1,sharding=zero2,schedule=zb-h1", 16},
    {"llama2-7b", 2, "torchtitan", "dp=4,tp=1,pp=4,mbs=1,sharding=zero1,recompute=full,schedule=zb-h1", 64},
    {"llama2-7b", 2, "torchtitan", "dp=2,tp=2,pp=4,mbs=1,sharding=zero3,recompute=full,schedule=zb-h1", 64},
    {"llama2-7b", 2, "torchtitan", "dp=4,tp=1,pp=4,mbs=1,sharding=zero1,pp_layers=6:8:8:10,schedule=zb-h1", 64},
    {"llama3-8b", 2, "torchtitan", "dp=4,tp=1,pp=4,mbs=1,sharding=zero1,schedule=zb-h1", 64},
    {"llama2-7b", 2, "pytorch-fsdp2", "dp=4,tp=1,pp=4,mbs=1,sharding=zero3,schedule=zb-h1", 64},
};

}  // namespace

TEST_CASE("simulator: tiers A and B agree on the zero-bubble schedule", "[simulator][pp_p2p][zero_bubble]") {
  for (const Case& k : kZeroBubble) {
    INFO(k.model << " " << k.stack << " " << k.config << " batch " << k.batch);
    const Tiers t = Run(k);
    CHECK_THAT(t.a.step_time.si(), WithinRel(t.b.step_time.si(), 0.01));
    // Both tiers: the W passes fill part of 1F1B's bubble.
    Case one = k;
    std::string config = k.config;
    config.replace(config.find("zb-h1"), 5, "1f1b");
    one.config = config.c_str();
    const Tiers f = Run(one);
    CHECK(t.a.step_time.si() < f.a.step_time.si());
    CHECK(t.b.step_time.si() < f.b.step_time.si());
  }
}

TEST_CASE("simulator: one stage runs no zero-bubble split", "[simulator][pp_p2p][zero_bubble]") {
  // Without pipeline parallelism there is no pipeline schedule: zb-h1 is 1F1B
  // in both tiers (ddp: the reductions hide under the whole backward).
  const Tiers zb = Run({"llama2-7b", 1, "torchtitan", "dp=8,tp=1,pp=1,mbs=1,sharding=ddp,schedule=zb-h1", 32});
  const Tiers one = Run({"llama2-7b", 1, "torchtitan", "dp=8,tp=1,pp=1,mbs=1,sharding=ddp,schedule=1f1b", 32});
  CHECK(zb.a.step_time.si() == one.a.step_time.si());
  CHECK(zb.b.step_time.si() == one.b.step_time.si());
}

TEST_CASE("simulator: tiers A and B agree on the once-per-step collectives through fill and drain",
          "[simulator][pp_p2p][once_per_step]") {
  for (const Case& k : kOncePerStep) {
    INFO(k.model << " " << k.stack << " " << k.config << " batch " << k.batch);
    const Tiers t = Run(k);
    CHECK_THAT(t.a.step_time.si(), WithinRel(t.b.step_time.si(), 0.01));
  }
}

TEST_CASE("simulator: tiers A and B agree on pipelines with tensor parallelism", "[simulator][pp_p2p]") {
  // Before the sends blocked their stage in tier B and tier A charged the
  // first and last stages two of them, megatron-core's dp=2,tp=2,pp=4 was
  // 0.7817 s in A against 0.7612 s in B (2.7 %), the 12-layer model 3-7 %.
  for (const Case& k : kOneFOneB) {
    INFO(k.model << " " << k.stack << " " << k.config);
    const Tiers t = Run(k);
    CHECK_THAT(t.a.step_time.si(), WithinRel(t.b.step_time.si(), 0.01));
  }
}

TEST_CASE("simulator: tiers A and B book the same per-dimension totals on pipelines", "[simulator][pp_p2p]") {
  for (const Case& k : kOneFOneB) {
    INFO(k.model << " " << k.stack << " " << k.config);
    const Tiers t = Run(k);
    REQUIRE(t.a.by_dimension.size() == t.b.by_dimension.size());
    for (size_t i = 0; i < t.a.by_dimension.size(); ++i) {
      const TimeBreakdownEntry &a = t.a.by_dimension[i], &b = t.b.by_dimension[i];
      INFO(a.name);
      REQUIRE(a.name == b.name);
      // The TP collectives hidden under GEMMs (tp_backward_overlap) count in both.
      CHECK_THAT(a.total.si(), WithinRel(b.total.si(), 0.01) || WithinAbs(b.total.si(), 1e-9));
      CHECK(a.exposed.si() <= a.total.si() * (1 + 1e-12));
      CHECK(b.exposed.si() <= b.total.si() * (1 + 1e-12));
    }
    // 1F1B: what the sends cost the critical stage is exposed in both tiers.
    if (std::string(k.config).find("interleaved") == std::string::npos) {
      const TimeBreakdownEntry &a = t.a.by_dimension[2], &b = t.b.by_dimension[2];
      REQUIRE(a.name == "pp");
      CHECK_THAT(a.exposed.si(), WithinRel(a.total.si(), 1e-9));
      CHECK_THAT(b.exposed.si(), WithinRel(b.total.si(), 0.01));
    }
  }
}

}  // namespace parasim::simulator
