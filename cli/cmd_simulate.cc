// `parasim simulate`: predict one training step of one parallel config, with
// tier A (analytical), tier B (simulated: one rank per pipeline stage) or
// tier C (full: every rank, flows on the topology graph), and optionally a
// Chrome trace of the simulated step.
#include <memory>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/plot.h"
#include "cli/spec_options.h"
#include "facade/simulate_command.h"

namespace parasim::cli {
namespace {

struct SimulateFlags {
  SimulateRequest request;
  std::string schedule;   // --export-schedule FILE
  std::string plot;
  OutputOptions out;
};

// Writes `text` to `file` whole (temp file + rename), as -o does.
void WriteFile(const std::string& file, const std::string& text) {
  OutputOptions to;
  to.output_file = file;
  WriteOutput(to, text);
}

void RunSimulate(SimulateFlags f) {
  f.request.plot = !f.plot.empty();
  f.request.export_schedule = !f.schedule.empty();
  CheckSimulateRequest(f.request);
  CheckPlotRequest(f.plot);
  const SimulateOutput result = RunSimulateCommand(f.request, f.out.Parsed());
  if (!f.request.trace.empty()) WriteFile(f.request.trace, result.trace);
  if (!f.schedule.empty()) WriteFile(f.schedule, result.schedule);
  WriteReport(f.out, result.report);
  if (result.plot) WritePlot(*result.plot, f.plot);
}

const CommandRegistration kSimulate{
    "simulate", "Predict one training step of one parallel config (step time, MFU, comm, memory, power)",
    [](CLI::App& cmd) {
      auto f = std::make_shared<SimulateFlags>();
      SimulateRequest& q = f->request;
      AddSpecOptions(cmd, q.spec, /*need_batch=*/true);
      cmd.add_option("--config", q.config,
                     "Parallel config \"dp=..,tp=..,pp=..,cp=..,cp_comm=..,cp_a2a_size=..,ep=..,mbs=..,sharding=..,recompute=..,"
                     "recompute_layers=..,sp=..,vpp=..,schedule=..,order=..,prefetch=..,pp_layers=..\"")
          ->required();
      cmd.add_option("--fidelity", q.fidelity,
                     "analytical (tier A, closed form), simulated (tier B: one rank per pipeline stage) or "
                     "full (tier C: every rank, max-min flows on the topology)")
          ->check(CLI::IsMember({"analytical", "simulated", "full"}))
          ->capture_default_str();
      cmd.add_option("--trace", q.trace,
                     "Write a Chrome Trace Event JSON of the simulated step (Perfetto opens it); FILE.json.gz: gzipped");
      cmd.add_option("--trace-ranks", q.trace_ranks,
                     "Ranks the trace holds: default (first rank of each pipeline stage + the slowest) | all | "
                     "a list of GPU ranks and ranges, e.g. 0,17,64-71");
      cmd.add_option("--straggler", q.stragglers, "A slow GPU, e.g. \"rank=17,slowdown=1.2\" (repeatable)");
      cmd.add_option("--background-load", q.background,
                     "Other traffic on a link class (tier C), e.g. \"class=leaf-spine,fraction=0.3\" (repeatable)");
      cmd.add_option("--tier-c", q.tier_c,
                     "Tier C schedule: step (each collective as its NCCL step schedule; default up to 16,384 GPUs) "
                     "or coarse (one flow set per collective; default up to 65,536)")
          ->check(CLI::IsMember({"step", "coarse"}));
      cmd.add_option("--export-schedule", f->schedule,
                     "Write the step's schedule as JSON for the CUDA reference step (calibrate step)");
      cmd.add_flag("--explain", q.explain,
                   "Table: each pipeline stage's peak memory per GPU and the peak stage (JSON always has them)");
      AddOutputOptions(cmd, f->out);
      AddPlotOption(cmd, f->plot);
      return std::function<void()>([f] { RunSimulate(*f); });
    }};

}  // namespace
}  // namespace parasim::cli
