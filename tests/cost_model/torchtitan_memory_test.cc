// What the torchtitan stack keeps in memory as its sources say
// (docs/DECISIONS.md "torchtitan's Float8, long-context and 2D/3D/4D memory"):
// torch pipelining's interleaved warm-up and held outputs, fp32 gradients
// accumulated unsharded, float8 gathered weights, repeated K/V.
#include <string>

#include <catch2/catch.hpp>

#include "core/loaders.h"
#include "core/parallel_config.h"
#include "cost_model/evaluator.h"
#include "cost_model/memory.h"
#include "cost_model/software_stack.h"

using namespace parasim;
using Catch::Matchers::WithinRel;

namespace {

double Part(const Report& r, const std::string& name) {
  for (const auto& [n, bytes] : r.memory_breakdown_bytes)
    if (n == name) return bytes;
  FAIL("no memory part " << name);
  return 0;
}

}  // namespace

TEST_CASE("cost_model: torch's interleaved 1F1B keeps its warm-up count at m = p", "[cost_model][memory]") {
  // (v − 1)·p + 2·(p − 1 − r) chunk forwards, then one more; a chunk is 1/v stage.
  CHECK_THAT(InterleavedMicroBatchesInFlight(8, 8, 2, 7, false), WithinRel(9.0 / 2, 1e-12));
  CHECK_THAT(InterleavedMicroBatchesInFlight(8, 8, 2, 5, false), WithinRel(13.0 / 2, 1e-12));
  CHECK(InterleavedMicroBatchesInFlight(8, 8, 2, 0, false) == 8.0);   // capped at every chunk
  // Megatron runs every chunk forward first when m = p: all m on every rank.
  CHECK(InterleavedMicroBatchesInFlight(8, 8, 2, 7, true) == 8.0);
  // With m > p both count the same.
  CHECK(InterleavedMicroBatchesInFlight(8, 16, 2, 7, false) == InterleavedMicroBatchesInFlight(8, 16, 2, 7, true));
  CHECK_FALSE(LoadSoftwareStack("torchtitan").pp_interleaved_full_warmup);
  CHECK(LoadSoftwareStack("megatron-core").pp_interleaved_full_warmup);
}

TEST_CASE("cost_model: torchtitan holds every earlier micro-batch's logits on the last stage", "[cost_model][memory]") {
  const SoftwareStack s = LoadSoftwareStack("torchtitan");
  const double tokens = 32768, vocab = 128256;
  CHECK(HeldOutputBytes(s, tokens, vocab, 8, 1) == 0.0);
  CHECK_THAT(HeldOutputBytes(s, tokens, vocab, 8, 8), WithinRel(7 * tokens * vocab / 8 * 2, 1e-12));
}

TEST_CASE("cost_model: torchtitan repeats K/V before attention: a*d-wide K and V are saved", "[cost_model][memory]") {
  const ModelSpec m = LoadModel("llama3-8b");
  SoftwareStack s = LoadSoftwareStack("torchtitan");
  REQUIRE(s.repeats_kv_heads);
  const ActivationPerToken repeated = LayerActivationPerToken(m, s);
  s.repeats_kv_heads = false;
  const ActivationPerToken grouped = LayerActivationPerToken(m, s);
  const double ad = 32 * 128, gd = 8 * 128;
  CHECK_THAT(repeated.split - grouped.split, WithinRel(4.0 * (ad - gd), 1e-12));   // K and V, 2 B each
  CHECK(repeated.replicated == grouped.replicated);
  CHECK(repeated.sac_saved == grouped.sac_saved);   // SAC recomputes the repeat
}

TEST_CASE("cost_model: a pipelined torchtitan stage holds fp32 gradients and float8 layer weights",
          "[cost_model][memory]") {
  const ModelSpec model = LoadModel("llama3-8b");
  const SoftwareStack stack = LoadSoftwareStack("torchtitan");
  const ClusterSpec cluster = LoadCluster("dgx-h100", 4);
  JobSpec job;
  job.global_batch = 32;
  job.seq_len = 8192;
  job.stack = stack.name;
  const ParallelConfig c = ParseParallelConfig("dp=4,tp=1,pp=8,mbs=1,sharding=zero3,recompute=full,schedule=1f1b");
  const Report bf16 = AnalyticalEvaluator(model, cluster, job, stack).Evaluate(c);
  job.precision = Precision::kFp8;
  const Report fp8 = AnalyticalEvaluator(model, cluster, job, stack).Evaluate(c);
  REQUIRE(bf16.memory_peak_stage == fp8.memory_peak_stage);
  // The stage stays gathered (bf16: 2 B per parameter) and accumulates its
  // gradients unsharded in the fp32 reduce dtype: twice the gathered bytes.
  CHECK_THAT(Part(bf16, "grad_temporaries"), WithinRel(2.0 * Part(bf16, "gathered_weights"), 1e-9));
  CHECK_THAT(Part(fp8, "grad_temporaries"), WithinRel(Part(bf16, "grad_temporaries"), 1e-9));
  // Float8 all-gather: the layers' weights are 1 B unsharded; the embedding
  // or head a stage holds stays bf16, so between half and all of bf16's.
  CHECK(Part(fp8, "gathered_weights") < Part(bf16, "gathered_weights"));
  CHECK(Part(fp8, "gathered_weights") >= 0.5 * Part(bf16, "gathered_weights"));
}
