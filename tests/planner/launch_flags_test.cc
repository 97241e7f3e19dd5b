#include <nlohmann/json.hpp>

#include <catch2/catch.hpp>

#include <map>
#include <set>

#include "core/error.h"
#include "cost_model/software_stack.h"
#include "planner/launch_flags.h"
#include "test_specs.h"

using namespace parasim;
using namespace parasim::planner;
using parasim::planner::testing::Job;
using parasim::planner::testing::TinyModel;
using Catch::Contains;

TEST_CASE("planner: megatron flags carry the plan", "[planner]") {
  const ModelSpec model = TinyModel(32, 32, 11008);
  const JobSpec job = Job(512, 4096);
  const ParallelConfig c = ParseParallelConfig(
      "dp=32,tp=2,pp=4,cp=1,mbs=1,sharding=zero1,recompute=selective,sp=on,vpp=2,schedule=interleaved");
  const LaunchFlags f = EmitLaunchFlags(Framework::kMegatron, c, model, job);
  CHECK_THAT(f.text, Contains("--tensor-model-parallel-size 2"));
  CHECK_THAT(f.text, Contains("--pipeline-model-parallel-size 4"));
  CHECK_THAT(f.text, Contains("--context-parallel-size 1"));
  CHECK_THAT(f.text, Contains("--sequence-parallel"));
  CHECK_THAT(f.text, Contains("--num-layers-per-virtual-pipeline-stage 4"));   // 32 / (4·2)
  CHECK_THAT(f.text, Contains("--micro-batch-size 1"));
  CHECK_THAT(f.text, Contains("--global-batch-size 512"));
  CHECK_THAT(f.text, Contains("--seq-length 4096"));
  CHECK_THAT(f.text, Contains("--recompute-granularity selective"));
  CHECK_THAT(f.text, Contains("--use-distributed-optimizer"));
  CHECK_THAT(f.text, !Contains("--use-custom-fsdp"));

  const ParallelConfig fsdp = ParseParallelConfig("dp=256,tp=1,pp=1,mbs=2,sharding=zero3,recompute=full");
  const LaunchFlags g = EmitLaunchFlags(Framework::kMegatron, fsdp, model, job);
  CHECK_THAT(g.text, Contains("--data-parallel-sharding-strategy optim_grads_params"));
  CHECK_THAT(g.text, Contains("--recompute-granularity full"));
  CHECK_THAT(g.text, !Contains("--sequence-parallel"));
}

TEST_CASE("planner: torchtitan TOML carries the plan", "[planner]") {
  const ModelSpec model = TinyModel(32, 32, 11008);
  const JobSpec job = Job(512, 4096);
  const LaunchFlags f = EmitLaunchFlags(
      Framework::kTorchtitanToml, ParseParallelConfig("dp=64,tp=4,pp=1,cp=1,mbs=2,sharding=hsdp:8,sp=on"), model, job);
  CHECK_THAT(f.text, Contains("[parallelism]"));
  CHECK_THAT(f.text, Contains("data_parallel_replicate_degree = 8"));
  CHECK_THAT(f.text, Contains("data_parallel_shard_degree = 8"));
  CHECK_THAT(f.text, Contains("tensor_parallel_degree = 4"));
  CHECK_THAT(f.text, Contains("local_batch_size = 2"));
  CHECK_THAT(f.text, Contains("global_batch_size = 512"));
  CHECK_THAT(f.text, Contains("mode = \"none\""));
  const LaunchFlags z2 =
      EmitLaunchFlags(Framework::kTorchtitanToml, ParseParallelConfig("dp=256,mbs=2,sharding=zero2"), model, job);
  CHECK_THAT(z2.text, Contains("fsdp_reshard_after_forward = \"never\""));
  CHECK_THAT(z2.text, Contains("data_parallel_shard_degree = 256"));
}

TEST_CASE("planner: deepspeed config is valid JSON with the plan", "[planner]") {
  const ModelSpec model = TinyModel(32, 32, 11008);
  const JobSpec job = Job(512, 4096);
  const LaunchFlags f = EmitLaunchFlags(
      Framework::kDeepSpeed, ParseParallelConfig("dp=128,tp=2,pp=1,mbs=2,sharding=zero2-replicated,sp=on"), model, job);
  const auto j = nlohmann::json::parse(f.text);
  CHECK(j.at("train_batch_size") == 512);
  CHECK(j.at("train_micro_batch_size_per_gpu") == 2);
  CHECK(j.at("gradient_accumulation_steps") == 2);   // 512 / (128 · 2)
  CHECK(j.at("zero_optimization").at("stage") == 2);
  CHECK(j.at("tensor_parallel").at("autotp_size") == 2);   // plain DeepSpeed: AutoTP, not Megatron TP
  CHECK_THROWS_WITH(ParseFramework("jax"), Contains("jax"));
}

