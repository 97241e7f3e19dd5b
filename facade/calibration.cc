#include "facade/calibration.h"

#include "core/parallel_config.h"
#include "cost_model/evaluator.h"
#include "facade/import_report_value.h"
#include "simulator/schedule_export.h"

namespace parasim {

CommandReport ImportNcclTests(const NcclTestsImportOptions& opt, ReportFormat format) {
  const calibrate::NcclTestsImport report = calibrate::NcclTestsReport(opt);
  return format == ReportFormat::kJson ? MakeReport(format, NcclTestsImportToValue(report), "")
                                       : MakeReport(ReportFormat::kTable, Value(), report.table);
}

CommandReport ImportTrace(const TraceImportOptions& opt, ReportFormat format) {
  const calibrate::TraceImport report = calibrate::TraceReport(opt);
  return format == ReportFormat::kJson ? MakeReport(format, TraceSummaryToValue(report.summary), "")
                                       : MakeReport(ReportFormat::kTable, Value(), report.table);
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
