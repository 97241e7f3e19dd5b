#include "cli/spec_options.h"

namespace parasim::cli {

void AddSpecOptions(CLI::App& cmd, SpecOptions& spec, bool need_batch) {
  (void)need_batch;  // LoadJobSpec asks for the batch, so --job can supply it
  cmd.add_option("--model", spec.model,
                 "Model: a preset (parasim models list), a YAML file, a HF config.json or a HF model directory")
      ->capture_default_str();
  cmd.add_option("--cluster", spec.cluster, "Cluster: a preset (parasim profiles list) or a YAML file")
      ->capture_default_str();
  cmd.add_option("--nodes", spec.nodes_text, "Number of nodes (default: the cluster's own)");
  cmd.add_option("--gpus", spec.gpus_text, "Number of GPUs (a multiple of the GPUs per node); instead of --nodes");
  cmd.add_option("--global-batch", spec.global_batch_text,
                 "Global batch, sequences per optimizer step (required unless --job gives it)");
  cmd.add_option("--seq-len", spec.seq_len_text, "Tokens per sequence (default: the job file's, else 4096)");
  cmd.add_option("--stack", spec.stack,
                 "Software stack: a preset (default: pytorch-fsdp, the paper's) or a stack YAML file");
  cmd.add_option("--precision", spec.precision,
                 "GEMM precision: bf16 | fp8 (FP8 GEMMs, attention/norms/optimizer stay bf16/fp32) | fp4 "
                 "(NVFP4 GEMMs where the GPU has an FP4 rate, else exits 2) | fp32 (fp32 training: TF32 or FP32 GEMMs as "
                 "the stack's fp32_matmul says, 4-byte elementwise traffic); overrides the job file")
      ->check(CLI::IsMember({"bf16", "fp8", "fp4", "fp32"}));
  cmd.add_option("--hw-profile", spec.hw_profile,
                 "Fitted collective profile (parasim calibrate fit); default: the cluster file's hw_profile");
  cmd.add_option("--job", spec.job_file, "Job YAML (global_batch, seq_len, precision, stack); flags override it");
}

}  // namespace parasim::cli
