// cost_model: pipeline stages hold their own layer kinds (issue 15): which
// layer is dense or MoE, local or global; how many of each a stage holds;
// each kind's unit cost; stage sums that add up to the model and reduce to
// the single-kind model when every layer is alike.
#include <algorithm>
#include <numeric>
#include <string>
#include <thread>

#include <catch2/catch.hpp>

#include "core/loaders.h"
#include "core/parallel_config.h"
#include "cost_model/evaluator.h"
#include "cost_model/evaluator_context.h"
#include "cost_model/evaluator_stage_time.h"
#include "cost_model/layer_cost.h"
#include "test_specs.h"
#include "cost_model/software_stack.h"
#include "cost_model/workload.h"

using namespace parasim;
using Catch::Matchers::WithinRel;

namespace {

ModelSpec Hf(const std::string& dir) {
  return LoadModel(std::string(PARASIM_SOURCE_DIR) + "/tests/testdata/hf/" + dir);
}


int64_t Count(const ModelSpec& m, bool (ModelSpec::*is)(int64_t) const) {
  int64_t n = 0;
  for (int64_t i = 0; i < m.num_layers; ++i) n += (m.*is)(i) ? 1 : 0;
  return n;
}

// Per-layer forward and backward seconds and FLOPs of one stage of a workload.
struct StageSums {
  double fwd = 0, bwd = 0, flops = 0;
  int layers = 0;
};
StageSums LayerSums(const StageWork& sw) {
  StageSums s;
  for (const LayerWork& l : sw.layers) {
    if (l.layer_index < 0) continue;
    s.fwd += l.forward_time.si();
    s.bwd += l.backward_time.si();
    s.flops += l.forward_flops.si() + l.backward_flops.si();
    ++s.layers;
  }
  return s;
}

}  // namespace

TEST_CASE("model: layer kind queries count what the model's totals say", "[core][model][kinds]") {
  for (const char* name : {"qwen3-8b", "qwen3-30b-a3b", "gemma-2-9b", "gemma-3-1b", "gemma-3-27b", "deepseek-v2",
                           "deepseek-v3", "llama-4-scout", "llama-4-maverick", "gpt-oss-20b", "gpt-oss-120b",
                           "mixtral-8x7b"}) {
    INFO(name);
    const ModelSpec m = Hf(name);
    CHECK(Count(m, &ModelSpec::IsMoeLayer) == m.MoeLayerCount());
    const int64_t local = m.local_attention == LocalAttention::kNone ? 0 : m.local_attention_layers;
    CHECK(Count(m, &ModelSpec::IsLocalAttentionLayer) == local);
    const auto kinds = m.LayerKindCounts();
    CHECK(std::accumulate(kinds.begin(), kinds.end(), int64_t{0}) == m.num_layers);
  }
}

TEST_CASE("model: layer kinds follow each family's published pattern", "[core][model][kinds]") {
  // DeepSeek-V3: first_k_dense_replace = 3.
  const ModelSpec ds = Hf("deepseek-v3");
  CHECK(!ds.IsMoeLayer(0));
  CHECK(!ds.IsMoeLayer(2));
  CHECK(ds.IsMoeLayer(3));
  CHECK(ds.IsMoeLayer(ds.num_layers - 1));
  CHECK(ds.HasSeveralLayerKinds());
  // Gemma 3: sliding unless (i + 1) % 6 == 0.
  const ModelSpec g3 = Hf("gemma-3-27b");
  for (int64_t i = 0; i < 12; ++i) CHECK(g3.IsLocalAttentionLayer(i) == ((i + 1) % 6 != 0));
  // Gemma 2: layer 0 slides, layer 1 is global.
  const ModelSpec g2 = Hf("gemma-2-9b");
  CHECK(g2.IsLocalAttentionLayer(0));
  CHECK(!g2.IsLocalAttentionLayer(1));
  // Llama 4 Maverick: MoE every second layer (interleave_moe_layer_step 2), NoPE global every fourth.
  const ModelSpec mav = Hf("llama-4-maverick");
  CHECK(!mav.IsMoeLayer(0));
  CHECK(mav.IsMoeLayer(1));
  CHECK(mav.IsLocalAttentionLayer(2));
  CHECK(!mav.IsLocalAttentionLayer(3));
  CHECK(mav.LayerKindOf(3) == kLayerKindMoe);
  CHECK(mav.LayerKindOf(0) == kLayerKindLocal);
  // One kind only: no split.
  CHECK(!Hf("qwen3-30b-a3b").HasSeveralLayerKinds());
  CHECK(!Hf("qwen3-8b").HasSeveralLayerKinds());
}

