// planner: every Megatron-LM argument the emitter writes exists in the pinned
// Megatron-LM revision with the right kind, type and choices
// (tests/testdata/frameworks/megatron_lm_args.tsv), the emitted set obeys the
// cross-flag rules of its validate_args, and the model the flags describe has
// the parameter count parasim planned for, across the whole search space.
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "core/loaders.h"
#include "cost_model/precision.h"
#include "planner/launch_flags.h"
#include "megatron_checks.h"

using namespace parasim;
using namespace parasim::planner;

namespace {

using namespace megatron_checks;

std::vector<ModelSpec> Models() {
  const std::string hf = std::string(PARASIM_SOURCE_DIR) + "/tests/testdata/hf/";
  std::vector<ModelSpec> models = {LoadModel("llama3-8b"), LoadModel("gpt3-175b")};
  for (const char* d : {"qwen3-30b-a3b", "deepseek-v3", "gemma-2-9b", "gpt-oss-20b", "llama-4-maverick",
                        "qwen2.5-7b", "mixtral-8x7b"}) {
    models.push_back(LoadModel(hf + d));
  }
  return models;
}

}  // namespace

TEST_CASE("planner: Megatron-LM flags exist, type-check and obey validate_args across the search space",
          "[planner][launch]") {
  REQUIRE(MegatronArgTable().size() > 500);
  REQUIRE(MegatronArgTable().count("--use-custom-fsdp") == 0);   // the old name is gone
  const char* shardings[] = {"ddp", "zero1", "zero2-replicated", "zero2", "zero3", "hsdp:4"};
  const char* recomputes[] = {"none", "selective", "full", "full,recompute_layers=2"};
  const char* pipelines[] = {"pp=1", "pp=4,schedule=1f1b", "pp=4,vpp=2,schedule=interleaved", "pp=4,schedule=gpipe",
                             "pp=4,schedule=zb-h1"};
  int checked = 0;
  for (const ModelSpec& m : Models()) {
    for (const char* sh : shardings) {
      for (const char* rc : recomputes) {
        for (const char* pl : pipelines) {
          for (int tp : {1, 2}) {
            for (Precision p : {Precision::kBf16, Precision::kFp8, Precision::kFp4}) {
              const std::string spec = StrCat("dp=8,tp=", tp, ",", pl, ",mbs=2,sharding=", sh, ",recompute=", rc,
                                              tp > 1 ? ",sp=on" : "", m.IsMoe() ? ",ep=4" : "");
              INFO(m.name << " " << spec);
              const ParallelConfig c = ParseParallelConfig(spec);
              JobSpec job;
              job.global_batch = 8 * 2 * 4;
              job.seq_len = 4096;
              job.precision = p;
              const LaunchFlags f = EmitLaunchFlags(Framework::kMegatron, c, m, job);
              CHECK(f.target.find(kMegatronLmCommit) != std::string::npos);
              const auto args = Parse(f.text);
              CheckNamesAndTypes(args);
              const std::map<std::string, std::string> map(args.begin(), args.end());
              CheckCrossFlagRules(map, c, m, job);
              ++checked;
            }
          }
        }
      }
    }
  }
  CHECK(checked == 9 * 6 * 4 * 5 * 2 * 3);
}

