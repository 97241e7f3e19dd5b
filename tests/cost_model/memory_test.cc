#include <string>

#include <catch2/catch.hpp>

#include "core/loaders.h"
#include "core/parallel_config.h"
#include "cost_model/evaluator.h"
#include "cost_model/memory.h"
#include "test_specs.h"

using namespace parasim;
using Catch::Matchers::WithinRel;

TEST_CASE("cost_model: GPT layer activations match Korthikanti et al. 2022", "[cost_model]") {
  const ModelSpec m = testing::Gpt(12288, 96, 96, 51200);
  const ActivationPerToken a = LayerActivationPerToken(m, /*dropout=*/true);
  const double h = 12288, tokens = 2048.0 * 1;
  // Flash attention removes the 5as/h term: 34·s·b·h without TP.
  CHECK_THAT(LayerActivationBytes(a, tokens, 1, false, RecomputeMode::kNone), WithinRel(34.0 * tokens * h, 1e-12));
  // TP without SP: sbh·(10 + 24/t); with SP: 34·sbh/t (their eq. 2 and 4, s² terms dropped).
  CHECK_THAT(LayerActivationBytes(a, tokens, 8, false, RecomputeMode::kNone),
             WithinRel(tokens * h * (10.0 + 24.0 / 8), 1e-12));
  CHECK_THAT(LayerActivationBytes(a, tokens, 8, true, RecomputeMode::kNone), WithinRel(34.0 * tokens * h / 8, 1e-12));
  // Full recomputation keeps the layer input only: 2sbh (÷ t with SP).
  CHECK_THAT(LayerActivationBytes(a, tokens, 8, true, RecomputeMode::kFull), WithinRel(2.0 * tokens * h / 8, 1e-12));
}

TEST_CASE("cost_model: SwiGLU layer keeps 16h + 8f bytes per token", "[cost_model]") {
  const ActivationPerToken a = LayerActivationPerToken(testing::Llama2_7b());
  const double h = 4096, f = 11008;
  CHECK(a.replicated + a.split == 8 * h + 8 * h + 8 * f);   // norms/inputs, Q K V O, MLP
  CHECK(LayerActivationBytes(a, 1, 1, false, RecomputeMode::kSelective) <
        LayerActivationBytes(a, 1, 1, false, RecomputeMode::kNone));
}

TEST_CASE("cost_model: pipeline micro-batches in flight", "[cost_model]") {
  CHECK(MicroBatchesInFlight(PipelineSchedule::k1F1B, 1, 16, 1, 0) == 1);
  CHECK(MicroBatchesInFlight(PipelineSchedule::k1F1B, 4, 16, 1, 0) == 4);
  CHECK(MicroBatchesInFlight(PipelineSchedule::k1F1B, 4, 16, 1, 3) == 1);
  CHECK(MicroBatchesInFlight(PipelineSchedule::k1F1B, 8, 2, 1, 0) == 2);
  CHECK(MicroBatchesInFlight(PipelineSchedule::kGpipe, 4, 16, 1, 0) == 16);
  CHECK_THAT(MicroBatchesInFlight(PipelineSchedule::kInterleaved, 4, 16, 2, 0), WithinRel(4.0 + 3.0 / 2, 1e-12));
}

TEST_CASE("cost_model: zero2 memory falls with dp, each doubling saving less (F12)", "[cost_model]") {
  const SoftwareStack s = LoadSoftwareStack("pytorch-fsdp");
  MemoryInputs in;
  in.sharding = ShardingMode::kZero2;
  in.params.dense = 6.74e9;
  in.params.largest_layer = 2.02e8;
  in.params.layers = 32;
  in.activation_bytes = 32 * 37.5 * 8192 * 4096;
  double previous = 0, previous_saving = 0;
  for (int dp = 8; dp <= 2048; dp *= 2) {
    in.shard_group = dp;
    const double total = EstimateMemory(s, in).total;
    if (previous > 0) {
      const double saving = previous - total;
      CHECK(saving > 0);
      if (previous_saving > 0) CHECK(saving < previous_saving);
      previous_saving = saving;
    }
    previous = total;
  }
}

TEST_CASE("cost_model: sharding modes order memory ddp > zero1 > zero2-replicated > zero3", "[cost_model]") {
  const SoftwareStack s = LoadSoftwareStack("megatron-core");
  MemoryInputs in;
  in.params.dense = 7e9;
  in.params.largest_layer = 2e8;
  in.shard_group = 64;
  auto total = [&](ShardingMode m) {
    in.sharding = m;
    return EstimateMemory(s, in).total;
  };
  const double ddp = total(ShardingMode::kDdp), z1 = total(ShardingMode::kZero1),
               z2r = total(ShardingMode::kZero2Replicated), z2 = total(ShardingMode::kZero2),
               z3 = total(ShardingMode::kZero3);
  CHECK(ddp > z1);
  CHECK(z1 > z2r);
  CHECK(z2 > z3);
  // Megatron DDP: 2 + 4 + 12 = 18 bytes per parameter, plus the reserve, the
  // CUDA context and the GEMM workspaces.
  CHECK_THAT(ddp - s.reserve_bytes - s.cuda_context_bytes - s.gemm_workspace_bytes, WithinRel(18.0 * 7e9, 1e-12));
}

