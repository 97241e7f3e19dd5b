// `parasim plan`: the best parallel configs for a model on a cluster, with
// the Pareto front, the explanation of the winner and launch flags.
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/cmd_plan_options.h"
#include "cli/command.h"
#include "cli/plot.h"
#include "cli/progress.h"
#include "cli/spec_options.h"
#include "cost_model/evaluator.h"
#include "planner/explain.h"
#include "planner/launch_flags.h"
#include "planner/plan_format.h"
#include "planner/planner.h"
#include "planner/plot_data.h"
#include "planner/uncertainty.h"

namespace parasim::cli {
namespace {

struct PlanFlags {
  SpecOptions spec;
  PlannerFlags planner;
  OutputOptions out;
  bool explain = false;
  std::string emit;
  std::string plot;
  bool quiet = false;
  int uncertainty = 0;
};

void RunPlanCommand(const PlanFlags& f) {
  CheckPlotRequest(f.plot);
  if (f.uncertainty > 0 && f.out.Parsed() == Format::kCsv) {
    throw InvalidInput("", "--uncertainty", "prints as a table or JSON, not CSV");
  }
  planner::PlanOptions options = f.planner.ToOptions();
  ProgressLine progress("plan", ProgressLine::Wanted(f.quiet, f.out.Parsed() == Format::kJson));
  options.progress = progress.Callback();
  const ModelSpec model = f.spec.LoadModelSpec();
  const ClusterSpec cluster = f.spec.LoadClusterSpec();
  JobSpec job = f.spec.LoadJobSpec();
  std::unique_ptr<planner::LaunchFlags> launch;
  const bool want_emit = !f.emit.empty();
  const planner::Framework framework = want_emit ? planner::ParseFramework(f.emit) : planner::Framework::kMegatron;
  if (want_emit && f.spec.stack.empty() && job.stack == JobSpec{}.stack) {
    // The stack is the framework: --emit alone plans for that framework's current stack.
    SpecOptions spec = f.spec;
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
  if (f.explain && !result.plans.empty()) {
    const Report* runner_up = result.plans.size() > 1 ? &result.plans[1] : nullptr;
    const Report* baseline = result.baseline ? &*result.baseline : nullptr;
    extras.explanation = planner::ExplainPlan(result.plans[0], runner_up, baseline, options.objective.objective);
  }
  if (want_emit && !result.plans.empty()) {
    launch = std::make_unique<planner::LaunchFlags>(
        planner::EmitLaunchFlags(framework, result.plans[0].config, model, job));
    if (!stack_note.empty()) launch->notes.insert(launch->notes.begin(), stack_note);
    extras.launch = launch.get();
  }
  if (f.uncertainty > 0) {
    // planner/uncertainty.h: N re-plans under perturbed profiles, below the plan.
    const planner::UncertaintyResult u = planner::RunUncertainty(model, cluster, job, result, options, f.uncertainty);
    switch (f.out.Parsed()) {
      case Format::kJson: {
        nlohmann::ordered_json j = nlohmann::ordered_json::parse(planner::PlanToJson(result, extras));
        j["uncertainty"] = nlohmann::ordered_json::parse(planner::UncertaintyToJson(u));
        WriteOutput(f.out, j.dump(2) + "\n");
        break;
      }
      case Format::kCsv: break;   // refused before the search
      case Format::kTable: WriteOutput(f.out, planner::PlanToTable(result, extras) + planner::UncertaintyToTable(u)); break;
    }
  } else {
    switch (f.out.Parsed()) {
      case Format::kJson: WriteOutput(f.out, planner::PlanToJson(result, extras)); break;
      case Format::kCsv: WriteOutput(f.out, planner::PlanToCsv(result)); break;
      case Format::kTable: WriteOutput(f.out, planner::PlanToTable(result, extras)); break;
    }
  }
  if (!f.plot.empty()) {
    WritePlot(planner::PlanPlot(result, StrCat(model.name, " on ", cluster.name, ", ", result.gpus, " GPUs")), f.plot);
  }
}

const CommandRegistration kPlan{
    "plan", "Search every parallel config and rank the best (tier A), with Pareto front and launch flags",
    [](CLI::App& cmd) {
      auto f = std::make_shared<PlanFlags>();
      AddSpecOptions(cmd, f->spec, true);
      AddPlannerFlags(cmd, f->planner);
      cmd.add_flag("--explain", f->explain, "Explain the winner against the runner-up and pure FSDP");
      cmd.add_option("--emit", f->emit, "Print launch settings of the best plan: megatron | torchtitan | torchtitan@0.2 (TOML) | deepspeed; "
                     "without --stack, plans for that framework's current stack")
          ->check(CLI::IsMember({"megatron", "torchtitan", "torchtitan@0.2", "deepspeed"}));
      AddOutputOptions(cmd, f->out);
      AddPlotOption(cmd, f->plot);
      cmd.add_option("--uncertainty", f->uncertainty,
                     "Re-plan under N profiles perturbed within the registry's cited uncertainties (fixed seed); "
                     "shows each plan's throughput spread and how often it ranks first")
          ->check(CLI::Range(0, 100000));
      cmd.add_flag("--quiet", f->quiet, "No progress line on stderr (shown only on a terminal, after ~2 s)");
      return std::function<void()>([f] { RunPlanCommand(*f); });
    }};

}  // namespace
}  // namespace parasim::cli
