// `parasim plan`'s library side: load the specs, search every parallel
// config, and build the report (with the winner's explanation, launch
// flags, the uncertainty study) and the picture. Not installed; errors name
// the CLI's flags.
#pragma once

#include <optional>
#include <string>

#include "facade/command_report.h"
#include "facade/plan_settings.h"
#include "facade/plot_data.h"
#include "facade/spec_inputs.h"

namespace parasim {

struct PlanRequest {
  SpecInputs spec;
  PlanSettings settings;
  bool explain = false;    // the winner against the runner-up and pure FSDP
  std::string emit;        // launch settings of the best plan: megatron | torchtitan | torchtitan@0.2 | deepspeed
  int uncertainty = 0;     // re-plans under perturbed profiles (0 = none); table or JSON only
  bool plot = false;       // build the Pareto picture
};

struct PlanOutput {
  CommandReport report;
  std::optional<PlotData> plot;
};

// Throws NoAnswer (exit 3) when no config fits, with why each was pruned.
PlanOutput RunPlanCommand(const PlanRequest& request, ReportFormat format, const PlanProgress& progress);

}  // namespace parasim
