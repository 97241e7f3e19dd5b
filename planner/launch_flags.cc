#include "planner/launch_flags.h"

#include <nlohmann/json.hpp>

#include "core/error.h"

namespace parasim::planner {
namespace {

// Megatron-LM (megatron/training/arguments.py) argument names.
LaunchFlags Megatron(const ParallelConfig& c, const ModelSpec& model, const JobSpec& job) {
  LaunchFlags out;
  out.framework = Framework::kMegatron;
  std::vector<std::string> args;
  auto add = [&](const std::string& flag, const std::string& value = "") {
    args.push_back(value.empty() ? flag : flag + " " + value);
  };
  add("--tensor-model-parallel-size", std::to_string(c.tp));
  add("--pipeline-model-parallel-size", std::to_string(c.pp));
  add("--context-parallel-size", std::to_string(c.cp));
  if (model.IsMoe()) {
    add("--num-experts", std::to_string(model.num_experts));
    add("--moe-router-topk", std::to_string(model.experts_per_token));
    add("--expert-model-parallel-size", std::to_string(c.ep));
  }
  if (c.tp > 1 && c.sequence_parallel) add("--sequence-parallel");
  if (c.pp > 1 && c.vpp > 1) {
    add("--num-layers-per-virtual-pipeline-stage", std::to_string(model.num_layers / (c.pp * c.vpp)));
  }
  if (c.pp > 1 && c.schedule == PipelineSchedule::kGpipe) {
    out.notes.push_back("Megatron-LM runs 1F1B, not GPipe: same bubble, less activation memory");
  }
  if (c.pp > 1 && c.schedule == PipelineSchedule::kZeroBubble) {
    out.notes.push_back("zero-bubble schedules are not in upstream Megatron-LM; 1F1B is the nearest");
  }
  add("--micro-batch-size", std::to_string(c.micro_batch));
  add("--global-batch-size", std::to_string(job.global_batch));
  add("--seq-length", std::to_string(job.seq_len));
  add("--max-position-embeddings", std::to_string(job.seq_len));
  add("--num-layers", std::to_string(model.num_layers));
  add("--hidden-size", std::to_string(model.hidden_size));
  add("--ffn-hidden-size", std::to_string(model.ffn_hidden_size));
  add("--num-attention-heads", std::to_string(model.num_attention_heads));
  if (model.num_kv_heads > 0 && model.num_kv_heads != model.num_attention_heads) {
    add("--group-query-attention");
    add("--num-query-groups", std::to_string(model.num_kv_heads));
  }
  switch (c.recompute) {
    case RecomputeMode::kNone: break;
    case RecomputeMode::kSelective: add("--recompute-granularity", "selective"); break;
    case RecomputeMode::kFull:
      add("--recompute-granularity", "full");
      add("--recompute-method", "uniform");
      add("--recompute-num-layers", "1");
      break;
  }
  switch (c.sharding) {
    case ShardingMode::kDdp:
      if (c.dp > 1) add("--overlap-grad-reduce");
      break;
    case ShardingMode::kZero1:
      add("--use-distributed-optimizer");
      add("--overlap-grad-reduce");
      add("--overlap-param-gather");
      break;
    case ShardingMode::kZero2Replicated:
      add("--use-custom-fsdp");
      add("--data-parallel-sharding-strategy", "optim_grads");
      break;
    case ShardingMode::kZero2:
    case ShardingMode::kZero3:
      add("--use-custom-fsdp");
      add("--data-parallel-sharding-strategy", "optim_grads_params");
      if (c.sharding == ShardingMode::kZero2) {
        out.notes.push_back("Megatron FSDP shards parameters like ZeRO-3; PyTorch FSDP SHARD_GRAD_OP (zero2) keeps "
                            "them gathered through backward");
      }
      break;
    case ShardingMode::kHsdp:
      add("--use-custom-fsdp");
      add("--data-parallel-sharding-strategy", "optim_grads_params");
      add("--num-distributed-optimizer-instances", std::to_string(c.hsdp_group > 0 ? c.dp / c.hsdp_group : 1));
      out.notes.push_back(StrCat("hsdp:", c.hsdp_group, " = shard within groups of ", c.hsdp_group,
                                 ", replicate across ", c.hsdp_group > 0 ? c.dp / c.hsdp_group : 1));
      break;
  }
  const bool megatron_fsdp = c.sharding == ShardingMode::kZero2Replicated || c.sharding == ShardingMode::kZero2 ||
                            c.sharding == ShardingMode::kZero3 || c.sharding == ShardingMode::kHsdp;
  if (megatron_fsdp) add("--no-gradient-accumulation-fusion");   // required by Megatron FSDP
  add("--bf16");
  if (job.precision == Precision::kFp8) add("--fp8-format", "hybrid");
  if (c.order != ParallelConfig{}.order) {
    out.notes.push_back(StrCat("placement order ", c.order, ": Megatron's default rank order is tp-cp-ep-dp-pp"));
  }
  for (size_t i = 0; i < args.size(); ++i) {
    out.text += args[i];
    out.text += i + 1 < args.size() ? " \\\n" : "\n";
  }
  return out;
}

// torchtitan job config (torchtitan/config/job_config.py) sections.
LaunchFlags Torchtitan(const ParallelConfig& c, const ModelSpec& model, const JobSpec& job) {
  LaunchFlags out;
  out.framework = Framework::kTorchtitan;
  int replicate = 1, shard = 1;
  std::string reshard = "default";
  switch (c.sharding) {
    case ShardingMode::kDdp: replicate = c.dp; break;
    case ShardingMode::kZero1:
    case ShardingMode::kZero2Replicated:
      replicate = c.dp;
      out.notes.push_back(StrCat("torchtitan has no ", ToString(c.sharding), "; emitted as DDP (replicate) — use "
                                 "FSDP (zero2/zero3) for sharded optimizer state"));
      break;
    case ShardingMode::kZero2: shard = c.dp; reshard = "never"; break;
    case ShardingMode::kZero3: shard = c.dp; reshard = "always"; break;
    case ShardingMode::kHsdp:
      shard = c.hsdp_group > 0 ? c.hsdp_group : c.dp;
      replicate = c.dp / shard;
      reshard = "always";
      break;
  }
  if (c.tp > 1 && !c.sequence_parallel) {
    out.notes.push_back("torchtitan's TP always shards the sequence for norms (sp=on)");
  }
  std::string schedule = "1F1B";
  if (c.schedule == PipelineSchedule::kGpipe) schedule = "GPipe";
  if (c.schedule == PipelineSchedule::kInterleaved) schedule = "Interleaved1F1B";
  if (c.schedule == PipelineSchedule::kZeroBubble) schedule = "InterleavedZeroBubble";
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
  t += StrCat("mixed_precision_param = \"bfloat16\"\n");
  t += "\n[activation_checkpoint]\n";
  t += StrCat("mode = \"", ToString(c.recompute), "\"\n");
  if (c.recompute == RecomputeMode::kSelective) t += "selective_ac_option = \"op\"\n";
  return out;
}

// DeepSpeed config JSON (deepspeed/runtime/config.py keys).
LaunchFlags DeepSpeed(const ParallelConfig& c, const ModelSpec& model, const JobSpec& job) {
  LaunchFlags out;
  out.framework = Framework::kDeepSpeed;
  nlohmann::ordered_json j;
  const int micro_batches = static_cast<int>(job.global_batch / (static_cast<long long>(std::max(1, c.dp)) * c.micro_batch));
  j["train_batch_size"] = job.global_batch;
  j["train_micro_batch_size_per_gpu"] = c.micro_batch;
  j["gradient_accumulation_steps"] = micro_batches;
  j["bf16"] = {{"enabled", job.precision == Precision::kBf16}};
  nlohmann::ordered_json zero;
  switch (c.sharding) {
    case ShardingMode::kDdp: zero["stage"] = 0; break;
    case ShardingMode::kZero1: zero["stage"] = 1; break;
    case ShardingMode::kZero2Replicated: zero["stage"] = 2; break;
    case ShardingMode::kZero2:
      zero["stage"] = 3;
      out.notes.push_back("DeepSpeed has no FSDP SHARD_GRAD_OP: stage 3 shards parameters the same at rest but "
                          "re-gathers them in backward");
      break;
    case ShardingMode::kZero3: zero["stage"] = 3; break;
    case ShardingMode::kHsdp:
      zero["stage"] = 3;
      zero["mics_shard_size"] = c.hsdp_group;   // MiCS: shard within groups, replicate across
      break;
  }
  zero["overlap_comm"] = true;
  zero["contiguous_gradients"] = true;
  j["zero_optimization"] = zero;
  if (c.recompute != RecomputeMode::kNone) {
    j["activation_checkpointing"] = {{"partition_activations", c.tp > 1},
                                     {"contiguous_memory_optimization", false},
                                     {"cpu_checkpointing", false}};
  }
  out.text = j.dump(2) + "\n";
  if (c.tp > 1 || c.pp > 1 || c.cp > 1 || c.ep > 1) {
    std::string flags = StrCat("--tensor-model-parallel-size ", c.tp, " --pipeline-model-parallel-size ", c.pp);
    if (c.tp > 1 && c.sequence_parallel) flags += " --sequence-parallel";
    if (c.recompute == RecomputeMode::kFull) flags += " --checkpoint-activations";
    if (c.recompute == RecomputeMode::kSelective) flags += " --recompute-granularity selective";
    if (model.IsMoe()) flags += StrCat(" --expert-model-parallel-size ", c.ep);
    out.notes.push_back("model parallelism is set in the Megatron-DeepSpeed launcher: " + flags);
    if (c.cp > 1) out.notes.push_back(StrCat("cp=", c.cp, ": DeepSpeed's sequence parallelism is Ulysses (all-to-all), not ring attention"));
  }
  return out;
}

}  // namespace

Framework ParseFramework(const std::string& text, const std::string& where) {
  if (text == "megatron") return Framework::kMegatron;
  if (text == "torchtitan") return Framework::kTorchtitan;
  if (text == "deepspeed") return Framework::kDeepSpeed;
  throw InvalidInput("", where, StrCat("unknown framework '", text, "' (valid: megatron, torchtitan, deepspeed)"));
}

const char* ToString(Framework f) {
  switch (f) {
    case Framework::kMegatron: return "megatron";
    case Framework::kTorchtitan: return "torchtitan";
    case Framework::kDeepSpeed: return "deepspeed";
  }
  return "?";
}

LaunchFlags EmitLaunchFlags(Framework framework, const ParallelConfig& config, const ModelSpec& model,
                            const JobSpec& job) {
  switch (framework) {
    case Framework::kMegatron: return Megatron(config, model, job);
    case Framework::kTorchtitan: return Torchtitan(config, model, job);
    case Framework::kDeepSpeed: return DeepSpeed(config, model, job);
  }
  return {};
}

}  // namespace parasim::planner
