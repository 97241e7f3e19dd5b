// `parasim whatif`'s library side: the best plan at each point of a grid of
// varied cluster or job fields, or a built-in study run by the same engine;
// the report and the picture. Not installed; errors name the CLI's flags.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "facade/command_report.h"
#include "facade/plan_settings.h"
#include "facade/plot_data.h"
#include "facade/spec_inputs.h"

namespace parasim {

struct WhatifRequest {
  SpecInputs spec;
  PlanSettings settings;
  std::vector<std::string> vary;   // KEY=v1,v2,... (first outermost)
  bool plot = false;
};

struct WhatifOutput {
  CommandReport report;   // JSON or a table
  std::optional<PlotData> plot;
};

WhatifOutput RunWhatifCommand(const WhatifRequest& request, ReportFormat format, const PlanProgress& progress);

// A built-in study by name (throws InvalidInput naming --study when unknown);
// its report is a table.
WhatifOutput RunStudyCommand(const std::string& study, const PlanSettings& settings, bool plot);

// The keys --vary takes and the built-in studies' names, for the help text.
std::vector<std::string> WhatifKeys();
std::vector<std::string> StudyNames();

}  // namespace parasim
