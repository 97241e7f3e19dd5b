// `calibrate fit` and `calibrate fit-stack` as library calls: fit a GPU
// profile to microbenchmark measurements, a collective profile to collective
// measurements (dispatched on the kind each JSON declares), or a software
// stack to a profiled step. Each returns what it fitted as data (the fitted
// profile, its starting point, the fits and their residuals); the facade
// (facade/fitted_profiles.h) turns them into the profile file's values and
// the fit report, and the CLI's writers print those.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "calibrate/calibration.h"
#include "calibrate/collective_fit.h"
#include "calibrate/collective_profile.h"
#include "calibrate/stack_fit.h"
#include "core/cluster_spec.h"
#include "core/gpu_profile.h"
#include "core/job_spec.h"
#include "core/model_spec.h"
#include "cost_model/software_stack.h"

namespace parasim::calibrate {

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

// A GPU profile refitted to microbenchmarks.
struct GpuProfileFit {
  GpuProfile base;         // the profile started from
  GpuProfile calibrated;   // base with every usable fit applied
  CalibrationFits fits;
  // The files the GEMM shape model (the fullest sweep, as FitMicrobench
  // picks it), memory and power fits read.
  std::string shape_source, memory_source, power_source;
};

// A collective (fabric) profile fitted to measured collectives.
struct CollectiveProfileFit {
  CollectiveProfile profile;        // the file to write
  CollectiveModelParams start;      // the base's parameters, where the fit started
  std::string cluster;              // the cluster's name
  CollectiveFitResult fit;
  std::vector<CollectiveCase> cases;
  std::vector<CollectiveCost> predicted;   // per case, in order, with the fitted parameters
};

// Exactly one of the two, by the measurements given.
struct ProfileFit {
  std::optional<GpuProfileFit> gpu;
  std::optional<CollectiveProfileFit> collective;
};

// `files` given: a collective profile (each file must be kind
// nccl-collectives); else a GPU profile fitted to `measurements`.
ProfileFit FitProfile(const ProfileFitOptions& opt);

struct StackFitOptions {
  std::string trace;
  int skip_steps = 0;
  std::optional<int> device;
  std::string config;
  std::string name;
};

// A software stack refitted to a traced step, as the stack file to write.
struct StackProfileFit {
  SoftwareStack base;                          // the stack started from
  std::string base_preset;                     // the file's `base:` (a preset name)
  StackFit fit;                                // fit.stack is the fitted stack
  std::map<std::string, std::string> sources;  // the base file's sources, then the fit's
};

// The job's stack (a preset, or a stack file whose sources carry over)
// refitted to the traced step.
StackProfileFit FitStack(const StackFitOptions& opt, const ModelSpec& model, const ClusterSpec& cluster,
                         const JobSpec& job);

}  // namespace parasim::calibrate