TEST_CASE("cost_model: GEMM workspaces are persistent allocated bytes, charged once", "[cost_model][memory]") {
  // PyTorch: one cuBLAS workspace per thread that runs GEMMs (forward's
  // Python thread, autograd's device thread), 4096 KiB x 8 each on Hopper;
  // Transformer Engine adds its own cuBLASLt one, 32 MiB + 1024 B.
  const double mib = 1024.0 * 1024.0;
  CHECK(LoadSoftwareStack("nanotron").gemm_workspace_bytes == 2 * 32 * mib);
  CHECK(LoadSoftwareStack("pytorch-fsdp").gemm_workspace_bytes == 2 * 32 * mib);
  CHECK(LoadSoftwareStack("torchtitan").gemm_workspace_bytes == 2 * 32 * mib);
  CHECK(LoadSoftwareStack("megatron-core").gemm_workspace_bytes == 3 * 32 * mib + 1024);
  // Before torch 1.13 cuBLAS allocated its workspace itself (the reserve).
  CHECK(LoadSoftwareStack("megatron-lm-2021").gemm_workspace_bytes == 0);

  SoftwareStack with = LoadSoftwareStack("megatron-core");
  SoftwareStack without = with;
  without.gemm_workspace_bytes = 0;
  with.gemm_workspace_bytes = 96 * mib;
  MemoryInputs in;
  in.params.dense = 1e9;
  in.params.largest_layer = 1e8;
  in.shard_group = 8;
  in.activation_bytes = 5e9;
  for (ShardingMode m : {ShardingMode::kDdp, ShardingMode::kZero1, ShardingMode::kZero3}) {
    in.sharding = m;
    const MemoryEstimate a = EstimateMemory(with, in), b = EstimateMemory(without, in);
    // Exactly W more in every figure (not scaled by fragmentation, not a phase).
    CHECK(a.gemm_workspaces == 96 * mib);
    CHECK_THAT(a.total - b.total, WithinRel(96 * mib, 1e-12));
    CHECK_THAT(a.Allocated() - b.Allocated(), WithinRel(96 * mib, 1e-12));
    CHECK_THAT(a.allocated_after_backward - b.allocated_after_backward, WithinRel(96 * mib, 1e-12));
    CHECK(a.phases.Peak() == b.phases.Peak());
    CHECK(std::string(a.peak_phase) == b.peak_phase);
    // The breakdown names it (and sums to the total); a stack without one has no line.
    double sum = 0, listed = 0;
    for (const auto& [name, bytes] : a.Breakdown()) {
      sum += bytes;
      if (name == "gemm_workspaces") listed = bytes;
    }
    CHECK(listed == 96 * mib);
    CHECK_THAT(sum, WithinRel(a.total, 1e-12));
    for (const auto& [name, bytes] : b.Breakdown()) CHECK(name != "gemm_workspaces");
  }
}

TEST_CASE("cost_model: memory is a peak over phases, never their sum", "[cost_model]") {
  const SoftwareStack s = LoadSoftwareStack("megatron-core");
  MemoryInputs in;
  in.sharding = ShardingMode::kDdp;
  in.params.dense = 1e9;
  in.params.largest_layer = 1e8;
  in.activation_bytes = 10e9;
  in.logits_bytes = 6e9;
  in.working_bytes = 4e9;
  const MemoryEstimate e = EstimateMemory(s, in);
  const double persistent = e.weights + e.grads + e.optimizer + e.gemm_workspaces;
  // Logits (end of forward) and the recompute working set (backward) never coexist.
  CHECK_THAT(e.total - persistent - e.reserve - e.context, WithinRel(s.fragmentation * 16e9, 1e-12));
  CHECK(std::string(e.peak_phase) == "forward-end");
  in.working_bytes = 8e9;
  const MemoryEstimate b = EstimateMemory(s, in);
  CHECK(std::string(b.peak_phase) == "backward");
  CHECK_THAT(b.total - e.total, WithinRel(s.fragmentation * 2e9, 1e-12));
  // Each phase alone is below the peak; the peak is one of them.
  CHECK(b.phases.Peak() == b.phases.backward);
  CHECK(b.phases.forward_end <= b.phases.backward);
}

