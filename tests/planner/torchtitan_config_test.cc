// planner: torchtitan output names only fields the pinned torchtitan has:
// --section.field overrides of the current registered-config system
// (tests/testdata/frameworks/torchtitan_config_fields.tsv) and the v0.2.2 TOML
// keys for --emit torchtitan@0.2 (torchtitan_v0.2.2_keys.tsv); token batches add up.
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include "core/loaders.h"
#include "planner/launch_flags.h"

using namespace parasim;
using namespace parasim::planner;

namespace {

std::set<std::string> FieldList(const char* file) {
  std::set<std::string> names;
  std::ifstream in(std::string(PARASIM_SOURCE_DIR) + "/tests/testdata/frameworks/" + file);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] != '#') names.insert(line.substr(0, line.find('\t')));
  }
  return names;
}

}  // namespace

TEST_CASE("planner: torchtitan overrides and TOML keys exist across the search space", "[planner][launch]") {
  const std::set<std::string> current = FieldList("torchtitan_config_fields.tsv");
  const std::set<std::string> toml = FieldList("torchtitan_v0.2.2_keys.tsv");
  REQUIRE(current.count("training.num_tokens_per_microbatch_per_dp_rank") == 1);
  REQUIRE(toml.count("training.local_batch_size") == 1);
  const ModelSpec dense = LoadModel("llama3-8b");
  const ModelSpec moe = LoadModel(std::string(PARASIM_SOURCE_DIR) + "/tests/testdata/hf/qwen3-30b-a3b");
  int checked = 0;
  for (const ModelSpec* m : {&dense, &moe}) {
    for (const char* sh : {"ddp", "zero1", "zero2-replicated", "zero2", "zero3", "hsdp:4"}) {
      for (const char* rc : {"none", "selective", "full", "full,recompute_layers=2"}) {
        for (const char* pl : {"pp=1", "pp=4,schedule=1f1b", "pp=4,vpp=2,schedule=interleaved", "pp=4,schedule=gpipe",
                               "pp=4,schedule=zb-h1"}) {
          const std::string spec = StrCat("dp=8,tp=2,sp=on,", pl, ",mbs=2,sharding=", sh, ",recompute=", rc,
                                          m->IsMoe() ? ",ep=2" : "");
          INFO(m->name << " " << spec);
          const ParallelConfig c = ParseParallelConfig(spec);
          JobSpec job;
          job.global_batch = 128;
          job.seq_len = 4096;
          const LaunchFlags f = EmitLaunchFlags(Framework::kTorchtitan, c, *m, job);
          CHECK(f.target.find(kTorchtitanCommit) != std::string::npos);
          std::stringstream ss(f.text);
          std::string tok, flag;
          std::map<std::string, std::string> values;
          bool subcommand = false;
          while (ss >> tok) {
            if (tok == "\\") continue;
            if (tok.rfind("--", 0) == 0) {
              flag = tok.substr(2);
              CHECK(current.count(flag) == 1);
            } else if (tok.rfind("activation-checkpoint:", 0) == 0) {
              const std::string policy = tok.substr(tok.find(':') + 1);
              CHECK((policy == "full" || policy == "selective" || policy == "none" || policy == "memory-budget"));
              subcommand = true;
            } else {
              values[flag] = tok;
            }
          }
          CHECK(subcommand);
          // Tokens per step = tokens per micro-batch × dp × micro-batches = global batch × seq.
          CHECK(std::stoll(values.at("training.num_tokens_per_train_step")) == job.global_batch * job.seq_len);
          CHECK(std::stoll(values.at("training.num_tokens_per_microbatch_per_dp_rank")) == c.micro_batch * job.seq_len);
          const int dp = std::stoi(values.at("parallelism.data_parallel_replicate_degree")) *
                         std::stoi(values.at("parallelism.data_parallel_shard_degree"));
          CHECK(dp == c.dp);
          // Zero bubble cannot run compiled blocks: the launch turns compile off, and only then.
          const bool zero_bubble = c.schedule == PipelineSchedule::kZeroBubble;
          CHECK(values.count("compile.enable") == (zero_bubble ? 1u : 0u));
          if (zero_bubble) CHECK(values.at("compile.enable") == "false");
          // v0.2.2 TOML.
          const LaunchFlags t = EmitLaunchFlags(Framework::kTorchtitanToml, c, *m, job);
          CHECK(t.target.find(kTorchtitanTomlCommit) != std::string::npos);
          std::stringstream ts(t.text);
          std::string line, section;
          while (std::getline(ts, line)) {
            if (line.empty()) continue;
            if (line[0] == '[') {
              section = line.substr(1, line.find(']') - 1);
              continue;
            }
            const std::string key = section + "." + line.substr(0, line.find(' '));
            INFO(key);
            CHECK(toml.count(key) == 1);
            if (key == "compile.enable") {
              CHECK(zero_bubble);
              CHECK(line == "enable = false");
            }
          }
          CHECK((t.text.find("[compile]") != std::string::npos) == zero_bubble);
          ++checked;
        }
      }
    }
  }
  CHECK(checked == 2 * 6 * 4 * 5);
  CHECK(ParseFramework("torchtitan@0.2") == Framework::kTorchtitanToml);
}
