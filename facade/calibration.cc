#include "facade/calibration.h"

#include "core/parallel_config.h"
#include "cost_model/evaluator.h"
#include "simulator/schedule_export.h"

namespace parasim {

FittedProfile FitStackToTrace(const StackFitOptions& opt, const SpecInputs& spec) {
  const ModelSpec model = spec.LoadModelSpec();
  const ClusterSpec cluster = spec.LoadClusterSpec();
  const JobSpec job = spec.LoadJobSpec();
  return calibrate::FitStack(opt, model, cluster, job);
}

std::string StepScheduleJson(const SpecInputs& spec, const std::string& config) {
  const ParallelConfig cfg = ParseParallelConfig(config, "--config");
  const AnalyticalEvaluator evaluator(spec.LoadModelSpec(), spec.LoadClusterSpec(), spec.LoadJobSpec());
  return simulator::ScheduleJson(evaluator.BuildWorkload(cfg), evaluator.model(), evaluator.job(),
                                 evaluator.Evaluate(cfg));
}

}  // namespace parasim
