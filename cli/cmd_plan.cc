// `parasim plan`: the best parallel configs for a model on a cluster, with
// the Pareto front, the explanation of the winner and launch flags.
#include <memory>
#include <string>

#include "cli/cmd_plan_options.h"
#include "cli/command.h"
#include "cli/plot.h"
#include "cli/progress.h"
#include "cli/spec_options.h"
#include "facade/plan_command.h"
#include "parasim/error.h"

namespace parasim::cli {
namespace {

struct PlanFlags {
  PlanRequest request;
  std::string plot;
  bool quiet = false;
  OutputOptions out;
};

void RunPlan(PlanFlags f) {
  CheckPlotRequest(f.plot);
  if (f.request.uncertainty > 0 && f.out.Parsed() == Format::kCsv) {
    throw InvalidInput("", "--uncertainty", "prints as a table or JSON, not CSV");
  }
  const bool show = ProgressLine::Wanted(f.quiet, f.out.Parsed() == Format::kJson);
  ProgressLine progress("plan", show);
  ProgressLine rescoring("plan: re-scoring with " + f.request.settings.RescoreModeName(), show, "plans");
  f.request.plot = !f.plot.empty();
  const PlanOutput result =
      RunPlanCommand(f.request, f.out.Parsed(), {.search = progress.Callback(), .rescore = rescoring.Callback()});
  WriteReport(f.out, result.report);
  if (result.plot) WritePlot(*result.plot, f.plot);
}

const CommandRegistration kPlan{
    "plan", "Search every parallel config and rank the best (tier A), with Pareto front and launch flags",
    [](CLI::App& cmd) {
      auto f = std::make_shared<PlanFlags>();
      AddSpecOptions(cmd, f->request.spec, true);
      AddPlannerFlags(cmd, f->request.settings);
      cmd.add_flag("--explain", f->request.explain, "Explain the winner against the runner-up and pure FSDP");
      cmd.add_option("--emit", f->request.emit, "Print launch settings of the best plan: megatron | torchtitan | torchtitan@0.2 (TOML) | deepspeed; "
                     "without --stack, plans for that framework's current stack")
          ->check(CLI::IsMember({"megatron", "torchtitan", "torchtitan@0.2", "deepspeed"}));
      AddOutputOptions(cmd, f->out);
      AddPlotOption(cmd, f->plot);
      cmd.add_option("--uncertainty", f->request.uncertainty,
                     "Re-plan under N profiles perturbed within the registry's cited uncertainties (fixed seed); "
                     "shows each plan's throughput spread and how often it ranks first")
          ->check(CLI::Range(0, 100000));
      cmd.add_flag("--quiet", f->quiet, "No progress line on stderr (shown only on a terminal, after ~2 s)");
      return std::function<void()>([f] { RunPlan(*f); });
    }};

}  // namespace
}  // namespace parasim::cli
