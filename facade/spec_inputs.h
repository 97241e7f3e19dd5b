// The inputs most CLI commands share (--model, --cluster with --nodes/--gpus,
// --global-batch, --seq-len, --stack, --job), loaded into the core spec types
// and recorded in the report's provenance (facade/report_provenance.h). Not
// installed: the CLI's flags fill it, cli/spec_options.h adds them.
#pragma once

#include <string>

#include "core/cluster_spec.h"
#include "core/job_spec.h"
#include "core/model_spec.h"

namespace parasim {

struct SpecInputs {
  std::string model = "llama2-7b";
  std::string cluster = "dgx-h100";
  int nodes = 0;                 // 0: the cluster's own count (or from --gpus)
  int gpus = 0;                  // 0: nodes × gpus_per_node
  long long global_batch = 0;    // sequences per step
  long long seq_len = 4096;
  std::string stack;             // "" = the job's default stack
  std::string precision;   // --precision: bf16 | fp8 | fp4 | fp32 (empty: the job file's, else bf16)
  std::string job_file;          // optional YAML job (flags override it)
  std::string hw_profile;        // fitted collective profile (else the cluster's hw_profile)
  // The numeric flags as typed: read by the field registry's parser and
  // ranges (core/field_registry.h), so "1e10", "0" and 20-digit numbers are
  // clear errors naming the flag. Empty: not given.
  std::string nodes_text, gpus_text, global_batch_text, seq_len_text;

  ModelSpec LoadModelSpec() const;
  // Also makes the --hw-profile (or the cluster's hw_profile) the collective
  // model's parameters for the rest of the process.
  ClusterSpec LoadClusterSpec() const;
  // --job FILE supplies what it holds; flags override it. Throws
  // InvalidInput when no global batch is given either way.
  JobSpec LoadJobSpec() const;
};

}  // namespace parasim