TEST_CASE("model: local layers whose count fits no period spread evenly, exactly as many", "[core][model][kinds]") {
  ModelSpec m = Hf("gemma-3-27b");
  for (int64_t local : {1, 7, 33, 51, 60, 61, 62}) {
    INFO(local);
    m.local_attention_layers = local;
    CHECK(Count(m, &ModelSpec::IsLocalAttentionLayer) == local);
  }
}

TEST_CASE("cost_model: stage kind counts: contiguous stages and interleaved chunks", "[cost_model][kinds]") {
  const ModelSpec ds = Hf("deepseek-v3");   // 61 layers, 3 dense first
  const ParallelConfig c8 = ParseParallelConfig("dp=1,pp=8");
  const std::vector<int> split = c8.StageLayers(ds);
  const std::vector<StageKinds> kinds = CountStageKinds(ds, split, 1);
  REQUIRE(kinds.size() == 8);
  for (int s = 0; s < 8; ++s) CHECK(std::accumulate(kinds[s].begin(), kinds[s].end(), 0) == split[s]);
  CHECK(kinds[0][0] == 3);                       // the dense layers on the first stage
  CHECK(kinds[0][kLayerKindMoe] == split[0] - 3);
  for (int s = 1; s < 8; ++s) CHECK(kinds[s][0] == 0);
  // Maverick, pp=4 vpp=2: chunks of 6 layers, chunk j on stage j mod 4; every
  // chunk starts at a multiple of 6: layers 0..5 hold 3 dense-local, 2 MoE-local, 1 MoE-global.
  const ModelSpec mav = Hf("llama-4-maverick");
  const std::vector<StageKinds> v = CountStageKinds(mav, std::vector<int>(4, 12), 2);
  for (int s = 0; s < 4; ++s) {
    INFO(s);
    CHECK(std::accumulate(v[s].begin(), v[s].end(), 0) == 12);
    CHECK(v[s][kLayerKindLocal] == 6);   // dense layers are all local (even index)
  }
  // The MoE global layers (i ≡ 3 mod 4) per stage: chunks 0 and 4 (layers
  // 0-5, 24-29) hold 3 and 27; chunks 1 and 5 (6-11, 30-35) hold 7, 11, 31, 35.
  CHECK(v[0][kLayerKindMoe] == 2);
  CHECK(v[1][kLayerKindMoe] == 4);
  CHECK(v[2][kLayerKindMoe] == 2);
  CHECK(v[3][kLayerKindMoe] == 4);
}

TEST_CASE("cost_model: the kinds' unit costs sum to the model's mean layer (pp=1 = the sum)", "[cost_model][kinds]") {
  const SoftwareStack stack = LoadSoftwareStack("megatron-core");
  for (const char* spec : {"dp=1", "dp=1,tp=4,sp=on,recompute=selective", "dp=1,tp=2,ep=8,recompute=full"}) {
    const ParallelConfig c = ParseParallelConfig(spec);
    for (const char* name : {"deepseek-v3", "llama-4-maverick", "gemma-3-27b", "gemma-2-9b", "gpt-oss-120b"}) {
      INFO(name << " " << spec);
      const ModelSpec m = Hf(name);
      const LayerCostModel lcm = MakeLayerCostModel(m, testing::NominalH100Rates(), stack, 8192);
      REQUIRE(lcm.several_kinds);
      const UnitCost mean = TransformerLayerCost(lcm, c, 8192);
      const auto counts = m.LayerKindCounts();
      Units u;
      u.layer = mean;
      u.several_kinds = true;
      StageKinds all{};
      double fwd = 0, bwd = 0, flops = 0, params = 0;
      for (int k = 0; k < kNumLayerKinds; ++k) {
        all[k] = static_cast<int>(counts[k]);
        if (counts[k] == 0) continue;
        u.kinds[k] = TransformerLayerKindCost(lcm, c, 8192, k);
        const double n = static_cast<double>(counts[k]);
        fwd += n * u.kinds[k].fwd.Total();
        bwd += n * u.kinds[k].bwd.Total();
        flops += n * (u.kinds[k].fwd_flops + u.kinds[k].bwd_flops);
        params += n * u.kinds[k].params;
      }
      const double L = static_cast<double>(m.num_layers);
      CHECK_THAT(L * mean.fwd.Total(), WithinRel(fwd, 1e-12));
      CHECK_THAT(L * mean.bwd.Total(), WithinRel(bwd, 1e-12));
      CHECK_THAT(L * (mean.fwd_flops + mean.bwd_flops), WithinRel(flops, 1e-12));
      CHECK_THAT(L * mean.params, WithinRel(params, 1e-12));
      // One stage holding the whole model: its mean layer is the model's.
      const UnitCost stage = u.StageLayer(all, static_cast<int>(m.num_layers));
      CHECK_THAT(stage.fwd.Total(), WithinRel(mean.fwd.Total(), 1e-12));
      CHECK_THAT(stage.bwd.Total(), WithinRel(mean.bwd.Total(), 1e-12));
      CHECK_THAT(stage.dense_params, WithinRel(mean.dense_params, 1e-12));
    }
  }
}

