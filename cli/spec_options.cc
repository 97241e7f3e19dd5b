#include "cli/spec_options.h"

#include <algorithm>

#include "calibrate/collective_profile.h"
#include "cli/provenance.h"
#include "core/error.h"
#include "core/field_registry.h"
#include "core/loaders.h"
#include "cost_model/software_stack.h"
#include "cost_model/software_stack_io.h"
#include "core/sha256.h"

namespace parasim::cli {

namespace {

// A numeric flag, parsed and range-checked by a registry entry's rules.
int64_t CountFlag(const std::string& text, const char* flag, const FieldRange& range) {
  const double v = ParseFieldValue(FieldUnit::kCount, text, flag);
  if (auto problem = RangeProblem(range, FieldUnit::kCount, v)) throw InvalidInput("", flag, *problem);
  return static_cast<int64_t>(v);
}

const FieldRange& RangeOf(const char* key) {
  if (const ClusterField* f = FindField(ClusterFields(), key)) return f->range;
  return FindField(JobFields(), key)->range;
}

}  // namespace

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
  IssueList issues;
  int64_t n = nodes, g = gpus;
  auto parse = [&](const std::string& text, const char* flag, int64_t& out) {
    if (text.empty()) return;
    try {
      out = CountFlag(text, flag, RangeOf("nodes"));
    } catch (const InvalidInput& e) {
      for (const Issue& i : e.issues()) issues.Add(i);
    }
  };
  parse(nodes_text, "--nodes", n);
  parse(gpus_text, "--gpus", g);
  if (n < 0) issues.Add("", "--nodes", StrCat(n, " is not a positive node count"));
  if (g < 0) issues.Add("", "--gpus", StrCat(g, " is not a positive GPU count"));
  if (n > 0 && g > 0) issues.Add("", "--gpus", "give --nodes or --gpus, not both");
  issues.ThrowIfAny();
  ClusterSpec c = LoadCluster(cluster, static_cast<int>(n));
  if (g > 0) {
    if (g % c.gpus_per_node != 0) {
      throw InvalidInput("", "--gpus",
                         StrCat(g, " is not a multiple of the ", c.gpus_per_node, " GPUs per node of ", c.name));
    }
    c = LoadCluster(cluster, static_cast<int>(g / c.gpus_per_node));
  }
  RecordFileOrPreset("cluster", cluster, StrCat("clusters/", cluster, ".yaml"));
  RecordFileOrPreset("gpu_profile", c.gpu.file.empty() ? c.gpu.name : c.gpu.file, StrCat("gpus/", c.gpu.name, ".yaml"));
  calibrate::AttachHwProfile(c, !hw_profile.empty() ? hw_profile : c.hw_profile);
  return c;
}

JobSpec SpecOptions::LoadJobSpec() const {
  IssueList issues;
  JobSpec job;
  if (!job_file.empty()) {
    try {
      job = LoadJobYaml(job_file);
    } catch (const InvalidInput& e) {
      for (Issue i : e.issues()) {
        if (i.key.empty()) i.key = "--job";
        issues.Add(i);
      }
    }
  }
  auto parse = [&](const std::string& text, const char* flag, const char* key, int64_t& out) {
    if (text.empty()) return;
    try {
      out = CountFlag(text, flag, RangeOf(key));
    } catch (const InvalidInput& e) {
      for (const Issue& i : e.issues()) issues.Add(i);
    }
  };
  if (global_batch != 0) job.global_batch = global_batch;
  parse(global_batch_text, "--global-batch", "global_batch", job.global_batch);
  if (seq_len != 4096 || job_file.empty() || job.seq_len == 0) job.seq_len = seq_len;
  parse(seq_len_text, "--seq-len", "seq_len", job.seq_len);
  if (!stack.empty()) job.stack = stack;
  if (precision == "bf16") job.precision = Precision::kBf16;
  if (precision == "fp8") job.precision = Precision::kFp8;
  if (precision == "fp4") job.precision = Precision::kFp4;   // a GPU without an FP4 rate exits 2 naming it
  issues.ThrowIfAny();
  if (job.global_batch == 0) {
    throw InvalidInput("", "--global-batch",
                       job_file.empty() ? "is required (or a --job file with global_batch)"
                                        : StrCat("is required: the --job file ", job_file, " has no global_batch"));
  }
  for (Issue& i : ValidateJob(job, "")) {
    i.key = "--" + i.key;
    std::replace(i.key.begin(), i.key.end(), '_', '-');
    issues.Add(i);
  }
  issues.ThrowIfAny();
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
