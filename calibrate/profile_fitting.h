// `calibrate fit` and `calibrate fit-stack` as library calls: fit a GPU
// profile to microbenchmark measurements, a collective profile to collective
// measurements (dispatched on the kind each JSON declares), or a software
// stack to a profiled step. Each returns the profile as YAML text and its
// fit report (the CLI writes the profile, then prints the report).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/cluster_spec.h"
#include "core/job_spec.h"
#include "core/model_spec.h"

namespace parasim::calibrate {

struct FittedProfile {
  std::string yaml;
  std::string report;
};

struct ProfileFitOptions {
  std::string profile = "h100-sxm";   // GPU profile to start from
  std::vector<std::string> files;     // measurement JSON files (fit dispatches on their kind)
  std::string measurements;           // a directory of GPU microbenchmark JSON
  std::string name;
  // Collective fits:
  std::string cluster;
  std::string base;                   // "" = the cluster's transport preset
  std::string nccl = "current";       // when a measurement does not record it
};

// `files` given: a collective profile (each file must be kind
// nccl-collectives); else a GPU profile fitted to `measurements`.
FittedProfile FitProfile(const ProfileFitOptions& opt);

struct StackFitOptions {
  std::string trace;
  int skip_steps = 0;
  std::optional<int> device;
  std::string config;
  std::string name;
};

// The job's stack (a preset, or a stack file whose sources carry over)
// refitted to the traced step, as a stack file.
FittedProfile FitStack(const StackFitOptions& opt, const ModelSpec& model, const ClusterSpec& cluster,
                       const JobSpec& job);

}  // namespace parasim::calibrate
