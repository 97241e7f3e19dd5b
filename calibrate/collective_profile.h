// Fitted fabric profiles (`--hw-profile FILE`, hw_profiles/SCHEMA.md
// "Collective hardware profiles"): the collective model's fabric parameters
// as YAML that starts from a `base` — a transport preset (infiniband, roce,
// efa) or another profile file — and overrides fields under `collective:`,
// with `fitted_to` naming the measurements and `sources` each value's origin.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "cost_model/collective_cost.h"

namespace parasim::calibrate {

struct CollectiveProfile {
  std::string name;
  std::string base = "infiniband";
  CollectiveModelParams params;
  std::vector<std::string> fitted_to;               // measurement sources
  std::map<std::string, std::string> sources;       // "collective.<field>" -> origin
};

// The preset of a transport name (infiniband, roce, efa); nullopt otherwise.
std::optional<CollectiveModelParams> TransportPreset(const std::string& name);

// Reads a profile; every problem (unknown key, value out of its bounds,
// unknown base, a base cycle) is thrown as one InvalidInput naming the file,
// key path and line.
CollectiveProfile ReadCollectiveProfile(const std::string& path);
CollectiveProfile ParseCollectiveProfile(const std::string& text, const std::string& file);

// Reads the profile at `path` into cluster.collective_params, which every
// evaluator of that cluster then prices its collectives with ("" leaves the
// transport's preset).
void AttachHwProfile(ClusterSpec& cluster, const std::string& path);

}  // namespace parasim::calibrate
