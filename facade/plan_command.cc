#include "facade/plan_command.h"

#include <memory>
#include <vector>

#include "core/error.h"
#include "cost_model/evaluator.h"
#include "facade/plan_options.h"
#include "facade/plan_value.h"
#include "planner/explain.h"
#include "planner/launch_flags.h"
#include "planner/plan_format.h"
#include "planner/planner.h"
#include "planner/plot_data.h"
#include "planner/uncertainty.h"

namespace parasim {

PlanOutput RunPlanCommand(const PlanRequest& f, ReportFormat format, const PlanProgress& progress) {
  const planner::PlanOptions options = ToPlanOptions(f.settings, progress);
  const ModelSpec model = f.spec.LoadModelSpec();
  const ClusterSpec cluster = f.spec.LoadClusterSpec();
  JobSpec job = f.spec.LoadJobSpec();
  const bool want_emit = !f.emit.empty();
  const planner::Framework framework = want_emit ? planner::ParseFramework(f.emit) : planner::Framework::kMegatron;
  if (want_emit && f.spec.stack.empty() && job.stack == JobSpec{}.stack) {
    // The stack is the framework: --emit alone plans for that framework's current stack.
    SpecInputs spec = f.spec;
    spec.stack = planner::CurrentStackPreset(framework);
    job = spec.LoadJobSpec();
  }

  const AnalyticalEvaluator evaluator(model, cluster, job);
  const std::string stack_note =
      want_emit ? planner::CheckStackFitsEmitter(evaluator.stack().name, evaluator.stack().framework, framework) : "";
  const planner::PlanResult result = planner::RunPlan(evaluator, options);
  if (result.plans.empty()) {
    // A valid request with no answer (exit 3): why each candidate was pruned.
    std::vector<std::string> reasons;
    for (const auto& [reason, count] : result.rejected) reasons.push_back(StrCat(reason, ": ", count, " configs"));
    throw NoAnswer(StrCat("no feasible plan among ", result.searched, " configs searched on ", result.gpus, " GPUs"),
                   reasons);
  }

  planner::PlanExtras extras;
  extras.stack = evaluator.stack().name;
  if (f.explain) {
    const Report* runner_up = result.plans.size() > 1 ? &result.plans[1] : nullptr;
    const Report* baseline = result.baseline ? &*result.baseline : nullptr;
    extras.explanation = planner::ExplainPlan(result.plans[0], runner_up, baseline, options.objective.objective);
  }
  std::unique_ptr<planner::LaunchFlags> launch;
  if (want_emit) {
    launch = std::make_unique<planner::LaunchFlags>(
        planner::EmitLaunchFlags(framework, result.plans[0].config, model, job,
                                 evaluator.stack().nvfp4_bf16_layer_share));
    if (!stack_note.empty()) launch->notes.insert(launch->notes.begin(), stack_note);
    extras.launch = launch.get();
  }

  PlanOutput out;
  if (f.uncertainty > 0) {
    // planner/uncertainty.h: N re-plans under perturbed profiles, below the plan.
    const planner::UncertaintyResult u = planner::RunUncertainty(model, cluster, job, result, options, f.uncertainty);
    if (format == ReportFormat::kJson) {
      Value j = PlanToValue(result, extras);
      j.Set("uncertainty", UncertaintyToValue(u));
      out.report = MakeReport(format, std::move(j), "");
    } else {   // a table (CSV is refused before the search)
      out.report = MakeReport(format, Value(), planner::PlanToTable(result, extras) + planner::UncertaintyToTable(u));
    }
  } else {
    switch (format) {
      case ReportFormat::kJson:
        out.report = MakeReport(format, PlanToValue(result, extras), "");
        break;
      case ReportFormat::kCsv: out.report = MakeReport(format, Value(), planner::PlanToCsv(result)); break;
      case ReportFormat::kTable: out.report = MakeReport(format, Value(), planner::PlanToTable(result, extras)); break;
    }
  }
  if (f.plot) {
    const planner::PlotSpec plot =
        planner::PlanPlot(result, StrCat(model.name, " on ", cluster.name, ", ", result.gpus, " GPUs"));
    out.plot = PlotData{plot.data, plot.script};
  }
  return out;
}

}  // namespace parasim
