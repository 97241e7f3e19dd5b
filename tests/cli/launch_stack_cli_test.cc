// cli: the stack is the framework (issue 15 part 4). --stack picks the
// physics, the search space and the emitter; --emit alone plans for that
// framework's current stack; a stack and an emitter of different frameworks
// exit 2 naming both. Done-when: for Llama-3, Qwen3-MoE and DeepSeek-V3 from
// their Hugging Face directories, `plan --stack megatron-core --emit megatron`
// prints a command line that passes the recorded Megatron-LM argument
// definitions and cross-flag rules, with the planned parameter count.
#include <map>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "../planner/megatron_checks.h"
#include "core/loaders.h"
#include "planner/launch_flags.h"
#include "run_parasim.h"

using Catch::Matchers::Contains;
using parasim::StrCat;
using parasim_test::Parasim;

namespace {

std::string Hf(const std::string& dir) { return std::string(PARASIM_SOURCE_DIR) + "/tests/testdata/hf/" + dir; }

const std::string kCommon = "--cluster dgx-h100 --seq-len 4096 --top 1 --quiet ";
const std::string kPlan = "plan --nodes 4 --global-batch 256 " + kCommon;

// The stack the plan was scored with (the report's provenance).
std::string StackOf(const std::string& json) {
  return nlohmann::json::parse(json).at("inputs").at("stack").at("name").get<std::string>();
}

}  // namespace

TEST_CASE("cli: plan --stack megatron-core --emit megatron passes Megatron-LM's definitions for today's models",
          "[cli][launch]") {
  using namespace megatron_checks;
  struct Case {
    const char* dir;
    int nodes;
    int64_t global_batch;
  };
  // DeepSeek-V3 (671B) needs 256 H100s to fit at all.
  for (const Case& k : {Case{"llama-3-8b", 4, 256}, Case{"qwen3-30b-a3b", 4, 256}, Case{"deepseek-v3", 32, 1024}}) {
    const std::string dir = k.dir;
    INFO(dir);
    const auto r = Parasim(StrCat("plan --nodes ", k.nodes, " --global-batch ", k.global_batch, " ", kCommon,
                                  "--model ", Hf(dir), " --stack megatron-core --emit megatron --format json"));
    REQUIRE(r.code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j.at("launch").at("framework") == "megatron");
    CHECK_THAT(j.at("launch").at("target").get<std::string>(), Contains(parasim::planner::kMegatronLmCommit));
    const parasim::ParallelConfig c =
        parasim::ParseParallelConfig(j.at("plans").at(0).at("config_string").get<std::string>());
    const parasim::ModelSpec m = parasim::LoadModel(Hf(dir));
    parasim::JobSpec job;
    job.global_batch = k.global_batch;
    job.seq_len = 4096;
    const auto args = Parse(j.at("launch").at("text").get<std::string>());
    CheckNamesAndTypes(args);
    const std::map<std::string, std::string> a(args.begin(), args.end());
    CheckCrossFlagRules(a, c, m, job);
    // The world the flags describe is the plan's: dp·tp·pp·cp = every GPU.
    CHECK(c.dp * c.tp * c.pp * c.cp == k.nodes * 8);
    CHECK(std::stoll(a.at("--global-batch-size")) == k.global_batch);
    CHECK(std::stoi(a.at("--tensor-model-parallel-size")) == c.tp);
    CHECK(std::stoi(a.at("--pipeline-model-parallel-size")) == c.pp);
    const int64_t padding =
        (parasim::planner::MegatronPaddedVocab(m.vocab_size, c.tp) - m.vocab_size) * m.hidden_size *
        (m.tied_embeddings ? 1 : 2);
    CHECK(ImpliedParameterCount(a, c.tp) == m.ParameterCount() + padding);
  }
}

TEST_CASE("cli: --emit without --stack plans for that framework's current stack", "[cli][launch]") {
  const std::string model = "--model llama3-8b --format json ";
  CHECK(StackOf(Parasim(kPlan + model + "--emit megatron").out) == "megatron-core");
  CHECK(StackOf(Parasim(kPlan + model + "--emit torchtitan").out) == "torchtitan");
  CHECK(StackOf(Parasim(kPlan + model + "--emit torchtitan@0.2").out) == "torchtitan");
  CHECK(StackOf(Parasim(kPlan + model + "--emit deepspeed").out) == "deepspeed-zero");
  // Without --emit the default stack stays the paper's.
  CHECK(StackOf(Parasim(kPlan + model).out) == "pytorch-fsdp");
  // A stack of the same framework is kept, and the output says where the flags are the nearest launcher's.
  CHECK(StackOf(Parasim(kPlan + model + "--stack megatron-lm-2021 --emit megatron").out) == "megatron-lm-2021");
  const auto fsdp2 = Parasim(kPlan + model + "--stack pytorch-fsdp2 --emit torchtitan");
  REQUIRE(fsdp2.code == 0);
  CHECK(StackOf(fsdp2.out) == "pytorch-fsdp2");
  CHECK_THAT(fsdp2.out, Contains("plain PyTorch FSDP loop"));
  // The table's first line names the stack too, since --emit alone changes it.
  const auto table = Parasim(kPlan + "--model llama3-8b --emit torchtitan");
  REQUIRE(table.code == 0);
  CHECK_THAT(table.out.substr(0, table.out.find('\n')), Contains("stack: torchtitan"));
}

TEST_CASE("cli: a stack and an emitter of different frameworks exit 2 naming both", "[cli][launch]") {
  const auto r = Parasim(kPlan + "--model llama3-8b --stack torchtitan --emit megatron");
  CHECK(r.code == 2);
  CHECK(r.out.empty());   // nothing half-written
  CHECK_THAT(r.err, Contains("--emit"));
  CHECK_THAT(r.err, Contains("stack 'torchtitan' is a torchtitan stack, but --emit megatron"));
  CHECK_THAT(r.err, Contains("--stack megatron-core"));
  const auto ds = Parasim(kPlan + "--model llama3-8b --stack megatron-core --emit deepspeed");
  CHECK(ds.code == 2);
  CHECK_THAT(ds.err, Contains("stack 'megatron-core' is a megatron-lm stack, but --emit deepspeed"));
  const auto nano = Parasim(kPlan + "--model llama3-8b --stack nanotron --emit torchtitan");
  CHECK(nano.code == 2);
  CHECK_THAT(nano.err, Contains("nanotron has no launch emitter"));
}
