#include "calibrate/profile_fitting.h"

#include <cstdio>
#include <iomanip>
#include <map>
#include <sstream>

#include "calibrate/calibration.h"
#include "calibrate/collective_fit.h"
#include "calibrate/collective_measurements.h"
#include "calibrate/collective_profile.h"
#include "calibrate/kineto_trace.h"
#include "calibrate/stack_fit.h"
#include "core/check.h"
#include "core/error.h"
#include "core/loaders.h"
#include "core/number_format.h"
#include "core/parallel_config.h"
#include "cost_model/software_stack_io.h"

namespace parasim::calibrate {
namespace {

std::string Fixed(double v, int digits) { return FormatFixed(v, digits); }

std::string FitReport(const CalibrationFits& f, const GpuProfile& base, const GpuProfile& out) {
  std::ostringstream os;
  os << "calibrated " << base.name << " -> " << out.name << " from " << f.device << " (" << f.date << ")\n";
  auto line = [&](const std::string& what, const FitSummary& s) {
    os << "  " << std::left << std::setw(22) << what << std::setw(18) << ToString(s.status) << s.message << "\n";
  };
  if (f.gemm) {
    line("gemm_max_efficiency", f.gemm->summary);
    os << "    " << base.gemm_max_efficiency << " -> " << out.gemm_max_efficiency << " (best measured "
       << Fixed(f.gemm->best_efficiency, 3) << " at " << f.gemm->best_shape << ")\n";
    const GemmFit& shown = f.gemm_burst ? *f.gemm_burst : *f.gemm;
    os << "    cost-model residual by tp (" << (f.gemm_burst ? "burst sweep" : "sweep")
       << ", mean ln(model/measured), rms):";
    for (const auto& [tp, e] : shown.by_tp)
      os << " tp" << tp << " " << Fixed(e.mean_log_error, 3) << "/" << Fixed(e.rms_rel_error, 3);
    os << "\n";
    if (f.gemm_burst)
      os << "    burst sweep alone would give " << Fixed(f.gemm_burst->gemm_max_efficiency, 4) << " over "
         << f.gemm_burst->points << " GEMMs, rms relative time error "
         << Fixed(f.gemm_burst->summary.rms_rel_error, 3) << "\n";
  }
  if (f.gemm_fp8) {
    line("gemm_max_fp8", f.gemm_fp8->summary);
    os << "    " << base.gemm_max_fp8_efficiency << " -> " << out.gemm_max_fp8_efficiency << " (0 = as bf16; best measured "
       << Fixed(f.gemm_fp8->best_efficiency, 3) << " of fp8 peak at " << f.gemm_fp8->best_shape << ")\n";
  }
  if (f.gemm_shape) {
    const GemmShapeFit& s = *f.gemm_shape;
    line("gemm shape model", s.summary);
    os << "    eta = g k/(k+k0) mn/(mn+c): g " << Fixed(s.params.g, 4) << ", k0 " << Fixed(s.params.k0, 1) << ", c "
       << Fixed(s.params.c_mn, 0) << "; rms by tp:";
    for (const auto& [tp, e] : s.rms_by_tp) os << " tp" << tp << " " << Fixed(e, 3);
    os << "\n";
  }
  if (f.memory) {
    line("memory_efficiency", f.memory->summary);
    os << "    " << base.memory_efficiency << " -> " << out.memory_efficiency << "\n";
  }
  if (f.power) {
    line("power", f.power->summary);
    os << "    idle " << base.idle_power.si() << " -> " << out.idle_power.si() << " W, matmul_fraction "
       << base.power_matmul_fraction << " -> " << out.power_matmul_fraction << ", memory_fraction "
       << base.power_memory_fraction << " -> " << out.power_memory_fraction << "\n";
  }
  if (f.launch) {
    os << "  launch overhead (not a GPU-profile field; see the software stack): host "
       << Fixed(f.launch->host_enqueue.si() * 1e6, 2) << " us, queued " << Fixed(f.launch->queued.si() * 1e6, 2)
       << " us, graph " << Fixed(f.launch->graph.si() * 1e6, 2) << " us per kernel\n";
  }
  return os.str();
}

FittedProfile FitGpuProfile(const ProfileFitOptions& opt) {
  if (opt.measurements.empty())
    throw InvalidInput("", "--measurements", "give measurement JSON files or --measurements DIR");
  const GpuProfile base = LoadGpuProfile(opt.profile);
  const MicrobenchData data = LoadMicrobenchDir(opt.measurements);
  const CalibrationFits fits = FitMicrobench(data, base);
  const std::string name = opt.name.empty() ? base.name + "-calibrated" : opt.name;
  const GpuProfile calibrated = ApplyCalibration(base, fits, name);
  return {GpuProfileYaml(calibrated), FitReport(fits, base, calibrated)};
}

FittedProfile FitCollectiveProfile(const ProfileFitOptions& opt) {
  std::ostringstream log;
  if (opt.cluster.empty()) throw InvalidInput("", "--cluster", "collective measurements need --cluster CLUSTER.yaml");
  const ClusterSpec cluster = LoadCluster(opt.cluster);
  const int fallback = ParseNcclVersion(opt.nccl, "--nccl");
  std::vector<CollectiveCase> cases;
  for (const auto& file : opt.files)
    for (const auto& m : ReadCollectiveMeasurementsFile(file).rows) cases.push_back(MakeCase(opt.cluster, m, fallback));
  if (cases.empty()) throw InvalidInput("", "measurements", "no measurement rows to fit");
  CollectiveProfile profile;
  profile.base = !opt.base.empty() ? opt.base
                 : cluster.inter_node.transport == NetworkTransport::kAwsEfa ? "efa"
                 : cluster.inter_node.transport == NetworkTransport::kRoce ? "roce" : "infiniband";
  const auto preset = TransportPreset(profile.base);
  const CollectiveModelParams start = preset ? *preset : ReadCollectiveProfile(profile.base).params;
  const CollectiveFitResult fit = FitCollectiveParams(cases, start);
  profile.name = opt.name.empty() ? cluster.name + "-fitted" : opt.name;
  profile.params = fit.params;
  profile.fitted_to = fit.sources;
  std::string srcs;
  for (const auto& s : fit.sources) srcs += (srcs.empty() ? "" : ", ") + s;
  for (const auto& [k, v] : fit.values)
    profile.sources["collective." + k] = StrCat("fitted by parasim calibrate fit to ", fit.cases, " rows of ", srcs,
                                                " on cluster ", cluster.name);
  log << "parasim: fitted " << fit.values.size() << " parameters to " << fit.cases
      << " rows; mean band-median |log error| " << Fixed(fit.mean_abs_log_error, 4) << "\n";
  for (const auto& c : cases) {
    const CollectiveCost p = PredictCase(c, fit.params);
    log << "  " << c.m.source << " " << ToString(c.m.op) << " " << c.m.ranks << " ranks " << Fixed(c.m.size.si(), 0)
        << " B: measured busbw " << Fixed(c.m.busbw.si() / 1e9, 2) << " GB/s, fitted "
        << Fixed(p.busbw.si() / 1e9, 2) << " (" << ToString(p.algo) << "/" << ToString(p.protocol) << ")\n";
  }
  return {CollectiveProfileToYaml(profile), log.str()};
}

std::string Ms(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%10.2f", s * 1e3);
  return buf;
}

std::string StackFitReport(const StackFit& fit, const std::string& base) {
  std::ostringstream os;
  os << "refitted " << base << " -> " << fit.stack.name << "\n";
  os << "  class          measured_ms   base_ms  fitted_ms\n";
  for (const ClassComparison& c : fit.classes) {
    os << "  " << c.name << std::string(c.name.size() < 13 ? 13 - c.name.size() : 1, ' ') << Ms(c.measured)
       << Ms(c.before) << Ms(c.after) << "\n";
  }
  for (const auto& [field, why] : fit.sources) os << "  fitted " << field << ": " << why << "\n";
  for (const std::string& n : fit.notes) os << "  note: " << n << "\n";
  return os.str();
}

}  // namespace

FittedProfile FitProfile(const ProfileFitOptions& opt) {
  if (opt.files.empty()) return FitGpuProfile(opt);
  // Dispatch on the kind each JSON declares; --measurements DIR is the GPU fit.
  for (const auto& f : opt.files)
    if (MeasurementKindOf(f) != kCollectiveMeasurementKind)
      throw InvalidInput(f, "kind", StrCat("'", MeasurementKindOf(f), "' is not a measurement kind calibrate fit reads (",
                                           kCollectiveMeasurementKind, ")"));
  if (!opt.measurements.empty())
    throw InvalidInput("", "--measurements", "give JSON files or --measurements DIR, not both");
  return FitCollectiveProfile(opt);
}

FittedProfile FitStack(const StackFitOptions& opt, const ModelSpec& model, const ClusterSpec& cluster,
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
  const StackFit fit =
      FitStackToStep(model, cluster, job, config, base.stack, measured, name);
  std::map<std::string, std::string> sources = base.sources;
  for (const auto& [field, why] : fit.sources) sources[field] = why;
  return {SoftwareStackToYaml(fit.stack, sources, base.base), StackFitReport(fit, base.stack.name)};
}

}  // namespace parasim::calibrate