TEST_CASE("cost_model: kinds differ where the physics says: MoE layers heavier, local attention cheaper",
          "[cost_model][kinds]") {
  const SoftwareStack stack = LoadSoftwareStack("megatron-core");
  const ParallelConfig c = ParseParallelConfig("dp=1,ep=1");
  const ModelSpec ds = Hf("deepseek-v3");
  const LayerCostModel lds = MakeLayerCostModel(ds, testing::NominalH100Rates(), stack, 4096);
  const UnitCost dense = TransformerLayerKindCost(lds, c, 4096, 0);
  const UnitCost moe = TransformerLayerKindCost(lds, c, 4096, kLayerKindMoe);
  CHECK(dense.params == dense.dense_params);   // no experts on a dense layer
  CHECK(moe.params > 10.0 * dense.params);     // 256 experts
  CHECK(moe.fwd.attention == dense.fwd.attention);   // same attention
  // Gemma 3 at 32k: a local (1k window) layer computes far fewer scores than a global one.
  const ModelSpec g3 = Hf("gemma-3-27b");
  const LayerCostModel lg = MakeLayerCostModel(g3, testing::NominalH100Rates(), stack, 32768);
  const UnitCost local = TransformerLayerKindCost(lg, c, 32768, kLayerKindLocal);
  const UnitCost global = TransformerLayerKindCost(lg, c, 32768, 0);
  CHECK(local.fwd.attention < 0.2 * global.fwd.attention);
  CHECK(local.fwd.gemm == global.fwd.gemm);
  CHECK(local.params == global.params);
}

TEST_CASE("cost_model: a model of one kind: every kind query is its layer, bit for bit", "[cost_model][kinds]") {
  const SoftwareStack stack = LoadSoftwareStack("megatron-core");
  const ParallelConfig c = ParseParallelConfig("dp=1,tp=2,sp=on");
  for (const char* name : {"qwen3-8b", "qwen3-30b-a3b", "mixtral-8x7b"}) {
    INFO(name);
    const LayerCostModel lcm = MakeLayerCostModel(Hf(name), testing::NominalH100Rates(), stack, 4096);
    CHECK(!lcm.several_kinds);
    const UnitCost u = TransformerLayerCost(lcm, c, 4096);
    for (int k = 0; k < kNumLayerKinds; ++k) {
      const UnitCost v = TransformerLayerKindCost(lcm, c, 4096, k);
      CHECK(v.fwd.Total() == u.fwd.Total());
      CHECK(v.bwd.Total() == u.bwd.Total());
      CHECK(v.params == u.params);
    }
  }
}

TEST_CASE("cost_model: stages sum their own kinds; the layers' total does not depend on pp",
          "[cost_model][kinds][evaluator]") {
  const ModelSpec ds = Hf("deepseek-v3");
  JobSpec job;
  job.global_batch = 1024;
  job.seq_len = 4096;
  job.stack = "megatron-core";
  const AnalyticalEvaluator ev(ds, LoadCluster("dgx-h100", 64), job);
  const StepWorkload w4 = ev.BuildWorkload(ParseParallelConfig("dp=4,tp=8,pp=16,ep=4,mbs=1,sharding=zero1,sp=on"));
  const StepWorkload w1 = ev.BuildWorkload(ParseParallelConfig("dp=64,tp=8,pp=1,ep=4,mbs=1,sharding=zero1,sp=on"));
  REQUIRE(w4.stages.size() == 16);
  // Stage 0 holds the 3 dense layers only (61 = 16·3 + 13: middle stages take the 13 extra).
  const StageSums first = LayerSums(w4.stages[0]);
  const StageSums second = LayerSums(w4.stages[1]);
  REQUIRE(first.layers == 3);
  REQUIRE(second.layers == 4);
  const double dense_layer = first.fwd / 3.0, moe_layer = second.fwd / 4.0;
  CHECK(dense_layer != moe_layer);
  // Every middle stage of 4 MoE layers costs the same; stage 0's 3 dense layers their own.
  for (int s = 1; s < 14; ++s) CHECK_THAT(LayerSums(w4.stages[s]).fwd, WithinRel(second.fwd, 1e-12));
  // The layers' total over the stages is the model's, whatever the split.
  const StageSums all = LayerSums(w1.stages[0]);
  double fwd = 0;
  for (const StageWork& sw : w4.stages) fwd += LayerSums(sw).fwd;
  CHECK(all.layers == 61);
  CHECK_THAT(fwd, WithinRel(all.fwd, 1e-12));
  CHECK_THAT(3.0 * dense_layer + 58.0 * moe_layer, WithinRel(all.fwd, 1e-12));
  // The stage's memory follows its layers: expert weights are what a dense stage lacks.
  CHECK(w4.stages[0].memory_peak.si() != w4.stages[1].memory_peak.si());
}

