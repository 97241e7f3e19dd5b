// `parasim whatif`: vary cluster or job fields (a GPU figure, the fabric, the
// node count, the sequence) and see the best plan at each grid point.
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/cmd_plan_options.h"
#include "cli/command.h"
#include "cli/plot.h"
#include "cli/spec_options.h"
#include "core/error.h"
#include "core/number_format.h"
#include "cost_model/report_format.h"
#include "cost_model/report_json.h"
#include "planner/plan_format.h"
#include "planner/plot_data.h"
#include "planner/study.h"
#include "planner/whatif.h"

namespace parasim::cli {
namespace {

struct WhatifFlags {
  SpecOptions spec;
  PlannerFlags planner;
  std::vector<std::string> vary;
  OutputOptions out;
  std::string plot;
  std::string study;
};

// `--study NAME`: a built-in study (planner/study_specs.cc), run by the same engine.
void RunStudyCommand(const WhatifFlags& f) {
  CheckPlotRequest(f.plot);
  if (!f.vary.empty()) throw InvalidInput("", "--study", "give --study or --vary, not both");
  if (f.out.Parsed() == Format::kJson) throw InvalidInput("", "--study", "prints a table; for JSON run its --vary lines");
  const planner::StudySpec& study = planner::FindStudy(f.study);
  const std::vector<planner::StudyRunResult> results = planner::RunStudy(study, f.planner.ToOptions());
  if (!f.plot.empty()) WritePlot(planner::StudyPlot(study, results), f.plot);
  WriteOutput(f.out, planner::RenderStudyTable(study, results));
}

void RunWhatifCommand(const WhatifFlags& f) {
  if (!f.study.empty()) return RunStudyCommand(f);
  if (f.vary.empty()) throw InvalidInput("", "--vary", "give --vary KEY=v1,v2,... (or --study NAME)");
  CheckPlotRequest(f.plot);
  const planner::PlanOptions options = f.planner.ToOptions();
  std::vector<planner::Variation> variations;
  for (const std::string& v : f.vary) variations.push_back(planner::ParseVariation(v));
  const ModelSpec model = f.spec.LoadModelSpec();
  const ClusterSpec cluster = f.spec.LoadClusterSpec();
  const JobSpec job = f.spec.LoadJobSpec();
  const std::vector<planner::WhatifPoint> points = planner::RunWhatif(model, cluster, job, variations, options);
  if (!f.plot.empty()) {
    WritePlot(planner::WhatifPlot(variations, points, StrCat("what-if for ", model.name, " on ", cluster.name)), f.plot);
  }

  if (f.out.Parsed() == Format::kJson) {
    nlohmann::ordered_json j;
    j["objective"] = planner::ToString(options.objective.objective);
    nlohmann::ordered_json arr = nlohmann::ordered_json::array();
    for (const auto& p : points) {
      nlohmann::ordered_json pj;
      nlohmann::ordered_json setting = nlohmann::ordered_json::object();
      for (const auto& [k, v] : p.setting) setting[k] = v;
      pj["setting"] = setting;
      pj["gpus"] = p.gpus;
      pj["feasible"] = p.feasible;
      pj["searched"] = p.searched;
      pj["feasible_configs"] = p.feasible_configs;
      if (p.feasible) {
        pj["objective_value"] = p.objective_value;
        pj["config_string"] = p.best.config.ToString();
        pj["best"] = ReportToJsonValue(p.best);
      }
      arr.push_back(pj);
    }
    j["points"] = arr;
    WriteOutput(f.out, j.dump(2) + "\n");
    return;
  }
  std::vector<std::string> header;
  for (const auto& v : variations) header.push_back(v.key);
  for (const char* h : {"gpus", "tokens/s", "vs_first", "MFU%", "exposed%", "W/GPU", "tokens/J", "config"}) header.push_back(h);
  std::vector<std::vector<std::string>> rows;
  const planner::WhatifPoint* first = nullptr;
  for (const auto& p : points) {
    std::vector<std::string> row;
    for (const auto& kv : p.setting) row.push_back(kv.second);
    row.push_back(std::to_string(p.gpus));
    if (!p.feasible) {
      row.push_back("no feasible plan");
      rows.push_back(row);
      continue;
    }
    if (first == nullptr) first = &p;
    const Report& b = p.best;
    const double rel = b.tokens_per_s / first->best.tokens_per_s - 1.0;
    for (const std::string& cell :
         {FormatFixed(b.tokens_per_s, 0), std::string(rel >= 0 ? "+" : "") + FormatFixed(100 * rel, 1) + "%", FormatFixed(100 * b.mfu, 1),
          FormatFixed(100 * b.exposed_comm_fraction, 1), FormatFixed(b.power_per_gpu.si(), 0), FormatFixed(b.tokens_per_joule, 3),
          b.config.ToString()}) {
      row.push_back(cell);
    }
    rows.push_back(row);
  }
  WriteOutput(f.out, StrCat("what-if for ", model.name, " on ", cluster.name, ", best plan by ",
                            planner::ToString(options.objective.objective), "\n\n") +
                         planner::RenderTable(header, rows));
}

const CommandRegistration kWhatif{
    "whatif", "Vary cluster or job fields (GPU figures, fabric, nodes, sequence) and re-plan at each point",
    [](CLI::App& cmd) {
      auto f = std::make_shared<WhatifFlags>();
      AddSpecOptions(cmd, f->spec, true);
      AddPlannerFlags(cmd, f->planner, false);
      std::string keys;
      for (const std::string& k : planner::WhatifKeys()) keys += (keys.empty() ? "" : ", ") + k;
      cmd.add_option("--vary", f->vary,
                     "KEY=v1,v2,... (repeat for a grid; values with units, e.g. inter_node.nic_bandwidth=200Gb/s,"
                     "400Gb/s; a multiplier: x1.5; linked keys: a+b=...). Keys: " + keys);
      std::string studies;
      for (const planner::StudySpec& s : planner::BuiltInStudies()) studies += (studies.empty() ? "" : ", ") + s.name;
      cmd.add_option("--study", f->study, "Run a built-in study instead of --vary (table output): " + studies);
      AddOutputOptions(cmd, f->out, false);
      AddPlotOption(cmd, f->plot);
      return std::function<void()>([f] { RunWhatifCommand(*f); });
    }};

}  // namespace
}  // namespace parasim::cli
