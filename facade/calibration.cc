#include "facade/calibration.h"

#include "core/parallel_config.h"
#include "cost_model/evaluator.h"
#include "facade/json_value.h"
#include "simulator/schedule_export.h"

namespace parasim {
namespace {

// calibrate/ writes both forms; the JSON goes on as values.
CommandReport FromImport(const calibrate::ImportReport& report, ReportFormat format) {
  return format == ReportFormat::kJson ? MakeReport(format, JsonTextToValue(report.json), "")
                                       : MakeReport(ReportFormat::kTable, Value(), report.table);
}

}  // namespace

CommandReport ImportNcclTests(const NcclTestsImportOptions& opt, ReportFormat format) {
  return FromImport(calibrate::NcclTestsReport(opt), format);
}

CommandReport ImportTrace(const TraceImportOptions& opt, ReportFormat format) {
  return FromImport(calibrate::TraceReport(opt), format);
}

FittedProfile FitProfileToMeasurements(const ProfileFitOptions& opt) {
  const calibrate::ProfileFit fit = calibrate::FitProfile(opt);
  if (fit.gpu) return {GpuProfileDocument(fit.gpu->calibrated), GpuFitReport(*fit.gpu)};
  return {CollectiveProfileDocument(fit.collective->profile), CollectiveFitReport(*fit.collective)};
}

FittedProfile FitStackToTrace(const StackFitOptions& opt, const SpecInputs& spec) {
  const ModelSpec model = spec.LoadModelSpec();
  const ClusterSpec cluster = spec.LoadClusterSpec();
  const JobSpec job = spec.LoadJobSpec();
  const calibrate::StackProfileFit fit = calibrate::FitStack(opt, model, cluster, job);
  return {StackProfileDocument(fit.fit.stack, fit.sources, fit.base_preset), StackFitReport(fit)};
}

std::string StepScheduleJson(const SpecInputs& spec, const std::string& config) {
  const ParallelConfig cfg = ParseParallelConfig(config, "--config");
  const AnalyticalEvaluator evaluator(spec.LoadModelSpec(), spec.LoadClusterSpec(), spec.LoadJobSpec());
  return simulator::ScheduleJson(evaluator.BuildWorkload(cfg), evaluator.model(), evaluator.job(),
                                 evaluator.Evaluate(cfg));
}

}  // namespace parasim
