// Loading specs from presets and files. Every loader reports every problem of
// a file at once through parasim::Error (file, key, line:column, what).
#pragma once

#include <string>
#include <vector>

#include "core/cluster_spec.h"
#include "core/gpu_profile.h"
#include "core/job_spec.h"
#include "core/model_spec.h"
#include "core/parallel_config.h"

namespace parasim {

// Models: a preset name (llama2-7b, ...), a parasim YAML file, or a Hugging
// Face config.json (recognized by model_type / architectures).
ModelSpec LoadModel(const std::string& name_or_path);
ModelSpec LoadModelYaml(const std::string& path);
ModelSpec LoadHuggingFaceConfig(const std::string& path);
std::vector<std::string> ModelPresetNames();

// GPU profiles: a built-in name (h100-sxm, ...) or a YAML file path.
GpuProfile LoadGpuProfile(const std::string& name_or_path);
std::vector<std::string> GpuProfileNames();

// Clusters: a preset (dgx-h100, ...) or a YAML file; nodes_override > 0
// replaces `nodes`.
ClusterSpec LoadCluster(const std::string& name_or_path, int nodes_override = 0);
std::vector<std::string> ClusterPresetNames();

// Job from YAML (global_batch, seq_len, precision, optimizer, stack); keys left
// out stay 0 / default, for flags to fill (cli --job).
JobSpec LoadJobYaml(const std::string& path);

// Parallel config from YAML (same keys as the string form).
ParallelConfig LoadParallelConfigYaml(const std::string& path);

}  // namespace parasim