// Issue 15 part 4: each stack preset's framework and the emitters it launches with.
TEST_CASE("planner: the stack is the framework: every preset pairs with its framework's emitters only",
          "[planner][launch]") {
  using F = Framework;
  const std::map<std::string, std::set<F>> fits = {
      {"megatron-core", {F::kMegatron}},
      {"megatron-lm-2021", {F::kMegatron}},
      {"megatron-lm-2022", {F::kMegatron}},
      {"torchtitan", {F::kTorchtitan, F::kTorchtitanToml}},
      {"pytorch-fsdp", {F::kTorchtitan, F::kTorchtitanToml}},
      {"pytorch-fsdp2", {F::kTorchtitan, F::kTorchtitanToml}},
      {"pytorch-fsdp2-eager", {F::kTorchtitan, F::kTorchtitanToml}},
      {"deepspeed-zero", {F::kDeepSpeed}},
      {"megatron-deepspeed", {F::kDeepSpeed}},
      {"nanotron", {}},
  };
  REQUIRE(fits.size() == SoftwareStackNames().size());
  for (const std::string& name : SoftwareStackNames()) {
    const SoftwareStack s = LoadSoftwareStack(name);
    for (F f : {F::kMegatron, F::kTorchtitan, F::kTorchtitanToml, F::kDeepSpeed}) {
      INFO(name << " --emit " << ToString(f));
      const bool expected = fits.at(name).count(f) == 1;
      CHECK(StackFitsEmitter(s.framework, f) == expected);
      if (expected) {
        CHECK_NOTHROW(CheckStackFitsEmitter(s.name, s.framework, f));
      } else {
        try {
          CheckStackFitsEmitter(s.name, s.framework, f);
          FAIL("no error");
        } catch (const InvalidInput& e) {
          CHECK_THAT(e.what(), Contains("stack '" + name + "'"));
          CHECK_THAT(e.what(), Contains(StrCat("--emit ", ToString(f))));
        }
      }
    }
  }
  // --emit alone picks the framework's current preset, which fits it.
  for (F f : {F::kMegatron, F::kTorchtitan, F::kTorchtitanToml, F::kDeepSpeed}) {
    const SoftwareStack s = LoadSoftwareStack(CurrentStackPreset(f));
    CHECK(StackFitsEmitter(s.framework, f));
  }
}

// fp32 training (--precision fp32): no bf16 switch in any emitter, bf16 jobs keep theirs.
TEST_CASE("planner: fp32 jobs launch without bf16 flags", "[planner]") {
  const ModelSpec model = TinyModel(32, 32, 11008);
  JobSpec job = Job(512, 4096);
  const ParallelConfig c = ParseParallelConfig("dp=64,tp=2,pp=1,mbs=2,sharding=zero1");
  CHECK_THAT(EmitLaunchFlags(Framework::kMegatron, c, model, job).text, Contains("--bf16"));
  job.precision = Precision::kFp32;
  CHECK_THAT(EmitLaunchFlags(Framework::kMegatron, c, model, job).text, !Contains("--bf16"));
  CHECK_THAT(EmitLaunchFlags(Framework::kTorchtitanToml, c, model, job).text,
             Contains("mixed_precision_param = \"float32\""));
  const auto j = nlohmann::json::parse(EmitLaunchFlags(Framework::kDeepSpeed, c, model, job).text);
  CHECK(j.at("bf16").at("enabled") == false);
}

