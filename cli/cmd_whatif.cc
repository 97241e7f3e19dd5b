// `parasim whatif`: vary cluster or job fields (a GPU figure, the fabric, the
// node count, the sequence) and see the best plan at each grid point.
#include <memory>
#include <string>
#include <vector>

#include "cli/cmd_plan_options.h"
#include "cli/command.h"
#include "cli/plot.h"
#include "cli/progress.h"
#include "cli/spec_options.h"
#include "facade/whatif_command.h"
#include "parasim/error.h"

namespace parasim::cli {
namespace {

struct WhatifFlags {
  WhatifRequest request;
  OutputOptions out;
  std::string plot;
  std::string study;
  bool quiet = false;
};

// `--study NAME`: a built-in study, run by the same engine.
void RunStudy(const WhatifFlags& f) {
  CheckPlotRequest(f.plot);
  if (!f.request.vary.empty()) throw InvalidInput("", "--study", "give --study or --vary, not both");
  if (f.out.Parsed() == Format::kJson) throw InvalidInput("", "--study", "prints a table; for JSON run its --vary lines");
  const WhatifOutput result = RunStudyCommand(f.study, f.request.settings, !f.plot.empty());
  if (result.plot) WritePlot(*result.plot, f.plot);
  WriteReport(f.out, result.report);
}

void RunWhatif(WhatifFlags f) {
  if (!f.study.empty()) return RunStudy(f);
  if (f.request.vary.empty()) throw InvalidInput("", "--vary", "give --vary KEY=v1,v2,... (or --study NAME)");
  CheckPlotRequest(f.plot);
  ProgressLine progress("whatif", ProgressLine::Wanted(f.quiet, f.out.Parsed() == Format::kJson), "points");
  f.request.plot = !f.plot.empty();
  const WhatifOutput result = RunWhatifCommand(f.request, f.out.Parsed(), {.sweep = progress.Callback()});
  if (result.plot) WritePlot(*result.plot, f.plot);
  WriteReport(f.out, result.report);
}

const CommandRegistration kWhatif{
    "whatif", "Vary cluster or job fields (GPU figures, fabric, nodes, sequence) and re-plan at each point",
    [](CLI::App& cmd) {
      auto f = std::make_shared<WhatifFlags>();
      AddSpecOptions(cmd, f->request.spec, true);
      AddPlannerFlags(cmd, f->request.settings, false);
      std::string keys;
      for (const std::string& k : WhatifKeys()) keys += (keys.empty() ? "" : ", ") + k;
      cmd.add_option("--vary", f->request.vary,
                     "KEY=v1,v2,... (repeat for a grid; values with units, e.g. inter_node.nic_bandwidth=200Gb/s,"
                     "400Gb/s; a multiplier: x1.5; linked keys: a+b=...). Keys: " + keys);
      std::string studies;
      for (const std::string& s : StudyNames()) studies += (studies.empty() ? "" : ", ") + s;
      cmd.add_option("--study", f->study, "Run a built-in study instead of --vary (table output): " + studies);
      AddOutputOptions(cmd, f->out, false);
      AddPlotOption(cmd, f->plot);
      cmd.add_flag("--quiet", f->quiet, "No progress line on stderr (shown only on a terminal, after ~2 s)");
      return std::function<void()>([f] { RunWhatif(*f); });
    }};

}  // namespace
}  // namespace parasim::cli