TEST_CASE("cost_model: zero3 reshards after forward, so its peak is below zero2's", "[cost_model]") {
  for (const char* name : {"pytorch-fsdp", "pytorch-fsdp2", "deepspeed-zero"}) {
    const SoftwareStack s = LoadSoftwareStack(name);
    MemoryInputs in;
    in.params.dense = 7e9;
    in.params.largest_layer = 2e8;
    in.shard_group = 64;
    in.activation_bytes = 20e9;
    in.sharding = ShardingMode::kZero2;
    const double z2 = EstimateMemory(s, in).total;
    in.sharding = ShardingMode::kZero3;
    const double z3 = EstimateMemory(s, in).total;
    INFO(name);
    // zero2 keeps the stage's 7e9 bf16 weights; zero3 the unit and the one prefetched.
    CHECK(z2 - z3 > 0.9 * 2.0 * (7e9 - 2 * 2e8));
  }
}

TEST_CASE("cost_model: DeepSpeed ZeRO-3 gathers at most stage3_max_live_parameters", "[cost_model]") {
  SoftwareStack s = LoadSoftwareStack("deepspeed-zero");
  MemoryInputs in;
  in.sharding = ShardingMode::kZero3;
  in.params.dense = 70e9;
  in.params.largest_layer = 2e9;   // prefetch 1: two units = 4e9 > the 1e9 cap
  in.shard_group = 64;
  const double capped = EstimateMemory(s, in).gathered_weights;
  CHECK_THAT(capped, WithinRel(1e9 * s.compute_param_bytes, 1e-12));
  s.live_param_elements = 0;
  CHECK_THAT(EstimateMemory(s, in).gathered_weights, WithinRel(4e9 * s.compute_param_bytes, 1e-12));
}

TEST_CASE("cost_model: the loss keeps per-element bytes over the micro-batch, or one chunk", "[cost_model]") {
  SoftwareStack s = LoadSoftwareStack("pytorch-fsdp");
  const double tokens = 8192, vocab = 128256;
  CHECK_THAT(LossBytes(s, tokens, vocab, 2), WithinRel(tokens * vocab / 2 * 14, 1e-12));
  s.loss_chunk_tokens = 1024;   // fused linear-cross-entropy
  s.logits_bytes_per_element = 4;
  CHECK_THAT(LossBytes(s, tokens, vocab, 1), WithinRel(1024 * vocab * 4, 1e-12));
  CHECK_THAT(LossBytes(s, 512, vocab, 1), WithinRel(512 * vocab * 4, 1e-12));
}

TEST_CASE("cost_model: fp32 activations double every saved tensor but the dropout masks", "[cost_model]") {
  SoftwareStack s = LoadSoftwareStack("megatron-lm-2021");   // dropout on
  ModelSpec m = testing::Llama2_7b();
  const ActivationPerToken half = LayerActivationPerToken(m, s);
  s.activation_bytes = 4;
  const ActivationPerToken full = LayerActivationPerToken(m, s);
  CHECK_THAT(full.split, WithinRel(2 * half.split, 1e-12));
  CHECK_THAT(full.replicated, WithinRel(2 * half.replicated - 2.0 * m.hidden_size, 1e-12));
}

TEST_CASE("cost_model: DeepSpeed's pipe engine holds the previous micro-batch's logits on the last stage",
          "[cost_model]") {
  SoftwareStack s = LoadSoftwareStack("megatron-deepspeed");
  REQUIRE(s.held_last_stage_outputs == 1);
  const double tokens = 4096, vocab = 50688;
  // One micro-batch per step: nothing earlier to hold.
  CHECK(HeldOutputBytes(s, tokens, vocab, 4, 1) == 0.0);
  // From two micro-batches on: one earlier output, in the activation dtype, ÷ tp.
  const double one = tokens * vocab / 4 * s.activation_bytes;
  CHECK_THAT(HeldOutputBytes(s, tokens, vocab, 4, 2), WithinRel(one, 1e-12));
  CHECK_THAT(HeldOutputBytes(s, tokens, vocab, 4, 64), WithinRel(one, 1e-12));
  // The held output sits beside the loss at the end of forward.
  MemoryInputs in;
  in.sharding = ShardingMode::kDdp;
  in.params.dense = 1e8;
  in.activation_bytes = 5e9;
  in.logits_bytes = LossBytes(s, tokens, vocab, 4);
  const MemoryEstimate without = EstimateMemory(s, in);
  in.held_output_bytes = HeldOutputBytes(s, tokens, vocab, 4, 8);
  const MemoryEstimate with = EstimateMemory(s, in);
  CHECK(std::string(with.peak_phase) == "forward-end");
  CHECK_THAT(with.total - without.total, WithinRel(s.fragmentation * one, 1e-9));
  // A stack that frees its outputs after backward holds none.
  CHECK(HeldOutputBytes(LoadSoftwareStack("megatron-core"), tokens, vocab, 4, 8) == 0.0);
}

