// `parasim scale`'s library side: the best plan at each GPU count, weak or
// strong scaling, with the marginal throughput per added GPU and the knee;
// the report and the picture. Not installed; errors name the CLI's flags.
#pragma once

#include <optional>
#include <string>

#include "facade/command_report.h"
#include "facade/plan_settings.h"
#include "facade/plot_data.h"

namespace parasim {

struct ScaleRequest {
  std::string model = "llama2-7b";
  std::string cluster = "dgx-h100";
  std::string gpus = "8,16,32,64,128,256,512,1024,2048";   // as typed: comma-separated counts
  long long seq_len = 4096;
  std::string stack;
  std::string mode = "weak";    // | strong
  long long local_batch = 2;    // weak: sequences per GPU per step
  long long global_batch = 0;   // strong: sequences per step
  double knee = 0.8;            // efficiency threshold of the knee
  PlanSettings settings;
  bool plot = false;
};

struct ScaleOutput {
  CommandReport report;
  std::optional<PlotData> plot;
};

ScaleOutput RunScaleCommand(const ScaleRequest& request, ReportFormat format, const PlanProgress& progress);

}  // namespace parasim
