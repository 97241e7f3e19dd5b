#include "facade/spec_inputs.h"

#include <algorithm>

#include "calibrate/collective_profile.h"
#include "facade/fitted_profiles.h"
#include "facade/report_provenance.h"
#include "facade/value_writers.h"
#include "core/error.h"
#include "core/field_registry.h"
#include "core/loaders.h"
#include "cost_model/software_stack.h"
#include "cost_model/software_stack_io.h"
#include "core/sha256.h"

namespace parasim {

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

ModelSpec SpecInputs::LoadModelSpec() const {
  ModelSpec m = LoadModel(model);
  RecordFileOrPreset("model", model, "");
  return m;
}

ClusterSpec SpecInputs::LoadClusterSpec() const {
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

JobSpec SpecInputs::LoadJobSpec() const {
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
  if (precision == "fp4") job.precision = Precision::kFp4;
  if (precision == "fp32") job.precision = Precision::kFp32;   // a GPU without an FP4 rate exits 2 naming it
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
  } else {   // a preset: the hash of the stack file `parasim profiles stack NAME` prints
    const ProfileDocument doc = StackProfileDocument(loaded, {}, loaded.name);
    RecordInput({"stack", loaded.name, Sha256Hex(WriteYaml(doc.body, doc.comment))});
  }
  if (!job_file.empty()) RecordFileOrPreset("job", job_file, "");
  return job;
}

}  // namespace parasim