TEST_CASE("cost_model: QK norm keeps its Q and K inputs and fp32 per-head statistics", "[cost_model][memory]") {
  // Small GQA model: h 1024, 16 query heads, 4 KV heads of 64, f 2816.
  ModelSpec m = testing::Llama2_7b();
  m.hidden_size = 1024;
  m.num_attention_heads = 16;
  m.num_kv_heads = 4;
  m.ffn_hidden_size = 2816;
  const double ad = 16 * 64, gd = 4 * 64, f = 2816;
  const ActivationPerToken plain = LayerActivationPerToken(m);
  CHECK(plain.split == 2 * ad + 4 * gd + 2 * ad + 8 * f);
  m.qk_norm = true;
  const ActivationPerToken rms = LayerActivationPerToken(m);
  // bf16 inputs of both norms (a·d + g·d) and one fp32 1/rms per head row (a + g).
  CHECK(rms.split - plain.split == 2 * (ad + gd) + 4 * (16 + 4));
  CHECK(rms.replicated == plain.replicated);   // Q and K heads split with TP, never replicated
  CHECK(QkNormStatsBytes(m) == 4 * (16 + 4));
  m.norm = NormKind::kLayerNorm;   // mean and 1/σ
  CHECK(LayerActivationPerToken(m).split - plain.split == 2 * (ad + gd) + 8 * (16 + 4));
  m.norm = NormKind::kRmsNorm;
  // Attention-only selective recompute re-runs the core, not the norms; full
  // recompute keeps the layer input only.
  const double tokens = 4096;
  CHECK_THAT(LayerActivationBytes(rms, tokens, 2, true, RecomputeMode::kSelective) -
                 LayerActivationBytes(plain, tokens, 2, true, RecomputeMode::kSelective),
             WithinRel(tokens * (2 * (ad + gd) + 4 * (16 + 4)) / 2, 1e-12));
  CHECK(LayerActivationBytes(rms, tokens, 2, true, RecomputeMode::kFull) ==
        LayerActivationBytes(plain, tokens, 2, true, RecomputeMode::kFull));
  // fp32 activations double the saved inputs, not the fp32 statistics.
  SoftwareStack s = LoadSoftwareStack("pytorch-fsdp");
  s.activation_bytes = 4;
  const double fp32_delta = LayerActivationPerToken(m, s).split - [&] {
    ModelSpec off = m;
    off.qk_norm = false;
    return LayerActivationPerToken(off, s).split;
  }();
  CHECK_THAT(fp32_delta, WithinRel(4 * (ad + gd) + 4 * (16 + 4), 1e-12));
}

TEST_CASE("cost_model: post-norms keep each sub-block's output (Gemma 2/3: 4 norms a layer)", "[cost_model][memory]") {
  ModelSpec m = testing::Llama2_7b();
  const ActivationPerToken two = LayerActivationPerToken(m);
  m.norms_per_layer = 4;
  const ActivationPerToken four = LayerActivationPerToken(m);
  CHECK(four.replicated - two.replicated == 4.0 * m.hidden_size);
  CHECK(four.split == two.split);
  CHECK(four.layer_input == two.layer_input);
}

TEST_CASE("cost_model: Megatron-LM 2021's in-place vocab-parallel loss peaks at 6 B per logit, 2023's at 10",
          "[cost_model][memory]") {
  // 2021: the fp32 copy of the fp16 head output (4 B) beside it (2 B), max
  // subtracted, exp'd and normalised in place; 2023: logits − max out of place.
  const SoftwareStack s2021 = LoadSoftwareStack("megatron-lm-2021");
  const SoftwareStack s2023 =
      LoadSoftwareStack(std::string(PARASIM_SOURCE_DIR) + "/tests/data/stacks/megatron-lm-2023-fp16-local-ddp.yaml");
  const double tokens = 2048, vocab = 50304;
  for (int tp : {1, 2, 4}) {
    CHECK_THAT(LossBytes(s2021, tokens, vocab, tp), WithinRel(tokens * vocab / tp * 6, 1e-12));
    CHECK_THAT(LossBytes(s2023, tokens, vocab, tp), WithinRel(tokens * vocab / tp * 10, 1e-12));
  }
}

