// planner: every DeepSpeed config key the emitter writes exists in the pinned
// DeepSpeed source (tests/testdata/frameworks/deepspeed_config_keys.txt), the
// batch identity DeepSpeed asserts holds, and sharding maps to the right stage.
#include <fstream>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include <catch2/catch.hpp>

#include "core/loaders.h"
#include "planner/launch_flags.h"

using namespace parasim;
using namespace parasim::planner;

namespace {

const std::set<std::string>& DeepSpeedKeys() {
  static const std::set<std::string> keys = [] {
    std::set<std::string> k;
    std::ifstream in(std::string(PARASIM_SOURCE_DIR) + "/tests/testdata/frameworks/deepspeed_config_keys.txt");
    std::string line;
    while (std::getline(in, line)) {
      if (!line.empty() && line[0] != '#') k.insert(line);
    }
    return k;
  }();
  return keys;
}

void CollectPaths(const nlohmann::json& j, const std::string& prefix, std::set<std::string>& out) {
  for (const auto& [key, value] : j.items()) {
    const std::string path = prefix.empty() ? key : prefix + "." + key;
    out.insert(path);
    if (value.is_object()) CollectPaths(value, path, out);
  }
}

}  // namespace

TEST_CASE("planner: DeepSpeed keys exist and the batch identity holds across the search space", "[planner][launch]") {
  REQUIRE(DeepSpeedKeys().size() > 20);
  const ModelSpec dense = LoadModel("llama3-8b");
  const ModelSpec moe = LoadModel(std::string(PARASIM_SOURCE_DIR) + "/tests/testdata/hf/qwen3-30b-a3b");
  int checked = 0;
  for (const ModelSpec* m : {&dense, &moe}) {
    for (const char* sh : {"ddp", "zero1", "zero2-replicated", "zero2", "zero3", "hsdp:4"}) {
      for (const char* rc : {"none", "selective", "full"}) {
        for (const char* par : {"tp=1", "tp=2,sp=on", "tp=1,pp=2", "tp=1,cp=2"}) {
          for (long long global : {64LL, 100LL}) {
            const std::string spec = StrCat("dp=8,", par, ",mbs=2,sharding=", sh, ",recompute=", rc,
                                            m->IsMoe() ? ",ep=2" : "");
            INFO(m->name << " " << spec << " global=" << global);
            const ParallelConfig c = ParseParallelConfig(spec);
            JobSpec job;
            job.global_batch = global;
            job.seq_len = 4096;
            const LaunchFlags f = EmitLaunchFlags(Framework::kDeepSpeed, c, *m, job);
            CHECK(f.target.find(kDeepSpeedCommit) != std::string::npos);
            const auto j = nlohmann::json::parse(f.text);
            std::set<std::string> paths;
            CollectPaths(j, "", paths);
            for (const std::string& p : paths) {
              INFO(p);
              CHECK(DeepSpeedKeys().count(p) == 1);
            }
            const long long mbs = j.at("train_micro_batch_size_per_gpu"), gas = j.at("gradient_accumulation_steps");
            CHECK(j.at("train_batch_size").get<long long>() == mbs * gas * c.dp);
            bool said = false;
            for (const std::string& n : f.notes) said = said || n.find("not micro-batch x dp") != std::string::npos;
            CHECK(said == (global % (mbs * c.dp) != 0));   // never changed silently
            const int stage = j.at("zero_optimization").at("stage");
            if (c.sharding == ShardingMode::kZero2) CHECK(stage == 2);   // SHARD_GRAD_OP is not ZeRO-3
            if (c.sharding == ShardingMode::kZero3 || c.sharding == ShardingMode::kHsdp) CHECK(stage == 3);
            CHECK(j.contains("tensor_parallel") == (c.tp > 1));
            ++checked;
          }
        }
      }
    }
  }
  CHECK(checked == 2 * 6 * 3 * 4 * 2);
}
