#include "cli/cmd_calibrate_fit_stack.h"

#include <memory>

#include "cli/cmd_calibrate_report.h"
#include "cli/command.h"
#include "cli/spec_options.h"
#include "facade/calibration.h"

namespace parasim::cli {

std::function<void()> AddFitStackSubcommand(CLI::App& calibrate) {
  auto opt = std::make_shared<StackFitOptions>();
  auto spec = std::make_shared<SpecOptions>();
  auto out = std::make_shared<OutputOptions>();
  CLI::App* cmd = calibrate.add_subcommand(
      "fit-stack",
      "Refit a software-stack profile to a profiler trace of one real step (writes a stack YAML for --stack)");
  cmd->add_option("--trace", opt->trace, "Chrome trace JSON of the traced run, or gzipped (.json.gz)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--config", opt->config, "The traced run's parallel config \"dp=..,tp=..,...\"")->required();
  cmd->add_option("--skip-steps", opt->skip_steps, "Leave out the first K steps (warm-up)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--device", opt->device, "The traced GPU (Kineto args.device; default: the first)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--name", opt->name, "Name of the fitted stack (default: <stack>-fitted)");
  AddSpecOptions(*cmd, *spec, /*need_batch=*/true);
  cmd->add_option("-o,--output", out->output_file, "Write the stack YAML to FILE (whole or not at all)");
  cmd->add_option("--format", out->format, "Fit report (on stderr): table or json")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  return [=] {
    if (!cmd->parsed()) return;
    WriteFittedProfile(*out, FitStackToTrace(*opt, *spec));
  };
}

}  // namespace parasim::cli