TEST_CASE("cost_model: an MoE layer keeps its router's picks and the k dispatched copies of each token",
          "[cost_model][memory]") {
  // Small Mixtral-like layer: h 1024, 8 heads of 128 (MHA), 8 experts, top-2,
  // expert width 512, SwiGLU.
  ModelSpec m = testing::Llama2_7b();
  m.hidden_size = 1024;
  m.num_attention_heads = 8;
  m.num_kv_heads = 8;
  m.ffn_hidden_size = 4096;
  m.num_experts = 8;
  m.experts_per_token = 2;
  m.moe_ffn_hidden_size = 512;
  const double h = 1024, ad = 1024, k = 2, fe = 512;
  const ActivationPerToken a = LayerActivationPerToken(m);
  // Router: int64 top-k indices and fp32 top-k softmax output, on the rank's
  // own tokens; norms and sub-block inputs as a dense layer.
  CHECK(MoeRouterSavedBytes(m) == k * (8 + 4));
  CHECK(a.replicated == 8 * h + k * (8 + 4));
  // Split: Q, K and V (2ad + 4gd, g = a), O (2ad) and the k experts' SwiGLU
  // intermediates (8 B per unit).
  CHECK(a.split == 8 * ad + 8 * k * fe);
  // Unsplit: the grouped fc1 input (k·h) and the k probabilities, bf16.
  CHECK(MoeDispatchedElements(m) == k * h + k);
  CHECK(a.unsplit == 2 * (k * h + k));
  // Without the new terms (before: MLP input counted once, nothing kept by
  // the router or the dispatch) a layer kept 8h + 8ad + 8k·f_e; per token
  // per layer at tp = 1: 8192 + 8192 + 8192 = 24576 B, now 24600 + 4100 = 28700.
  CHECK(LayerActivationBytes(a, 1, 1, false, RecomputeMode::kNone) == 8 * h + 8 * ad + 8 * k * fe + 12 * k +
                                                                          2 * (k * h + k));
  CHECK(LayerActivationBytes(a, 1, 1, false, RecomputeMode::kNone) == 28700);
  // TP (= expert TP, Megatron's default) with SP: the router runs on s/tp
  // tokens, the experts' intermediates split their width, but every rank
  // holds all k·s gathered copies of h.
  const double tokens = 4096;
  for (int tp : {1, 2, 4, 8}) {
    const double expect = tokens * ((8 * h + 12 * k) / tp + (8 * ad + 8 * k * fe) / tp + 2 * (k * h + k));
    CHECK_THAT(LayerActivationBytes(a, tokens, tp, true, RecomputeMode::kNone), WithinRel(expect, 1e-12));
    // Attention-only selective recompute keeps the dispatched copies; full keeps the layer input.
    CHECK_THAT(LayerActivationBytes(a, tokens, tp, true, RecomputeMode::kSelective),
               WithinRel(expect - tokens * 2 * ad / tp, 1e-12));
    CHECK(LayerActivationBytes(a, tokens, tp, true, RecomputeMode::kFull) == tokens * 2 * h / tp);
  }
  // A dense layer of the same model keeps none of it.
  const ActivationPerToken dense = LayerActivationPerToken(DenseMlpLayerModel(m));
  CHECK(dense.unsplit == 0);
  CHECK(dense.replicated == 8 * h);
  CHECK(MoeRouterSavedBytes(DenseMlpLayerModel(m)) == 0);
  // More experts per token: each pick adds h + 1 dispatched elements and 12 router bytes.
  m.experts_per_token = 4;
  const ActivationPerToken four = LayerActivationPerToken(m);
  CHECK(four.unsplit - a.unsplit == 2 * 2 * (h + 1));
  CHECK(four.replicated - a.replicated == 2 * 12);
  m.experts_per_token = 2;
  // fp32 activations double the dispatched copies, not the int64/fp32 router tensors.
  SoftwareStack s = LoadSoftwareStack("megatron-core");
  const ActivationPerToken bf16 = LayerActivationPerToken(m, s);
  s.activation_bytes = 4;
  const ActivationPerToken fp32 = LayerActivationPerToken(m, s);
  CHECK_THAT(fp32.unsplit, WithinRel(2 * bf16.unsplit, 1e-12));
  CHECK_THAT(fp32.replicated, WithinRel(2 * bf16.replicated - 12 * k, 1e-12));
}

TEST_CASE("cost_model: DDP bucket buffers count only where DDP has ranks to reduce over", "[cost_model]") {
  SoftwareStack s = LoadSoftwareStack("nanotron");
  REQUIRE(s.ddp_bucket_bytes == 2);
  MemoryInputs in;
  in.sharding = ShardingMode::kDdp;
  in.params.dense = 1e9;
  in.params.largest_layer = 5e7;
  in.activation_bytes = 4e9;
  in.shard_group = 1;
  const MemoryEstimate alone = EstimateMemory(s, in);
  in.shard_group = 8;
  const MemoryEstimate wrapped = EstimateMemory(s, in);
  // 2 B per parameter beside the fp32 accumulator (4 B), nothing else moves.
  CHECK_THAT(wrapped.grads - alone.grads, WithinRel(2e9, 1e-12));
  CHECK_THAT(wrapped.total - alone.total, WithinRel(2e9, 1e-12));
  // ZeRO-1 runs without DDP: no buckets.
  in.sharding = ShardingMode::kZero1;
  CHECK(EstimateMemory(s, in).grads == 1e9 * s.grad_bytes);
}

