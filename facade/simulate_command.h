// `parasim simulate`'s library side: one training step of one parallel
// config with tier A, B or C; the report, and the files beside it (Chrome
// trace, schedule export, per-stage picture) as text for the CLI to write.
// Not installed; errors name the CLI's flags.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "facade/command_report.h"
#include "facade/plot_data.h"
#include "facade/spec_inputs.h"

namespace parasim {

struct SimulateRequest {
  SpecInputs spec;
  std::string config;                     // "dp=..,tp=..,..."
  std::string fidelity = "analytical";    // | simulated | full
  std::string trace;                      // trace file name ("" = none); *.gz: gzipped
  std::string trace_ranks;                // default | all | a list of ranks and ranges
  std::vector<std::string> stragglers;    // "rank=17,slowdown=1.2"
  std::vector<std::string> background;    // "class=leaf-spine,fraction=0.3"
  std::string tier_c;                     // step | coarse ("" = by size)
  bool export_schedule = false;           // the step's schedule as JSON
  bool plot = false;                      // build the per-stage timeline
  bool explain = false;                   // table: each pipeline stage's peak memory
};

struct SimulateOutput {
  CommandReport report;
  std::string trace;      // the trace file's bytes (gzipped when asked); "" = none asked
  std::string schedule;   // the schedule JSON; "" = none asked
  std::optional<PlotData> plot;
};

// The checks that need no file, in the order the command reports them
// (RunSimulateCommand makes them again): the config's syntax and the flags
// that need a simulated fidelity.
void CheckSimulateRequest(const SimulateRequest& request);

// A config that does not fit is a report (fits: false); a malformed one
// throws InvalidInput naming --config.
SimulateOutput RunSimulateCommand(const SimulateRequest& request, ReportFormat format);

}  // namespace parasim
