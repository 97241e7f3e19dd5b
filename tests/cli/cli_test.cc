// cli: the parasim executable end to end: outputs, exit codes, atomic files.
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include "tests/cli/run_parasim.h"

using Catch::Matchers::Contains;

namespace {

using parasim_test::Parasim;
using parasim_test::Run;

std::string Data(const std::string& rel) { return std::string(PARASIM_SOURCE_DIR) + "/tests/testdata/" + rel; }

}  // namespace

TEST_CASE("cli: models show prints exact parameter counts", "[cli]") {
  Run r = Parasim("models show llama2-7b --format json");
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Contains("\"parameters\": 6738415616"));
  r = Parasim("models show " + Data("hf/mixtral-8x7b.json") + " --format json");
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Contains("\"parameters\": 46702792704"));
}

TEST_CASE("cli: bad input exits 2 with a message naming the problem", "[cli]") {
  Run r = Parasim("models show no-such-model");
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Contains("--model") && Contains("no-such-model"));
  r = Parasim("models show " + Data("invalid/model_bad_values.yaml"));
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Contains("num_layers") && Contains("colour: unknown key"));
  r = Parasim("profiles show " + Data("invalid/cluster_bad.yaml"));
  CHECK(r.code == 2);
  r = Parasim("models frobnicate");
  CHECK(r.code == 2);
  r = Parasim("models list --format xml");
  CHECK(r.code == 2);
}

TEST_CASE("cli: -o writes the whole file or nothing", "[cli]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("parasim_cli_o_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path good = dir / "models.json";
  Run r = Parasim("models list --format json -o " + good.string());
  REQUIRE(r.code == 0);
  CHECK(r.out.empty());
  std::ifstream in(good);
  std::stringstream ss;
  ss << in.rdbuf();
  CHECK_THAT(ss.str(), Contains("\"llama3-405b\""));
  // Into a folder that does not exist: exit 2, and no file or temp file left behind.
  const fs::path bad = dir / "missing" / "out.json";
  r = Parasim("models list --format json -o " + bad.string());
  CHECK(r.code == 2);
  CHECK_FALSE(fs::exists(bad));
  // A failed command leaves an earlier output untouched.
  r = Parasim("models show nothing-here -o " + good.string());
  CHECK(r.code == 2);
  std::ifstream again(good);
  std::stringstream ss2;
  ss2 << again.rdbuf();
  CHECK(ss2.str() == ss.str());
  fs::remove_all(dir);
}

TEST_CASE("cli: the same input gives byte-identical output", "[cli]") {
  const Run a = Parasim("profiles show dgx-h100 --nodes 64 --format json");
  const Run b = Parasim("profiles show dgx-h100 --nodes 64 --format json");
  REQUIRE(a.code == 0);
  CHECK(a.out == b.out);
  CHECK_THAT(a.out, Contains("\"gpus\": 512"));
}

TEST_CASE("cli: simulate prints every report field at each fidelity", "[cli]") {
  const std::string base =
      "simulate --model llama2-7b --cluster dgx-h100 --nodes 2 --global-batch 32 --config dp=16,mbs=2 --format json";
  for (const char* fidelity : {"analytical", "simulated", "full"}) {
    INFO(fidelity);
    const Run r = Parasim(base + " --fidelity " + fidelity);
    REQUIRE(r.code == 0);
    for (const char* key : {"\"step_time_s\"", "\"tokens_per_s\"", "\"tokens_per_s_per_gpu\"", "\"mfu\"", "\"hfu\"",
                            "\"tflops_per_gpu\"", "\"compute_s\"", "\"comm_s\"", "\"exposed_comm_s\"",
                            "\"exposed_comm_fraction\"", "\"bubble_s\"", "\"memory_bytes_per_gpu\"",
                            "\"power_w_per_gpu\"", "\"energy_j_per_step\"", "\"tokens_per_joule\"", "\"fidelity\""}) {
      CHECK_THAT(r.out, Contains(key));
    }
    CHECK_THAT(r.out, Contains(std::string("\"fidelity\": \"") + fidelity + "\""));
    CHECK_THAT(r.out, !Contains("nan") && !Contains("inf"));
  }
}

TEST_CASE("cli: simulate writes a trace only with a simulated tier, and bad configs exit 2", "[cli]") {
  namespace fs = std::filesystem;
  const fs::path trace = fs::temp_directory_path() / ("parasim_trace_" + std::to_string(::getpid()) + ".json");
  Run r = Parasim("simulate --model llama2-7b --cluster dgx-h100 --nodes 1 --global-batch 8 --config dp=8 "
                  "--fidelity simulated --trace " + trace.string());
  REQUIRE(r.code == 0);
  REQUIRE(fs::exists(trace));
  std::ifstream in(trace);
  std::stringstream ss;
  ss << in.rdbuf();
  CHECK_THAT(ss.str(), Contains("\"traceEvents\"") && Contains("\"ph\""));
  fs::remove(trace);
  r = Parasim("simulate --model llama2-7b --cluster dgx-h100 --nodes 1 --global-batch 8 --config dp=8 --trace " +
              trace.string());
  CHECK(r.code == 2);
  CHECK_FALSE(fs::exists(trace));
  r = Parasim("simulate --model llama2-7b --cluster dgx-h100 --nodes 1 --global-batch 8 --config dp=8,tq=2");
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Contains("tq: unknown key"));
}