// 1e9 parameters under ZeRO-1 over 8 ranks, 10 GB of activations, an 80 GB GPU.
static MemoryInputs Zero1OnEightRanks() {
  MemoryInputs in;
  in.sharding = ShardingMode::kZero1;
  in.shard_group = 8;
  in.params.dense = 1e9;
  in.params.largest_layer = 5e7;
  in.activation_bytes = 10e9;
  in.device_bytes = 80e9;
  return in;
}

TEST_CASE("cost_model: ZeRO-1's flat all-gather buffers add to the pool unless a cached block holds them or a release reused them",
          "[cost_model]") {
  const SoftwareStack s = LoadSoftwareStack("nanotron");
  REQUIRE(s.zero1_gather_flat_bytes == 4);
  MemoryInputs in = Zero1OnEightRanks();
  const MemoryEstimate with = EstimateMemory(s, in);
  SoftwareStack none = s;
  none.zero1_gather_flat_bytes = 0;
  const MemoryEstimate without = EstimateMemory(none, in);
  // 4 B per local parameter + the flattened own shard (2 B per sharded one), on top of the peak.
  CHECK_THAT(with.total - without.total, WithinRel(4e9 + 2e9 / 8, 1e-12));
  CHECK_THAT(with.optimizer_temporaries, WithinRel(4e9 + 2e9 / 8, 1e-12));
  // A loss whose fp32 logits (the largest cached block) outsize one flat copy of the weights (2 GB) holds them.
  in.logits_bytes = 3e9 / 4 * s.logits_bytes_per_element;   // 3 GB of fp32 logits
  CHECK(EstimateMemory(s, in).total == EstimateMemory(none, in).total);
  in.logits_bytes = 0;
  // Past the GPU the allocator frees its cached segments and retries; later
  // forwards carve their activations out of the buffers' kept segments: the
  // pool is the larger of the forward/backward peak and the buffers, not their sum.
  in.activation_bytes = 67.2e9;   // states 10 GB + 67.2 GB fit; the buffers' 4.25 GB do not
  const MemoryEstimate released = EstimateMemory(s, in);
  CHECK(EstimateMemory(none, in).total < 80e9);
  CHECK(released.total == EstimateMemory(none, in).total);
  CHECK(released.optimizer_temporaries == 0.0);
  // ... and the buffers alone where they outsize the activations (a made-up 14.5 GB card:
  // states and reserve 10.07 GB + 0.5 GB of activations + 4.25 GB of buffers pass it,
  // states and buffers alone fit).
  in.device_bytes = 14.5e9;
  in.activation_bytes = 0.5e9;
  const MemoryEstimate small = EstimateMemory(s, in);
  const double persistent =
      small.weights + small.grads + small.optimizer + small.gemm_workspaces + small.reserve + small.context;
  REQUIRE(persistent + 0.5e9 + 4e9 + 2e9 / 8 > 14.5e9);
  CHECK_THAT(small.total, WithinRel(persistent + 4e9 + 2e9 / 8, 1e-12));
  CHECK_THAT(small.optimizer_temporaries, WithinRel(4e9 + 2e9 / 8 - 0.5e9, 1e-12));
  CHECK(small.total <= 14.5e9);
  // Below the GPU nothing is released: a card one byte larger than the sum keeps the sum.
  in.device_bytes = persistent + 0.5e9 + 4e9 + 2e9 / 8 + 1;
  CHECK_THAT(EstimateMemory(s, in).total, WithinRel(persistent + 0.5e9 + 4e9 + 2e9 / 8, 1e-12));
  // ... unless the buffers beside the persistent states alone pass it (a real OOM).
  in.device_bytes = 12e9;
  in.activation_bytes = 1e9;
  const MemoryEstimate oom = EstimateMemory(s, in);
  CHECK_THAT(oom.total, WithinRel(oom.weights + oom.grads + oom.optimizer + oom.gemm_workspaces + oom.reserve +
                                      oom.context + 4e9 + 2e9 / 8,
                                  1e-12));
  CHECK(oom.total > 12e9);
}

