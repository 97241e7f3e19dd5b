#include "cli/cmd_calibrate_fit_stack.h"

#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include "calibrate/kineto_trace.h"
#include "calibrate/stack_fit.h"
#include "cli/command.h"
#include "cli/spec_options.h"
#include "core/error.h"
#include "core/parallel_config.h"
#include "cost_model/software_stack_io.h"

namespace parasim::cli {
namespace {

struct FitStackOptions {
  std::string trace;
  int skip_steps = 0;
  std::optional<int> device;
  std::string config;
  std::string name;
};

std::string Ms(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%10.2f", s * 1e3);
  return buf;
}

std::string FitReport(const calibrate::StackFit& fit, const std::string& base) {
  std::ostringstream os;
  os << "refitted " << base << " -> " << fit.stack.name << "\n";
  os << "  class          measured_ms   base_ms  fitted_ms\n";
  for (const calibrate::ClassComparison& c : fit.classes) {
    os << "  " << c.name << std::string(c.name.size() < 13 ? 13 - c.name.size() : 1, ' ') << Ms(c.measured)
       << Ms(c.before) << Ms(c.after) << "\n";
  }
  for (const auto& [field, why] : fit.sources) os << "  fitted " << field << ": " << why << "\n";
  for (const std::string& n : fit.notes) os << "  note: " << n << "\n";
  return os.str();
}

void FitStack(const FitStackOptions& opt, const SpecOptions& spec, const OutputOptions& out) {
  const ModelSpec model = spec.LoadModelSpec();
  const ClusterSpec cluster = spec.LoadClusterSpec();
  const JobSpec job = spec.LoadJobSpec();
  const ParallelConfig config = ParseParallelConfig(opt.config);
  // The base: a preset, or a stack file whose sources carry over.
  SoftwareStackFile base;
  if (IsSoftwareStackPath(job.stack)) {
    base = ReadSoftwareStackFile(job.stack);
  } else {
    base.stack = LoadSoftwareStack(job.stack);
    base.base = base.stack.name;
  }
  calibrate::TraceReadOptions read;
  read.skip_steps = opt.skip_steps;
  read.device = opt.device;
  const calibrate::StepTraceSummary summary = calibrate::ReadKinetoTrace(opt.trace, read);
  const calibrate::MeasuredStep measured = calibrate::MeasuredStepFromTrace(summary, opt.device);
  const std::string name = opt.name.empty() ? base.stack.name + "-fitted" : opt.name;
  const calibrate::StackFit fit =
      calibrate::FitStackToStep(model, cluster, job, config, base.stack, measured, name);
  std::map<std::string, std::string> sources = base.sources;
  for (const auto& [field, why] : fit.sources) sources[field] = why;
  WriteOutput(out, SoftwareStackToYaml(fit.stack, sources, base.base));
  std::cerr << FitReport(fit, base.stack.name);
}

}  // namespace

std::function<void()> AddFitStackSubcommand(CLI::App& calibrate) {
  auto opt = std::make_shared<FitStackOptions>();
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
  return [=] {
    if (cmd->parsed()) FitStack(*opt, *spec, *out);
  };
}

}  // namespace parasim::cli
