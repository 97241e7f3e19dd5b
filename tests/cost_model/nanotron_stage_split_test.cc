#include "cost_model/nanotron_stage_split.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>

#include "core/parallel_config.h"

namespace parasim {
namespace {

// h = 64, a = 4, f = 256: a decoder layer costs 4·4·16·64 + 3·256·64 = 65,536.
ModelSpec Small(int64_t layers, int64_t vocab) {
  ModelSpec m;
  m.name = "small";
  m.hidden_size = 64;
  m.num_layers = layers;
  m.num_attention_heads = 4;
  m.num_kv_heads = 4;
  m.ffn_hidden_size = 256;
  m.vocab_size = vocab;
  return m;
}

TEST_CASE("cost_model: nanotron's block costs are get_block_compute_costs", "[cost_model][pp_split]") {
  const ModelSpec m = Small(8, 1000);
  CHECK(NanotronDecoderLayerCost(m) == 65536);
  CHECK(NanotronLmHeadCost(m) == 64000);
  // GQA does not change it: nanotron counts attention heads, not KV heads.
  ModelSpec gqa = m;
  gqa.num_kv_heads = 1;
  CHECK(NanotronDecoderLayerCost(gqa) == 65536);
}

TEST_CASE("cost_model: nanotron's split closes a rank after the block that passes total·(r+1)/pp",
          "[cost_model][pp_split]") {
  // total = 8·65,536 + 64,000 = 588,288; thresholds 147,072 / 294,144 /
  // 441,216: layers 1-3 (196,608 > 147,072), 4-5, 6-7, then 8 and the head.
  const NanotronStageSplit s = NanotronBalancedStageLayers(Small(8, 1000), 4);
  CHECK(s.layers == std::vector<int>{3, 2, 2, 1});
  CHECK(s.clamped_stages == 0);
  CHECK(NanotronBalancedStageLayers(Small(8, 1000), 1).layers == std::vector<int>{8});
}

TEST_CASE("cost_model: every stage of nanotron's split is within one block of total/pp",
          "[cost_model][pp_split]") {
  for (int64_t layers : {8, 16, 32, 80}) {
    for (int64_t vocab : {0, 1000, 32000, 131072}) {
      for (int pp : {2, 4, 8}) {
        if (pp > layers) continue;
        const ModelSpec m = Small(layers, vocab);
        const NanotronStageSplit s = NanotronBalancedStageLayers(m, pp);
        INFO("layers " << layers << " vocab " << vocab << " pp " << pp);
        REQUIRE(static_cast<int>(s.layers.size()) == pp);
        CHECK(std::accumulate(s.layers.begin(), s.layers.end(), int64_t{0}) == layers);
        CHECK(*std::min_element(s.layers.begin(), s.layers.end()) >= 1);
        if (s.clamped_stages > 0) continue;   // the clamp moves layers off nanotron's split
        const double c = static_cast<double>(NanotronDecoderLayerCost(m));
        const double head = static_cast<double>(NanotronLmHeadCost(m));
        const double target = (layers * c + head) / pp;
        const double block = std::max(c, head);
        for (int st = 0; st < pp; ++st) {
          const double cost = s.layers[st] * c + (st == pp - 1 ? head : 0);
          CHECK(std::abs(cost - target) <= block);
        }
        // The head's stage holds no more decoder layers than the first.
        CHECK(s.layers.back() <= s.layers.front());
      }
    }
  }
}

TEST_CASE("cost_model: nanotron's split is the even split where its thresholds give it",
          "[cost_model][pp_split]") {
  // 7 layers on 2 stages, a head lighter than a layer: the threshold lies in
  // [3.5, 4) layers, so the first rank takes 4, as ParallelConfig's split does.
  const ModelSpec m = Small(7, 100);
  REQUIRE(NanotronLmHeadCost(m) < NanotronDecoderLayerCost(m));
  ParallelConfig c;
  c.pp = 2;
  CHECK(NanotronBalancedStageLayers(m, 2).layers == c.StageLayers(m));
  CHECK(NanotronBalancedStageLayers(m, 2).layers == std::vector<int>{4, 3});
}

TEST_CASE("cost_model: stages nanotron leaves without a decoder layer get one, counted",
          "[cost_model][pp_split]") {
  // A head of 6.4 M against layers of 65,536: all four layers fit under the
  // first threshold, the head closes rank 0, ranks 1-3 get no layer.
  const NanotronStageSplit s = NanotronBalancedStageLayers(Small(4, 100000), 4);
  CHECK(s.layers == std::vector<int>{1, 1, 1, 1});
  CHECK(s.clamped_stages == 3);
  // nanotron's Llama 1B (16 layers, h 2048, f 8192, V 131,072: the head
  // weighs four layers). pp = 4: 6/5/5/0 + head; pp = 8: 3/3/2/3/2/3/0/0,
  // the head crossing two thresholds. An empty stage takes the last layer of
  // the nearest earlier stage with more than one: stage 0 keeps nanotron's.
  ModelSpec b1 = Small(16, 131072);
  b1.hidden_size = 2048;
  b1.num_attention_heads = b1.num_kv_heads = 32;
  b1.ffn_hidden_size = 8192;
  REQUIRE(NanotronLmHeadCost(b1) == 4 * NanotronDecoderLayerCost(b1));
  CHECK(NanotronBalancedStageLayers(b1, 4).layers == std::vector<int>{6, 5, 4, 1});
  CHECK(NanotronBalancedStageLayers(b1, 4).clamped_stages == 1);
  CHECK(NanotronBalancedStageLayers(b1, 8).layers == std::vector<int>{3, 3, 2, 3, 2, 1, 1, 1});
  CHECK(NanotronBalancedStageLayers(b1, 8).clamped_stages == 2);
}

TEST_CASE("cost_model: closing at the threshold moves only boundaries that fall exactly on it",
          "[cost_model][pp_split]") {
  // nanotron's Llama 1B: layer 2^26, head 2^28 (four layers), total 20
  // layers' cost. pp = 2: the threshold is 10 layers' cost; > gives rank 0
  // an eleventh layer, >= closes it at ten (the sweep's post-fix runs).
  ModelSpec b1 = Small(16, 131072);
  b1.hidden_size = 2048;
  b1.num_attention_heads = b1.num_kv_heads = 32;
  b1.ffn_hidden_size = 8192;
  CHECK(NanotronBalancedStageLayers(b1, 2, false).layers == std::vector<int>{11, 5});
  CHECK(NanotronBalancedStageLayers(b1, 2, true).layers == std::vector<int>{10, 6});
  // pp = 4: 5/5/5/1 + head, every stage with a layer (> leaves the last empty).
  const NanotronStageSplit ge4 = NanotronBalancedStageLayers(b1, 4, true);
  CHECK(ge4.layers == std::vector<int>{5, 5, 5, 1});
  CHECK(ge4.clamped_stages == 0);
  CHECK(NanotronBalancedStageLayers(b1, 4, false).nanotron_layers == std::vector<int>{6, 5, 5, 0});
  // pp = 8: thresholds at 2.5-layer steps: 3/2/3/2/3/2/1/0, the last stage
  // clamped from the nearest earlier stage with two.
  const NanotronStageSplit ge8 = NanotronBalancedStageLayers(b1, 8, true);
  CHECK(ge8.nanotron_layers == std::vector<int>{3, 2, 3, 2, 3, 2, 1, 0});
  CHECK(ge8.layers == std::vector<int>{3, 2, 3, 2, 3, 1, 1, 1});
  // No cumulative cost equals a threshold: the two tests agree.
  for (int64_t vocab : {1000, 3000, 7000}) {
    for (int pp : {2, 4, 8}) {
      const ModelSpec m = Small(16, vocab);
      INFO("vocab " << vocab << " pp " << pp);
      CHECK(NanotronBalancedStageLayers(m, pp, true).layers == NanotronBalancedStageLayers(m, pp, false).layers);
    }
  }
}

}  // namespace
}  // namespace parasim
