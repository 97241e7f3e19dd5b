// core: parallel config strings round-trip, and every rule names its key.
#include <catch2/catch.hpp>

#include <algorithm>

#include "core/error.h"
#include "core/job_spec.h"
#include "core/loaders.h"
#include "core/parallel_config.h"

using namespace parasim;
using Catch::Matchers::Contains;

namespace {
JobSpec Job(int64_t batch, int64_t seq) {
  JobSpec j;
  j.global_batch = batch;
  j.seq_len = seq;
  return j;
}
}  // namespace

TEST_CASE("core: config strings round-trip through ToString", "[core]") {
  const char* text = GENERATE(
      "dp=64,tp=2,pp=2,cp=1,ep=1,mbs=1,sharding=zero2,recompute=none,sp=on,vpp=1,schedule=1f1b,order=tp-cp-ep-dp-pp,prefetch=1",
      "dp=8,tp=1,pp=4,cp=2,ep=1,mbs=2,sharding=hsdp:4,recompute=selective,sp=off,vpp=2,schedule=interleaved,order=tp-dp-cp-ep-pp,prefetch=2,pp_layers=9:7:8:8",
      "dp=8,tp=1,pp=4,cp=1,ep=1,mbs=1,sharding=zero1,recompute=full,sp=off,vpp=1,schedule=1f1b,order=tp-cp-ep-dp-pp,prefetch=1,recompute_layers=4");
  const ParallelConfig c = ParseParallelConfig(text);
  REQUIRE(c.ToString() == text);
  REQUIRE(ParseParallelConfig(c.ToString()).ToString() == c.ToString());
}

TEST_CASE("core: keys left out keep their defaults", "[core]") {
  const ParallelConfig c = ParseParallelConfig("dp=16, tp=8");
  CHECK(c.dp == 16);
  CHECK(c.tp == 8);
  CHECK(c.pp == 1);
  CHECK(c.sharding == ShardingMode::kZero2);
  CHECK(c.order == "tp-cp-ep-dp-pp");
}

TEST_CASE("core: bad config strings name the key", "[core]") {
  REQUIRE_THROWS_WITH(ParseParallelConfig("dp=0"), Contains("dp: '0' is not a positive integer"));
  REQUIRE_THROWS_WITH(ParseParallelConfig("tp=2,tq=4"), Contains("tq: unknown key"));
  REQUIRE_THROWS_WITH(ParseParallelConfig("sharding=zero4"), Contains("sharding: 'zero4' is not one of"));
  REQUIRE_THROWS_WITH(ParseParallelConfig("order=tp-dp-pp"), Contains("order:"));
  REQUIRE_THROWS_WITH(ParseParallelConfig("tp=2,tp=4"), Contains("tp: given twice"));
}

TEST_CASE("core: validation collects every violated rule", "[core]") {
  const ModelSpec m = LoadModel("llama2-7b");  // 32 heads, 32 layers, ffn 11008
  SECTION("a valid config has no issues") {
    CHECK(ParseParallelConfig("dp=64,tp=2,pp=2").Validate(m, Job(512, 4096), 256).empty());
  }
  SECTION("world size, heads, micro-batches") {
    const auto issues = ParseParallelConfig("dp=3,tp=3,mbs=2").Validate(m, Job(512, 4096), 256);
    std::string all;
    for (const auto& i : issues) all += i.ToString() + "\n";
    CHECK_THAT(all, Contains("dp·tp·pp·cp = 3·3·1·1 = 9 but the cluster has 256 GPUs"));
    CHECK_THAT(all, Contains("tp=3 does not divide the 32 attention heads"));
    CHECK_THAT(all, Contains("global batch 512 is not a multiple of dp = 3"));
  }
  SECTION("interleaving needs vpp, and m divisible by pp") {
    auto issues = ParseParallelConfig("dp=64,pp=4,vpp=2,schedule=interleaved,mbs=1").Validate(m, Job(512, 4096), 256);
    REQUIRE(issues.size() == 0);
    issues = ParseParallelConfig("dp=64,pp=4,vpp=2").Validate(m, Job(512, 4096), 256);
    REQUIRE(issues.size() == 1);
    CHECK(issues[0].key == "vpp");
    issues = ParseParallelConfig("dp=128,pp=2,vpp=2,schedule=interleaved,mbs=4").Validate(m, Job(128 * 4 * 3, 4096), 256);
    REQUIRE(issues.size() == 1);
    CHECK(issues[0].key == "schedule");
  }
  SECTION("ep needs an MoE model") {
    const auto issues = ParseParallelConfig("dp=256,ep=2").Validate(m, Job(512, 4096), 256);
    REQUIRE(issues.size() == 1);
    CHECK(issues[0].key == "ep");
  }
}