TEST_CASE("cost_model: kept buffers add to every phase; the allocated peak after backward leaves out activations",
          "[cost_model]") {
  const SoftwareStack s = LoadSoftwareStack("nanotron");
  MemoryInputs in = Zero1OnEightRanks();
  const MemoryEstimate without = EstimateMemory(s, in);
  in.kept_buffers = 3e9;
  const MemoryEstimate with = EstimateMemory(s, in);
  CHECK_THAT(with.total - without.total, WithinRel(3e9, 1e-12));
  CHECK_THAT(with.allocated_after_backward - without.allocated_after_backward, WithinRel(3e9, 1e-12));
  CHECK(with.peak_phase == without.peak_phase);
  // States + kept buffers + GEMM workspaces + ZeRO-1's all-gather buffers
  // (4 B per local parameter + the flattened own shard), the largest
  // post-backward transient here; no activations, no reserve, no context.
  CHECK_THAT(with.allocated_after_backward,
             WithinRel(with.weights + with.grads + with.optimizer + 3e9 + s.gemm_workspace_bytes + 4e9 + 2e9 / 8,
                       1e-12));
  // Activations never reach it.
  in.activation_bytes = 30e9;
  CHECK(EstimateMemory(s, in).allocated_after_backward == with.allocated_after_backward);
  // DDP: states, kept buffers, GEMM workspaces and the optimizer step's
  // temporaries (0 in nanotron's preset) only.
  in.sharding = ShardingMode::kDdp;
  const MemoryEstimate ddp = EstimateMemory(s, in);
  CHECK_THAT(ddp.allocated_after_backward,
             WithinRel(ddp.weights + ddp.grads + ddp.optimizer + 3e9 + s.gemm_workspace_bytes + ddp.phases.optimizer,
                       1e-12));
}

TEST_CASE("cost_model: pending collective inputs add to the forward/backward pool, not past the GPU",
          "[cost_model]") {
  const SoftwareStack s = LoadSoftwareStack("nanotron");
  MemoryInputs in;
  in.sharding = ShardingMode::kDdp;
  in.params.dense = 1e9;
  in.params.largest_layer = 1e8;
  in.activation_bytes = 5e9;
  const MemoryEstimate base = EstimateMemory(s, in);
  in.pending_collective_bytes = 3e9;
  in.pending_block_bytes = 1e8;
  const MemoryEstimate held = EstimateMemory(s, in);
  // Exactly the pending bytes more in the pool and in both forward/backward phases, nothing allocated after backward.
  CHECK_THAT(held.total - base.total, WithinRel(3e9, 1e-12));
  CHECK_THAT(held.phases.forward_end - base.phases.forward_end, WithinRel(3e9, 1e-12));
  CHECK_THAT(held.phases.backward - base.phases.backward, WithinRel(3e9, 1e-12));
  CHECK(held.allocated_after_backward == base.allocated_after_backward);
  CHECK(held.pending_collective_inputs == 3e9);
  double sum = 0;
  for (const auto& [name, bytes] : held.Breakdown()) sum += bytes;
  CHECK_THAT(sum, WithinRel(held.total, 1e-12));
  for (const auto& [name, bytes] : base.Breakdown()) CHECK(name != "pending_collective_inputs");
  // A GPU the pool with them would pass, but not without: the allocator waits
  // for the streams, frees them and the pool is counted without them.
  in.device_bytes = held.total - 1e9;
  const MemoryEstimate released = EstimateMemory(s, in);
  CHECK(released.total == base.total);
  CHECK(released.pending_collective_inputs == 0);
  in.device_bytes = held.total;   // exactly at the GPU: kept
  CHECK(EstimateMemory(s, in).total == held.total);
}