TEST_CASE("cli: plan output is the same for any thread count", "[cli]") {
  const std::string base = "plan --model llama2-7b --cluster dgx-h100 --nodes 2 --global-batch 32 --format json";
  const Run one = Parasim(base + " --threads 1");
  const Run two = Parasim(base + " --threads 2");
  REQUIRE(one.code == 0);
  CHECK(one.out == two.out);
  CHECK_THAT(one.out, Contains("\"plans\"") && Contains("\"searched\"") && Contains("\"pareto\""));
}

TEST_CASE("cli: a stack written by `profiles stack` gives the preset's output byte for byte", "[cli][stack]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("parasim_cli_stack_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string file = (dir / "fsdp.yaml").string();
  Run r = Parasim("profiles stack pytorch-fsdp -o " + file);
  REQUIRE(r.code == 0);
  CHECK(r.out.empty());
  // The file shows back as the preset does: nothing lost on the way.
  CHECK(Parasim("profiles stack " + file).out == Parasim("profiles stack pytorch-fsdp").out);
  const std::string simulate =
      "simulate --model llama2-7b --cluster dgx-h100 --nodes 2 --global-batch 32 --config dp=16,mbs=2";
  for (const char* format : {"json", "table"}) {
    INFO(format);
    const Run preset = Parasim(simulate + " --format " + format + " --stack pytorch-fsdp");
    const Run from_file = Parasim(simulate + " --format " + format + " --stack " + file);
    REQUIRE(preset.code == 0);
    REQUIRE(from_file.code == 0);
    CHECK(parasim_test::WithoutInputs(from_file.out) == parasim_test::WithoutInputs(preset.out));
  }
  // A job file's `stack:` takes a file too.
  const std::string job = (dir / "job.yaml").string();
  std::ofstream(job) << "schema_version: 1\nglobal_batch: 32\nseq_len: 4096\nstack: " << file << "\n";
  CHECK(Parasim(simulate + " --format json --job " + job + " --stack megatron-core").out !=
        Parasim(simulate + " --format json --job " + job).out);   // the flag overrides the job's stack
  r = Parasim(simulate + " --format json --job " + job);
  REQUIRE(r.code == 0);
  // Same results as the default stack; the provenance names the file it came from.
  CHECK(parasim_test::WithoutInputs(r.out) == parasim_test::WithoutInputs(Parasim(simulate + " --format json").out));
  fs::remove_all(dir);
}

TEST_CASE("cli: every command that takes --stack takes a stack file", "[cli][stack]") {
  namespace fs = std::filesystem;
  const fs::path file = fs::temp_directory_path() / ("parasim_cli_stack_" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(file) << "schema_version: 1\nbase: megatron-core\nkernel_gap_s: 3e-6\n";
  const std::string stack = " --stack " + file.string();
  const std::string job = " --model llama2-7b --cluster dgx-h100 --nodes 1 --global-batch 16";
  CHECK(Parasim("plan" + job + " --top 1 --constrain tp=1,pp=1" + stack).code == 0);
  CHECK(Parasim("whatif" + job + " --vary nodes=1,2 --constrain tp=1,pp=1" + stack).code == 0);
  CHECK(Parasim("scale --model llama2-7b --cluster dgx-h100 --gpus 8,16 --local-batch 2" + stack).code == 0);
  const Run slow = Parasim("simulate" + job + " --config dp=8,mbs=2 --format json" + stack);
  const Run fast = Parasim("simulate" + job + " --config dp=8,mbs=2 --format json --stack megatron-core");
  REQUIRE(slow.code == 0);
  CHECK(slow.out != fast.out);   // the doubled kernel gap shows
  fs::remove(file);
}

TEST_CASE("cli: a bad stack exits 2 with nothing on stdout", "[cli][stack]") {
  const std::string simulate = "simulate --model llama2-7b --cluster dgx-h100 --nodes 1 --global-batch 8 --config dp=8";
  for (const char* name : {"stack_unknown_key.yaml", "stack_negative.yaml", "stack_bad_base.yaml"}) {
    INFO(name);
    const Run r = Parasim(simulate + " --stack " + Data(std::string("invalid/") + name));
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    CHECK_THAT(r.err, Contains(name));
  }
  Run r = Parasim(simulate + " --stack " + Data("invalid/stack_negative.yaml"));
  CHECK_THAT(r.err, Contains("kernel_gap_s: must be >= 0, got -2e-06"));
  r = Parasim(simulate + " --stack jax");
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK_THAT(r.err, Contains("pytorch-fsdp2") && Contains("YAML file"));
  r = Parasim("profiles stack jax");
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  r = Parasim("profiles stack " + Data("invalid/stack_bad_base.yaml"));
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Contains("base: unknown preset 'pytorch-fsdp3'"));
}

TEST_CASE("cli: profiles list names the software stacks", "[cli][stack]") {
  const Run r = Parasim("profiles list");
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Contains("Software stacks") && Contains("megatron-lm-2021"));
  // The longest names (a cluster and two stacks) keep two spaces before their description.
  for (const char* name : {"consumer-rtx3090  ", "megatron-deepspeed  ", "pytorch-fsdp2-eager  "})
    CHECK_THAT(r.out, Contains(name));
}