// Explicit splits (pp_layers, as the planner's ends-lighter candidates) keep
// their kind counts in a per-thread memo keyed by the split: evaluated one
// after another on one thread, each config reports what it reports on a
// fresh thread (empty memos), and a split longer than the key (pp > 16) too.
TEST_CASE("cost_model: explicit stage splits' kind counts: memoized per split, exactly", "[cost_model][kinds][evaluator]") {
  const ModelSpec ds = Hf("deepseek-v3");   // 61 layers, 3 dense first
  JobSpec job;
  job.global_batch = 1024;
  job.seq_len = 4096;
  job.stack = "megatron-core";
  const AnalyticalEvaluator ev(ds, LoadCluster("dgx-h100", 64), job);
  std::vector<ParallelConfig> configs;
  for (const char* layers : {"2:4:4:4:4:4:4:4:4:4:4:4:4:4:4:3", "4:4:4:4:4:4:4:4:4:4:4:4:4:4:4:1",
                             "3:4:4:4:4:4:4:4:4:4:4:4:4:4:4:2"}) {
    configs.push_back(ParseParallelConfig(
        std::string("dp=4,tp=8,pp=16,ep=4,mbs=1,sharding=zero1,sp=on,pp_layers=") + layers));
  }
  // pp = 32 (past the key's 16 stages): counted on every call.
  configs.push_back(ParseParallelConfig(
      "dp=2,tp=8,pp=32,ep=2,mbs=1,sharding=zero1,sp=on,"
      "pp_layers=1:2:2:2:2:2:2:2:2:2:2:2:2:2:2:2:2:2:2:2:2:2:2:2:2:2:2:2:2:2:1:1"));
  std::vector<double> fresh(configs.size()), fresh_mem(configs.size());
  for (size_t i = 0; i < configs.size(); ++i) {
    std::thread([&] {
      const Report r = ev.Evaluate(configs[i]);
      fresh[i] = r.step_time.si();
      fresh_mem[i] = r.memory_per_gpu.si();
    }).join();
  }
  for (double t : fresh) REQUIRE(t > 0);
  CHECK(fresh[0] != fresh[1]);   // the dense layers' stage differs: the splits price differently
  for (int round = 0; round < 2; ++round) {
    for (size_t i = 0; i < configs.size(); ++i) {
      INFO(round << " " << i);
      const Report r = ev.Evaluate(configs[i]);
      CHECK(r.step_time.si() == fresh[i]);
      CHECK(r.memory_per_gpu.si() == fresh_mem[i]);
    }
  }
}

TEST_CASE("cost_model: Llama 4's global (NoPE) layers move no rotary-embedding bytes", "[cost_model][kinds]") {
  const SoftwareStack stack = LoadSoftwareStack("megatron-core");
  REQUIRE(stack.rope_bytes_per_element > 0);
  const ParallelConfig c = ParseParallelConfig("dp=1");
  const ModelSpec mav = Hf("llama-4-maverick");
  const LayerCostModel lcm = MakeLayerCostModel(mav, testing::NominalH100Rates(), stack, 4096);   // 4k < the 8k chunk
  const UnitCost chunked = TransformerLayerKindCost(lcm, c, 4096, kLayerKindMoe | kLayerKindLocal);
  const UnitCost nope = TransformerLayerKindCost(lcm, c, 4096, kLayerKindMoe);
  // At 4k the chunk holds the whole sequence: the two differ only by the rotary traffic on Q and K.
  const double T = 4096, rope = T * (lcm.ad + lcm.gd) * stack.rope_bytes_per_element;
  CHECK_THAT(chunked.fwd_bytes - nope.fwd_bytes, WithinRel(rope, 1e-9));
  CHECK(chunked.fwd.gemm == nope.fwd.gemm);
  CHECK(chunked.fwd.attention == nope.fwd.attention);
  // Gemma's global layers keep their rotary embeddings.
  const LayerCostModel g = MakeLayerCostModel(Hf("gemma-3-27b"), testing::NominalH100Rates(), stack, 512);   // 512 < window
  CHECK(TransformerLayerKindCost(g, c, 512, 0).fwd_bytes == TransformerLayerKindCost(g, c, 512, kLayerKindLocal).fwd_bytes);
}
