#include "planner/launch_flags.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "cost_model/precision.h"

namespace parasim::planner {
namespace {

// Megatron-LM arguments (megatron/training/arguments.py at kMegatronLmCommit;
// names and choices kept in tests/testdata/frameworks/megatron_lm_args.tsv).
class MegatronArgs {
 public:
  void Add(const std::string& flag, const std::string& value = "") {
    args_.push_back(value.empty() ? flag : flag + " " + value);
  }
  std::string Text() const {
    std::string t;
    for (size_t i = 0; i < args_.size(); ++i) t += args_[i] + (i + 1 < args_.size() ? " \\\n" : "\n");
    return t;
  }

 private:
  std::vector<std::string> args_;
};

std::string Num(double v) { return StrCat(v); }

// "([0]*3+[1]*58)": Megatron's moe_freq_type list expression, 1 = MoE layer.
std::string MoeLayerPattern(const ModelSpec& m) {
  std::string runs;
  int last = -1;
  int64_t count = 0;
  auto flush = [&] {
    if (count > 0) runs += StrCat(runs.empty() ? "" : "+", "[", last, "]*", count);
  };
  const int64_t interval = std::max<int64_t>(1, m.moe_layer_interval);
  for (int64_t i = 0; i < m.num_layers; ++i) {
    const int moe = i >= m.first_dense_layers && (i + 1) % interval == 0 ? 1 : 0;
    if (moe != last) {
      flush();
      last = moe;
      count = 0;
    }
    ++count;
  }
  flush();
  return "\"(" + runs + ")\"";
}

void MegatronParallel(const ParallelConfig& c, const ModelSpec& model, MegatronArgs& a, LaunchFlags& out) {
  a.Add("--tensor-model-parallel-size", std::to_string(c.tp));
  a.Add("--pipeline-model-parallel-size", std::to_string(c.pp));
  a.Add("--context-parallel-size", std::to_string(c.cp));
  // Passed through to Transformer Engine, which spells the gather kind "all_gather"
  // (megatron/core/extensions/transformer_engine.py, TEDotProductAttention).
  if (c.cp > 1) a.Add("--cp-comm-type", c.cp_comm == CpComm::kAllGather ? "all_gather" : ToString(c.cp_comm));
  // a2a+p2p: the a2a group's size, then the p2p ring's (Megatron-LM d98e8a6
  // model_parallel_config.py hierarchical_context_parallel_sizes; product = cp).
  if (c.cp > 1 && c.cp_comm == CpComm::kA2aP2p) {
    a.Add("--hierarchical-context-parallel-sizes", StrCat(c.CpA2aSize(), " ", c.CpRingSize()));
  }
  if (model.IsMoe()) a.Add("--expert-model-parallel-size", std::to_string(c.ep));
  if (c.tp > 1 && c.sequence_parallel) a.Add("--sequence-parallel");   // validate_args drops it at tp = 1
  if (c.pp > 1 && c.vpp > 1) {
    const int64_t per_stage = model.num_layers / c.pp;
    if (model.num_layers % c.pp == 0 && per_stage % c.vpp == 0) {
      a.Add("--num-layers-per-virtual-pipeline-stage", std::to_string(per_stage / c.vpp));
    } else {
      out.notes.push_back(StrCat("vpp=", c.vpp, ": ", model.num_layers, " layers do not split evenly into ", c.pp,
                                 "x", c.vpp, " chunks; Megatron needs --pipeline-model-parallel-layout for that"));
    }
  }
  if (c.pp > 1 && c.schedule == PipelineSchedule::kGpipe) {
    out.notes.push_back("Megatron-LM runs 1F1B, not GPipe: same bubble, less activation memory");
  }
  if (ZeroBubbleApplies(c.schedule, c.pp, c.vpp)) {
    out.notes.push_back("zero-bubble schedules are not in upstream Megatron-LM; 1F1B is the nearest");
  }
  switch (c.recompute) {
    case RecomputeMode::kNone: break;
    case RecomputeMode::kSelective: a.Add("--recompute-granularity", "selective"); break;
    case RecomputeMode::kFull:
      a.Add("--recompute-granularity", "full");
      if (c.recompute_layers > 0) {
        // The first N layers of each model chunk (megatron/core/transformer/
        // transformer_block.py _checkpointed_forward, method "block").
        a.Add("--recompute-method", "block");
        a.Add("--recompute-num-layers", std::to_string(c.recompute_layers / std::max(1, c.vpp)));
      } else {
        a.Add("--recompute-method", "uniform");
        a.Add("--recompute-num-layers", "1");
      }
      break;
  }
  if (c.order != ParallelConfig{}.order) {
    out.notes.push_back(StrCat("placement order ", c.order, ": Megatron's default rank order is tp-cp-ep-dp-pp"));
  }
}

// Sharding. Megatron FSDP (--use-megatron-fsdp) needs the distributed
// optimizer (validate_args switches it on for FSDP v1), no gradient
// accumulation fusion and the fsdp_dtensor checkpoint format (its user guide).
void MegatronSharding(const ParallelConfig& c, MegatronArgs& a, LaunchFlags& out) {
  const char* strategy = nullptr;
  switch (c.sharding) {
    case ShardingMode::kDdp:
      if (c.dp > 1) a.Add("--overlap-grad-reduce");
      return;
    case ShardingMode::kZero1:
      a.Add("--use-distributed-optimizer");
      a.Add("--overlap-grad-reduce");
      a.Add("--overlap-param-gather");
      return;
    case ShardingMode::kZero2Replicated: strategy = "optim_grads"; break;
    case ShardingMode::kZero2:
      strategy = "optim_grads_params";
      out.notes.push_back("Megatron FSDP shards parameters like ZeRO-3; PyTorch FSDP SHARD_GRAD_OP (zero2) keeps "
                          "them gathered through backward");
      break;
    case ShardingMode::kZero3: strategy = "optim_grads_params"; break;
    case ShardingMode::kHsdp: strategy = "optim_grads_params"; break;
  }
  a.Add("--use-megatron-fsdp");
  a.Add("--data-parallel-sharding-strategy", strategy);
  a.Add("--use-distributed-optimizer");
  a.Add("--no-gradient-accumulation-fusion");
  a.Add("--ckpt-format", "fsdp_dtensor");
  a.Add("--overlap-grad-reduce");
  a.Add("--overlap-param-gather");
  if (c.sharding == ShardingMode::kHsdp) {
    const int replicas = c.hsdp_group > 0 ? c.dp / c.hsdp_group : 1;
    a.Add("--num-distributed-optimizer-instances", std::to_string(replicas));
    out.notes.push_back(StrCat("hsdp:", c.hsdp_group, " = shard within groups of ", c.hsdp_group,
                               ", replicate across ", replicas));
  }
}

// Attention layout: heads, GQA, MLA, QK norm, position embedding, local attention, sinks.
void MegatronAttention(const ModelSpec& m, MegatronArgs& a, LaunchFlags& out) {
  a.Add("--num-attention-heads", std::to_string(m.num_attention_heads));
  if (m.IsMla()) {
    a.Add("--multi-latent-attention");
    if (m.q_lora_rank > 0) a.Add("--q-lora-rank", std::to_string(m.q_lora_rank));
    a.Add("--kv-lora-rank", std::to_string(m.kv_lora_rank));
    a.Add("--qk-head-dim", std::to_string(m.qk_nope_head_dim));
    a.Add("--qk-pos-emb-head-dim", std::to_string(m.qk_rope_head_dim));
    a.Add("--v-head-dim", std::to_string(m.v_head_dim));
  } else {
    if (m.head_dim > 0 && m.head_dim * m.num_attention_heads != m.hidden_size) {
      a.Add("--kv-channels", std::to_string(m.head_dim));
    }
    if (m.KvHeads() != m.num_attention_heads) {
      a.Add("--group-query-attention");
      a.Add("--num-query-groups", std::to_string(m.KvHeads()));
    }
  }
  if (m.qk_norm) a.Add(m.qk_norm_weights ? "--qk-layernorm" : "--qk-l2-norm");
  if (m.attention_sinks) a.Add("--softmax-type", "learnable");
  switch (m.position) {
    case PositionKind::kRope:
      a.Add("--position-embedding-type", "rope");
      if (m.rope_theta > 0) a.Add("--rotary-base", StrCat(static_cast<int64_t>(m.rope_theta)));
      break;
    case PositionKind::kLearned: a.Add("--position-embedding-type", "learned_absolute"); break;
    case PositionKind::kAlibi:
      a.Add("--position-embedding-type", "none");
      out.notes.push_back("Megatron-LM has no ALiBi; emitted without position embedding (nearest runnable)");
      break;
  }
  if (m.local_attention == LocalAttention::kSliding && m.local_attention_layers > 0) {
    a.Add("--window-size", StrCat("\"(", m.attention_window, ",0)\""));
    const int64_t global = m.num_layers - m.local_attention_layers;
    if (global > 0) a.Add("--window-attn-skip-freq", std::to_string(m.num_layers / global));
  }
  if (m.local_attention == LocalAttention::kChunked && m.local_attention_layers > 0) {
    const int64_t nope = m.num_layers - m.local_attention_layers;
    if (nope > 0 && m.num_layers % (m.num_layers / nope) == 0) a.Add("--no-rope-freq", std::to_string(m.num_layers / nope));
    out.notes.push_back(StrCat("Megatron-LM has no chunked attention: the ", m.local_attention_layers,
                               " chunked layers (", m.attention_window, "-token chunks) run full causal attention"));
  }
  if (m.attn_logit_softcap > 0 || m.final_logit_softcap > 0) {
    out.notes.push_back("Megatron-LM has no logit soft-capping (Gemma 2): training runs without it");
  }
}

// MoE layout: experts, router, shared experts, dense layers, MTP.
void MegatronMoe(const ModelSpec& m, MegatronArgs& a, LaunchFlags& out) {
  if (!m.IsMoe()) return;
  a.Add("--num-experts", std::to_string(m.num_experts));
  a.Add("--moe-router-topk", std::to_string(m.experts_per_token));
  a.Add("--moe-ffn-hidden-size", std::to_string(m.moe_ffn_hidden_size));
  a.Add("--moe-grouped-gemm");
  a.Add("--moe-token-dispatcher-type", "alltoall");
  if (m.num_shared_experts > 0) {
    a.Add("--moe-shared-expert-intermediate-size",
          std::to_string(m.num_shared_experts * m.shared_expert_ffn_hidden_size));
  }
  if (m.MixesLayerKinds()) a.Add("--moe-layer-freq", MoeLayerPattern(m));
  if (m.router_bias && m.IsMla()) {
    a.Add("--moe-router-score-function", "sigmoid");
    a.Add("--moe-router-enable-expert-bias");
  } else if (m.router_bias) {
    out.notes.push_back("the router's bias (gpt-oss) has no Megatron-LM flag: the router runs without it");
  }
  if (m.mtp_layers > 0) a.Add("--mtp-num-layers", std::to_string(m.mtp_layers));
}

void MegatronArchitecture(const ModelSpec& m, int tp, MegatronArgs& a, LaunchFlags& out) {
  a.Add("--num-layers", std::to_string(m.num_layers));
  a.Add("--hidden-size", std::to_string(m.hidden_size));
  a.Add("--ffn-hidden-size", std::to_string(m.ffn_hidden_size > 0 ? m.ffn_hidden_size : m.moe_ffn_hidden_size));
  MegatronAttention(m, a, out);
  a.Add("--normalization", m.norm == NormKind::kRmsNorm ? "RMSNorm" : "LayerNorm");
  if (m.norm_eps > 0) a.Add("--norm-epsilon", Num(m.norm_eps));
  if (m.mlp == MlpKind::kSwiGlu) a.Add("--swiglu");
  if (m.gated_gelu) {
    out.notes.push_back("GeGLU (Gemma) has no Megatron-LM flag: --swiglu builds the same weights with a SiLU gate");
  }
  if (!m.tied_embeddings) a.Add("--untie-embeddings-and-output-weights");
  if (!m.linear_bias) a.Add("--disable-bias-linear");
  if (m.qkv_bias && !m.linear_bias) a.Add("--add-qkv-bias");
  if (m.norms_per_layer != 2) {
    out.notes.push_back("pre- and post-block norms (Gemma) have no Megatron-LM flag: 2 norms per layer are built");
  }
  MegatronMoe(m, a, out);
  a.Add("--vocab-size", std::to_string(m.vocab_size));
  a.Add("--make-vocab-size-divisible-by", std::to_string(kMegatronVocabDivisor));
  const int64_t padded = MegatronPaddedVocab(m.vocab_size, tp);
  if (padded != m.vocab_size) {
    const int64_t extra = (padded - m.vocab_size) * m.hidden_size * (m.tied_embeddings ? 1 : 2);
    out.notes.push_back(StrCat("Megatron pads the vocabulary ", m.vocab_size, " -> ", padded, " (multiple of ",
                               kMegatronVocabDivisor, " x tp ", tp, "): ", extra, " more parameters"));
  }
}

// Low precision through Transformer Engine (Megatron Core "Low-Precision
// Training Guide"): FP8 or NVFP4 GEMMs; sharded weights gathered in that dtype
// (the stack's fp8/fp4_param_gather, which the plan's comm assumed); NVFP4
// keeps the first and last blocks in BF16 as NVIDIA's recipe does (cost_model/precision.h).
void MegatronPrecision(const ParallelConfig& c, const ModelSpec& model, const JobSpec& job,
                       double nvfp4_bf16_layer_share, MegatronArgs& a, LaunchFlags& out) {
  const bool sharded = c.sharding != ShardingMode::kDdp;   // distributed optimizer or Megatron FSDP
  if (job.precision == Precision::kFp8) {
    a.Add("--fp8-format", "hybrid");
    a.Add("--fp8-recipe", "tensorwise");
    if (sharded) a.Add("--fp8-param-gather");
  }
  if (job.precision == Precision::kFp4) {
    a.Add("--fp4-format", "e2m1");
    a.Add("--fp4-recipe", "nvfp4");
    if (sharded) a.Add("--fp4-param-gather");
    const Bf16Layers kept = Nvfp4Bf16Layers(model.num_layers, nvfp4_bf16_layer_share);
    if (kept.first + kept.last > 0) {   // else Megatron-LM's default: first_last_layers_bf16 off
      a.Add("--first-last-layers-bf16");
      a.Add("--num-layers-at-start-in-bf16", std::to_string(kept.first));
      a.Add("--num-layers-at-end-in-bf16", std::to_string(kept.last));
    }
    out.notes.push_back(StrCat("NVFP4 recipe: linear GEMMs in NVFP4 except the first ", kept.first, " and last ",
                               kept.last, " blocks; attention, norms, embeddings, output head in BF16; fp32 master "
                               "weights and optimizer state"));
    // Megatron-LM validate_args (arguments.py:1108 at the pinned commit) refuses NVFP4 on an older TE.
    out.notes.push_back("--fp4-format needs Transformer Engine >= 2.7.0.dev0 (NVFP4BlockScaling)");
  }
}

LaunchFlags Megatron(const ParallelConfig& c, const ModelSpec& model, const JobSpec& job,
                     double nvfp4_bf16_layer_share) {
  LaunchFlags out;
  out.framework = Framework::kMegatron;
  out.target = StrCat("Megatron-LM ", kMegatronLmCommit);
  MegatronArgs a;
  MegatronParallel(c, model, a, out);
  MegatronSharding(c, a, out);
  // Megatron: grad accumulation = global / (micro × dp), dp = world / (tp·pp·cp).
  const int64_t per_step = static_cast<int64_t>(c.micro_batch) * c.dp;
  if (per_step <= 0 || job.global_batch % per_step != 0) {
    out.notes.push_back(StrCat("global batch ", job.global_batch, " is not a multiple of micro-batch x dp = ",
                               per_step, "; Megatron-LM refuses it"));
  }
  a.Add("--micro-batch-size", std::to_string(c.micro_batch));
  a.Add("--global-batch-size", std::to_string(job.global_batch));
  a.Add("--seq-length", std::to_string(job.seq_len));
  a.Add("--max-position-embeddings", std::to_string(std::max<int64_t>(job.seq_len, model.max_position_embeddings)));
  MegatronArchitecture(model, c.tp, a, out);
  if (job.precision != Precision::kFp32) a.Add("--bf16");   // fp32 training: no precision flag
  MegatronPrecision(c, model, job, nvfp4_bf16_layer_share, a, out);
  out.text = a.Text();
  return out;
}

// torchtitan data-parallel layout: replicate × shard degrees and reshard policy.
struct TitanDp {
  int replicate = 1, shard = 1;
  const char* reshard = "default";
};

TitanDp TorchtitanDp(const ParallelConfig& c, LaunchFlags& out) {
  TitanDp d;
  switch (c.sharding) {
    case ShardingMode::kDdp: d.replicate = c.dp; break;
    case ShardingMode::kZero1:
    case ShardingMode::kZero2Replicated:
      d.replicate = c.dp;
      out.notes.push_back(StrCat("torchtitan has no ", ToString(c.sharding), "; emitted as DDP (replicate) — use "
                                 "FSDP (zero2/zero3) for sharded optimizer state"));
      break;
    case ShardingMode::kZero2: d.shard = c.dp; d.reshard = "never"; break;
    case ShardingMode::kZero3: d.shard = c.dp; d.reshard = "always"; break;
    case ShardingMode::kHsdp:
      d.shard = c.hsdp_group > 0 ? c.hsdp_group : c.dp;
      d.replicate = c.dp / d.shard;
      d.reshard = "always";
      break;
  }
  return d;
}

// Partial full recompute in torchtitan: selective_ac_option = "<k>" wraps
// every k-th transformer block a rank builds (torchtitan/distributed/
// activation_checkpoint.py _apply_layer_sac, pytorch/torchtitan 01db32e), so a
// stage of L layers recomputes floor(L/k): k = L/N, said when N does not divide L.
int TorchtitanLayerSacEvery(const ParallelConfig& c, const ModelSpec& model, LaunchFlags& out) {
  const std::vector<int> stages = c.StageLayers(model);
  const int layers = stages.empty() ? static_cast<int>(model.num_layers) : stages.front();
  const int n = std::max(1, c.recompute_layers);
  const int k = std::max(1, layers / n);
  if (layers % n != 0) {
    out.notes.push_back(StrCat("recompute_layers=", n, ": torchtitan wraps every k-th block, so a stage of ", layers,
                               " layers recomputes ", layers / k, " with k=", k));
  }
  out.notes.push_back(StrCat("torchtitan recomputes every ", k, "-th block of a stage, not the first ", n,
                             ": the same count, so the same time and memory"));
  return k;
}

// Zero-bubble splits each backward into an input pass and a weight pass
// (torch.distributed.pipelining stage_backward_input / stage_backward_weight),
// which torch.compile'd blocks cannot run: PyTorch's weight pass fails on them
// (pytorch/pytorch issue 161904) and from 2.10 the schedule refuses them when
// built (_check_torch_compile_compatibility). A zero-bubble launch therefore
// turns torchtitan's compile off: its blocks run eager.
bool TorchtitanNeedsEagerBlocks(const ParallelConfig& c) {
  return ZeroBubbleApplies(c.schedule, c.pp, c.vpp);
}

constexpr const char* kZeroBubbleEagerNote =
    "zero-bubble schedules cannot run torch.compile'd blocks (their split input/weight backward), so compile is off: "
    "eager blocks, slower than the compiled stacks (torchtitan, pytorch-fsdp2) price; pytorch-fsdp2-eager prices them";

const char* TorchtitanSchedule(PipelineSchedule s) {
  switch (s) {
    case PipelineSchedule::kGpipe: return "GPipe";
    case PipelineSchedule::kInterleaved: return "Interleaved1F1B";
    case PipelineSchedule::kZeroBubble: return "InterleavedZeroBubble";
    case PipelineSchedule::k1F1B: break;
  }
  return "1F1B";
}

// Current torchtitan (torchtitan/config/configs.py, trainer.py at
// kTorchtitanCommit): a registered Python config chosen with --module/--config,
// overridden with --section.field values; batches are counted in tokens;
// activation checkpointing is a subcommand (activation-checkpoint:full).
LaunchFlags Torchtitan(const ParallelConfig& c, const ModelSpec& model, const JobSpec& job) {
  LaunchFlags out;
  out.framework = Framework::kTorchtitan;
  out.target = StrCat("torchtitan ", kTorchtitanCommit);
  const TitanDp d = TorchtitanDp(c, out);
  std::string args;   // "--section.field value \" lines
  auto add = [&args](const char* flag, const std::string& value) { args += StrCat(flag, " ", value, " \\\n"); };
  add("--parallelism.data_parallel_replicate_degree", StrCat(d.replicate));
  add("--parallelism.data_parallel_shard_degree", StrCat(d.shard));
  add("--parallelism.fsdp_reshard_after_forward", d.reshard);
  add("--parallelism.tensor_parallel_degree", StrCat(c.tp));
  add("--parallelism.context_parallel_degree", StrCat(c.cp));
  if (model.IsMoe()) add("--parallelism.expert_parallel_degree", StrCat(c.ep));
  add("--parallelism.pipeline_parallel_degree", StrCat(c.pp));
  // Tokens: a micro-batch is mbs sequences per dp rank; a step is the global batch.
  const long long per_step = static_cast<long long>(std::max(1, c.dp)) * std::max(1, c.micro_batch);
  const long long micro_batches = std::max(1LL, job.global_batch / per_step);
  if (micro_batches * per_step != job.global_batch) {
    out.notes.push_back(StrCat("global batch ", job.global_batch, " is not micro-batch x dp (", per_step,
                               ") x accumulation; torchtitan rejects that, so the step is ", micro_batches * per_step,
                               " sequences"));
  }
  if (c.pp > 1) {
    add("--parallelism.pipeline_parallel_schedule", TorchtitanSchedule(c.schedule));
    add("--parallelism.num_pp_microbatches", StrCat(micro_batches));
    add("--parallelism.pipeline_parallel_layers_per_stage",
                   StrCat(model.num_layers / (c.pp * std::max(1, c.vpp))));
  }
  if (TorchtitanNeedsEagerBlocks(c)) {
    add("--compile.enable", "false");
    out.notes.push_back(kZeroBubbleEagerNote);
  }
  add("--training.num_tokens_per_microbatch_per_dp_rank", StrCat(c.micro_batch * job.seq_len));
  add("--training.num_tokens_per_train_step", StrCat(micro_batches * per_step * job.seq_len));
  add("--training.max_context_length", StrCat(job.seq_len));
  add("--training.mixed_precision_param", job.precision == Precision::kFp32 ? "float32" : "bfloat16");
  if (c.tp > 1 && !c.sequence_parallel) out.notes.push_back("torchtitan's TP shards the sequence for norms (sp=on)");
  if (job.precision != Precision::kBf16 && job.precision != Precision::kFp32) {
    out.notes.push_back(StrCat(ToString(job.precision), " GEMMs are a model converter in torchtitan (Float8/MXFP8/NVFP4 "
                               "linear converters in the model registry), not a command-line override"));
  }
  out.notes.push_back("the model is the registered config's: run with --module <model recipes> --config <function> "
                      "for this model, then these overrides");
  out.text = args;
  const char* ac = c.recompute == RecomputeMode::kFull ? "full" : c.recompute == RecomputeMode::kSelective ? "selective"
                                                                                                          : "none";
  if (c.recompute == RecomputeMode::kFull && c.recompute_layers > 0) {
    // The recorded field table (tests/testdata/frameworks) does not list the
    // SelectiveAC subcommand's fields: no verified layer-frequency flag here.
    out.notes.push_back(StrCat("recompute_layers=", c.recompute_layers,
                               ": this torchtitan's layer-frequency option is not in the recorded field table; full "
                               "recompute emitted (the v0.2.2 TOML sets selective_ac_option = \"k\")"));
  }
  out.text += StrCat("activation-checkpoint:", ac, "\n");
  return out;
}

// torchtitan v0.2.2 TOML job file (torchtitan/config/job_config.py at the tag).
LaunchFlags TorchtitanToml(const ParallelConfig& c, const ModelSpec& model, const JobSpec& job) {
  LaunchFlags out;
  out.framework = Framework::kTorchtitanToml;
  out.target = StrCat("torchtitan v0.2.2 ", kTorchtitanTomlCommit);
  const TitanDp d = TorchtitanDp(c, out);
  const int replicate = d.replicate, shard = d.shard;
  const std::string reshard = d.reshard, schedule = TorchtitanSchedule(c.schedule);
  if (c.tp > 1 && !c.sequence_parallel) {
    out.notes.push_back("torchtitan's TP always shards the sequence for norms (sp=on)");
  }
  std::string& t = out.text;
  t += "[parallelism]\n";
  t += StrCat("data_parallel_replicate_degree = ", replicate, "\n");
  t += StrCat("data_parallel_shard_degree = ", shard, "\n");
  t += StrCat("fsdp_reshard_after_forward = \"", reshard, "\"\n");
  t += StrCat("tensor_parallel_degree = ", c.tp, "\n");
  t += StrCat("context_parallel_degree = ", c.cp, "\n");
  if (model.IsMoe()) t += StrCat("expert_parallel_degree = ", c.ep, "\n");
  t += StrCat("pipeline_parallel_degree = ", c.pp, "\n");
  if (c.pp > 1) {
    t += StrCat("pipeline_parallel_schedule = \"", schedule, "\"\n");
    t += StrCat("pipeline_parallel_microbatch_size = ", c.micro_batch, "\n");
    t += StrCat("pipeline_parallel_layers_per_stage = ", model.num_layers / (c.pp * std::max(1, c.vpp)), "\n");
  }
  t += "\n[training]\n";
  // Without PP, local_batch_size is the micro-batch and torchtitan accumulates
  // gradients up to global_batch_size; with PP it is the per-replica batch.
  const long long per_replica = job.global_batch / std::max(1, c.dp);
  t += StrCat("local_batch_size = ", c.pp > 1 ? per_replica : c.micro_batch, "\n");
  t += StrCat("global_batch_size = ", job.global_batch, "\n");
  t += StrCat("seq_len = ", job.seq_len, "\n");
  t += StrCat("mixed_precision_param = \"", job.precision == Precision::kFp32 ? "float32" : "bfloat16", "\"\n");
  if (TorchtitanNeedsEagerBlocks(c)) {
    t += "\n[compile]\nenable = false\n";
    out.notes.push_back(kZeroBubbleEagerNote);
  }
  t += "\n[activation_checkpoint]\n";
  if (c.recompute == RecomputeMode::kFull && c.recompute_layers > 0) {
    t += "mode = \"selective\"\n";
    t += StrCat("selective_ac_option = \"", TorchtitanLayerSacEvery(c, model, out), "\"\n");
  } else {
    t += StrCat("mode = \"", ToString(c.recompute), "\"\n");
    if (c.recompute == RecomputeMode::kSelective) t += "selective_ac_option = \"op\"\n";
  }
  return out;
}

// DeepSpeed config JSON (keys checked against deepspeedai/DeepSpeed at
// kDeepSpeedCommit: tests/testdata/frameworks/deepspeed_config_keys.txt).
// train_batch_size must equal micro × accumulation × dp exactly (DeepSpeed
// asserts it at start), so a batch that does not divide is changed openly.
nlohmann::ordered_json DeepSpeedBatch(const ParallelConfig& c, const JobSpec& job, LaunchFlags& out) {
  const long long per_step = static_cast<long long>(std::max(1, c.dp)) * std::max(1, c.micro_batch);
  long long gas = job.global_batch / per_step;
  if (gas < 1) gas = 1;
  if (gas * per_step != job.global_batch) {
    out.notes.push_back(StrCat("global batch ", job.global_batch, " is not micro-batch x dp (", per_step,
                               ") x accumulation; DeepSpeed asserts that, so train_batch_size is ", gas * per_step));
  }
  nlohmann::ordered_json j;
  j["train_batch_size"] = gas * per_step;
  j["train_micro_batch_size_per_gpu"] = c.micro_batch;
  j["gradient_accumulation_steps"] = gas;
  return j;
}

nlohmann::ordered_json DeepSpeedZero(const ParallelConfig& c, LaunchFlags& out) {
  nlohmann::ordered_json zero;
  switch (c.sharding) {
    case ShardingMode::kDdp: zero["stage"] = 0; break;
    case ShardingMode::kZero1: zero["stage"] = 1; break;
    case ShardingMode::kZero2Replicated: zero["stage"] = 2; break;
    case ShardingMode::kZero2:
      // FSDP SHARD_GRAD_OP holds whole parameters from forward through backward
      // and moves the same bytes as ZeRO-2 (gather once, reduce-scatter once).
      zero["stage"] = 2;
      out.notes.push_back("zero2 (FSDP SHARD_GRAD_OP) has no DeepSpeed stage: ZeRO-2 is the nearest (same traffic, "
                          "same peak; parameters stay replicated between steps)");
      break;
    case ShardingMode::kZero3: zero["stage"] = 3; break;
    case ShardingMode::kHsdp:
      zero["stage"] = 3;
      zero["mics_shard_size"] = c.hsdp_group;   // MiCS: shard within groups, replicate across
      break;
  }
  zero["overlap_comm"] = true;
  zero["contiguous_gradients"] = true;
  return zero;
}

LaunchFlags DeepSpeed(const ParallelConfig& c, const ModelSpec& model, const JobSpec& job) {
  LaunchFlags out;
  out.framework = Framework::kDeepSpeed;
  out.target = StrCat("DeepSpeed ", kDeepSpeedCommit);
  nlohmann::ordered_json j = DeepSpeedBatch(c, job, out);
  j["bf16"] = {{"enabled", job.precision != Precision::kFp32}};
  if (job.precision != Precision::kBf16 && job.precision != Precision::kFp32) {
    out.notes.push_back(StrCat("DeepSpeed's config has no ", ToString(job.precision), " switch: ",
                               ToString(job.precision), " GEMMs come from Transformer Engine layers in the model code"));
  }
  j["zero_optimization"] = DeepSpeedZero(c, out);
  if (c.recompute != RecomputeMode::kNone) {
    j["activation_checkpointing"] = {{"partition_activations", c.tp > 1},
                                     {"contiguous_memory_optimization", false},
                                     {"cpu_checkpointing", false}};
    out.notes.push_back("activation checkpointing also needs deepspeed.checkpointing.checkpoint around each layer "
                        "in the model code");
  }
  if (c.tp > 1) {
    // Plain DeepSpeed's tensor parallelism is AutoTP: linears sharded, no sequence parallelism.
    j["tensor_parallel"] = {{"autotp_size", c.tp}};
    out.notes.push_back(StrCat("tp=", c.tp, " via DeepSpeed AutoTP (tensor_parallel.autotp_size); it has no sequence "
                               "parallelism, so norms and dropout run unsharded"));
  }
  if (c.pp > 1 || c.cp > 1 || (model.IsMoe() && c.ep > 1)) {
    std::string flags = StrCat("--tensor-model-parallel-size ", c.tp, " --pipeline-model-parallel-size ", c.pp);
    if (model.IsMoe()) flags += StrCat(" --expert-model-parallel-size ", c.ep);
    out.notes.push_back("pp, cp and ep are not DeepSpeed config keys: they need deepspeed.pipe.PipelineModule, "
                        "DeepSpeed-Ulysses and MoE(ep_size=) in the model code, or Megatron-DeepSpeed with " + flags);
    if (c.cp > 1) out.notes.push_back(StrCat("cp=", c.cp, ": DeepSpeed's sequence parallelism is Ulysses (all-to-all), not ring attention"));
  }
  out.text = j.dump(2) + "\n";
  return out;
}

}  // namespace

int64_t MegatronPaddedVocab(int64_t vocab, int tp) {
  const int64_t multiple = static_cast<int64_t>(kMegatronVocabDivisor) * std::max(1, tp);
  return (vocab + multiple - 1) / multiple * multiple;
}

Framework ParseFramework(const std::string& text, const std::string& where) {
  if (text == "megatron") return Framework::kMegatron;
  if (text == "torchtitan") return Framework::kTorchtitan;
  if (text == "torchtitan@0.2") return Framework::kTorchtitanToml;
  if (text == "deepspeed") return Framework::kDeepSpeed;
  throw InvalidInput("", where, StrCat("unknown framework '", text, "' (valid: megatron, torchtitan, torchtitan@0.2, deepspeed)"));
}

const char* ToString(Framework f) {
  switch (f) {
    case Framework::kMegatron: return "megatron";
    case Framework::kTorchtitan: return "torchtitan";
    case Framework::kTorchtitanToml: return "torchtitan@0.2";
    case Framework::kDeepSpeed: return "deepspeed";
  }
  return "?";
}

const char* CurrentStackPreset(Framework f) {
  switch (f) {
    case Framework::kMegatron: return "megatron-core";
    case Framework::kTorchtitan:
    case Framework::kTorchtitanToml: return "torchtitan";
    case Framework::kDeepSpeed: return "deepspeed-zero";
  }
  return "";
}

bool StackFitsEmitter(const std::string& stack_framework, Framework f) {
  switch (f) {
    case Framework::kMegatron: return stack_framework == "megatron-lm";
    case Framework::kTorchtitan:
    case Framework::kTorchtitanToml: return stack_framework == "torchtitan" || stack_framework == "pytorch";
    case Framework::kDeepSpeed: return stack_framework == "deepspeed" || stack_framework == "megatron-deepspeed";
  }
  return false;
}

std::string CheckStackFitsEmitter(const std::string& stack_name, const std::string& stack_framework, Framework f,
                                  const std::string& where) {
  if (!StackFitsEmitter(stack_framework, f)) {
    std::string fits;
    for (Framework e : {Framework::kMegatron, Framework::kTorchtitan, Framework::kTorchtitanToml,
                        Framework::kDeepSpeed}) {
      if (StackFitsEmitter(stack_framework, e)) fits += StrCat(fits.empty() ? "" : " or ", ToString(e));
    }
    throw InvalidInput("", where,
                       StrCat("stack '", stack_name, "' is a ", stack_framework, " stack, but --emit ", ToString(f),
                              " writes ", ToString(f), " settings; plan with --stack ", CurrentStackPreset(f),
                              " (or leave --stack out)",
                              fits.empty() ? StrCat(" (", stack_framework, " has no launch emitter)")
                                           : StrCat(", or emit ", fits, " for this stack")));
  }
  if (stack_framework == "pytorch") {
    return StrCat("stack '", stack_name, "' is a plain PyTorch FSDP loop: these are torchtitan's settings for the "
                  "same plan (its physics may differ from torchtitan's; --stack torchtitan plans for it)");
  }
  if (stack_framework == "megatron-deepspeed") {
    return StrCat("stack '", stack_name, "': the DeepSpeed config below goes with Megatron-DeepSpeed's own "
                  "Megatron-style arguments (--deepspeed --deepspeed_config)");
  }
  return "";
}

LaunchFlags EmitLaunchFlags(Framework framework, const ParallelConfig& config, const ModelSpec& model,
                            const JobSpec& job, double nvfp4_bf16_layer_share) {
  switch (framework) {
    case Framework::kMegatron: return Megatron(config, model, job, nvfp4_bf16_layer_share);
    case Framework::kTorchtitan: return Torchtitan(config, model, job);
    case Framework::kTorchtitanToml: return TorchtitanToml(config, model, job);
    case Framework::kDeepSpeed: return DeepSpeed(config, model, job);
  }
  return {};
}

}  // namespace parasim::planner