TEST_CASE("planner: megatron flags name the plan's CP kind as Transformer Engine spells it", "[planner]") {
  const ModelSpec model = TinyModel(32, 32, 11008);
  const JobSpec job = Job(512, 4096);
  const auto flags = [&](const char* cfg) {
    return EmitLaunchFlags(Framework::kMegatron, ParseParallelConfig(cfg), model, job).text;
  };
  CHECK_THAT(flags("dp=64,cp=4,sharding=zero1"), Contains("--cp-comm-type p2p"));
  CHECK_THAT(flags("dp=64,cp=4,sharding=zero1,cp_comm=a2a"), Contains("--cp-comm-type a2a"));
  CHECK_THAT(flags("dp=64,cp=4,sharding=zero1,cp_comm=allgather"), Contains("--cp-comm-type all_gather"));
  CHECK_THAT(flags("dp=256,sharding=zero1"), !Contains("--cp-comm-type"));
  // Hierarchical: the a2a group's size, then the ring's (their product is cp).
  CHECK_THAT(flags("dp=32,cp=8,sharding=zero1,cp_comm=a2a+p2p,cp_a2a_size=2"),
             Contains("--cp-comm-type a2a+p2p") && Contains("--hierarchical-context-parallel-sizes 2 4"));
  CHECK_THAT(flags("dp=64,cp=4,sharding=zero1,cp_comm=a2a"), !Contains("--hierarchical-context-parallel-sizes"));
}

TEST_CASE("planner: partial full recompute emits Megatron's block method and torchtitan's layer frequency",
          "[planner][recompute]") {
  const ModelSpec model = TinyModel(32, 32, 11008);   // 32 layers: 8 per stage at pp=4
  const JobSpec job = Job(512, 4096);
  // Megatron counts per model chunk: 4 layers per stage over vpp=2 chunks = 2 each.
  const LaunchFlags m = EmitLaunchFlags(
      Framework::kMegatron,
      ParseParallelConfig("dp=32,tp=2,pp=4,vpp=2,schedule=interleaved,mbs=1,sharding=zero1,sp=on,recompute=full,"
                          "recompute_layers=4"),
      model, job);
  CHECK_THAT(m.text, Contains("--recompute-granularity full"));
  CHECK_THAT(m.text, Contains("--recompute-method block"));
  CHECK_THAT(m.text, Contains("--recompute-num-layers 2"));
  CHECK_THAT(m.text, !Contains("uniform"));
  // torchtitan v0.2.2: every k-th block, k = 8 / 2 = 4.
  const LaunchFlags t = EmitLaunchFlags(
      Framework::kTorchtitanToml,
      ParseParallelConfig("dp=64,pp=4,mbs=1,sharding=zero2,recompute=full,recompute_layers=2"), model, job);
  CHECK_THAT(t.text, Contains("mode = \"selective\""));
  CHECK_THAT(t.text, Contains("selective_ac_option = \"4\""));
  // 3 of 8 does not divide: k = 2 recomputes 4, and a note says so.
  const LaunchFlags odd = EmitLaunchFlags(
      Framework::kTorchtitanToml,
      ParseParallelConfig("dp=64,pp=4,mbs=1,sharding=zero2,recompute=full,recompute_layers=3"), model, job);
  CHECK_THAT(odd.text, Contains("selective_ac_option = \"2\""));
  bool noted = false;
  for (const std::string& n : odd.notes) noted = noted || n.find("recomputes 4") != std::string::npos;
  CHECK(noted);
}

TEST_CASE("planner: megatron fp4 flags keep the stack's NVFP4 BF16 blocks", "[planner]") {
  const ModelSpec model = TinyModel(80, 64, 28672);
  JobSpec job = Job(256, 8192);
  job.precision = Precision::kFp4;
  const ParallelConfig c = ParseParallelConfig("dp=8,tp=2,pp=4,mbs=1,sharding=zero1,sp=on");
  // Default (NVIDIA's NVFP4 recipe): 0.16 x 80 = 12.8 blocks, round(2.56) = 3 first, round(10.24) = 10 last.
  const LaunchFlags d = EmitLaunchFlags(Framework::kMegatron, c, model, job);
  CHECK_THAT(d.text, Contains("--first-last-layers-bf16"));
  CHECK_THAT(d.text, Contains("--num-layers-at-start-in-bf16 3"));
  CHECK_THAT(d.text, Contains("--num-layers-at-end-in-bf16 10"));
  // Share 0 (Megatron-Bridge's bf16_with_nvfp4_mixed): no BF16 blocks, Megatron-LM's default.
  const LaunchFlags none = EmitLaunchFlags(Framework::kMegatron, c, model, job, 0.0);
  CHECK_THAT(none.text, Contains("--fp4-format e2m1"));
  CHECK_THAT(none.text, !Contains("--first-last-layers-bf16"));
  CHECK_THAT(none.text, !Contains("--num-layers-at-start-in-bf16"));
  // Other precisions ignore the share.
  job.precision = Precision::kFp8;
  CHECK_THAT(EmitLaunchFlags(Framework::kMegatron, c, model, job, 0.5).text, !Contains("--first-last-layers-bf16"));
}
