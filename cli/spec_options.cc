#include "cli/spec_options.h"

#include "calibrate/collective_profile.h"
#include "cli/provenance.h"
#include "core/error.h"
#include "core/loaders.h"
#include "cost_model/software_stack.h"
#include "cost_model/software_stack_io.h"
#include "core/sha256.h"

namespace parasim::cli {

void AddSpecOptions(CLI::App& cmd, SpecOptions& spec, bool need_batch) {
  cmd.add_option("--model", spec.model, "Model: a preset (parasim models list), a YAML file, a HF config.json or a HF model directory")
      ->capture_default_str();
  cmd.add_option("--cluster", spec.cluster, "Cluster: a preset (parasim profiles list) or a YAML file")
      ->capture_default_str();
  cmd.add_option("--nodes", spec.nodes, "Number of nodes (default: the cluster's own)");
  cmd.add_option("--gpus", spec.gpus, "Number of GPUs (a multiple of the GPUs per node); instead of --nodes");
  auto* batch = cmd.add_option("--global-batch", spec.global_batch, "Global batch, sequences per optimizer step");
  if (need_batch) batch->required();
  cmd.add_option("--seq-len", spec.seq_len, "Tokens per sequence")->capture_default_str();
  cmd.add_option("--stack", spec.stack,
                 "Software stack: a preset (default: pytorch-fsdp, the paper's) or a stack YAML file");
  cmd.add_option("--precision", spec.precision,
                 "GEMM precision: bf16 | fp8 (FP8 GEMMs, attention/norms/optimizer stay bf16/fp32) | fp4 "
                 "(not modelled yet: exits 2); overrides the job file")
      ->check(CLI::IsMember({"bf16", "fp8", "fp4"}));
  cmd.add_option("--hw-profile", spec.hw_profile,
                 "Fitted collective profile (parasim calibrate fit); default: the cluster file's hw_profile");
  cmd.add_option("--job", spec.job_file, "Job YAML (global_batch, seq_len, precision, stack); flags override it");
}

ModelSpec SpecOptions::LoadModelSpec() const {
  ModelSpec m = LoadModel(model);
  RecordFileOrPreset("model", model, "");
  return m;
}

ClusterSpec SpecOptions::LoadClusterSpec() const {
  if (nodes < 0) throw InvalidInput("", "--nodes", StrCat(nodes, " is not a positive node count"));
  if (gpus < 0) throw InvalidInput("", "--gpus", StrCat(gpus, " is not a positive GPU count"));
  if (nodes > 0 && gpus > 0) throw InvalidInput("", "--gpus", "give --nodes or --gpus, not both");
  ClusterSpec c = LoadCluster(cluster, nodes);
  if (gpus > 0) {
    if (gpus % c.gpus_per_node != 0) {
      throw InvalidInput("", "--gpus",
                  StrCat(gpus, " is not a multiple of the ", c.gpus_per_node, " GPUs per node of ", c.name));
    }
    c = LoadCluster(cluster, gpus / c.gpus_per_node);
  }
  RecordFileOrPreset("cluster", cluster, StrCat("clusters/", cluster, ".yaml"));
  RecordFileOrPreset("gpu_profile", c.gpu.file.empty() ? c.gpu.name : c.gpu.file, StrCat("gpus/", c.gpu.name, ".yaml"));
  calibrate::ApplyHwProfile(!hw_profile.empty() ? hw_profile : c.hw_profile);
  return c;
}

JobSpec SpecOptions::LoadJobSpec() const {
  JobSpec job;
  if (!job_file.empty()) job = LoadJobYaml(job_file);
  if (global_batch != 0) job.global_batch = global_batch;
  if (seq_len != 4096 || job_file.empty()) job.seq_len = seq_len;
  if (!stack.empty()) job.stack = stack;
  if (precision == "bf16") job.precision = Precision::kBf16;
  if (precision == "fp8") job.precision = Precision::kFp8;
  if (precision == "fp4") {
    throw InvalidInput("", "--precision",
                       "fp4 is not modelled in this build: no GPU profile carries an NVFP4/MXFP4 GEMM rate yet");
  }
  if (job.global_batch <= 0) {
    throw InvalidInput("", "--global-batch", StrCat(job.global_batch, " is not a positive number of sequences"));
  }
  if (job.seq_len <= 0) throw InvalidInput("", "--seq-len", StrCat(job.seq_len, " is not a positive number of tokens"));
  const SoftwareStack loaded = LoadSoftwareStack(job.stack);  // a bad stack name or file stops here
  if (IsSoftwareStackPath(job.stack)) {
    RecordFileOrPreset("stack", job.stack, "");
  } else {   // a preset: the hash of its complete stack file
    RecordInput({"stack", loaded.name, Sha256Hex(SoftwareStackToYaml(loaded, {}, loaded.name))});
  }
  if (!job_file.empty()) RecordFileOrPreset("job", job_file, "");
  return job;
}

}  // namespace parasim::cli
