// What the torchtitan stack keeps in memory as its sources say
// (docs/DECISIONS.md "torchtitan's Float8, long-context and 2D/3D/4D memory"):
// torch pipelining's interleaved warm-up and held outputs, fp32 gradients
// accumulated unsharded, float8 gathered weights, repeated K/V.
#include <string>

#include <catch2/catch.hpp>

#include <utility>

#include "core/loaders.h"
#include "core/parallel_config.h"
#include "cost_model/evaluator.h"
#include "cost_model/memory.h"
#include "cost_model/software_stack.h"
#include "test_specs.h"

using namespace parasim;
using Catch::Matchers::WithinRel;

namespace {

// A torchtitan job: `global_batch` sequences of 8192 tokens.
JobSpec TitanJob(int64_t global_batch, Precision precision = Precision::kBf16) {
  JobSpec job = testing::Job(global_batch, 8192);
  job.stack = "torchtitan";
  job.precision = precision;
  return job;
}

double Part(const Report& r, const std::string& name) {
  for (const auto& [n, bytes] : r.memory_breakdown_bytes)
    if (n == name) return bytes;
  FAIL("no memory part " << name);
  return 0;
}

// Table 5's shape on a smaller model (Llama 3 8B, tp 8 with SP, pp 8,
// m = 8 of micro-batch 4, full AC, FP8): the torchtitan stack with and
// without one of its flags.
std::pair<Report, Report> Table5ShapeWithAndWithout(bool SoftwareStack::*flag) {
  const ModelSpec model = LoadModel("llama3-8b");
  const ClusterSpec cluster = LoadCluster("dgx-h100", 8);
  const SoftwareStack s = LoadSoftwareStack("torchtitan");
  SoftwareStack without = s;
  without.*flag = false;
  const JobSpec job = TitanJob(8 * 4, Precision::kFp8);
  const ParallelConfig c =
      ParseParallelConfig("dp=1,tp=8,pp=8,mbs=4,sharding=zero3,recompute=full,sp=on,schedule=1f1b");
  return {AnalyticalEvaluator(model, cluster, job, s).Evaluate(c),
          AnalyticalEvaluator(model, cluster, job, without).Evaluate(c)};
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
  CHECK_FALSE(LoadSoftwareStack("megatron-core").pp_interleaved_full_warmup);   // Megatron-LM 4295be1a on
  CHECK(LoadSoftwareStack("megatron-lm-2021").pp_interleaved_full_warmup);
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

TEST_CASE("cost_model: op-level SAC saves every second matmul; eager also keeps the unread ones",
          "[cost_model][memory]") {
  // torchtitan's policy recomputes mm 2, 4, 6 of a layer's 7 (wq wk wv wo w1 w3 w2).
  for (int p = 1; p <= 7; ++p) CHECK(SacSavesMatmul(p, 0.5) == (p % 2 == 1));
  // Every third with f = 1/3; none and all at the limits.
  CHECK_FALSE(SacSavesMatmul(3, 1.0 / 3));
  CHECK(SacSavesMatmul(4, 1.0 / 3));
  CHECK(SacSavesMatmul(7, 0.0));
  CHECK_FALSE(SacSavesMatmul(1, 1.0));
  const ModelSpec m = LoadModel("llama3-8b");
  const double h = static_cast<double>(m.hidden_size);
  // SwiGLU: w2 is the 7th (saved, unread), wo the 4th (recomputed): h.
  CHECK(SacSavedUnreadOutputWidth(m, 0.5) == h);
  // GELU: the down projection is the 6th, recomputed: nothing unread saved.
  ModelSpec gelu = m;
  gelu.mlp = MlpKind::kGelu;
  CHECK(SacSavedUnreadOutputWidth(gelu, 0.5) == 0.0);
  // No recompute: both residual projections' outputs would be saved.
  CHECK(SacSavedUnreadOutputWidth(m, 0.0) == 2 * h);

  const std::string root = PARASIM_SOURCE_DIR;
  const SoftwareStack compiled = LoadSoftwareStack("torchtitan");
  const SoftwareStack eager = LoadSoftwareStack(root + "/tests/data/stacks/torchtitan-eager.yaml");
  REQUIRE_FALSE(compiled.sac_keeps_unread_outputs);
  REQUIRE(eager.sac_keeps_unread_outputs);
  const ActivationPerToken c = LayerActivationPerToken(m, compiled), e = LayerActivationPerToken(m, eager);
  CHECK(e.sac_saved == c.sac_saved);
  CHECK(e.sac_saved_unsplit == 2 * h);   // w2's bf16 output per token
  CHECK(c.sac_saved_unsplit == 0.0);
  // w2 is row-parallel: each TP rank keeps its whole h-wide partial output.
  const double tokens = 16384;
  for (const int tp : {1, 8})
    for (const bool sp : {false, true})
      CHECK_THAT(LayerActivationBytes(e, tokens, tp, sp, RecomputeMode::kSelective) -
                     LayerActivationBytes(c, tokens, tp, sp, RecomputeMode::kSelective),
                 WithinRel(tokens * 2 * h, 1e-12));
  CHECK(e.split == c.split);                   // without SAC nothing differs
  CHECK(e.replicated == c.replicated);
  // The eager stack's kernel fields are pytorch-fsdp2-eager's, bit for bit.
  const SoftwareStack fsdp2_eager = LoadSoftwareStack("pytorch-fsdp2-eager");
  CHECK(eager.norm_bytes_per_element == fsdp2_eager.norm_bytes_per_element);
  CHECK(eager.rope_bytes_per_element == fsdp2_eager.rope_bytes_per_element);
  CHECK(eager.act_bytes_per_element == fsdp2_eager.act_bytes_per_element);
  CHECK(eager.kernels_per_layer_forward == fsdp2_eager.kernels_per_layer_forward);
  CHECK(eager.host_per_tp_linear_s == fsdp2_eager.host_per_tp_linear_s);
  // Everything else is torchtitan's.
  SoftwareStack rest = eager;
  rest.name = compiled.name;
  rest.description = compiled.description;
  rest.sac_keeps_unread_outputs = false;
  rest.norm_bytes_per_element = compiled.norm_bytes_per_element;
  rest.rope_bytes_per_element = compiled.rope_bytes_per_element;
  rest.act_bytes_per_element = compiled.act_bytes_per_element;
  rest.kernels_per_layer_forward = compiled.kernels_per_layer_forward;
  rest.host_per_tp_linear_s = compiled.host_per_tp_linear_s;
  CHECK(rest == compiled);
}

TEST_CASE("cost_model: a pipelined torchtitan stage holds fp32 gradients and float8 layer weights",
          "[cost_model][memory]") {
  const ModelSpec model = LoadModel("llama3-8b");
  const SoftwareStack stack = LoadSoftwareStack("torchtitan");
  const ClusterSpec cluster = LoadCluster("dgx-h100", 4);
  JobSpec job = TitanJob(32);
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

TEST_CASE("cost_model: torchtitan's loss parallel peaks at 16 B per local logit element, only with tp",
          "[cost_model][memory]") {
  SoftwareStack s = LoadSoftwareStack("torchtitan");
  const double tokens = 131072, vocab = 128256;
  // tp = 1: the plain cross-entropy's 14 B (the bf16 logits included).
  CHECK_THAT(LossBytes(s, tokens, vocab, 1), WithinRel(tokens * vocab * 14, 1e-12));
  // tp = 8: log-probs, zeros, exp and their sum (4 × 4 B) over the vocab shard.
  CHECK_THAT(LossBytes(s, tokens, vocab, 8), WithinRel(tokens * vocab / 8 * 16, 1e-12));
  // A stack without its own vocab-parallel figure keeps logits_bytes_per_element.
  CHECK(LoadSoftwareStack("megatron-core").vocab_parallel_logits_bytes_per_element == 0);
  s.vocab_parallel_logits_bytes_per_element = 0;
  CHECK_THAT(LossBytes(s, tokens, vocab, 8), WithinRel(tokens * vocab / 8 * 14, 1e-12));
}

TEST_CASE("cost_model: torchtitan's pipelined last stage still holds the current micro-batch's logits",
          "[cost_model][memory]") {
  const SoftwareStack s = LoadSoftwareStack("torchtitan");
  const double tokens = 32768, vocab = 128256, one = tokens * vocab / 8 * 2;
  // The vocab-parallel loss leaves the logits out; torch pipelining's output_chunks keep them.
  CHECK_THAT(HeldOutputBytes(s, tokens, vocab, 8, 8, true), WithinRel(8 * one, 1e-12));
  CHECK_THAT(HeldOutputBytes(s, tokens, vocab, 8, 8, false), WithinRel(7 * one, 1e-12));
  // tp = 1: the 14 B loss already counts the current logits.
  CHECK_THAT(HeldOutputBytes(s, tokens, vocab, 1, 8, true), WithinRel(7 * one * 8, 1e-12));
  // A stack whose engine holds no outputs holds none.
  CHECK(HeldOutputBytes(LoadSoftwareStack("megatron-core"), tokens, vocab, 8, 8, true) == 0.0);
}

TEST_CASE("cost_model: a vocab-parallel peak that includes the logits adds no held micro-batch",
          "[cost_model][memory]") {
  const SoftwareStack s = LoadSoftwareStack("torchtitan");
  REQUIRE(s.vocab_parallel_peak_excludes_logits);
  SoftwareStack includes = s;
  includes.vocab_parallel_peak_excludes_logits = false;
  const double tokens = 32768, vocab = 128256, one = tokens * vocab / 8 * 2;
  // Only the earlier micro-batches are held on top of the loss.
  CHECK_THAT(HeldOutputBytes(includes, tokens, vocab, 8, 8, true), WithinRel(7 * one, 1e-12));
  // The flag reads only where the vocab-parallel figure is in use (tp > 1).
  CHECK(HeldOutputBytes(includes, tokens, vocab, 1, 8, true) == HeldOutputBytes(s, tokens, vocab, 1, 8, true));

  // Through the evaluator: the last stage of a pipelined tp = 8 run holds one
  // micro-batch's bf16 logits shard more (× fragmentation), the other stage none.
  const ModelSpec model = LoadModel("llama3-8b");
  const ClusterSpec cluster = LoadCluster("dgx-h100", 2);
  const JobSpec job = TitanJob(8);
  const ParallelConfig c = ParseParallelConfig("dp=1,tp=8,pp=2,mbs=1,sharding=zero3,recompute=full,sp=on");
  const Report excl = AnalyticalEvaluator(model, cluster, job, s).Evaluate(c);
  const Report incl = AnalyticalEvaluator(model, cluster, job, includes).Evaluate(c);
  REQUIRE(excl.memory_bytes_per_stage.size() == 2);
  REQUIRE(incl.memory_bytes_per_stage.size() == 2);
  const double logits_shard = 8192.0 * static_cast<double>(model.vocab_size) / 8 * 2;
  CHECK_THAT(excl.memory_bytes_per_stage[1] - incl.memory_bytes_per_stage[1],
             WithinRel(s.fragmentation * logits_shard, 1e-9));
  CHECK(excl.memory_bytes_per_stage[0] == incl.memory_bytes_per_stage[0]);
}

TEST_CASE("cost_model: torchtitan's TP head saves its all-gathered input on the last stage", "[cost_model][memory]") {
  const SoftwareStack s = LoadSoftwareStack("torchtitan");
  const double tokens = 131072, h = 8192;
  CHECK_THAT(GatheredHeadInputBytes(s, tokens, h, 8, true), WithinRel(tokens * h * 2, 1e-12));   // not ÷ tp
  CHECK(GatheredHeadInputBytes(s, tokens, h, 8, false) == 0.0);   // no gather without SP
  CHECK(GatheredHeadInputBytes(s, tokens, h, 1, true) == 0.0);
  CHECK(GatheredHeadInputBytes(LoadSoftwareStack("megatron-core"), tokens, h, 8, true) == 0.0);   // keeps the shard

  // The 70B 2D run (Table 4): the loss part grows by both terms, × fragmentation.
  const ModelSpec model = LoadModel("llama3-70b");
  const ClusterSpec cluster = LoadCluster("dgx-h100", 32);
  const JobSpec job = TitanJob(32 * 16, Precision::kFp8);
  const ParallelConfig c = ParseParallelConfig("dp=32,tp=8,mbs=16,sharding=zero3,recompute=full,sp=on");
  SoftwareStack before = s;
  before.vocab_parallel_logits_bytes_per_element = 0;
  before.tp_saves_gathered_head_input = false;
  const Report with = AnalyticalEvaluator(model, cluster, job, s).Evaluate(c);
  const Report without = AnalyticalEvaluator(model, cluster, job, before).Evaluate(c);
  const double T = 16.0 * 8192, vocab_shard = static_cast<double>(model.vocab_size) / 8;
  CHECK_THAT(Part(with, "logits") - Part(without, "logits"),
             WithinRel(s.fragmentation * (T * vocab_shard * 2 + T * model.hidden_size * 2), 1e-9));
}

TEST_CASE("cost_model: torch pipelining's kept boundary tensors per rank, closed forms", "[cost_model][memory]") {
  // 1F1B, p = m = 8: stage s runs w = min(m, p − s) forwards first.
  // Stage 0 (first): m gradient buffers + m outputs.
  CHECK(PipelineBoundaryTensors(8, 8, 1, 8, 0) == 16.0);
  // A middle stage: + m input buffers, w of them the saved first-layer
  // inputs, and the m − w input gradients of the backwards done: 4m − 2w.
  CHECK(PipelineBoundaryTensors(8, 8, 1, 7, 1) == 4 * 8 - 2 * 7);
  CHECK(PipelineBoundaryTensors(8, 8, 1, 2, 6) == 4 * 8 - 2 * 2);
  // The last stage (its outputs are the logits, HeldOutputBytes): the input
  // buffers and gradients of the m − 1 earlier micro-batches.
  CHECK(PipelineBoundaryTensors(8, 8, 1, 1, 7) == 2 * 7);
  // m > p: stage 0 still keeps every output and gradient buffer.
  CHECK(PipelineBoundaryTensors(4, 16, 1, 4, 0) == 32.0);
  // Nothing without pipelining.
  CHECK(PipelineBoundaryTensors(1, 8, 1, 1, 0) == 0.0);
  // Interleaved, v = 2, p = m = 8 (torch's warm-up (v − 1)·p + 2·(p − 1 − r), then one more):
  // rank 0 runs all 16 chunk forwards first: chunk 0 (first) 2m, chunk 1 (middle) 2m.
  CHECK(PipelineBoundaryTensors(8, 8, 2, 16, 0) == 32.0);
  // The last rank holds 9 chunks: chunk 0 (middle) 2m, and 2 per backward done, 16 − 9.
  CHECK(PipelineBoundaryTensors(8, 8, 2, 9, 7) == 2 * 8 + 2 * 7);
  // Rank 0 with backwards done: chunk 1 (a middle stage) runs its m first, and
  // chunk 0's (the first stage: no receive buffers) count nothing.
  CHECK(PipelineBoundaryTensors(4, 4, 2, 6, 0) == 2 * 4 * 2 + 2 * 2);
  CHECK(PipelineBoundaryTensors(4, 4, 2, 2, 0) == 2 * 4 * 2 + 2 * 4);
}

TEST_CASE("cost_model: a rank with more chunks keeps more boundary tensors, and more micro-batches keep more",
          "[cost_model][memory]") {
  // Same rank, same micro-batches: interleaving (two stages per rank) holds at
  // least what 1F1B's one stage holds, on every rank (the code's per-stage buffers).
  for (int r = 0; r < 8; ++r) {
    const double w1 = MicroBatchesInFlight(PipelineSchedule::k1F1B, 8, 8, 1, r, false);
    const double w2 = InterleavedMicroBatchesInFlight(8, 8, 2, r, false) * 2;
    INFO("rank " << r);
    CHECK(PipelineBoundaryTensors(8, 8, 2, w2, r) >= PipelineBoundaryTensors(8, 8, 1, w1, r));
  }
  // Monotone in m at a fixed warm-up (m ≥ p).
  for (int m = 8; m < 32; ++m)
    CHECK(PipelineBoundaryTensors(8, m + 1, 1, 5, 3) > PipelineBoundaryTensors(8, m, 1, 5, 3));
  // One tensor: tokens · h in the activation dtype, ÷ tp only under SP.
  const SoftwareStack s = LoadSoftwareStack("torchtitan");
  CHECK(s.pp_keeps_boundary_tensors);
  CHECK_FALSE(LoadSoftwareStack("megatron-core").pp_keeps_boundary_tensors);
  CHECK_THAT(PipelineBoundaryTensorBytes(s, 32768, 16384, 8, true), WithinRel(32768.0 * 16384 * 2 / 8, 1e-12));
  CHECK_THAT(PipelineBoundaryTensorBytes(s, 32768, 16384, 8, false), WithinRel(32768.0 * 16384 * 2, 1e-12));
}

TEST_CASE("cost_model: torchtitan's 405B 1F1B stages carry the kept boundary tensors, x fragmentation",
          "[cost_model][memory]") {
  const ModelSpec model = LoadModel("llama3-8b");
  const ClusterSpec cluster = LoadCluster("dgx-h100", 8);
  const SoftwareStack s = LoadSoftwareStack("torchtitan");
  const auto [with, base] = Table5ShapeWithAndWithout(&SoftwareStack::pp_keeps_boundary_tensors);
  REQUIRE(with.memory_bytes_per_stage.size() == 8);
  const double one = 4.0 * 8192 * model.hidden_size * 2 / 8;
  const double counts[8] = {16, 18, 20, 22, 24, 26, 28, 14};
  for (int st = 0; st < 8; ++st) {
    INFO("stage " << st);
    CHECK_THAT(with.memory_bytes_per_stage[st] - base.memory_bytes_per_stage[st],
               WithinRel(s.fragmentation * counts[st] * one, 1e-9));
  }
  // pp = 1 keeps none.
  SoftwareStack without = s;
  without.pp_keeps_boundary_tensors = false;
  const ParallelConfig flat = ParseParallelConfig("dp=8,tp=8,mbs=4,sharding=zero3,recompute=full,sp=on");
  const JobSpec flat_job = TitanJob(32, Precision::kFp8);
  CHECK(AnalyticalEvaluator(model, cluster, flat_job, s).Evaluate(flat).memory_per_gpu.si() ==
        AnalyticalEvaluator(model, cluster, flat_job, without).Evaluate(flat).memory_per_gpu.si());
}

TEST_CASE("cost_model: torch pipelining's merged last-stage outputs add a reserved segment when no cached block holds them",
          "[cost_model][memory]") {
  const SoftwareStack s = LoadSoftwareStack("torchtitan");
  REQUIRE(s.pp_merges_last_stage_outputs);
  CHECK_FALSE(LoadSoftwareStack("megatron-core").pp_merges_last_stage_outputs);
  MemoryInputs in;
  in.sharding = ShardingMode::kZero3;
  in.shard_group = 8;
  in.pipelined = true;
  in.params.dense = 1e9;
  in.params.largest_layer = 1e8;
  in.params.layers = 8;
  in.logits_bytes = 14.0 * 1e9;   // one micro-batch's loss: the largest cached block is its fp32 logits, 4e9 B
  const MemoryEstimate base = EstimateMemory(s, in);
  in.merged_output_bytes = 8 * 2e9;   // 8 micro-batches' bf16 logits: larger, a new segment
  const MemoryEstimate merged = EstimateMemory(s, in);
  CHECK_THAT(merged.total - base.total, WithinRel(16e9, 1e-12));
  CHECK(merged.merged_outputs == 16e9);
  CHECK(merged.Allocated() - base.Allocated() == merged.total - base.total);
  in.merged_output_bytes = 2e9;   // one micro-batch's: a cached block holds it
  CHECK(EstimateMemory(s, in).total == base.total);

  // Through the evaluator (tp 8 with SP, pp 8, m 8): only the last stage
  // grows, by m micro-batches' bf16 logits ÷ tp, with no fragmentation.
  const ModelSpec model = LoadModel("llama3-8b");
  const auto [with, base_rep] = Table5ShapeWithAndWithout(&SoftwareStack::pp_merges_last_stage_outputs);
  const double logits = 8 * 4.0 * 8192 * static_cast<double>(model.vocab_size) / 8 * 2;
  CHECK_THAT(with.memory_bytes_per_stage[7] - base_rep.memory_bytes_per_stage[7], WithinRel(logits, 1e-9));
  for (int st = 0; st < 7; ++st) CHECK(with.memory_bytes_per_stage[st] == base_rep.memory_bytes_per_stage[st]);
}