TEST_CASE("planner: the model Megatron-LM builds from the flags has the planned parameter count",
          "[planner][launch]") {
  for (const ModelSpec& m : Models()) {
    for (int tp : {1, 8}) {
      INFO(m.name << " tp=" << tp);
      const ParallelConfig c = ParseParallelConfig(StrCat("dp=4,tp=", tp, ",mbs=1,sharding=zero1"));
      JobSpec job;
      job.global_batch = 4;
      job.seq_len = 4096;
      const LaunchFlags f = EmitLaunchFlags(Framework::kMegatron, c, m, job);
      const auto args = Parse(f.text);
      const std::map<std::string, std::string> a(args.begin(), args.end());
      ModelSpec implied = ImpliedModel(a, tp);
      const int64_t moe_layers = ImpliedMoeLayers(a, implied.num_layers);
      // Dense layers in an MoE model sit first (DeepSeek) or alternate (Maverick): the count only needs how many.
      if (implied.IsMoe() && moe_layers < implied.num_layers) {
        implied.first_dense_layers = implied.num_layers - moe_layers;
      }
      const int64_t padding = (MegatronPaddedVocab(m.vocab_size, tp) - m.vocab_size) * m.hidden_size *
                              (m.tied_embeddings ? 1 : 2);
      const double planned = static_cast<double>(m.ParameterCount() + padding);
      // Exact where Megatron expresses every weight; Gemma's extra norms, gpt-oss's router bias and learned
      // positions of GPT-3 (no --max-position-embeddings count here) differ by < 0.1 %.
      CHECK_THAT(static_cast<double>(implied.ParameterCount()), Catch::Matchers::WithinRel(planned, 1e-3));
      if (m.name == "llama3-8b" || m.name == "qwen3-30b-a3b" || m.name == "deepseek-v3" ||
          m.name == "llama-4-maverick") {
        CHECK(implied.ParameterCount() == m.ParameterCount() + padding);
      }
    }
  }
  // Llama-3's 128,256 becomes 129,024 at tp 8, and the output says so.
  CHECK(MegatronPaddedVocab(128256, 8) == 129024);
  const LaunchFlags f = EmitLaunchFlags(Framework::kMegatron, ParseParallelConfig("dp=1,tp=8,mbs=1"),
                                        LoadModel("llama3-8b"), JobSpec{});
  bool stated = false;
  for (const std::string& n : f.notes) stated = stated || n.find("128256 -> 129024") != std::string::npos;
  CHECK(stated);
}

// Megatron-LM's low-precision rules, recorded with their source lines
// (tests/testdata/frameworks/megatron_lm_precision_rules.tsv): every recorded
// rule has a check, every flag a check reads exists at the pinned commit, and
// every precision variant the emitter writes passes every rule.
TEST_CASE("planner: emitted FP8/NVFP4 flags obey Megatron-LM's recorded precision rules", "[planner][launch]") {
  const std::vector<PrecisionRule> rules = MegatronPrecisionRules();
  REQUIRE(rules.size() >= 20);
  std::set<std::string> ids;
  for (const PrecisionRule& r : rules) {
    INFO(r.id);
    CHECK(ids.insert(r.id).second);
    CHECK((r.where.rfind("arguments.py:", 0) == 0 || r.where.rfind("transformer_config.py:", 0) == 0));
    CHECK(!r.text.empty());
    CHECK(CheckPrecisionRule(r.id, {}, {}));   // a check exists (vacuous on no flags)
  }
  CHECK(!CheckPrecisionRule("no_such_rule", {}, {}));
  for (const std::string& flag : PrecisionRuleFlags()) {
    INFO(flag);
    CHECK(MegatronArgTable().count(flag) == 1);
  }
  int checked = 0;
  for (const ModelSpec& m : Models()) {
    for (const char* sh : {"ddp", "zero1", "zero2-replicated", "zero2", "zero3", "hsdp:4"}) {
      for (const char* pl : {"pp=1", "pp=4,schedule=1f1b", "pp=4,vpp=2,schedule=interleaved"}) {
        for (Precision p : {Precision::kBf16, Precision::kFp8, Precision::kFp4}) {
          const std::string spec =
              StrCat("dp=8,tp=2,", pl, ",mbs=2,sharding=", sh, ",sp=on", m.IsMoe() ? ",ep=4" : "");
          INFO(m.name << " " << spec << " " << ToString(p));
          JobSpec job;
          job.global_batch = 8 * 2 * 4;
          job.seq_len = 4096;
          job.precision = p;
          const LaunchFlags f = EmitLaunchFlags(Framework::kMegatron, ParseParallelConfig(spec), m, job);
          const auto args = Parse(f.text);
          const std::map<std::string, std::string> a(args.begin(), args.end());
          for (const PrecisionRule& r : rules) {
            INFO(r.id << " (" << r.where << ")");
            CHECK(CheckPrecisionRule(r.id, a, f.notes));
          }
          // The precision the plan assumed is the one the flags select.
          CHECK(a.count("--fp8-format") == (p == Precision::kFp8 ? 1u : 0u));
          CHECK(a.count("--fp4-format") == (p == Precision::kFp4 ? 1u : 0u));
          ++checked;
        }
      }
    }
  }
  CHECK(checked == 9 * 6 * 3 * 3);
}