TEST_CASE("cost_model: ZB-H1 keeps every deferred weight pass's micro-batch, hand-counted", "[cost_model][memory]") {
  // p = 3, m = 2 (ScheduleInterleavedZeroBubble, one stage per rank).
  // Stage 0: F0 F1 | I0 W0 I1 W1: two held at the forwards' end, one deferred after an I.
  // Stage 1: F0 | F1 I0 | I1 W0 W1: two held, two deferred after I1.
  // Stage 2: F0 I0 F1 I1 W0 W1: F1 ends with I0 deferred, I1 with both.
  const ZeroBubbleHeld s0 = ZeroBubbleMicroBatchesHeld(3, 2, 0);
  const ZeroBubbleHeld s1 = ZeroBubbleMicroBatchesHeld(3, 2, 1);
  const ZeroBubbleHeld s2 = ZeroBubbleMicroBatchesHeld(3, 2, 2);
  CHECK((s0.forward_held == 2 && s0.forward_deferred == 0 && s0.backward_held == 2 && s0.backward_deferred == 1));
  CHECK((s1.forward_held == 2 && s1.forward_deferred == 0 && s1.backward_held == 2 && s1.backward_deferred == 2));
  CHECK((s2.forward_held == 2 && s2.forward_deferred == 1 && s2.backward_held == 2 && s2.backward_deferred == 2));
  // 1F1B holds 2, 2, 1 there: the last stage keeps one more micro-batch under zero bubble.
  CHECK(MicroBatchesInFlight(PipelineSchedule::k1F1B, 3, 2, 1, 2) == 1);
  CHECK(MicroBatchesInFlight(PipelineSchedule::kZeroBubble, 3, 2, 1, 2) == 2);
  // m ≥ p: p held on every stage (1F1B's p − s), s deferred at a forward's end, s + 1 after an I.
  for (int s = 0; s < 4; ++s) {
    const ZeroBubbleHeld h = ZeroBubbleMicroBatchesHeld(4, 16, s);
    CHECK(h.forward_held == 4);
    CHECK(h.backward_held == 4);
    CHECK(h.forward_deferred == s);
    CHECK(h.backward_deferred == s + 1);
    CHECK(MicroBatchesInFlight(PipelineSchedule::kZeroBubble, 4, 16, 1, s) == 4);
  }
  // No pipeline: no schedule, one micro-batch, nothing deferred.
  const ZeroBubbleHeld one = ZeroBubbleMicroBatchesHeld(1, 8, 0);
  CHECK((one.backward_held == 1 && one.backward_deferred == 0 && one.forward_deferred == 0));
}

TEST_CASE("cost_model: a deferred weight pass keeps each weight op's output gradient", "[cost_model][memory]") {
  const ModelSpec m = testing::Llama2_7b();
  const SoftwareStack s = LoadSoftwareStack("pytorch-fsdp2-eager");
  REQUIRE(s.activation_bytes == 2);
  // Per token: Q, K, V (3·4096) and gate, up (2·11008) ÷ tp; output and down
  // projections 4096 each whole; two norms 4096 each (÷ tp under SP).
  CHECK(DeferredWeightGradBytes(m, s, 1, 1, false) == 2.0 * (3 * 4096 + 2 * 11008 + 2 * 4096 + 2 * 4096));
  CHECK(DeferredWeightGradBytes(m, s, 1, 2, true) == 2.0 * ((3 * 4096 + 2 * 11008) / 2 + 2 * 4096 + 4096));
  CHECK(DeferredWeightGradBytes(m, s, 1000, 2, true) == 1000 * DeferredWeightGradBytes(m, s, 1, 2, true));
  // They add to the forward's end and the backward as stored bytes (× fragmentation).
  MemoryInputs in;
  in.sharding = ShardingMode::kZero2;
  in.params.dense = 1e9;
  in.params.largest_layer = 1e8;
  in.activation_bytes = 10e9;
  in.working_bytes = 1e9;
  const MemoryEstimate base = EstimateMemory(s, in);
  in.deferred_wgrad_forward_bytes = 2e9;
  in.deferred_wgrad_backward_bytes = 3e9;
  const MemoryEstimate zb = EstimateMemory(s, in);
  CHECK_THAT(zb.phases.forward_end - base.phases.forward_end, WithinRel(s.fragmentation * 2e9, 1e-12));
  CHECK_THAT(zb.phases.backward - base.phases.backward, WithinRel(s.fragmentation * 3e9, 1e-12));
}

TEST_CASE("cost_model: under ZB-H1 later stages keep more, the last the most", "[cost_model][memory]") {
  // Llama-2-7B, 2 DGX H100, eager FSDP2 (the stack that runs zero bubble), pp = 4, m = 16.
  const ModelSpec model = LoadModel("llama2-7b");
  const ClusterSpec cluster = LoadCluster("dgx-h100", 2);
  const SoftwareStack stack = LoadSoftwareStack("pytorch-fsdp2-eager");
  JobSpec job = testing::Job(64, 2048);
  job.stack = stack.name;
  const AnalyticalEvaluator ev(model, cluster, job, stack);
  const Report zb = ev.Evaluate(ParseParallelConfig("dp=4,pp=4,mbs=1,sharding=zero1,schedule=zb-h1"));
  const Report f1b = ev.Evaluate(ParseParallelConfig("dp=4,pp=4,mbs=1,sharding=zero1,schedule=1f1b"));
  REQUIRE(zb.memory_bytes_per_stage.size() == 4);
  for (int s = 0; s < 4; ++s) {
    INFO("stage " << s);
    CHECK(zb.memory_bytes_per_stage[s] >= f1b.memory_bytes_per_stage[s]);
    if (s > 0) CHECK(zb.memory_bytes_per_stage[s] - f1b.memory_bytes_per_stage[s] >
                     zb.memory_bytes_per_stage[s - 1] - f1b.memory_bytes_per_stage[s - 1]);
  }
  CHECK(zb.memory_peak_stage == 3);
}
