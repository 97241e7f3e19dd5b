// `parasim scale`: the best plan at each GPU count, weak or strong scaling,
// with marginal throughput per added GPU and the knee.
#include <memory>
#include <string>

#include "cli/cmd_plan_options.h"
#include "cli/command.h"
#include "cli/plot.h"
#include "cli/progress.h"
#include "facade/scale_command.h"

namespace parasim::cli {
namespace {

struct ScaleFlags {
  ScaleRequest request;
  OutputOptions out;
  std::string plot;
  bool quiet = false;
};

void RunScale(ScaleFlags f) {
  CheckPlotRequest(f.plot);
  ProgressLine progress("scale", ProgressLine::Wanted(f.quiet, f.out.Parsed() == Format::kJson), "GPU counts");
  f.request.plot = !f.plot.empty();
  const ScaleOutput result = RunScaleCommand(f.request, f.out.Parsed(), {.sweep = progress.Callback()});
  WriteReport(f.out, result.report);
  if (result.plot) WritePlot(*result.plot, f.plot);
}

const CommandRegistration kScale{
    "scale", "Best plan per GPU count (weak or strong scaling), marginal throughput per added GPU, the knee",
    [](CLI::App& cmd) {
      auto f = std::make_shared<ScaleFlags>();
      ScaleRequest& q = f->request;
      q.settings.objective = "throughput";
      cmd.add_option("--model", q.model, "Model: a preset, a YAML file or a HF config.json")->capture_default_str();
      cmd.add_option("--cluster", q.cluster, "Cluster preset or YAML file (resized to each GPU count)")
          ->capture_default_str();
      cmd.add_option("--gpus", q.gpus, "GPU counts, increasing, comma-separated")->capture_default_str();
      cmd.add_option("--seq-len", q.seq_len, "Tokens per sequence")->capture_default_str();
      cmd.add_option("--stack", q.stack, "Software stack: a preset or a stack YAML file (default: pytorch-fsdp)");
      cmd.add_option("--mode", q.mode, "weak (fixed sequences per GPU) | strong (fixed global batch)")
          ->check(CLI::IsMember({"weak", "strong"}))
          ->capture_default_str();
      cmd.add_option("--local-batch", q.local_batch, "Weak mode: sequences per GPU per step")->capture_default_str();
      cmd.add_option("--global-batch", q.global_batch, "Strong mode: sequences per step");
      cmd.add_option("--knee", q.knee, "Efficiency threshold that marks the knee (fraction)")->capture_default_str();
      AddPlannerFlags(cmd, q.settings, false);
      AddOutputOptions(cmd, f->out);
      AddPlotOption(cmd, f->plot);
      cmd.add_flag("--quiet", f->quiet, "No progress line on stderr (shown only on a terminal, after ~2 s)");
      return std::function<void()>([f] { RunScale(*f); });
    }};

}  // namespace
}  // namespace parasim::cli
