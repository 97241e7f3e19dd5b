// What parasim knows, as values for `parasim models` and `parasim profiles`
// (not installed): model shapes, GPU profiles, cluster presets and software
// stacks, each with its sources.
#pragma once

#include <string>

#include "facade/fitted_profiles.h"
#include "facade/value.h"

namespace parasim {

// One model (preset, parasim YAML or HF config.json): shape and exact parameter counts.
Value ModelInfo(const std::string& preset_or_file);
// Every built-in model, as ModelInfo.
Value ModelCatalog();

// A GPU profile or a cluster (preset or file; `nodes` 0 = as loaded), with
// "kind": "gpu" | "cluster".
Value ProfileInfo(const std::string& name_or_file, int nodes);
// {"gpus": [...], "clusters": [...], "stacks": [...]}: names and a line each.
Value ProfileCatalog();

// A software stack (preset or stack file) as a stack file (the document
// `calibrate fit-stack` writes too): a preset with itself as base, a file
// with its base and sources.
ProfileDocument StackFileDocument(const std::string& preset_or_file);

}  // namespace parasim
