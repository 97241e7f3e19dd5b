#include "calibrate/profile_fitting.h"

#include "calibrate/collective_measurements.h"
#include "calibrate/kineto_trace.h"
#include "core/check.h"
#include "core/error.h"
#include "core/loaders.h"
#include "core/parallel_config.h"
#include "cost_model/software_stack_io.h"

namespace parasim::calibrate {
namespace {

GpuProfileFit FitGpuProfile(const ProfileFitOptions& opt) {
  if (opt.measurements.empty())
    throw InvalidInput("", "--measurements", "give measurement JSON files or --measurements DIR");
  GpuProfileFit out;
  out.base = LoadGpuProfile(opt.profile);
  const MicrobenchData data = LoadMicrobenchDir(opt.measurements);
  out.fits = FitMicrobench(data, out.base);
  if (data.gemm) out.shape_source = data.gemm->file;
  else if (data.gemm_sustained) out.shape_source = data.gemm_sustained->file;
  if (data.hbm) out.memory_source = data.hbm->file;
  if (data.power) out.power_source = data.power->file;
  const std::string name = opt.name.empty() ? out.base.name + "-calibrated" : opt.name;
  out.calibrated = ApplyCalibration(out.base, out.fits, name);
  return out;
}

CollectiveProfileFit FitCollectiveProfile(const ProfileFitOptions& opt) {
  if (opt.cluster.empty()) throw InvalidInput("", "--cluster", "collective measurements need --cluster CLUSTER.yaml");
  const ClusterSpec cluster = LoadCluster(opt.cluster);
  const int fallback = ParseNcclVersion(opt.nccl, "--nccl");
  CollectiveProfileFit out;
  out.cluster = cluster.name;
  for (const auto& file : opt.files)
    for (const auto& m : ReadCollectiveMeasurementsFile(file).rows)
      out.cases.push_back(MakeCase(opt.cluster, m, fallback));
  if (out.cases.empty()) throw InvalidInput("", "measurements", "no measurement rows to fit");
  CollectiveProfile& profile = out.profile;
  profile.base = !opt.base.empty() ? opt.base
                 : cluster.inter_node.transport == NetworkTransport::kAwsEfa ? "efa"
                 : cluster.inter_node.transport == NetworkTransport::kRoce ? "roce" : "infiniband";
  const auto preset = TransportPreset(profile.base);
  out.start = preset ? *preset : ReadCollectiveProfile(profile.base).params;
  out.fit = FitCollectiveParams(out.cases, out.start);
  profile.name = opt.name.empty() ? cluster.name + "-fitted" : opt.name;
  profile.params = out.fit.params;
  profile.fitted_to = out.fit.sources;
  std::string srcs;
  for (const auto& s : out.fit.sources) srcs += (srcs.empty() ? "" : ", ") + s;
  for (const auto& [k, v] : out.fit.values)
    profile.sources["collective." + k] = StrCat("fitted by parasim calibrate fit to ", out.fit.cases, " rows of ",
                                                srcs, " on cluster ", cluster.name);
  for (const auto& c : out.cases) out.predicted.push_back(PredictCase(c, out.fit.params));
  return out;
}

}  // namespace

ProfileFit FitProfile(const ProfileFitOptions& opt) {
  ProfileFit out;
  if (opt.files.empty()) {
    out.gpu = FitGpuProfile(opt);
    return out;
  }
  // Dispatch on the kind each JSON declares; --measurements DIR is the GPU fit.
  for (const auto& f : opt.files)
    if (MeasurementKindOf(f) != kCollectiveMeasurementKind)
      throw InvalidInput(f, "kind", StrCat("'", MeasurementKindOf(f), "' is not a measurement kind calibrate fit reads (",
                                           kCollectiveMeasurementKind, ")"));
  if (!opt.measurements.empty())
    throw InvalidInput("", "--measurements", "give JSON files or --measurements DIR, not both");
  out.collective = FitCollectiveProfile(opt);
  return out;
}

StackProfileFit FitStack(const StackFitOptions& opt, const ModelSpec& model, const ClusterSpec& cluster,
                         const JobSpec& job) {
  const ParallelConfig config = ParseParallelConfig(opt.config);
  // The base: a preset, or a stack file whose sources carry over.
  SoftwareStackFile base;
  if (IsSoftwareStackPath(job.stack)) {
    base = ReadSoftwareStackFile(job.stack);
  } else {
    base.stack = LoadSoftwareStack(job.stack);
    base.base = base.stack.name;
  }
  TraceReadOptions read;
  read.skip_steps = opt.skip_steps;
  read.device = opt.device;
  const StepTraceSummary summary = ReadKinetoTrace(opt.trace, read);
  const MeasuredStep measured = MeasuredStepFromTrace(summary, opt.device);
  const std::string name = opt.name.empty() ? base.stack.name + "-fitted" : opt.name;
  StackProfileFit out;
  out.base = base.stack;
  out.fit = FitStackToStep(model, cluster, job, config, base.stack, measured, name);
  out.sources = base.sources;
  for (const auto& [field, why] : out.fit.sources) out.sources[field] = why;
  // A stack file starts from a preset; with every field written, the preset
  // decides only which attention architectures the file may hold.
  out.base_preset = !base.base.empty()                          ? base.base
                    : FindSoftwareStackPreset(base.stack.name) ? base.stack.name
                                                               : FindSoftwareStackPreset("")->name;
  return out;
}

}  // namespace parasim::calibrate