TEST_CASE("core: stage layers split evenly with the remainder in the middle", "[core]") {
  const ModelSpec m = LoadModel("llama2-7b");
  CHECK(ParseParallelConfig("pp=4").StageLayers(m) == std::vector<int>{8, 8, 8, 8});
  CHECK(ParseParallelConfig("pp=5").StageLayers(m) == std::vector<int>{6, 7, 7, 6, 6});
  CHECK(ParseParallelConfig("pp=3").StageLayers(m) == std::vector<int>{11, 11, 10});
  CHECK(ParseParallelConfig("pp=2,pp_layers=20/12").StageLayers(m) == std::vector<int>{20, 12});
}

TEST_CASE("core: recompute_layers and vpp are checked against the smallest stage of the split", "[core]") {
  ModelSpec m = LoadModel("llama2-7b");
  for (int64_t layers : {7, 32, 61, 126}) {
    m.num_layers = layers;
    for (int pp = 2; pp <= layers && pp <= 40; ++pp) {
      const std::vector<int> split = ParseParallelConfig(StrCat("pp=", pp)).StageLayers(m);
      const int fewest = *std::min_element(split.begin(), split.end());
      auto issues = [&](const std::string& extra) {
        return ParseParallelConfig(StrCat("pp=", pp, ",recompute=full,", extra)).Validate(m, Job(4 * pp, 4096), pp);
      };
      INFO(layers << " layers, pp " << pp << ", fewest " << fewest);
      CHECK(issues(StrCat("recompute_layers=", fewest)).empty());
      const auto over = issues(StrCat("recompute_layers=", fewest + 1));
      REQUIRE(over.size() == 1);
      CHECK(over[0].key == "recompute_layers");
      if (fewest >= 2) CHECK(issues(StrCat("vpp=", fewest, ",schedule=interleaved")).empty());   // vpp 1 is not interleaved
      const auto chunks = issues(StrCat("vpp=", fewest + 1, ",schedule=interleaved"));
      REQUIRE(chunks.size() == 1);
      CHECK(chunks[0].key == "vpp");
    }
  }
}

TEST_CASE("core: recompute_layers is left out at 0 and checked against the stages", "[core]") {
  CHECK(ParseParallelConfig("recompute=full").ToString().find("recompute_layers") == std::string::npos);
  CHECK(ParseParallelConfig("recompute=full,recompute_layers=0").recompute_layers == 0);
  REQUIRE_THROWS_WITH(ParseParallelConfig("recompute_layers=-1"), Contains("recompute_layers"));
  ModelSpec m;
  m.num_layers = 32;
  m.hidden_size = 4096;
  m.num_attention_heads = 32;
  m.num_kv_heads = 32;
  m.ffn_hidden_size = 11008;
  m.vocab_size = 32000;
  auto issues_of = [&](const std::string& text) {
    std::string keys;
    for (const Issue& i : ParseParallelConfig(text).Validate(m, Job(64, 4096), 32)) keys += i.key + ";";
    return keys;
  };
  CHECK(issues_of("dp=8,pp=4,recompute=full,recompute_layers=8") == "");
  CHECK(issues_of("dp=8,pp=4,recompute=full,recompute_layers=9") == "recompute_layers;");
  CHECK(issues_of("dp=8,pp=4,recompute=selective,recompute_layers=2") == "recompute_layers;");
  CHECK(issues_of("dp=8,pp=4,vpp=2,schedule=interleaved,recompute=full,recompute_layers=3") == "recompute_layers;");
  // A config's recomputed layers per stage and per chunk position.
  const ParallelConfig c = ParseParallelConfig("pp=4,vpp=2,schedule=interleaved,recompute=full,recompute_layers=4");
  CHECK(c.RecomputedLayers(8) == 4);
  CHECK(c.FullyRecomputes(1));
  CHECK_FALSE(c.FullyRecomputes(2));
  CHECK(ParseParallelConfig("recompute=full").RecomputedLayers(8) == 8);
  CHECK(ParseParallelConfig("recompute=none").RecomputedLayers(8) == 0);
}
